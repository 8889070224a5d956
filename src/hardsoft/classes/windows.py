"""How many positions of a class set lie in a head's mask window: count terms, or exact
linear functions of ``i`` and ``n`` for predicates of position atoms alone (used by average-hard
heads in :mod:`.counting`)."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce
from itertools import product
from typing import Any

from hardsoft.classes.algebra import Poly, SymVec
from hardsoft.classes.boolean import Function, _is_position_atom
from hardsoft.classes.conditions import PRE, SUF
from hardsoft.classes.symbolic import Ctx, HeadSym, Outcome
from hardsoft.logic.syntax import First, Last, Mod, Position
from hardsoft.model.spec import Mask

Cases = list[tuple[Poly, Function]]
"""Values with the predicates where they hold (a partition of where they are used)."""


def window_count(ctx: Ctx, members: list[int], mask: Mask, c: int) -> Cases:
    """The number of positions of the classes ``members`` in the mask window of a query of
    class ``c``, as polynomials in counts (or in ``i`` and ``n``, by the residue of ``n``,
    when the classes are selected by position atoms alone: see :func:`position_count`)."""
    phi = ctx.classes.union(ctx.p, members)
    here = Poly.const(1 if c in members else 0)
    if mask in (Mask.FUTURE, Mask.STRICT_FUTURE):
        parts = [_count(ctx, PRE, phi, c)]
    elif mask in (Mask.PAST, Mask.STRICT_PAST):
        parts = [_count(ctx, SUF, phi, c)]
    else:
        parts = [_count(ctx, PRE, phi, c), _count(ctx, SUF, phi, c)]
    out: Cases = []
    for combo in product(*parts):
        total = reduce(lambda a, b: a + b[0], combo, Poly())
        cond = reduce(lambda a, b: a & b[1], combo, ctx.p.true)
        if not ctx.p.is_false(cond):
            both = mask.is_strict or mask is Mask.NONE  # the query's own position counted twice
            out.append((total - here if both else total, cond))
    return out


def _count(ctx: Ctx, kind: str, phi: Function, c: int) -> Cases:
    counted = position_count(ctx, kind, phi, c)
    return counted if counted is not None else [(ctx.vars.count(kind, phi), ctx.p.true)]


def _positions(
    ctx: Ctx, c: int, moduli: list[int]
) -> list[tuple[bool, bool, dict[int, int], Function]]:
    """Every (i = 1, i = n, i mod m for each m) the query class ``c`` allows, with the
    predicate selecting it (true where the class's predicate fixes it)."""
    p, pred = ctx.p, ctx.classes.predicates[c]
    choices: list[list[tuple[Any, Function]]] = []
    for atom in (First(), Last()):
        u = p.atom(atom)
        choices.append([(True, u), (False, ~u)])
    for m in moduli:
        choices.append([(r, p.atom(Mod(m, r, Position()))) for r in range(m)])
    out = []
    for combo in product(*choices):
        fixed = [u for _, u in combo if not p.implies(pred, u)]
        if p.is_false(reduce(lambda a, u: a & u, (u for _, u in combo), pred)):
            continue
        residues = {m: r for m, (r, _) in zip(moduli, combo[2:])}
        cond = reduce(lambda a, u: a & u, fixed, p.true)
        out.append((combo[0][0], combo[1][0], residues, cond))
    return out


def position_count(ctx: Ctx, kind: str, phi: Function, c: int) -> Cases | None:
    """The count of positions satisfying ``phi``, a predicate of position atoms alone, in the
    prefix (``pre``: j <= i) or suffix (``suf``: j >= i), exactly, as a polynomial in ``i``
    and ``n`` per case of the query position (first, last, residues of ``i``) and, for the
    suffix, per residue of ``n``; None if ``phi`` reads more than position atoms. ``phi`` is
    periodic in ``j`` with period p away from j = 1 and j = n, so a sum over j is
    (G/p)·(length) plus a bounded correction."""
    p = ctx.p
    atoms = [p.atom_of[v] for v in p.bdd.support(phi)]
    if not atoms or not all(_is_position_atom(a) for a in atoms):
        return None
    moduli = sorted({a.modulus for a in atoms if isinstance(a, Mod)})
    period = math.lcm(*moduli) if moduli else 1

    def f(j: int, is_first: bool, is_last: bool) -> int:
        return int(p.position_value(phi, j, is_first, is_last))

    whole = sum(f(j, False, False) for j in range(1, period + 1))

    def g_sum(upto: Poly, residue: int) -> Poly:
        """Σ_{j=1}^{upto} f(j, first=False, last=False) for upto ≡ residue (mod period)."""
        partial = sum(f(j, False, False) for j in range(1, residue + 1))
        const = Fraction(partial) - Fraction(whole * residue, period)
        return upto * Fraction(whole, period) + Poly.const(const)

    def edge(j: int, is_first: bool, is_last: bool) -> Poly:
        return Poly.const(f(j, is_first, is_last) - f(j, False, False))

    i, n, one = Poly.var("i"), Poly.var("n"), Poly.const(1)
    out: Cases = []
    for first, last, residues, cond in _positions(ctx, c, moduli):
        r0 = next(x for x in range(period) if all(x % m == r for m, r in residues.items()))
        if kind == PRE and first:
            out.append((Poly.const(f(1, True, last)), cond))
        elif kind == PRE:  # j = 1 is not last; j = i is last iff i = n
            total = g_sum(i, r0) + edge(1, True, False)
            out.append((total + edge(r0, False, True) if last else total, cond))
        elif last:  # the suffix is j = i = n
            out.append((Poly.const(f(r0, first, True)), cond))
        else:
            for rho in range(period):
                at_n = ctx.vars.mod(period, rho, n) if period > 1 else p.true
                total = g_sum(n, rho) + edge(rho, False, True)
                if first:  # the whole word, n >= 2
                    total = total + edge(1, True, False)
                else:
                    total = total - g_sum(i - one, (r0 - 1) % period)
                out.append((total, cond & at_n))
    return out


def average(ctx: Ctx, hs: HeadSym, ks: list[int], c: int) -> list[Outcome]:
    """The average of the values over the window positions of the classes ``ks``."""
    by_value: dict[bytes, list[int]] = {}
    for k in ks:
        by_value.setdefault(hs.values[k].key(), []).append(k)
    if len(by_value) == 1:
        return [(hs.values[ks[0]], ctx.p.true)]
    mask = hs.table.mask
    groups = list(by_value.values())
    options = [window_count(ctx, ks, mask, c)] + [window_count(ctx, g, mask, c) for g in groups]
    out: list[Outcome] = []
    for combo in product(*options):
        cond = reduce(lambda a, b: a & b[1], combo, ctx.p.true)
        if ctx.p.is_false(ctx.classes.predicates[c] & cond):
            continue
        inv = ctx.vars.inverse(combo[0][0])
        vec = SymVec.zero(hs.values[0].width)
        for group, (share, _) in zip(groups, combo[1:]):
            vec = vec + hs.values[group[0]].times(share * inv)
        out.append((vec, cond))
    return out

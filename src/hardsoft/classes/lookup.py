"""Lookup heads in symbolic class propagation (:mod:`.counting`): a unique-hard head whose
score is a concave quadratic in the key position ``j`` (or in ``1/j``) attends to the vertex
``j = T``, an integer count term, clamped to its window, and reads the class there (the table
lookup of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Thm. 20, as the compiler builds
it)."""

from __future__ import annotations

from fractions import Fraction
from functools import reduce
from itertools import product
from typing import Any

from hardsoft.classes.algebra import Mono, Poly, SymVec, mono_pow, score_poly
from hardsoft.classes.boolean import Function, _is_position_atom
from hardsoft.classes.symbolic import (
    Ctx,
    HeadSym,
    Outcome,
    Unsupported,
    add_outcome,
    empty_window,
)
from hardsoft.logic.syntax import First, Last
from hardsoft.model.spec import Mask, Weighting


def _window_bounds(mask: Mask) -> tuple[Poly, Poly]:
    i, n, one = Poly.var("i"), Poly.var("n"), Poly.const(1)
    return {
        Mask.FUTURE: (one, i),
        Mask.STRICT_FUTURE: (one, i - one),
        Mask.NONE: (one, n),
        Mask.PAST: (i, n),
        Mask.STRICT_PAST: (i + one, n),
    }[mask]


def lookup_target(ctx: Ctx, hs: HeadSym, c: int) -> Poly | None:
    """The position ``T`` a lookup head attends to at a query of class ``c`` (before clamping
    to the window): the vertex of its score, a concave quadratic in the key position; None if
    the score does not depend on the key position."""
    key_j = hs.keys[0].substitute("i", lambda e: Poly.var("j", e))
    s = score_poly(hs.queries[c], key_j, hs.scores)
    by_power: dict[int, dict[Mono, Fraction]] = {}
    for m, coef in s.terms.items():
        e = mono_pow(m, "j")
        rest = tuple((v, x) for v, x in m if v != "j")
        by_power.setdefault(e, {})[rest] = coef
    powers = {e for e in by_power if e != 0}
    name = hs.table.name
    positive = set(ctx.vars.bases) | {"i", "n"}

    def positive_monomial(part: dict[Mono, Fraction], sign: int) -> tuple[Mono, Fraction] | None:
        single = Poly(part).single()
        if single is None or single[1] * sign <= 0 or any(v not in positive for v, _ in single[0]):
            return None
        return single

    if not powers:  # every position ties: the head's tie rule picks the window's end
        return None
    if 2 in powers and powers <= {1, 2}:  # A j^2 + B j with A < 0: the vertex j = -B / (2A)
        lead = positive_monomial(by_power[2], -1)
        if lead is None:
            raise Unsupported(f"head {name}: its score is not concave in the key position j")
        inv = Poly({tuple((v, -e) for v, e in lead[0]): -1 / (2 * lead[1])})
        target = Poly(by_power.get(1, {})) * inv
    elif -1 in powers and powers <= {-1, -2}:  # B/j + A/j^2, B > 0: rising below j = -2A/B
        lead = positive_monomial(by_power[-1], 1)
        if lead is None:
            raise Unsupported(f"head {name}: its score is not unimodal in the key position j")
        inv = Poly({tuple((v, -e) for v, e in lead[0]): -2 / lead[1]})
        target = Poly(by_power.get(-2, {})) * inv
    else:
        raise Unsupported(
            f"head {name}: its score is not a quadratic in j or 1/j (powers of the key position "
            f"{sorted(powers)}), so it is not read as a lookup"
        )
    target = ctx.vars.expand_inverses(target)
    for m, coef in target.terms.items():
        if (
            any(e < 0 or v in ctx.vars.bases for v, e in m)
            or sum(e for _, e in m) > 1
            or coef.denominator != 1
        ):
            raise Unsupported(
                f"head {name}: the position it looks up ({target!r}) is not an integer linear "
                "term of counts"
            )
    return target


def lookup(ctx: Ctx, hs: HeadSym, c: int) -> list[Outcome]:
    """A lookup head: attend to ``j = T`` clamped to the window, read the class there."""
    p, mask = ctx.p, hs.table.mask
    where = ctx.where(c)
    target = lookup_target(ctx, hs, c)
    lo, hi = _window_bounds(mask)
    if target is None:  # a tie over the window: its first (leftmost) or last position
        target = (
            lo - Poly.const(1) if hs.table.weighting is Weighting.LEFTMOST else hi + Poly.const(1)
        )
    out: dict[bytes, Outcome] = {}
    empty = empty_window(ctx, mask)
    nonempty = p.true
    if empty is not None:
        add_outcome(out, SymVec.zero(hs.values[0].width), empty)
        nonempty = ~empty
    below = ctx.vars.compare(lo - target, ">", where, f"head {hs.table.name}")
    above = ctx.vars.compare(target - hi, ">", where, f"head {hs.table.name}")
    for pos, cond in ((lo, below), (hi, above), (target, ~below & ~above)):
        for vec, pred in _read_at(ctx, hs, c, pos):
            add_outcome(out, vec, nonempty & cond & pred)
    return list(out.values())


def _read_at(ctx: Ctx, hs: HeadSym, c: int, pos: Poly) -> list[Outcome]:
    """The head's value at position ``pos``, which must depend only on its position atoms."""
    if pos == Poly.var("i"):
        return [(hs.values[c], ctx.p.true)]
    p = ctx.p
    by_value: dict[bytes, list[int]] = {}
    for k, v in enumerate(hs.values):
        by_value.setdefault(v.key(), []).append(k)
    groups = [(hs.values[ks[0]], ctx.classes.union(p, ks)) for ks in by_value.values()]
    for vec, _ in groups:
        if vec.variables() - {"i", "n"}:
            raise Unsupported(
                f"head {hs.table.name}: the value it looks up depends on counts at the "
                "looked-up position, which the logic cannot name"
            )
    atoms = [a for a in p.atom_of.values() if _is_position_atom(a)]
    found: dict[bytes, Outcome] = {}
    for values in product((False, True), repeat=len(atoms)):
        cube = reduce(
            lambda u, av: u & (p.atom(av[0]) if av[1] else ~p.atom(av[0])),
            zip(atoms, values),
            p.true,
        )
        if p.is_false(cube):
            continue
        hits = [(vec, g) for vec, g in groups if not p.is_false(g & cube)]
        if len(hits) > 1:
            raise Unsupported(
                f"head {hs.table.name}: the value it looks up depends on more than the looked-up "
                "position's residues (e.g. on its symbol), which the logic cannot name"
            )
        if not hits:
            continue
        at = reduce(lambda u, av: u & _atom_at(ctx, av[0], av[1], pos), zip(atoms, values), p.true)
        vec = hits[0][0].substitute("i", lambda e: _power(ctx, pos, e))
        add_outcome(found, vec, at)
    return list(found.values())


def _atom_at(ctx: Ctx, atom: Any, value: bool, pos: Poly) -> Function:
    """A position atom read at position ``pos`` (true if ``value``, else its negation)."""
    v = ctx.vars
    if isinstance(atom, First):
        u = v.compare(pos - Poly.const(1), "=")
    elif isinstance(atom, Last):
        u = v.compare(pos - Poly.var("n"), "=")
    else:
        u = v.mod(atom.modulus, atom.residue, pos)
    return u if value else ~u


def _power(ctx: Ctx, pos: Poly, e: int) -> Poly:
    if e >= 0:
        return pos.power(e)
    return ctx.vars.inverse(pos).power(-e)

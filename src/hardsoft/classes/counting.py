"""Exact symbolic propagation through counting models: average-hard heads, unbounded position
features, feed-forward thresholds (the core of ``decompile`` for counting models).

It extends :mod:`.propagation` from finitely many residual vectors to finitely many *symbolic*
ones (:class:`~.algebra.SymVec`: coefficients of monomials in ``i``, ``n``, counts and positive
inverses), each with the predicate saying where it is carried:

* Layer 0: one class per (symbol, case of every position feature); a feature is a monomial
  ``c · i^a · n^b`` per case (:attr:`PositionFeature.terms`).
* A head whose keys are constant per class (up to powers of ``n``) ranks the key classes by
  their scores against the query's class. Scores are polynomials, so the ranking is split into
  cases, each a conjunction of linear count comparisons (:class:`~.conditions.Vars`). Within a
  case, tiers are read as in :mod:`.propagation`: a unique-hard head takes the nearest position
  of the highest tier present; an average-hard head averages the values over the positions of
  that tier in its window, ``Σ_v v · #[tier with value v] / #[tier]`` (a uniform head over
  ``j <= i`` gives ``#<[φ]/i``: Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Thm. 20).
* A unique-hard head whose keys are one polynomial of the key position ``j`` (the same for all
  classes) and concave quadratic in ``j`` is a *lookup*: it attends to ``j = T`` for the vertex
  ``T`` (an integer count term), clamped to the window, and reads the value of the class at
  ``T``, which must depend only on ``T``'s position atoms (``MOD(m, r)(i)`` becomes
  ``MOD(m, r)(T)``).
* The feed-forward is split on the sign of every pre-activation that is not constant, each
  sign a comparison atom; the readout's threshold is one more comparison.

Anything else (softmax heads, layer norm, values depending on counts at the attended position,
comparisons that are not linear) is refused with one line naming the head.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce
from itertools import product

import numpy as np
import torch

from hardsoft.classes import budget
from hardsoft.classes.algebra import Mono, Poly, SymVec, score_poly
from hardsoft.classes.boolean import Function, Predicates
from hardsoft.classes.conditions import Vars, Where
from hardsoft.classes.lookup import lookup
from hardsoft.classes.propagation import (
    Progress,
    _exists,
    _moduli_of,
    _nearest,
    _position_atoms,
    declare_symbols,
    float64_copy,
    merge_groups,
    to_bdd,
)
from hardsoft.classes.relations import relate
from hardsoft.classes.symbolic import (
    Ctx,
    HeadSym,
    Outcome,
    SymClasses,
    Unsupported,
    add_outcome,
    empty_window,
    read_head,
)
from hardsoft.classes.windows import average
from hardsoft.errors import HardsoftError
from hardsoft.logic.parser import parse
from hardsoft.logic.syntax import Sym
from hardsoft.model.features import parse_feature
from hardsoft.model.readout import acceptance_of, output_names
from hardsoft.model.spec import Weighting
from hardsoft.model.transformer import Block, Transformer

MAX_ORDER_PAIRS = 10
"""A head whose key classes have more score pairs than this that are not constant is refused
(every ranking of them is a case)."""


@dataclass
class CountingTable:
    """The result of :func:`propagate_counting`: the classes per layer and, per output, the
    predicate where the model's declared readout is true."""

    model: Transformer
    preds: Predicates
    vars: Vars
    layers: list[SymClasses]
    outputs: list[tuple[str, str, Function]] = field(default_factory=list)
    ties: list[str] = field(default_factory=list)
    """Outputs whose value can sit exactly on the readout threshold at some position (exact
    arithmetic says "not above"; the model's own rounding may say otherwise there)."""

    @property
    def counts(self) -> list[int]:
        return [len(layer) for layer in self.layers]


# ---------------------------------------------------------------------------- checks


def counting_unsupported(model: Transformer) -> str | None:
    """Why ``model`` cannot be decompiled even with counting terms, or None."""
    for ell, block in enumerate(model.blocks):
        for h, head in enumerate(block.heads):
            if head.spec.weighting is Weighting.SOFTMAX:
                return (
                    f"head blocks.{ell}.attn.{h} is a softmax head: decompile reads unique-hard "
                    "(leftmost, rightmost) and average-hard heads; --harden decompiles the "
                    "hardened model"
                )
    for name in model.spec.position_features:
        if parse_feature(name).terms is None:
            return (
                f"position feature {name!r} is not a monomial in i and n per case; decompile "
                "reads 1, i, n, i/n, 1/i, 1/n, i^2, (i/n)^2, [i=1], [i=n], (-1)^i, "
                "[i mod m = r] and their products"
            )
    if model.spec.layer_norm != "none":
        return (
            f"layer norm ({model.spec.layer_norm}) on a counting model: its output is not "
            "linear in the counts, so it is not decompiled"
        )
    return None


# ---------------------------------------------------------------------------- layer 0


def _monomial(a: int, b: int) -> Mono:
    return tuple(sorted((v, e) for v, e in (("i", a), ("n", b)) if e))


def layer0(m64: Transformer, p: Predicates) -> SymClasses:
    """One class per (symbol, case of every position feature) that can occur."""
    features = [parse_feature(name) for name in m64.spec.position_features]
    declare_symbols(p, m64.spec.alphabet)
    _position_atoms(p, _moduli_of([t for f in features for _, _, t in f.terms or ()]))
    p.mark_base()
    width = m64.spec.d_model
    offsets = np.cumsum([0] + [f.dim for f in features])
    options = [
        [(off, coef, mono, text) for coef, mono, text in f.terms or ()]
        for f, off in zip(features, offsets)
    ]
    vectors: list[SymVec] = []
    predicates: list[Function] = []
    for combo in product(*options):
        where = reduce(lambda a, b: a & b, (to_bdd(p, parse(t)) for *_, t in combo), p.true)
        if p.is_false(where):
            continue
        pos = SymVec.zero(width)
        for off, coef, (a, b), _ in combo:
            raw = torch.zeros(int(offsets[-1]), dtype=torch.float64)
            raw[off] = coef
            with torch.no_grad():
                row = m64.project_features(raw).numpy()
            pos = pos + SymVec({_monomial(a, b): row}, width)
        for symbol in m64.spec.alphabet:
            with torch.no_grad():
                tok = m64.W_E[m64.symbol_index[symbol]].numpy()
            vectors.append(pos.add_const(tok))
            predicates.append(p.atom(Sym(symbol)) & where)
    return merge(vectors, predicates, p)


def merge(
    vectors: list[SymVec], predicates: list[Function], p: Predicates, simplify: bool = True
) -> SymClasses:
    """Merge equal vectors (predicates or-ed), drop predicates that never hold."""
    kept, preds, domain = merge_groups(vectors, [v.key() for v in vectors], predicates, p, simplify)
    return SymClasses(kept, preds, domain=domain)


# ---------------------------------------------------------------------------- heads


def head_outcomes(ctx: Ctx, hs: HeadSym, c: int) -> list[Outcome]:
    """The head's possible outputs at a query of class ``c``, with their predicates."""
    key_vars = set().union(*(k.variables() for k in hs.keys))
    if key_vars <= {"n"}:
        return _tiered(ctx, hs, c)
    name = hs.table.name
    if key_vars - {"i", "n"}:
        raise Unsupported(
            f"head {name}: its keys depend on counts at the key position, which the logic "
            "cannot name"
        )
    if len({k.key() for k in hs.keys}) == 1 and hs.table.weighting is not Weighting.AVERAGE:
        return lookup(ctx, hs, c)
    raise Unsupported(
        f"head {name}: its keys depend on the key position j (unbounded position features) "
        "other than as a lookup (one unique-hard score, the same for every class, quadratic "
        "in j or 1/j)"
    )


def _orderings(
    ctx: Ctx, scores: list[Poly], where: Where, name: str
) -> list[tuple[list[list[int]], Function]]:
    """Every ranking of the key groups by score (tiers, highest first) with its condition."""
    m = len(scores)
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    options: list[list[tuple[int, Function]]] = []
    for a, b in pairs:
        d = scores[a] - scores[b]
        if d.is_const():
            v = d.value()
            options.append([((v > 0) - (v < 0), ctx.p.true)])
        else:
            gt = ctx.vars.compare(d, ">", where, f"head {name}")
            ge = ctx.vars.compare(d, ">=", where, f"head {name}")
            options.append([(1, gt), (0, ge & ~gt), (-1, ~ge)])
    if sum(len(o) > 1 for o in options) > MAX_ORDER_PAIRS:
        raise Unsupported(f"head {name}: too many key classes whose scores compare by counts")
    frontier: list[tuple[dict[tuple[int, int], int], Function]] = [({}, ctx.p.true)]
    for pair, opts in zip(pairs, options):  # breadth first, pruning empty predicates
        frontier = [
            ({**sign, pair: s}, cond & u)
            for sign, cond in frontier
            for s, u in opts
            if not ctx.p.is_false(cond & u)
        ]
    out: list[tuple[list[list[int]], Function]] = []
    for sign, cond in frontier:
        tiers = _tiers(m, sign)
        if tiers is not None:
            out.append((tiers, cond))
    return out


def _tiers(m: int, sign: dict[tuple[int, int], int]) -> list[list[int]] | None:
    """Groups ranked by the pairwise signs (highest first), or None if they contradict."""

    def cmp(a: int, b: int) -> int:
        if a == b:
            return 0
        return -sign[(a, b)] if a < b else sign[(b, a)]

    order = sorted(range(m), key=functools.cmp_to_key(cmp))
    tiers: list[list[int]] = []
    for g in order:
        if tiers and cmp(tiers[-1][0], g) == 0:
            tiers[-1].append(g)
        else:
            tiers.append([g])
    rank = {g: t for t, tier in enumerate(tiers) for g in tier}
    for (a, b), s in sign.items():
        want = (rank[a] < rank[b]) - (rank[a] > rank[b])
        if want != s:
            return None
    return tiers


def _tiered(ctx: Ctx, hs: HeadSym, c: int) -> list[Outcome]:
    """A head whose keys are constant per class: rank the key classes, read the top tier."""
    p, mask, weighting = ctx.p, hs.table.mask, hs.table.weighting
    pred_c = ctx.classes.predicates[c]
    where = ctx.where(c)
    for v in hs.values:
        if v.variables() - {"n"}:
            raise Unsupported(
                f"head {hs.table.name}: the value it reads depends on the attended position or "
                "on counts there, which the logic cannot name"
            )
    groups: dict[bytes, list[int]] = {}
    for k, key in enumerate(hs.keys):
        groups.setdefault(key.key(), []).append(k)
    members = list(groups.values())
    scores = [score_poly(hs.queries[c], hs.keys[g[0]], hs.scores) for g in members]
    out: dict[bytes, Outcome] = {}
    empty = empty_window(ctx, mask)
    if empty is not None:
        add_outcome(out, SymVec.zero(hs.values[0].width), empty)
    for tiers, cond in _orderings(ctx, scores, where, hs.table.name):
        higher = p.false
        for tier_groups in tiers:
            ks = [k for g in tier_groups for k in members[g]]
            tier = ctx.classes.union(p, ks)
            none_higher = ~_exists(p, mask, higher) if higher != p.false else p.true
            base = cond & none_higher
            if p.is_false(pred_c & base):
                break
            if weighting is Weighting.AVERAGE:
                present = base & _exists(p, mask, tier)
                for vec, share in average(ctx, hs, ks, c):
                    add_outcome(out, vec, present & share)
            else:
                _hard_tier(ctx, hs, ks, tier, higher, c, base, out)
            higher = higher | tier
    return list(out.values())


def _hard_tier(
    ctx: Ctx,
    hs: HeadSym,
    ks: list[int],
    tier: Function,
    higher: Function,
    c: int,
    base: Function,
    out: dict[bytes, Outcome],
) -> None:
    p = ctx.p
    by_value: dict[bytes, list[int]] = {}
    for k in ks:
        by_value.setdefault(hs.values[k].key(), []).append(k)
    for group in by_value.values():
        if len(by_value) == 1:
            near = _exists(p, hs.table.mask, tier)
        else:
            kp = ctx.classes.union(p, group)
            near = _nearest(p, hs.table, tier, kp, ctx.classes.predicates[c], ~tier & ~higher)
        add_outcome(out, hs.values[group[0]], base & near)


# ---------------------------------------------------------------------------- a block


def _ffn(ctx: Ctx, block: Block, x: SymVec, pred: Function, where: Where) -> list[Outcome]:
    """The feed-forward on a symbolic residual: one outcome per feasible sign pattern."""
    if not block.spec.d_ff:
        return [(x, pred)]
    p, d_ff = ctx.p, block.spec.d_ff
    with torch.no_grad():
        bias = block.ffn_in(torch.zeros(x.width, dtype=torch.float64)).numpy()
        out_bias = block.ffn_out(torch.zeros(d_ff, dtype=torch.float64)).numpy()
    pre = x.apply(lambda t: block.ffn_in(t, bias=False), d_ff).add_const(bias)
    units = pre.components()
    conds: dict[Poly, Function] = {}
    for k, u in enumerate(units):
        if not u.is_const() and u not in conds:
            conds[u] = ctx.vars.compare(u, ">", where, f"{ctx.name} feed-forward unit {k}")
    Path = tuple[dict[Poly, bool], Function, list]
    frontier: list[Path] = [({}, pred, [])]
    for key, u in conds.items():  # breadth first, pruning empty and integer-infeasible paths
        grown: list[Path] = []
        for signs, cond, lits in frontier:
            for value in (True, False):
                v = u if value else ~u
                if p.is_false(cond & v):
                    continue
                lit = ctx.vars.literal_of(v)
                more = lits if lit is None else [*lits, lit]
                if lit is not None and not ctx.vars.feasible(more, where):
                    continue
                grown.append(({**signs, key: value}, cond & v, more))
        frontier = grown
        if len(frontier) > ctx.max_classes:
            raise HardsoftError(
                f"{ctx.name}: its feed-forward splits one class into more than --max-classes "
                f"{ctx.max_classes:,} sign patterns"
            )
    outcomes: list[Outcome] = []
    for signs, cond, _ in frontier:
        active = np.array(
            [u.value() > 0 if u.is_const() else signs[u] for u in units], dtype=np.float64
        )
        hidden = SymVec({m: r * active for m, r in pre.rows.items()}, d_ff).clean()
        y = x + hidden.apply(lambda t: block.ffn_out(t, bias=False), x.width)
        outcomes.append((y.add_const(out_bias), cond))
    return outcomes


def block_classes(
    p: Predicates,
    vars_: Vars,
    block: Block,
    classes: SymClasses,
    ell: int,
    max_classes: int,
    last: bool,
) -> SymClasses:
    """The symbolic classes after ``block``."""
    ctx = Ctx(p, vars_, classes, f"block {ell}", max_classes)
    heads = [read_head(block, head, classes, ell, h) for h, head in enumerate(block.heads)]
    vectors: list[SymVec] = []
    predicates: list[Function] = []
    for c in range(len(classes)):
        pred_c = classes.predicates[c]
        budget.check()
        options = [head_outcomes(ctx, hs, c) for hs in heads]
        for combo in product(*options):
            pred = reduce(lambda a, o: a & o[1], combo, pred_c)
            if p.is_false(pred):
                continue
            budget.check()
            x = reduce(lambda a, o: a + o[0], combo, classes.vectors[c])
            for y, q in _ffn(ctx, block, x, pred, Where.of(p, pred)):
                vectors.append(y)
                predicates.append(q)
            if len(vectors) > max_classes:
                raise HardsoftError(
                    f"block {ell + 1} has more than --max-classes {max_classes:,} symbolic classes"
                )
    return merge(vectors, predicates, p, simplify=not last)


# ---------------------------------------------------------------------------- the model


def propagate_counting(
    model: Transformer, max_classes: int, progress: Progress | None = None
) -> CountingTable:
    """The symbolic classes of every layer of a counting ``model`` and, per output, the
    predicate where its declared readout holds (see the module docstring)."""
    reason = counting_unsupported(model)
    if reason is not None:
        raise Unsupported(reason)
    if model.spec.d_out < 1:
        raise HardsoftError("the model has no outputs")
    m64 = float64_copy(model)
    p = Predicates()
    vars_ = Vars(p)
    if progress is not None:
        progress("layer 0: classes of the symbols and position features")
    layers = [layer0(m64, p)]
    for ell, block in enumerate(m64.blocks):
        if progress is not None:
            progress(f"block {ell + 1} of {len(m64.blocks)} ({len(layers[-1])} classes)")
        last = ell == len(m64.blocks) - 1
        layers.append(block_classes(p, vars_, block, layers[-1], ell, max_classes, last))
    table = CountingTable(m64, p, vars_, layers)
    table.outputs = _readout(table)
    if progress is not None:
        progress(f"relating {len(vars_.linear)} count comparisons")
    relate(vars_, [u for _, _, u in table.outputs])
    return table


def _readout(table: CountingTable) -> list[tuple[str, str, Function]]:
    m64, p, final = table.model, table.preds, table.layers[-1]
    acc = acceptance_of(m64)
    with torch.no_grad():
        bias = m64.unembed(torch.zeros(m64.spec.d_model, dtype=torch.float64)).numpy()
    ys = [
        v.apply(lambda t: m64.unembed(t, bias=False), m64.spec.d_out).add_const(bias)
        for v in final.vectors
    ]
    if acc.kind == "eos":
        if not all(y.is_constant() for y in ys):
            raise Unsupported("an eos readout of count-valued outputs is not decompiled")
        bits = acc.accept(torch.from_numpy(np.stack([y.const_part() for y in ys]))).numpy()
        chosen = [q for q, b in zip(final.predicates, bits) if b]
        return [("accept", acc.describe(), reduce(lambda a, b: a | b, chosen, p.false))]
    names = output_names(m64)
    out = []
    for k in range(m64.spec.d_out):
        u = p.false
        for y, q in zip(ys, final.predicates):
            poly = y.component(k) - Poly.const(Fraction(float(acc.threshold)))
            site = f"the readout of {names[k]}"
            where = Where.of(p, q)
            u = u | (q & table.vars.compare(poly, ">", where, site))
            if names[k] not in table.ties and table.vars.can_equal(poly, where):
                table.ties.append(names[k])
        out.append((names[k], f"y[{k}] > {acc.threshold:g}", u))
    return out


__all__ = [
    "CountingTable",
    "SymClasses",
    "Unsupported",
    "counting_unsupported",
    "propagate_counting",
]

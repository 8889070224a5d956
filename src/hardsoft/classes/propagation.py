"""Exact class propagation through a unique-hard transformer (the core of ``decompile``).

A *class* is one residual vector that positions can carry, with the predicate (a position
formula, held as a BDD over atoms: see :mod:`hardsoft.classes.boolean`) that says at which
positions of which words it is carried. The classes of a layer partition the positions of every
word, so the model's output at a position is a function of the final class there.

* Layer 0: one class per (symbol, value tuple of the position features); the features must take
  finitely many values (:attr:`PositionFeature.cases`), and only tuples that occur at some
  position are kept (they are periodic in i apart from the first and last position, so the
  lengths n <= 2·period + 2 show them all).
* A block: for each head, the queries, keys and values of every class come from the model's
  analysis API (``Block.attn_input``, ``Head.query/key/value/scores``, ``Head.result``). A
  unique-hard head at a query of class c attends to a position of class k iff no position in
  the mask window carries a class scoring higher against c, and the nearest window position
  (the head's tie rule: rightmost or leftmost) among those scoring equal to k carries k: an
  S/U/P/F/E formula over class predicates (:func:`head_outcomes`). A strict mask with no
  window position (``strict-future`` at i = 1, ``strict-past`` at i = n) gives the zero output.
  Each combination (query class, one outcome per head) whose predicate can hold becomes a
  residual ``x + Σ head outputs`` passed through ``Block.after_attention``; equal vectors are
  merged (their predicates or-ed).
* Readout: ``Transformer.readout`` of the final classes.

Everything is computed in float64 on a float64 copy of the model. Scores are compared exactly:
keys whose scores against a query are bitwise equal are a tie, broken by position as the model
does. (Caveat: the model's own forward pass may round differently in the last bit, e.g. when it
runs in float32 or batches its matrix products otherwise; an exact tie or a score gap below
that rounding could then be decided differently. The built-in verification in
:func:`hardsoft.decompile.decompile` checks the formulas against the model's own forward pass.)

API (stable; other engines read it)::

    table = propagate(model, max_classes=100_000)       # ClassTable
    table.layers[l].vectors    [C_l, d_model] float64    classes entering block l (l = L: final)
    table.layers[l].predicates list of BDDs (table.preds.formula(p) -> Formula)
    table.layers[l].heads[h]   HeadTable of block l's head h:
        .scores   [C_l, C_l] float64, exact Head.scores of query class × key class
        .outputs  [C_l, d_model] float64, Head.result of each key class's value
        .weighting, .mask
    candidates(head_table, c)  the key classes a query of class c can attend to (all, or for a
                               non-strict mask those scoring >= c's own key against c)
    table.outputs              [C_L, d_out] float64, Transformer.readout of the final classes
    table.formula(l, c)        the predicate of class c of layer l as a formula
"""

from __future__ import annotations

import copy
import math
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import reduce
from itertools import product
from typing import Any

import numpy as np
import torch

from hardsoft.classes import budget, reach
from hardsoft.classes.boolean import ClassUnion, Function, Partition, Predicates
from hardsoft.classes.head_table import HeadTable
from hardsoft.errors import HardsoftError
from hardsoft.logic.parser import parse
from hardsoft.logic.syntax import (
    And,
    Const,
    First,
    Formula,
    Last,
    Mod,
    Not,
    Or,
    Position,
    Sym,
    subnodes,
)
from hardsoft.model.features import PositionFeature, parse_feature
from hardsoft.model.spec import Mask, Weighting
from hardsoft.model.transformer import Block, Head, Transformer

DEFAULT_MAX_CLASSES = 100_000


@dataclass
class LayerClasses:
    """The classes entering a block (or the final ones) and that block's head tables."""

    vectors: np.ndarray
    predicates: list[Function]
    heads: list[HeadTable] = field(default_factory=list)
    domain: Function | None = None
    """The disjunction of the predicates: true at every position (the classes partition the
    positions), so predicates may be simplified wherever it holds."""
    parts: list[list[tuple[int, Function]]] | None = None
    """Per class, the (query class of the block before, conjunction of head outcome
    predicates) pairs merged into it. A class's predicate is the disjunction of
    ``before[c] & outcome``; kept so outputs can be written per query class
    (:func:`hardsoft.classes.outputs.write_output`) and large unions of classes written as
    ``⋁ (query classes ∧ outcome)`` (:meth:`pieces`) instead of as one BDD over every atom."""
    before: LayerClasses | None = None
    """The layer the block before read (the query classes of :attr:`parts`)."""

    occurring: bool = False
    """Every class is known to occur (:mod:`hardsoft.classes.reach`). Then a layer whose
    domain mentions more than :data:`SMALL_ATOMS` atoms is not simplified on it: a care set
    over every atom of a large layer is the costliest BDD of the run, and the printed
    formulas re-simplify every atom anyway."""

    _unions: dict[frozenset[int], Function] = field(default_factory=dict, repr=False)
    _partition: Partition | None = field(default=None, repr=False)

    def partition(self) -> Partition:
        """The classes as a partition of the positions (for relations between unions of
        classes decided on class sets, :class:`hardsoft.classes.boolean.Partition`)."""
        if self._partition is None:
            self._partition = Partition(len(self), self.occurring)
            if self.parts is not None and self.before is not None:
                self._partition.pieces = _weak_pieces(self)
            parent_of = self.parent_of()
            if parent_of is not None and self.before is not None:
                self._partition.parent = self.before.partition()
                self._partition.parent_of = parent_of
        return self._partition

    def parent_of(self) -> tuple[int, ...] | None:
        """Per class, the one query class of the layer before whose positions contain it
        (read from :attr:`parts`); None where a class merges positions of two query classes."""
        if self.parts is None:
            return None
        parents = [{c for c, _ in part} for part in self.parts]
        if any(len(cs) != 1 for cs in parents):
            return None
        return tuple(cs.pop() for cs in parents)

    def union(
        self, preds: Predicates, members: Iterable[int], raw: Callable[[], Function] | None = None
    ) -> Function:
        """The disjunction of the members' predicates, simplified on the domain (memoised:
        every query class asks for the unions of its tiers, and they repeat). In a large
        layer of occurring classes, the smaller BDD of the union and the negated union of
        the others (equal on every position: the classes partition the positions). ``raw``:
        makes the plain disjunction more cheaply than from scratch (asked only on a miss)."""
        key = frozenset(int(k) for k in members)
        hit = self._unions.get(key)
        if hit is None:
            u = self._or(preds, key) if raw is None else raw()
            if self.occurring and len(key) == len(self):
                u = preds.true
            elif self.domain is not None:
                u = preds.simplify(u, self.domain)
            elif self.occurring:
                rest = frozenset(range(len(self))) - key
                if len(rest) < len(key):
                    u = min(u, ~self._or(preds, rest), key=len)
            hit = self._unions[key] = u
            preds.unions.setdefault(u, ClassUnion(self.partition(), key))
        return hit

    def pieces(self, preds: Predicates, members: frozenset[int]) -> list[tuple[Function, Function]]:
        """The union of ``members`` as (union of query classes of the layer before, outcome)
        pairs whose disjunction of conjunctions it is: query classes grouped by the outcomes
        that lead from them into ``members``, and query classes all of whose outcomes do
        collapsed into one union with outcome true (their outcomes cover their positions)."""
        assert self.parts is not None and self.before is not None
        into: dict[int, Function] = {}
        partial: set[int] = set()
        for k, part in enumerate(self.parts):
            for c, outcome in part:
                if k in members:
                    into[c] = into.get(c, preds.false) | outcome
                else:
                    partial.add(c)
        by_outcome: dict[Function, list[int]] = {}
        for c, outcome in into.items():
            by_outcome.setdefault(preds.true if c not in partial else outcome, []).append(c)
        return [(self.before.union(preds, cs), o) for o, cs in by_outcome.items()]

    def _or(self, preds: Predicates, key: frozenset[int]) -> Function:
        return reduce(lambda a, b: a | b, (self.predicates[k] for k in sorted(key)), preds.false)

    def __len__(self) -> int:
        return len(self.predicates)


@dataclass
class ClassTable:
    """The result of :func:`propagate`."""

    model: Transformer
    preds: Predicates
    layers: list[LayerClasses]
    outputs: np.ndarray
    features: tuple[str, ...]

    def formula(self, layer: int, c: int) -> Formula:
        return self.preds.formula(self.layers[layer].predicates[c])

    @property
    def counts(self) -> list[int]:
        return [len(layer) for layer in self.layers]


# ---------------------------------------------------------------------------- checks


def unsupported(model: Transformer) -> str | None:
    """Why ``model`` cannot be decompiled (the first head or feature that cannot), or None."""
    for ell, block in enumerate(model.blocks):
        for h, head in enumerate(block.heads):
            w = head.spec.weighting
            where = f"blocks.{ell}.attn.{h}"
            if w is Weighting.SOFTMAX:
                return (
                    f"head {where} is a softmax head: decompile reads unique-hard (leftmost, "
                    "rightmost) and average-hard heads; --harden decompiles the hardened model"
                )
            if w is Weighting.AVERAGE:
                return (
                    f"head {where} is an average-hard head: it averages over positions, so its "
                    "output takes unboundedly many values (hardsoft.classes.counting reads it)"
                )
    for name in model.spec.position_features:
        if parse_feature(name).cases is None:
            return (
                f"position feature {name!r} takes unboundedly many values or depends on n; "
                "decompile needs features with finitely many values "
                "(1, [i=1], [i=n], (-1)^i, [i mod m = r] and their products)"
            )
    return None


def check(model: Transformer) -> None:
    """Raise a one-line HardsoftError if ``model`` cannot be decompiled."""
    reason = unsupported(model)
    if reason is not None:
        raise HardsoftError(reason)
    if model.spec.d_out < 1:
        raise HardsoftError("the model has no outputs")


# ---------------------------------------------------------------------------- layer 0


def _moduli(features: list[PositionFeature]) -> list[int]:
    return _moduli_of([text for f in features for _, text in f.cases or ()])


def _moduli_of(texts: list[str]) -> list[int]:
    """The moduli m of the atoms MOD(m, r)(i) in the formulas ``texts``."""
    mods: set[int] = set()
    for text in texts:
        mods.update(n.modulus for n in subnodes(parse(text)) if isinstance(n, Mod))
    return sorted(mods)


def _position_atoms(preds: Predicates, moduli: list[int]) -> None:
    """Declare first, last and MOD(m, r)(i), and assume the combinations that occur."""
    period = reduce(math.lcm, moduli, 1)
    seen = preds.false
    for n in range(1, 2 * period + 3):
        for i in range(1, n + 1):
            cube = _lit(preds, First(), i == 1) & _lit(preds, Last(), i == n)
            for m in moduli:
                for r in range(m):
                    cube = cube & _lit(preds, Mod(m, r, Position()), i % m == r)
            seen = seen | cube
    preds.assume(seen, base=True)


def _lit(preds: Predicates, atom: Formula, value: bool) -> Function:
    u = preds.atom(atom)
    return u if value else ~u


def to_bdd(preds: Predicates, f: Formula) -> Function:
    """A Boolean combination of atoms as a BDD (position atoms: first, last, MOD(m, r)(i))."""
    if isinstance(f, Const):
        return preds.true if f.value else preds.false
    if isinstance(f, Not):
        return ~to_bdd(preds, f.arg)
    if isinstance(f, And):
        return to_bdd(preds, f.left) & to_bdd(preds, f.right)
    if isinstance(f, Or):
        return to_bdd(preds, f.left) | to_bdd(preds, f.right)
    return preds.atom(f)


def layer0(m64: Transformer, preds: Predicates) -> LayerClasses:
    """One class per (symbol, feature value tuple that occurs), from ``Transformer.embed``."""
    features = [parse_feature(name) for name in m64.spec.position_features]
    moduli = _moduli(features)
    alphabet = m64.spec.alphabet
    syms = declare_symbols(preds, alphabet)
    _position_atoms(preds, moduli)
    preds.mark_base()
    period = reduce(math.lcm, moduli, 1)
    witness: dict[tuple[float, ...], tuple[int, int]] = {}
    for n in range(1, 2 * period + 3):
        raw = _raw_features(features, n)
        for i in range(n):
            witness.setdefault(tuple(float(v) for v in raw[i]), (i, n))
    vectors, predicates = [], []
    for values, (i, n) in witness.items():
        where = preds.true
        offset = 0
        for f in features:
            vals = values[offset : offset + f.dim]
            offset += f.dim
            options = [text for v, text in f.cases or () if (v,) == vals]
            if not options:
                raise HardsoftError(f"position feature {f.name!r} has an undeclared value {vals}")
            where = where & reduce(lambda a, b: a | b, (to_bdd(preds, parse(t)) for t in options))
        for a, sym in zip(alphabet, syms):
            tokens = torch.full((1, n), m64.symbol_index[a], dtype=torch.long)
            with torch.no_grad():
                vectors.append(m64.embed(tokens)[0, i].numpy())
            predicates.append(sym & where)
    return _merge(np.stack(vectors), predicates, preds)


def _raw_features(features: list[PositionFeature], n: int) -> np.ndarray:
    if not features:
        return np.zeros((n, 0))
    return np.concatenate([f.compute(n).numpy() for f in features], axis=1)


SIMPLIFY_LIMIT = 200
SMALL_ATOMS = 40
"""A layer of occurring classes is simplified on its domain only while the domain mentions at
most this many atoms (compiled models: a few; random 3-layer models: hundreds)."""
"""Class predicates are simplified on their layer's domain up to this many classes (beyond,
the time goes to simplification that only affects how the formulas read)."""


def merge_groups(
    items: list[Any],
    keys: list[bytes],
    predicates: list[Function],
    preds: Predicates,
    simplify: bool = True,
    prune: bool = True,
) -> tuple[list[Any], list[Function], Function | None]:
    """Merge items with equal keys (their predicates or-ed), drop predicates that never hold
    (modulo the facts with ``prune``, else only the empty BDD), simplify the predicates on
    their disjunction, the layer's domain (``simplify``, for intermediate layers). Returns
    (items, predicates, domain); no domain without ``simplify``."""
    groups: dict[bytes, int] = {}
    out_items: list[Any] = []
    out_preds: list[Function] = []
    for item, key, pred in zip(items, keys, predicates):
        if pred == preds.false or (prune and preds.is_false(pred)):
            continue
        if key in groups:
            out_preds[groups[key]] = out_preds[groups[key]] | pred
        else:
            groups[key] = len(out_items)
            out_items.append(item)
            out_preds.append(pred)
    if not simplify:
        return out_items, out_preds, None
    if not prune and len(set().union(*(preds.bdd.support(u) for u in out_preds))) > SMALL_ATOMS:
        return out_items, out_preds, None  # occurring classes of a large layer (LayerClasses)
    domain = preds.false
    for u in out_preds:
        budget.check()  # the disjunction of many large predicates takes seconds
        domain = domain | u
    if len(out_preds) <= SIMPLIFY_LIMIT:
        out_preds = [preds.simplify(u, domain) for u in out_preds]
    return out_items, out_preds, domain


def declare_symbols(preds: Predicates, alphabet: tuple[str, ...]) -> list[Function]:
    """The symbol atoms, with the base fact that exactly one holds at each position."""
    syms = [preds.atom(Sym(a)) for a in alphabet]
    exactly_one = preds.false
    for k in range(len(syms)):
        cube = preds.true
        for j, u in enumerate(syms):
            cube = cube & (u if j == k else ~u)
        exactly_one = exactly_one | cube
    preds.assume(exactly_one, base=True)
    return syms


def _merge(
    vectors: np.ndarray,
    predicates: list[Function],
    preds: Predicates,
    final: bool = False,
    prune: bool = True,
) -> LayerClasses:
    """Merge equal vectors (their predicates or-ed); see :func:`merge_groups`. The final
    layer is only read out: its predicates are not simplified on a domain. Without
    ``prune``, every predicate is known to hold somewhere (the layer's classes occur)."""
    rows = [vec + 0.0 for vec in vectors]  # -0.0 and 0.0 are one value
    kept, out_preds, domain = merge_groups(
        rows,
        [r.tobytes() for r in rows],
        predicates,
        preds,
        simplify=not final,
        prune=prune,
    )
    width = vectors.shape[1] if vectors.ndim == 2 else 0
    stacked = np.stack(kept) if kept else np.zeros((0, width))
    return LayerClasses(stacked, out_preds, domain=domain, occurring=not prune)


# ---------------------------------------------------------------------------- one head


def head_table(block: Block, head: Head, classes: LayerClasses, ell: int, h: int) -> HeadTable:
    """Scores and outputs of ``head`` on every (query class, key class), via the model's API."""
    with torch.no_grad():
        x = torch.from_numpy(classes.vectors)
        a_in = block.attn_input(x)
        q, k, v = head.qkv(a_in)
        scores = head.scores(q, k, 1).numpy()  # hard heads: the scale does not depend on n
        outputs = head.result(v).numpy() + 0.0
    return HeadTable(ell, h, head.spec.weighting, head.spec.mask, scores, outputs)


def _exists(p: Predicates, mask: Mask, x: Function, varies: bool = False) -> Function:
    """Some position of the query's mask window satisfies ``x`` (``varies``: ``x`` is known
    to hold somewhere and fail somewhere, :meth:`Predicates.unary`)."""
    if mask is Mask.NONE:
        return p.unary("E", x, varies)
    if mask is Mask.FUTURE:
        return x | p.unary("P", x, varies)
    if mask is Mask.STRICT_FUTURE:
        return p.unary("P", x, varies)
    if mask is Mask.PAST:
        return x | p.unary("F", x, varies)
    return p.unary("F", x, varies)


def _parity_of(p: Predicates, ctx: Function) -> int | None:
    """r if every position of ``ctx`` has i mod 2 = r (and the MOD(2, r)(i) atoms exist)."""
    for r in (0, 1):
        atom = Mod(2, r, Position())
        if atom in p.var_of and p.implies(ctx, p.atom(atom)):
            return r
    return None


def _adjacent(p: Predicates, ctx: Function, lower: Function) -> bool:
    """Whether the lower-tier positions are exactly those of the query's parity, at a query
    of known parity (higher tiers being absent from the window): then the nearest tier
    position is the neighbour (Y or X)."""
    r = _parity_of(p, ctx)
    return r is not None and p.equal(lower, p.atom(Mod(2, r, Position())))


def _flip_parity(p: Predicates, ctx: Function, k: Function) -> Function:
    """``k`` read at a neighbour of a query of known parity r: its parity atoms fixed to the
    other parity (so ``Y ('a' & MOD(2, 0)(i))`` at an odd query is ``Y 'a'``)."""
    r = _parity_of(p, ctx)
    assert r is not None
    names = {rr: p.var_of[Mod(2, rr, Position())] for rr in (0, 1)}
    return p.bdd.let({names[1 - r]: True, names[r]: False}, k)


def _nearest(
    p: Predicates,
    table: HeadTable,
    tier: Function,
    k: Function,
    ctx: Function,
    lower: Function,
    varies: bool = False,
) -> Function:
    """The nearest window position (by the head's tie rule) satisfying ``tier`` satisfies
    ``k`` (``k`` implies ``tier``; true only where some window position satisfies ``tier``).
    ``ctx`` is the query class's predicate and ``lower`` the positions of lower tiers; the
    result is used only under ``ctx`` where no higher tier is in the window. ``varies``: k
    and tier hold somewhere and fail somewhere, and so does ``tier & !k`` (unions of
    occurring classes: no folding tests, :meth:`Predicates.binary`)."""
    weighting, mask = table.weighting, table.mask
    other = ~tier
    if weighting is Weighting.RIGHTMOST:
        if mask is Mask.FUTURE:
            if _adjacent(p, ctx, lower):
                return k | (other & p.unary("Y", _flip_parity(p, ctx, k)))
            return k | (other & p.binary("S", other, k, varies))
        if mask is Mask.STRICT_FUTURE:
            return p.binary("S", other, k, varies)
        last = k & ~p.unary("F", tier, varies)
        if mask is Mask.NONE:
            return p.unary("E", last)
        if mask is Mask.PAST:
            return last | p.unary("F", last)
        return p.unary("F", last)
    if mask is Mask.PAST:
        if _adjacent(p, ctx, lower):
            return k | (other & p.unary("X", _flip_parity(p, ctx, k)))
        return k | (other & p.binary("U", other, k))
    if mask is Mask.STRICT_PAST:
        return p.binary("U", other, k, varies)
    first = k & ~p.unary("P", tier, varies)
    if mask is Mask.NONE:
        return p.unary("E", first)
    if mask is Mask.FUTURE:
        return first | p.unary("P", first)
    return p.unary("P", first)


def candidates(table: HeadTable, c: int) -> np.ndarray:
    """Key classes a query of class c may attend to: all, or (when the window contains the
    query's own position) those scoring at least as high as c itself."""
    row = table.scores[c]
    if table.mask.is_strict:
        return np.arange(len(row))
    return np.flatnonzero(row >= row[c])


def estimate(table: HeadTable, c: int) -> int:
    """How many different outputs the head can give at a query of class c (an upper bound)."""
    keys = candidates(table, c)
    distinct = len({table.outputs[k].tobytes() for k in keys})
    return distinct + (1 if table.mask.is_strict else 0)


Reached = set[tuple[float | None, bytes]]
"""The (tier score, output) pairs a head gives at some query of a class, None for the empty
window (:meth:`hardsoft.classes.reach.Machine.reachable`)."""


def head_outcomes(
    p: Predicates,
    table: HeadTable,
    classes: LayerClasses,
    c: int,
    reached: Reached | None = None,
) -> dict[bytes, tuple[np.ndarray, Function]]:
    """Output vector -> (vector, predicate) of the head at a query of class ``c``; the
    predicates are exact under the query's predicate (see :func:`_nearest`). With
    ``reached`` (the tiers and outputs known to occur at such a query), only those are
    built; without it, those whose predicate the facts prove empty are dropped."""
    ctx = classes.predicates[c]
    keys = candidates(table, c)
    row = table.scores[c]
    out: dict[bytes, tuple[np.ndarray, Function]] = {}

    def add(vec: np.ndarray, pred: Function) -> None:
        key = vec.tobytes()
        old = out.get(key)
        out[key] = (vec, pred if old is None else old[1] | pred)

    zero = np.zeros_like(table.outputs[0])
    if reached is None or (None, zero.tobytes()) in reached:
        if table.mask is Mask.STRICT_FUTURE:
            add(zero, p.atom(First()))
        elif table.mask is Mask.STRICT_PAST:
            add(zero, p.atom(Last()))
    scores = sorted({float(s) for s in row[keys]}, reverse=True)
    if reached is not None:
        lowest = min((s for s, _ in reached if s is not None), default=math.inf)
        scores = [s for s in scores if s >= lowest]
    above = _GrowingUnion(p, classes)  # the classes of the tiers above
    for score in scores:
        budget.check()  # one tier's predicates can take seconds: --budget is looked at here
        members = [k for k in keys if row[k] == score]
        if reached is not None and not any(s == score for s, _ in reached):
            above.extend(members)  # no query of class c attends to this tier
            continue
        occurring = classes.occurring  # then a proper, non-empty union of classes varies
        higher = classes.union(p, above.members, above.value)
        varies = occurring and len(above.members) < len(classes)
        none_higher = ~_exists(p, table.mask, higher, varies) if above.members else p.true
        if reached is None and p.is_false(ctx & none_higher):
            break
        tier = classes.union(p, members)
        varies = occurring and len(members) < len(classes)
        by_output: dict[bytes, list[int]] = {}
        for k in members:
            by_output.setdefault(table.outputs[k].tobytes(), []).append(k)
        for key, ks in by_output.items():
            if reached is not None and (score, key) not in reached:
                continue
            budget.check()
            if len(by_output) == 1:
                near = _exists(p, table.mask, tier, varies)
            else:
                kp = classes.union(p, ks)
                near = _nearest(p, table, tier, kp, ctx, ~tier & ~higher, varies)
            pred = none_higher & near
            if reached is not None or not p.is_false(ctx & pred):
                add(table.outputs[ks[0]], pred)
        above.extend(members)
    return out


def _weak_pieces(
    layer: LayerClasses,
) -> Callable[[Predicates, frozenset[int]], list[tuple[Function, Function]]]:
    """``layer.pieces`` through a weak reference: a layer holding its partition holding the
    layer would be a cycle of BDD nodes, freed after the BDD manager at exit (CUDD then
    complains on stderr)."""
    ref = weakref.ref(layer)

    def pieces(preds: Predicates, members: frozenset[int]) -> list[tuple[Function, Function]]:
        owner = ref()
        assert owner is not None, "a partition outlived its layer"
        return owner.pieces(preds, members)

    return pieces


class _GrowingUnion:
    """The disjunction of a growing list of a layer's classes, OR-ed together only when
    asked for (a query class's unions of the tiers above are mostly memoised already)."""

    def __init__(self, p: Predicates, classes: LayerClasses) -> None:
        self.members: list[int] = []
        self._classes = classes
        self._or: Function = p.false
        self._done = 0

    def extend(self, members: list[int]) -> None:
        self.members += members

    def value(self) -> Function:
        for k in self.members[self._done :]:
            self._or = self._or | self._classes.predicates[k]
        self._done = len(self.members)
        return self._or


# ---------------------------------------------------------------------------- a block


def _block(
    p: Predicates,
    block: Block,
    classes: LayerClasses,
    ell: int,
    max_classes: int,
    last: bool = False,
    progress: Progress | None = None,
    machine: reach.Machine | None = None,
) -> LayerClasses:
    """Block ``ell`` on ``classes``. With a ``machine`` (:mod:`hardsoft.classes.reach`), only
    the combinations that occur are built, and ``machine`` learns the block's classes."""
    tables = [head_table(block, head, classes, ell, h) for h, head in enumerate(block.heads)]
    classes.heads = tables
    if progress is not None and machine is not None and machine.usable:
        progress(f"block {ell + 1}: which combinations occur ({len(classes)} query classes)")
    reached = _reached(machine, tables, len(classes))
    if reached is None:
        bound = sum(math.prod(estimate(t, c) for t in tables) for c in range(len(classes)))
        how = "estimated before the work"
    else:  # exact: the product bound refuses models that finish in seconds (2 x 3 over abc)
        bound, how = len(reached.combos), "combinations that occur, counted before the work"
    if bound > max_classes:
        raise HardsoftError(
            f"block {ell + 1} may have up to {bound:,} classes ({how}), "
            f"more than --max-classes {max_classes:,}"
        )
    vectors: list[torch.Tensor] = []
    predicates: list[Function] = []
    origins: list[tuple[int, Function]] = []
    combos: list[reach.Combo] = []
    for c in range(len(classes)):
        ctx = classes.predicates[c]
        options = []
        for h, t in enumerate(tables):
            if progress is not None:
                progress(
                    f"block {ell + 1}: query class {c + 1} of {len(classes)}, "
                    f"head {h + 1} of {len(tables)}"
                )
            options.append(list(head_outcomes(p, t, classes, c, _tiers(reached, h, c)).items()))
        for combo in product(*options):
            budget.check()
            keys = (c, tuple(key for key, _ in combo))
            if reached is not None and keys not in reached.combos:
                continue
            outcome = p.true
            for _, (_, q) in combo:
                outcome = outcome & q
                budget.check()  # a conjunction of large predicates can take seconds
            pred = ctx & outcome
            if pred == p.false:  # the facts prune the merged classes (merge_groups)
                if reached is not None:
                    raise HardsoftError(f"internal: block {ell + 1}: an occurring class is empty")
                continue
            x = torch.from_numpy(classes.vectors[c])
            if combo:
                att = sum((torch.from_numpy(v) for _, (v, _) in combo), torch.zeros_like(x))
                x = x + att
            vectors.append(x)
            predicates.append(pred)
            origins.append((c, outcome))
            combos.append(keys)
    with torch.no_grad():
        out = block.after_attention(torch.stack(vectors)).numpy() if vectors else None
    if out is None:
        return LayerClasses(np.zeros((0, classes.vectors.shape[1])), [])
    merged = _merge(out, predicates, p, final=last, prune=reached is None)
    if machine is not None and reached is not None and not last:
        index = {(row + 0.0).tobytes(): k for k, row in enumerate(merged.vectors)}
        machine.set_classes(ell, {k: index[(row + 0.0).tobytes()] for k, row in zip(combos, out)})
    merged.parts = _parts(merged.vectors, out, origins)
    merged.before = classes
    return merged


def _reached(
    machine: reach.Machine | None, tables: list[HeadTable], count: int
) -> reach.Reached | None:
    """The block's occurring combinations, or None without a machine or if it is too large
    (then the facts prune, as for models whose heads look both ways)."""
    if machine is None or not machine.usable:
        return None
    machine.add_block(tables, count)
    try:
        return machine.reachable()
    except reach.TooManyStates:
        return None


def _tiers(reached: reach.Reached | None, h: int, c: int) -> Reached | None:
    return None if reached is None else reached.tiers.get((h, c), set())


def _parts(
    kept: np.ndarray, candidates: np.ndarray, origins: list[tuple[int, Function]]
) -> list[list[tuple[int, Function]]]:
    """Per final class, the (query class, outcome) pairs whose vector it is (pruned
    candidates, whose predicate never holds, go nowhere)."""
    index = {(row + 0.0).tobytes(): k for k, row in enumerate(kept)}
    parts: list[list[tuple[int, Function]]] = [[] for _ in range(len(kept))]
    for row, origin in zip(candidates, origins):
        k = index.get((row + 0.0).tobytes())
        if k is not None:
            parts[k].append(origin)
    return parts


# ---------------------------------------------------------------------------- the model


def float64_copy(model: Transformer) -> Transformer:
    """A float64 copy of ``model`` (weights converted exactly; the original is untouched)."""
    m64 = copy.deepcopy(model).to(torch.float64)
    m64.eval()
    return m64


Progress = Callable[[str], None]
"""Told what the propagation is doing (``"block 1 of 3 (12 classes)"``), for a progress line."""


def propagate(
    model: Transformer, max_classes: int = DEFAULT_MAX_CLASSES, progress: Progress | None = None
) -> ClassTable:
    """The exact classes of every layer of a unique-hard ``model`` (see the module
    docstring); a HardsoftError names the first unsupported head or feature, or says the
    class count estimated before a block exceeds ``max_classes``."""
    check(model)
    m64 = float64_copy(model)
    p = Predicates()
    if progress is not None:
        progress("layer 0: classes of the symbols and position features")
    layers = [layer0(m64, p)]
    machine = reach.machine(m64, p, layers[0].predicates)
    for ell, block in enumerate(m64.blocks):
        if progress is not None:
            progress(f"block {ell + 1} of {len(m64.blocks)} ({len(layers[-1])} classes)")
        last = ell == len(m64.blocks) - 1
        layers.append(_block(p, block, layers[-1], ell, max_classes, last, progress, machine))
    with torch.no_grad():
        outputs = m64.readout(torch.from_numpy(layers[-1].vectors)).numpy()
    return ClassTable(m64, p, layers, outputs, tuple(m64.spec.position_features))

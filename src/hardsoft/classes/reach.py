"""Which class combinations occur: exact reachability for one-directional unique-hard models.

When every head looks one way (``future``/``strict-future`` masks: positions at or before the
query; ``past``/``strict-past``: at or after it), the class of every layer at a position is
computed by a finite machine reading the word from that side. A unique-hard head at a query
of class c attends to the window's best-scoring tier of key classes, so the state holds, per
layer and per (head, query class), the best score among the classes seen so far (the best of
a longer prefix is the larger of that and the new class's score: two prefixes with the same
best scores have the same future), and for each tier of equally scoring key classes with
different outputs, the member the tie rule picks (the nearest seen for ``rightmost`` read
left to right, the farthest for ``leftmost``, mirrored for the past masks).

Exploring the reachable states gives exactly the (query class, head outputs) combinations that
occur at some position of some word. Class propagation (:mod:`hardsoft.classes.propagation`)
then builds predicates only for those, instead of proving the others impossible with facts
about temporal atoms (sound but incomplete, and most of the time of large models). The
predicates themselves are built as before, so their formulas stay exact; the machine only
decides which of them are non-empty, and the built-in check of ``decompile`` tests the result
against the model's own forward pass.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING

import numpy as np

from hardsoft.classes import budget
from hardsoft.classes.boolean import Function, Predicates
from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import First, Last, Mod, Position, Sym
from hardsoft.model.spec import Mask, Weighting
from hardsoft.model.transformer import Transformer

if TYPE_CHECKING:
    from hardsoft.classes.head_table import HeadTable

Combo = tuple[int, tuple[bytes, ...]]
"""A query class and one output per head (the output vector's bytes; zeros for an empty
window), as :func:`hardsoft.classes.propagation.head_outcomes` keys them."""
Outcome = tuple[float | None, bytes]
"""The score of the tier a head attends to (None: empty window) and its output's bytes."""


@dataclass
class Reached:
    """What the newest block's heads do at the positions of some word."""

    combos: set[Combo]
    tiers: dict[tuple[int, int], set[Outcome]]
    """(head, query class) -> the outcomes that occur."""


MAX_STATES = 50_000
"""The machine is explored up to this many states; beyond, propagation falls back to facts."""

_AHEAD = (Mask.FUTURE, Mask.STRICT_FUTURE)
_BEHIND = (Mask.PAST, Mask.STRICT_PAST)


def reading(model: Transformer) -> bool | None:
    """True if every head looks at or before the query (read left to right), False if every
    head looks at or after it (read right to left), None otherwise (no machine)."""
    masks = {head.spec.mask for block in model.blocks for head in block.heads}
    weightings = {head.spec.weighting for block in model.blocks for head in block.heads}
    if not weightings <= {Weighting.LEFTMOST, Weighting.RIGHTMOST}:
        return None
    if masks <= set(_AHEAD):
        return True
    if masks <= set(_BEHIND):
        return False
    return None


@dataclass
class _Head:
    """One head as the machine reads it."""

    scores: np.ndarray
    outputs: list[bytes]
    strict: bool
    nearest: bool
    """The tie rule picks the member nearest to the query (else the farthest)."""
    ties: dict[tuple[int, float], int]
    """(query class, tier score) -> index of the tracked tier, for tiers with several outputs."""
    zero: bytes
    output_of: dict[tuple[int, float], bytes]
    """(query class, tier score) -> the output of a tier with one output (filled on use)."""


@dataclass
class _Layer:
    heads: list[_Head]
    tracked: list[frozenset[int]]
    """Tiers whose member the tie rule picks must be remembered (per layer)."""
    scores: np.ndarray
    """[head, query class, key class]: a position of class k raises the best score seen by
    every (head, query class) to at least ``scores[:, :, k]``."""
    next_class: dict[Combo, int] | None = None
    _memo: dict[tuple, tuple] = field(default_factory=dict)

    def step(self, state: tuple[bytes, tuple], c: int) -> tuple[tuple[Outcome, ...], tuple]:
        """The heads' outcomes at a position of class c, and the layer's state after it
        (memoised: the lower layers' states repeat across the upper layers' states)."""
        key = (state, c)
        hit = self._memo.get(key)
        if hit is None:
            best_seen, picks = state
            best = np.frombuffer(best_seen).reshape(self.scores.shape[:2])
            outs = tuple(
                _output(head, c, float(best[h, c]), picks, self)
                for h, head in enumerate(self.heads)
            )
            after = (np.maximum(best, self.scores[:, :, c]).tobytes(), _pick(self, c, picks))
            hit = self._memo[key] = (outs, after)
        return hit


@dataclass
class Machine:
    """The class-level machine of a one-directional model (see the module doc)."""

    forward: bool
    period: int
    layer0: dict[tuple[str, int, bool, bool], int]
    """(symbol, i mod period, first, last) -> class of layer 0 (absent: never occurs)."""
    alphabet: tuple[str, ...]
    layers: list[_Layer] = field(default_factory=list)
    usable: bool = True
    """False once a block's machine was too large: the later blocks are pruned by facts."""

    def add_block(self, tables: list[HeadTable], count: int) -> None:
        """Read block ``len(self.layers)``'s head tables (``HeadTable``) on ``count`` classes."""
        heads: list[_Head] = []
        tracked: list[frozenset[int]] = []
        index: dict[frozenset[int], int] = {}
        for t in tables:
            ties: dict[tuple[int, float], int] = {}
            ordered = np.sort(t.scores, axis=1)
            for c in np.flatnonzero((np.diff(ordered, axis=1) == 0).any(axis=1)):
                row = t.scores[c]
                for score in {float(s) for s in row}:
                    members = frozenset(int(k) for k in np.flatnonzero(row == score))
                    if len({t.outputs[k].tobytes() for k in members}) > 1:
                        if members not in index:
                            index[members] = len(tracked)
                            tracked.append(members)
                        ties[(int(c), score)] = index[members]
            rightward = self.forward == (t.weighting is Weighting.RIGHTMOST)
            outputs = [(t.outputs[k] + 0.0).tobytes() for k in range(count)]
            zero = np.zeros_like(t.outputs[0]).tobytes()
            heads.append(_Head(t.scores, outputs, t.mask.is_strict, rightward, ties, zero, {}))
        stack = np.stack([t.scores for t in tables]) if tables else np.zeros((0, count, count))
        self.layers.append(_Layer(heads, tracked, stack))

    def set_classes(self, ell: int, next_class: dict[Combo, int]) -> None:
        """Block ``ell``'s combinations -> the classes of the next layer."""
        self.layers[ell].next_class = next_class

    def reachable(self) -> Reached:
        """The combinations of the newest block that occur at some position of some word."""
        top = len(self.layers) - 1
        empty = tuple(
            (
                np.full(layer.scores.shape[:2], -np.inf).tobytes(),
                ((None, None),) * len(layer.tracked),
            )
            for layer in self.layers
        )
        starts = [(r, True, empty) for r in self._start_residues()]
        seen = set(starts)
        queue = deque(starts)
        found = Reached(set(), {})
        while queue:
            if len(seen) > MAX_STATES:
                self.usable = False
                raise TooManyStates
            budget.check()
            state = queue.popleft()
            for (c, outcomes), nxt in self._steps(state, top):
                found.combos.add((c, tuple(key for _, key in outcomes)))
                for h, outcome in enumerate(outcomes):
                    found.tiers.setdefault((h, c), set()).add(outcome)
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        return found

    def _start_residues(self) -> range:
        return range(1 % self.period, 1 % self.period + 1) if self.forward else range(self.period)

    def _steps(
        self, state: tuple, top: int
    ) -> Iterator[tuple[tuple[int, tuple[Outcome, ...]], tuple | None]]:
        residue, start, layers = state
        for a in self.alphabet:
            for end in (False, True):
                if not self.forward and end and residue != 1 % self.period:
                    continue  # read right to left, the word ends at i = 1
                first, last = (start, end) if self.forward else (end, start)
                c = self.layer0.get((a, residue, first, last))
                if c is None:
                    continue
                new_layers = []
                combo: tuple[int, tuple[Outcome, ...]] | None = None
                for ell, layer in enumerate(self.layers):
                    outs, after = layer.step(layers[ell], c)
                    new_layers.append(after)
                    if ell == top:
                        combo = (c, outs)
                        break
                    assert layer.next_class is not None
                    nxt_c = layer.next_class.get((c, tuple(key for _, key in outs)))
                    if nxt_c is None:
                        raise HardsoftError(
                            f"internal: block {ell + 1} has no class for a reachable combination"
                        )
                    c = nxt_c
                assert combo is not None
                step = (residue + (1 if self.forward else -1)) % self.period
                yield combo, (None if end else (step, False, tuple(new_layers)))


class TooManyStates(Exception):
    """The machine has more than MAX_STATES states."""


def _output(head: _Head, c: int, seen: float, picks: tuple, layer: _Layer) -> Outcome:
    """The head's tier and output at a query of class c, ``seen`` the best score against c
    of the positions before (an empty window: no tier, zeros)."""
    own = float(head.scores[c, c])
    best = seen if head.strict else max(seen, own)
    if best == -math.inf:
        return None, head.zero
    tie = head.ties.get((c, best))
    if tie is None:
        out = head.output_of.get((c, best))
        if out is None:  # every member of the tier has this output
            k = int(np.flatnonzero(head.scores[c] == best)[0])
            out = head.output_of[(c, best)] = head.outputs[k]
        return best, out
    first, latest = picks[tie]
    here = not head.strict and c in layer.tracked[tie]
    if head.nearest:
        pick = c if here else latest
    else:
        pick = c if (here and first is None) else first
    assert pick is not None
    return best, head.outputs[pick]


def _pick(layer: _Layer, c: int, picks: tuple) -> tuple:
    """The tie trackers (first seen, latest seen member of each tracked tier) after a
    position of class c."""
    return tuple(
        (c if first is None else first, c) if c in members else (first, latest)
        for members, (first, latest) in zip(layer.tracked, picks)
    )


def machine(model: Transformer, preds: Predicates, layer0: list[Function]) -> Machine | None:
    """The machine of ``model`` (None if its heads look both ways), its layer 0 read from the
    class predicates ``layer0`` (Boolean functions of symbols and position atoms)."""
    forward = reading(model)
    if forward is None:
        return None
    atoms = preds.var_of
    moduli = sorted(
        {a.modulus for a in atoms if isinstance(a, Mod) and isinstance(a.term, Position)}
    )
    period = reduce(math.lcm, moduli, 1)
    alphabet = tuple(model.spec.alphabet)
    table: dict[tuple[str, int, bool, bool], int] = {}
    for a in alphabet:
        for r in range(period):
            for first in (False, True):
                for last in (False, True):
                    if first and r != 1 % period:
                        continue
                    values = _valuation(preds, a, r, first, last)
                    hits = [
                        c for c, u in enumerate(layer0) if preds.bdd.let(values, u) == preds.true
                    ]
                    if len(hits) > 1:
                        raise HardsoftError("internal: layer 0 classes overlap")
                    if hits:
                        table[(a, r, first, last)] = hits[0]
    return Machine(forward, period, table, alphabet)


def _valuation(preds: Predicates, a: str, r: int, first: bool, last: bool) -> dict[str, bool]:
    values: dict[str, bool] = {}
    for atom, var in preds.var_of.items():
        if isinstance(atom, Sym):
            values[var] = atom.symbol == a
        elif isinstance(atom, First):
            values[var] = first
        elif isinstance(atom, Last):
            values[var] = last
        elif isinstance(atom, Mod) and isinstance(atom.term, Position):
            values[var] = r % atom.modulus == atom.residue % atom.modulus
    return values

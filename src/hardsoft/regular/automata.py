"""A past formula as a minimal DFA, built bottom-up: the exact check of a translation.

Each subformula ψ gets a complete DFA over the alphabet that, after reading ``w_1..w_i``
(i ≥ 1), is in an accepting state iff ψ holds at position i of ``w`` (the empty word: never
accepting, so "no position" reads as false, as ``Y`` and ``S`` need it). The operators:

* ``'a'``, ``true``, ``first``: three states (nothing read / last symbol a / not);
* ``¬``, ``∧``, ``∨``, ``→``: the product of the operands' DFAs (``¬``: flipped acceptance,
  the empty word still rejecting);
* ``Y φ``: φ's DFA with one more bit, "φ held at the previous position";
* ``φ S ψ``: the product of both DFAs and the bit ``S`` at the current position, updated by
  ``S_{i+1} = ψ_i ∨ (φ_i ∧ S_i)`` (hardsoft's strict since); ``P ψ = true S ψ``;
* ``MOD(m, r)(Σ k·#<[φ] + k_i·i + k_0)``: the product of the φ's DFAs with a counter mod m
  (``#<`` counts j ≤ i, so the counter moves after the symbol is read).

Every result is minimised (partition refinement on the reachable states), so each subformula
costs the size of its own minimal automaton, however the formula is shared. The same
construction, with the input's minimal DFA in the last product, decides whether the formula
and the DFA agree on every non-empty word (:func:`agree`). It is our own construction, used
where ltlf2dfa (MONA) cannot read the formula (counting) or is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA
from hardsoft.logic.syntax import (
    Add,
    And,
    Const,
    CountPast,
    First,
    Formula,
    Implies,
    IntConst,
    Mod,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Scale,
    Since,
    Sub,
    Sym,
    Term,
    subnodes,
    to_text,
)


@dataclass(frozen=True)
class Automaton:
    """A complete DFA, start state 0: ``delta[q, k]`` after symbol k, ``accept[q]``."""

    delta: np.ndarray
    accept: np.ndarray

    @property
    def size(self) -> int:
        return int(self.delta.shape[0])


def _explore(
    k: int, start: tuple[int, ...], step: Callable[[np.ndarray, int], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The reachable part of an automaton whose states are integer tuples: ``step(states,
    symbol)`` maps a batch ``[B, width]`` to the next states. Returns (the states in
    discovery order, delta over their indices)."""
    states = [np.asarray([start], dtype=np.int64)]
    index: dict[bytes, int] = {np.asarray(start, dtype=np.int64).tobytes(): 0}
    rows: list[np.ndarray] = []
    frontier = states[0]
    while len(frontier):
        block = np.empty((len(frontier), k), dtype=np.int64)
        fresh: list[np.ndarray] = []
        for a in range(k):
            nxt = step(frontier, a)
            for j, row in enumerate(nxt):
                key = row.tobytes()
                found = index.get(key)
                if found is None:
                    found = index[key] = len(index)
                    fresh.append(row)
                block[j, a] = found
        rows.append(block)
        frontier = np.asarray(fresh, dtype=np.int64).reshape(len(fresh), len(start))
        states.append(frontier)
    return np.concatenate(states), np.concatenate(rows)


def minimise(delta: np.ndarray, accept: np.ndarray) -> Automaton:
    """The minimal automaton of a complete one whose every state is reachable from 0
    (Moore's partition refinement, one numpy pass per round), start state 0. The start state
    (the empty word, where a formula has no value) stays a class of its own, so that ``¬``
    can flip every other state's acceptance; no transition enters it."""
    labels = accept.astype(np.int64)
    labels[0] = 2
    _, classes = np.unique(labels, return_inverse=True)
    classes = classes.reshape(-1)
    count = int(classes.max()) + 1
    while True:
        signature = np.concatenate([classes[:, None], classes[delta]], axis=1)
        _, new = np.unique(signature, axis=0, return_inverse=True)
        new = new.reshape(-1)
        if len(np.unique(new)) == count:
            break
        classes, count = new, len(np.unique(new))
    # renumber the classes by their first state, so the start state's class is 0
    first = np.full(count, len(classes), dtype=np.int64)
    np.minimum.at(first, classes, np.arange(len(classes)))
    order = np.argsort(first)
    rank = np.empty(count, dtype=np.int64)
    rank[order] = np.arange(count)
    reps = first[order]
    return Automaton(rank[classes[delta[reps]]], accept[reps])


def _product(
    parts: Sequence[Automaton], k: int, extra: int, update: Callable[[np.ndarray, np.ndarray], np.ndarray],
    accept: Callable[[np.ndarray], np.ndarray],
) -> Automaton:  # fmt: skip
    """The reachable product of ``parts`` with ``extra`` integer registers: a state is the
    parts' states then the registers; ``update(states, accepting_after)`` gives the new
    registers from the old state and the parts' acceptance *after* the symbol; ``accept``
    reads acceptance from a batch of states. The empty word's state rejects."""
    n = len(parts)

    def step(states: np.ndarray, a: int) -> np.ndarray:
        moved = np.zeros((len(states), n), dtype=np.int64)
        after = np.zeros((len(states), n), dtype=bool)
        for j, p in enumerate(parts):
            moved[:, j] = p.delta[states[:, j], a]
            after[:, j] = p.accept[moved[:, j]]
        regs = update(states, after).reshape(len(states), extra)
        return np.concatenate([moved, regs], axis=1)

    states, delta = _explore(k, (0,) * (n + extra), step)
    acc = accept(states)
    acc[0] = False
    return minimise(delta, acc)


class _Builder:
    """One minimal automaton per subformula (module docstring)."""

    def __init__(self, alphabet: Sequence[str], max_states: int) -> None:
        self.alphabet, self.k, self.max_states = list(alphabet), len(alphabet), max_states
        self.done: dict[Node, Automaton] = {}

    def of(self, f: Node) -> Automaton:
        return self.done[f]

    def build(self, node: Node) -> Automaton:
        if isinstance(node, (Sym, Const, First)):
            out = self._atom(node)
        elif isinstance(node, Not):
            a = self.of(node.arg)
            acc = ~a.accept
            acc[0] = False
            out = minimise(a.delta, acc)
        elif isinstance(node, (And, Or, Implies)):
            op = {And: np.logical_and, Or: np.logical_or,
                  Implies: lambda x, y: ~x | y}[type(node)]  # fmt: skip
            parts = [self.of(node.left), self.of(node.right)]
            out = _product(parts, self.k, 0, lambda s, a: np.zeros((len(s), 0), np.int64),
                           lambda s: op(parts[0].accept[s[:, 0]], parts[1].accept[s[:, 1]]))  # fmt: skip
        elif isinstance(node, Prev):
            out = _product([self.of(node.arg)], self.k, 1,
                           lambda s, a: self.of(node.arg).accept[s[:, 0]].astype(np.int64),
                           lambda s: s[:, 1] == 1)  # fmt: skip
        elif isinstance(node, (Since, Past)):
            out = self._since(node)
        elif isinstance(node, Mod):
            out = self._mod(node)
        else:
            raise HardsoftError(
                f"the automaton check covers past formulas with MOD of counts; "
                f"{type(node).__name__} in {to_text(node)!r} is outside it"
            )
        if out.size > self.max_states:
            raise HardsoftError(
                f"a subformula's minimal automaton has {out.size} states (at most "
                f"{self.max_states}): undecided"
            )
        self.done[node] = out
        return out

    def _atom(self, node: Sym | Const | First) -> Automaton:
        """States: 0 nothing read, 1 holds at the last position, 2 does not."""
        if isinstance(node, Const):
            delta = np.full((3, self.k), 1 if node.value else 2, dtype=np.int64)
        elif isinstance(node, First):
            delta = np.asarray([[1] * self.k, [2] * self.k, [2] * self.k], dtype=np.int64)
        else:
            row = [1 if a == node.symbol else 2 for a in self.alphabet]
            delta = np.asarray([row, row, row], dtype=np.int64)
        reach = _reachable(delta)
        return minimise(*_restrict(delta, np.asarray([False, True, False]), reach))

    def _since(self, node: Since | Past) -> Automaton:
        left = self.of(node.left) if isinstance(node, Since) else None
        right = self.of(node.right if isinstance(node, Since) else node.arg)
        parts = [right] if left is None else [right, left]

        def update(s: np.ndarray, after: np.ndarray) -> np.ndarray:
            held = right.accept[s[:, 0]]  # ψ at the position just read (before the symbol)
            keep = np.ones(len(s), bool) if left is None else left.accept[s[:, 1]]
            return (held | (keep & (s[:, -1] == 1))).astype(np.int64)

        return _product(parts, self.k, 1, update, lambda s: s[:, -1] == 1)

    def _mod(self, node: Mod) -> Automaton:
        coefs, k_i, k_0 = _linear(node.term)
        counted = list(coefs)
        parts = [self.of(f) for f in counted]
        weights = np.asarray([coefs[f] for f in counted], dtype=np.int64)
        m = node.modulus

        def update(s: np.ndarray, after: np.ndarray) -> np.ndarray:
            return (s[:, -1] + k_i + after.astype(np.int64) @ weights) % m

        # the register holds the term less its constant: it starts at 0 before position 1
        target = (node.residue - k_0) % m
        return _product(parts, self.k, 1, update, lambda s: s[:, -1] == target)


def _linear(t: Term) -> tuple[dict[Node, int], int, int]:
    """``t`` as ``Σ k·#<[φ] + k_i·i + k_0``: (coefficients of the counted φ, of i, constant)."""
    if isinstance(t, IntConst):
        return {}, 0, t.value
    if isinstance(t, Position):
        return {}, 1, 0
    if isinstance(t, CountPast):
        return {t.arg: 1}, 0, 0
    if isinstance(t, Scale):
        c, i, k = _linear(t.arg)
        return {f: t.factor * v for f, v in c.items()}, t.factor * i, t.factor * k
    if isinstance(t, (Add, Sub)):
        sign = 1 if isinstance(t, Add) else -1
        c1, i1, k1 = _linear(t.left)
        c2, i2, k2 = _linear(t.right)
        out = dict(c1)
        for f, v in c2.items():
            out[f] = out.get(f, 0) + sign * v
        return out, i1 + sign * i2, k1 + sign * k2
    raise HardsoftError(f"the automaton check covers #<, i and constants, not {to_text(t)!r}")


def _reachable(delta: np.ndarray) -> np.ndarray:
    seen = np.zeros(len(delta), dtype=bool)
    seen[0] = True
    frontier = [0]
    while frontier:
        nxt = {int(r) for q in frontier for r in delta[q] if not seen[r]}
        for r in nxt:
            seen[r] = True
        frontier = list(nxt)
    return np.flatnonzero(seen)


def _restrict(
    delta: np.ndarray, accept: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    index = np.full(len(delta), -1, dtype=np.int64)
    index[keep] = np.arange(len(keep))
    return index[delta[keep]], accept[keep]


def formula_automaton(
    formula: Formula, alphabet: Sequence[str], max_states: int = 100_000
) -> Automaton:
    """The minimal DFA that accepts ``w_1..w_i`` (i ≥ 1) iff ``formula`` holds at position i."""
    b = _Builder(alphabet, max_states)
    for node in subnodes(formula):
        if isinstance(node, Formula):
            b.build(node)
    return b.of(formula)


def dfa_automaton(dfa: DFA) -> Automaton:
    """The DFA as an :class:`Automaton` that rejects the empty word (a formula has no value
    there; the empty word's membership is stated apart)."""
    delta = np.asarray(dfa.delta, dtype=np.int64)
    accept = np.zeros(dfa.n_states, dtype=bool)
    accept[list(dfa.accepting)] = True
    # a fresh start state, so that rejecting the empty word changes nothing else
    start = delta[0][None, :] + 1
    full = np.concatenate([start, delta + 1])
    acc = np.concatenate([[False], accept])
    return minimise(*_restrict(full, acc, _reachable(full)))


def counterexample(a: Automaton, b: Automaton, alphabet: Sequence[str]) -> str | None:
    """A shortest word on which ``a`` and ``b`` differ, or None when they accept the same
    words (breadth-first over the product)."""
    seen = {(0, 0): ""}
    frontier = [(0, 0)]
    while frontier:
        nxt = []
        for p, q in frontier:
            word = seen[(p, q)]
            if bool(a.accept[p]) != bool(b.accept[q]):
                return word
            for k, s in enumerate(alphabet):
                pair = (int(a.delta[p, k]), int(b.delta[q, k]))
                if pair not in seen:
                    seen[pair] = word + s
                    nxt.append(pair)
        frontier = nxt
    return None

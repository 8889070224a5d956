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

import math
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
    """A complete DFA, start state 0: ``delta[q][k]`` after symbol k, ``accept[q]``. Plain
    tuples: the automata of subformulas are small, and per-call numpy overhead would dominate."""

    delta: tuple[tuple[int, ...], ...]
    accept: tuple[bool, ...]

    @property
    def size(self) -> int:
        return len(self.delta)


State = tuple[int, ...]


def _explore(
    k: int, start: State, step: Callable[[State, int], State], accept: Callable[[State], bool]
) -> Automaton:
    """The reachable part of an automaton whose states are integer tuples (``step(state,
    symbol)``), minimised; the start state (the empty word) rejects."""
    index: dict[State, int] = {start: 0}
    states = [start]
    delta: list[tuple[int, ...]] = []
    for state in states:  # grows while it is read: breadth-first
        row = []
        for a in range(k):
            nxt = step(state, a)
            found = index.get(nxt)
            if found is None:
                found = index[nxt] = len(states)
                states.append(nxt)
            row.append(found)
        delta.append(tuple(row))
    acc = [False] + [accept(q) for q in states[1:]]
    return minimise(delta, acc)


def minimise(delta: Sequence[Sequence[int]], accept: Sequence[bool]) -> Automaton:
    """The minimal automaton of a complete one whose every state is reachable from 0
    (Moore's partition refinement), start state 0. The start state (the empty word, where a
    formula has no value) stays a class of its own, so that ``¬`` can flip every other
    state's acceptance; no transition enters it."""
    n = len(delta)
    classes = [2 if q == 0 else int(accept[q]) for q in range(n)]
    if n >= LARGE:
        classes = _refine_numpy(delta, classes)
    else:
        count = len(set(classes))
        while True:
            signature = [(classes[q], *(classes[r] for r in delta[q])) for q in range(n)]
            number: dict[tuple[int, ...], int] = {}
            new = [number.setdefault(sig, len(number)) for sig in signature]
            if len(number) == count:
                break
            classes, count = new, len(number)
    # renumber the classes by their first state, so the start state's class is 0
    rank: dict[int, int] = {}
    reps = []
    for q, c in enumerate(classes):
        if c not in rank:
            rank[c] = len(rank)
            reps.append(q)
    return Automaton(
        tuple(tuple(rank[classes[r]] for r in delta[q]) for q in reps),
        tuple(bool(accept[q]) for q in reps),
    )


LARGE = 48
"""From this many states on, partition refinement runs on numpy arrays."""


def _refine_numpy(delta: Sequence[Sequence[int]], labels: list[int]) -> list[int]:
    """Moore's refinement with one numpy pass per round (for larger automata)."""
    table = np.asarray(delta, dtype=np.int64)
    _, classes = np.unique(np.asarray(labels), return_inverse=True)
    classes = classes.reshape(-1)
    count = int(classes.max()) + 1
    n, k = table.shape
    packed = (k + 1) * math.log2(max(n, 2)) < 62  # a signature fits one int64
    weights = np.asarray([n**j for j in range(k + 1)], dtype=np.int64) if packed else None
    while True:
        signature = np.concatenate([classes[:, None], classes[table]], axis=1)
        if weights is not None:
            _, new = np.unique(signature @ weights, return_inverse=True)
        else:
            _, new = np.unique(signature, axis=0, return_inverse=True)
        new = new.reshape(-1)
        if int(new.max()) + 1 == count:
            return [int(c) for c in classes]
        classes, count = new, int(new.max()) + 1


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
            out = minimise(a.delta, [False] + [not x for x in a.accept[1:]])
        elif isinstance(node, (And, Or, Implies)):
            out = self._boolean(node)
        elif isinstance(node, Prev):
            out = self._prev(self.of(node.arg))
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
            rows = [[1 if node.value else 2] * self.k] * 3
        elif isinstance(node, First):
            rows = [[1] * self.k, [2] * self.k, [2] * self.k]
        else:
            rows = [[1 if a == node.symbol else 2 for a in self.alphabet]] * 3
        return _explore(self.k, (0,), lambda q, a: (rows[q[0]][a],), lambda q: q[0] == 1)

    def _boolean(self, node: And | Or | Implies) -> Automaton:
        x, y = self.of(node.left), self.of(node.right)
        if isinstance(node, And):
            holds = lambda s: x.accept[s[0]] and y.accept[s[1]]  # noqa: E731
        elif isinstance(node, Or):
            holds = lambda s: x.accept[s[0]] or y.accept[s[1]]  # noqa: E731
        else:
            holds = lambda s: not x.accept[s[0]] or y.accept[s[1]]  # noqa: E731
        return _explore(self.k, (0, 0), lambda s, a: (x.delta[s[0]][a], y.delta[s[1]][a]), holds)

    def _prev(self, x: Automaton) -> Automaton:
        """State (φ's state, φ held at the position before)."""
        return _explore(
            self.k, (0, 0), lambda s, a: (x.delta[s[0]][a], int(x.accept[s[0]])),
            lambda s: s[1] == 1,
        )  # fmt: skip

    def _since(self, node: Since | Past) -> Automaton:
        """State (ψ's state, φ's state, S at the current position); ``S_{i+1} = ψ_i ∨ (φ_i ∧
        S_i)`` (for ``P``, φ is true)."""
        psi = self.of(node.right if isinstance(node, Since) else node.arg)
        phi = self.of(node.left) if isinstance(node, Since) else None

        def step(s: State, a: int) -> State:
            keep = True if phi is None else phi.accept[s[1]]
            held = psi.accept[s[0]] or (keep and s[2] == 1)
            return (psi.delta[s[0]][a], 0 if phi is None else phi.delta[s[1]][a], int(held))

        return _explore(self.k, (0, 0, 0), step, lambda s: s[2] == 1)

    def _mod(self, node: Mod) -> Automaton:
        """State (each counted φ's state, the term less its constant, mod m); ``#<`` counts
        j <= i, so the register moves by the φ that hold after the symbol is read."""
        coefs, k_i, k_0 = _linear(node.term)
        parts = [self.of(f) for f in coefs]
        weights = list(coefs.values())
        m, target = node.modulus, (node.residue - k_0) % node.modulus

        def step(s: State, a: int) -> State:
            moved = [p.delta[q][a] for p, q in zip(parts, s)]
            add = sum(w for w, p, q in zip(weights, parts, moved) if p.accept[q])
            return (*moved, (s[-1] + k_i + add) % m)

        return _explore(self.k, (0,) * (len(parts) + 1), step, lambda s: s[-1] == target)


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
    there; the empty word's membership is stated apart): a fresh start state, then the DFA's
    own states."""
    accept = dfa.accepting
    return _explore(
        len(dfa.alphabet), (-1,), lambda s, a: (dfa.delta[max(s[0], 0)][a],),
        lambda s: s[0] in accept,
    )  # fmt: skip


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
                pair = (a.delta[p][k], b.delta[q][k])
                if pair not in seen:
                    seen[pair] = word + s
                    nxt.append(pair)
        frontier = nxt
    return None

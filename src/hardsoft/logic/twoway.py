"""Exact equivalence of LTL formulas with past *and* future operators, at every position of
every word, by a finite automaton over valuations.

:mod:`hardsoft.logic.equivalence` decides past-time formulas with a deterministic automaton
(a past formula's value at ``i`` depends on the prefix only). With ``last``, ``X``, ``U``,
``F`` and ``E``, a subformula's value at ``i`` depends on the whole word, but it still obeys
*local* rules between consecutive positions: ``Y φ`` at ``i + 1`` is ``φ`` at ``i``,
``X φ`` at ``i`` is ``φ`` at ``i + 1``, ``φ U ψ`` at ``i`` is ``ψ`` or ``φ ∧ φ U ψ`` at
``i + 1``, ``last`` holds exactly at the position with no successor, where every future
operator is false. The valuation sequences that obey them are exactly the words' own (each
rule determines the values from one end of the word), so a valuation occurs at some position
of some word iff it is reachable from a first-position valuation and can reach a
last-position one (``MOD(m, r)(n)`` is guessed at the first position, kept, and checked
at the last). Two formulas are equal at every position of every word iff no such
valuation tells them apart. ``E φ`` is read as ``P φ | φ | F φ``.

The future values of the next valuation are guessed (a depth-first search pruned by the
rules as soon as they can be checked), so the work can be exponential in the number of
future subformulas: ``max_states`` bounds it (a HardsoftError beyond). Counting terms and
other uses of ``n`` are outside the fragment.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hardsoft.errors import HardsoftError
from hardsoft.logic.structure import rewrite
from hardsoft.logic.syntax import (
    And,
    Const,
    First,
    Formula,
    Future,
    Implies,
    Last,
    Length,
    Mod,
    Next,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Since,
    Somewhere,
    Sym,
    Until,
    subnodes,
    to_text,
)

_SUPPORTED = (
    Sym, Const, First, Last, Not, And, Or, Implies, Prev, Next, Since, Until, Past, Future,
    Somewhere, Mod, Position, Length,
)  # fmt: skip
_GUESSED = (Next, Until, Future, Last)
"""Nodes whose value at a position depends on the positions after it."""

Valuation = tuple[bool, ...]
State = tuple[Valuation, int]


@dataclass(frozen=True)
class TwoWay:
    """``equal``: the formulas agree at every position of every non-empty word; otherwise
    ``counterexample`` is a word and ``position`` (1-based) where they differ. ``states``:
    the valuations enumerated; ``work``: the subformula values computed or guessed on the way
    (a count that tracks the time taken)."""

    equal: bool
    counterexample: str | None
    position: int | None
    states: int
    work: int


def equivalent_everywhere(
    f: Formula, g: Formula, alphabet: Sequence[str], *, max_states: int = 200_000
) -> TwoWay:
    """Decide whether ``f`` and ``g`` agree at every position of every non-empty word over
    ``alphabet`` (module docstring); ``max_states`` bounds the valuations enumerated."""
    f, g = _unfold_somewhere(f), _unfold_somewhere(g)
    return _Automaton(f, g, tuple(alphabet), max_states).decide()


def _unfold_somewhere(formula: Formula) -> Formula:
    """``formula`` with every ``E φ`` written ``P φ | φ | F φ`` (equal at every position)."""

    def unfold(node: Node) -> Node:
        if isinstance(node, Somewhere):
            return Or(Or(Past(node.arg), node.arg), Future(node.arg))
        return node

    return rewrite(formula, unfold)


def _of_length(node: Node) -> bool:
    """``MOD(m, r)(n)``: the same at every position, decided by the word's length."""
    return isinstance(node, Mod) and isinstance(node.term, Length)


class _Automaton:
    """The valuations of the subformulas of two formulas, with the local rules between
    consecutive positions."""

    def __init__(self, f: Formula, g: Formula, alphabet: tuple[str, ...], cap: int) -> None:
        if not alphabet:
            raise HardsoftError("the alphabet is empty")
        self.nodes = list(dict.fromkeys([*subnodes(f), *subnodes(g)]))
        self.modulus = 1
        for node in self.nodes:
            if not isinstance(node, _SUPPORTED):
                raise HardsoftError(
                    f"exact equivalence covers LTL without counting; "
                    f"{type(node).__name__} in {to_text(node)!r} is outside it"
                )
            if isinstance(node, Mod):
                if not isinstance(node.term, (Position, Length)):
                    raise HardsoftError(
                        f"exact equivalence covers MOD of i and n only: {to_text(node)!r}"
                    )
                self.modulus = math.lcm(self.modulus, node.modulus)
        self.index = {node: k for k, node in enumerate(self.nodes)}
        self.f, self.g = self.index[f], self.index[g]
        self.alphabet = alphabet
        self.cap = cap
        self.count = 0
        self.work = 0
        self.future = [k for k, n in enumerate(self.nodes) if isinstance(n, (Next, Until, Future))]
        self.last = [k for k, n in enumerate(self.nodes) if isinstance(n, Last)]
        self.length = [k for k, n in enumerate(self.nodes) if _of_length(n)]
        # the rules tying the future values of one valuation to the next valuation, each
        # checked once the next valuation's index it needs last is assigned
        self.due: dict[int, list[int]] = {}
        for k in self.future:
            node = self.nodes[k]
            at = self.index[node.arg] if isinstance(node, Next) else k
            self.due.setdefault(at, []).append(k)
        for k in self.length:  # ``MOD(m, r)(n)`` is the same at every position
            self.due.setdefault(k, []).append(k)

    # -------------------------------------------------------------- valuations

    def _successors(self, prev: Valuation | None, pos: int) -> Iterator[Valuation]:
        """Every valuation at a position with ``i mod M = pos`` that follows ``prev`` (None:
        the first position) by the rules, over every symbol and every guess."""
        n = len(self.nodes)
        for symbol in self.alphabet:
            val: list[bool] = [False] * n
            yield from self._fill(val, 0, prev, pos, symbol)

    def _fill(
        self, val: list[bool], k: int, prev: Valuation | None, pos: int, symbol: str
    ) -> Iterator[Valuation]:
        while k < len(self.nodes):
            self.work += 1
            node = self.nodes[k]
            if isinstance(node, _GUESSED) or _of_length(node):
                for guess in (False, True):
                    val[k] = guess
                    if self._consistent(val, k, prev):
                        yield from self._fill(val, k + 1, prev, pos, symbol)
                return
            val[k] = self._value(node, val, prev, pos, symbol)
            if not self._consistent(val, k, prev):
                return
            k += 1
        self.count += 1
        if self.count > self.cap:
            raise HardsoftError(f"more than {self.cap} valuations: undecided")
        yield tuple(val)

    def _value(
        self, node: Node, val: list[bool], prev: Valuation | None, pos: int, symbol: str
    ) -> bool:
        ix = self.index

        def before(x: Node) -> bool:
            return prev is not None and prev[ix[x]]

        if isinstance(node, (Position, Length)):
            return False
        if isinstance(node, Sym):
            return node.symbol == symbol
        if isinstance(node, Const):
            return bool(node.value)
        if isinstance(node, First):
            return prev is None
        if isinstance(node, Not):
            return not val[ix[node.arg]]
        if isinstance(node, And):
            return val[ix[node.left]] and val[ix[node.right]]
        if isinstance(node, Or):
            return val[ix[node.left]] or val[ix[node.right]]
        if isinstance(node, Implies):
            return (not val[ix[node.left]]) or val[ix[node.right]]
        if isinstance(node, Prev):
            return before(node.arg)
        if isinstance(node, Since):
            return before(node.right) or (before(node.left) and before(node))
        if isinstance(node, Past):
            return before(node.arg) or before(node)
        assert isinstance(node, Mod)
        return pos % node.modulus == node.residue

    def _consistent(self, val: list[bool], k: int, prev: Valuation | None) -> bool:
        """The rules from ``prev``'s future values that can be checked once ``val[k]`` is set."""
        if prev is None:
            return True
        ix = self.index
        for u in self.due.get(k, ()):
            node = self.nodes[u]
            if isinstance(node, Mod):
                want = val[u]
            elif isinstance(node, Next):
                want = val[ix[node.arg]]
            elif isinstance(node, Until):
                want = val[ix[node.right]] or (val[ix[node.left]] and val[u])
            else:
                assert isinstance(node, Future)
                want = val[ix[node.arg]] or val[u]
            if prev[u] != want:
                return False
        return True

    def _final(self, v: Valuation, pos: int) -> bool:
        """Whether ``v`` can be the last position (``n mod M = pos``): ``last`` true, every
        future value false, ``MOD(m, r)(n)`` as ``n`` is."""
        return (
            all(v[k] for k in self.last)
            and not any(v[k] for k in self.future)
            and all(v[k] == self._residue(k, pos) for k in self.length)
        )

    def _residue(self, k: int, pos: int) -> bool:
        node = self.nodes[k]
        assert isinstance(node, Mod)
        return pos % node.modulus == node.residue

    def _may_continue(self, v: Valuation) -> bool:
        return not any(v[k] for k in self.last)

    # -------------------------------------------------------------- the search

    def decide(self) -> TwoWay:
        """Forward reachability from the first positions, then backward from the last ones."""
        m = self.modulus
        parent: dict[State, tuple[State | None, str]] = {}
        queue: deque[State] = deque()
        for v in self._successors(None, 1 % m):
            s = (v, 1 % m)
            if s not in parent:
                parent[s] = (None, "")
                queue.append(s)
        edges: dict[State, list[State]] = {}
        while queue:
            s = queue.popleft()
            v, pos = s
            if not self._may_continue(v):
                continue
            nxt = (pos + 1) % m
            for w in self._successors(v, nxt):
                t = (w, nxt)
                edges.setdefault(t, []).append(s)
                if t not in parent:
                    parent[t] = (s, "")
                    queue.append(t)
        # backward: the states that reach a final one (BFS, remembering the next state)
        onward: dict[State, State | None] = {s: None for s in parent if self._final(*s)}
        back: deque[State] = deque(onward)
        while back:
            t = back.popleft()
            for s in edges.get(t, ()):
                if s not in onward:
                    onward[s] = t
                    back.append(s)
        for s in parent:
            if s in onward and s[0][self.f] != s[0][self.g]:
                word, position = self._witness(s, parent, onward)
                return TwoWay(False, word, position, self.count, self.work)
        return TwoWay(True, None, None, self.count, self.work)

    def _witness(
        self,
        s: State,
        parent: dict[State, tuple[State | None, str]],
        onward: dict[State, State | None],
    ) -> tuple[str, int]:
        """A word through ``s`` (the position of ``s`` in it, 1-based): symbols read off the
        valuations, whose symbol atoms name them (or any symbol where none is mentioned)."""
        path: list[State] = []
        cur: State | None = s
        while cur is not None:
            path.append(cur)
            cur = parent[cur][0]
        path.reverse()
        position = len(path)
        cur = onward[s]
        while cur is not None:
            path.append(cur)
            cur = onward[cur]
        return "".join(self._symbol(v) for v, _ in path), position

    def _symbol(self, v: Valuation) -> str:
        for node, k in self.index.items():
            if isinstance(node, Sym) and v[k]:
                return node.symbol
        mentioned = {n.symbol for n in self.nodes if isinstance(n, Sym)}
        return next((a for a in self.alphabet if a not in mentioned), self.alphabet[0])

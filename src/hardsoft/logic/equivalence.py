"""Exact equivalence of two past-time formulas at every length, by a finite automaton.

For a formula built from symbols, ``true``/``false``, ``first``, Boolean connectives, ``Y``,
``S``, ``P`` and ``MOD(m, r)(i)`` (position modulo m), the truth values of all its subformulas at
position ``i`` are a function of their values at ``i − 1``, the symbol ``w_i`` and ``i mod M``
(``Y φ`` at i is φ at i − 1; ``φ S ψ`` at i is ψ at i − 1, or φ at i − 1 and ``φ S ψ`` at
i − 1; ``P φ`` likewise). So the valuations reachable over all words form a finite automaton,
and a breadth-first search over the product of two formulas' valuations decides whether they
agree at the last position of *every* non-empty word, returning the shortest (then
lexicographically first) word where they do not. Formulas outside this fragment (``last``,
future operators, counting, ``n``) are refused with a HardsoftError.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import (
    And,
    Const,
    First,
    Formula,
    Implies,
    Mod,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Since,
    Sym,
    subnodes,
    to_text,
)

_SUPPORTED = (Sym, Const, First, Not, And, Or, Implies, Prev, Since, Past, Mod, Position)


@dataclass(frozen=True)
class Equivalence:
    """``equal``: the formulas agree at the last position of every non-empty word;
    otherwise ``counterexample`` is the shortest word where they differ. ``states``: the
    number of reachable product states explored."""

    equal: bool
    counterexample: str | None
    states: int


def _check(nodes: Sequence[Node]) -> int:
    """The modulus M of the position classes needed (1 if none); unsupported nodes raise."""
    modulus = 1
    for node in nodes:
        if not isinstance(node, _SUPPORTED):
            raise HardsoftError(
                f"exact equivalence covers past-time formulas without counting; "
                f"{type(node).__name__} in {to_text(node)!r} is outside it"
            )
        if isinstance(node, Mod):
            if not isinstance(node.term, Position):
                raise HardsoftError(
                    f"exact equivalence covers MOD of the position i only, not {to_text(node)!r}"
                )
            modulus = math.lcm(modulus, node.modulus)
    return modulus


def _step(
    nodes: Sequence[Node],
    index: dict[Node, int],
    prev: tuple[bool, ...] | None,
    symbol: str,
    position: int,
) -> tuple[bool, ...]:
    """The valuation of ``nodes`` (children first) at a position with ``symbol``, given the
    valuation at the position before (None at position 1). ``position``: i (or i mod M + M)."""
    val: list[bool] = [False] * len(nodes)

    def before(node: Node) -> bool:
        return prev is not None and prev[index[node]]

    for k, node in enumerate(nodes):
        if isinstance(node, Position):
            continue
        if isinstance(node, Sym):
            v = node.symbol == symbol
        elif isinstance(node, Const):
            v = bool(node.value)
        elif isinstance(node, First):
            v = prev is None
        elif isinstance(node, Not):
            v = not val[index[node.arg]]
        elif isinstance(node, And):
            v = val[index[node.left]] and val[index[node.right]]
        elif isinstance(node, Or):
            v = val[index[node.left]] or val[index[node.right]]
        elif isinstance(node, Implies):
            v = (not val[index[node.left]]) or val[index[node.right]]
        elif isinstance(node, Prev):
            v = before(node.arg)
        elif isinstance(node, Since):
            v = before(node.right) or (before(node.left) and before(node))
        elif isinstance(node, Past):
            v = before(node.arg) or before(node)
        elif isinstance(node, Mod):
            v = position % node.modulus == node.residue
        else:  # pragma: no cover - _check refuses everything else
            raise HardsoftError(f"unsupported node {node!r}")
        val[k] = v
    return tuple(val)


def equivalent(
    f: Formula, g: Formula, alphabet: Sequence[str], *, max_states: int = 1_000_000
) -> Equivalence:
    """Decide whether ``f`` and ``g`` accept the same non-empty words over ``alphabet`` (see
    the module docstring); ``max_states`` bounds the search (a HardsoftError beyond it)."""
    nodes = list(dict.fromkeys([*subnodes(f), *subnodes(g)]))
    modulus = _check(nodes)
    index = {node: k for k, node in enumerate(nodes)}
    top_f, top_g = index[f], index[g]
    symbols = list(alphabet)
    if not symbols:
        raise HardsoftError("the alphabet is empty")
    # a state: (valuation, i mod M); positions are 1-based and Mod reads i itself
    start: list[tuple[tuple[bool, ...], int, str]] = []
    for a in symbols:
        start.append((_step(nodes, index, None, a, 1), 1 % modulus, a))
    seen: dict[tuple[tuple[bool, ...], int], None] = {}
    queue: deque[tuple[tuple[bool, ...], int, str]] = deque()
    for val, pos, word in start:
        if (val, pos) not in seen:
            seen[(val, pos)] = None
            queue.append((val, pos, word))
    while queue:
        val, pos, word = queue.popleft()
        if val[top_f] != val[top_g]:
            return Equivalence(False, word, len(seen))
        nxt = (pos + 1) % modulus
        for a in symbols:
            new = _step(nodes, index, val, a, nxt if nxt else modulus)
            if (new, nxt) not in seen:
                if len(seen) >= max_states:
                    raise HardsoftError(f"more than {max_states} product states: undecided")
                seen[(new, nxt)] = None
                queue.append((new, nxt, word + a))
    return Equivalence(True, None, len(seen))

"""A streaming evaluator for past-only formulas: the value of a formula at every position of one
long word, read chunk by chunk, in memory O(chunk · |formula|).

Independent of :mod:`hardsoft.logic.semantics` (it shares only the syntax tree), so the two can
check each other; ``hardsoft check --stream`` compares a streamed model with it. Each subformula
carries a bounded state from one chunk to the next:

``Y φ``    the value of ``φ`` at the last position read (false before position 1);
``φ S ψ``  whether the last position ``j`` read with ``ψ_j`` or ``¬φ_j`` had ``ψ_j`` (strict
           since: the nearest such ``j < i`` decides, vectorised within a chunk);
``P φ``    whether ``φ`` held at some position read;
``#<[φ]``  the number of positions read where ``φ`` held (exact int64).

``first``, ``last`` (``i = n``), ``i`` and ``n`` read the position and the length given up front.
Formulas that look right of the current position (``X``, ``U``, ``F``, ``E``, ``#>``) are
refused naming the operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.logic.semantics import INT64_MAX, magnitude_bound
from hardsoft.logic.syntax import (
    Add,
    And,
    Compare,
    Const,
    CountPast,
    First,
    Formula,
    Implies,
    IntConst,
    Last,
    Length,
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
    operator,
    subnodes,
)

__all__ = ["StreamEvaluator", "LOOKAHEAD_OPERATORS"]

LOOKAHEAD_OPERATORS: frozenset[str] = frozenset({"X", "U", "F", "E", "#>"})
"""Operators whose value at ``i`` reads positions after ``i``: a stream has not read them yet.
(``last`` and ``n`` only need the length, which a stream knows before the first chunk.)"""

_COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    "=": np.equal,
    "!=": np.not_equal,
    ">=": np.greater_equal,
    ">": np.greater,
}


def _strict_last(mask: np.ndarray) -> np.ndarray:
    """For each index k of a 1-D mask: the largest index j < k where it holds, or -1."""
    idx = np.where(mask, np.arange(len(mask)), -1)
    out = np.full(len(mask), -1, dtype=np.int64)
    if len(mask) > 1:
        out[1:] = np.maximum.accumulate(idx)[:-1]
    return out


class StreamEvaluator:
    """``feed(ids)`` returns the truth value of ``formula`` at the next ``len(ids)`` positions
    of a word of length ``n`` over ``alphabet`` (token ids index ``alphabet``)."""

    def __init__(self, formula: Formula, alphabet: Sequence[str], n: int) -> None:
        if not isinstance(formula, Formula):
            raise HardsoftError(f"expected a formula, got {formula!r}")
        self.nodes = subnodes(formula)
        ahead = sorted({operator(s) for s in self.nodes} & LOOKAHEAD_OPERATORS)
        if ahead:
            raise HardsoftError(
                f"operator {ahead[0]} reads positions after the current one: a streamed check "
                "needs a past-only formula (no X, U, F, E, #>)"
            )
        if magnitude_bound(formula, n) > INT64_MAX:
            raise HardsoftError(f"the formula's counting terms may leave int64 at n = {n}")
        self.formula, self.alphabet, self.n = formula, list(alphabet), int(n)
        self.pos = 0  # positions read so far
        self.state: dict[Node, Any] = {}  # per temporal node: its carried value

    def feed(self, ids: np.ndarray) -> np.ndarray:
        """The formula's values ``[c]`` (bool) at positions ``pos+1 .. pos+c``."""
        ids = np.asarray(ids)
        c = len(ids)
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            raise HardsoftError("feed expects a 1-D array of token ids")
        if self.pos + c > self.n:
            raise HardsoftError(f"the word has {self.n} positions; {self.pos + c} were fed")
        if c and (ids.min() < 0 or ids.max() >= len(self.alphabet)):
            raise HardsoftError(f"token ids must be in 0..{len(self.alphabet) - 1}")
        pos = np.arange(self.pos + 1, self.pos + c + 1, dtype=np.int64)
        memo: dict[Node, np.ndarray] = {}
        for node in self.nodes:
            memo[node] = self._value(node, memo, ids, pos)
        self.pos += c
        return memo[self.formula]

    def _value(
        self, node: Node, memo: dict[Node, np.ndarray], ids: np.ndarray, pos: np.ndarray
    ) -> np.ndarray:
        c = len(ids)
        if isinstance(node, Sym):
            if node.symbol not in self.alphabet:
                return np.zeros(c, dtype=bool)
            return ids == self.alphabet.index(node.symbol)
        if isinstance(node, Const):
            return np.full(c, node.value, dtype=bool)
        if isinstance(node, First):
            return pos == 1
        if isinstance(node, Last):
            return pos == self.n
        if isinstance(node, Not):
            return ~memo[node.arg]
        if isinstance(node, And):
            return memo[node.left] & memo[node.right]
        if isinstance(node, Or):
            return memo[node.left] | memo[node.right]
        if isinstance(node, Implies):
            return ~memo[node.left] | memo[node.right]
        if isinstance(node, (Prev, Past, Since, CountPast)):
            return self._temporal(node, memo)
        if isinstance(node, Compare):
            return _COMPARE[node.op](memo[node.left], memo[node.right]).astype(bool)
        if isinstance(node, Mod):
            return np.mod(memo[node.term], node.modulus) == node.residue
        if isinstance(node, IntConst):
            return np.full(c, node.value, dtype=np.int64)
        if isinstance(node, Position):
            return pos
        if isinstance(node, Length):
            return np.full(c, self.n, dtype=np.int64)
        if isinstance(node, Add):
            return memo[node.left] + memo[node.right]
        if isinstance(node, Sub):
            return memo[node.left] - memo[node.right]
        if isinstance(node, Scale):
            return node.factor * memo[node.arg]
        raise HardsoftError(f"operator {operator(node)} cannot be streamed")

    def _temporal(self, node: Node, memo: dict[Node, np.ndarray]) -> np.ndarray:
        """Y, P, S and #<: the chunk's values from the carried state, which is updated."""
        if isinstance(node, Prev):
            a = memo[node.arg]
            out = np.concatenate([[self.state.get(node, False)], a[:-1]]).astype(bool)
            if len(a):
                self.state[node] = bool(a[-1])
            return out
        if isinstance(node, Past):
            a = memo[node.arg]
            seen = bool(self.state.get(node, False))
            out = seen | (_strict_last(a) >= 0)
            self.state[node] = seen or bool(a.any())
            return out
        if isinstance(node, Since):
            a, b = memo[node.left], memo[node.right]
            event = b | ~a  # the nearest j < i with ψ_j or ¬φ_j decides φ S ψ at i
            last = _strict_last(event)
            carried = bool(self.state.get(node, False))
            out = np.where(last >= 0, b[np.maximum(last, 0)], carried)
            if event.any():
                self.state[node] = bool(b[np.flatnonzero(event)[-1]])
            return out.astype(bool)
        assert isinstance(node, CountPast)
        counts = np.cumsum(memo[node.arg], dtype=np.int64) + int(self.state.get(node, 0))
        if len(counts):
            self.state[node] = int(counts[-1])
        return counts

"""The plain C-RASP interpreter: every operator by its definition, on a batch of words.

It is the reference compiled models are checked against, so it shares nothing with the
translation to temporal logic or the compiler: each operator is its definition written in
numpy over positions ``0..n-1`` (0-based, as the coli-saar interpreter counts them):

* ``"a"`` at i: ``w_i = a``; ``true``/``false``; ``! && ||``; comparisons of counts;
* ``# b`` at i: the number of j ≤ i where ``b`` holds (a prefix sum);
* ``#[ψ] b`` at i: the number of j ≤ i with ψ(i, j) and ``b`` at j. ψ holds exactly when
  i − j is one of its offsets (:mod:`hardsoft.programs.crasp.predicates`), so this is the sum
  over its offsets d of ``b`` at i − d (0 where i − d < 0), a prefix-sum window for ``prevK``;
* integers, ``+ -``, ``K * c``, ``min``, ``max``, ``c1 if b else c2`` position by position.

Counts are int64 while they provably fit (every count is at most A·n + B for constants of the
program), Python integers beyond.
"""

from __future__ import annotations

import numpy as np

from hardsoft.programs.crasp.checker import Checked
from hardsoft.programs.crasp.predicates import BinaryPredicate, UnaryPredicate
from hardsoft.programs.crasp.syntax import (
    Arith,
    BoolLit,
    Compare,
    Count,
    Expr,
    Extreme,
    IfElse,
    Int,
    Logic,
    Not,
    Scale,
    Sym,
    Var,
)

__all__ = ["evaluate", "magnitude"]

_COMPARE = {
    "==": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    ">": np.greater,
    "<=": np.less_equal,
    ">=": np.greater_equal,
}
INT64_SAFE = 1 << 62


def magnitude(e: Expr, bounds: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """``(A, B)`` with ``|value| <= A·n + B`` at every position of every word of length n
    (``bounds``: those of the statements ``e`` names)."""
    if isinstance(e, Int):
        return 0, abs(e.value)
    if isinstance(e, Count):
        return 1, 0
    if isinstance(e, Var):
        return bounds.get(e.name, (0, 1))
    if isinstance(e, Arith):
        (a, b), (c, d) = magnitude(e.left, bounds), magnitude(e.right, bounds)
        return a + c, b + d
    if isinstance(e, Scale):
        a, b = magnitude(e.operand, bounds)
        return abs(e.factor) * a, abs(e.factor) * b
    if isinstance(e, (Extreme, IfElse)):
        parts = (e.left, e.right) if isinstance(e, Extreme) else (e.then, e.other)
        (a, b), (c, d) = magnitude(parts[0], bounds), magnitude(parts[1], bounds)
        return max(a, c), max(b, d)
    return 0, 1


class _Run:
    """One evaluation: the batch ``ids`` ``[B, n]`` and the values so far."""

    def __init__(self, program: Checked, ids: np.ndarray, alphabet: tuple[str, ...]) -> None:
        self.program, self.ids, self.alphabet = program, ids, alphabet
        self.values: dict[str, np.ndarray] = {}
        self.n = ids.shape[1]
        self.dtype: type = np.int64

    def shape(self) -> tuple[int, int]:
        return (self.ids.shape[0], self.n)

    def ev(self, e: Expr) -> np.ndarray:
        if isinstance(e, Sym):
            if e.symbol not in self.alphabet:
                return np.zeros(self.shape(), dtype=bool)
            return self.ids == self.alphabet.index(e.symbol)
        if isinstance(e, BoolLit):
            return np.full(self.shape(), e.value, dtype=bool)
        if isinstance(e, Var):
            if e.name in self.values:
                return self.values[e.name]
            pred = self.program.predicates[e.name]
            assert isinstance(pred, UnaryPredicate)
            return np.broadcast_to(pred.values(self.n), self.shape())
        if isinstance(e, Not):
            return ~self.ev(e.operand)
        if isinstance(e, Logic):
            a, b = self.ev(e.left), self.ev(e.right)
            return (a & b) if e.op == "&&" else (a | b)
        if isinstance(e, Compare):
            return np.asarray(_COMPARE[e.op](self.ev(e.left), self.ev(e.right)), dtype=bool)
        if isinstance(e, Count):
            return self.count(e)
        if isinstance(e, Int):
            return np.full(self.shape(), e.value, dtype=self.dtype)
        if isinstance(e, Arith):
            a, b = self.ev(e.left), self.ev(e.right)
            return a + b if e.op == "+" else a - b
        if isinstance(e, Scale):
            return e.factor * self.ev(e.operand)
        if isinstance(e, Extreme):
            a, b = self.ev(e.left), self.ev(e.right)
            return np.minimum(a, b) if e.op == "min" else np.maximum(a, b)
        if isinstance(e, IfElse):
            return np.where(self.ev(e.cond), self.ev(e.then), self.ev(e.other))
        raise TypeError(f"not a C-RASP expression: {e!r}")

    def count(self, e: Count) -> np.ndarray:
        b: np.ndarray = self.ev(e.operand).astype(self.dtype)
        if e.guard is None:
            return np.cumsum(b, axis=1, dtype=self.dtype)
        pred = self.program.predicates[e.guard]
        assert isinstance(pred, BinaryPredicate)
        offsets = pred.offsets
        if offsets == tuple(range(1, len(offsets) + 1)) and len(offsets) > 1:
            # j in i-K..i-1: the prefix sum up to i-1 minus the prefix sum up to i-K-1
            zero: np.ndarray = np.zeros((b.shape[0], 1), dtype=self.dtype)
            prefix = np.concatenate([zero, np.cumsum(b, axis=1, dtype=self.dtype)], axis=1)
            i = np.arange(self.n)
            hi = prefix[:, i]  # sum over j < i
            lo = prefix[:, np.maximum(i - len(offsets), 0)]
            return hi - lo
        out: np.ndarray = np.zeros(self.shape(), dtype=self.dtype)
        for d in offsets:
            if d < self.n:
                out[:, d:] += b[:, : self.n - d]
        return out


def evaluate(program: Checked, ids: np.ndarray, alphabet: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Every statement's values ``[B, n]`` (bool or integer) on the words ``ids`` (token
    indices into ``alphabet``, equal lengths), in program order."""
    ids = np.asarray(ids)
    if ids.ndim != 2:
        raise ValueError(f"expected ids of shape [B, n], got {ids.shape}")
    run = _Run(program, ids, alphabet)
    bounds: dict[str, tuple[int, int]] = {}
    for s in program.statements:
        bounds[s.name] = magnitude(s.expr, bounds)
    largest = max((a * run.n + b for a, b in bounds.values()), default=0)
    if largest >= INT64_SAFE:
        run.dtype = object
    for s in program.statements:
        run.values[s.name] = run.ev(s.expr)
    return run.values

"""The reference interpreter: runs a program directly on a string with numpy, independently of
any compiled model. It is the ground truth the compiled AHAT and its softmax simulation are
checked against, so it follows the DSL's definition literally (no tie-breaking terms, no
residual stream): scores are compared exactly up to a relative tolerance of 1e-12, which only
absorbs float64 rounding of equal exact values."""

from __future__ import annotations

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.dsl import PWL, Attend, AttnOut, Linear, Position, Program, SOp, Token

TIE_TOL = 1e-12
_ROW_BLOCK = 512

_FEATURES = {
    "1": lambda i, n: np.ones_like(i),
    "i": lambda i, n: i,
    "n": lambda i, n: np.full_like(i, n),
    "i/n": lambda i, n: i / n,
    "1/i": lambda i, n: 1.0 / i,
    "1/n": lambda i, n: np.full_like(i, 1.0 / n),
    "(-1)^i": lambda i, n: np.where(i % 2 == 0, 1.0, -1.0),
    "i^2": lambda i, n: i * i,
    "(i/n)^2": lambda i, n: (i / n) ** 2,
    "[i=1]": lambda i, n: (i == 1).astype(float),
    "[i=n]": lambda i, n: (i == n).astype(float),
}


def position_values(feature: str, n: int) -> np.ndarray:
    """The feature at i = 1..n (float64), from its textbook formula."""
    i = np.arange(1, n + 1, dtype=np.float64)
    name = "".join(feature.split())
    out = np.ones(n)
    for part in name.split("*"):
        if part not in _FEATURES:
            raise HardsoftError(f"the interpreter does not know position feature {part!r}")
        out = out * _FEATURES[part](i, n)
    return out


def allowed(mask: str, n: int, rows: slice) -> np.ndarray:
    """Boolean [rows, n] matrix of allowed (i, j) pairs (0-based indices)."""
    i = np.arange(n)[rows][:, None]
    j = np.arange(n)[None, :]
    if mask == "none":
        return np.ones((i.shape[0], n), dtype=bool)
    return {
        "future": j <= i,
        "strict-future": j < i,
        "past": j >= i,
        "strict-past": j > i,
    }[mask]


def _attend(head: Attend, q: np.ndarray, k: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    """Per row: the value(s) at the selected position(s) and the found flag, [n, m + 1]."""
    m = v.shape[1]
    out = np.zeros((n, m + 1))
    for start in range(0, n, _ROW_BLOCK):
        rows = slice(start, min(n, start + _ROW_BLOCK))
        ok = allowed(head.mask, n, rows)
        s = q[rows] @ k.T if q.shape[1] else np.zeros(ok.shape)
        s = np.where(ok, s, -np.inf)
        top = s.max(axis=1, keepdims=True)
        has = np.isfinite(top[:, 0])
        tol = TIE_TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(top), top, 0.0)))
        best = ok & (s >= top - tol)
        if head.tie == "average":
            w = best / np.maximum(best.sum(axis=1, keepdims=True), 1)
        else:
            idx = np.arange(n)
            pick = (
                np.where(best, idx, n).min(axis=1)
                if head.tie == "leftmost"
                else np.where(best, idx, -1).max(axis=1)
            )
            w = np.zeros(ok.shape)
            w[np.arange(w.shape[0])[has], pick[has]] = 1.0
        out[rows, :m] = w @ v
        out[rows, m] = has
    return out


def run_program(program: Program, word: str) -> dict[int, np.ndarray]:
    """Every SOp's values on ``word`` (uid -> float64 array of length n)."""
    n = len(word)
    if n == 0:
        raise HardsoftError("programs run on non-empty words")
    bad = [c for c in word if c not in program.alphabet]
    if bad:
        raise HardsoftError(
            f"symbol {bad[0]!r} is not in the alphabet {''.join(program.alphabet)!r} "
            f"of program {program.name}"
        )
    chars = np.array(list(word))
    val: dict[int, np.ndarray] = {}
    heads: dict[int, np.ndarray] = {}
    for x in program.nodes():
        if isinstance(x, Token):
            val[x.uid] = (chars == x.symbol).astype(np.float64)
        elif isinstance(x, Position):
            val[x.uid] = position_values(x.feature, n)
        elif isinstance(x, Linear):
            acc = np.full(n, x.const)
            for t, c in x.terms.items():
                acc = acc + c * val[t.uid]
            val[x.uid] = acc
        elif isinstance(x, PWL):
            acc = np.zeros(n)
            for w, form in x.pieces:
                acc = acc + w * np.maximum(val[form.uid], 0.0)
            val[x.uid] = acc
        elif isinstance(x, Attend):
            q = np.stack([val[f.uid] for f in x.query], axis=1) if x.query else np.zeros((n, 0))
            k = np.stack([val[f.uid] for f in x.key], axis=1) if x.key else np.zeros((n, 0))
            v = np.stack([val[f.uid] for f in x.values], axis=1) if x.values else np.zeros((n, 0))
            heads[x.uid] = _attend(x, q, k, v, n)
        elif isinstance(x, AttnOut):
            table = heads[x.head.uid]
            val[x.uid] = table[:, x.index]
        else:  # pragma: no cover - the DSL has no other kinds
            raise TypeError(type(x))
    return val


def interpret(program: Program, word: str) -> np.ndarray:
    """The program's outputs on ``word``: float64 array ``[n, len(outputs)]``."""
    val = run_program(program, word)
    return np.stack([val[o.uid] for o in program.outputs], axis=1)


def interpret_many(program: Program, words: list[str]) -> list[np.ndarray]:
    return [interpret(program, w) for w in words]


def node_value(program: Program, word: str, node: SOp) -> np.ndarray:
    """The values of one SOp of ``program`` on ``word`` (for debugging and tests)."""
    return run_program(program, word)[node.uid]

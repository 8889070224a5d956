"""The reference interpreter: runs a program directly on a string with numpy, independently of
any compiled model. It is the ground truth the compiled AHAT and its softmax simulation are
checked against, so it follows the DSL's definition literally (no tie-breaking terms, no
residual stream): scores are compared exactly up to a relative tolerance of 1e-12, which only
absorbs float64 rounding of equal exact values."""

from __future__ import annotations

import math

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.ahat.dsl import PWL, Attend, AttnOut, Linear, Position, Program, Token

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
    "i//s": lambda i, n: np.floor_divide(i, _ceil_sqrt(n)),
    "i%s": lambda i, n: np.mod(i, _ceil_sqrt(n)),
}


def _ceil_sqrt(n: int) -> int:
    """⌈√n⌉ in integers."""
    s = math.isqrt(n)
    return s if s * s == n else s + 1


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
    """Boolean [rows, n] matrix of allowed (i, j) pairs (0-based indices).

    Deliberately independent of the model's mask table (``Mask.allows`` in
    hardsoft.model.spec): the interpreter is the ground truth compiled models are checked
    against, so it must not share the code it checks."""
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


def _attend(head: Attend, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per word and row: the value(s) at the selected position(s) and the found flag.

    ``q, k``: [B, n, d]; ``v``: [B, n, m]; returns [B, n, m + 1]."""
    b, n, m = v.shape
    out = np.zeros((b, n, m + 1))
    block = max(1, _ROW_BLOCK * 4096 // max(b * n, 1))
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        ok = allowed(head.mask, n, rows)[None]
        s = q[:, rows] @ k.transpose(0, 2, 1) if q.shape[2] else np.zeros((b, *ok.shape[1:]))
        s = np.where(ok, s, -np.inf)
        top = s.max(axis=2, keepdims=True)
        has = np.isfinite(top[..., 0])
        tol = TIE_TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(top), top, 0.0)))
        best = ok & (s >= top - tol)
        if head.tie == "average":
            w = best / np.maximum(best.sum(axis=2, keepdims=True), 1)
        else:
            idx = np.arange(n)
            pick = (
                np.where(best, idx, n).min(axis=2)
                if head.tie == "leftmost"
                else np.where(best, idx, -1).max(axis=2)
            )
            w = (idx[None, None, :] == pick[..., None]) & has[..., None]
            w = w.astype(np.float64)
        out[:, rows, :m] = w @ v
        out[:, rows, m] = has
    return out


def run_batch(program: Program, words: list[str]) -> dict[int, np.ndarray]:
    """Every SOp's values on ``words`` (all of one length n): uid -> float64 ``[B, n]``."""
    if not words or not words[0]:
        raise HardsoftError("programs run on non-empty words")
    n = len(words[0])
    if any(len(w) != n for w in words):
        raise HardsoftError("run_batch needs words of one length")
    chars = np.array([list(w) for w in words])
    bad = ~np.isin(chars, list(program.alphabet))
    if bad.any():
        b, i = np.argwhere(bad)[0]
        raise HardsoftError(
            f"symbol {chars[b, i]!r} at position {i + 1} is not in the alphabet "
            f"{''.join(program.alphabet)!r} of program {program.name}"
        )
    bsz = len(words)
    val: dict[int, np.ndarray] = {}
    heads: dict[int, np.ndarray] = {}

    def stack(forms: list) -> np.ndarray:
        if not forms:
            return np.zeros((bsz, n, 0))
        return np.stack([val[f.uid] for f in forms], axis=2)

    for x in program.nodes():
        if isinstance(x, Token):
            val[x.uid] = (chars == x.symbol).astype(np.float64)
        elif isinstance(x, Position):
            val[x.uid] = np.broadcast_to(position_values(x.feature, n), (bsz, n))
        elif isinstance(x, Linear):
            acc = np.full((bsz, n), x.const)
            for t, c in x.terms.items():
                acc = acc + c * val[t.uid]
            val[x.uid] = acc
        elif isinstance(x, PWL):
            acc = np.zeros((bsz, n))
            for w, form in x.pieces:
                acc = acc + w * np.maximum(val[form.uid], 0.0)
            val[x.uid] = acc
        elif isinstance(x, Attend):
            heads[x.uid] = _attend(x, stack(x.query), stack(x.key), stack(x.values))
        elif isinstance(x, AttnOut):
            val[x.uid] = heads[x.head.uid][:, :, x.index]
        else:  # pragma: no cover - the DSL has no other kinds
            raise TypeError(type(x))
    return val


def run_program(program: Program, word: str) -> dict[int, np.ndarray]:
    """Every SOp's values on one word (uid -> float64 array of length n)."""
    return {uid: v[0] for uid, v in run_batch(program, [word]).items()}


def interpret(program: Program, word: str) -> np.ndarray:
    """The program's outputs on ``word``: float64 array ``[n, len(outputs)]``."""
    val = run_program(program, word)
    return np.stack([val[o.uid] for o in program.outputs], axis=1)


def interpret_many(program: Program, words: list[str], batch: int = 4096) -> list[np.ndarray]:
    """Outputs ``[n, len(outputs)]`` for each word (any mix of lengths), batched by length."""
    results: list[np.ndarray | None] = [None] * len(words)
    by_len: dict[int, list[int]] = {}
    for idx, w in enumerate(words):
        by_len.setdefault(len(w), []).append(idx)
    for n, idxs in by_len.items():
        size = max(1, min(batch, (2_000_000 // max(n * n, 1))))
        for s in range(0, len(idxs), size):
            part = idxs[s : s + size]
            val = run_batch(program, [words[i] for i in part])
            outs = np.stack([val[o.uid] for o in program.outputs], axis=2)
            for row, idx in enumerate(part):
                results[idx] = outs[row]
    return [r for r in results if r is not None]

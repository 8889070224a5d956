"""Training and evaluation data from Hahn's §6 processes (Theorem 6).

A batch is a set of prefixes of one length ``n`` drawn exactly from the process conditioned on
surviving ``n`` symbols (``sample_prefixes``), with the *exact* next-symbol distribution after
every prefix ``w[:t+1]`` as the target of position ``t`` (lower variance than the sampled next
symbol). Lengths vary from batch to batch, so every prefix length is trained.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.languages.distributions import DyckProcess, HahnProcess, ParityProcess

LANGUAGES = ("parity", "dyck2")
DEFAULT_P = {"parity": 0.5, "dyck2": 0.3}


def get_process(language: str, p: float | None = None) -> HahnProcess:
    """Hahn's PARITY automaton (``parity``) or 2DYCK PCFG (``dyck2``) with parameter ``p``
    (defaults: 0.5 and 0.3)."""
    key = language.strip().lower()
    if key not in LANGUAGES:
        raise HardsoftError(f"unknown language {language!r} for training (one of parity, dyck2)")
    p = DEFAULT_P[key] if p is None else p
    return ParityProcess(p) if key == "parity" else DyckProcess(p)


def encode(process: HahnProcess, words: list[str]) -> np.ndarray:
    """Token ids ``[B, n]`` (index into ``process.alphabet``) for equal-length words."""
    table = np.full(256, -1, dtype=np.int64)
    for k, a in enumerate(process.alphabet):
        table[ord(a)] = k
    if not words:
        return np.zeros((0, 0), dtype=np.int64)
    n = len(words[0])
    raw = np.frombuffer("".join(words).encode("latin-1"), dtype=np.uint8).reshape(len(words), n)
    ids = table[raw]
    if (ids < 0).any():
        raise HardsoftError("a word contains a symbol outside the process alphabet")
    return ids


def exact_targets(process: HahnProcess, words: list[str]) -> np.ndarray:
    """``[B, n, |Σ|+1]``: row ``t`` is the exact distribution of the symbol after ``w[:t+1]``."""
    if isinstance(process, DyckProcess):
        return _dyck_targets(process, encode(process, words))
    return process.next_prob_matrix(words)


def _dyck_targets(process: DyckProcess, ids: np.ndarray) -> np.ndarray:
    """Vectorised 2DYCK next-symbol distributions (stack of open types, one step per column)."""
    p = process.p
    b, n = ids.shape
    out = np.zeros((b, n, 5))
    out[:, :, 0] = out[:, :, 2] = p / 2
    stack = np.zeros((b, n + 1), dtype=np.int64)
    height = np.zeros(b, dtype=np.int64)
    rows = np.arange(b)
    for t in range(n):
        c = ids[:, t]
        opening = (c == 0) | (c == 2)
        stack[rows[opening], height[opening]] = c[opening] // 2
        if ((~opening) & (height == 0)).any():
            raise HardsoftError("a 2DYCK prefix closes a bracket that was never opened")
        top = stack[rows, np.maximum(height - 1, 0)]
        if ((~opening) & (2 * top + 1 != c)).any():
            raise HardsoftError("a 2DYCK prefix closes the wrong bracket type")
        height = np.where(opening, height + 1, height - 1)
        top = stack[rows, np.maximum(height - 1, 0)]
        closer = 2 * top + 1
        has = height > 0
        out[rows[has], t, closer[has]] = 1 - p
        out[~has, t, 4] = 1 - p
    return out


@dataclass
class Batch:
    """``tokens [B, n]`` (long) and ``targets [B, n, |Σ|+1]`` (float) on one device."""

    tokens: torch.Tensor
    targets: torch.Tensor


def sample_batch(
    process: HahnProcess,
    n: int,
    batch_size: int,
    rng: np.random.Generator,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
) -> Batch:
    """``batch_size`` exact prefixes of length ``n`` (given ``|X| >= n``) with exact targets."""
    words = process.sample_prefixes(n, batch_size, rng, min_length=n)
    tokens = torch.as_tensor(encode(process, words), device=device)
    targets = torch.as_tensor(exact_targets(process, words), dtype=dtype, device=device)
    return Batch(tokens, targets)


def training_length(step_rng: np.random.Generator, min_n: int, max_n: int) -> int:
    """The length of one training batch: uniform on ``[min_n, max_n]``."""
    return int(step_rng.integers(min_n, max_n + 1))

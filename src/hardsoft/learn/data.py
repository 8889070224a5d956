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
from hardsoft.languages import get_process as _registry_process
from hardsoft.languages import has_process
from hardsoft.languages.distributions import HahnProcess

# The names `hardsoft train --language` documents: Hahn's §6 processes by the language they
# generate. The registry (hardsoft.languages) also takes the process names themselves.
LANGUAGES = ("parity", "dyck2")


def get_process(language: str, p: float | None = None) -> HahnProcess:
    """Hahn's PARITY automaton (``parity``) or 2DYCK PCFG (``dyck2``) with parameter ``p``
    (defaults: the process's ``default_p``, 0.5 and 0.3), from the one registry
    :func:`hardsoft.languages.get_process` (which also takes the process names)."""
    if not has_process(language):
        raise HardsoftError(
            f"unknown language {language!r} for training (one of {', '.join(LANGUAGES)})"
        )
    return _registry_process(language, p)


def encode(process: HahnProcess, words: list[str]) -> np.ndarray:
    """Token ids ``[B, n]`` (index into ``process.alphabet``) for equal-length words."""
    return process.encode(words)


def exact_targets(process: HahnProcess, words: list[str]) -> np.ndarray:
    """``[B, n, |Σ|+1]``: row ``t`` is the exact distribution of the symbol after ``w[:t+1]``
    (the process's own :meth:`~HahnProcess.next_prob_matrix`)."""
    return process.next_prob_matrix(words)


@dataclass
class Batch:
    """``tokens [B, n]`` (long) and ``targets [B, n, |Σ|+1]`` (float) on one device."""

    tokens: torch.Tensor
    targets: torch.Tensor

    def to(self, device: str | torch.device) -> Batch:
        """The batch on ``device`` (itself if it is there already)."""
        return Batch(self.tokens.to(device), self.targets.to(device))


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

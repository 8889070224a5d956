"""Evaluation of a next-symbol predictor on Hahn's processes.

* :func:`cross_entropy_by_length`: for each prefix length ``n``, the model's cross-entropy at
  the last position against the exact next-symbol distribution, averaged over exact samples of
  ``X_{1:n} | |X| >= n``, next to the optimal and the unigram-chance cross-entropy of the
  process (``hardsoft.languages.distributions``). The gap to optimal is the headline number.
* :func:`length_generalization`: Delétang et al. (2023) style: test lengths beyond training,
  per-token accuracy of the decision that the exact distribution makes: PARITY: is the count of
  1s even (end-of-sequence allowed, exact P(EOS) = p) or odd (P(EOS) = 0); the model's call is
  P_model(EOS) > p/2. 2DYCK: at positions with an open bracket, is the right closing bracket
  more likely than the wrong one.
* :func:`majority_baseline`: the accuracy of the best constant decision on the same prefixes,
  the chance level that per-token accuracy is compared with (about 0.66 on PARITY, not 1/2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from hardsoft.languages.distributions import HahnProcess, ParityProcess
from hardsoft.learn.data import encode, exact_targets, get_process, sample_batch
from hardsoft.learn.models import logits


@dataclass
class LengthRow:
    """One prefix length: the model's cross-entropy on the samples, the process's optimal and
    unigram cross-entropies (exact expectations), and ``sample_optimal``: the entropy of the
    exact distribution on the same samples. ``gap = model − sample_optimal`` is the mean KL
    divergence from the exact distribution (>= 0; paired, so less noisy than model − optimal)."""

    n: int
    model: float
    optimal: float
    unigram: float
    sample_optimal: float

    @property
    def gap(self) -> float:
        return self.model - self.sample_optimal

    @property
    def chance_gap(self) -> float:
        return self.unigram - self.optimal

    def to_dict(self) -> dict[str, float]:
        return {
            "n": self.n,
            "model": self.model,
            "optimal": self.optimal,
            "unigram": self.unigram,
            "sample_optimal": self.sample_optimal,
            "gap": self.gap,
            "chance_gap": self.chance_gap,
        }


@torch.no_grad()
def cross_entropy_by_length(
    model: torch.nn.Module,
    process: HahnProcess,
    lengths: Sequence[int],
    *,
    samples: int = 256,
    seed: int = 12345,
    batch_size: int = 256,
    device: str = "cpu",
) -> list[LengthRow]:
    """Cross-entropy (nats) at the last position of exact prefixes of each length."""
    model.eval()
    lengths = [int(n) for n in lengths]
    opt = process.optimal_cross_entropy(lengths)
    uni = process.unigram_cross_entropy(lengths)
    rows = []
    for k, n in enumerate(lengths):
        rng = np.random.default_rng([seed, n])
        total, entropy, count = 0.0, 0.0, 0
        # keep the attention scores of one batch (B·n² per head) around 64M entries
        step = max(1, min(batch_size, (1 << 26) // (n * n)))
        for start in range(0, samples, step):
            size = min(step, samples - start)
            b = sample_batch(process, n, size, rng, device=device)
            out = logits(model, b.tokens)[:, -1].double()
            target = b.targets[:, -1].double()
            ce = -(target * torch.log_softmax(out, -1)).sum(-1)
            h = -(target * torch.log(torch.where(target > 0, target, 1.0))).sum(-1)
            total += float(ce.sum())
            entropy += float(h.sum())
            count += size
        rows.append(LengthRow(n, total / count, float(opt[k]), float(uni[k]), entropy / count))
    return rows


@dataclass
class GeneralizationResult:
    """Per-token accuracy on test lengths: ``per_length`` maps n to the accuracy over all
    positions of strings of that length; ``beyond`` is restricted to positions > ``train_max``."""

    train_max: int
    lengths: list[int]
    per_length: list[float]
    overall: float
    beyond: float

    def to_dict(self) -> dict:
        return {
            "train_max": self.train_max,
            "lengths": self.lengths,
            "per_length": self.per_length,
            "overall": self.overall,
            "beyond": self.beyond,
        }


def _decisions(process: HahnProcess, probs: np.ndarray, exact: np.ndarray):
    """(correct [B, n] bool, scored [B, n] bool) for the decision the exact distribution makes."""
    label, scored = _truth(process, exact)
    if isinstance(process, ParityProcess):
        guess = probs[..., process.eos_index] > process.p / 2  # "even": EOS is possible
    else:
        guess = probs[..., 1] > probs[..., 3]  # "round": ')' beats ']'
    return (guess == label) & scored, scored


@torch.no_grad()
def length_generalization(
    model: torch.nn.Module,
    process: HahnProcess,
    lengths: Sequence[int],
    train_max: int,
    *,
    samples: int = 64,
    seed: int = 777,
    device: str = "cpu",
) -> GeneralizationResult:
    """Per-token accuracy on exact prefixes of each test length (see the module docstring)."""
    model.eval()
    lengths = [int(n) for n in lengths]
    per_length, hits, total, hits_b, total_b = [], 0, 0, 0, 0
    for n in lengths:
        rng = np.random.default_rng([seed, n])
        words = process.sample_prefixes(n, samples, rng, min_length=n)
        tokens = torch.as_tensor(encode(process, words), device=device)
        probs = torch.softmax(logits(model, tokens).double(), -1).cpu().numpy()
        exact = exact_targets(process, words)
        correct, scored = _decisions(process, probs, exact)
        per_length.append(float(correct.sum() / max(1, scored.sum())))
        hits += int(correct.sum())
        total += int(scored.sum())
        beyond = np.zeros_like(scored)
        beyond[:, train_max:] = True  # position index t >= train_max: prefix length > train_max
        hits_b += int((correct & beyond).sum())
        total_b += int((scored & beyond).sum())
    return GeneralizationResult(
        train_max,
        lengths,
        per_length,
        hits / max(1, total),
        hits_b / max(1, total_b) if total_b else float("nan"),
    )


def evaluate_model(
    model: torch.nn.Module,
    language: str,
    p: float | None,
    lengths: Sequence[int],
    *,
    samples: int = 256,
    device: str = "cpu",
) -> list[LengthRow]:
    """:func:`cross_entropy_by_length` for a language name (``parity`` or ``dyck2``)."""
    return cross_entropy_by_length(
        model, get_process(language, p), lengths, samples=samples, device=device
    )


def _truth(process: HahnProcess, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(label [B, n] bool, scored [B, n] bool): the decision the exact distribution makes
    (PARITY: the count of 1s is even; 2DYCK: the closing bracket is round) and where it is
    scored."""
    eos = process.eos_index
    if isinstance(process, ParityProcess):
        label = exact[..., eos] > 0
        return label, np.ones(label.shape, dtype=bool)
    close_round, close_square = exact[..., 1] > 0, exact[..., 3] > 0
    return close_round, close_round | close_square


def majority_baseline(
    process: HahnProcess,
    lengths: Sequence[int],
    train_max: int,
    *,
    samples: int = 64,
    seed: int = 777,
) -> float:
    """The per-token accuracy beyond ``train_max`` of the best *constant* decision on the very
    prefixes :func:`length_generalization` scores (same seed): the chance level of that accuracy.
    It is not 1/2 on PARITY: conditioned on surviving, the process spends more time in the odd
    state, which never ends."""
    hits, total = 0, 0
    for n in [int(n) for n in lengths]:
        rng = np.random.default_rng([seed, n])
        words = process.sample_prefixes(n, samples, rng, min_length=n)
        label, scored = _truth(process, exact_targets(process, words))
        scored = scored.copy()
        scored[:, :train_max] = False
        hits += int((label & scored).sum())
        total += int(scored.sum())
    if total == 0:
        return float("nan")
    return max(hits, total - hits) / total

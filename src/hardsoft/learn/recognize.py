"""The recognizer objective: binary classification of whole strings, the protocol of Butoi et al.
(ICLR 2025, "Training Neural Networks as Recognizers of Formal Languages", the FLaRe benchmark).

* A model reads a string and its output coordinate 0 at the *last* position is a logit; it
  accepts iff the logit is > 0 (declared on the model as ``meta["acceptance"]``, a
  ``coordinate`` readout with threshold 0; the output is named ``accept``).
* Training strings have lengths in ``[min_n, max_n]`` (FLaRe: 0–40), validation ``[min_n,
  val_max_n]`` (0–80), testing up to 500 (``hardsoft evaluate --lengths``). About half of the
  strings of a length are members (the language's own sampler); the negatives are half
  perturbed members (one symbol substituted, inserted or deleted, kept only if the result is
  not a member) and half random non-members. Every label comes from the language's oracle.
* Differences from FLaRe, said where they matter: our transformers need ``n >= 1`` (no BOS
  symbol), so the empty string is not trained or tested; each step draws a fresh batch of one
  length (seeded by ``[seed, step]``) instead of a fixed training set; validation accuracy is
  reported, not used to select a checkpoint.

Hahn's §6 processes keep their exact next-symbol objective (``process``, :mod:`train`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language, has_process, is_process, language_names
from hardsoft.languages.base import Language
from hardsoft.model.spec import _Option

ACCEPT_NAME = "accept"


class Objective(_Option):
    """What ``hardsoft train`` fits: Hahn's §6 process (exact next-symbol targets) or membership
    of whole strings (a recognizer, Butoi et al. 2025)."""

    PROCESS = "process"
    RECOGNIZER = "recognizer"


def default_objective(language: str) -> Objective:
    """``process`` where a Hahn process generates ``language``, ``recognizer`` otherwise."""
    return Objective.PROCESS if has_process(language) else Objective.RECOGNIZER


def resolve_objective(language: str, objective: str | None) -> Objective:
    """The objective for ``language`` (None: :func:`default_objective`), checked: an unknown
    language, a process objective for a language without a process, or a recognizer for a
    per-position task or a process is a one-line error, never a substitution."""
    if not isinstance(language, str) or not language.strip():
        raise HardsoftError(f"language must be a name, got {language!r}")
    if is_process(language):
        obj = Objective.parse(objective or "process", "objective")
        if obj is Objective.RECOGNIZER:
            raise HardsoftError(
                f"{language!r} is a process, not a language: the recognizer objective needs a "
                "language (e.g. parity-even, dyck2)"
            )
        return obj
    lang = get_language(language)  # unknown names fail here, in one line
    obj = (
        default_objective(language)
        if objective is None
        else Objective.parse(objective, "objective")
    )
    if obj is Objective.PROCESS and lang.process_name is None:
        raise HardsoftError(
            f"{lang.name} has no Hahn process, so the process objective does not apply "
            "(use --objective recognizer)"
        )
    if obj is Objective.RECOGNIZER and language.strip().lower() != lang.name:
        named = [n for n in language_names() if n.startswith(f"{language.strip().lower()}-")]
        raise HardsoftError(
            f"{language!r} is the process objective's name for Hahn's {lang.name} language; a "
            f"recognizer needs a language's own name ({', '.join(named) or lang.name}, as in "
            "hardsoft language list)"
        )
    if obj is Objective.RECOGNIZER and lang.kind != "language":
        raise HardsoftError(
            f"{lang.name} is a per-position {lang.kind}, not a language: the recognizer "
            "objective needs membership of whole strings"
        )
    return obj


def acceptance_meta(language: str) -> dict[str, Any]:
    """The readout a recognizer declares: accept iff output 0 at the last position is > 0."""
    return {"kind": "coordinate", "index": 0, "threshold": 0.0, "language": language}


# ---------------------------------------------------------------------------------- data
_EDITS = ("substitute", "insert", "delete")


def _edit(word: str, op: str, alphabet: Sequence[str], rng: np.random.Generator) -> str:
    """One random edit of ``word`` (substitution by another symbol, insertion, deletion)."""
    k = len(alphabet)
    if op == "insert":
        i = int(rng.integers(len(word) + 1))
        return word[:i] + alphabet[int(rng.integers(k))] + word[i:]
    i = int(rng.integers(len(word)))
    if op == "delete":
        return word[:i] + word[i + 1 :]
    others = [a for a in alphabet if a != word[i]]
    return word[:i] + others[int(rng.integers(len(others)))] + word[i + 1 :]


def _try(sample: Any, *args: Any) -> list[str]:
    """A sampler's words, or none when the language has none of that kind at that length."""
    try:
        return list(sample(*args))
    except HardsoftError:
        return []


def perturbed_negatives(lang: Language, n: int, count: int, rng: np.random.Generator) -> list[str]:
    """Up to ``count`` non-members of length ``n``, each one edit away from a member (a member of
    length n substituted, of length n - 1 with an insertion, of length n + 1 with a deletion)."""
    out: list[str] = []
    for _ in range(4):
        if len(out) >= count:
            break
        ops = rng.choice(len(_EDITS), size=count - len(out))
        for o, op in enumerate(_EDITS):
            m = n + {"substitute": 0, "insert": -1, "delete": 1}[op]
            want = int((ops == o).sum())
            if not want or m < (1 if op != "insert" else 0) or not lang.has_members(m):
                continue
            for member in _try(lang.sample_positive, m, want, rng):
                cand = _edit(member, op, lang.alphabet, rng)
                if not lang._member(cand):
                    out.append(cand)
    return out[:count]


def sample_strings(
    lang: Language, n: int, count: int, rng: np.random.Generator
) -> tuple[list[str], np.ndarray]:
    """``count`` strings of length ``n`` (shuffled) and their oracle labels: about half members,
    the rest half perturbed members, half random non-members; one class only where the
    language has no word of the other at length ``n``."""
    pos = _try(lang.sample_positive, n, count - count // 2, rng) if lang.has_members(n) else []
    need = count - len(pos)
    neg: list[str] = []
    if lang.has_nonmembers(n):
        neg = perturbed_negatives(lang, n, need // 2, rng)
        neg += _try(lang.sample_negative, n, need - len(neg), rng, False)
    if len(pos) + len(neg) < count and pos:  # no non-members here: more members
        pos += _try(lang.sample_positive, n, count - len(pos) - len(neg), rng)
    words = pos + neg
    if not words:
        raise HardsoftError(f"{lang.name}: could not sample strings of length {n}")
    order = rng.permutation(len(words))
    words = [words[i] for i in order]
    return words, lang.members(words)


@dataclass
class Batch:
    """``tokens [B, n]`` (long) and ``labels [B]`` (float 0/1, the oracle's membership)."""

    tokens: torch.Tensor
    labels: torch.Tensor

    def to(self, device: str | torch.device) -> Batch:
        """The batch on ``device`` (itself if it is there already)."""
        return Batch(self.tokens.to(device), self.labels.to(device))


def encode(lang: Language, words: list[str]) -> np.ndarray:
    """Token ids ``[B, n]`` (indices into ``lang.alphabet``) of equal-length words."""
    if not words:
        return np.zeros((0, 0), dtype=np.int64)
    return np.stack([lang.encode(w) for w in words])


def recognizer_batch(
    lang: Language,
    n: int,
    batch_size: int,
    rng: np.random.Generator,
    device: str | torch.device = "cpu",
) -> Batch:
    """One training batch of strings of length ``n`` with their labels."""
    words, labels = sample_strings(lang, n, batch_size, rng)
    tokens = torch.as_tensor(encode(lang, words), device=device)
    return Batch(tokens, torch.as_tensor(labels, dtype=torch.float32, device=device))


def recognizer_loss(out: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of the last position's coordinate-0 logit (``out [B, n, d_out]``)."""
    return F.binary_cross_entropy_with_logits(out[:, -1, 0], labels)


# ---------------------------------------------------------------------------- evaluation
@dataclass
class AccuracyRow:
    """One length: the fraction of ``strings`` classified right, and the members' share."""

    n: int
    accuracy: float
    strings: int
    positives: float

    def to_dict(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "strings": self.strings,
            "positives": self.positives,
        }


@torch.no_grad()
def accuracy_by_length(
    model: torch.nn.Module,
    lang: Language,
    lengths: Sequence[int],
    *,
    samples: int = 64,
    seed: int = 4242,
    device: str = "cpu",
) -> list[AccuracyRow]:
    """Recognition accuracy at each length on :func:`sample_strings` (seeded per length)."""
    from hardsoft.learn.models import logits

    model.eval()
    rows = []
    for n in [int(n) for n in lengths]:
        if n < 1:
            raise HardsoftError(f"lengths must be >= 1 (the models need n >= 1), got {n}")
        rng = np.random.default_rng([seed, n])
        words, labels = sample_strings(lang, n, samples, rng)
        tokens = torch.as_tensor(encode(lang, words), device=device)
        guess = (logits(model, tokens)[:, -1, 0] > 0).cpu().numpy()
        rows.append(
            AccuracyRow(n, float((guess == labels).mean()), len(words), float(labels.mean()))
        )
    return rows


def mean_accuracy(rows: Sequence[AccuracyRow], lo: int, hi: int) -> float | None:
    """Mean accuracy over the rows with ``lo <= n <= hi`` (None if there are none)."""
    acc = [r.accuracy for r in rows if lo <= r.n <= hi]
    return float(np.mean(acc)) if acc else None

"""The uniform–tieless checker (Yang et al. (arXiv:2412.09925v1) §5): every attention head of an
AHAT must be *uniform* (W_Q = W_K = 0) or *tieless with gap γ(n)*: on every input of length n, at
every position, the maximal score is attained once and beats every other allowed score by ≥ γ(n).

The check (:func:`check_tieless`) runs the hard model with ``trace=True``, reads each head's
scores from the traced queries and keys through the head's own ``Head.scores`` and
``Head.allowed``, and records the smallest gap seen per head and length: exhaustively for
small n (all |Σ|^n words), by sampling for large n. A head that ties is reported with a
concrete word, position and the tied key positions. Ties are decided up to a relative tolerance of
1e-12, which only absorbs float64 rounding of exactly equal scores.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.spec import eval_tau
from hardsoft.model.transformer import Head, Transformer

TIE_TOL = 1e-12


@dataclass
class HeadCheck:
    """One head's verdict: ``kind`` is uniform, tieless or tied; ``gaps`` maps n to the
    smallest gap seen; ``tie`` is the first tie found (word, 1-based position, tied keys)."""

    layer: int
    head: int
    label: str
    kind: str
    declared: str | None = None
    gaps: dict[int, float] = field(default_factory=dict)
    tie: dict | None = None

    def to_dict(self) -> dict:
        return {
            "layer": self.layer,
            "head": self.head,
            "label": self.label,
            "kind": self.kind,
            "declared_gap": self.declared,
            "measured_gap": {str(n): g for n, g in sorted(self.gaps.items())},
            "tie": self.tie,
        }


@dataclass
class TielessReport:
    """The verdict for a whole model: per head checks and, per length, how it was checked."""

    heads: list[HeadCheck]
    lengths: dict[int, dict]  # n -> {"words": count, "exhaustive": bool}
    program_gap: str | None = None

    @property
    def uniform_tieless(self) -> bool:
        return all(h.kind != "tied" for h in self.heads)

    def gamma(self, n: int) -> float:
        """The smallest measured gap over tieless heads at length n (inf if none)."""
        vals = [h.gaps[n] for h in self.heads if h.kind == "tieless" and n in h.gaps]
        return min(vals, default=math.inf)

    def declared_violations(self) -> list[str]:
        """Heads whose measured gap is below their declared gap or the program's gap."""
        bad = []
        for h in self.heads:
            for n, g in h.gaps.items():
                for text in (h.declared, self.program_gap):
                    if text is not None and g < eval_tau(text, n) * (1 - 1e-9):
                        bad.append(f"{h.label} at n = {n}: measured gap {g:.3g} < declared {text}")
        return bad

    def to_dict(self) -> dict:
        return {
            "uniform_tieless": self.uniform_tieless,
            "program_gap": self.program_gap,
            "lengths": {str(n): v for n, v in sorted(self.lengths.items())},
            "gamma_measured": {str(n): self.gamma(n) for n in sorted(self.lengths)},
            "declared_violations": self.declared_violations(),
            "heads": [h.to_dict() for h in self.heads],
        }


def is_uniform(head: Head) -> bool:
    """W_Q = 0 or W_K = 0 exactly (every allowed position scores 0)."""
    return head.spec.d_head == 0 or bool((head.W_Q == 0).all() or (head.W_K == 0).all())


def _row_gaps(
    scores: torch.Tensor, allowed: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per row: (gap, n_tied, has_any). Rows with one allowed position have gap inf."""
    s = scores if allowed is None else scores.masked_fill(~allowed, -math.inf)
    top = s.amax(dim=-1, keepdim=True)
    has = torch.isfinite(top[..., 0])
    tol = TIE_TOL * top.abs().clamp_min(1.0).nan_to_num(posinf=1.0, neginf=1.0)
    tied = (s >= top - tol) & torch.isfinite(s)
    n_tied = tied.sum(-1)
    second = s.masked_fill(tied, -math.inf).amax(-1)
    gap = torch.where(n_tied > 1, torch.zeros_like(second), top[..., 0] - second)
    return gap, n_tied, has, tied


def check_words(
    model: Transformer,
    words: list[str],
    heads: list[HeadCheck],
    n: int,
    batch: int = 256,
) -> None:
    """Update ``heads`` with the gaps and ties seen on ``words`` (all of length n)."""
    by_pos = {(h.layer, h.head): h for h in heads}
    if n > 1500:
        batch = 1
    for s in range(0, len(words), batch):
        part = words[s : s + batch]
        with torch.no_grad():
            out = model(model.encode(part), trace=True)
        tr = out.trace
        assert tr is not None
        for ell, block in enumerate(model.blocks):
            for hi, head in enumerate(block.heads):
                hc = by_pos[(ell, hi)]
                if hc.kind != "uniform":
                    q, k = tr[f"blocks.{ell}.attn.{hi}.q"], tr[f"blocks.{ell}.attn.{hi}.k"]
                    _check_head(hc, head, q, k, part)


def _check_head(
    hc: HeadCheck, head: Head, q: torch.Tensor, k: torch.Tensor, part: list[str]
) -> None:
    """One head's gaps on a batch from its traced queries and keys, through the head's own
    scores and allowed pairs (:meth:`Head.scores`, :meth:`Head.allowed`), by blocks of rows."""
    n = q.shape[1]
    for r0 in range(0, n, 1024):
        r1 = min(n, r0 + 1024)
        sc = head.scores(q[:, r0:r1], k, n)
        allowed = head.allowed(torch.arange(r0, r1, device=sc.device), n)
        gap, n_tied, has, tied = _row_gaps(sc, allowed)
        gap = torch.where(has, gap, torch.full_like(gap, math.inf))
        hc.gaps[n] = min(hc.gaps.get(n, math.inf), float(gap.min()))
        if hc.tie is None and bool((n_tied > 1).any()):
            b, i = (int(v) for v in torch.nonzero(n_tied > 1)[0])
            js = torch.nonzero(tied[b, i])[:, 0].tolist()
            hc.kind = "tied"
            hc.tie = {
                "word": part[b],
                "position": r0 + i + 1,
                "tied_keys": [j + 1 for j in js][:10],
                "score": float(sc[b, i, js[0]]),
            }


def new_head_checks(model: Transformer, meta_heads: list[dict] | None = None) -> list[HeadCheck]:
    """One :class:`HeadCheck` per head, uniform ones recognised from their weights."""
    declared = {(h["layer"], h["head"]): h for h in (meta_heads or [])}
    out = []
    for ell, block in enumerate(model.blocks):
        for hi, head in enumerate(block.heads):
            info = declared.get((ell, hi), {})
            kind = "uniform" if is_uniform(head) else "tieless"
            out.append(HeadCheck(ell, hi, info.get("label", f"L{ell}H{hi}"), kind, info.get("gap")))
    return out


def all_words(alphabet: tuple[str, ...], n: int) -> list[str]:
    return ["".join(t) for t in itertools.product(alphabet, repeat=n)]


def check_tieless(
    model: Transformer,
    *,
    exhaustive_up_to: int = 6,
    exhaustive_limit: int = 20000,
    sampled: dict[int, list[str]] | None = None,
    program_gap: str | None = None,
) -> TielessReport:
    """Check every head: all words for n <= ``exhaustive_up_to`` (while |Σ|^n <= limit), and the
    given sampled words for larger n."""
    if any(h.spec.weighting == "softmax" for b in model.blocks for h in b.heads):
        raise HardsoftError("the uniform–tieless check applies to average-hard models")
    heads = new_head_checks(model, model.meta.get("heads"))
    lengths: dict[int, dict] = {}
    alphabet = tuple(model.spec.alphabet)
    for n in range(1, exhaustive_up_to + 1):
        if len(alphabet) ** n > exhaustive_limit:
            break
        words = all_words(alphabet, n)
        check_words(model, words, heads, n)
        lengths[n] = {"words": len(words), "exhaustive": True}
    for n, words in sorted((sampled or {}).items()):
        if words:
            check_words(model, words, heads, n)
            lengths[n] = {"words": len(words), "exhaustive": False}
    return TielessReport(heads, lengths, program_gap or model.meta.get("program_gap"))


def sample_words(
    language_name: str | None,
    alphabet: Sequence[str],
    n: int,
    count: int,
    seed: int,
    uniform_share: float = 0.0,
) -> list[str]:
    """``count`` words of length n: for a language, ``sample_balanced`` (half members, half
    one-edit near misses) except a ``uniform_share`` of uniform strings; for a task (or where
    the language has no members at n), uniform strings."""
    rng = np.random.default_rng(seed)
    words: list[str] = []
    n_uniform = round(count * uniform_share)
    if language_name:
        from hardsoft.languages import get_language

        lang = get_language(language_name)
        if lang.kind == "language":
            try:
                words, _ = lang.sample_balanced(n, count - n_uniform, rng)
            except HardsoftError:
                words = []
    codes = rng.integers(0, len(alphabet), size=(count - len(words), n))
    words += ["".join(alphabet[c] for c in row) for row in codes]
    return words

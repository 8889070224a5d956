"""Hahn's Lemma 5, measured: how much one input symbol moves a soft transformer.

Lemma 5 lives in three modules, one job each; this one re-exports the names of the other two:

* **The bound** (:mod:`hardsoft.limits.lemma5`: :func:`lemma5_constants`,
  :func:`corrected_bound`, :func:`published_bound`), from the model's parameters.
* **The slope** (:mod:`hardsoft.limits.slope`: :func:`fit_slope`, :func:`t_quantile`).
* **The measurement** (this module, :func:`measure_sensitivity`; its long-input mode is
  :class:`hardsoft.limits.variants.VariantRunner`). For each length ``n``: random inputs, and
  for each a batch of single-symbol changes at positions ``i < n`` run in one forward pass
  (float64). For every layer ``k`` and position ``j`` it records ``‖y_j^(k) − y'_j^(k)‖`` (the
  residual stream after ``k`` layers), the supplement's term per head, and checks every value
  against the corrected bound. :func:`fit_slope` fits the log-log slope with a t-interval.

Flip positions sit at fixed *relative* places ``i = 1 + ⌊u (n − 1)⌋`` (the ``u`` are drawn once
per seed), so the statistic compares like with like across lengths.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.limits.lemma5 import (
    CorrectedBound,
    Lemma5Constants,
    bound_applicability,
    corrected_bound,
    lemma5_constants,
    published_bound,
)
from hardsoft.limits.slope import Slope, fit_slope, t_quantile
from hardsoft.limits.variants import LONG_N, VariantRunner, full_residuals
from hardsoft.model import Transformer
from hardsoft.model.transformer import Head

__all__ = [
    "CorrectedBound",
    "Lemma5Constants",
    "LengthStats",
    "SensitivityReport",
    "Slope",
    "Violation",
    "bound_applicability",
    "corrected_bound",
    "fit_slope",
    "lemma5_constants",
    "measure_sensitivity",
    "published_bound",
    "t_quantile",
]


@dataclass
class LengthStats:
    """Measured influences at one length, per layer k = 0..L (index k).

    ``last_*``: ‖Δy_n^(k)‖ at the last position; ``other_*``: over every j ≠ i;
    ``flipped_max``: ‖Δy_i^(k)‖; ``supp_last_*`` / ``supp_other_max``: the supplement's term
    Σ_w |â_jw − â'_jw| ‖y'_w^(k−1)‖ at j = n / over the sampled rows j ≠ i, maximised over
    heads (0 at k = 0).
    ``count``: how many (input, flip) pairs were measured."""

    n: int
    count: int
    last_max: list[float]
    last_mean: list[float]
    other_max: list[float]
    other_mean: list[float]
    flipped_max: list[float]
    supp_last_max: list[float]
    supp_last_mean: list[float]
    supp_other_max: list[float]


@dataclass
class Violation:
    """A measured value above the corrected bound, with the input that caused it."""

    n: int
    layer: int
    position: int  # 1-based j
    flipped: int  # 1-based i
    word: str
    replacement: str
    measured: float
    bound: float


@dataclass
class SensitivityReport:
    """Everything :func:`measure_sensitivity` found (see :meth:`to_dict` for the JSON)."""

    model_name: str
    lengths: list[int]
    layers: int
    stats: list[LengthStats]
    bounds: list[CorrectedBound | None]
    published: list[dict[str, list[float]] | None]
    constants: Lemma5Constants
    bound_reasons: list[str]
    violations: list[Violation]
    settings: dict[str, Any]

    def series(self, name: str, layer: int | None = None) -> list[float]:
        """One statistic (a ``LengthStats`` field) at ``layer`` (default: the last) per length."""
        k = self.layers if layer is None else layer
        return [float(getattr(s, name)[k]) for s in self.stats]

    def bound_series(self, layer: int | None = None) -> list[float | None]:
        """The corrected bound for positions j ≠ i (so for the last one) at ``layer``."""
        k = self.layers if layer is None else layer
        return [None if b is None else b.other[k] for b in self.bounds]

    def slope(
        self, name: str = "last_max", n_min: int | None = None, n_max: int | None = None
    ) -> Slope | None:
        """:func:`fit_slope` of a statistic at the last layer (None if it cannot be fitted)."""
        try:
            return fit_slope(self.lengths, self.series(name), n_min, n_max)
        except HardsoftError:
            return None

    def to_dict(self, n_min: int | None = None, n_max: int | None = None) -> dict[str, Any]:
        fits = {
            key: self.slope(key, n_min, n_max)
            for key in ("last_max", "last_mean", "supp_last_max", "supp_last_mean", "other_max")
        }

        def fit_dict(s: Slope | None) -> dict[str, Any] | None:
            if s is None:
                return None
            return {"slope": s.slope, "ci": _ci(s), "ci_note": s.ci_note, "range": s.n_range}

        main = fits["last_max"]
        return {
            "model": self.model_name,
            "lengths": self.lengths,
            "layers": self.layers,
            "max_influence": self.series("last_max"),
            "mean_influence": self.series("last_mean"),
            "bound": self.bound_series(),
            "slope": None if main is None else main.slope,
            "slope_ci": None if main is None else _ci(main),
            "slope_ci_note": None if main is None else main.ci_note,
            "fits": {k: fit_dict(v) for k, v in fits.items()},
            "supplement_max": self.series("supp_last_max"),
            "supplement_mean": self.series("supp_last_mean"),
            "per_layer": [
                {
                    "layer": k,
                    "last_max": self.series("last_max", k),
                    "last_mean": self.series("last_mean", k),
                    "other_max": self.series("other_max", k),
                    "other_mean": self.series("other_mean", k),
                    "flipped_max": self.series("flipped_max", k),
                    "supplement_last_max": self.series("supp_last_max", k),
                    "supplement_other_max": self.series("supp_other_max", k),
                    "bound_other": self.bound_series(k),
                    "bound_flipped": [None if b is None else b.flipped[k] for b in self.bounds],
                    "bound_supplement": [
                        None if b is None else b.supplement[k] for b in self.bounds
                    ],
                    "published_log10_other": [
                        None if p is None else p["other"][k] for p in self.published
                    ],
                    "published_log10_flipped": [
                        None if p is None else p["flipped"][k] for p in self.published
                    ],
                }
                for k in range(self.layers + 1)
            ],
            "constants": self.constants.to_dict(),
            "bound_reasons": self.bound_reasons,
            "violations": [asdict(v) for v in self.violations],
            "ok": not self.violations,
            "settings": self.settings,
        }


def _ci(fit: Slope) -> list[float | None]:
    """The interval for JSON: ``[null, null]`` when there is none (see ``Slope.ci_note``)."""
    return [float(b) for b in fit.ci] if fit.has_interval else [None, None]


def _residuals(model: Transformer, ids: torch.Tensor, chunk: int) -> list[torch.Tensor]:
    """The residual stream after k = 0..L layers, through the model's own modules."""
    return full_residuals(model, ids, chunk)


def _supplement(head: Head, u0: torch.Tensor, uv: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Σ_w |a_jw − a'_jw| ‖u'_w‖ for the query positions ``rows`` (0-based): original head
    input ``u0 [1, n, d]``, variants ``uv [B, n, d]``. Returns ``[B, len(rows)]``. The weights
    are the head's own (:meth:`Head.scores`, :meth:`Head.allowed`,
    :meth:`Head.weights_from_scores`)."""
    n = u0.shape[1]
    allowed = head.allowed(rows, n)
    a0, av = (
        head.weights_from_scores(head.scores(head.query(u[:, rows]), head.key(u), n), allowed)
        for u in (u0, uv)
    )
    norms = torch.linalg.vector_norm(uv, dim=-1)  # [B, n]
    return ((av - a0).abs() * norms[:, None, :]).sum(-1)


def _require_memory(
    model: Transformer, n: int, samples: int, flips: int, batch: int, chunk: int, device: str
) -> None:
    """Refuse lengths whose inputs, flip plan, residual streams (every layer, for the reference
    and a batch of variants) and forward pass cannot fit, before any of them is allocated."""
    streams = (batch + 1) * n * model.spec.d_model * (len(model.spec.layers) + 1)
    nbytes = 8 * (samples * n + flips + streams)
    nbytes += memory.forward_bytes(model.spec, batch, n, 8, chunk)
    memory.require(nbytes, f"measuring {flips} flips of {samples} inputs of length {n}", device)


def _flip_fractions(flips: int, seed: int) -> np.ndarray:
    return np.random.default_rng([seed, 5]).random(flips)


WordSampler = Callable[[int, int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class _Plan:
    """The measurement's settings, fixed across lengths: flip positions and supplement rows as
    fractions of n (drawn once per seed), and how many inputs and variants to run."""

    samples: int
    batch: int
    chunk_size: int
    seed: int
    fractions: np.ndarray
    supp_fractions: np.ndarray
    words: WordSampler | None
    long_n: int = LONG_N


@torch.no_grad()
def measure_sensitivity(
    model: Transformer,
    lengths: Sequence[int],
    *,
    samples: int = 4,
    flips: int = 16,
    seed: int = 0,
    chunk_size: int = 1024,
    batch: int = 32,
    supplement_rows: int = 8,
    device: str | None = None,
    check_bound: bool = True,
    words: WordSampler | None = None,
    progress: Callable[[int], None] | None = None,
    long_n: int = LONG_N,
) -> SensitivityReport:
    """Measure Lemma 5's quantities on ``model`` (a float64 copy) for each length in ``lengths``.

    For each ``n``: ``samples`` inputs (uniform random symbols, or ``words(n, count, rng)``
    giving token ids ``[count, n]``), each with ``flips`` single-symbol changes at positions
    ``i < n`` (one random other symbol each), run together in forward passes of up to ``batch``
    variants. The supplement's term is computed at the last position and at
    ``supplement_rows`` other query positions (fixed fractions of n). ``progress(n)`` is called
    after each length. Every value is checked against :func:`corrected_bound` when the model is
    covered by it (``check_bound``).

    From ``n >= long_n`` the variants are computed incrementally
    (:class:`hardsoft.limits.variants.VariantRunner`: first-layer softmax rows updated for the
    one changed key, O(n·d) per variant) and the last layer only at the last position, the
    supplement's rows and the flipped positions; its other positions are not measured there
    (``other_max``/``other_mean`` of the last layer are NaN, null in JSON)."""
    lengths = [int(n) for n in lengths]
    if not lengths or any(n < 2 for n in lengths):
        raise HardsoftError("lengths must be integers >= 2 (a flip needs a position i < n)")
    if samples < 1 or flips < 1 or batch < 1:
        raise HardsoftError("samples, flips and batch must be positive")
    seed = validate.seed(seed)
    chunk_size = validate.positive_int(chunk_size, "chunk_size")
    dev = torch.device(validate.device(device)) if device else model.device
    _require_memory(model, max(lengths), samples, flips, min(batch, flips), chunk_size, str(dev))
    m = copy.deepcopy(model).to(device=dev, dtype=torch.float64).eval()
    if len(m.spec.alphabet) < 2:
        raise HardsoftError("a one-symbol alphabet has no single-symbol changes")
    reasons = bound_applicability(m)
    constants = lemma5_constants(m)
    supp_fractions = np.random.default_rng([seed, 7]).random(max(0, supplement_rows))
    plan = _Plan(
        samples,
        batch,
        chunk_size,
        seed,
        _flip_fractions(flips, seed),
        supp_fractions,
        words,
        long_n,
    )
    stats, bounds, published, violations = [], [], [], []
    for n in lengths:
        bound = corrected_bound(m, n) if not reasons else None
        bounds.append(bound)
        published.append(published_bound(constants, n) if constants.applicable else None)
        st, found = _measure_length(m, n, plan, bound if check_bound else None)
        stats.append(st)
        violations += found
        if progress is not None:
            progress(n)
    settings = {
        "samples": samples,
        "flips": flips,
        "seed": seed,
        "flip_fractions": [float(f) for f in plan.fractions],
        "dtype": "float64",
        "inputs": "uniform random symbols" if words is None else "custom sampler",
        "supplement_rows": supplement_rows,
        "last_layer_rows": (
            f"all below n = {long_n}; from n = {long_n} the last position, the supplement rows "
            "and the flipped positions (other positions of the last layer are not measured)"
        ),
        "weight_scale": model.meta.get("weight_scale") if isinstance(model.meta, dict) else None,
    }
    return SensitivityReport(
        model_name=m.spec.name or "model",
        lengths=lengths,
        layers=len(m.blocks),
        stats=stats,
        bounds=bounds,
        published=published,
        constants=constants,
        bound_reasons=reasons,
        violations=violations,
        settings=settings,
    )


def _inputs(m: Transformer, n: int, plan: _Plan, rng: np.random.Generator) -> np.ndarray:
    """The ``plan.samples`` base inputs of length n, as token ids ``[samples, n]``."""
    if plan.words is None:
        return rng.integers(0, len(m.spec.alphabet), size=(plan.samples, n))
    base = np.asarray(plan.words(n, plan.samples, rng), dtype=np.int64)
    if base.shape != (plan.samples, n):
        raise HardsoftError(f"the word sampler gave shape {base.shape}, not {(plan.samples, n)}")
    return base


def _measure_length(
    m: Transformer, n: int, plan: _Plan, bound: CorrectedBound | None
) -> tuple[LengthStats, list[Violation]]:
    """Every (input, flip) pair at length ``n``: the statistics, and the values above
    ``bound`` (when given)."""
    dev, sigma = m.device, len(m.spec.alphabet)
    rng = np.random.default_rng([plan.seed, n])
    base = _inputs(m, n, plan, rng)
    pos = np.minimum((plan.fractions * (n - 1)).astype(np.int64), n - 2)  # 0-based, < n − 1
    rows = np.unique(np.append((plan.supp_fractions * (n - 1)).astype(np.int64), n - 1))
    rows_t = torch.as_tensor(rows, device=dev)
    acc = _Accumulator(len(m.blocks))
    violations: list[Violation] = []
    last_rows = torch.as_tensor(np.union1d(rows, pos), device=dev)
    for s in range(plan.samples):
        word = torch.as_tensor(base[s], device=dev)[None]
        runner = VariantRunner(m, word, last_rows, plan.chunk_size) if n >= plan.long_n else None
        ref = runner.base if runner else _residuals(m, word, plan.chunk_size)
        for b0 in range(0, len(pos), plan.batch):
            idx = pos[b0 : b0 + plan.batch]
            shift = rng.integers(1, sigma, size=len(idx))
            var = word.repeat(len(idx), 1)
            b = torch.arange(len(idx), device=dev)
            it = torch.as_tensor(idx, device=dev)
            var[b, it] = (var[b, it] + torch.as_tensor(shift, device=dev)) % sigma
            res = runner.variants(var, it) if runner else _residuals(m, var, plan.chunk_size)
            diffs = [torch.linalg.vector_norm(r - r0, dim=-1) for r, r0 in zip(res, ref)]
            acc.add(diffs, _supplements(m, ref, res, rows_t), it, rows_t)
            if bound is not None:
                violations += _check(bound, diffs, it, base[s], var, m.spec.alphabet, n)
    return acc.finish(n), violations


def _supplements(
    m: Transformer, ref: list[torch.Tensor], res: list[torch.Tensor], rows: torch.Tensor
) -> list[torch.Tensor]:
    """Per layer k = 1..L: the supplement's term at the query ``rows``, maximised over the
    layer's heads (zeros for a layer without heads), ``[B, len(rows)]``."""
    out = []
    for k, block in enumerate(m.blocks, start=1):
        u0, uv = block.attn_input(ref[k - 1]), block.attn_input(res[k - 1])
        terms = [_supplement(h, u0, uv, rows) for h in block.heads]
        out.append(
            torch.stack(terms).amax(0)
            if terms
            else torch.zeros(uv.shape[0], len(rows), dtype=u0.dtype, device=u0.device)
        )
    return out


# float64 rounding of the measured differences; the bounds are exact arithmetic on norms
_REL_TOL = 1e-9


def _check(
    bound: CorrectedBound,
    diffs: list[torch.Tensor],
    it: torch.Tensor,
    word_ids: np.ndarray,
    var: torch.Tensor,
    alphabet: Sequence[str],
    n: int,
) -> list[Violation]:
    """The measured values above the bound (at most 5 per layer and batch), with their inputs."""
    out = []
    for k, d in enumerate(diffs):
        b_other, b_flip = bound.other[k], bound.flipped[k]
        limit = torch.full_like(d, b_other * (1 + _REL_TOL) + 1e-12)
        rows = torch.arange(d.shape[0], device=d.device)
        limit[rows, it] = b_flip * (1 + _REL_TOL) + 1e-12
        bad = (d > limit).nonzero().tolist()
        for b, j in bad[:5]:
            i = int(it[b])
            out.append(
                Violation(
                    n=n,
                    layer=k,
                    position=j + 1,
                    flipped=i + 1,
                    word="".join(alphabet[int(c)] for c in word_ids),
                    replacement=alphabet[int(var[b, i])],
                    measured=float(d[b, j]),
                    bound=b_flip if j == i else b_other,
                )
            )
    return out


class _Accumulator:
    """Running max / sum of the per-layer statistics over (input, flip) pairs."""

    def __init__(self, n_layers: int) -> None:
        z = [0.0] * (n_layers + 1)
        self.count = 0
        self.other_count = 0
        self.last_max, self.last_sum = list(z), list(z)
        self.other_max, self.other_sum = list(z), list(z)
        self.flip_max = list(z)
        self.s_last_max, self.s_last_sum, self.s_other_max = list(z), list(z), list(z)

    def add(
        self,
        diffs: list[torch.Tensor],
        supp: list[torch.Tensor],
        it: torch.Tensor,
        rows: torch.Tensor,
    ) -> None:
        bsz, n = diffs[0].shape
        b = torch.arange(bsz, device=it.device)
        not_i = torch.ones(bsz, n, dtype=torch.bool, device=it.device)
        not_i[b, it] = False
        self.count += bsz
        self.other_count += bsz * (n - 1)
        for k, d in enumerate(diffs):
            self.last_max[k] = max(self.last_max[k], float(d[:, -1].max()))
            self.last_sum[k] += float(d[:, -1].sum())
            self.flip_max[k] = max(self.flip_max[k], float(d[b, it].max()))
            other = torch.where(not_i, d, torch.zeros_like(d))
            if bool(other.isnan().any()):  # positions not computed (long n, last layer)
                self.other_max[k] = math.nan
            else:
                self.other_max[k] = max(self.other_max[k], float(other.max()))
            self.other_sum[k] += float(other.sum())
        sel = not_i[:, rows]  # [B, R]: query rows that are not the flipped position
        for k, s in enumerate(supp, start=1):
            self.s_last_max[k] = max(self.s_last_max[k], float(s[:, -1].max()))
            self.s_last_sum[k] += float(s[:, -1].sum())
            other = torch.where(sel, s, torch.zeros_like(s))
            self.s_other_max[k] = max(self.s_other_max[k], float(other.max()))

    def finish(self, n: int) -> LengthStats:
        c, oc = max(1, self.count), max(1, self.other_count)
        return LengthStats(
            n=n,
            count=self.count,
            last_max=self.last_max,
            last_mean=[v / c for v in self.last_sum],
            other_max=self.other_max,
            other_mean=[v / oc for v in self.other_sum],
            flipped_max=self.flip_max,
            supp_last_max=self.s_last_max,
            supp_last_mean=[v / c for v in self.s_last_sum],
            supp_other_max=self.s_other_max,
        )

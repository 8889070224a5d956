"""Hahn's Lemma 5, computed and measured: how much one input symbol moves a soft transformer.

Two halves:

* **The bound** (:func:`lemma5_constants`, :func:`corrected_bound`, :func:`published_bound`).
  From a model's parameters: the activation bound ``F``, the attention-logit bound ``A``, the
  layer's Lipschitz constant ``L_f`` (products of spectral norms: sound), Hahn's
  ``C = 2(1 + e^{2A} + L_f)`` and his per-layer bounds ``C^{2k} D`` (the flipped position) and
  ``H^k C^{2k} D / n`` (every other position). The published proof misses the term
  ``Σ_w |â_w − â'_w| ‖y'_w‖`` (supplement S2); :func:`corrected_bound` is an explicit
  recursion for this architecture that includes it and is sound for *every* ``n >= 2``, not
  only asymptotically (derivation in docs/sensitivity.md). It is the bound the measurement is
  checked against.
* **The measurement** (:func:`measure_sensitivity`). For each length ``n``: random inputs, and
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
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.limits.variants import LONG_N, VariantRunner, full_residuals
from hardsoft.model import Transformer, parse_feature
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

# ----------------------------------------------------------------------------------------------
# statistics


def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile (``q > 1/2``) of Student's t distribution (``scipy.stats.t.ppf``)."""
    if not 0.5 < q < 1 or df <= 0:
        raise ValueError("t_quantile needs 1/2 < q < 1 and df > 0")
    from scipy.stats import t as student_t  # scipy is slow to import: only when fitting

    return float(student_t.ppf(q, df))


@dataclass
class Slope:
    """A least-squares fit ``log y = intercept + slope · log n`` with a t-interval."""

    slope: float
    ci: tuple[float, float]
    intercept: float
    n_points: int
    n_range: tuple[int, int]


def fit_slope(
    lengths: Sequence[int],
    values: Sequence[float],
    n_min: int | None = None,
    n_max: int | None = None,
    level: float = 0.95,
) -> Slope:
    """Fit the log-log slope of ``values`` against ``lengths`` on ``n_min <= n <= n_max``.

    The interval is the usual OLS one, ``slope ± t_{(1+level)/2, m−2} · se``; with only two
    points it is (−inf, inf). Zero or negative values cannot be fitted (HardsoftError)."""
    pts = [
        (float(n), float(v))
        for n, v in zip(lengths, values)
        if (n_min is None or n >= n_min) and (n_max is None or n <= n_max)
    ]
    if len(pts) < 2:
        raise HardsoftError("a slope needs at least two lengths in the fitting range")
    if any(not (v > 0 and math.isfinite(v)) for _, v in pts):
        raise HardsoftError("cannot fit a log-log slope to zero or non-finite values")
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    if sxx == 0:
        raise HardsoftError("a slope needs at least two distinct lengths")
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    m = len(pts)
    if m > 2:
        resid = y - (intercept + slope * x)
        se = math.sqrt(float((resid**2).sum()) / (m - 2) / sxx)
        half = t_quantile((1 + level) / 2, m - 2) * se
    else:
        half = math.inf
    n_lo, n_hi = int(min(p[0] for p in pts)), int(max(p[0] for p in pts))
    return Slope(slope, (slope - half, slope + half), intercept, m, (n_lo, n_hi))


# ----------------------------------------------------------------------------------------------
# the bound


def _norm2(m: torch.Tensor) -> float:
    """Spectral norm (0 for an empty matrix)."""
    if m.numel() == 0:
        return 0.0
    return float(torch.linalg.matrix_norm(m.detach().double().cpu(), ord=2))


def _vnorm(v: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(v.detach().double().cpu()))


def bound_applicability(model: Transformer) -> list[str]:
    """Why the bound cannot be computed for ``model`` (an empty list: it can).

    The recursion covers softmax heads without masks and without layer normalisation; other
    models are measured but not bounded."""
    reasons = []
    heads = [h for layer in model.spec.layers for h in layer.heads]
    if any(h.weighting != "softmax" for h in heads):
        reasons.append("hard-attention heads are not Lipschitz (Lemma 5 is about softmax)")
    if any(h.mask != "none" for h in heads):
        reasons.append("masked heads are not covered (the proof's attention is unmasked)")
    if model.spec.layer_norm != "none":
        reasons.append("layer normalisation is not covered by the recursion")
    return reasons


def _feature_sup(name: str) -> float | None:
    """A sound bound on ``‖f(i, n)‖_2`` over all i <= n for a bounded feature (None: unbounded
    or not known here)."""
    f = parse_feature(name)
    if not f.bounded:
        return None
    text = f.name
    if text.startswith("learned:"):
        return 1.0
    if text.startswith("sinusoidal:"):
        return math.sqrt(f.dim / 2)
    if f.dim == 1:
        # every bounded scalar feature of hardsoft.model.features (1, i/n, 1/i, 1/n, (-1)^i,
        # (i/n)^2, [i=1], [i=n], [i mod m = r]) and products of them lie in [-1, 1]
        return 1.0
    return None


@dataclass
class _Layer:
    m: list[float]  # ‖W_V W_O‖ per head
    qk: list[float]  # ‖W_Q W_K^T‖ per head (without the score scale)
    l_ffn: float  # Lipschitz constant of x -> x + FFN(x)
    ffn_bias: float  # ‖W_out‖‖b_in‖ + ‖b_out‖


def _layers(model: Transformer) -> list[_Layer]:
    out = []
    for block in model.blocks:
        m = [_norm2(h.W_V @ h.W_O) for h in block.heads]
        qk = [_norm2(h.W_Q @ h.W_K.T) for h in block.heads]
        if block.spec.d_ff:
            w_in, w_out = _norm2(block.W_in), _norm2(block.W_out)
            l_ffn = 1.0 + w_in * w_out
            bias = w_out * _vnorm(block.b_in) + _vnorm(block.b_out)
        else:
            l_ffn, bias = 1.0, 0.0
        out.append(_Layer(m, qk, l_ffn, bias))
    return out


def _embedding_difference(model: Transformer) -> float:
    """D: the largest ‖W_E[a] − W_E[b]‖ over symbol pairs."""
    we = model.W_E.detach().double().cpu()
    if we.shape[0] < 2:
        return 0.0
    return float(torch.cdist(we, we).max())


def _activation_bounds(layers: list[_Layer], f0: float) -> list[float]:
    """F_k for k = 0..L: bounds on every residual vector's norm after k layers."""
    fs = [f0]
    for lay in layers:
        g = fs[-1] * (1.0 + sum(lay.m))
        fs.append(lay.l_ffn * g + lay.ffn_bias)
    return fs


def _log_add_exp(a: float, b: float) -> float:
    hi, lo = max(a, b), min(a, b)
    return hi + math.log1p(math.exp(lo - hi)) if lo > -math.inf else hi


@dataclass
class Lemma5Constants:
    """The constants of Hahn's proof of Lemma 5 for one model (τ = 1 assumed, as in the lemma).

    ``F``: activation bound, ``A``: attention-logit bound, ``L_f``: Lipschitz constant of a
    layer as a function of (residual, head outputs), ``C = 2(1 + e^{2A} + L_f)`` (given as
    ``log10_C`` because e^{2A} overflows easily), ``H`` heads per layer, ``D`` the largest
    embedding change, ``L`` layers. ``applicable`` is False (with ``reasons``) when Lemma 5's
    assumptions fail: unbounded position features, a temperature τ(n), hard heads, masks, LN."""

    F: float
    A: float
    L_f: float
    log10_C: float
    H: int
    D: float
    L: int
    F_per_layer: list[float]
    applicable: bool
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def lemma5_constants(model: Transformer) -> Lemma5Constants:
    """Hahn's constants for ``model`` (n-independent; see :class:`Lemma5Constants`)."""
    reasons = bound_applicability(model)
    if not model.spec.bounded_positions:
        reasons.append("unbounded position features (Lemma 5 assumes bounded ones)")
    taus = [h.tau for layer in model.spec.layers for h in layer.heads if h.tau is not None]
    if taus:
        reasons.append(f"temperature τ(n) = {taus[0]} (Lemma 5 assumes τ = 1)")
    layers = _layers(model)
    we = model.W_E.detach().double().cpu()
    e_max = max((_vnorm(r) for r in we), default=0.0)
    pos = model.W_pos.detach().double().cpu()
    sups, p_bound, row = [], 0.0, 0
    for name in model.spec.position_features:
        f = parse_feature(name)
        sup = _feature_sup(name)
        sups.append(sup)
        if sup is not None:
            p_bound += sup * _norm2(pos[row : row + f.dim])
        row += f.dim
    known = [s for s in sups if s is not None]
    if len(known) < len(sups):
        f0 = math.inf
    else:
        whole = math.sqrt(sum(s * s for s in known)) * _norm2(pos) if known else 0.0
        f0 = e_max + min(p_bound, whole)
    fs = _activation_bounds(layers, f0)
    big_f = max(fs)
    a = 0.0
    for block, lay in zip(model.blocks, layers):
        for h, qk in zip(block.heads, lay.qk):
            s = 1.0 / math.sqrt(h.spec.d_head) if h.spec.scale and h.spec.d_head else 1.0
            a = max(a, s * qk * big_f * big_f)
    l_f = max((lay.l_ffn * max([1.0, *lay.m]) for lay in layers), default=1.0)
    log_c = math.log(2.0) + _log_add_exp(math.log1p(l_f), 2 * a) if math.isfinite(a) else math.inf
    return Lemma5Constants(
        F=big_f,
        A=a,
        L_f=l_f,
        log10_C=log_c / math.log(10),
        H=max((len(b.heads) for b in model.blocks), default=0),
        D=_embedding_difference(model),
        L=len(layers),
        F_per_layer=fs,
        applicable=not reasons,
        reasons=reasons,
    )


def published_bound(constants: Lemma5Constants, n: int) -> dict[str, list[float]]:
    """Hahn's published per-layer bounds at length ``n``, as log10 values for k = 0..L:
    ``flipped = log10(C^{2k} D)`` and ``other = log10(H^k C^{2k} D / n)`` (−inf at k = 0)."""
    c, d, h = constants.log10_C, constants.D, max(1, constants.H)
    log_d = math.log10(d) if d > 0 else -math.inf
    flipped = [2 * k * c + log_d for k in range(constants.L + 1)]
    other = [-math.inf] + [
        k * math.log10(h) + 2 * k * c + log_d - math.log10(n) for k in range(1, constants.L + 1)
    ]
    return {"flipped": flipped, "other": other}


@dataclass
class CorrectedBound:
    """Sound bounds at one length ``n`` for k = 0..L: ``flipped[k]`` on ‖y_i^(k) − y_i'^(k)‖ and
    ``other[k]`` on ‖y_j^(k) − y_j'^(k)‖ for every j ≠ i; ``supplement[k]`` bounds the missing
    term Σ_w |â_jw − â'_jw| ‖y'_w‖ (j ≠ i) of each head of layer k (0 at k = 0);
    ``activation[k]`` is F_k(n) and ``alpha[k]`` the largest weight one position can get."""

    n: int
    flipped: list[float]
    other: list[float]
    supplement: list[float]
    activation: list[float]
    alpha: list[float]


def corrected_bound(model: Transformer, n: int) -> CorrectedBound:
    """The explicit Lemma 5 recursion with the supplement's term, sound at this ``n`` (>= 2).

    Uses the exact activation bound at ``n`` (the largest ‖W_E[σ] + PE(i, n) W_pos‖) and the
    score scale at ``n`` (1/sqrt(d_head), 1/τ(n)), so it is also sound, though growing, for
    unbounded features or τ(n). HardsoftError if :func:`bound_applicability` objects."""
    reasons = bound_applicability(model)
    if reasons:
        raise HardsoftError("no Lemma 5 bound for this model: " + "; ".join(reasons))
    if n < 2:
        raise HardsoftError("the bound needs n >= 2")
    layers = _layers(model)
    every = torch.arange(len(model.spec.alphabet), device=model.device)[:, None].expand(-1, n)
    with torch.no_grad():  # layer 0 of every symbol at every position
        emb = model.embed(every).double().cpu()
    f0 = float(torch.linalg.vector_norm(emb, dim=-1).max())
    fs = _activation_bounds(layers, f0)
    p, r = _embedding_difference(model), 0.0
    flipped, other, supp, alphas = [p], [r], [0.0], [0.0]
    for k, (block, lay) in enumerate(zip(model.blocks, layers), start=1):
        big_f = fs[k - 1]
        r_mid, p_mid, s_max, a_max = r, p, 0.0, 0.0
        for head, m, qk in zip(block.heads, lay.m, lay.qk):
            kappa = head.score_scale(n) * qk
            a_log = kappa * big_f * big_f
            # α = e^{2A} / (e^{2A} + n − 1), computed without overflow
            alpha = 1.0 / (1.0 + (n - 1) * math.exp(-2 * a_log)) if a_log < 350 else 1.0
            a_max = max(a_max, alpha)
            # rows j ≠ i: logit of w = i moves by <= min(2A, κF(R + P)), others by <= 2κFR
            l1 = min(
                2.0, 2 * (alpha * min(2 * a_log, kappa * big_f * (r + p)) + 2 * kappa * big_f * r)
            )
            s_term = m * big_f * l1
            s_max = max(s_max, s_term)
            r_mid += m * (alpha * p + r) + s_term
            # row i itself: every logit moves
            l1_i = min(
                2.0, 2 * (alpha * min(2 * a_log, 2 * kappa * big_f * p) + kappa * big_f * (p + r))
            )
            p_mid += m * max(p, r) + m * big_f * l1_i
        cap = 2 * fs[k]
        p = min(lay.l_ffn * p_mid, cap)
        r = min(lay.l_ffn * r_mid, cap)
        flipped.append(p)
        other.append(r)
        supp.append(s_max)
        alphas.append(a_max)
    return CorrectedBound(n, flipped, other, supp, fs, alphas)


# ----------------------------------------------------------------------------------------------
# the measurement


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
            return None if s is None else {"slope": s.slope, "ci": list(s.ci), "range": s.n_range}

        main = fits["last_max"]
        return {
            "model": self.model_name,
            "lengths": self.lengths,
            "layers": self.layers,
            "max_influence": self.series("last_max"),
            "mean_influence": self.series("last_mean"),
            "bound": self.bound_series(),
            "slope": None if main is None else main.slope,
            "slope_ci": None if main is None else list(main.ci),
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

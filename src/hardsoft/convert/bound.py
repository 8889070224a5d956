"""The error bound of the softened model, with explicit constants read off the weights.

The argument is Yang, Strobl, Chiang & Angluin (TACL 2026)'s (the published version of the
preprint's Theorem 26, for general hard attention), checked and corrected here; the derivation
is in docs/soften.md. ``e_ℓ`` bounds |soft − hard| over residual coordinates entering layer ℓ
(``e_0 = 0``: the embeddings agree), ``A_ℓ`` (a vector over coordinates) bounds the hard model's
activations there, ``c(M)`` is the largest column sum of ``|M|``. Every hard head has a gap
temperature ``τ_h(n) = θ γ'_h(n)``, its own effective gap γ'_h (after the tie-break) times one
θ, so every head sees the gap ``1/θ`` in units of its temperature. With the score error
``δ <= e·a_h + e²·S_h`` (:class:`HeadConst`; plus a float64 slack), ``τ_min = θ γ'_h(N)`` and
at most N keys:

* unique-hard (with the tie-break): the weight off the hard choice is
  ``μ <= (N − 1) exp(−1/θ + 2δ/τ_min)``, so ``‖α̂ − α‖₁ <= λ = 2μ``;
* average-hard with scores: ``μ`` as above off the tie set T, and inside T the weights differ
  by up to the factor ``e^{2δ/τ}``: ``λ = (e^{2δ/τ_min} − 1) + 2μ`` (the first term is 0 for
  tieless heads, and is what the plain "T gets equal weights" argument misses after layer 1);
* uniform heads (``W_Q W_Kᵀ = 0``) are exact (``λ = 0``); softmax heads kept from the model move
  by ``λ = 2δ/τ_h`` (softmax is 2-Lipschitz from ∞ to 1 in its scaled scores);
* ``λ <= 2`` always. A head adds ``c_h e + λ·max_c (|W_V W_O|ᵀ A)_c`` to the residual error;
  the feed-forward multiplies it by ``φ_ℓ = 1 + max_c Σ_k |W_out[k, c]| Σ_r |W_in[r, k]|``; the
  output error is ``c(W_U) e_L`` (plus 2^-40 of the output's magnitude for rounding).

All of this holds at every length n <= N (activation bounds are sups over n <= N, or maxima
measured on the inputs the bound covers), in exact arithmetic. Float64 perturbs each score by
at most ``fp`` (:class:`HeadConst`); :func:`float_margin` reports how far every head's gap is
above that (the rounding is not in the bound: worst-case rounding of tied scores would
dominate it although tied keys usually compute bit-identical scores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from hardsoft.convert.gaps import INF, HeadGap
from hardsoft.convert.norms import blocks_of, col_norm, feature_sup
from hardsoft.model.spec import eval_tau
from hardsoft.model.transformer import Transformer

UNIT = 2.0**-53  # float64 unit roundoff
ROUNDING = 2.0**-40  # rounding allowed in an output, relative to the output's magnitude bound


@dataclass
class HeadConst:
    """One head's constants at its layer's activation bounds A (a vector over coordinates):
    ``c = c(W_V W_O)``; ``out = max_c (|W_V W_O|ᵀ A)_c`` bounds ‖v_j W_O‖∞; the score error is
    ``δ <= e·a + e²·S`` with ``S = σ Σ|M|``, ``a = σ (1ᵀ|M| A + Aᵀ|M| 1)``, ``M = W_Q W_Kᵀ``;
    ``fp`` bounds the float64 rounding of one score (Higham's γ_k for the two dot products,
    ``2 (d_model + d_head + 3) u σ Aᵀ|W_Q||W_K|ᵀA``): reported, not part of the bound."""

    layer: int
    head: int
    kind: str  # uniform | unique | average | softmax
    c: float
    out: float = 0.0
    a: float = 0.0
    S: float = 0.0
    fp: float = 0.0
    r: float = INF
    g_min: float = 1.0  # min over n <= N of the head's temperature gap: τ_h >= θ g_min
    tieless: bool = False
    tiebreak: float = 0.0
    tau_min: float = INF  # softmax heads kept from the model


@dataclass
class LayerConst:
    heads: list[HeadConst]
    phi: float


@dataclass
class Constants:
    """Everything the bound needs, for lengths n <= ``n_max``."""

    n_max: int
    c_U: float
    out_mag: float  # bound on |output| (for the float64 slack)
    layers: list[LayerConst]
    activations: list[float]  # max_c A_ℓ,c entering each layer
    measured_activations: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_max": self.n_max,
            "c_U": self.c_U,
            "activations": self.activations,
            "activations_measured": self.measured_activations,
            "layers": [
                {
                    "phi": lc.phi,
                    "heads": [
                        {
                            "layer": h.layer + 1,
                            "head": h.head + 1,
                            "kind": h.kind,
                            "c_h": h.c,
                            "value_bound": h.out,
                            "score_sensitivity": h.a,
                            "gap_ratio": h.r,
                        }
                        for h in lc.heads
                    ],
                }
                for lc in self.layers
            ],
        }


def _max(t: torch.Tensor) -> float:
    return float(t.max()) if t.numel() else 0.0


def _abs(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to("cpu", torch.float64).abs()


def _can_be_negative(name: str) -> bool:
    """Whether a position feature takes negative values (``(-1)^i``, sin/cos, their products)."""
    return any(p == "(-1)^i" or p.startswith("sinusoidal") for p in name.split("*"))


def input_interval(model: Transformer, n_max: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per coordinate, bounds ``lo <= x_i^(0) <= hi`` over all inputs of length n <= n_max."""
    from hardsoft.model.features import parse_feature

    f_lo, f_hi = [], []
    for name in model.spec.position_features:
        feat = parse_feature(name)
        sup = feature_sup(feat.name, n_max)
        f_lo += [-sup if _can_be_negative(feat.name) else 0.0] * feat.dim
        f_hi += [sup] * feat.dim
    W_E = model.W_E.detach().to("cpu", torch.float64)
    lo, hi = W_E.amin(0), W_E.amax(0)
    if f_lo:
        p_lo, p_hi = _interval_map(
            torch.tensor(f_lo, dtype=torch.float64),
            torch.tensor(f_hi, dtype=torch.float64),
            model.W_pos,
        )
        lo, hi = lo + p_lo, hi + p_hi
    return lo, hi


def _interval_map(lo: torch.Tensor, hi: torch.Tensor, w: torch.Tensor, b=None):
    """Bounds on ``x W (+ b)`` for ``lo <= x <= hi`` (interval arithmetic)."""
    W = w.detach().to("cpu", torch.float64)
    pos, neg = W.clamp_min(0.0), W.clamp_max(0.0)
    out_lo, out_hi = lo @ pos + hi @ neg, hi @ pos + lo @ neg
    if b is not None:
        bb = b.detach().to("cpu", torch.float64)
        out_lo, out_hi = out_lo + bb, out_hi + bb
    return out_lo, out_hi


def _propagate_block(block: Any, lo: torch.Tensor, hi: torch.Tensor):
    """Interval bounds after one layer: every head outputs a convex combination of its values
    (or 0 for a row with no allowed key); ReLU clamps at 0."""
    m_lo, m_hi = lo.clone(), hi.clone()
    for head in block.heads:
        v_lo, v_hi = _interval_map(lo, hi, head.W_V)
        if head.spec.mask.is_strict:  # the empty row outputs 0
            v_lo, v_hi = v_lo.clamp_max(0.0), v_hi.clamp_min(0.0)
        o_lo, o_hi = _interval_map(v_lo, v_hi, head.W_O)
        m_lo, m_hi = m_lo + o_lo, m_hi + o_hi
    if not block.spec.d_ff:
        return m_lo, m_hi
    z_lo, z_hi = _interval_map(m_lo, m_hi, block.W_in, block.b_in)
    f_lo, f_hi = _interval_map(z_lo.clamp_min(0.0), z_hi.clamp_min(0.0), block.W_out, block.b_out)
    return m_lo + f_lo, m_hi + f_hi


def activation_bounds(
    model: Transformer, n_max: int, booleans: set[int] | None = None
) -> list[torch.Tensor]:
    """Per-coordinate ``sup |x|`` entering each layer and after the last, over every input of
    length <= n_max, by interval propagation; ``booleans``: coordinates declared to hold exact
    0/1 values (a compiler's rounded Booleans) are kept in [0, 1]."""
    idx = torch.tensor(sorted(booleans or ()), dtype=torch.long)
    lo, hi = input_interval(model, n_max)
    out = []
    for block in blocks_of(model):
        lo[idx], hi[idx] = 0.0, 1.0
        out.append(torch.maximum(lo.abs(), hi.abs()))
        lo, hi = _propagate_block(block, lo, hi)
    lo[idx], hi[idx] = 0.0, 1.0
    out.append(torch.maximum(lo.abs(), hi.abs()))
    return out


def _head_const(head: Any, ell: int, h: int, A: torch.Tensor, gaps: dict, fallback, n_max: int):
    spec = head.spec
    sigma = 1.0 / math.sqrt(spec.d_head) if spec.scale and spec.d_head else 1.0
    ov = head.W_V @ head.W_O
    M = sigma * _abs(head.W_Q @ head.W_K.T)
    base = {
        "c": col_norm(ov),
        "out": _max(_abs(ov).T @ A),
        "a": float(M.sum(0) @ A + A @ M.sum(1)),
        "S": float(M.sum()),
        "fp": 2.0
        * (len(A) + spec.d_head + 3)
        * UNIT
        * sigma
        * float(A @ _abs(head.W_Q) @ _abs(head.W_K).T @ A),
    }
    if not spec.weighting.is_hard:
        tau_min = min(eval_tau(spec.tau, n) for n in _lengths(n_max))
        return HeadConst(ell, h, "softmax", tau_min=tau_min, **base)
    g: HeadGap = gaps[(ell, h)]
    if g.uniform and not spec.weighting.is_unique_hard:
        return HeadConst(ell, h, "uniform", c=base["c"], out=base["out"])
    coef, power = g.effective_gap()
    r = INF if coef == INF else 1.0  # τ_h(n) = θ γ'_h(n): every head sees the gap 1/θ
    c, p = g.temperature_gap(fallback)
    kind = "unique" if spec.weighting.is_unique_hard else "average"
    tb = g.tiebreak()[0] if g.needs_tiebreak else 0.0
    g_min = min(c / n**p for n in _lengths(n_max))
    return HeadConst(ell, h, kind, r=r, g_min=g_min, tieless=g.tieless, tiebreak=tb, **base)


def _lengths(n_max: int) -> list[int]:
    """1..N, or a dense subset for huge N (the expressions involved are monotone powers of n
    there, so their extremes are at the ends)."""
    if n_max <= 20000:
        return list(range(1, n_max + 1))
    return sorted({*range(1, 20001), n_max})


def constants(
    model: Transformer,
    gaps: list[HeadGap],
    fallback: tuple[float, int],
    n_max: int,
    activations: list[torch.Tensor] | None = None,
    booleans: set[int] | None = None,
) -> Constants:
    """Read the bound's constants off ``model`` (``fallback``: the temperature gap of scored
    heads with no gap of their own, see :meth:`HeadGap.temperature_gap`).
    ``activations``: measured per-coordinate maxima entering each layer (and after the last);
    default: :func:`activation_bounds` over every input of length <= n_max."""
    by_key = {(g.layer, g.head): g for g in gaps}
    layers: list[LayerConst] = []
    acts: list[float] = []
    measured = activations is not None
    with torch.no_grad():
        if activations is None:
            activations = activation_bounds(model, n_max, booleans)
        A = activations[0]
        for ell, block in enumerate(blocks_of(model)):
            heads = [
                _head_const(hd, ell, h, A, by_key, fallback, n_max)
                for h, hd in enumerate(block.heads)
            ]
            phi = 1.0 + _max(_abs(block.W_out).T @ _abs(block.W_in).sum(0))
            layers.append(LayerConst(heads, phi))
            acts.append(_max(A))
            A = activations[ell + 1]
        out_mag = _max(_abs(model.W_U).T @ A + _abs(model.b_U))
        c_U = col_norm(model.W_U)
    return Constants(n_max, c_U, out_mag, layers, acts, measured)


def head_weight_error(h: HeadConst, e: float, theta: float, k: Constants) -> float:
    """``λ``: a bound on ‖α̂ − α‖₁ for one head at residual error e (module docstring)."""
    if h.kind == "uniform":
        return 0.0
    delta = e * h.a + e * e * h.S
    if h.kind == "softmax":
        return min(2.0, 2.0 * delta / h.tau_min)
    tau_min = theta * h.g_min
    mu = 0.0
    if h.r != INF:
        expo = h.r / theta - 2.0 * delta / tau_min
        mu = min(1.0, (k.n_max - 1) * math.exp(-min(max(expo, -700.0), 700.0)))
    spread = 0.0
    if h.kind == "average" and not h.tieless:
        x = 2.0 * delta / tau_min
        spread = math.expm1(x) if x < 700 else INF
    return min(2.0, spread + 2.0 * mu)


def error_bound(k: Constants, theta: float) -> tuple[float, list[float]]:
    """The bound on |softened − hard| over every output coordinate at τ_h(n) = θ γ'_h(n), and the
    residual error bounds e_1..e_L after each layer."""
    e, trace = 0.0, []
    for lc in k.layers:
        e_att = e
        for h in lc.heads:
            lam = head_weight_error(h, e, theta, k)
            e_att += h.c * e + lam * h.out
        e = lc.phi * e_att
        trace.append(e)
    return k.c_U * e + ROUNDING * k.out_mag, trace


def float_margin(k: Constants) -> float:
    """min over scored heads of (the head's smallest gap τ_h/θ) / (its score rounding ``fp``):
    how many rounding errors fit in the smallest gap softmax must see."""
    ratios = [h.g_min / h.fp for lc in k.layers for h in lc.heads if h.r != INF and h.fp > 0]
    return min(ratios, default=INF)


def solve_theta(k: Constants, eps: float) -> float:
    """The largest θ (to 0.1%, on a log scale) whose bound is <= eps."""
    lo, hi = 1.0, 1.0
    while error_bound(k, lo)[0] > eps:
        lo /= 2.0
        if lo < 1e-300:
            raise ValueError("no temperature meets the bound")
    if lo == 1.0:
        while error_bound(k, hi * 2.0)[0] <= eps and hi < 1e6:
            hi *= 2.0
        lo, hi = hi, hi * 2.0
    else:
        hi = lo * 2.0
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if error_bound(k, mid)[0] <= eps:
            lo = mid
        else:
            hi = mid
    return lo

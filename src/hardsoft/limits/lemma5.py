"""Hahn's Lemma 5 bound, computed from a model's parameters (Hahn (2020) §5, supplement S2).

The activation bound ``F``, the attention-logit bound ``A``, the layer's Lipschitz constant
``L_f`` (products of spectral norms: sound), Hahn's ``C = 2(1 + e^{2A} + L_f)`` and his
per-layer bounds ``C^{2k} D`` (the flipped position) and ``H^k C^{2k} D / n`` (every other
position) (:func:`lemma5_constants`, :func:`published_bound`). The published proof misses the
term ``Σ_w |â_w − â'_w| ‖y'_w‖`` (supplement S2); :func:`corrected_bound` is an explicit
recursion for this architecture that includes it and is sound for *every* ``n >= 2``, not only
asymptotically (derivation in docs/sensitivity.md). It is the bound that
:func:`hardsoft.limits.sensitivity.measure_sensitivity` checks every measured value against;
the names are importable from ``hardsoft.limits.sensitivity`` too.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model import Transformer, parse_feature

__all__ = [
    "CorrectedBound",
    "Lemma5Constants",
    "bound_applicability",
    "corrected_bound",
    "lemma5_constants",
    "published_bound",
]


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

"""Average-hard → softmax with temperature τ(n) (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1)
Theorem 26), with a certificate.

The softmax transformer has *the same weights*; only every head's weighting becomes softmax
with the temperature ``τ(n)`` of :func:`certified_tau`. The bound (derived in docs/programs.md)
follows Theorem 26's proof, with explicit constants read off the weights:

* ``c(M)`` = the largest column sum of |M| (so ‖xM‖∞ ≤ c(M)‖x‖∞); ``β_h`` = Σ|W_Q W_Kᵀ|.
* activations: ‖x⁽⁰⁾‖∞ ≤ n^p (p = the largest degree of a position feature), and per layer
  A_mid ≤ A (1 + Σ_h c(W_V W_O)), A_out ≤ A_mid (1 + c(W_in) c(W_out) + c(W_out)‖b_in‖∞ +
  ‖b_out‖∞); so A_ℓ ≤ a_ℓ n^p.
* errors e_ℓ (soft − hard, ∞-norm, e_0 = 0): a uniform head is exact (error c_h e); a tieless
  head with gap γ whose score error δ = β_h e (2A + e) is ≤ γ/4 puts mass ≤ η = (n − 1)
  e^{−γ/(2τ)} off its maximum, adding ≤ 2 η c_h A; the feed-forward multiplies by
  φ_ℓ = 1 + c(W_in) c(W_out). Hence e_ℓ ≤ η n^p g_ℓ with g_{ℓ+1} = K_ℓ g_ℓ + I_ℓ,
  K_ℓ = φ_ℓ (1 + Σ_h c_h), I_ℓ = 2 φ_ℓ a_ℓ Σ_{tieless h} c_h.
* requirements: output error c(W_U) e_L ≤ ε; δ ≤ γ/4 at every tieless head (with e ≤ 1 ≤ A:
  12 β_h a_ℓ n^p e_ℓ ≤ γ); e_ℓ ≤ 1. All hold when η ≤ 1/H(n) with
  H(n) = n^p (c_U g_L/ε + G) + 12 Q n^{2p}/γ(n), G = max g_ℓ, Q = max β_h a_ℓ g_ℓ,
  which holds for τ(n) = γ(n) / (2 ln(1 + n H(n))).

With ε < 1/2, rounding every output to the nearest integer gives the AHAT's output exactly.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import torch

from hardsoft.convert.norms import col_norm, feature_degree, max_abs
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import ModelSpec, Weighting, eval_tau
from hardsoft.model.transformer import Transformer

DEFAULT_EPS = 0.25

# The norms are shared with the general simulation (hardsoft.convert); re-exported here.
_c = col_norm
_vmax = max_abs


def bound_constants(model: Transformer, uniform: list[list[bool]] | None = None) -> dict:
    """The constants of the bound (module docstring), read off the weights."""
    from hardsoft.programs.ahat.tieless import is_uniform

    if model.spec.layer_norm != "none":
        raise HardsoftError("the temperature bound is derived for models without layer norm")
    p = max((feature_degree(f) for f in model.spec.position_features), default=0)
    a, g = 1.0, 0.0
    layers = []
    big_g, big_q = 0.0, 0.0
    with torch.no_grad():
        for ell, block in enumerate(model.blocks):
            cs, tieless_c, betas = [], [], []
            for hi, head in enumerate(block.heads):
                c_h = _c(head.W_V @ head.W_O)
                cs.append(c_h)
                uni = uniform[ell][hi] if uniform is not None else is_uniform(head)
                if not uni:
                    tieless_c.append(c_h)
                    betas.append(float((head.W_Q @ head.W_K.T).abs().sum()))
            c1, c2 = _c(block.W_in), _c(block.W_out)
            phi = 1.0 + c1 * c2
            for beta in betas:
                big_q = max(big_q, beta * a * g)
            k_l = phi * (1.0 + sum(cs))
            i_l = 2.0 * phi * a * sum(tieless_c)
            layers.append({"a": a, "g": g, "K": k_l, "I": i_l, "betas": betas})
            a_mid = a * (1.0 + sum(cs))
            a = a_mid * (1.0 + c1 * c2 + c2 * _vmax(block.b_in) + _vmax(block.b_out))
            g = k_l * g + i_l
            big_g = max(big_g, g)
    c_u = max(_c(model.W_U), 1.0)
    return {"p": p, "c_U": c_u, "g_L": g, "G": big_g, "Q": big_q, "a_L": a, "layers": layers}


def certified_tau(model: Transformer, gap: str, eps: float = DEFAULT_EPS) -> tuple[str, dict]:
    """The temperature expression τ(n) of Theorem 26's bound (module docstring) and the
    constants it was computed from."""
    if not 0 < eps < 0.5:
        raise HardsoftError("eps must be in (0, 1/2) so that rounding recovers exact outputs")
    k = bound_constants(model)
    p = k["p"]
    if k["g_L"] == 0.0:
        return "1", k  # no tieless head: softmax equals the hard model at any temperature
    h1 = k["c_U"] * k["g_L"] / eps + k["G"]
    h2 = 12.0 * k["Q"]
    tau = f"({gap})/(2*log(1+n*({h1!r}*n**{p}+{h2!r}*n**{2 * p}/({gap}))))"
    return tau, k


def soften(model: Transformer, tau: str) -> Transformer:
    """The same transformer with every head's weighting replaced by softmax at τ(n) = ``tau``."""
    spec = model.spec
    layers = tuple(
        dataclasses.replace(
            layer,
            heads=tuple(
                dataclasses.replace(h, weighting=Weighting.SOFTMAX, tau=tau) for h in layer.heads
            ),
        )
        for layer in spec.layers
    )
    new_spec = ModelSpec.from_dict(
        {**spec.to_dict(), "layers": [dataclasses.asdict(x) for x in layers]}
    )
    soft = Transformer(new_spec, dtype=model.dtype).to(model.device)
    soft.load_state_dict(model.state_dict())
    soft.meta = copy.deepcopy(model.meta)
    soft.meta["target"] = "soft-temperature"
    return soft


def certificate(
    model: Transformer,
    gap: str,
    eps: float = DEFAULT_EPS,
    ns: tuple[int, ...] = (10, 100, 1000, 5000),
) -> dict[str, Any]:
    """Theorem 26's certificate: γ(n), the bound's constants, τ(n) and ε (with values at ``ns``)."""
    tau, k = certified_tau(model, gap, eps)
    return {
        "theorem": "Yang et al. (arXiv:2412.09925v1) Theorem 26 "
        "(uniform-tieless AHAT -> softmax, temperature)",
        "gap": gap,
        "tau": tau,
        "eps": eps,
        "rounding": "round every output to the nearest integer (eps < 1/2)",
        "depth": len(model.spec.layers),
        "activation_degree_p": k["p"],
        "max_parameter": max(
            float(t.abs().max()) for t in model.state_dict().values() if t.numel()
        ),
        "constants": {key: k[key] for key in ("c_U", "g_L", "G", "Q", "a_L")},
        "values": {
            str(n): {
                "gamma": eval_tau(gap, n),
                "tau": eval_tau(tau, n),
                "activation_bound": k["a_L"] * n ** k["p"],
            }
            for n in ns
        },
    }


__all__ = ["bound_constants", "certificate", "certified_tau", "feature_degree", "soften"]

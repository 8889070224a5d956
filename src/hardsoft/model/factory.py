"""Seeded random models, for tests and for the limits engines."""

from __future__ import annotations

import math

import torch

from hardsoft import memory, validate
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import HeadSpec, LayerNormPlacement, LayerSpec, Mask, ModelSpec, Weighting
from hardsoft.model.transformer import Transformer

DEFAULT_FEATURES = ("1", "i/n", "(-1)^i", "[i=1]", "[i=n]")


def random_model(
    *,
    alphabet: str | tuple[str, ...] = "01",
    layers: int = 2,
    heads: int = 2,
    d_model: int = 16,
    d_head: int | None = None,
    d_ff: int | None = None,
    weighting: Weighting | str = Weighting.SOFTMAX,
    mask: Mask | str = Mask.NONE,
    tau: str | None = None,
    position_features: tuple[str, ...] = DEFAULT_FEATURES,
    layer_norm: LayerNormPlacement | str = LayerNormPlacement.NONE,
    scale: bool = True,
    weight_scale: float = 1.0,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
) -> Transformer:
    """A transformer with Gaussian weights (std ``weight_scale/sqrt(fan_in)``), fully seeded.

    Every head shares ``weighting``, ``mask`` and ``tau``; ``d_head`` defaults to
    ``max(1, d_model // heads)`` and ``d_ff`` to ``2 * d_model``.
    """
    layers = validate.nonneg_int(layers, "layers")
    heads = validate.nonneg_int(heads, "heads")
    d_model = validate.positive_int(d_model, "d_model")
    d_head = d_head or max(1, d_model // max(1, heads))
    d_head = validate.positive_int(d_head, "d_head")
    d_ff = 2 * d_model if d_ff is None else validate.nonneg_int(d_ff, "d_ff")
    weight_scale = validate.real(weight_scale, "weight_scale", lo=0.0)
    seed = validate.seed(seed)
    # the parameters, estimated before the (layers x heads) spec is even built; the peak holds
    # the float64 model, its float32 zeros, one Gaussian draw and the final dtype's copy
    positions = sum(parse_feature(f).dim for f in position_features)
    per_layer = heads * 4 * d_model * d_head + 2 * d_model * d_ff + d_ff + d_model
    count = layers * per_layer + (len(alphabet) + positions + 1) * d_model
    memory.require(count * 24, f"a random model with about {count:,} parameters")
    head = HeadSpec(
        weighting=Weighting.parse(weighting, "weighting"),
        mask=Mask.parse(mask, "mask"),
        tau=tau,
        d_head=d_head,
        scale=scale,
    )
    spec = ModelSpec(
        alphabet=tuple(alphabet),
        d_model=d_model,
        layers=tuple(LayerSpec(heads=(head,) * heads, d_ff=d_ff) for _ in range(layers)),
        position_features=tuple(position_features),
        layer_norm=LayerNormPlacement.parse(layer_norm, "layer_norm"),
        name=f"random-{weighting}-L{layers}-H{heads}-d{d_model}-s{seed}",
    )
    model = Transformer(spec, dtype=torch.float64)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("ln1.weight", "ln2.weight", "ln_final.weight")):
                continue
            if p.dim() == 1:
                if name.endswith(("bias", "b_in", "b_out", "b_U")):
                    p.copy_(0.1 * weight_scale * torch.randn(p.shape, generator=gen, dtype=p.dtype))
                continue
            fan_in = max(1, p.shape[0])
            std = weight_scale / math.sqrt(fan_in)
            p.copy_(std * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    model.meta = {
        "origin": "random_model",
        "seed": seed,
        "weight_scale": weight_scale,
    }
    return model.to(dtype)

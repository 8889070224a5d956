"""The two trained architectures: hardsoft's soft-attention ``Transformer`` (future-masked, logits
through ``W_U``) and an LSTM baseline. Both map token ids ``[B, n]`` to logits ``[B, n, d_out]``
through :func:`logits`: ``|Σ| + 1`` next-symbol logits (``next:a`` ..., ``eos``) for the process
objective, one ``accept`` logit for a recognizer."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from hardsoft.errors import HardsoftError
from hardsoft.learn.readout import declare_readout
from hardsoft.model import (
    HeadSpec,
    LayerNormPlacement,
    LayerSpec,
    Mask,
    ModelSpec,
    Transformer,
    Weighting,
    load_model,
    save_model,
)
from hardsoft.model.io import atomic_write

ARCHS = ("transformer", "lstm")


@dataclass(frozen=True)
class ArchConfig:
    """Model options. Transformer: ``layers``, ``heads``, ``d_model``, ``d_ff`` (0: 2·d_model),
    ``features`` (position features, comma-separated), ``layer_norm``. LSTM: ``d_model`` (the
    embedding and hidden width) and ``layers``."""

    arch: str = "transformer"
    layers: int = 2
    heads: int = 2
    d_model: int = 32
    d_ff: int = 0
    features: str = "1,1/i,(-1)^i"
    layer_norm: str = "pre"


class LSTMModel(nn.Module):
    """Embedding -> LSTM -> linear readout of ``|Σ| + 1`` logits."""

    def __init__(self, n_symbols: int, d_out: int, d_model: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_symbols, d_model)
        self.lstm = nn.LSTM(d_model, d_model, num_layers=max(1, layers), batch_first=True)
        self.readout = nn.Linear(d_model, d_out)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(tokens))
        return self.readout(h)


def next_symbol_names(alphabet: tuple[str, ...]) -> tuple[str, ...]:
    """The outputs of a next-symbol predictor, named by what they predict: ``next:a`` per
    symbol, then ``eos`` (end of string)."""
    return (*(f"next:{a}" for a in alphabet), "eos")


def build_model(
    cfg: ArchConfig,
    alphabet: tuple[str, ...],
    seed: int,
    output_names: tuple[str, ...] | None = None,
) -> nn.Module:
    """A freshly initialised model (seeded) for ``alphabet``. Outputs: ``output_names`` (one
    coordinate each; default :func:`next_symbol_names`, ``|Σ| + 1`` next-symbol logits).
    Built on the CPU (the caller moves it), so a seed gives the same weights on every device."""
    with torch.device("cpu"):
        return _build_on_cpu(cfg, alphabet, seed, output_names)


def _build_on_cpu(
    cfg: ArchConfig, alphabet: tuple[str, ...], seed: int, output_names: tuple[str, ...] | None
) -> nn.Module:
    torch.manual_seed(seed)
    names = next_symbol_names(alphabet) if output_names is None else tuple(output_names)
    d_out = len(names)
    if cfg.arch == "lstm":
        return LSTMModel(len(alphabet), d_out, cfg.d_model, cfg.layers)
    if cfg.arch != "transformer":
        raise HardsoftError(f"unknown architecture {cfg.arch!r} (one of {', '.join(ARCHS)})")
    if cfg.heads < 1 or cfg.layers < 1 or cfg.d_model < 1:
        raise HardsoftError("layers, heads and d_model must be positive")
    features = tuple(f.strip() for f in cfg.features.split(",") if f.strip())
    head = HeadSpec(
        weighting=Weighting.SOFTMAX,
        mask=Mask.FUTURE,
        d_head=max(1, cfg.d_model // cfg.heads),
        scale=True,
    )
    spec = ModelSpec(
        alphabet=tuple(alphabet),
        d_model=cfg.d_model,
        layers=tuple(
            LayerSpec(heads=(head,) * cfg.heads, d_ff=cfg.d_ff or 2 * cfg.d_model)
            for _ in range(cfg.layers)
        ),
        position_features=features,
        layer_norm=LayerNormPlacement.parse(cfg.layer_norm, "layer_norm"),
        d_out=d_out,
        output_names=names,
        name=f"lm-transformer-L{cfg.layers}-H{cfg.heads}-d{cfg.d_model}",
    )
    model = Transformer(spec, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    depth_scale = 1.0 / math.sqrt(2 * cfg.layers)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() < 2:
                continue  # biases stay 0, layer-norm gains stay 1
            std = 1.0 / math.sqrt(max(1, p.shape[0]))
            if name.endswith(("W_O", "W_out")):
                std *= depth_scale
            p.copy_(std * torch.randn(p.shape, generator=gen))
    return model


def logits(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """``[B, n, d_out]`` logits for either architecture."""
    if isinstance(model, Transformer):
        return model(tokens).outputs
    return model(tokens)


def model_file(run_dir: Path, arch: str) -> Path:
    return Path(run_dir) / ("model.safetensors" if arch == "transformer" else "lstm.safetensors")


def save_trained(model: nn.Module, path: Path, meta: dict) -> None:
    """Transformers through :func:`hardsoft.model.save_model` (so ``hardsoft run`` and
    ``hardsoft sensitivity`` read them); LSTMs as a safetensors state dict with JSON metadata."""
    if isinstance(model, Transformer):
        model.meta = dict(meta)
        save_model(model, path)
        return
    from safetensors.torch import save_file

    tensors = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    atomic_write(path, lambda tmp: save_file(tensors, tmp, metadata={"meta": json.dumps(meta)}))


def load_trained(
    path: Path,
    cfg: ArchConfig,
    alphabet: tuple[str, ...],
    device: str,
    output_names: tuple[str, ...] | None = None,
) -> nn.Module:
    """Load a model written by :func:`save_trained` (HardsoftError if missing or corrupt);
    ``output_names`` as in :func:`build_model` (the LSTM's outputs)."""
    if not Path(path).is_file():
        raise HardsoftError(f"no trained model at {str(path)!r}")
    if cfg.arch == "transformer":
        return declare_readout(load_model(path, device=device))
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    model = build_model(cfg, alphabet, seed=0, output_names=output_names)
    try:
        model.load_state_dict(load_file(str(path), device="cpu"))
    except (SafetensorError, OSError, RuntimeError, ValueError) as exc:
        raise HardsoftError(f"cannot load the LSTM in {str(path)!r} ({exc})") from None
    return model.to(device)

"""Looking inside a model from the outside: where each head attends (``hardsoft run --trace``,
``--plot``), and how often two models' declared readouts agree (``hardsoft agree``; typically a
softmax model and its hardened self, :func:`hardsoft.convert.harden`).

Attention comes from the model's own trace (``model(tokens, trace=True)``, entries
``blocks.L.attn.H.pattern``); readouts from :func:`hardsoft.model.readout.acceptance_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.readout import Acceptance, acceptance_of
from hardsoft.model.transformer import Transformer


# ------------------------------------------------------------------------------- attention
def attention_patterns(model: Transformer, word: str) -> dict[str, np.ndarray]:
    """``blocks.L.attn.H`` -> the head's attention weights ``[n, n]`` (row: the attending
    position, column: the attended one) on ``word``, from the model's trace."""
    if not word:
        raise HardsoftError("the empty input has no positions to trace")
    with torch.no_grad():
        out = model(model.encode([word]), trace=True, chunk_size=None)
    trace = out.trace or {}
    return {
        name.removesuffix(".pattern"): t[0].detach().to(torch.float64).cpu().numpy()
        for name, t in trace.items()
        if name.endswith(".pattern")
    }


def attention_summary(model: Transformer, word: str) -> list[dict[str, Any]]:
    """Per head (layer and head 1-based): for each position ``i`` (1-based), the position it
    attends to most (``argmax``, 1-based; the leftmost of equal weights) and that weight."""
    heads = []
    for name, pattern in attention_patterns(model, word).items():
        _, layer, _, head = name.split(".")
        top = pattern.argmax(axis=1)
        heads.append(
            {
                "head": name,
                "layer": int(layer) + 1,
                "index": int(head) + 1,
                "argmax": [int(j) + 1 for j in top],
                "weight": [float(pattern[i, j]) for i, j in enumerate(top)],
            }
        )
    return heads


def plot_attention(model: Transformer, word: str, path: str | Path) -> Path:
    """A heat map per head (rows: layers, columns: heads) of the attention on ``word``, written
    to ``path`` (PNG) atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hardsoft.model.io import atomic_write

    patterns = attention_patterns(model, word)
    if not patterns:
        raise HardsoftError("the model has no attention heads to plot")
    layers = len(model.spec.layers)
    width = max(len(layer.heads) for layer in model.spec.layers)
    fig, axes = plt.subplots(
        layers, width, figsize=(2.8 * width + 0.6, 2.6 * layers + 0.4), squeeze=False
    )
    for ax in axes.flat:
        ax.set_visible(False)
    ticks = list(range(len(word)))
    labels = [f"{i}:{c}" for i, c in enumerate(word, 1)] if len(word) <= 24 else None
    for name, pattern in patterns.items():
        _, layer, _, head = name.split(".")
        ax = axes[int(layer), int(head)]
        ax.set_visible(True)
        image = ax.imshow(pattern, vmin=0.0, vmax=1.0, cmap="viridis")
        kind = model.spec.layers[int(layer)].heads[int(head)].weighting
        ax.set_title(f"layer {int(layer) + 1} head {int(head) + 1} ({kind})", fontsize=8)
        ax.set_xlabel("attended position (1-based)", fontsize=7)
        ax.set_ylabel("position", fontsize=7)
        if labels is not None:
            ax.set_xticks(ticks, labels, fontsize=6, rotation=90)
            ax.set_yticks(ticks, labels, fontsize=6)
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, label="attention weight")
    fig.suptitle(f"attention on {word[:60]!r}", fontsize=9)
    out = Path(path)
    atomic_write(out, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
    return out


def format_summary(heads: list[dict[str, Any]]) -> list[str]:
    """Text lines: per head, ``i->j (weight)`` for every position."""
    lines = []
    for h in heads:
        cells = " ".join(
            f"{i}->{j} ({w:.2f})" for i, (j, w) in enumerate(zip(h["argmax"], h["weight"]), 1)
        )
        lines.append(f"  layer {h['layer']} head {h['index']}: {cells}")
    return lines


# ------------------------------------------------------------------------------ agreement
def rounded_outputs(readout: Acceptance, outputs: torch.Tensor) -> torch.Tensor:
    """Every output coordinate rounded the way the readout reads coordinates: ``y_k >
    threshold`` for a ``coordinate`` readout, ``softmax(y)_k > threshold`` for ``eos``."""
    if readout.kind == "eos":
        return torch.softmax(outputs.to(torch.float64), dim=-1) > readout.threshold
    return outputs > readout.threshold


@dataclass
class AgreementRow:
    """One length: the fraction of positions and of strings where the two models' acceptance
    bits (read at every prefix position) agree, and the same for every output coordinate
    rounded by each model's readout (None when the models' output widths differ)."""

    n: int
    strings: int
    accept_positions: float
    accept_strings: float
    outputs_positions: float | None
    outputs_strings: float | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


AGREEMENT_BATCH = 64
"""Words per forward pass in :func:`agreement`, and per ``progress`` call."""


@torch.no_grad()
def _readouts(model: Transformer, words: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    readout = acceptance_of(model)
    out = torch.as_tensor(np.stack(model.run_words(words, batch_size=AGREEMENT_BATCH)))
    return readout.accept(out), rounded_outputs(readout, out)


def agreement(
    a: Transformer,
    b: Transformer,
    words: Sequence[str],
    progress: Callable[[int], None] | None = None,
) -> AgreementRow:
    """How often ``a`` and ``b`` agree on ``words`` (all of one length, at least one).

    Both models read the words in batches of :data:`AGREEMENT_BATCH`; after each batch,
    ``progress(k)`` is called with its size ``k`` (the row is the same with or without it)."""
    words = list(words)
    if not words or len({len(w) for w in words}) != 1 or not words[0]:
        raise HardsoftError("agreement needs non-empty words of one length")
    parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = []
    for start in range(0, len(words), AGREEMENT_BATCH):
        batch = words[start : start + AGREEMENT_BATCH]
        parts.append((*_readouts(a, batch), *_readouts(b, batch)))
        if progress is not None:
            progress(len(batch))
    acc_a, out_a, acc_b, out_b = (torch.cat(t) for t in zip(*parts))
    same_acc = acc_a == acc_b
    row = AgreementRow(
        len(words[0]),
        len(words),
        float(same_acc.double().mean()),
        float(same_acc.all(dim=1).double().mean()),
        None,
        None,
    )
    if out_a.shape == out_b.shape:
        same_out = (out_a == out_b).all(dim=-1)
        row.outputs_positions = float(same_out.double().mean())
        row.outputs_strings = float(same_out.all(dim=1).double().mean())
    return row


def check_same_alphabet(a: Transformer, b: Transformer) -> None:
    """Two models compared position by position must read the same symbols."""
    if tuple(a.spec.alphabet) != tuple(b.spec.alphabet):
        raise HardsoftError(
            f"the models read different alphabets ({''.join(a.spec.alphabet)!r} and "
            f"{''.join(b.spec.alphabet)!r})"
        )

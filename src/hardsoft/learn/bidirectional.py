"""An unmasked (bidirectional) soft-attention next-symbol predictor, trained at the last
position only.

Lemma 5 and Theorem 6 of Hahn (2020) §6 hold for transformers with or without a future mask.
Without a mask, position t also sees the symbols after it, so only the prediction at the last
position is a next-symbol prediction: the loss is the exact-target cross-entropy at the last
position of each training prefix (lengths uniform on ``[min_n, max_n]``, as in
:func:`hardsoft.learn.train.train`). The run folder has the files ``hardsoft train`` writes
(``config.json``, ``model.safetensors``, ``metrics.json``), so :func:`hardsoft.learn.load_run`
and ``hardsoft evaluate`` read it (evaluate's cross-entropy is measured at the last position);
a finished run is reused, an unfinished one is trained again from the start.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hardsoft.learn.data import get_process, sample_batch, training_length
from hardsoft.learn.models import build_model, logits, save_trained
from hardsoft.learn.train import TrainConfig, exact_cross_entropy, lr_at
from hardsoft.model import Mask, Transformer
from hardsoft.model.io import atomic_write

OBJECTIVE = "last position (unmasked attention)"


def unmasked(model: Transformer) -> Transformer:
    """The same transformer with every head's mask removed (same weights)."""
    layers = tuple(
        dataclasses.replace(
            layer, heads=tuple(dataclasses.replace(h, mask=Mask.NONE) for h in layer.heads)
        )
        for layer in model.spec.layers
    )
    spec = dataclasses.replace(model.spec, layers=layers, name=model.spec.name + "-unmasked")
    out = Transformer(spec, dtype=torch.float32)
    out.load_state_dict(model.state_dict())
    return out


def _finished(run: Path, cfg: TrainConfig) -> dict[str, Any] | None:
    """The stored metrics of a finished run with this configuration, else None."""
    try:
        same = json.loads((run / "config.json").read_text()) == cfg.to_dict()
        metrics = json.loads((run / "metrics.json").read_text())
    except (OSError, ValueError):
        return None
    ok = same and (run / "model.safetensors").is_file() and metrics.get("objective") == OBJECTIVE
    return metrics if ok and metrics.get("steps_done") == cfg.steps else None


def train_last_position(cfg: TrainConfig, run_dir: str | Path) -> dict[str, Any]:
    """Train an unmasked transformer (``cfg.arch``) at the last position; returns the metrics
    (also ``metrics.json``). CPU, float32, AdamW with ``cfg``'s schedule and clipping."""
    cfg.validate()
    if cfg.arch.arch != "transformer":
        raise ValueError("the last-position objective is for transformers")
    run = Path(run_dir)
    done = _finished(run, cfg)
    if done is not None:
        return done
    run.mkdir(parents=True, exist_ok=True)
    process = get_process(cfg.language, cfg.p)
    built = build_model(cfg.arch, process.alphabet, cfg.seed)
    assert isinstance(built, Transformer)
    model = unmasked(built)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    for step in range(cfg.steps):
        rng = np.random.default_rng([cfg.seed, step])
        n = training_length(rng, cfg.min_n, cfg.max_n)
        batch = sample_batch(process, n, cfg.batch_size, rng)
        for group in opt.param_groups:
            group["lr"] = lr_at(cfg, step)
        out = logits(model, batch.tokens)[:, -1]
        loss = exact_cross_entropy(out, batch.targets[:, -1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        losses.append(float(loss.detach()))
    meta = {"origin": "hardsoft train", "objective": OBJECTIVE, "step": cfg.steps}
    save_trained(model, run / "model.safetensors", {**meta, "config": cfg.to_dict()})
    metrics = {
        "objective": OBJECTIVE,
        "steps_done": cfg.steps,
        "steps": cfg.steps,
        "seconds": time.perf_counter() - started,
        "final_loss": float(np.mean(losses[-10:])) if losses else None,
    }
    for name, obj in (("config.json", cfg.to_dict()), ("metrics.json", metrics)):
        _write(run / name, json.dumps(obj, indent=1))
    return metrics


def _write(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))

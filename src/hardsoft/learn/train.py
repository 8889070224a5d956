"""The training loop: exact-target cross-entropy on Hahn's processes (objective ``process``) or
binary cross-entropy of whole-string membership (``recognizer``, Butoi et al. 2025, see
:mod:`hardsoft.learn.recognize`), AdamW with warmup and a cosine schedule, rich progress, and a
resumable run folder::

    run/config.json          the TrainConfig (JSON)
    run/model.safetensors    the transformer (hardsoft.model format), or run/lstm.safetensors
    run/optimizer.pt         optimizer + step (the checkpoint's other half)
    run/metrics.json         loss history, throughput, steps done

Batch ``s`` is drawn from ``numpy.random.default_rng([seed, s])``, so a resumed run sees exactly
the batches an uninterrupted one would have seen.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from pickle import UnpicklingError
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hardsoft import memory
from hardsoft import validate as check
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language
from hardsoft.learn.data import Batch, get_process, sample_batch, training_length
from hardsoft.learn.models import ARCHS, ArchConfig, build_model, load_trained, logits, model_file
from hardsoft.learn.models import save_trained as _save_model
from hardsoft.learn.readout import TRAIN_ORIGIN, process_readout
from hardsoft.learn.recognize import (
    ACCEPT_NAME,
    Objective,
    acceptance_meta,
    accuracy_by_length,
    default_objective,
    recognizer_batch,
    recognizer_loss,
    resolve_objective,
)
from hardsoft.model import parse_feature
from hardsoft.model.io import atomic_write

SCHEDULES = ("cosine", "constant")
MAX_STEPS = 10**8
"""The most training steps one run takes: about a day at 1 ms a step, the smallest models'
pace on a CPU (10^15 was once accepted, and ran silently for ever)."""
_CORRUPT = (OSError, RuntimeError, ValueError, KeyError, TypeError, EOFError, UnpicklingError)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a training run (saved as config.json)."""

    language: str = "parity"
    objective: str | None = None  # None: process where one exists, else recognizer
    p: float | None = None
    arch: ArchConfig = field(default_factory=ArchConfig)
    min_n: int = 1
    max_n: int = 40
    steps: int = 2000
    batch_size: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.01
    warmup: int = 100
    schedule: str = "cosine"
    grad_clip: float = 1.0
    seed: int = 0
    log_every: int = 25
    checkpoint_every: int = 500
    val_max_n: int = 80  # recognizer: validation lengths min_n..val_max_n (Butoi et al. 2025)

    def __post_init__(self) -> None:
        if self.objective is None and isinstance(self.language, str):
            object.__setattr__(self, "objective", str(default_objective(self.language)))

    def validate(self) -> None:
        """Every field checked for type and range (NaN and inf refused), so a config from
        the command line, from Python or from a run folder's config.json is refused the same
        way, in one line."""
        if not isinstance(self.language, str):
            raise HardsoftError(f"language must be a name, got {self.language!r}")
        if self.p is not None:
            check.real(self.p, "p")
        objective = resolve_objective(self.language, self.objective)
        if objective is Objective.PROCESS:
            get_process(self.language, self.p)
        elif self.p is not None:
            raise HardsoftError("p is a process parameter: it does not apply to a recognizer")
        check.positive_int(self.min_n, "min_n")
        check.positive_int(self.max_n, "max_n")
        if not self.min_n <= self.max_n:
            raise HardsoftError(f"need 1 <= min_n <= max_n, got {self.min_n}, {self.max_n}")
        check.integer(self.steps, "steps", lo=0, hi=MAX_STEPS)
        check.positive_int(self.batch_size, "batch_size")
        check.real(self.lr, "lr", lo=0.0, lo_open=True)
        check.real(self.weight_decay, "weight_decay", lo=0.0)
        check.real(self.grad_clip, "grad_clip", lo=0.0)
        check.nonneg_int(self.warmup, "warmup")
        check.seed(self.seed)
        check.positive_int(self.log_every, "log_every")
        check.positive_int(self.checkpoint_every, "checkpoint_every")
        check.positive_int(self.val_max_n, "val_max_n")
        if not isinstance(self.arch, ArchConfig):
            raise HardsoftError(f"arch must be an ArchConfig, got {self.arch!r}")
        for name in ("layers", "heads", "d_model"):
            check.positive_int(getattr(self.arch, name), name)
        check.nonneg_int(self.arch.d_ff, "d_ff")
        if not isinstance(self.arch.features, str) or not isinstance(self.arch.layer_norm, str):
            raise HardsoftError("features and layer_norm must be strings")
        if self.arch.arch not in ARCHS:
            known = ", ".join(ARCHS)
            raise HardsoftError(f"unknown architecture {self.arch.arch!r} (one of {known})")
        if self.arch.arch == "transformer":
            for name in self.arch.features.split(","):
                if name.strip():
                    parse_feature(name)
        if self.schedule not in SCHEDULES:
            known = ", ".join(SCHEDULES)
            raise HardsoftError(f"unknown schedule {self.schedule!r} (one of {known})")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> TrainConfig:
        if not isinstance(d, dict) or not isinstance(d.get("arch", {}), dict):
            raise HardsoftError("malformed training config: expected an object with an arch object")
        known = {f.name for f in fields(TrainConfig)}
        try:
            arch = ArchConfig(**d.get("arch", {}))
            return TrainConfig(
                **{k: v for k, v in d.items() if k in known and k != "arch"}, arch=arch
            )
        except TypeError as exc:
            raise HardsoftError(f"malformed training config: {exc}") from None


def is_recognizer(cfg: TrainConfig) -> bool:
    """Whether ``cfg`` trains a recognizer (:mod:`hardsoft.learn.recognize`)."""
    return cfg.objective == Objective.RECOGNIZER


def alphabet_of(cfg: TrainConfig) -> tuple[str, ...]:
    """The input alphabet of the run: the recognized language's or the process's."""
    if is_recognizer(cfg):
        return get_language(cfg.language).alphabet
    return get_process(cfg.language, cfg.p).alphabet


def output_names_of(cfg: TrainConfig) -> tuple[str, ...] | None:
    """``("accept",)`` for a recognizer; None (next-symbol names) for a process."""
    return (ACCEPT_NAME,) if is_recognizer(cfg) else None


def _write_json(path: Path, obj: Any) -> None:
    text = json.dumps(obj, indent=1)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))


def read_json(path: Path) -> Any:
    try:
        return json.loads(check.read_text(path, "file"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise HardsoftError(f"{str(path)!r} is not valid JSON ({exc})") from None


def load_config(run_dir: Path) -> TrainConfig:
    """The TrainConfig of a run folder."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise HardsoftError(f"{str(run_dir)!r} is not a training run (no config.json)")
    cfg = TrainConfig.from_dict(read_json(path))
    try:
        cfg.validate()
    except HardsoftError as exc:
        raise HardsoftError(f"{str(path)!r}: {exc}") from None
    return cfg


def require_memory(cfg: TrainConfig, device: str = "cpu") -> None:
    """Refuse a configuration whose parameters (with AdamW's two moments and the gradient) or
    whose activations kept for the backward pass at the longest training length cannot fit,
    before the model is built (float32; attention weights n² per head and layer)."""
    a, n, b = cfg.arch, cfg.max_n, cfg.batch_size
    d, d_ff = a.d_model, a.d_ff or 2 * a.d_model
    if a.arch == "lstm":
        params = 8 * a.layers * d * d + 8 * d
        acts = b * n * a.layers * 10 * d
    else:
        d_head = max(1, d // a.heads)
        params = a.layers * (4 * a.heads * d * d_head + 2 * d * d_ff + d_ff + 6 * d)
        acts = b * a.layers * (n * (a.heads * (3 * d_head + d) + 2 * d_ff + 6 * d))
        acts += b * a.layers * a.heads * n * n
    memory.require(4 * (4 * params + 2 * acts), f"training with {params:,} parameters", device)


def lr_at(cfg: TrainConfig, step: int) -> float:
    """Linear warmup for ``warmup`` steps, then constant or cosine decay to 10%."""
    if cfg.warmup and step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    if cfg.schedule == "constant" or cfg.steps <= cfg.warmup:
        return cfg.lr
    frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))


def exact_cross_entropy(out: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over positions of −Σ_c p_c log softmax(out)_c (p: the exact distribution)."""
    return -(targets * F.log_softmax(out, dim=-1)).sum(-1).mean()


@dataclass
class RunState:
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    step: int
    history: list[dict[str, float]]
    tokens: int
    seconds: float


def _init_state(cfg: TrainConfig, run: Path, device: str, resume: bool) -> RunState:
    alphabet, names = alphabet_of(cfg), output_names_of(cfg)
    ckpt = run / "optimizer.pt"
    if resume and (run / "config.json").is_file() and ckpt.is_file():
        old = load_config(run)
        same = {**old.to_dict(), "steps": cfg.steps} == {**cfg.to_dict(), "steps": cfg.steps}
        if not same:
            raise HardsoftError(
                f"{str(run)!r} holds a run with a different configuration; "
                "use another folder or --no-resume"
            )
        model = load_trained(model_file(run, cfg.arch.arch), cfg.arch, alphabet, device, names)
        model = model.to(device=device, dtype=torch.float32)
        opt = _optimizer(cfg, model)
        try:
            state = torch.load(ckpt, map_location=device, weights_only=True)
            opt.load_state_dict(state["optimizer"])
            step = check.nonneg_int(state["step"], "step")
        except (
            OSError,
            RuntimeError,
            ValueError,
            KeyError,
            TypeError,
            EOFError,
            UnpicklingError,
        ) as exc:
            raise HardsoftError(f"corrupt checkpoint {str(ckpt)!r} ({exc})") from None
        metrics = read_json(run / "metrics.json") if (run / "metrics.json").is_file() else {}
        if not isinstance(metrics, dict):
            raise HardsoftError(f"{str(run / 'metrics.json')!r} is not a JSON object")
        return RunState(
            model,
            opt,
            step,
            metrics.get("history", []),
            int(metrics.get("tokens", 0)),
            float(metrics.get("seconds", 0.0)),
        )
    model = build_model(cfg.arch, alphabet, cfg.seed, names).to(device)
    return RunState(model, _optimizer(cfg, model), 0, [], 0, 0.0)


def _optimizer(cfg: TrainConfig, model: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)


def _checkpoint(cfg: TrainConfig, run: Path, st: RunState) -> None:
    acceptance = (
        acceptance_meta(cfg.language)
        if is_recognizer(cfg)
        else process_readout(cfg.language, cfg.p).to_dict()
    )
    meta = {
        "origin": TRAIN_ORIGIN,
        "step": st.step,
        "config": cfg.to_dict(),
        "acceptance": acceptance,
    }
    _save_model(st.model, model_file(run, cfg.arch.arch), meta)
    state = {"optimizer": st.optimizer.state_dict(), "step": st.step}
    atomic_write(run / "optimizer.pt", lambda tmp: torch.save(state, tmp))
    _write_json(run / "metrics.json", _metrics(cfg, st))


def _metrics(cfg: TrainConfig, st: RunState) -> dict[str, Any]:
    tail = [h["loss"] for h in st.history[-10:]]
    return {
        "steps_done": st.step,
        "steps": cfg.steps,
        "tokens": st.tokens,
        "seconds": st.seconds,
        "tokens_per_second": st.tokens / st.seconds if st.seconds > 0 else None,
        "final_loss": float(np.mean(tail)) if tail else None,
        "history": st.history,
    }


def train(
    cfg: TrainConfig,
    run_dir: str | Path,
    *,
    device: str = "cpu",
    resume: bool = True,
    show_progress: bool = True,
    stop_after: int | None = None,
) -> dict[str, Any]:
    """Train (or resume) the run in ``run_dir``; returns the metrics dict (also metrics.json).

    ``stop_after`` ends this call after that many steps (checkpointed), as an interruption
    would; calling again resumes."""
    cfg.validate()
    device = check.device(device)
    require_memory(cfg, device)
    run = check.output_dir(run_dir, "run folder")
    try:
        run.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HardsoftError(f"cannot create the run folder {str(run)!r}: {exc.strerror}") from None
    draw, batch_loss = _batches(cfg), _loss(cfg)
    st = _init_state(cfg, run, device, resume)
    _write_json(run / "config.json", cfg.to_dict())
    st.model.train()
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn(f"train {cfg.arch.arch} on {cfg.language} ({cfg.objective})"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} loss {task.fields[loss]}"),
        TimeRemainingColumn(),
        disable=not show_progress,
        transient=True,
    )
    running: list[torch.Tensor] = []  # on the device: no host sync per step (a GPU stall)
    end = cfg.steps if stop_after is None else min(cfg.steps, st.step + stop_after)
    with progress, Prefetch(draw, st.step, end) as batches:
        task = progress.add_task("train", total=cfg.steps, completed=st.step, loss="-")
        while st.step < end:
            started = time.perf_counter()
            batch = batches.get(st.step).to(device)
            for group in st.optimizer.param_groups:
                group["lr"] = lr_at(cfg, st.step)
            loss, tokens = batch_loss(st.model, batch), batch.tokens.numel()
            st.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(st.model.parameters(), cfg.grad_clip)
            st.optimizer.step()
            st.step += 1
            st.tokens += tokens
            st.seconds += time.perf_counter() - started
            running.append(loss.detach())
            if st.step % cfg.log_every == 0 or st.step == cfg.steps:
                mean = float(torch.stack(running).double().mean())
                st.history.append({"step": st.step, "loss": mean, "lr": lr_at(cfg, st.step - 1)})
                running = []
                progress.update(task, completed=st.step, loss=f"{mean:.4f}")
            if st.step % cfg.checkpoint_every == 0 or st.step == end:
                _checkpoint(cfg, run, st)
    if st.step == 0 or not model_file(run, cfg.arch.arch).is_file():
        _checkpoint(cfg, run, st)
    metrics = _metrics(cfg, st)
    if is_recognizer(cfg) and st.step == cfg.steps:
        metrics["validation"] = validation(cfg, st.model, device)
        _write_json(run / "metrics.json", metrics)
    return metrics


def _batches(cfg: TrainConfig) -> Callable[[int], Any]:
    """``draw(step)``: batch ``step`` of the run, on the CPU. Its length and its strings come
    from ``numpy.random.default_rng([seed, step])`` alone (exact samples of the process, or
    labelled strings for a recognizer), so any step's batch is the same however it is drawn:
    in order, after a resume, or ahead of time by :class:`Prefetch`."""
    if is_recognizer(cfg):
        lang = get_language(cfg.language)

        def recognizer_draw(step: int) -> Any:
            rng = np.random.default_rng([cfg.seed, step])
            n = training_length(rng, cfg.min_n, cfg.max_n)
            return recognizer_batch(lang, n, cfg.batch_size, rng, device="cpu")

        return recognizer_draw
    process = get_process(cfg.language, cfg.p)

    def process_draw(step: int) -> Batch:
        rng = np.random.default_rng([cfg.seed, step])
        n = training_length(rng, cfg.min_n, cfg.max_n)
        return sample_batch(process, n, cfg.batch_size, rng, device="cpu")

    return process_draw


def _loss(cfg: TrainConfig) -> Callable[[torch.nn.Module, Any], torch.Tensor]:
    """The objective's loss of a model on one batch."""
    if is_recognizer(cfg):
        return lambda model, b: recognizer_loss(logits(model, b.tokens), b.labels)
    return lambda model, b: exact_cross_entropy(logits(model, b.tokens), b.targets)


class Prefetch:
    """Batches ``first .. end-1`` of :func:`_batches`, each drawn one step ahead in a worker
    thread while the model trains on the one before (torch releases the GIL in its kernels, so
    the exact sampler's Python runs meanwhile: the sampling and target building cost ~30 % of
    an LSTM step on DYCK-2 when drawn in line; benchmarks/results/train_throughput.md). The
    batches are the same as drawn in line: each comes from its own step's generator."""

    def __init__(self, draw: Callable[[int], Any], first: int, end: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.draw, self.end = draw, end
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="hardsoft-batches")
        self.ahead = self._submit(first)

    def _submit(self, step: int) -> Any:
        return self.pool.submit(self.draw, step) if step < self.end else None

    def get(self, step: int) -> Any:
        """Batch ``step`` (the steps must be asked for in order)."""
        if self.ahead is None:
            raise HardsoftError(f"batch {step} is past the end of this run ({self.end})")
        batch = self.ahead.result()
        self.ahead = self._submit(step + 1)
        return batch

    def __enter__(self) -> Prefetch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def validation(cfg: TrainConfig, model: torch.nn.Module, device: str = "cpu") -> dict[str, Any]:
    """A recognizer's accuracy on lengths ``min_n..val_max_n`` (16 strings per length), and on
    the training lengths and the longer ones separately (Butoi et al. 2025's validation)."""
    lengths = list(range(cfg.min_n, max(cfg.min_n, cfg.val_max_n) + 1))
    rows = accuracy_by_length(
        model, get_language(cfg.language), lengths, samples=16, seed=99991, device=device
    )
    model.train()
    inside = [r.accuracy for r in rows if r.n <= cfg.max_n]
    beyond = [r.accuracy for r in rows if r.n > cfg.max_n]
    return {
        "lengths": [lengths[0], lengths[-1]],
        "accuracy": float(np.mean([r.accuracy for r in rows])),
        "train_lengths": float(np.mean(inside)) if inside else None,
        "longer": float(np.mean(beyond)) if beyond else None,
    }


def load_run(run_dir: str | Path, device: str = "cpu") -> tuple[TrainConfig, torch.nn.Module]:
    """The config and the trained model of a run folder."""
    run = Path(run_dir)
    cfg = load_config(run)
    path = model_file(run, cfg.arch.arch)
    model = load_trained(path, cfg.arch, alphabet_of(cfg), device, output_names_of(cfg))
    return cfg, model.to(device).eval()

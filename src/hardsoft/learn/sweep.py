"""Sweeps: a grid of ``hardsoft train`` runs (languages × architectures × seeds × any train
option), each a job on an executor (in-process or Ray, :mod:`hardsoft.learn.executors`).

Every cell trains into its own run folder under the sweep folder, exactly the folder
``hardsoft train`` writes. Sweeps are resumable: a cell whose folder holds a finished run of the
same configuration is skipped, an interrupted one resumes from its checkpoint (``train`` does
that), so rerunning a sweep after a crash only does the missing work.

Axes multiply (a Cartesian product) unless they are *zipped*: zipped axes vary together and
need lists of the same length (``min_n`` and ``max_n`` for "train at exactly n").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.learn.executors import LocalExecutor, RayExecutor
from hardsoft.learn.models import ArchConfig, model_file
from hardsoft.learn.train import TrainConfig, load_config, read_json, train

ARCH_FIELDS = tuple(f.name for f in fields(ArchConfig) if f.name != "arch")
TRAIN_FIELDS = tuple(f.name for f in fields(TrainConfig) if f.name != "arch")
# Options an LSTM ignores: its cells keep the defaults, so a grid over them trains it once.
_TRANSFORMER_ONLY = ("heads", "d_ff", "features", "layer_norm")
_KEY_FIRST = ("language", "arch", "seed")


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: its configuration, its folder and the grid values that name it."""

    config: TrainConfig
    dir: Path
    key: dict[str, Any]


def make_config(values: dict[str, Any]) -> TrainConfig:
    """A TrainConfig from flat option names (``language``, ``arch``, ``d_model``, ``max_n``...);
    the LSTM ignores transformer-only options, which keep their defaults."""
    unknown = set(values) - set(TRAIN_FIELDS) - set(ARCH_FIELDS) - {"arch"}
    if unknown:
        raise HardsoftError(f"unknown training option {sorted(unknown)[0]!r}")
    arch_values = {k: v for k, v in values.items() if k in ARCH_FIELDS or k == "arch"}
    if arch_values.get("arch") == "lstm":
        arch_values = {k: v for k, v in arch_values.items() if k not in _TRANSFORMER_ONLY}
    cfg = TrainConfig(
        **{k: v for k, v in values.items() if k in TRAIN_FIELDS}, arch=ArchConfig(**arch_values)
    )
    cfg.validate()
    return cfg


def flag(name: str) -> str:
    """The command-line spelling of a grid option (``seed`` -> ``--seeds``)."""
    return "--seeds" if name == "seed" else f"--{name.replace('_', '-')}"


def _slug(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", str(value)).strip("_") or "_"


def cell_name(key: dict[str, Any]) -> str:
    """The run folder's name: ``language-arch-s<seed>`` then ``option=value`` per other axis."""
    head = [str(key.get("language", "")), str(key.get("arch", ""))]
    if "seed" in key:
        head.append(f"s{key['seed']}")
    rest = [f"{k}={_slug(v)}" for k, v in key.items() if k not in _KEY_FIRST]
    return "-".join([h for h in head if h] + rest)


def _blocks(axes: dict[str, list[Any]], zipped: Sequence[str]) -> list[list[dict[str, Any]]]:
    """The grid's factors: one block for the zipped axes, one per other axis."""
    for name, values in axes.items():
        if not values:
            raise HardsoftError(f"empty grid: {flag(name)} has no values")
    zipped = list(dict.fromkeys(zipped))
    missing = [z for z in zipped if z not in axes]
    if missing:
        raise HardsoftError(f"--zip names {missing[0]!r}, which is not a grid option")
    blocks = []
    if zipped:
        sizes = {z: len(axes[z]) for z in zipped}
        if len(set(sizes.values())) > 1:
            shown = ", ".join(f"{flag(k)} has {v}" for k, v in sizes.items())
            raise HardsoftError(f"mismatched comma lists for zipped options: {shown} values")
        blocks.append([dict(zip(zipped, row)) for row in zip(*(axes[z] for z in zipped))])
    blocks += [[{k: v} for v in vals] for k, vals in axes.items() if k not in zipped]
    return blocks


def grid_cells(
    axes: dict[str, list[Any]], out: str | Path, zipped: Sequence[str] = ()
) -> list[Cell]:
    """Every cell of the grid (validated before anything runs); options with more than one
    value name the run folders. Cells that are the same run (an LSTM over a transformer-only
    option) are kept once."""
    out = Path(out)
    varied = [k for k, v in axes.items() if len(v) > 1 or k in _KEY_FIRST]
    cells: dict[Path, Cell] = {}
    for combo in itertools.product(*_blocks(axes, zipped)):
        values: dict[str, Any] = {}
        for part in combo:
            values.update(part)
        try:
            cfg = make_config(values)
        except (HardsoftError, TypeError) as exc:
            shown = ", ".join(f"{k}={v}" for k, v in values.items() if k in varied)
            raise HardsoftError(f"grid cell {shown}: {exc}") from None
        key = {k: values[k] for k in _KEY_FIRST if k in values}
        key.update({k: values[k] for k in varied if k not in _KEY_FIRST})
        if cfg.arch.arch == "lstm":
            key = {k: v for k, v in key.items() if k not in _TRANSFORMER_ONLY}
        cell = Cell(cfg, out / cell_name(key), key)
        if cell.dir in cells and cells[cell.dir].config != cfg:
            raise HardsoftError(f"two grid cells share the folder {cell.dir.name!r}")
        cells.setdefault(cell.dir, cell)
    if not cells:
        raise HardsoftError("empty grid: nothing to run")
    return list(cells.values())


def is_complete(run_dir: Path, cfg: TrainConfig) -> bool:
    """True when ``run_dir`` holds a finished run of exactly ``cfg`` (so the cell is skipped)."""
    run = Path(run_dir)
    if not (run / "metrics.json").is_file() or not model_file(run, cfg.arch.arch).is_file():
        return False
    try:
        same = load_config(run) == cfg
        done = read_json(run / "metrics.json").get("steps_done")
    except HardsoftError:
        return False
    return same and done == cfg.steps


def summary(metrics: dict[str, Any]) -> dict[str, Any]:
    """A run's metrics without the loss history."""
    return {k: v for k, v in metrics.items() if k != "history"}


def train_cell(config: dict[str, Any], run_dir: str, device: str = "cpu") -> dict[str, Any]:
    """The job of one cell (module level, so Ray can ship it): train or skip, return metrics."""
    cfg = TrainConfig.from_dict(config)
    if is_complete(Path(run_dir), cfg):
        return {**summary(read_json(Path(run_dir) / "metrics.json")), "status": "skipped"}
    metrics = train(cfg, run_dir, device=device, show_progress=False)
    return {**summary(metrics), "status": "trained"}


def run_cells(
    cells: Sequence[Cell],
    executor: LocalExecutor | RayExecutor,
    *,
    device: str = "cpu",
    on_done: Callable[[Cell, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Train every cell on ``executor``; one entry per cell, in grid order: its key, ``dir``,
    ``status`` (trained, skipped or failed), the metrics (``final_loss``...) or ``error``."""
    jobs = [(c.config.to_dict(), str(c.dir), device) for c in cells]
    runs: list[dict[str, Any]] = [{} for _ in cells]
    for k, (state, value) in executor.map(train_cell, jobs):
        entry = {**cells[k].key, "dir": str(cells[k].dir)}
        entry.update(value if state == "ok" else {"status": "failed", "error": value})
        runs[k] = entry
        if on_done is not None:
            on_done(cells[k], entry)
    return runs


def parse_axis(name: str, text: str, kind: type, sep: str = ",") -> list[Any]:
    """One comma list (``features``: ``;``-separated, as a feature set has commas)."""
    parts = [p.strip() for p in str(text).split(sep)]
    if not any(parts):
        raise HardsoftError(f"empty grid: {flag(name)} has no values")
    if any(not p for p in parts):
        raise HardsoftError(f"{flag(name)} has an empty entry in {text!r}")
    try:
        return [_convert(p, kind) for p in parts]
    except ValueError:
        raise HardsoftError(f"{flag(name)} expects {kind.__name__} values, got {text!r}") from None


def _convert(text: str, kind: type) -> Any:
    if kind is float and text.lower() in ("none", "default"):
        return None
    return kind(text)


def sweep_json(executor_name: str, runs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The sweep's JSON: ``{"executor", "runs": [...]}`` with failure counts."""
    runs = list(runs)
    return {
        "executor": executor_name,
        "runs": runs,
        "trained": sum(r.get("status") == "trained" for r in runs),
        "skipped": sum(r.get("status") == "skipped" for r in runs),
        "failed": sum(r.get("status") == "failed" for r in runs),
    }

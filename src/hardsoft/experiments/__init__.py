"""The experiment registry: one module per paper result, each registering a function
``Context -> Result``. ``hardsoft reproduce`` runs every registered experiment, stores the
records and builds the report from the store.

To add an experiment, create a module in this package::

    from hardsoft.experiments import Context, Result, Table, register

    @register("my-experiment", title="What it shows", version="1", order=50)
    def run(ctx: Context) -> Result:
        ...
        fig = ctx.figure_path("my-figure.png")   # write a PNG there
        return Result(metrics={...}, figures=[fig.name], tables=[Table(...)], summary="...")

Bump ``version`` whenever the experiment's code changes so stored results are recomputed.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Context:
    """What an experiment gets: the mode, where to write figures, a seed, the device, and
    where independent jobs run (``executor``: local or ray; ``address``: a Ray cluster)."""

    quick: bool
    figures_dir: Path
    seed: int = 0
    device: str = "cpu"
    executor: str = "local"
    address: str | None = None

    def figure_path(self, name: str) -> Path:
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        return self.figures_dir / name


@dataclass
class Table:
    """A table for the report: a title, column names and rows of plain values."""

    title: str
    columns: list[str]
    rows: list[list[Any]]

    def to_dict(self) -> dict:
        return {"title": self.title, "columns": self.columns, "rows": self.rows}


@dataclass
class Result:
    """An experiment's record: JSON-serializable metrics, figure file names (PNG, relative to
    the figures folder), tables and a short Markdown summary of what the result shows."""

    metrics: dict[str, Any]
    figures: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    summary: str = ""


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    version: str
    order: int
    run: Callable[[Context], Result]
    seed_ref: str = ""


_REGISTRY: dict[str, Experiment] = {}


def register(
    name: str, *, title: str, version: str, order: int = 100, seed_ref: str = ""
) -> Callable[[Callable[[Context], Result]], Callable[[Context], Result]]:
    """Register ``fn`` as the experiment ``name`` (unique)."""

    def deco(fn: Callable[[Context], Result]) -> Callable[[Context], Result]:
        if name in _REGISTRY and _REGISTRY[name].run is not fn:
            raise ValueError(f"experiment {name!r} registered twice")
        _REGISTRY[name] = Experiment(name, title, version, order, fn, seed_ref)
        return fn

    return deco


def all_experiments() -> list[Experiment]:
    """Every experiment module in this package, imported and sorted by ``order``."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return sorted(_REGISTRY.values(), key=lambda e: (e.order, e.name))

"""``hardsoft reproduce``: run every registered experiment, store records, build the report.

Experiments whose stored record is current are skipped (resumable). A failing experiment is
recorded in the run's summary but never overwrites a stored good result; the report is rebuilt
from the store at the end, so it always shows the latest good record of every experiment.
"""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from hardsoft import __version__, validate
from hardsoft.errors import HardsoftError
from hardsoft.experiments import Context, Experiment, all_experiments
from hardsoft.report import ResultStore, write_report
from hardsoft.report.store import store_lock


def git_commit() -> str | None:
    """The commit of the source tree hardsoft runs from, if it is a git checkout."""
    try:
        res = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


def select(names: list[str] | None) -> list[Experiment]:
    exps = all_experiments()
    if not names:
        return exps
    known = {e.name: e for e in exps}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise HardsoftError(f"unknown experiment {unknown[0]!r} (known: {', '.join(known)})")
    return [known[n] for n in names]


def run_experiment(exp: Experiment, ctx: Context, mode: str) -> dict[str, Any]:
    """Run one experiment and return its full record (raises what the experiment raises)."""
    torch.manual_seed(ctx.seed)
    start = time.perf_counter()
    result = exp.run(ctx)
    duration = time.perf_counter() - start
    return {
        "name": exp.name,
        "title": exp.title,
        "seed_ref": exp.seed_ref,
        "version": exp.version,
        "mode": mode,
        "status": "ok",
        "config": {"quick": ctx.quick, "seed": ctx.seed, "device": ctx.device},
        "package_version": __version__,
        "git_commit": git_commit(),
        "python_version": platform.python_version(),
        "torch_version": torch.__version__,
        "machine": f"{platform.machine()} {platform.node()}",
        "device": ctx.device,
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": duration,
        "metrics": result.metrics,
        "figures": list(result.figures),
        "tables": [t.to_dict() for t in result.tables],
        "summary": result.summary,
    }


def _experiment_job(exp: Experiment, ctx: Context, mode: str) -> dict[str, Any]:
    """One experiment as an executor job (module level, so Ray can ship it)."""
    return run_experiment(exp, ctx, mode)


def _outcomes(
    exps: list[Experiment], ctx: Context, mode: str
) -> Iterator[tuple[Experiment, dict[str, Any]]]:
    """``(experiment, record)`` as each finishes; a failure's record is ``{"error", ...}``.

    ``ctx.executor == "ray"`` runs the experiments as parallel Ray tasks (each can submit its
    own grid, e.g. the learning experiment's); otherwise one after another in this process."""
    if ctx.executor == "local":
        for exp in exps:
            try:
                yield exp, run_experiment(exp, ctx, mode)
            except Exception as exc:  # one broken experiment must not lose the others
                yield (
                    exp,
                    {
                        "error": f"{type(exc).__name__}: {exc}",
                        "traceback": traceback.format_exc(limit=6),
                    },
                )
        return
    from hardsoft.learn.executors import make_executor

    executor = make_executor(ctx.executor, address=ctx.address)
    for k, (state, value) in executor.map(_experiment_job, [(e, ctx, mode) for e in exps]):
        yield exps[k], (value if state == "ok" else {"error": value, "traceback": ""})


def _run_locked(
    out: Path, exps: list[Experiment], mode: str, ctx: Context, force: bool, show_progress: bool
) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]:
    """Run the experiments whose stored record is not current (same experiment and package
    version, mode, seed and device), store them, rebuild the report; the lock is held."""
    store = ResultStore(out / "results.sqlite")
    ran: list[dict[str, Any]] = []
    skipped: list[str] = []
    failed: list[dict[str, Any]] = []
    try:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            disable=not show_progress,
            transient=False,
        ) as progress:
            task = progress.add_task("reproduce", total=len(exps))
            pending = []
            for exp in exps:
                current = store.is_current(
                    exp.name, mode, exp.version, __version__, seed=ctx.seed, device=ctx.device
                )
                if current and not force:
                    skipped.append(exp.name)
                    progress.advance(task)
                else:
                    pending.append(exp)
            progress.update(task, description=", ".join(e.name for e in pending[:1]))
            for exp, record in _outcomes(pending, ctx, mode):
                if "error" in record:
                    failed.append({"name": exp.name, **record})
                else:
                    store.put(record)
                    ran.append({"name": exp.name, "duration_s": record["duration_s"]})
                progress.update(task, description=f"{exp.name} done")
                progress.advance(task)
        known = {e.name: e for e in all_experiments()}
        # titles and references are presentation: the registry's current ones, not the stored
        records = sorted(
            (
                {**r, "title": known[r["name"]].title, "seed_ref": known[r["name"]].seed_ref}
                for r in store.all(mode)
                if r["name"] in known
            ),
            key=lambda r: known[r["name"]].order,
        )
        write_report(out, records, title=f"hardsoft report ({mode})")
    finally:
        store.close()
    return ran, skipped, failed


def reproduce(
    out: Path,
    *,
    quick: bool = True,
    only: list[str] | None = None,
    force: bool = False,
    seed: int = 0,
    device: str = "cpu",
    show_progress: bool = True,
    executor: str = "local",
    address: str | None = None,
) -> dict[str, Any]:
    """Run the experiments into ``out`` and rebuild ``out/index.html`` and ``out/report.md``.

    ``executor="ray"`` runs them as Ray tasks (a local Ray, or the cluster at ``address``,
    whose workers must see ``out``). The run folder is locked for the duration (a second
    ``reproduce`` into it is refused: :func:`hardsoft.report.store.store_lock`)."""
    device = validate.device(device)
    seed = validate.seed(seed)
    mode = "quick" if quick else "full"
    out = validate.output_dir(out, "out")
    exps = select(only)
    if executor != "local" or address:
        from hardsoft.learn.executors import make_executor

        make_executor(executor, address=address)  # validate before anything runs
    ctx = Context(
        quick=quick,
        figures_dir=out.absolute() / "figures",
        seed=seed,
        device=device,
        executor=executor,
        address=address,
    )
    with store_lock(out):
        ran, skipped, failed = _run_locked(out, exps, mode, ctx, force, show_progress)
    return {
        "out": str(out),
        "mode": mode,
        "ran": ran,
        "skipped": skipped,
        "failed": failed,
        "report": str(out / "index.html"),
        "store": str(out / "results.sqlite"),
    }

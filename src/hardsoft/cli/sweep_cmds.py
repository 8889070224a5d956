"""``hardsoft sweep train``: a grid of training runs, in-process or as tasks on Ray."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    device_option,
    err_console,
    int_option,
    output_dir_option,
    print_json,
)
from hardsoft.errors import HardsoftError

sweep_app = typer.Typer(
    help="Grids of runs (languages × architectures × seeds × options), locally or on Ray.",
    no_args_is_help=True,
)
app.add_typer(sweep_app, name="sweep")

# Grid options of `sweep train`: the TrainConfig / ArchConfig field and the value type.
_AXES: dict[str, type] = {
    "language": str,
    "objective": str,
    "arch": str,
    "seed": int,
    "p": float,
    "min_n": int,
    "max_n": int,
    "steps": int,
    "batch_size": int,
    "lr": float,
    "weight_decay": float,
    "warmup": int,
    "schedule": str,
    "layers": int,
    "heads": int,
    "d_model": int,
    "d_ff": int,
    "features": str,
    "layer_norm": str,
    "checkpoint_every": int,
    "val_max_n": int,
}


def _grid(options: dict[str, str | None]) -> dict[str, list[Any]]:
    from hardsoft.learn.sweep import parse_axis

    axes = {}
    for name, text in options.items():
        if text is None:
            continue
        sep = ";" if name == "features" else ","
        axes[name] = parse_axis(name, text, _AXES[name], sep)
    return axes


def _print_runs(result: dict[str, Any]) -> None:
    for r in result["runs"]:
        if r["status"] == "failed":
            err_console.print(f"failed {r['dir']}: {r['error']}", style="red")
        else:
            loss = r.get("final_loss")
            shown = "-" if loss is None else f"{loss:.4f}"
            console.print(f"{r['status']:8s} {r['dir']}: final loss {shown}")
    console.print(
        f"{len(result['runs'])} runs on {result['executor']}: {result['trained']} trained, "
        f"{result['skipped']} skipped (complete), {result['failed']} failed"
    )


@sweep_app.command("train")
def sweep_train_cmd(
    out: Path = output_dir_option(help="The sweep folder (one run folder per cell)."),
    language: str = typer.Option(
        "parity", "--language", help="Comma list: parity,dyck2,first,... (any language)."
    ),
    objective: str = typer.Option(
        None,
        "--objective",
        help="Comma list: process, recognizer (default per language: process where one exists).",
    ),
    arch: str = typer.Option("transformer", "--arch", help="Comma list: transformer,lstm."),
    seeds: str = typer.Option("0", "--seeds", help="Comma list of seeds."),
    p: str = typer.Option(None, "--p", help="Process parameters (default 0.5 / 0.3)."),
    min_n: str = typer.Option(None, "--min-n", help="Shortest training prefixes."),
    max_n: str = typer.Option(None, "--max-n", help="Longest training prefixes."),
    steps: str = typer.Option(None, "--steps", help="Training steps."),
    batch_size: str = typer.Option(None, "--batch-size", help="Prefixes per batch."),
    lr: str = typer.Option(None, "--lr", help="Peak learning rates."),
    weight_decay: str = typer.Option(None, "--weight-decay", help="AdamW weight decays."),
    warmup: str = typer.Option(None, "--warmup", help="Warmup steps."),
    schedule: str = typer.Option(None, "--schedule", help="cosine, constant."),
    layers: str = typer.Option(None, "--layers", help="Layers (LSTM too)."),
    heads: str = typer.Option(None, "--heads", help="Heads per layer (transformer)."),
    d_model: str = typer.Option(None, "--d-model", help="Widths (LSTM: hidden size)."),
    d_ff: str = typer.Option(None, "--d-ff", help="Feed-forward widths (0: 2*d_model)."),
    features: str = typer.Option(
        None,
        "--features",
        help="Position-feature sets separated by ';' (e.g. '1,1/i;1,1/i,(-1)^i').",
    ),
    layer_norm: str = typer.Option(None, "--layer-norm", help="Comma list: none,pre,post."),
    checkpoint_every: str = typer.Option(
        None, "--checkpoint-every", help="Checkpoint intervals (steps)."
    ),
    val_max_n: str = typer.Option(
        None, "--val-max-n", help="Recognizer: longest validation lengths."
    ),
    zip_axes: str = typer.Option(
        None,
        "--zip",
        help="Options that vary together instead of multiplying, e.g. 'min-n,max-n' (their "
        "lists must have the same length).",
    ),
    executor: str = typer.Option("local", "--executor", help="local (in-process) or ray."),
    address: str = typer.Option(
        None, "--address", help="A Ray cluster (HOST:PORT, auto, ray://...); default: a local Ray."
    ),
    cpus: int = int_option(None, "--cpus", lo=1, help="CPUs of a local Ray (default: all)."),
    device: str = device_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Train every cell of a grid; each cell's run folder is the one `hardsoft train` writes.

    Every option takes a comma list (`--features` a ';' list); lists multiply into a grid
    unless `--zip` pairs them. Cells whose folder holds a finished run of the same
    configuration are skipped, interrupted ones resume. Exit code 1 if a cell failed."""
    from hardsoft.learn.executors import make_executor
    from hardsoft.learn.sweep import grid_cells, run_cells, sweep_json

    options = {k: v for k, v in locals().items() if k in _AXES}
    options["seed"] = seeds
    axes = _grid(options)
    zipped = [z.strip().replace("-", "_") for z in (zip_axes or "").split(",") if z.strip()]
    zipped = ["seed" if z == "seeds" else z for z in zipped]
    cells = grid_cells(axes, out, zipped)
    ex = make_executor(executor, address=address, num_cpus=cpus)
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise HardsoftError("--device cuda was requested but no CUDA device is available")
    result = sweep_json(ex.name, run_cells(cells, ex, device=device))
    if as_json:
        print_json(result)
    else:
        _print_runs(result)
    if result["failed"]:
        raise typer.Exit(1)

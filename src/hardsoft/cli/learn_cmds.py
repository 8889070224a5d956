"""``hardsoft train`` and ``hardsoft evaluate``: learning Hahn's PARITY and 2DYCK processes."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from hardsoft.cli import app
from hardsoft.cli.common import console, print_json
from hardsoft.errors import HardsoftError


@app.command("train")
def train_cmd(
    out: Path = typer.Option(..., "-o", "--out", help="The run folder (created or resumed)."),
    language: str = typer.Option("parity", "--language", help="parity or dyck2."),
    arch: str = typer.Option("transformer", "--arch", help="transformer or lstm."),
    p: float = typer.Option(None, "--p", help="Process parameter (default 0.5 / 0.3)."),
    max_n: int = typer.Option(40, "--max-n", min=1, help="Longest training prefix."),
    min_n: int = typer.Option(1, "--min-n", min=1, help="Shortest training prefix."),
    steps: int = typer.Option(2000, "--steps", min=0),
    batch_size: int = typer.Option(32, "--batch-size", min=1),
    lr: float = typer.Option(3e-3, "--lr"),
    weight_decay: float = typer.Option(0.01, "--weight-decay"),
    warmup: int = typer.Option(100, "--warmup", min=0),
    schedule: str = typer.Option("cosine", "--schedule", help="cosine or constant."),
    seed: int = typer.Option(0, "--seed"),
    layers: int = typer.Option(2, "--layers", min=1),
    heads: int = typer.Option(2, "--heads", min=1, help="Transformer heads per layer."),
    d_model: int = typer.Option(32, "--d-model", min=1, help="Width (LSTM: hidden size)."),
    d_ff: int = typer.Option(0, "--d-ff", min=0, help="Feed-forward width (0: 2*d_model)."),
    features: str = typer.Option(
        "1,1/i,(-1)^i", "--features", help="Comma-separated position features."
    ),
    layer_norm: str = typer.Option("pre", "--layer-norm", help="none, pre or post."),
    checkpoint_every: int = typer.Option(500, "--checkpoint-every", min=1),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue a saved run."),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Train a next-symbol predictor on exact samples of Hahn's process (exact-target loss).

    The run folder holds config.json, the model (model.safetensors for transformers, readable by
    `hardsoft run` and `hardsoft sensitivity`), optimizer.pt and metrics.json."""
    from hardsoft.learn import ArchConfig, TrainConfig, train

    cfg = TrainConfig(
        language=language,
        p=p,
        arch=ArchConfig(
            arch=arch,
            layers=layers,
            heads=heads,
            d_model=d_model,
            d_ff=d_ff,
            features=features,
            layer_norm=layer_norm,
        ),
        min_n=min_n,
        max_n=max_n,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        weight_decay=weight_decay,
        warmup=warmup,
        schedule=schedule,
        seed=seed,
        checkpoint_every=checkpoint_every,
    )
    if arch not in ("transformer", "lstm"):
        raise HardsoftError(f"--arch must be transformer or lstm, got {arch!r}")
    metrics = train(cfg, out, device=device, resume=resume, show_progress=not as_json)
    summary = {k: v for k, v in metrics.items() if k != "history"}
    summary["run"] = str(out)
    if as_json:
        print_json(summary)
    else:
        tps = summary["tokens_per_second"]
        console.print(
            f"{out}: {summary['steps_done']} steps, final loss {summary['final_loss']:.4f} nats, "
            f"{tps:.0f} tokens/s"
            if tps
            else f"{out}: {summary['steps_done']} steps"
        )


@app.command("evaluate")
def evaluate_cmd(
    run: Path = typer.Argument(..., metavar="RUN", help="A `hardsoft train` run folder."),
    lengths: str = typer.Option("1,2,...,256", "--lengths", help="Prefix lengths n."),
    samples: int = typer.Option(256, "--samples", min=1, help="Prefixes per length."),
    generalization: str = typer.Option(
        None,
        "--generalization",
        help="Test lengths for per-token accuracy (e.g. '41,100,...,500'); off by default.",
    ),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Cross-entropy by prefix length against the optimal and unigram-chance cross-entropy."""
    from hardsoft.cli.sensitivity_cmds import parse_lengths
    from hardsoft.learn import cross_entropy_by_length, get_process, length_generalization
    from hardsoft.learn.evaluate import majority_baseline
    from hardsoft.learn.train import load_run

    ns = parse_lengths(lengths)
    if min(ns) < 1:
        raise HardsoftError("--lengths must be >= 1")
    cfg, model = load_run(run, device=device)
    process = get_process(cfg.language, cfg.p)
    rows = cross_entropy_by_length(model, process, ns, samples=samples, device=device)
    result = {
        "run": str(run),
        "language": cfg.language,
        "arch": cfg.arch.arch,
        "p": process.p,
        "train_max_n": cfg.max_n,
        "rows": [r.to_dict() for r in rows],
        "mean_gap": sum(r.gap for r in rows) / len(rows),
    }
    if generalization:
        test = parse_lengths(generalization, "--generalization")
        g = length_generalization(model, process, test, cfg.max_n, device=device)
        base = majority_baseline(process, test, cfg.max_n)
        result["generalization"] = {**g.to_dict(), "baseline": base}
    if as_json:
        print_json(result)
        return
    table = Table(title=f"{cfg.arch.arch} on {cfg.language} (p = {process.p}): cross-entropy, nats")
    for col in ("n", "model", "optimal", "unigram", "gap to optimal"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r.n), f"{r.model:.4f}", f"{r.optimal:.4f}", f"{r.unigram:.4f}", f"{r.gap:.4f}"
        )
    console.print(table)
    if generalization:
        g = result["generalization"]
        console.print(
            f"per-token accuracy on lengths {g['lengths']}: {g['overall']:.3f} "
            f"(positions beyond {g['train_max']}: {g['beyond']:.3f}; the best constant guess: "
            f"{g['baseline']:.3f})"
        )

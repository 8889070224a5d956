"""``hardsoft train`` and ``hardsoft evaluate``: learning Hahn's PARITY and 2DYCK processes."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    device_option,
    float_option,
    int_option,
    output_dir_option,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError


@app.command("train")
def train_cmd(
    out: Path = output_dir_option(help="The run folder (created or resumed)."),
    language: str = typer.Option("parity", "--language", help="parity or dyck2."),
    arch: str = typer.Option("transformer", "--arch", help="transformer or lstm."),
    p: float = float_option(None, "--p", help="Process parameter (default 0.5 / 0.3)."),
    max_n: int = int_option(40, "--max-n", lo=1, help="Longest training prefix."),
    min_n: int = int_option(1, "--min-n", lo=1, help="Shortest training prefix."),
    steps: int = int_option(2000, "--steps", lo=0),
    batch_size: int = int_option(32, "--batch-size", lo=1),
    lr: float = float_option(3e-3, "--lr", lo=0.0, lo_open=True, help="Learning rate (> 0)."),
    weight_decay: float = float_option(0.01, "--weight-decay", lo=0.0),
    warmup: int = int_option(100, "--warmup", lo=0),
    schedule: str = typer.Option("cosine", "--schedule", help="cosine or constant."),
    seed: int = seed_option(),
    layers: int = int_option(2, "--layers", lo=1),
    heads: int = int_option(2, "--heads", lo=1, help="Transformer heads per layer."),
    d_model: int = int_option(32, "--d-model", lo=1, help="Width (LSTM: hidden size)."),
    d_ff: int = int_option(0, "--d-ff", lo=0, help="Feed-forward width (0: 2*d_model)."),
    features: str = typer.Option(
        "1,1/i,(-1)^i", "--features", help="Comma-separated position features."
    ),
    layer_norm: str = typer.Option("pre", "--layer-norm", help="none, pre or post."),
    checkpoint_every: int = int_option(500, "--checkpoint-every", lo=1),
    resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue a saved run."),
    device: str = device_option(),
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
    run: Path = path_argument("RUN", "A `hardsoft train` run folder."),
    lengths: str = typer.Option("1,2,...,256", "--lengths", help="Prefix lengths n."),
    samples: int = int_option(256, "--samples", lo=1, help="Prefixes per length."),
    generalization: str = typer.Option(
        None,
        "--generalization",
        help="Test lengths for per-token accuracy (e.g. '41,100,...,500'); off by default.",
    ),
    device: str = device_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Cross-entropy by prefix length against the optimal and unigram-chance cross-entropy."""
    from hardsoft.cli.sensitivity_cmds import parse_lengths
    from hardsoft.learn import cross_entropy_by_length, get_process, length_generalization
    from hardsoft.learn.evaluate import majority_baseline
    from hardsoft.learn.train import load_run

    ns = parse_lengths(lengths, lo=1)
    test = parse_lengths(generalization, "--generalization", lo=1) if generalization else None
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
        "acceptance": _acceptance(model, cfg),
    }
    if test is not None:
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
    console.print(f"acceptance (run, check, restrict): accept iff {result['acceptance']}")
    if test is not None:
        gen = g.to_dict()
        console.print(
            f"per-token accuracy on lengths {gen['lengths']}: {gen['overall']:.3f} "
            f"(positions beyond {gen['train_max']}: {gen['beyond']:.3f}; the best constant guess: "
            f"{base:.3f})"
        )


def _acceptance(model, cfg) -> str:
    """The model's declared acceptance rule (an LSTM: its process's P(EOS) readout)."""
    from hardsoft.learn.readout import process_readout
    from hardsoft.model import Transformer
    from hardsoft.model.readout import acceptance_of

    if isinstance(model, Transformer):
        return acceptance_of(model).describe()
    return process_readout(cfg.language, cfg.p).describe()

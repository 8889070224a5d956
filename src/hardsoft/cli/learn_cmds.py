"""``hardsoft train`` and ``hardsoft evaluate``: learning Hahn's PARITY and 2DYCK processes
(exact next-symbol targets) and recognizers of any language (Butoi et al. 2025)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from hardsoft.learn.train import MAX_STEPS

if TYPE_CHECKING:
    from hardsoft.learn import TrainConfig


@app.command("train")
def train_cmd(
    out: Path = output_dir_option(help="The run folder (created or resumed)."),
    language: str = typer.Option(
        "parity",
        "--language",
        help="Any language of `hardsoft language list` (recognizer), or parity / dyck2 and "
        "their processes (process).",
    ),
    objective: str = typer.Option(
        None,
        "--objective",
        help="process (Hahn's §6 exact next-symbol targets; needs a process) or recognizer "
        "(accept/reject whole strings, Butoi et al. 2025). Default: process where one exists.",
    ),
    arch: str = typer.Option("transformer", "--arch", help="transformer or lstm."),
    p: float = float_option(None, "--p", help="Process parameter (default 0.5 / 0.3)."),
    max_n: int = int_option(40, "--max-n", lo=1, help="Longest training string/prefix."),
    min_n: int = int_option(1, "--min-n", lo=1, help="Shortest training string/prefix."),
    val_max_n: int = int_option(
        80, "--val-max-n", lo=1, help="Recognizer: validate on lengths min-n..this."
    ),
    steps: int = int_option(
        2000, "--steps", lo=0, hi=MAX_STEPS, help=f"Training steps (at most {MAX_STEPS:,})."
    ),
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
    """Train a transformer or an LSTM on a language.

    `--objective process`: a next-symbol predictor on exact samples of Hahn's process
    (exact-target loss; outputs next:SYMBOL and eos). `--objective recognizer`: accept or reject
    whole strings (output `accept`, a logit read at the last position; accept iff > 0), on about
    half members and half non-members (perturbed members and random strings). An unknown
    language, or an objective the language does not support, is an error.

    The run folder holds config.json, the model (model.safetensors for transformers, readable by
    `hardsoft run` and `hardsoft sensitivity`), optimizer.pt and metrics.json."""
    from hardsoft.learn import ArchConfig, TrainConfig, train

    cfg = TrainConfig(
        language=language,
        objective=objective,
        val_max_n=val_max_n,
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
    summary["language"], summary["objective"] = cfg.language, cfg.objective
    if as_json:
        print_json(summary)
        return
    _print_trained(out, cfg, summary)


def _print_trained(out: Path, cfg: TrainConfig, summary: dict) -> None:
    """``train``'s text summary: steps, final loss, throughput, validation accuracy."""
    tps = summary["tokens_per_second"]
    what = f"{cfg.objective} objective on {cfg.language}"
    console.print(
        f"{out}: {what}, {summary['steps_done']} steps, final loss "
        f"{summary['final_loss']:.4f} nats, {tps:.0f} tokens/s"
        if tps
        else f"{out}: {what}, {summary['steps_done']} steps",
        markup=False,
    )
    val = summary.get("validation")
    if val:
        console.print(
            f"validation accuracy on lengths {val['lengths'][0]}-{val['lengths'][1]}: "
            f"{val['accuracy']:.3f}",
            markup=False,
        )


@app.command("evaluate")
def evaluate_cmd(
    run: Path = path_argument("RUN", "A `hardsoft train` run folder."),
    lengths: str = typer.Option(
        None,
        "--lengths",
        help="Lengths n (default: 1,2,...,256 for a process, 1,2,...,500 for a recognizer).",
    ),
    samples: int = int_option(
        None, "--samples", lo=1, help="Prefixes/strings per length (default 256 / 32)."
    ),
    generalization: str = typer.Option(
        None,
        "--generalization",
        help="Test lengths for per-token accuracy (e.g. '41,100,...,500'); off by default.",
    ),
    device: str = device_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Process runs: cross-entropy by prefix length against the optimal and unigram-chance
    cross-entropy. Recognizer runs: accuracy by length (train / validation / test lengths)."""
    from hardsoft.cli.sensitivity_cmds import parse_lengths
    from hardsoft.learn import cross_entropy_by_length, get_process, length_generalization
    from hardsoft.learn.evaluate import majority_baseline
    from hardsoft.learn.train import is_recognizer, load_run

    cfg, model = load_run(run, device=device)
    if is_recognizer(cfg):
        if generalization:
            raise HardsoftError("--generalization is for process runs; use --lengths")
        _evaluate_recognizer(
            run, cfg, model, lengths or "1,2,...,500", samples or 32, device, as_json
        )
        return
    ns = parse_lengths(lengths or "1,2,...,256", lo=1)
    samples = samples or 256
    test = parse_lengths(generalization, "--generalization", lo=1) if generalization else None
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


def _evaluate_recognizer(
    run: Path, cfg: Any, model: Any, lengths: str, samples: int, device: str, as_json: bool
) -> None:
    """Accuracy by length of a recognizer run, with the means over the training lengths, the
    validation lengths beyond them and the test lengths beyond those."""
    from hardsoft.cli.sensitivity_cmds import parse_lengths
    from hardsoft.languages import get_language
    from hardsoft.learn.recognize import accuracy_by_length, mean_accuracy

    ns = parse_lengths(lengths, lo=1)
    rows = accuracy_by_length(model, get_language(cfg.language), ns, samples=samples, device=device)
    ranges = {
        "train": (cfg.min_n, cfg.max_n),
        "validation": (cfg.max_n + 1, cfg.val_max_n),
        "test": (cfg.val_max_n + 1, max(ns)),
    }
    means = {k: mean_accuracy(rows, lo, hi) for k, (lo, hi) in ranges.items()}
    result = {
        "run": str(run),
        "language": cfg.language,
        "objective": cfg.objective,
        "arch": cfg.arch.arch,
        "train_max_n": cfg.max_n,
        "val_max_n": cfg.val_max_n,
        "rows": [r.to_dict() for r in rows],
        "mean_accuracy": means,
    }
    if as_json:
        print_json(result)
        return
    table = Table(title=f"{cfg.arch.arch} recognizer of {cfg.language}: accuracy by length")
    for col in ("n", "accuracy", "strings", "members"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r.n), f"{r.accuracy:.3f}", str(r.strings), f"{r.positives:.2f}")
    console.print(table)
    shown = ", ".join(
        f"{k} lengths {lo}-{hi}: {means[k]:.3f}"
        for k, (lo, hi) in ranges.items()
        if means[k] is not None
    )
    console.print(f"mean accuracy: {shown}", markup=False)

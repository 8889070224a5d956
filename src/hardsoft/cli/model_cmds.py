"""``hardsoft run`` and ``hardsoft random-model``: run a saved model, make a seeded random one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    chunk_arg,
    chunk_size_option,
    console,
    device_option,
    float_option,
    input_file_option,
    int_option,
    output_file_option,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError
from hardsoft.model import MASKS, WEIGHTINGS, load_model, random_model, save_model
from hardsoft.model.readout import acceptance_of


def read_inputs(inputs: list[str] | None, input_file: Path | None) -> list[tuple[str, str]]:
    """Inputs from ``--input`` options and/or a UTF-8 file with one input per line (blank
    lines skipped), each with where it came from (``--input 2``, ``FILE line 7``) for errors."""
    words = [(w, f"--input {k}") for k, w in enumerate(inputs or [], 1)]
    if input_file is not None:
        text = validate.read_text(input_file, "--input-file")
        for k, line in enumerate(text.splitlines(), 1):
            if line.strip():
                words.append((line.strip(), f"{str(input_file)!r} line {k}"))
    if not words:
        raise HardsoftError("no input: give --input STR or --input-file FILE")
    return words


def check_symbols(words: list[tuple[str, str]], alphabet: tuple[str, ...]) -> None:
    """Every symbol of every input is in ``alphabet``; the error names the input's origin
    (its line in the input file) and the position."""
    allowed = set(alphabet)
    for w, where in words:
        for i, a in enumerate(w):
            if a not in allowed:
                raise HardsoftError(
                    f"{where}: symbol {a!r} at position {i + 1} is not in the model's "
                    f"alphabet {''.join(alphabet)!r}"
                )


@app.command("run")
def run_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model file."),
    inputs: list[str] = typer.Option(None, "--input", "-i", help="An input string (repeatable)."),
    input_file: Path = input_file_option(),
    chunk_size: int = chunk_size_option(),
    device: str = device_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run MODEL on each input: the per-position outputs (coordinate 0) and acceptance."""
    sourced = read_inputs(inputs, input_file)
    model = load_model(model_path, device=device)
    check_symbols(sourced, model.spec.alphabet)
    words = [w for w, _ in sourced]
    outputs = model.run_words(words, chunk_size=chunk_arg(chunk_size))
    readout = acceptance_of(model)
    results: list[dict[str, Any]] = []
    for w, out in zip(words, outputs):
        values = [float(v) for v in out[:, 0]]
        accept = bool(len(out) and readout.accept(torch.as_tensor(out[-1])))
        results.append({"input": w, "outputs": values, "accept": accept})
    if as_json:
        print_json({"results": results})
        return
    for r in results:
        shown = " ".join(f"{v:g}" for v in r["outputs"])
        console.print(f"{r['input']!r}: accept={r['accept']}  outputs=[{shown}]")


@app.command("random-model")
def random_model_cmd(
    out: Path = output_file_option(help="Where to write the .safetensors file."),
    weighting: str = typer.Option("softmax", help=f"One of {', '.join(WEIGHTINGS)}."),
    mask: str = typer.Option("none", help=f"One of {', '.join(MASKS)}."),
    layers: int = int_option(2, "--layers", lo=0),
    heads: int = int_option(2, "--heads", lo=0),
    d_model: int = int_option(16, "--d-model", lo=1),
    d_ff: int = int_option(None, "--d-ff", lo=0, help="Default 2*d_model."),
    alphabet: str = typer.Option("01", help="The symbols, as one string (no repeats)."),
    tau: str = typer.Option(
        None, help="Softmax temperature as an expression in n (finite and positive for all n)."
    ),
    features: str = typer.Option(
        "1,i/n,(-1)^i,[i=1],[i=n]", help="Comma-separated position features."
    ),
    layer_norm: str = typer.Option("none", "--layer-norm", help="none, pre or post."),
    weight_scale: float = float_option(
        1.0, "--weight-scale", lo=0.0, help="Standard deviation scale (finite, >= 0)."
    ),
    seed: int = seed_option(),
    float64: bool = typer.Option(True, "--float64/--float32"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write a seeded random model (for tests and for the limits engines)."""
    model = random_model(
        alphabet=tuple(alphabet),
        layers=layers,
        heads=heads,
        d_model=d_model,
        d_ff=d_ff,
        weighting=weighting,
        mask=mask,
        tau=tau,
        position_features=tuple(f.strip() for f in features.split(",") if f.strip()),
        layer_norm=layer_norm,
        weight_scale=weight_scale,
        seed=seed,
        dtype=torch.float64 if float64 else torch.float32,
    )
    save_model(model, out)
    info = {
        "path": str(out),
        "name": model.spec.name,
        "parameters": model.parameter_count(),
        "bounded_positions": model.spec.bounded_positions,
        "spec": model.spec.to_dict(),
    }
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {out} ({info['name']}, {info['parameters']} parameters)")

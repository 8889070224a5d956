"""``hardsoft run`` and ``hardsoft random-model``: run a saved model, make a seeded random one."""

from __future__ import annotations

from pathlib import Path

import torch
import typer

from hardsoft.cli import app
from hardsoft.cli.common import console, print_json
from hardsoft.errors import HardsoftError
from hardsoft.model import MASKS, WEIGHTINGS, load_model, random_model, save_model
from hardsoft.model.readout import acceptance_of


def read_inputs(inputs: list[str] | None, input_file: Path | None) -> list[str]:
    """Inputs from ``--input`` options and/or a file with one input per line."""
    words = list(inputs or [])
    if input_file is not None:
        try:
            text = input_file.read_text()
        except OSError as exc:
            raise HardsoftError(
                f"cannot read input file {str(input_file)!r}: {exc.strerror}"
            ) from None
        words += [line.strip() for line in text.splitlines() if line.strip()]
    if not words:
        raise HardsoftError("no input: give --input STR or --input-file FILE")
    return words


def symbols_read(out, names: list[str]) -> list[str | None]:
    """Per position, the name of the one output that is 1 (> 1/2), or None."""
    on = out > 0.5
    return [names[int(row.argmax())] if int(row.sum()) == 1 else None for row in on]


def _format_value(v: float) -> str:
    return f"{v:.6g}" if v != int(v) else str(int(v))


def _print_result(r: dict) -> None:
    """One input as a table: a row per output, a column per position."""
    cells = [[_format_value(v) for v in row] for row in r["outputs"]]
    syms = [str(x or "?") for x in r.get("symbols", [])]
    width = max(
        [len(c) for row in cells for c in row] + [len(x) for x in syms] + [len(str(len(cells)))]
    )
    label = max(len(nm) for nm in r["output_names"]) + 1
    label = max(label, len("position"))
    console.print(f"input {r['input']!r}: accept={r['accept']}", markup=False)
    if not cells:
        return
    console.print(
        f"  {'position':<{label}} " + " ".join(f"{k:>{width}}" for k in range(1, len(cells) + 1)),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"  {'input':<{label}} " + " ".join(f"{ch:>{width}}" for ch in r["input"]),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for k, name in enumerate(r["output_names"]):
        row = " ".join(f"{row[k]:>{width}}" for row in cells)
        console.print(f"  {name:<{label}} {row}", markup=False, highlight=False, soft_wrap=True)
    if "symbols" in r:
        shown = " ".join(f"{x:>{width}}" for x in syms)
        console.print(f"  {'symbol':<{label}} {shown}", markup=False, highlight=False)


@app.command("run")
def run_cmd(
    model_path: Path = typer.Argument(..., metavar="MODEL", help="A .safetensors model file."),
    inputs: list[str] = typer.Option(None, "--input", "-i", help="An input string (repeatable)."),
    input_file: Path = typer.Option(None, "--input-file", help="A file with one input per line."),
    chunk_size: int = typer.Option(
        None, "--chunk-size", min=0, help="Attention block size (default: auto; 0: never)."
    ),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run MODEL on each input: every output at every position, and acceptance (the model's
    declared readout of the last position; by default output coordinate 0 > 1/2).

    `--json`: `{"results": [{"input", "output_names", "outputs", "accept"}]}`, where `outputs`
    has one list per position with one value per output, in the order of `output_names`
    (the model's names; unnamed outputs are called out0, out1, ...), also for a model with
    one output. A model whose outputs are named by symbols (and `none`), such as the logic
    route's induction heads, also gets `symbols`: per position the name of the one output
    that is 1, or null when not exactly one is."""
    from hardsoft.check import is_symbol_valued, output_names

    words = read_inputs(inputs, input_file)
    model = load_model(model_path, device=device)
    names = list(output_names(model))
    chunk = "auto" if chunk_size is None else (chunk_size or None)
    outputs = model.run_words(words, chunk_size=chunk)
    readout = acceptance_of(model)
    results = []
    for w, out in zip(words, outputs):
        values = [[float(v) for v in row] for row in out]
        accept = bool(len(out) and readout.accept(torch.as_tensor(out[-1])))
        results.append({"input": w, "output_names": names, "outputs": values, "accept": accept})
        if is_symbol_valued(names, model.spec.alphabet):
            results[-1]["symbols"] = symbols_read(out, names)
    if as_json:
        print_json({"results": results})
        return
    for r in results:
        _print_result(r)


@app.command("random-model")
def random_model_cmd(
    out: Path = typer.Option(..., "-o", "--out", help="Where to write the .safetensors file."),
    weighting: str = typer.Option("softmax", help=f"One of {', '.join(WEIGHTINGS)}."),
    mask: str = typer.Option("none", help=f"One of {', '.join(MASKS)}."),
    layers: int = typer.Option(2, min=0),
    heads: int = typer.Option(2, min=0),
    d_model: int = typer.Option(16, "--d-model", min=1),
    d_ff: int = typer.Option(None, "--d-ff", min=0, help="Default 2*d_model."),
    alphabet: str = typer.Option("01", help="The symbols, as one string."),
    tau: str = typer.Option(None, help="Softmax temperature as an expression in n."),
    features: str = typer.Option(
        "1,i/n,(-1)^i,[i=1],[i=n]", help="Comma-separated position features."
    ),
    layer_norm: str = typer.Option("none", "--layer-norm", help="none, pre or post."),
    weight_scale: float = typer.Option(1.0, "--weight-scale"),
    seed: int = typer.Option(0),
    float64: bool = typer.Option(True, "--float64/--float32"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write a seeded random model (for tests and for the limits engines)."""
    if not alphabet:
        raise HardsoftError("the alphabet is empty")
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

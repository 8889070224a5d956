"""``hardsoft check``: compare a model with the logic evaluator or a language's oracle at every
position. Exit code 0 if there is no mismatch, 1 if there is one, 2 on a usage error."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from hardsoft.cli import app
from hardsoft.cli.common import console, err_console, parse_int_list, print_json
from hardsoft.errors import HardsoftError


@app.command("check")
def check_cmd(
    model_path: Path = typer.Argument(..., metavar="MODEL", help="A .safetensors model file."),
    formula: str = typer.Option(None, "--formula", "-f", help="Compare with this formula."),
    language: str = typer.Option(
        None, "--language", "-l", help="Compare with this language's prefix oracle (or task)."
    ),
    exhaustive_max_n: int = typer.Option(
        12, "--exhaustive-max-n", help="Check every string up to this length."
    ),
    random_n: str = typer.Option(
        "100,1000,10000", "--random-n", help="Comma-separated lengths of random strings."
    ),
    samples: int = typer.Option(200, "--samples", help="Random strings per random length."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random strings."),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    chunk_size: int = typer.Option(None, "--chunk-size", help="Stream attention in blocks."),
    dense: bool = typer.Option(
        False, "--dense", help="Dense reference attention in every head (no fast paths)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Check MODEL at every position of every string up to --exhaustive-max-n and of
    --samples random strings per --random-n length, against --formula (the logic evaluator)
    or --language (the prefix oracle). Exits 1 if any position disagrees."""
    from hardsoft.check import check_formula, check_language
    from hardsoft.model import load_model
    from hardsoft.model.fastpath import fast_paths

    if (formula is None) == (language is None):
        raise HardsoftError("give exactly one of --formula and --language")
    lengths = parse_int_list(random_n, "--random-n") if random_n.strip() else []
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise HardsoftError(f"unknown device {device!r} (cpu or cuda)")
    model = load_model(model_path, device=device)
    options = dict(
        exhaustive_max_n=exhaustive_max_n,
        random_n=lengths,
        samples=samples,
        seed=seed,
        chunk_size=chunk_size,
        progress=None if as_json else (lambda msg: err_console.print(msg)),
    )
    with fast_paths("off" if dense else "auto"):
        if formula is not None:
            report = check_formula(model, formula, **options)
            report["reference"] = {"formula": formula}
        else:
            report = check_language(model, language, **options)
            report["reference"] = {"language": language}
    report["model"] = str(model_path)
    if as_json:
        print_json(report)
    else:
        console.print(
            f"checked {report['checked_strings']} strings ({report['checked_positions']} "
            f"positions), lengths up to {report['max_n']}: {report['mismatches']} mismatching "
            f"strings, max |output - reference| = {report['max_abs_error']:.3g}"
        )
        if report["first_mismatch"]:
            fm = report["first_mismatch"]
            word = fm["word"] if len(fm["word"]) <= 80 else fm["word"][:77] + "..."
            console.print(
                escape(
                    f"first mismatch: {word!r} (n = {fm['n']}) at position {fm['position']}: "
                    f"expected {fm['expected']}, got {fm['got']} (output {fm['output']:.6g})"
                )
            )
    if report["mismatches"]:
        raise typer.Exit(1)

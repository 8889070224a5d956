"""``hardsoft check``: compare a model with the logic evaluator or a language's oracle at every
position. Exit code 0 if there is no mismatch, 1 if there is one, 2 on a usage error."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft.cli import app
from hardsoft.cli.common import (
    chunk_arg,
    chunk_size_option,
    console,
    device_option,
    err_console,
    int_option,
    parse_int_list,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError


@app.command("check")
def check_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model file."),
    formula: str = typer.Option(
        None, "--formula", "-f", help="Compare with this formula, or a named one (@NAME)."
    ),
    language: str = typer.Option(
        None, "--language", "-l", help="Compare with this language's prefix oracle (or task)."
    ),
    exhaustive_max_n: int = int_option(
        12, "--exhaustive-max-n", lo=0, help="Check every string up to this length."
    ),
    random_n: str = typer.Option(
        "100,1000,10000", "--random-n", help="Comma-separated lengths of random strings."
    ),
    samples: int = int_option(200, "--samples", lo=1, help="Random strings per random length."),
    seed: int = seed_option(help="Seed of the random strings (0 <= seed < 2^64)."),
    device: str = device_option(),
    chunk_size: int = chunk_size_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Check MODEL at every position of every string up to --exhaustive-max-n and of
    --samples random strings per --random-n length, against --formula (the logic evaluator)
    or --language (the prefix oracle). Exits 1 if any position disagrees."""
    from hardsoft.check import check_formula, check_language
    from hardsoft.model import load_model

    if (formula is None) == (language is None):
        raise HardsoftError("give exactly one of --formula and --language")
    lengths = parse_int_list(random_n, "--random-n", lo=1) if random_n.strip() else []
    model = load_model(model_path, device=device)
    options = dict(
        exhaustive_max_n=exhaustive_max_n,
        random_n=lengths,
        samples=samples,
        seed=seed,
        chunk_size=chunk_arg(chunk_size),
        progress=None if as_json else (lambda msg: err_console.print(msg)),
    )
    if formula is not None:
        if formula.startswith("@"):
            from hardsoft.logic.library import get_formula

            formula = get_formula(formula[1:]).text
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
                f"first mismatch: {word!r} (n = {fm['n']}) at position {fm['position']}: "
                f"expected {fm['expected']}, got {fm['got']} (output {fm['output']:.6g})"
            )
    if report["mismatches"]:
        raise typer.Exit(1)

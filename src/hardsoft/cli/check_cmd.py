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


def formula_options(values: list[str], names: tuple[str, ...]) -> str | dict[str, str]:
    """The ``--formula`` values as one formula, or a mapping from output names to formulas.

    A model with one output takes one formula (``NAME=`` before it is dropped when NAME is
    that output's name); a model with several named outputs takes ``NAME=FORMULA`` per
    output, split at the first ``=`` (formulas may contain ``=``, names may not)."""
    if len(names) <= 1 and len(values) == 1:
        text = values[0]
        if names and text.partition("=")[0].strip() == names[0]:
            text = text.partition("=")[2]
        return text.strip()
    if len(names) <= 1:
        raise HardsoftError(f"the model has one output: give one --formula, not {len(values)}")
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise HardsoftError(
                f"--formula expects NAME=FORMULA with NAME one of the model's outputs "
                f"({', '.join(names)}), got {value!r}"
            )
        if name in out:
            raise HardsoftError(f"--formula: output {name!r} is given twice")
        out[name] = text.strip()
    return out


def _expand_named(given: str | dict[str, str]) -> str | dict[str, str]:
    """``@NAME`` stands for a named formula, as in ``hardsoft eval``."""
    from hardsoft.logic.library import get_formula

    def one(text: str) -> str:
        return get_formula(text[1:]).text if text.startswith("@") else text

    if isinstance(given, str):
        return one(given)
    return {name: one(text) for name, text in given.items()}


def _symbol(index: int, model) -> str:
    """A symbol readout's value as text: the symbol, none, or invalid (several at 1)."""
    if index >= 0:
        return repr(model.spec.alphabet[index])
    return "none" if index == -1 else "no single symbol (several outputs or none disagree)"


@app.command("check")
def check_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model file."),
    formula: list[str] = typer.Option(
        None,
        "--formula",
        "-f",
        help="Compare with this formula (or a named one, @NAME); for a model with named "
        "outputs, NAME=FORMULA once per output (repeat the option).",
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
    dense: bool = typer.Option(
        False, "--dense", help="Dense reference attention in every head (no fast paths)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Check MODEL at every position of every string up to --exhaustive-max-n and of
    --samples random strings per --random-n length, against --formula (the logic evaluator)
    or --language (the prefix oracle). Exits 1 if any position disagrees.

    A model with named outputs takes `--formula NAME=FORMULA` once per output; a task with
    symbol-valued targets (`induction-head`, `khopK`) reads a model whose outputs are named by
    symbols as "the symbol whose output is 1, none when no symbol output is"."""
    from hardsoft.check import check_formula, check_language
    from hardsoft.cli.common import load_model
    from hardsoft.model.fastpath import fast_paths

    if (not formula) == (language is None):
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
    with fast_paths("off" if dense else "auto"):
        if formula:
            given = _expand_named(formula_options(formula, tuple(model.spec.output_names)))
            report = check_formula(model, given, **options)
            report["reference"] = {"formula": given}
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
            expected, got = fm["expected"], fm["got"]
            if fm.get("read") == "symbol":
                expected, got = _symbol(expected, model), _symbol(got, model)
            elif "read" in fm:
                expected, got = f"{fm['read']} = {expected}", f"{fm['read']} = {got}"
            console.print(
                f"first mismatch: {word!r} (n = {fm['n']}) at position {fm['position']}: "
                f"expected {expected}, got {got} (output {fm['output']:.6g})"
            )
    if report["mismatches"]:
        raise typer.Exit(1)

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
    expand_named,
    formula_options,
    input_file_option,
    int_option,
    parse_int_list,
    past_limit_note,
    path_argument,
    precision_line,
    print_json,
    refuse_empty_check,
    seed_option,
)
from hardsoft.cli.run_options import (
    apply_dtype,
    check_streamed,
    dtype_option,
    stream_chunk,
    stream_chunk_option,
)
from hardsoft.errors import HardsoftError


def _symbol(index: int, model) -> str:
    """A symbol readout's value as text: the symbol, none, or invalid (several at 1)."""
    if index >= 0:
        return repr(model.spec.alphabet[index])
    return "none" if index == -1 else "no single symbol (several outputs or none disagree)"


def _is_predictor(model) -> bool:
    """A trained next-symbol predictor (or its hardened copy): judged by accuracy, not only
    by "mismatch"."""
    from hardsoft.model.readout import acceptance_of

    meta = getattr(model, "meta", None) or {}
    return acceptance_of(model).kind == "eos" or meta.get("origin") == "hardsoft train"


def _print_by_length(report: dict) -> None:
    """Accuracy by length: the fraction of strings right at every position, and of positions."""
    from rich.table import Table

    table = Table(title=f"accuracy by length (accept iff {report['readout']})")
    for col in ("n", "strings", "strings right", "positions", "positions right"):
        table.add_column(col, justify="right")
    for r in report["by_length"]:
        s, p = r["strings_right"] / r["strings"], r["positions_right"] / max(1, r["positions"])
        table.add_row(str(r["n"]), str(r["strings"]), f"{s:.3f}", str(r["positions"]), f"{p:.3f}")
    console.print(table)


def _check_program(model, file: str, options: dict) -> dict:
    """:func:`hardsoft.check.check_model` against a program file's interpreter (its alphabet
    is the model's)."""
    from hardsoft.check import check_model
    from hardsoft.programs.reference import program_reference
    from hardsoft.programs.source import load_program

    prog = load_program(file, alphabet="".join(model.spec.alphabet))
    reference, numeric, specs = program_reference(model, prog)
    report = check_model(model, reference, readout="outputs", numeric=numeric, **options)
    report["reference"] = {
        "program": str(file),
        "notation": prog.notation.value,
        "outputs": {s.name: s.statement for s in specs},
    }
    return report


def _is_rasp(program: str) -> bool:
    """Whether ``--program`` names a RASP file (checked by its own reference: a RASP model may
    be exact only up to a bound, and a RASP value may be undefined)."""
    from hardsoft.programs.source import Notation, notation_of, resolve_program

    return notation_of(resolve_program(program)) is Notation.RASP


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
    program: str = typer.Option(
        None,
        "--program",
        help="Compare every output with its statement in this program file's interpreter "
        "(.cr, .brasp, FILE.py:NAME; @NAME a shipped example).",
    ),
    vocab: str = typer.Option(
        None, "--vocab", help="With --program: the vocabulary (the program's alphabet)."
    ),
    exhaustive_max_n: int = int_option(
        12, "--exhaustive-max-n", lo=0, help="Check every string up to this length."
    ),
    random_n: str = typer.Option(
        "100,1000,10000", "--random-n", help="Comma-separated lengths of random strings."
    ),
    samples: int = int_option(32, "--samples", lo=1, help="Random strings per random length."),
    seed: int = seed_option(help="Seed of the random strings (0 <= seed < 2^64)."),
    device: str = device_option(),
    chunk_size: int = chunk_size_option(),
    dense: bool = typer.Option(
        False, "--dense", help="Dense reference attention in every head (no fast paths)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    dtype: str = dtype_option(),
    stream: bool = typer.Option(
        False,
        "--stream",
        help="Check one long input from --input-file in chunks (past-only "
        "formulas; docs/model.md).",
    ),
    input_file: Path = input_file_option(help="With --stream: the file holding the one input."),
    chunk: int | None = stream_chunk_option(),
) -> None:
    """Check MODEL at every position of every string up to --exhaustive-max-n and of
    --samples random strings per --random-n length, against --formula (the logic evaluator),
    --language (the prefix oracle) or --program (a program's interpreter, every output by the
    encoding the model declares). Exits 1 if any position disagrees.

    By default: every string of length 1 to 12 (8,190 strings over two symbols; lengths past
    65,536 strings are sampled instead), 32 random strings at each of n = 100, 1,000 and
    10,000, and the hard words of those lengths (10 over two symbols, at most 32): about
    560,000 positions over two symbols, seconds on an idle CPU. The hard words (`hard_lengths`;
    also at the certified float limit where a random length lies past it) are the deepest
    balanced words `a^k b^k` and their near misses, runs `a^n` and alternations, which random
    words almost never are. Progress goes to
    stderr (per length, and per 16 strings from n = 1,000 on). A compiled model checked past
    its certificate's float limit for its dtype is warned about (stderr; `precision` in the
    JSON).

    A model with named outputs takes `--formula NAME=FORMULA` once per output; a task with
    symbol-valued targets (`induction-head`, `khopK`) reads a model whose outputs are named by
    symbols as "the symbol whose output is 1, none when no symbol output is".

    `--stream --input-file FILE`: one long input, model and formula streamed side by side in
    chunks of --chunk positions (memory O(chunk)); the formula must be past-only."""
    from hardsoft.check import hard_lengths
    from hardsoft.cli.common import load_model
    from hardsoft.model.fastpath import fast_paths
    from hardsoft.model.precision import precision_report

    if sum([bool(formula), language is not None, program is not None]) != 1:
        raise HardsoftError("give exactly one of --formula, --language and --program")
    lengths = parse_int_list(random_n, "--random-n", lo=1) if random_n.strip() else []
    model = apply_dtype(load_model(model_path, device=device), dtype)
    if (stream or input_file is not None) and program is not None:
        raise HardsoftError("--stream checks against --formula or --language, not --program")
    strings = dict(exhaustive_max_n=exhaustive_max_n, random_n=lengths, samples=samples, seed=seed)
    positions = stream_chunk(stream, chunk, dense, chunk_size)
    if program is not None and _is_rasp(program):  # bounded models, undefined values
        from hardsoft.cli.source_cmds import check_source

        return check_source(model, model_path, program, vocab=vocab, as_json=as_json, **strings)
    if vocab is not None:
        raise HardsoftError("--vocab is for RASP programs (FILE.py:NAME); others use the model's")
    if stream or input_file is not None:
        return check_streamed(
            model, model_path, formula, language, input_file, positions, as_json, stream
        )
    precision = precision_report(model.meta, model.dtype, max([exhaustive_max_n, *lengths]))
    progress = None if as_json else (lambda msg: err_console.print(msg))
    hard_n = hard_lengths(lengths, precision["certified_max_n"])
    options = dict(strings, hard_n=hard_n, chunk_size=chunk_arg(chunk_size), progress=progress)
    with fast_paths("off" if dense else "auto"):
        report = _checked(model, formula, language, program, options)
    report["model"] = str(model_path)
    report["precision"] = precision
    _finish(report, model, as_json)


def _finish(report: dict, model, as_json: bool) -> None:
    """Refuse a check that checked nothing, warn past the float limit (after the run: a
    refused request stays one line), print the report, and exit 1 if any position
    disagrees."""
    refuse_empty_check(report, "no length to check (--exhaustive-max-n 0 and no --random-n)")
    if report["precision"]["warning"]:
        err_console.print(f"warning: {report['precision']['warning']}", soft_wrap=True)
    if as_json:
        print_json(report)
    else:
        _print_report(report, model)
    if report["mismatches"]:
        raise typer.Exit(1)


def _checked(model, formula: list[str], language: str | None, program: str | None, options: dict):
    """The report of the one reference given: --formula, --program or --language."""
    from hardsoft.check import check_formula, check_language

    if formula:
        given = expand_named(formula_options(formula, tuple(model.spec.output_names)))
        report = check_formula(model, given, **options)
        report["reference"] = {"formula": given}
    elif program is not None:
        report = _check_program(model, program, options)
    else:
        report = check_language(model, language, **options)
        report["reference"] = {"language": language}
    return report


def _print_report(report: dict, model) -> None:
    """``check``'s text report: the counts, per length for a predictor, the first mismatch."""
    console.print(
        f"checked {report['checked_strings']} strings ({report['checked_positions']} "
        f"positions), lengths up to {report['max_n']}: {report['mismatches']} mismatching "
        f"strings, max |output - reference| = {report['max_abs_error']:.3g}"
    )
    line = precision_line(report["precision"])
    if line:
        console.print(line, markup=False)
    if _is_predictor(model):
        _print_by_length(report)
    if report["first_mismatch"]:
        fm = report["first_mismatch"]
        word = fm["word"] if len(fm["word"]) <= 80 else fm["word"][:77] + "..."
        expected, got = fm["expected"], fm["got"]
        if fm.get("read") == "symbol":
            expected, got = _symbol(expected, model), _symbol(got, model)
        elif "read" in fm:
            expected, got = f"{fm['read']} = {expected}", f"{fm['read']} = {got}"
        shown = "P(EOS)" if fm.get("output_of") == "P(EOS)" else "output"
        console.print(
            f"first mismatch: {word!r} (n = {fm['n']}) at position {fm['position']}: "
            f"expected {expected}, got {got} ({shown} {fm['output']:.6g})"
            + past_limit_note(fm["n"], report["precision"])
        )

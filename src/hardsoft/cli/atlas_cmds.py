"""``hardsoft atlas``: the expressivity atlas, and ``atlas add-row`` (a user's regular row,
its star-freeness decided on the syntactic monoid)."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    err_console,
    input_file_option,
    int_option,
    output_dir_option,
    output_file_option,
    print_json,
)

atlas_app = typer.Typer(
    help="The expressivity atlas: which transformer class computes which language, with the "
    "evidence run here in every cell (docs/atlas.md).",
    no_args_is_help=False,
    invoke_without_command=True,
)
app.add_typer(atlas_app, name="atlas")


@atlas_app.callback(invoke_without_command=True)
def atlas_cmd(
    ctx: typer.Context,
    quick: bool = typer.Option(True, "--quick/--full", help="Quick (small n, seconds) or full."),
    only: str = typer.Option(
        None, "--only", help="ROW,COLUMN (either may be * ; several joined by +)."
    ),
    out: Path = output_dir_option("--out", "-o", default="atlas", help="The atlas folder."),
    force: bool = typer.Option(False, "--force", help="Rerun cells whose evidence is stored."),
    csv_file: Path = output_file_option(
        "--csv", required=False, help="Also write the table as CSV here."
    ),
    executor: str = typer.Option(
        "local", "--executor", help="local (in this process) or ray (every cell a Ray task)."
    ),
    address: str = typer.Option(
        None, "--address", help="A Ray cluster (HOST:PORT, auto, ray://...); default: a local Ray."
    ),
    cpus: int = int_option(None, "--cpus", lo=1, help="CPUs of a local Ray (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole table as JSON."),
) -> None:
    """Build the atlas (rows: languages and tasks; columns: model classes) into --out:
    atlas.json, atlas.csv, index.html and every cell's evidence under cells/. Every cell has a
    status and an evidence kind: proof (a model checked here, or a theorem whose hypotheses
    were checked here), illustration (one model, training runs) or citation. Cells whose
    evidence is stored and current are reused; every other cell is stored as it finishes, so an
    interrupted run resumes (--executor ray runs them as parallel Ray tasks; a cluster's
    workers must see --out). Exit code 1 if evidence disagrees with a claim."""
    if ctx.invoked_subcommand is not None:
        return
    from hardsoft.atlas.build import build_atlas, to_csv
    from hardsoft.model.io import atomic_write

    progress = None if as_json else (lambda line: err_console.print(line))
    table = build_atlas(
        Path(out),
        quick=quick,
        only=only,
        force=force,
        progress=progress,
        executor=executor,
        address=address,
        cpus=cpus,
    )
    if csv_file is not None:
        text = to_csv(table)
        atomic_write(Path(csv_file), lambda tmp: Path(tmp).write_text(text), "--csv")
    if as_json:
        print_json(table)
    else:
        kinds = ", ".join(f"{n} {k}" for k, n in table["kinds"].items())
        console.print(
            f"{table['cells_total']} cells: {kinds} ({table['cells_proved']} proofs agree; "
            f"{table['illustrations_beside_proofs']} proofs also carry an illustration); "
            f"{', '.join(f'{n} {s}' for s, n in table['counts'].items())}; "
            f"{table['seconds']} s; page: {Path(out) / 'index.html'}"
        )
        for d in table["disagreements"]:
            err_console.print(f"evidence disagrees with the claim: {d}", style="red")
        for cell in table["cells"]:
            if cell.get("error"):
                err_console.print(
                    f"no evidence for {cell['row']} × {cell['column']}: {cell['error']}",
                    style="yellow",
                )
    if table["disagreements"]:
        raise typer.Exit(1)


@atlas_app.command("add-row")
def add_row_cmd(
    name: str = typer.Option(..., "--name", help="The row's name (lower-case, digits, dashes)."),
    regex: str = typer.Option(
        None, "--regex", help="A regular expression: | * + ? ( ) [ab], . or Σ for any symbol."
    ),
    dfa: Path = input_file_option("--dfa", help="A DFA file (JSON; see docs/atlas.md)."),
    program: str = typer.Option(
        None,
        "--program",
        help="A program whose language is the row: FILE.cr (C-RASP), FILE.brasp (B-RASP), "
        "FILE.py:NAME (RASP) or @NAME (a shipped example).",
    ),
    alphabet: str = typer.Option(
        None, "--alphabet", help="The symbols (default: those the expression mentions)."
    ),
    out: Path = output_dir_option("--out", "-o", default="atlas", help="The atlas folder."),
    force: bool = typer.Option(
        False, "--force", help="Replace a stored row of this name that is another language."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Add a row to the atlas in --out (stored under OUT/rows/, put on the page if one is
    built there).

    --regex / --dfa: decide whether the regular language is star-free (aperiodic syntactic
    monoid, Schützenberger 1965), which by Yang, Chiang & Angluin (2024) decides the column
    unique-hard / strict masks / no position features: impossible if not, constructed if the
    bounded formula search finds a formula (compiled and checked), possible otherwise.

    --program: the language the program accepts (its last statement true at the last
    position). The program is compiled to every target of its notation and each model is
    checked against the program's interpreter; a column is constructed (proof) where a model
    with 0 mismatches lies in the column's class, read from the model. Refused targets are
    listed with their reasons; other columns stay open (no claim)."""
    from hardsoft.atlas.build import refresh_page
    from hardsoft.errors import HardsoftError

    if sum(x is not None for x in (regex, dfa, program)) != 1:
        raise HardsoftError("give exactly one of --regex, --dfa and --program")
    from hardsoft import validate
    from hardsoft.programs.source import program_file

    given = program_file(program) if program is not None else None
    validate.protect_inputs({"--dfa": dfa, "--program": given})  # what add-row writes under --out
    if program is not None:
        return _add_program_row(Path(out), name, program, alphabet, force, as_json)
    from hardsoft.atlas.rows import add_row

    record = add_row(Path(out), name, regex, dfa, alphabet, force=force)
    record["page_updated"] = refresh_page(Path(out))
    if as_json:
        print_json(record)
        return
    verdict = "star-free" if record["star_free"] else "NOT star-free"
    console.print(
        f"{name}: {verdict} (minimal DFA {record['minimal_dfa_states']} states, syntactic "
        f"monoid {record['monoid_size']} elements)"
    )
    if record["star_free"]:
        console.print(f"evidence: {record['evidence']}")
        con = record.get("construction") or {}
        if con.get("verified"):
            console.print(
                f"formula: {con['formula']} -> unique-hard model, strict masks, "
                f"{con['mismatches']} mismatches to n = {con['checked_to_n']} "
                f"(all words to n = {con['exhaustive_to_n']}): {con['model']}"
            )
        else:
            from hardsoft.atlas.ltl_search import outcome

            console.print(f"{outcome(con.get('search') or {})}; no model is built")
    else:
        console.print(f"witness: {record['witness']['claim']}")
    console.print(f"=> {record['transformer_verdict']} [{record['status']}, proof]")
    console.print(f"stored: {record['evidence_path']}")
    page = Path(out) / "index.html"
    if record["page_updated"]:
        console.print(f"the row is on the page: {page}")
    else:
        console.print(
            f"no current atlas page in {out}: `hardsoft atlas --out {out}` builds it, with this row"
        )


def _page_line(out: Path, updated: bool) -> None:
    page = out / "index.html"
    if updated:
        console.print(f"the row is on the page: {page}")
    else:
        console.print(
            f"no current atlas page in {out}: `hardsoft atlas --out {out}` builds it, with this row"
        )


def _add_program_row(
    out: Path, name: str, program: str, alphabet: str | None, force: bool, as_json: bool
) -> None:
    """``add-row --program``: compile, check and place; print the record or a summary."""
    from hardsoft.atlas.build import refresh_page
    from hardsoft.atlas.program_rows import add_program_row

    progress = None if as_json else (lambda line: err_console.print(line))
    record = add_program_row(out, name, program, alphabet, force=force, progress=progress)
    record["page_updated"] = refresh_page(out)
    if as_json:
        print_json(record)
        return
    console.print(f"{name}: the language of {record['notation']} program {program}")
    for t in record["targets"]:
        if "refused" in t:
            console.print(f"  {t['target']}: refused: {t['refused']}")
            continue
        where = ", ".join(t["columns"]) or "no column (outside every class, or not exact)"
        console.print(
            f"  {t['target']}: {t['mismatches']} mismatches on {t['checked_strings']} words "
            f"(every word to n = {t['exhaustive_to_n']}, random to n = {t['max_n']}) -> "
            f"constructed in: {where}  [{out / t['model']}]"
        )
    if record["settled"]:
        console.print(
            f"=> constructed (proof) in: {', '.join(record['settled'])}; every other column: "
            "open (no claim)"
        )
    else:
        console.print("=> no column settled: every column open (no claim)")
    console.print(f"stored: {record['evidence_path']}")
    _page_line(out, record["page_updated"])

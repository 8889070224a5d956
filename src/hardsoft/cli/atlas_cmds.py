"""``hardsoft atlas``: the expressivity atlas, and ``atlas add-row`` (a user's regular row,
its star-freeness decided on the syntactic monoid)."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft.cli import app
from hardsoft.cli.common import console, input_file_option, output_dir_option, print_json

atlas_app = typer.Typer(
    help="The expressivity atlas: which transformer class computes which language, with the "
    "evidence run here in every cell (docs/atlas.md).",
    no_args_is_help=False,
)
app.add_typer(atlas_app, name="atlas")


@atlas_app.command("add-row")
def add_row_cmd(
    name: str = typer.Option(..., "--name", help="The row's name (lower-case, digits, dashes)."),
    regex: str = typer.Option(
        None, "--regex", help="A regular expression: | * + ? ( ) [ab], . or Σ for any symbol."
    ),
    dfa: Path = input_file_option("--dfa", help="A DFA file (JSON; see docs/atlas.md)."),
    alphabet: str = typer.Option(
        None, "--alphabet", help="The symbols (default: those the expression mentions)."
    ),
    out: Path = output_dir_option("--out", "-o", default="atlas", help="The atlas folder."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Decide whether a regular language is star-free (aperiodic syntactic monoid,
    Schützenberger 1965), which by Yang, Chiang & Angluin (2024) decides the column
    unique-hard / strict masks / no position features, and store the row under --out."""
    from hardsoft.atlas.rows import add_row

    record = add_row(Path(out), name, regex, dfa, alphabet)
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
    else:
        console.print(f"witness: {record['witness']['claim']}")
    console.print(f"=> {record['transformer_verdict']} [decided]")
    console.print(f"stored: {record['evidence_path']}")

"""``hardsoft eval`` (a formula's value at every position of an input) and ``hardsoft formulas``
(the named formulas of :mod:`hardsoft.logic.library`)."""

from __future__ import annotations

import typer
from rich.table import Table

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import console, print_json
from hardsoft.errors import HardsoftError
from hardsoft.logic.library import FORMULAS, get_formula
from hardsoft.logic.parser import parse
from hardsoft.logic.semantics import values as formula_values
from hardsoft.logic.syntax import (
    Formula,
    depth,
    fragment,
    operators,
    size,
    subnodes,
    symbols,
    temporal_depth,
    to_text,
)

formulas_app = typer.Typer(
    help="The named formulas: the papers' examples (PARITY, n-grams, DYCK-1, ...).",
    no_args_is_help=True,
)
app.add_typer(formulas_app, name="formulas")


def _resolve(text: str, alphabet: str | None) -> tuple[Formula, str | None]:
    """The formula for ``text`` (``@name`` picks a named formula) and its default alphabet."""
    if text.startswith("@"):
        entry = get_formula(text[1:])
        return entry.formula, entry.alphabet
    return parse(text, alphabet=alphabet), None


@app.command("eval")
def eval_cmd(
    formula_text: str = typer.Argument(
        ..., metavar="FORMULA", help="A formula, e.g. \"MOD(2,1)(#<['1'])\", or @NAME."
    ),
    word: str = typer.Option(..., "--input", "-i", help="The input word."),
    alphabet: str = typer.Option(
        None,
        "--alphabet",
        help="The symbols, as one string. Default: a named formula's alphabet, otherwise the "
        "symbols of the input and the formula (so nothing is rejected).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Evaluate FORMULA at every position of the input; accept = its value at the last
    position (the empty word is rejected)."""
    if alphabet is not None:
        alphabet = "".join(validate.alphabet(alphabet, "--alphabet"))
    formula, named_alphabet = _resolve(formula_text, alphabet)
    alpha = alphabet if alphabet is not None else named_alphabet
    if alpha is not None:
        outside = sorted(symbols(formula) - set(alpha))
        if outside:
            raise HardsoftError(
                f"symbol {outside[0]!r} of the formula is not in the alphabet {alpha!r}"
            )
        bad = sorted(set(word) - set(alpha))
        if bad:
            raise HardsoftError(f"symbol {bad[0]!r} of the input is not in the alphabet {alpha!r}")
    vals = [int(v) for v in formula_values(formula, word)]
    accept = bool(vals and vals[-1])
    frag = fragment(formula)
    if as_json:
        print_json(
            {
                "formula": to_text(formula),
                "input": word,
                "values": vals,
                "accept": accept,
                "fragment": frag.name,
            }
        )
        return
    console.print(f"formula:  {to_text(formula)}  ({frag.name})")
    if word:
        width = max(len(str(len(word))), 1)
        console.print(
            "position " + " ".join(f"{k:>{width}}" for k in range(1, len(word) + 1)),
            highlight=False,
            markup=False,
        )
        console.print(
            "input    " + " ".join(f"{ch:>{width}}" for ch in word), highlight=False, markup=False
        )
        console.print(
            "value    " + " ".join(f"{v:>{width}}" for v in vals), highlight=False, markup=False
        )
    else:
        console.print("input:    (empty word: no positions)", highlight=False)
    console.print(f"accept:   {accept}", highlight=False)


@formulas_app.command("list")
def formulas_list(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List the named formulas with their alphabet and fragment."""
    records = [entry.to_dict() for entry in FORMULAS.values()]
    if as_json:
        print_json({"formulas": records})
        return
    table = Table(title="named formulas (use as @NAME in hardsoft eval)")
    table.add_column("name", no_wrap=True)
    table.add_column("formula")
    table.add_column("alphabet", no_wrap=True)
    table.add_column("fragment", no_wrap=True)
    for r in records:
        table.add_row(str(r["name"]), str(r["formula"]), str(r["alphabet"]), str(r["fragment"]))
    console.print(table)


@formulas_app.command("show")
def formulas_show(
    name: str = typer.Argument(..., metavar="NAME", help="A name from `hardsoft formulas list`."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Show one named formula: its text, language, fragment and size."""
    entry = get_formula(name)
    f = entry.formula
    record = {
        **entry.to_dict(),
        "size": size(f),
        "depth": depth(f),
        "temporal_depth": temporal_depth(f),
        "distinct_subformulas": len(subnodes(f)),
        "operators": sorted(operators(f)),
    }
    if as_json:
        print_json(record)
        return
    for key, value in record.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        console.print(f"{key + ':':<22}{shown}", highlight=False, markup=False)

"""Rows a user brings: a regular language (a regular expression or a DFA file). Its
star-freeness is *decided* (:mod:`hardsoft.regular.starfree`), which by Yang, Chiang & Angluin
(2024) settles the column "unique-hard, strict masks, no position features", and it is
*compiled* (:mod:`hardsoft.regular`, through :mod:`hardsoft.atlas.regular_rows`) for every
target, each model checked exactly against the DFA and placed in the columns its class allows:

* not star-free: **impossible** in that column (proof: the decision, with its witness); a
  solvable language's other construction columns are **constructed** (counting heads); a
  non-solvable one is NC¹-complete (Barrington 1989): **impossible** for unique-hard attention
  with position features, **open** elsewhere ("no construction known");
* star-free: **constructed** (proof: the checked model, and the decision); **possible** only
  when a size limit refused the construction (the row says which number was too big).

A bounded search for a short past formula (:mod:`hardsoft.atlas.ltl_search`) runs first on a
star-free row; a formula it finds (checked at every length like the translation's) is used in
place of the translation's, for readability.

``add_row`` writes ``DIR/rows/NAME.json`` (the expression, the minimal DFA, the decision, the
class, the models), ``DIR/rows/NAME.dfa.json`` (the minimal DFA as a DFA file) and the models
under ``DIR/rows/NAME/``; the atlas reads every stored row, and
:func:`hardsoft.atlas.build.refresh_page` puts it on an existing page.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from hardsoft.atlas.program_rows import describe as describe_program_row
from hardsoft.atlas.program_rows import program_cells
from hardsoft.atlas.row_files import check_row_name, write_json
from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA, dfa_from_file, dfa_from_regex
from hardsoft.regular.starfree import decide_star_free
from hardsoft.validate import alphabet as validate_alphabet

STAR_FREE_COLUMN = "uhat-strict"
DECISION_CITATION = (
    "Schützenberger (1965): star-free ⇔ aperiodic syntactic monoid; Yang, Chiang & Angluin "
    "(2024) §5–6: masked unique-hard attention transformers without position features are "
    "equivalent to LTL, i.e. recognise exactly the star-free languages"
)


def decide_row(
    name: str, regex: str | None = None, dfa_file: Path | None = None, alphabet: str | None = None
) -> dict[str, Any]:
    """Build the minimal DFA of the row and decide its star-freeness (a JSON-ready record)."""
    check_row_name(name)
    if (regex is None) == (dfa_file is None):
        raise HardsoftError("give exactly one of --regex and --dfa")
    if alphabet is not None:  # refused as everywhere: empty, or a repeated symbol
        validate_alphabet(alphabet, "--alphabet")
    if regex is not None:
        dfa: DFA = dfa_from_regex(regex, alphabet)
        source = {"regex": regex}
    else:
        assert dfa_file is not None
        dfa = dfa_from_file(dfa_file)
        if alphabet is not None and tuple(alphabet) != dfa.alphabet:
            raise HardsoftError(
                f"--alphabet {alphabet!r} is not the DFA file's {''.join(dfa.alphabet)!r}"
            )
        source = {"dfa_file": str(dfa_file)}
    regen = (
        f"hardsoft atlas add-row --regex {shlex.quote(regex)} --name {name} --alphabet "
        f"{shlex.quote(''.join(dfa.alphabet))}"
        if regex is not None
        else f"hardsoft atlas add-row --dfa {shlex.quote(str(dfa_file))} --name {name}"
    )
    return describe(name, dfa, source, regen)


def describe(name: str, dfa: DFA, source: dict[str, Any], command: str) -> dict[str, Any]:
    """The record of a regular row before any construction: its source, the minimal DFA and
    the star-free decision (``command`` regenerates it). Shared by ``atlas add-row`` and the
    atlas's built-in regular rows (:mod:`hardsoft.atlas.regular_rows`)."""
    decision = decide_star_free(dfa)
    return {
        "name": name,
        **source,
        "alphabet": "".join(dfa.alphabet),
        "dfa": dfa.to_json(),
        **decision.to_json(),
        "column": STAR_FREE_COLUMN,
        "status": "possible" if decision.star_free else "impossible",
        "transformer_verdict": (
            "recognised by a masked unique-hard transformer without position features"
            if decision.star_free
            else "not recognised by any masked unique-hard transformer without position features"
        ),
        "citation": DECISION_CITATION,
        "command": command,
    }


def settle(record: dict[str, Any], folder: Path, out: Path | None = None) -> dict[str, Any]:
    """Build what the row's record promises and set its status: the step after
    :func:`describe`, shared by ``atlas add-row`` and the built-in regular rows. A star-free
    row first gets the bounded search's short formula (a shortcut, checked at every length
    like the translation's); then every row is compiled by :mod:`hardsoft.regular` for every
    target (:func:`hardsoft.atlas.regular_models.construct_regular`), its DFA file and models
    under ``folder``, paths in the record relative to ``out`` (default: ``folder``'s parent,
    the atlas folder of ``DIR/rows``)."""
    from hardsoft.atlas.regular_models import construct_regular
    from hardsoft.logic import parse

    out = folder.parent if out is None else out
    dfa = dfa_from_file_dict(record["dfa"])
    write_json(folder / f"{record['name']}.dfa.json", record["dfa"])
    shortcut = None
    if record["star_free"]:
        record["construction"] = search_formula(dfa)
        if record["construction"].get("verified"):
            shortcut = parse(record["construction"]["formula"], alphabet=dfa.alphabet)
    record["regular"] = construct_regular(record["name"], dfa, folder, out, shortcut)
    record["status"] = status_of(record)
    return record


def search_formula(dfa: DFA) -> dict[str, Any]:
    """For a star-free row: search a short past-LTL formula (:mod:`hardsoft.atlas.ltl_search`)
    and verify it with the logic evaluator on every word up to the search length. The record
    says what was found (``formula`` None: the bounded search found none); the formula is then
    checked at every length and compiled with the row's other models."""
    from hardsoft.atlas.ltl_search import search, simplify
    from hardsoft.languages.base import all_words
    from hardsoft.logic import evaluate
    from hardsoft.logic.syntax import to_text

    formula, stats = search(dfa)
    if formula is None:
        return {"formula": None, "search": stats}
    formula = simplify(formula, dfa.alphabet)  # verified below, like the search's own result
    length = int(stats["length"])
    words = all_words(dfa.alphabet, length)
    values = evaluate(formula, words, dfa.alphabet)
    agree = all(
        bool(values[b, i]) == dfa.accepts(w[: i + 1])
        for b, w in enumerate(words)
        for i in range(length)
    )
    return {"formula": to_text(formula), "search": stats, "verified": agree}


def _refuse_overwrite(rows: Path, record: dict[str, Any]) -> None:
    """A stored row of the same name must describe the same language (the same minimal DFA);
    another one is replaced only with ``force``."""
    path = rows / f"{record['name']}.json"
    if not path.is_file():
        return
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return  # an unreadable record is replaced
    if old.get("dfa") != record["dfa"]:
        was = old.get("regex") or old.get("dfa_file") or old.get("program") or "another language"
        raise HardsoftError(
            f"row {record['name']!r} already exists in {str(rows)!r} for {was!r}, a different "
            "language; choose another --name, or pass --force to replace it"
        )


def status_of(record: dict[str, Any]) -> str:
    """The star-free cell's status from a stored record: impossible (not star-free),
    constructed (a model checked exactly against the DFA, in the column's class) or possible
    (star-free, no model built: a size limit refused it)."""
    from hardsoft.atlas.regular_models import settled

    if not record["star_free"]:
        return "impossible"
    return "constructed" if STAR_FREE_COLUMN in settled(record) else "possible"


def add_row(
    out: Path,
    name: str,
    regex: str | None = None,
    dfa_file: Path | None = None,
    alphabet: str | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Decide the row and store it under ``out/rows/`` (see the module docstring). A row of
    the same name for another language is refused unless ``force``."""
    record = decide_row(name, regex, dfa_file, alphabet)
    rows = Path(out) / "rows"
    if not force:
        _refuse_overwrite(rows, record)
    settle(record, rows)
    record["evidence_path"] = str(rows / f"{name}.json")
    write_json(rows / f"{name}.json", record)
    return record


def dfa_from_file_dict(data: dict[str, Any]) -> DFA:
    """The :class:`DFA` of a record's ``dfa`` (as :meth:`DFA.to_json` wrote it: states 0..)."""
    alphabet = tuple(data["alphabet"])
    n = len(data["transitions"])
    delta = tuple(tuple(int(data["transitions"][str(q)][a]) for a in alphabet) for q in range(n))
    return DFA(alphabet, delta, frozenset(int(q) for q in data["accept"]))


def stored_rows(out: Path) -> list[dict[str, Any]]:
    """Every row stored under ``out/rows/`` (sorted by name)."""
    folder = Path(out) / "rows"
    if not folder.is_dir():
        return []
    rows = []
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".dfa.json"):
            continue
        try:
            rows.append(json.loads(path.read_text()))
        except (OSError, ValueError) as exc:
            raise HardsoftError(f"cannot read the stored row {path}: {exc}") from None
    return rows


def user_cells(rec: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    """The cells of a stored row: a regular row's star-free cell, or the cells a program
    row's checked models settle (:mod:`hardsoft.atlas.program_rows`)."""
    if rec.get("kind") == "program":
        return program_cells(rec, out)
    from hardsoft.atlas.regular_models import regular_cells

    return [user_cell(rec, out), *regular_cells(rec, out)]


def user_row_entry(rec: dict[str, Any]) -> dict[str, Any]:
    """The row as the table lists it (a program row also when no cell is settled, with what
    each target gave)."""
    if rec.get("kind") == "program":
        return {"id": rec["name"], "title": rec["name"], "note": describe_program_row(rec)}
    return {"id": rec["name"], "title": rec["name"]}


def _star_free_summary(
    rec: dict[str, Any], summary: str, artefacts: dict[str, str], commands: list[str]
) -> tuple[str, bool]:
    """The star-free cell's summary: the hard model that settles it, or why none does."""
    from hardsoft.atlas.regular_models import settled

    reg = rec.get("regular") or {}
    models = settled(rec).get(STAR_FREE_COLUMN, [])
    if models:
        t = models[0]
        source = reg.get("formula_source") or "the translation (docs/regular.md)"
        summary += (
            f"; past formula from {source} ({reg['formula_size']['dag_after']} distinct nodes, "
            f"equal to the DFA at every length) compiled for unique-hard attention with strict "
            f"masks: {t['mismatches']} mismatches to n = {t['max_n']}"
        )
        artefacts["model"] = t["model"]
        commands.append(t["command"])
        return summary, t["mismatches"] == 0
    if rec["star_free"]:
        why = reg.get("refused") or "no hard model in the column's class was built"
        summary += f"; a model exists by the theorem, none is built here: {why}"
    return summary, True


def user_cell(rec: dict[str, Any], out: Path) -> dict[str, Any]:
    """The cell of a stored row in the star-free column (as :mod:`hardsoft.atlas.build`
    writes built-in cells). The row is labelled by its name (unique), its expression beside."""
    from hardsoft.atlas.table import COLUMNS

    status = status_of(rec)
    if rec["star_free"]:
        summary = f"star-free: aperiodic syntactic monoid ({rec['monoid_size']} elements)"
    else:
        summary = f"not star-free: {rec['witness']['claim']}"
    artefacts = {"decision": str(Path("rows") / f"{rec['name']}.json")}
    commands = [rec["command"] + f" --out {out}"]
    summary, agrees = _star_free_summary(rec, summary, artefacts, commands)
    source = rec.get("regex") or f"DFA file {rec.get('dfa_file')}"
    return {
        "row": rec["name"],
        "row_title": rec["name"],
        "row_source": source,
        "language": rec["name"],
        "column": STAR_FREE_COLUMN,
        "column_title": COLUMNS[0].title,
        "status": status,
        "evidence_kind": "proof",
        "citation": rec["citation"],
        "theorem": None,
        "note": rec["transformer_verdict"],
        "verdict": "agrees" if agrees else "DISAGREES",
        "evidence": {
            "status": status,
            "kind": "proof",
            "agrees": agrees,
            "summary": summary,
            "artefacts": artefacts,
            "commands": commands,
            "numbers": {"star_free": rec["star_free"], "monoid_size": rec["monoid_size"]},
            "decision": rec,
            "check": None,
            "illustration": None,
        },
        "evidence_path": str(Path("rows") / f"{rec['name']}.json"),
        "user_row": True,
    }

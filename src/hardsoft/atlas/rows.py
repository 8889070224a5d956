"""Rows a user brings: a regular language (a regular expression or a DFA file) whose
star-freeness is *decided* (:mod:`hardsoft.atlas.starfree`), which by Yang, Chiang & Angluin
(2024) settles the column "unique-hard, strict masks, no position features":

* not star-free: **impossible** (proof: the decision, with its witness);
* star-free, with a formula found by the bounded search, compiled and checked exactly against
  the DFA: **constructed** (proof: the checked model, and the decision);
* star-free, no formula found within the search's budget: **possible** (proof: the decision
  and the theorem; no model is built).

``add_row`` writes ``DIR/rows/NAME.json`` (the expression, the minimal DFA, the decision, the
status) and ``DIR/rows/NAME.dfa.json`` (the minimal DFA as a DFA file); the atlas reads every
stored row, and :func:`hardsoft.atlas.build.refresh_page` puts it on an existing page.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from hardsoft.atlas.ltl_search import outcome
from hardsoft.atlas.program_rows import describe as describe_program_row
from hardsoft.atlas.program_rows import program_cells
from hardsoft.atlas.row_files import check_row_name, write_json
from hardsoft.atlas.starfree import decide_star_free
from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA, dfa_from_file, dfa_from_regex
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


def settle(record: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Build what the row's record promises (models and checks under ``folder``) and set its
    status: the step after :func:`describe`, shared by ``atlas add-row`` and the built-in
    regular rows."""
    if record["star_free"]:
        dfa = dfa_from_file_dict(record["dfa"])
        record["construction"] = construct(record["name"], dfa, folder)
    record["status"] = status_of(record)
    return record


def construct(name: str, dfa: DFA, folder: Path) -> dict[str, Any]:
    """For a star-free row: search a past-LTL formula (:mod:`hardsoft.atlas.ltl_search`),
    verify it with the logic evaluator on every word up to the search length, compile it for
    unique-hard attention with strict masks and check the model exactly against the DFA. The
    record says what was found and shown (``formula`` None: the bounded search found none)."""
    from hardsoft.atlas.evidence import class_violations
    from hardsoft.atlas.ltl_search import affordable_length, search, simplify
    from hardsoft.atlas.table import column
    from hardsoft.check import check_language
    from hardsoft.compile import compile_formula
    from hardsoft.languages.base import all_words
    from hardsoft.languages.regular import RegularLanguage
    from hardsoft.logic import evaluate
    from hardsoft.logic.syntax import to_text
    from hardsoft.model.io import save_model

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
    if not agree:  # the search's operators and the evaluator disagree: say so
        return {"formula": to_text(formula), "search": stats, "verified": False}
    model = compile_formula(formula, dfa.alphabet, "hard", False, n=1000)
    k = len(dfa.alphabet)
    exhaustive = affordable_length(k, {2: 12, 3: 8}.get(k, 6))
    rep = check_language(
        model,
        RegularLanguage(name, dfa),
        exhaustive_max_n=exhaustive,
        random_n=[64, 256],
        samples=16,
    )
    path = folder / f"{name}.model.safetensors"
    save_model(model, path)
    return {
        "formula": to_text(formula),
        "search": stats,
        "verified": True,
        "model": str(path),
        "checked_to_n": rep["max_n"],
        "exhaustive_to_n": exhaustive,
        "mismatches": rep["mismatches"],
        "outside_class": class_violations(model, column(STAR_FREE_COLUMN)),
        "command": (
            f"hardsoft compile {shlex.quote(to_text(formula))} --alphabet "
            f"{shlex.quote(''.join(dfa.alphabet))} --target hard -o {shlex.quote(str(path))}"
        ),
    }


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
    """The cell's status from a stored record: impossible (not star-free), constructed (a
    model checked exactly against the DFA) or possible (star-free, no model built)."""
    if not record["star_free"]:
        return "impossible"
    con = record.get("construction") or {}
    if con.get("verified") and con.get("mismatches") == 0 and not con.get("outside_class"):
        return "constructed"
    return "possible"


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
    write_json(rows / f"{name}.dfa.json", record["dfa"])
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
    return [user_cell(rec, out)]


def user_row_entry(rec: dict[str, Any]) -> dict[str, Any]:
    """The row as the table lists it (a program row also when no cell is settled, with what
    each target gave)."""
    if rec.get("kind") == "program":
        return {"id": rec["name"], "title": rec["name"], "note": describe_program_row(rec)}
    return {"id": rec["name"], "title": rec["name"]}


def user_cell(rec: dict[str, Any], out: Path) -> dict[str, Any]:
    """The cell of a stored row in the star-free column (as :mod:`hardsoft.atlas.build`
    writes built-in cells). The row is labelled by its name (unique), its expression beside."""
    from hardsoft.atlas.table import COLUMNS

    status = status_of(rec)
    if rec["star_free"]:
        summary = f"star-free: aperiodic syntactic monoid ({rec['monoid_size']} elements)"
    else:
        summary = f"not star-free: {rec['witness']['claim']}"
    con = rec.get("construction") or {}
    artefacts = {"decision": str(Path("rows") / f"{rec['name']}.json")}
    commands = [rec["command"] + f" --out {out}"]
    agrees = True
    if con.get("verified"):
        summary += (
            f"; formula {con['formula']} compiled for unique-hard attention with strict "
            f"masks: {con['mismatches']} mismatches to n = {con['checked_to_n']}"
        )
        artefacts["model"] = str(Path(con["model"]).relative_to(out))
        commands.append(con["command"])
        agrees = con["mismatches"] == 0 and not con.get("outside_class")
    elif rec["star_free"] and con.get("formula"):  # found, but the evaluator disagreed
        summary += (
            f"; the search's formula {con['formula']} failed its verification by the logic "
            "evaluator: a model exists by the theorem, none is built here"
        )
    elif rec["star_free"]:
        summary += (
            f"; {outcome(con.get('search') or {})}: a model exists by the theorem, none is "
            "built here"
        )
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

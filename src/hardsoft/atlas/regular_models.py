"""The models of a regular row (``atlas add-row --regex/--dfa``, and the atlas's built-in regular
rows, :mod:`hardsoft.atlas.regular_rows`): the language compiled by
:mod:`hardsoft.regular` for every target, each model checked against the row's DFA at every
position, and each placed in the columns whose class it lies in (read from the model itself,
:func:`hardsoft.atlas.evidence.class_violations`).

* star-free: the ``hard`` model (unique-hard heads, strict masks, no position features) settles
  ``uhat-strict`` and ``uhat-pe``; ``soft-temperature`` settles ``soft-tau`` and (bounded
  position features are among any) ``soft-tau-pe``; ``soft-pe`` its column; the
  ``soft-temperature`` model with every head made average-hard settles ``ahat``;
* solvable: the same targets; ``uhat-strict`` is impossible (not star-free, decided), and the
  ``hard`` model (counting heads are average-hard beside unique-hard ones) lies in no column;
* non-solvable: nothing is built. ``uhat-pe`` is impossible (unique-hard transformers recognise
  only AC⁰ languages, Hao, Angluin & Frank 2022; the language is NC¹-complete, Barrington
  1989, and NC¹ ⊄ AC⁰ since PARITY ∉ AC⁰, Furst, Saxe & Sipser 1984); the other construction
  columns say "no construction known".

Artefacts: ``FOLDER/NAME/TARGET.safetensors`` and ``FOLDER/NAME/TARGET.check.json`` (FOLDER:
``rows/`` for a user's row, ``cells/ROW/regular/`` for a built-in one).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from hardsoft.atlas.evidence import class_violations
from hardsoft.atlas.row_files import write_json
from hardsoft.atlas.table import COLUMNS, REGULAR_COLUMNS, Column, EvidenceKind, Status
from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA
from hardsoft.logic.syntax import Formula

TARGETS = ("hard", "soft-temperature", "soft-pe", "average-hard")
"""The compiler's targets, and ``average-hard``: the soft-temperature model hardened."""
CHECK_RANDOM_N = (100, 400)
BARRINGTON_CELL = "no construction known (NC¹-complete, Barrington 1989)"
NC1_NOT_AC0 = (
    "Hao, Angluin & Frank (TACL 2022), main theorem: unique-hard transformers (any masks and "
    "position embeddings) recognise only languages in AC⁰; Barrington (1989): a regular "
    "language whose syntactic monoid holds a non-solvable group is NC¹-complete (under AC⁰ "
    "reductions), and NC¹ ⊄ AC⁰ (PARITY ∈ NC¹ is not in AC⁰, Furst, Saxe & Sipser 1984)"
)
CONSTRUCTION_COLUMNS = REGULAR_COLUMNS


def build_targets(
    dfa: DFA, formula: Formula, cls: Any, folder: Path, out: Path, dfa_path: Path
) -> list[dict[str, Any]]:
    """Every target's model of ``formula`` (already checked against the DFA at every
    length), checked against the DFA and placed (JSON-ready records)."""
    from hardsoft.regular.compile import model_for

    targets = []
    soft = None
    for target in TARGETS:
        if target == "average-hard":
            from hardsoft.convert.harden import harden

            model = _hardened(soft, harden)
        else:
            model = model_for(formula, cls, dfa, target)
        if target == "soft-temperature":
            soft = model
        if model is not None:
            targets.append(_place(model, target, dfa, folder, out, dfa_path))
    return targets


def _hardened(soft: Any, harden: Any) -> Any:
    """The soft-temperature model with every head average-hard; None where there is no
    softmax head to harden (e.g. a one-letter language read from positions alone: then the
    other models, with no heads either, are in the average-hard class already)."""
    if soft is None:
        return None
    try:
        return harden(soft, "average")
    except HardsoftError:
        return None


def _place(
    model: Any, target: str, dfa: DFA, folder: Path, out: Path, dfa_path: Path
) -> dict[str, Any]:
    from hardsoft.compile.results import certificate_label
    from hardsoft.model.io import save_model
    from hardsoft.regular.compile import check_against

    report = check_against(model, dfa, CHECK_RANDOM_N)
    folder.mkdir(parents=True, exist_ok=True)
    model_path, check_path = folder / f"{target}.safetensors", folder / f"{target}.check.json"
    save_model(model, model_path)
    write_json(check_path, report)
    exact = report["mismatches"] == 0
    placed = {c.id: class_violations(model, c) for c in COLUMNS if c.id in CONSTRUCTION_COLUMNS}
    cert = model.meta.get("certificate") or {}
    label = certificate_label(cert) if cert else None
    if target == "average-hard":
        label = (
            "own construction (the soft-temperature model with every head average-hard; "
            f"its label: {label})"
        )
    rel = str(model_path.relative_to(out))
    return {
        "target": target,
        "model": rel,
        "check": str(check_path.relative_to(out)),
        "theorem": label,
        **{k: report[k] for k in ("mismatches", "checked_strings", "checked_positions", "max_n")},
        "exhaustive_to_n": report["exhaustive_to_n"],
        "exact": exact,
        "columns": sorted(c for c, why in placed.items() if not why) if exact else [],
        "outside": {c: why for c, why in placed.items() if why},
        "command": _command(target, dfa_path, rel),
    }


def _command(target: str, dfa_path: Path, model: str) -> str:
    """The command that rebuilds (and re-checks against the DFA) a target's model."""
    dfa = shlex.quote(str(dfa_path))
    if target != "average-hard":
        return f"hardsoft compile --dfa {dfa} --target {target} -o {shlex.quote(model)}"
    soft = shlex.quote(model.replace("average-hard", "soft-temperature"))
    return f"hardsoft harden {soft} --weighting average -o {shlex.quote(model)}"


def construct_regular(
    name: str, dfa: DFA, rows: Path, out: Path, shortcut: Formula | None = None
) -> dict[str, Any]:
    """The row's class and models (module docstring). ``shortcut``: a formula the bounded
    search found (checked here like the translation's); else the translation's formula."""
    from hardsoft.regular.compile import formula_for, use_formula

    try:
        cls, formula, record = formula_for(dfa)
    except HardsoftError as exc:  # a size limit: named, and the row says so
        return {"refused": str(exc).splitlines()[0], "targets": []}
    if formula is None:
        return {**record, "targets": []}
    if shortcut is not None:
        formula, record = use_formula(shortcut, dfa, record, "the bounded formula search")
    dfa_path = (rows / f"{name}.dfa.json").relative_to(out)
    record["targets"] = build_targets(dfa, formula, cls, rows / name, out, dfa_path)
    return record


def settled(rec: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Column id → the targets whose models settle it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for t in (rec.get("regular") or {}).get("targets", []):
        for c in t["columns"]:
            out.setdefault(c, []).append(t)
    return out


def regular_cells(rec: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    """The cells besides ``uhat-strict`` (:func:`hardsoft.atlas.rows.user_cell` makes that
    one): one per column a checked model settles; for a non-solvable row, ``uhat-pe``
    impossible and the other construction columns open, "no construction known"."""
    reg = rec.get("regular") or {}
    cells = []
    by_column = settled(rec)
    for col in COLUMNS:
        if col.id == "uhat-strict" or col.id not in CONSTRUCTION_COLUMNS:
            continue
        if col.id in by_column:
            cells.append(_cell(rec, col, Status.CONSTRUCTED, _built(rec, by_column[col.id])))
        elif reg.get("class") == "non-solvable":
            status = Status.IMPOSSIBLE if col.id == "uhat-pe" else Status.OPEN
            cells.append(_cell(rec, col, status, _refusal(rec, col)))
    return cells


def _built(rec: dict[str, Any], models: list[dict[str, Any]]) -> dict[str, Any]:
    checks = "; ".join(
        f"{t['target']} model: {t['mismatches']} mismatches on {t['checked_strings']} words "
        f"(every word to n = {t['exhaustive_to_n']}, random to n = {t['max_n']})"
        for t in models
    )
    reg = rec["regular"]
    summary = (
        f"{reg['class']} (syntactic monoid of {reg['monoid_size']} elements): its past formula "
        f"({reg['formula_size']['dag_after']} distinct nodes, equal to the DFA at every length) "
        f"compiled and checked against the DFA at every position: {checks}; the model is in "
        "this column's class (read from the model)"
    )
    return {
        "summary": summary,
        "citation": f"compiled here (docs/regular.md); the model's certificate: "
        f"{models[0]['theorem']}",
        "theorem": models[0]["theorem"],
        "artefacts": {"model": models[0]["model"]}  # the one a recheck loads
        | {f"{t['target']} model": t["model"] for t in models}
        | {f"{t['target']} check": t["check"] for t in models},
        "commands": [t["command"] for t in models],
        "numbers": {
            t["target"]: {k: t[k] for k in ("mismatches", "checked_strings", "max_n")}
            for t in models
        },  # fmt: skip
    }


def _refusal(rec: dict[str, Any], col: Column) -> dict[str, Any]:
    reg = rec["regular"]
    impossible = col.id == "uhat-pe"
    return {
        "summary": (
            f"not in AC⁰: {reg['reason']}" if impossible else f"{BARRINGTON_CELL}: {reg['reason']}"
        ),
        "citation": NC1_NOT_AC0 if impossible else reg["reason"],
        "theorem": None,
        "artefacts": {},
        "commands": [],
        "numbers": {"monoid_size": reg["monoid_size"]},
    }


def _cell(rec: dict[str, Any], col: Column, status: Status, what: dict[str, Any]) -> dict:
    kind = EvidenceKind.PROOF if status is not Status.OPEN else EvidenceKind.CITATION
    return {
        "row": rec["name"],
        "row_title": rec["name"],
        "row_source": rec.get("regex") or f"DFA file {rec.get('dfa_file')}",
        "language": rec["name"],
        "column": col.id,
        "column_title": col.title,
        "status": status.value,
        "evidence_kind": kind.value,
        "citation": what["citation"],
        "theorem": what["theorem"],
        "note": BARRINGTON_CELL if status is Status.OPEN else "",
        "verdict": "not run here" if status is Status.OPEN else "agrees",
        "evidence": {
            "status": status.value,
            "kind": kind.value,
            "agrees": True,
            "summary": what["summary"],
            "artefacts": {
                "decision": str(Path("rows") / f"{rec['name']}.json"),
                **what["artefacts"],
            },
            "commands": [rec["command"], *what["commands"]],
            "numbers": what["numbers"],
            "decision": None,
            "check": None,
            "illustration": None,
        },
        "evidence_path": str(Path("rows") / f"{rec['name']}.json"),
        "user_row": True,
    }

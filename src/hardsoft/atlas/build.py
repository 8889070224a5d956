"""Build the atlas: for every cell, the claim (:mod:`.table`) and the evidence run here
(:mod:`.evidence`), stored under ``OUT/cells/ROW/COLUMN/`` and reused while current.

``build_atlas`` returns the whole table as one JSON-ready dict and writes ``OUT/atlas.json``,
``OUT/atlas.csv`` and ``OUT/index.html``. A cell's stored evidence is reused when its
``evidence.json`` was made by the same atlas version in the same mode and its artefacts are
all there; ``force`` reruns everything.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hardsoft.atlas import evidence as E
from hardsoft.atlas.rows import STAR_FREE_COLUMN, stored_rows, write_json
from hardsoft.atlas.table import CLAIMS, COLUMNS, ROWS, Claim, Column, Row, Status
from hardsoft.errors import HardsoftError
from hardsoft.model.io import atomic_write

VERSION = "5"
"""Bump when an evidence producer changes: stored cells of another version are rerun."""
EVIDENCE_FILE = "evidence.json"


def parse_only(text: str | None) -> tuple[set[str] | None, set[str] | None]:
    """``--only ROW,COL`` (either may be ``*`` or empty; several rows or columns with ``+``):
    the rows and columns to build (None: all)."""
    if text is None:
        return None, None
    if not text.strip():  # an empty --only is a slip, not "everything" (a full rebuild)
        raise HardsoftError("--only is empty; give ROW,COLUMN (e.g. parity,ahat or parity,*)")
    parts = text.split(",")
    if len(parts) != 2:
        raise HardsoftError(
            f"--only expects ROW,COLUMN (e.g. parity,ahat or parity,*), got {text!r}"
        )
    known_rows = {r.id for r in ROWS}
    known_cols = {c.id for c in COLUMNS}
    picked: list[set[str] | None] = []
    for part, known, what in ((parts[0], known_rows, "row"), (parts[1], known_cols, "column")):
        part = part.strip()
        if part in ("", "*"):
            picked.append(None)
            continue
        names = {p.strip() for p in part.split("+") if p.strip()}
        bad = sorted(names - known)
        if bad:
            raise HardsoftError(f"unknown {what} {bad[0]!r}; known: {', '.join(sorted(known))}")
        picked.append(names)
    return picked[0], picked[1]


def _produce(row: Row, col: Column, claim: Claim, budget: E.Budget, folder: Path, out: Path):
    """Run the claim's evidence producer (None for citation-only cells)."""
    if claim.how == "compile":
        ev = E.produce_compile(row, col, budget, folder, out)
    elif claim.how in ("program-logic", "program-tieless"):
        ev = E.produce_program(row, col, claim.how.split("-")[1], budget, folder, out)
    elif claim.how == "restrict":
        ev = E.produce_restrict(row, col, budget, folder, out)
    elif claim.how == "sensitivity":
        ev = E.produce_sensitivity(row, col, budget, folder, out)
    elif claim.how == "learn":
        ev = E.produce_learn(row, col, budget, folder, out)
    elif claim.how == "decide":
        ev = E.produce_decision(row, claim, folder, out)
        expected = claim.params.get("star_free", False)
        ev.agrees = ev.decision is not None and ev.decision["star_free"] == expected
    else:
        return None
    if col.id == STAR_FREE_COLUMN and row.regex and claim.how != "decide":
        ev.decision = E.decision_record(row)
        sf = ev.decision["star_free"]
        ev.summary += f"; star-free decision: {'star-free' if sf else 'not star-free'}"
        # the decision must agree with the cell: constructed ⇔ star-free
        if (claim.status is Status.CONSTRUCTED) != sf:
            ev.agrees = False
            ev.summary += " (DISAGREES with the cell)"
    return ev


def _cached(folder: Path, out: Path, quick: bool) -> dict[str, Any] | None:
    path = folder / EVIDENCE_FILE
    if not path.is_file():
        return None
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if rec.get("version") != VERSION or rec.get("quick") != quick or rec.get("error"):
        return None  # an older atlas, the other mode, or a failed run: produce it again
    arts = (rec.get("evidence") or {}).get("artefacts") or {}
    if not all((out / p).is_file() for p in arts.values()):
        return None
    return rec


def _verdict(claim: Claim, ev: E.Evidence | None) -> str:
    if not claim.status.needs_evidence:
        return "not run here"
    if ev is None:
        return "no evidence"
    return "agrees" if ev.agrees else "DISAGREES"


def build_cell(
    row: Row, col: Column, out: Path, quick: bool, force: bool = False
) -> dict[str, Any]:
    """One cell: reuse the stored evidence if current, else produce it and store it."""
    claim = CLAIMS[(row.id, col.id)]
    if claim.how == "learn" and quick and not claim.params.get("quick"):
        claim = Claim(Status.PENDING, claim.citation, "none", "trained in --full mode only")
    folder = out / "cells" / row.id / col.id
    if not force:
        cached = _cached(folder, out, quick)
        if cached is not None:
            cached["reused"] = True
            return cached
    started = time.perf_counter()
    error = None
    try:
        ev = _produce(row, col, claim, E.Budget(quick), folder, out)
    except HardsoftError as exc:  # e.g. a memory estimate refused a length: said, not hidden
        ev, error = None, str(exc)
    rec: dict[str, Any] = {
        "version": VERSION,
        "quick": quick,
        "row": row.id,
        "row_title": row.title,
        "language": row.language,
        "column": col.id,
        "column_title": col.title,
        "status": claim.status.value,
        "citation": claim.citation,
        "note": claim.note,
        "verdict": _verdict(claim, ev),
        "error": error,
        "evidence": None if ev is None else ev.to_json(),
        "regenerate": (
            f"hardsoft atlas --{'quick' if quick else 'full'} --only {row.id},{col.id} --force "
            f"--out {out}"
        ),
        "evidence_path": str(Path("cells") / row.id / col.id / EVIDENCE_FILE),
        "seconds": round(time.perf_counter() - started, 3),
    }
    write_json(folder / EVIDENCE_FILE, rec)
    rec["reused"] = False
    return rec


def _user_cells(out: Path) -> list[dict[str, Any]]:
    """The decided cells of the rows added with ``atlas add-row``."""
    cells = []
    for rec in stored_rows(out):
        sf = rec["star_free"]
        summary = (
            f"star-free: aperiodic syntactic monoid ({rec['monoid_size']} elements)"
            if sf
            else f"not star-free: w = {rec['witness']['word']!r} has period "
            f"{rec['witness']['period']}"
        )
        con = rec.get("construction") or {}
        artefacts = {"decision": str(Path("rows") / f"{rec['name']}.json")}
        commands = [rec["command"] + f" --out {out}"]
        if con.get("verified"):
            summary += (
                f"; formula {con['formula']} compiled for unique-hard attention with strict "
                f"masks: {con['mismatches']} mismatches to n = {con['checked_to_n']}"
            )
            artefacts["model"] = str(Path(con["model"]).relative_to(out))
            commands.append(con["command"])
        elif sf:
            summary += "; no formula found by the bounded search"
        cells.append(
            {
                "row": rec["name"],
                "row_title": rec.get("regex") or rec["name"],
                "language": rec["name"],
                "column": STAR_FREE_COLUMN,
                "column_title": COLUMNS[0].title,
                "status": "decided",
                "citation": rec["citation"],
                "note": rec["transformer_verdict"],
                "verdict": "agrees",
                "evidence": {
                    "status": "decided",
                    "agrees": True,
                    "summary": summary,
                    "artefacts": artefacts,
                    "commands": commands,
                    "numbers": {"star_free": sf, "monoid_size": rec["monoid_size"]},
                    "decision": rec,
                },
                "evidence_path": str(Path("rows") / f"{rec['name']}.json"),
                "user_row": True,
            }
        )
    return cells


def build_atlas(
    out: Path,
    quick: bool = True,
    only: str | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build (or reuse) every selected cell and write the table as JSON, CSV and HTML."""
    from hardsoft.atlas.html import write_html

    out = Path(out)
    rows_sel, cols_sel = parse_only(only)
    started = time.perf_counter()
    cells = []
    for row in ROWS:
        if rows_sel is not None and row.id not in rows_sel:
            continue
        for col in COLUMNS:
            if cols_sel is not None and col.id not in cols_sel:
                continue
            cell = build_cell(row, col, out, quick, force)
            cells.append(cell)
            if progress is not None:
                progress(f"{row.id} × {col.id}: {cell['status']} ({cell['verdict']})")
    if rows_sel is None and (cols_sel is None or STAR_FREE_COLUMN in cols_sel):
        cells += _user_cells(out)
    table = summarize(cells, quick, time.perf_counter() - started)
    write_json(out / "atlas.json", table)
    text = to_csv(table)
    atomic_write(out / "atlas.csv", lambda tmp: Path(tmp).write_text(text), "atlas.csv")
    write_html(out / "index.html", table)
    return table


def summarize(cells: list[dict[str, Any]], quick: bool, seconds: float) -> dict[str, Any]:
    """The whole table: rows, columns, cells and the counts."""
    counts: dict[str, int] = {}
    for cell in cells:
        counts[cell["status"]] = counts.get(cell["status"], 0) + 1
    with_evidence = [
        c for c in cells if Status(c["status"]).needs_evidence and c["verdict"] == "agrees"
    ]
    row_ids = list(dict.fromkeys(c["row"] for c in cells))
    titles = {c["row"]: c["row_title"] for c in cells}
    return {
        "mode": "quick" if quick else "full",
        "version": VERSION,
        "columns": [{"id": c.id, "title": c.title, "description": c.description} for c in COLUMNS],
        "rows": [{"id": r, "title": titles[r]} for r in row_ids],
        "cells": cells,
        "counts": counts,
        "cells_total": len(cells),
        "cells_with_evidence": len(with_evidence),
        "disagreements": [
            f"{c['row']} × {c['column']}" for c in cells if c["verdict"] == "DISAGREES"
        ],
        "no_evidence": [
            f"{c['row']} × {c['column']}" for c in cells if c["verdict"] == "no evidence"
        ],
        "seconds": round(seconds, 2),
    }


CSV_FIELDS = ("row", "column", "status", "verdict", "summary", "citation", "evidence_path")


def to_csv(table: dict[str, Any]) -> str:
    """One line per cell (for papers)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_FIELDS)
    for c in table["cells"]:
        summary = (c.get("evidence") or {}).get("summary", c.get("note", ""))
        writer.writerow(
            [
                c["row"],
                c["column"],
                c["status"],
                c["verdict"],
                summary,
                c["citation"],
                c["evidence_path"],
            ]
        )
    return buf.getvalue()

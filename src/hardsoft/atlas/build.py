"""Build the atlas: for every cell, the claim (:mod:`.table`) and the evidence run here, stored
under ``OUT/cells/ROW/COLUMN/`` and reused while current.

``build_atlas`` returns the whole table as one JSON-ready dict and writes ``OUT/atlas.json``,
``OUT/atlas.csv`` and ``OUT/index.html``. A cell's stored evidence is reused when its
``evidence.json`` was made by the same atlas version in the same mode and its artefacts are
all there; ``force`` reruns everything. Every cell carries its status, its evidence kind
(proof, illustration or citation) and its verdict; the table counts both.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardsoft.atlas import construct, illustrate, layernorm, learned, regular_rows
from hardsoft.atlas.checks import run_check
from hardsoft.atlas.evidence import CHECK_FILE, Budget, Evidence, decision_record, rel, row_language
from hardsoft.atlas.rows import (
    DECISION_CITATION,
    STAR_FREE_COLUMN,
    stored_rows,
    user_cells,
    user_row_entry,
    write_json,
)
from hardsoft.atlas.table import (
    CLAIMS,
    COLUMNS,
    REGULAR_COLUMNS,
    ROWS,
    Claim,
    Column,
    EvidenceKind,
    Row,
    Status,
    column,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.io import atomic_write

VERSION = "9"
"""Bump when an evidence producer changes: stored cells of another version are rerun."""
EVIDENCE_FILE = "evidence.json"
VERDICTS = ("agrees", "DISAGREES", "measured", "not run here", "no evidence")
"""``agrees`` / ``DISAGREES``: a proof run here supports the claim or not; ``measured``: an
illustration-only cell (training runs) whose status the protocol decided; ``not run here``: a
citation; ``no evidence``: its producer failed (the error is stored, the cell rerun next time)."""


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


CONSTRUCTORS = {
    "compile": construct.produce_compile,
    "harden": construct.produce_harden,
    "crafted-anbn": construct.produce_crafted_anbn,
    "crasp-ln": layernorm.produce_crasp_ln,
    "parity-ln": layernorm.produce_parity_ln,
}


def _construction(
    row: Row, col: Column, claim: Claim, budget: Budget, folder: Path, out: Path
) -> Evidence:
    if claim.how in ("program-logic", "program-tieless"):
        ev = construct.produce_program(row, col, claim.how.split("-")[1], budget, folder, out)
    else:
        ev = CONSTRUCTORS[claim.how](row, col, budget, folder, out)
    if col.id == STAR_FREE_COLUMN and row.regex:
        # the decision must agree with the cell: constructed there ⇔ star-free
        ev.decision = decision_record(row)
        if not ev.decision["star_free"]:
            ev.agrees, ev.status = False, None
            ev.summary += "; star-free decision: NOT star-free (DISAGREES with the cell)"
        else:
            ev.summary += "; star-free decision: star-free"
    return ev


def _checked(
    row: Row, col: Column, claim: Claim, budget: Budget, folder: Path, out: Path
) -> Evidence:
    """A cited theorem and the check, run here, that it applies to the row; with the
    claim's illustration beside it."""
    assert claim.check is not None
    check = run_check(claim.check, row, row_language(row), budget.quick)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / CHECK_FILE, check.to_json())
    ev = Evidence(
        claim.status if check.passed else None,
        EvidenceKind.PROOF,
        check.passed,
        check.summary,
        {"check": rel(folder / CHECK_FILE, out)},
        numbers={k: v for k, v in check.numbers.items() if k != "decision"},
        check=check.to_json(),
        decision=check.numbers.get("decision"),
    )
    if claim.illustrate:
        ev.illustration = _illustration(row, col, claim.illustrate, budget, folder, out)
    return ev


def _illustration(
    row: Row, col: Column, kind: str, budget: Budget, folder: Path, out: Path
) -> dict[str, Any]:
    try:
        if kind == "restrict":
            return illustrate.restriction(row, col, budget, folder, out)
        if kind == "ln-eps":
            return layernorm.eps_illustration(row, col, budget, folder, out)
        return illustrate.sensitivity(row, col, budget, folder, out, kind == "sensitivity-ln")
    except HardsoftError as exc:  # an illustration never decides the cell: said, not hidden
        return {"kind": "illustration", "found": False, "summary": f"not run: {exc}"}


def _produce(
    row: Row, col: Column, claim: Claim, budget: Budget, folder: Path, out: Path
) -> Evidence | None:
    """Run the claim's evidence (None for a citation-only cell)."""
    if claim.how == "learn":
        return learned.produce_learn(row, col, budget, folder, out)
    if claim.how != "none":
        return _construction(row, col, claim, budget, folder, out)
    if claim.check:
        return _checked(row, col, claim, budget, folder, out)
    return None


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
    ev = rec.get("evidence") or {}
    arts = dict(ev.get("artefacts") or {})
    arts.update((ev.get("illustration") or {}).get("artefacts") or {})
    if not all((out / p).is_file() for p in arts.values()):
        return None
    return rec


def _verdict(claim: Claim, ev: Evidence | None) -> str:
    if ev is None:
        runs = claim.how != "none" or claim.check is not None
        return "no evidence" if runs else "not run here"
    if ev.kind is EvidenceKind.ILLUSTRATION:
        return "measured"
    return "agrees" if ev.agrees else "DISAGREES"


def build_cell(
    row: Row, col: Column, out: Path, quick: bool, force: bool = False
) -> dict[str, Any]:
    """One cell: reuse the stored evidence if current, else produce it and store it."""
    claim = CLAIMS[(row.id, col.id)]
    if claim.how == "learn" and quick and not claim.params.get("quick"):
        claim = Claim(Status.PENDING, claim.citation, note="trained in --full mode only")
    folder = out / "cells" / row.id / col.id
    if not force:
        cached = _cached(folder, out, quick)
        if cached is not None:
            cached.update(reused=True, row_title=row.title)
            return cached
    started = time.perf_counter()
    error = None
    try:
        ev = _produce(row, col, claim, Budget(quick), folder, out)
    except HardsoftError as exc:  # e.g. a memory estimate refused a length: said, not hidden
        ev, error = None, str(exc)
    status = ev.status if ev is not None and claim.how == "learn" else claim.status
    rec: dict[str, Any] = {
        "version": VERSION,
        "quick": quick,
        "row": row.id,
        "row_title": row.title,
        "language": row.language,
        "column": col.id,
        "column_title": col.title,
        "status": (status or claim.status).value,
        "evidence_kind": (ev.kind if ev is not None else EvidenceKind.CITATION).value,
        "citation": claim.citation,
        "theorem": ev.numbers.get("theorem") if ev is not None else None,
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


@dataclass(frozen=True)
class Job:
    """One unit of the atlas's work: a cell with a claim (``column`` set), or a regular row's
    record, which gives that row's construction cells (``column`` None)."""

    row: str
    column: str | None = None


def table_row(row_id: str) -> Row:
    """The row called ``row_id`` among this module's :data:`ROWS` (jobs carry row ids)."""
    return next(r for r in ROWS if r.id == row_id)


def plan(rows_sel: set[str] | None, cols_sel: set[str] | None, quick: bool = True) -> list[Job]:
    """The jobs of the selected rows and columns, in the table's order (``--quick`` leaves
    out the rows that are not ``Row.quick`` unless ``--only`` names them)."""
    jobs = []
    for row in ROWS:
        if rows_sel is not None and row.id not in rows_sel:
            continue
        if quick and not row.quick and rows_sel is None:
            continue
        if row.regular and (cols_sel is None or cols_sel & set(REGULAR_COLUMNS)):
            jobs.append(Job(row.id))
        for col in COLUMNS:
            if (cols_sel is None or col.id in cols_sel) and (row.id, col.id) in CLAIMS:
                jobs.append(Job(row.id, col.id))
    return jobs


def stored_job(job: Job, out: Path, quick: bool) -> list[dict[str, Any]] | None:
    """The job's cells from storage when current (None: the job must run)."""
    row = table_row(job.row)
    if job.column is None:
        return regular_rows.stored(row, out, quick, VERSION)
    cached = _cached(out / "cells" / row.id / job.column, out, quick)
    if cached is None:
        return None
    cached.update(reused=True, row_title=row.title)  # a title may change, not the evidence
    return [cached]


def run_job(job: Job, out: Path, quick: bool, force: bool) -> list[dict[str, Any]]:
    """Run one job (reusing what is stored unless ``force``) and return its cells; every cell
    is stored as it is made. Module level, so a Ray task can run it."""
    row = table_row(job.row)
    if job.column is not None:
        return [build_cell(row, column(job.column), out, quick, force)]
    if not force:
        cells = regular_rows.stored(row, out, quick, VERSION)
        if cells is not None:
            return cells
    try:
        return regular_rows.build(row, out, quick, VERSION)
    except HardsoftError as exc:  # e.g. a monoid too large: said, not hidden; rerun next time
        return failed_cells(job, quick, str(exc))


def failed_cells(job: Job, quick: bool, error: str) -> list[dict[str, Any]]:
    """What a job whose producer failed shows: its cell with no evidence and the error (not
    stored, so the next run tries again)."""
    row = table_row(job.row)
    col = column(job.column or STAR_FREE_COLUMN)
    claim = CLAIMS.get((row.id, col.id))
    return [
        {
            "version": VERSION,
            "quick": quick,
            "row": row.id,
            "row_title": row.title,
            "language": row.language,
            "column": col.id,
            "column_title": col.title,
            "status": (claim.status if claim else Status.OPEN).value,
            "evidence_kind": EvidenceKind.CITATION.value,
            "citation": claim.citation if claim else DECISION_CITATION,
            "theorem": None,
            "note": claim.note if claim else "",
            "verdict": "no evidence",
            "error": error,
            "evidence": None,
            "regenerate": f"hardsoft atlas --only {row.id},{col.id} --force",
            "evidence_path": str(Path("cells") / row.id / col.id / EVIDENCE_FILE),
            "seconds": 0.0,
            "reused": False,
        }
    ]


def _line(cell: dict[str, Any]) -> str:
    return (
        f"{cell['row']} × {cell['column']}: {cell['status']}, {cell['evidence_kind']} "
        f"({cell['verdict']})"
    )


def run_jobs(
    jobs: list[Job],
    out: Path,
    quick: bool,
    force: bool,
    executor: str = "local",
    address: str | None = None,
    cpus: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Every job's cells, in the jobs' order. Stored, current cells are read here; the others
    run in this process (``local``) or as Ray tasks (``ray``: a local Ray of ``cpus`` CPUs, or
    the cluster at ``address``, whose workers must see ``out``), each stored as it finishes,
    so an interrupted run resumes where it stopped."""
    from hardsoft.learn.executors import make_executor

    ex = make_executor(executor, address=address, num_cpus=cpus)  # bad options fail first
    results: list[list[dict[str, Any]]] = [[] for _ in jobs]

    def done(k: int, cells: list[dict[str, Any]]) -> None:
        results[k] = cells
        if progress is not None:
            for cell in cells:
                progress(_line(cell))

    todo = []
    for k, job in enumerate(jobs):
        stored = None if force else stored_job(job, out, quick)
        if stored is None:
            todo.append(k)
        else:
            done(k, stored)
    if ex.name == "local":
        for k in todo:
            done(k, run_job(jobs[k], out, quick, force))
    else:
        where = out.resolve()  # Ray workers need not share this process's working directory
        args = [(jobs[k], where, quick, force) for k in todo]
        for j, (state, value) in ex.map(run_job, args):
            k = todo[j]
            done(k, value if state == "ok" else failed_cells(jobs[k], quick, value))
    return [cell for cells in results for cell in cells]


def build_atlas(
    out: Path,
    quick: bool = True,
    only: str | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    executor: str = "local",
    address: str | None = None,
    cpus: int | None = None,
) -> dict[str, Any]:
    """Build (or reuse) every selected cell and write the table as JSON, CSV and HTML. The
    cells run in this process or as Ray tasks (:func:`run_jobs`)."""
    out = Path(out)
    rows_sel, cols_sel = parse_only(only)
    started = time.perf_counter()
    cells = run_jobs(
        plan(rows_sel, cols_sel, quick), out, quick, force, executor, address, cpus, progress
    )
    cells = [c for c in cells if cols_sel is None or c["column"] in cols_sel]
    extra: list[dict[str, Any]] = []
    if rows_sel is None:
        cells_, extra = _user_rows(out, cols_sel)
        cells += cells_
    table = summarize(cells, quick, time.perf_counter() - started, extra)
    table["executor"] = executor
    write_table(out, table)
    return table


def _user_rows(
    out: Path, cols_sel: set[str] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stored user rows' cells (in the selected columns) and their row entries."""
    stored = stored_rows(out)
    cells = [
        c
        for rec in stored
        for c in user_cells(rec, out)
        if cols_sel is None or c["column"] in cols_sel
    ]
    programs = [user_row_entry(rec) for rec in stored if rec.get("kind") == "program"]
    return cells, programs  # a program row is listed even where it settles no cell


def write_table(out: Path, table: dict[str, Any]) -> None:
    """``atlas.json``, ``atlas.csv`` and ``index.html`` under ``out``, each written
    atomically."""
    from hardsoft.atlas.html import write_html

    write_json(out / "atlas.json", table)
    text = to_csv(table)
    atomic_write(out / "atlas.csv", lambda tmp: Path(tmp).write_text(text), "atlas.csv")
    write_html(out / "index.html", table)


def _count(cells: list[dict[str, Any]], key: str, order: list[str]) -> dict[str, int]:
    counts = {k: sum(1 for c in cells if c[key] == k) for k in order}
    return {k: n for k, n in counts.items() if n}


def summarize(
    cells: list[dict[str, Any]],
    quick: bool,
    seconds: float,
    extra_rows: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole table: rows, columns, cells, and the counts by status and by evidence
    kind (an illustration beside a proof is counted apart, never as a proof).
    ``extra_rows``: user rows (``{"id", "title", "note"?}``), listed even without a cell."""
    extra = {r["id"]: r for r in extra_rows or []}
    row_ids = list(dict.fromkeys([*(c["row"] for c in cells), *extra]))
    titles = {c["row"]: c["row_title"] for c in cells}
    titles.update({r: e["title"] for r, e in extra.items()})
    kinds = _count(cells, "evidence_kind", [k.value for k in EvidenceKind])
    attached = sum(
        1
        for c in cells
        if c["evidence_kind"] == "proof"
        and ((c.get("evidence") or {}).get("illustration") or {}).get("found")
    )
    return {
        "mode": "quick" if quick else "full",
        "version": VERSION,
        "columns": [
            {"id": c.id, "title": c.title, "description": c.description, "class": c.model_class()}
            for c in COLUMNS
        ],
        "rows": [{"id": r, "title": titles[r], **extra.get(r, {})} for r in row_ids],
        "cells": cells,
        "counts": _count(cells, "status", [s.value for s in Status]),
        "kinds": kinds,
        "illustrations_beside_proofs": attached,
        "cells_total": len(cells),
        "cells_proved": sum(
            1 for c in cells if c["evidence_kind"] == "proof" and c["verdict"] == "agrees"
        ),
        "cells_with_evidence": sum(1 for c in cells if c["verdict"] in ("agrees", "measured")),
        "disagreements": [
            f"{c['row']} × {c['column']}" for c in cells if c["verdict"] == "DISAGREES"
        ],
        "no_evidence": [
            f"{c['row']} × {c['column']}" for c in cells if c["verdict"] == "no evidence"
        ],
        "seconds": round(seconds, 2),
    }


CSV_FIELDS = (
    "row",
    "column",
    "status",
    "evidence_kind",
    "verdict",
    "summary",
    "illustration",
    "theorem",
    "citation",
    "evidence_path",
)


def to_csv(table: dict[str, Any]) -> str:
    """One line per cell (for papers)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_FIELDS)
    for c in table["cells"]:
        ev = c.get("evidence") or {}
        writer.writerow(
            [
                c["row"],
                c["column"],
                c["status"],
                c["evidence_kind"],
                c["verdict"],
                ev.get("summary", c.get("note", "")),
                (ev.get("illustration") or {}).get("summary", ""),
                c.get("theorem") or "",
                c["citation"],
                c["evidence_path"],
            ]
        )
    return buf.getvalue()


def refresh_page(out: Path) -> bool:
    """Put the stored user rows on the page already built in ``out`` (``atlas add-row``):
    the stored table's built-in cells are kept as they are, the user rows' cells re-read,
    and atlas.json, atlas.csv and index.html rewritten. False when no current page is there
    (then ``hardsoft atlas --out OUT`` builds one, with the rows)."""
    path = Path(out) / "atlas.json"
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if table.get("version") != VERSION:
        return False
    cells = [c for c in table["cells"] if not c.get("user_row")]
    user, extra = _user_rows(Path(out))
    cells += user
    write_table(Path(out), summarize(cells, table["mode"] == "quick", table["seconds"], extra))
    return True

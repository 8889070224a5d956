"""The built-in regular rows' construction cells (Tomita, FLaRe, bounded Dyck, A5): the
regular-row machinery of ``atlas add-row --dfa`` (:func:`hardsoft.atlas.rows.describe`,
:func:`~hardsoft.atlas.rows.settle`, :func:`~hardsoft.atlas.rows.user_cells`) run on the DFA
the row's registered language declares (:meth:`~hardsoft.languages.Language.automaton`).

So a regular row settles exactly the columns that machinery settles for a user's row of the
same DFA, and gains every column it learns to settle. One job per row: the record (the
decision, the class, every target's model compiled by :mod:`hardsoft.regular` and its check
against the DFA, :mod:`hardsoft.atlas.regular_models`) is stored under
``OUT/cells/ROW/regular/`` and every cell it gives under ``OUT/cells/ROW/COLUMN/``, reused while
the atlas version, the mode and the DFA are the same. On top of the machinery, the row's
expected answer (``Row.star_free``, the theory's) must be what the decision finds: otherwise
the star-free cell DISAGREES.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

from hardsoft.atlas.rows import STAR_FREE_COLUMN, describe, settle, user_cells, write_json
from hardsoft.atlas.table import REGULAR_COLUMNS, Row
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language
from hardsoft.languages.regular import DFA

RECORD_FILE = "record.json"
EVIDENCE_FILE = "evidence.json"


def row_dfa(row: Row) -> DFA:
    """The minimal DFA of the row's language (its declared automaton)."""
    dfa = get_language(row.language).automaton()
    if dfa is None:
        raise HardsoftError(f"row {row.id}: language {row.language} declares no DFA")
    return dfa


def _folder(out: Path, row: Row) -> Path:
    """Where the row's record and models are stored."""
    return out / "cells" / row.id / "regular"


def _regenerate(row: Row, quick: bool) -> str:
    mode = "quick" if quick else "full"
    return f"hardsoft atlas --{mode} --only {row.id},{STAR_FREE_COLUMN} --force"


def stored(row: Row, out: Path, quick: bool, version: str) -> list[dict[str, Any]] | None:
    """The row's cells from its stored record when current (same atlas version, mode and
    DFA, every artefact there); None otherwise."""
    path = _folder(out, row) / RECORD_FILE
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if meta.get("version") != version or meta.get("quick") != quick:
        return None
    if meta.get("record", {}).get("dfa") != row_dfa(row).to_json():
        return None  # the language's DFA changed
    cells = _cells(row, meta["record"], out, quick, version, meta.get("seconds", 0.0))
    arts = [p for c in cells for p in ((c.get("evidence") or {}).get("artefacts") or {}).values()]
    if not all((out / p).is_file() for p in [*arts, *(c["evidence_path"] for c in cells)]):
        return None  # a model, the record or a cell's evidence.json is gone: build it again
    for c in cells:
        c["reused"] = True
    return cells


def build(row: Row, out: Path, quick: bool, version: str) -> list[dict[str, Any]]:
    """Run the machinery on the row's DFA, store the record and the cells, return the cells."""
    started = time.perf_counter()
    dfa = row_dfa(row)
    folder = _folder(out, row)
    folder.mkdir(parents=True, exist_ok=True)
    source = {"language": row.language}
    record = settle(describe(row.id, dfa, source, _regenerate(row, quick)), folder, out)
    seconds = round(time.perf_counter() - started, 3)
    meta = {"version": version, "quick": quick, "seconds": seconds, "record": record}
    write_json(folder / RECORD_FILE, meta)
    cells = _cells(row, record, out, quick, version, seconds)
    for c in cells:
        write_json(out / c["evidence_path"], {k: v for k, v in c.items() if k != "reused"})
        c["reused"] = False
    return cells


def _cells(
    row: Row, record: dict[str, Any], out: Path, quick: bool, version: str, seconds: float
) -> list[dict[str, Any]]:
    """The machinery's cells of the record, as built-in cells of the row."""
    cells: list[dict[str, Any]] = []
    for cell in user_cells(record, out):
        if cell["column"] not in REGULAR_COLUMNS:
            continue  # the row's other columns carry claims of their own
        cell = dict(cell, user_row=False, row_title=row.title, language=row.language)
        cell["row_source"] = (
            f"the DFA of {row.language} ({row.source}; hardsoft language dfa {row.language})"
        )
        cell.update(
            version=version,
            quick=quick,
            error=None,
            regenerate=record["command"] + f" --out {out}",
            evidence_path=str(Path("cells") / row.id / cell["column"] / EVIDENCE_FILE),
            seconds=0.0 if cells else seconds,  # the record's time, counted once per row
        )
        ev = cell["evidence"] = dict(cell["evidence"])
        ev["artefacts"] = {**ev["artefacts"], "decision": str(_folder(Path(), row) / RECORD_FILE)}
        ev["commands"] = [*ev["commands"], _add_row_command(row)]
        if cell["column"] == STAR_FREE_COLUMN:
            _expect(row, record, cell)
        cells.append(cell)
    return cells


def _add_row_command(row: Row) -> str:
    """The same row as a user's: the DFA file, then ``atlas add-row``."""
    dfa = shlex.quote(f"{row.language}.dfa.json")
    return (
        f"hardsoft language dfa {row.language} -o {dfa} && hardsoft atlas add-row --dfa {dfa} "
        f"--name my-{row.id}"
    )


def _expect(row: Row, record: dict[str, Any], cell: dict[str, Any]) -> None:
    """The decision against the theory's answer for the row (``Row.star_free``)."""
    if row.star_free is None:
        return
    said = "star-free" if row.star_free else "not star-free"
    ev = cell["evidence"]
    if record["star_free"] == row.star_free:
        ev["summary"] += f"; as expected for {row.title} ({said})"
        return
    ev["summary"] += f"; DISAGREES with the row's expected answer ({said})"
    ev["agrees"] = False
    cell["verdict"] = "DISAGREES"

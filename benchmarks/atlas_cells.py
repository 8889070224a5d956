"""Where an atlas run spent its time, from the cells it stored: every cell's ``evidence.json``
records the wall seconds its producer took (``seconds``), so a run that was interrupted and
resumed (stored cells are reused) is still timed cell by cell. Prints one line per row, the
slowest cells and the total, as Markdown.

    python benchmarks/atlas_cells.py OUT [--out benchmarks/results/atlas-full-cells.md]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from hardsoft.atlas.table import ROW_IDS


def cells(folder: Path) -> list[dict]:
    """Every stored cell record under ``folder/cells`` (row, column, status, seconds, mode)."""
    out = []
    for path in sorted((folder / "cells").glob("*/*/evidence.json")):
        rec = json.loads(path.read_text())
        out.append(
            {
                "row": rec["row"],
                "column": rec["column"],
                "status": rec["status"],
                "kind": rec.get("evidence_kind", ""),
                "seconds": float(rec.get("seconds") or 0.0),
                "mode": "quick" if rec.get("quick") else "full",
                "version": rec.get("version"),
                "written": path.stat().st_mtime,
            }
        )
    return out


def report(records: list[dict]) -> str:
    by_row: dict[str, float] = defaultdict(float)
    trained: dict[str, float] = defaultdict(float)
    for c in records:
        by_row[c["row"]] += c["seconds"]
        if c["column"].startswith("trained"):
            trained[c["row"]] += c["seconds"]
    order = {r: i for i, r in enumerate(ROW_IDS)}
    rows = sorted(by_row, key=lambda r: (order.get(r, len(order)), r))  # the table's order
    total = sum(by_row.values())
    modes = sorted({c["mode"] for c in records})
    versions = sorted({str(c["version"]) for c in records})
    lines = [
        f"{len(records)} cells ({', '.join(modes)} mode, atlas version {', '.join(versions)}): "
        f"{total:.0f} s in all ({total / 3600:.2f} h), of which training "
        f"{sum(trained.values()):.0f} s.",
        "",
        "| row | cells | seconds | of which training |",
        "|---|---|---|---|",
        *(
            f"| {r} | {sum(c['row'] == r for c in records)} | {s:.0f} | {trained[r]:.0f} |"
            for r in rows
            for s in (by_row[r],)
        ),
        "",
        "Slowest cells:",
        "",
        "| cell | status | evidence | seconds |",
        "|---|---|---|---|",
        *(
            f"| {c['row']} × {c['column']} | {c['status']} | {c['kind']} | {c['seconds']:.0f} |"
            for c in sorted(records, key=lambda c: -c["seconds"])[:10]
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folder", type=Path, help="An atlas folder (hardsoft atlas --out FOLDER).")
    ap.add_argument("--out", type=Path, default=None, help="Also write the Markdown here.")
    args = ap.parse_args()
    text = report(cells(args.folder))
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

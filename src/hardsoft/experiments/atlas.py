"""Experiment ``atlas``: the expressivity atlas (:mod:`hardsoft.atlas`), the report's first
experiment. Every cell's claim comes from :mod:`hardsoft.atlas.table`; its evidence is run here
(compiled models checked exactly, the checks that cited theorems apply, illustrations on single
models, training runs) and stored under the run folder's ``atlas/`` (the same files
``hardsoft atlas --out RUN/atlas`` reads and reuses), cell by cell on the context's executor (in
this process, or as Ray tasks with ``reproduce --executor ray``). The summary counts proofs,
illustrations and citations apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402

STATUS_COLOURS = {
    "constructed": "#d9f2dd",
    "possible": "#eef8e4",
    "impossible": "#fbd5d5",
    "learned": "#dbe8fb",
    "not-learned": "#eef0f6",
    "open": "#fff4c2",
    "pending": "#ffffff",
}
"""The report's atlas colours (report/templates/atlas_table.html.j2), for the figure."""
LABELS = {"learned": "learned in our runs", "not-learned": "not learned in our runs"}
"""How the figure names the trained statuses (what our runs did, not what can be learned)."""
KIND_MARKS = {"proof": "✓", "illustration": "illus.", "citation": "cited"}
"""How the figure marks a cell's evidence kind (✓ only for a proof that agrees)."""


def _slim(table: dict[str, Any]) -> dict[str, Any]:
    """The table for the stored record: each cell's claim, verdict, summary and commands."""
    keep = (
        "error",
        "row",
        "row_title",
        "row_source",
        "column",
        "column_title",
        "status",
        "evidence_kind",
        "citation",
        "theorem",
        "note",
        "verdict",
        "evidence_path",
        "regenerate",
    )
    cells = []
    for c in table["cells"]:
        ev = c.get("evidence") or None
        cell = {k: c[k] for k in keep if k in c}
        cell["evidence"] = None
        if ev is not None:
            illus = ev.get("illustration")
            if illus and illus.get("artefacts"):
                arts = {k: f"atlas/{v}" for k, v in illus["artefacts"].items()}
                illus = {**illus, "artefacts": arts}
            cell["evidence"] = {
                "summary": ev["summary"],
                "commands": ev["commands"],
                "artefacts": {k: f"atlas/{v}" for k, v in ev["artefacts"].items()},
                "numbers": ev["numbers"],
                "illustration": illus,
            }
        cell["evidence_path"] = f"atlas/{c['evidence_path']}"
        cells.append(cell)
    return {**{k: v for k, v in table.items() if k != "cells"}, "cells": cells}


@register(
    "atlas",
    title="The expressivity atlas: which transformer computes which language",
    version="4",
    order=1,
    seed_ref="Strobl, Merrill, Weiss, Chiang & Angluin (TACL 2024) survey tables",
)
def run(ctx: Context) -> Result:
    from hardsoft.atlas.build import build_atlas

    out = ctx.figures_dir.parent / "atlas"
    table = build_atlas(out, quick=ctx.quick, executor=ctx.executor, address=ctx.address)
    columns = [c["title"] for c in table["columns"]]
    by = {(c["row"], c["column"]): c for c in table["cells"]}
    rows = []
    for r in table["rows"]:
        line = [r["title"]]
        for col in table["columns"]:
            c = by.get((r["id"], col["id"]))
            if c is None:
                line.append("—")
            else:
                line.append(f"{c['status']} ({_mark(c)})")
        rows.append(line)
    kinds = table["kinds"]
    summary = (
        f"{table['cells_total']} cells: {kinds.get('proof', 0)} backed by a proof run here "
        f"({table['cells_proved']} agree), {kinds.get('illustration', 0)} by an illustration "
        f"only (training runs), {kinds.get('citation', 0)} by a citation only; "
        f"{table['illustrations_beside_proofs']} proofs also carry an illustration on one "
        f"model. By status: {', '.join(f'{n} {s}' for s, n in table['counts'].items())}. "
        + (
            f"Evidence disagrees with the claim in {', '.join(table['disagreements'])}."
            if table["disagreements"]
            else "No cell's evidence disagrees with its claim."
        )
    )
    metrics = {
        "atlas": _slim(table),
        "cells_total": table["cells_total"],
        "cells_proved": table["cells_proved"],
        "cells_with_evidence": table["cells_with_evidence"],
        "kinds": kinds,
        "illustrations_beside_proofs": table["illustrations_beside_proofs"],
        "disagreements": table["disagreements"],
        "counts": table["counts"],
    }
    fig = ctx.figure_path("atlas.png")
    _plot(table, fig)
    return Result(
        metrics,
        figures=[fig.name],
        tables=[
            Table(
                "The atlas (status and evidence per cell; ✓ a proof that agrees, ✗ evidence "
                "that disagrees)",
                ["row", *columns],
                rows,
            )
        ],
        summary=summary,
    )


def _mark(cell: dict[str, Any]) -> str:
    """The evidence kind as the table and figure show it (✗ where it disagrees)."""
    if cell.get("verdict") == "DISAGREES":
        return "✗"
    if cell.get("verdict") == "no evidence":
        return "no evidence"
    return KIND_MARKS.get(str(cell.get("evidence_kind")), "")


def _plot(table: dict[str, Any], path: Path) -> None:
    """The atlas as a grid of cells coloured by status (a disagreeing cell outlined in red),
    for a paper: rows are languages or tasks, columns model classes."""
    rows, cols = table["rows"], table["columns"]
    by = {(c["row"], c["column"]): c for c in table["cells"]}
    fig, ax = plt.subplots(figsize=(1.35 * len(cols) + 2.2, 0.42 * len(rows) + 1.8))
    for y, r in enumerate(rows):
        for x, col in enumerate(cols):
            c = by.get((r["id"], col["id"]))
            status = str(c["status"]) if c else "open"
            bad = c is not None and c.get("verdict") == "DISAGREES"
            ax.add_patch(
                plt.Rectangle(
                    (x, y),
                    1,
                    1,
                    facecolor=to_rgb(STATUS_COLOURS.get(status, "#ffffff")),
                    edgecolor="#b00020" if bad else "#999999",
                    linewidth=2.0 if bad else 0.5,
                )
            )
            label = LABELS.get(status, status).replace(" in our", "\nin our")
            ax.text(
                x + 0.5,
                y + 0.5,
                f"{label}\n{_mark(c)}" if c else label,
                ha="center",
                va="center",
                fontsize=6,
            )
    ax.set_xlim(0, len(cols))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([x + 0.5 for x in range(len(cols))])
    ax.set_xticklabels([c["title"] for c in cols], rotation=35, ha="right", fontsize=7)
    ax.set_yticks([y + 0.5 for y in range(len(rows))])
    ax.set_yticklabels([r["title"] for r in rows], fontsize=8)
    ax.tick_params(length=0)
    handles = [
        Patch(facecolor=c, edgecolor="#999999", label=LABELS.get(s, s))
        for s, c in STATUS_COLOURS.items()
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_title(
        "which transformer computes which language (status; ✓ proof, illus. illustration only, "
        "cited citation only)",
        fontsize=8,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)

"""Experiment ``atlas``: the expressivity atlas (:mod:`hardsoft.atlas`), the first section of
the report. Every cell's claim comes from :mod:`hardsoft.atlas.table`; its evidence is run here
(compiled models checked exactly, restriction witnesses, the star-free decision) and stored
under the run folder's ``atlas/`` (the same files ``hardsoft atlas --out RUN/atlas`` reads and
reuses)."""

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
    "impossible": "#fbd5d5",
    "decided": "#e4dcf7",
    "learned": "#dbe8fb",
    "open": "#fff4c2",
    "cited": "#eeeeee",
    "pending": "#ffffff",
}
"""The report's atlas colours (report/templates/atlas_table.html.j2), for the figure."""


def _slim(table: dict[str, Any]) -> dict[str, Any]:
    """The table for the stored record: each cell's claim, verdict, summary and commands."""
    keep = (
        "error",
        "row",
        "row_title",
        "column",
        "column_title",
        "status",
        "citation",
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
            cell["evidence"] = {
                "summary": ev["summary"],
                "commands": ev["commands"],
                "artefacts": {k: f"atlas/{v}" for k, v in ev["artefacts"].items()},
                "numbers": ev["numbers"],
            }
        cell["evidence_path"] = f"atlas/{c['evidence_path']}"
        cells.append(cell)
    return {**{k: v for k, v in table.items() if k != "cells"}, "cells": cells}


@register(
    "atlas",
    title="The expressivity atlas: which transformer computes which language",
    version="2",
    order=1,
    seed_ref="Strobl, Merrill, Weiss, Chiang & Angluin (TACL 2024) survey tables",
)
def run(ctx: Context) -> Result:
    from hardsoft.atlas.build import build_atlas

    out = ctx.figures_dir.parent / "atlas"
    table = build_atlas(out, quick=ctx.quick)
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
                mark = {"agrees": "", "DISAGREES": " ✗"}.get(c["verdict"], "")
                line.append(c["status"] + mark)
        rows.append(line)
    summary = (
        f"{table['cells_total']} cells; {table['cells_with_evidence']} backed by evidence run "
        f"here ({', '.join(f'{n} {s}' for s, n in table['counts'].items())}). "
        + (
            f"Evidence disagrees with the claim in {', '.join(table['disagreements'])}."
            if table["disagreements"]
            else "No cell's evidence disagrees with its claim."
        )
    )
    metrics = {
        "atlas": _slim(table),
        "cells_total": table["cells_total"],
        "cells_with_evidence": table["cells_with_evidence"],
        "disagreements": table["disagreements"],
        "counts": table["counts"],
    }
    fig = ctx.figure_path("atlas.png")
    _plot(table, fig)
    return Result(
        metrics,
        figures=[fig.name],
        tables=[
            Table("The atlas (status per cell; ✗: the evidence disagrees)", ["row", *columns], rows)
        ],
        summary=summary,
    )


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
            ax.text(
                x + 0.5,
                y + 0.5,
                status + (" ✗" if bad else ""),
                ha="center",
                va="center",
                fontsize=7,
            )
    ax.set_xlim(0, len(cols))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([x + 0.5 for x in range(len(cols))])
    ax.set_xticklabels([c["title"] for c in cols], rotation=35, ha="right", fontsize=7)
    ax.set_yticks([y + 0.5 for y in range(len(rows))])
    ax.set_yticklabels([r["title"] for r in rows], fontsize=8)
    ax.tick_params(length=0)
    handles = [Patch(facecolor=c, edgecolor="#999999", label=s) for s, c in STATUS_COLOURS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_title("which transformer computes which language (status per cell)")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)

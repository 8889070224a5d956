"""Experiment ``atlas``: the expressivity atlas (:mod:`hardsoft.atlas`), the first section of
the report. Every cell's claim comes from :mod:`hardsoft.atlas.table`; its evidence is run here
(compiled models checked exactly, restriction witnesses, the star-free decision) and stored
under the run folder's ``atlas/`` (the same files ``hardsoft atlas --out RUN/atlas`` reads and
reuses)."""

from __future__ import annotations

from typing import Any

from hardsoft.experiments import Context, Result, Table, register


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
    version="1",
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
    return Result(
        metrics,
        tables=[
            Table("The atlas (status per cell; ✗: the evidence disagrees)", ["row", *columns], rows)
        ],
        summary=summary,
    )

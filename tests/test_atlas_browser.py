"""The atlas page in headless Chromium (as the report's browser test does): the table has one
cell per (row, column) with a status colour and an evidence kind, a ✓ only on proofs, each
cell opens its evidence, and the reproduce report opens with its summary table and shows the
atlas in the atlas experiment's section with the same cells."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hardsoft.atlas.build import build_atlas
from hardsoft.atlas.html import render_page
from hardsoft.atlas.table import COLUMNS

from .test_report_browser import FLAGS, chromium

COUNT_JS = """() => {
  const cells = [...document.querySelectorAll('#atlas-grid td.cell')];
  const statuses = {};
  const kinds = {};
  for (const c of cells) { statuses[c.dataset.status] = (statuses[c.dataset.status] || 0) + 1; }
  for (const c of cells) { kinds[c.dataset.kind] = (kinds[c.dataset.kind] || 0) + 1; }
  const ticks = cells.filter(c => c.querySelector('summary').textContent.includes('✓'));
  const badTicks = ticks.filter(c => c.dataset.kind !== 'proof').length;
  const coloured = cells.filter(c => getComputedStyle(c).backgroundColor !== 'rgba(0, 0, 0, 0)');
  const first = cells[0].querySelector('details');
  first.open = true;
  const opened = first.querySelector('.ev').getBoundingClientRect().height > 0;
  const h2 = [...document.querySelectorAll('h2')].map(h => h.id);
  return {cells: cells.length, statuses, kinds, ticks: ticks.length, badTicks,
          coloured: coloured.length,
          summaries: document.querySelectorAll('#atlas-grid td.cell details summary').length,
          opened, h2, commands: document.querySelectorAll('#atlas-grid code.cmd').length};
}"""


def _evaluate(page: Path, tmp: Path) -> dict:
    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium here: install Debian's chromium (apt-get install chromium)")
    profile = tmp / f"profile-{page.stem}"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is not None and os.environ.get("HARDSOFT_BROWSER") != "dump-dom":
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                str(profile), executable_path=exe, headless=True, args=FLAGS[1:]
            )
            try:
                tab = ctx.new_page()
                tab.goto(page.as_uri(), wait_until="load")
                return tab.evaluate(COUNT_JS)
            finally:
                ctx.close()
    probe = page.with_name("_atlas_check.html")
    script = (
        "<script>window.addEventListener('load', () => { const r = (" + COUNT_JS + ")();"
        " const pre = document.createElement('pre'); pre.id = 'hs-check';"
        " pre.textContent = JSON.stringify(r); document.body.appendChild(pre); });</script>"
    )
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    dom = subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    start = dom.index('<pre id="hs-check">') + len('<pre id="hs-check">')
    text = dom[start : dom.index("</pre>", start)].replace("&quot;", '"')
    return json.loads(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


def test_the_atlas_page_shows_every_cell(tmp_path) -> None:
    out = tmp_path / "atlas"
    table = build_atlas(out, quick=True, only="ones-star+aa-star,*")
    result = _evaluate(out / "index.html", tmp_path)
    assert result["cells"] == table["cells_total"] == 2 * len(COLUMNS)
    assert result["summaries"] == result["cells"] == result["coloured"]
    assert result["statuses"] == table["counts"] and result["kinds"] == table["kinds"]
    assert result["ticks"] == table["cells_proved"] and result["badTicks"] == 0
    assert result["opened"] and result["commands"] > 0


def test_the_report_opens_with_the_summary_then_the_atlas(tmp_path, monkeypatch) -> None:
    """The summary table first (one line per experiment, as the README says), then the
    atlas experiment's section with the grid."""
    import hardsoft.atlas.build as B
    from hardsoft.reproduce import reproduce

    monkeypatch.setattr(B, "ROWS", tuple(r for r in B.ROWS if r.id in ("ones-star", "aa-star")))
    out = tmp_path / "report"
    summary = reproduce(out, only=["atlas"], show_progress=False)
    assert not summary["failed"], summary["failed"]
    table = json.loads((out / "atlas" / "atlas.json").read_text())
    result = _evaluate(out / "index.html", tmp_path)
    assert result["h2"][:2] == ["summary", "atlas"]
    assert result["cells"] == table["cells_total"]


def test_render_page_escapes_text() -> None:
    table = {
        "mode": "quick",
        "cells_total": 1,
        "cells_with_evidence": 0,
        "cells_proved": 0,
        "kinds": {"citation": 1},
        "illustrations_beside_proofs": 0,
        "counts": {"open": 1},
        "disagreements": [],
        "columns": [{"id": "c", "title": "<c>", "description": "d"}],
        "rows": [{"id": "r", "title": "<script>x</script>"}],
        "cells": [
            {
                "row": "r",
                "column": "c",
                "status": "open",
                "evidence_kind": "citation",
                "verdict": "not run here",
                "citation": "A & B",
                "note": "",
                "evidence": None,
                "evidence_path": "cells/r/c/evidence.json",
            }
        ],
    }
    page = render_page(table)
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page

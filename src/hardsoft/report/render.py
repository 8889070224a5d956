"""The report: ``index.html`` and ``report.md`` rebuilt from the stored records.

Both are rendered through Jinja2 templates (``report/templates/``, package data). The report
opens with a summary table built from the claim registry (:mod:`hardsoft.report.claims`): for
each experiment the claim, the paper and section, what was run, the verdict and the key
number. Both files are written atomically, so a failed render never destroys the previous
report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from hardsoft.experiments.text import fmt
from hardsoft.model.io import atomic_write
from hardsoft.report.claims import NO_CLAIM, verdict_for

PAPERS = (
    "Michael Hahn. Theoretical Limitations of Self-Attention in Neural Sequence Models. "
    "TACL 8, 2020 (with the author's supplement).",
    "Andy Yang, Lena Strobl, David Chiang, Dana Angluin. Simulating Hard Attention Using Soft "
    "Attention. TACL 14, pp. 147–166, 2026.",
)


def provenance(rec: dict) -> str:
    """One line: mode, versions, commit, duration, device and time of a record."""
    return (
        f"mode {rec['mode']}, experiment v{rec['version']}, hardsoft {rec['package_version']}, "
        f"commit {rec.get('git_commit') or 'unknown'}, torch {rec.get('torch_version')}, "
        f"{rec.get('duration_s', 0):.1f} s on {rec.get('device', 'cpu')}, {rec['created_at']}"
    )


def _md_cell(value: Any) -> str:
    return fmt(value).replace("|", "\\|").replace("\n", " ")


def _environment(autoescape: bool) -> Environment:
    env = Environment(
        loader=PackageLoader("hardsoft.report", "templates"),
        autoescape=select_autoescape(["html", "html.j2"]) if autoescape else False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(fmt=fmt, md=_md_cell)
    env.globals.update(provenance=provenance, NO_CLAIM=NO_CLAIM)
    return env


def _context(records: list[dict], title: str) -> dict[str, Any]:
    rows = [verdict_for(rec) for rec in records]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    atlas = next(
        (rec["metrics"].get("atlas") for rec in records if rec.get("name") == "atlas"), None
    )
    return {
        "title": title,
        "records": records,
        "rows": rows,
        "counts": counts,
        "papers": PAPERS,
        "atlas": atlas,  # the atlas table, shown in the atlas experiment's section (None: not run)
        "prefix": "",  # where the atlas's artefact paths start, relative to the report
    }


def render_markdown(records: list[dict], title: str) -> str:
    return _environment(False).get_template("report.md.j2").render(_context(records, title))


def render_html(records: list[dict], title: str) -> str:
    return _environment(True).get_template("index.html.j2").render(_context(records, title))


def write_report(out_dir: Path, records: list[dict], title: str = "hardsoft report") -> None:
    """Write ``report.md`` and ``index.html`` under ``out_dir`` (atomically)."""
    md, page = render_markdown(records, title), render_html(records, title)
    atomic_write(out_dir / "report.md", lambda tmp: Path(tmp).write_text(md))
    atomic_write(out_dir / "index.html", lambda tmp: Path(tmp).write_text(page))

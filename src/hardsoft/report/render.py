"""The report: ``report.md`` and ``index.html`` rebuilt from the stored records.

Both files are written atomically, so a failed render never destroys the previous report.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from hardsoft.model.io import atomic_write


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _md_table(table: dict) -> str:
    cols = table["columns"]
    lines = [f"**{table['title']}**", "", "| " + " | ".join(cols) + " |"]
    lines.append("|" + "---|" * len(cols))
    for row in table["rows"]:
        lines.append("| " + " | ".join(_fmt(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def _provenance(rec: dict) -> str:
    return (
        f"mode {rec['mode']}, experiment v{rec['version']}, hardsoft {rec['package_version']}, "
        f"commit {rec.get('git_commit') or 'unknown'}, torch {rec.get('torch_version')}, "
        f"{rec.get('duration_s', 0):.1f} s on {rec.get('device', 'cpu')}, {rec['created_at']}"
    )


def render_markdown(records: list[dict], title: str) -> str:
    out = [f"# {title}", ""]
    out.append("| experiment | seed result | status | time (s) |")
    out.append("|---|---|---|---|")
    for rec in records:
        out.append(
            f"| [{rec['title']}](#{rec['name']}) | {rec.get('seed_ref', '')} | "
            f"{rec.get('status', 'ok')} | {rec.get('duration_s', 0):.1f} |"
        )
    for rec in records:
        out += ["", f'<a id="{rec["name"]}"></a>', f"## {rec['title']}", ""]
        if rec.get("seed_ref"):
            out += [f"*Seed result:* {rec['seed_ref']}", ""]
        if rec.get("summary"):
            out += [rec["summary"], ""]
        for table in rec.get("tables", []):
            out += [_md_table(table), ""]
        for fig in rec.get("figures", []):
            out += [f"![{fig}](figures/{fig})", ""]
        out += [f"<sub>{_provenance(rec)}</sub>", ""]
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f3f3f3}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0}
.prov{color:#777;font-size:0.8em}.summary{white-space:pre-wrap}
"""


def _html_table(table: dict) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table["columns"])
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>"
        for row in table["rows"]
    )
    return f"<p><b>{html.escape(table['title'])}</b></p><table><tr>{head}</tr>{rows}</table>"


def render_html(records: list[dict], title: str) -> str:
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
        "<table><tr><th>experiment</th><th>seed result</th><th>status</th><th>time (s)</th></tr>",
    ]
    for rec in records:
        parts.append(
            f"<tr><td><a href='#{rec['name']}'>{html.escape(rec['title'])}</a></td>"
            f"<td>{html.escape(rec.get('seed_ref', ''))}</td>"
            f"<td>{html.escape(rec.get('status', 'ok'))}</td>"
            f"<td>{rec.get('duration_s', 0):.1f}</td></tr>"
        )
    parts.append("</table>")
    for rec in records:
        parts.append(f"<h2 id='{rec['name']}'>{html.escape(rec['title'])}</h2>")
        if rec.get("seed_ref"):
            parts.append(f"<p><i>Seed result:</i> {html.escape(rec['seed_ref'])}</p>")
        if rec.get("summary"):
            parts.append(f"<p class='summary'>{html.escape(rec['summary'])}</p>")
        parts += [_html_table(t) for t in rec.get("tables", [])]
        parts += [
            f"<img src='figures/{html.escape(f)}' alt='{html.escape(f)}'>"
            for f in rec.get("figures", [])
        ]
        parts.append(f"<p class='prov'>{html.escape(_provenance(rec))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(out_dir: Path, records: list[dict], title: str = "hardsoft report") -> None:
    """Write ``report.md`` and ``index.html`` under ``out_dir`` (atomically)."""
    md, page = render_markdown(records, title), render_html(records, title)
    atomic_write(out_dir / "report.md", lambda tmp: Path(tmp).write_text(md))
    atomic_write(out_dir / "index.html", lambda tmp: Path(tmp).write_text(page))

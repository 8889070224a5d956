"""Traces of program runs: the grid of statements × positions, as text (the terminal) and as
an HTML page a person can read (``program run --trace OUT.html``).

Rows are the input and every statement in program order (the last, the output, in bold);
columns are positions 1..n. Booleans are ``1``/``0`` in text and shaded cells in HTML;
counts are numbers. The HTML page keeps the statement column in view while a long input
scrolls sideways, and shows each statement's definition where the program offers one.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from hardsoft.programs.source import ProgramRun, SourceProgram, Value

__all__ = ["trace_html", "trace_text"]


def _cell(v: Value) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def trace_text(program: SourceProgram, run: ProgramRun) -> list[str]:
    """The run as aligned text lines: ``position``, ``input``, one line per statement,
    then ``accept``."""
    n = len(run.input)
    rows = [("position", [str(k) for k in range(1, n + 1)]), ("input", list(run.input))]
    rows += [(name, [_cell(v) for v in run.values[name]]) for name in program.statements]
    label = max(len(name) for name, _ in rows)
    widths = [max(len(cells[k]) for _, cells in rows) for k in range(n)]
    lines = [
        f"{name:<{label}}  " + " ".join(c.rjust(w) for c, w in zip(cells, widths))
        for name, cells in rows
    ]
    lines.append(f"accept: {run.accept}")
    return lines


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1a1a1a; }
h1 { font-size: 1.3em; margin-bottom: 0.2em; }
p.meta { color: #555; margin-top: 0; }
div.run { margin: 1.2em 0 2em 0; }
h2 { font-size: 1.05em; margin: 0 0 0.4em 0; font-weight: 600; }
h2 .accept { padding: 0.1em 0.5em; border-radius: 0.3em; margin-left: 0.6em; }
.yes { background: #cdeccf; color: #14532d; }
.no { background: #f6d2d2; color: #7f1d1d; }
div.scroll { overflow-x: auto; width: fit-content; max-width: 100%; border: 1px solid #ccc; }
table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.45em; text-align: center; min-width: 1.4em; }
th.name, td.name { position: sticky; left: 0; background: #f7f7f7; text-align: left;
  white-space: nowrap; z-index: 1; }
td.def, th.def { background: #fbfbfb; text-align: left; color: #444;
  white-space: nowrap; max-width: 28em; overflow: hidden; text-overflow: ellipsis; }
tr.pos th { background: #eee; color: #666; font-weight: normal; }
tr.input td { background: #eef3fb; font-weight: 600; }
td.t { background: #cdeccf; color: #14532d; }
td.f { background: #fff; color: #bbb; }
td.num { background: #fff8e6; }
tr.output td.name, tr.output td { font-weight: 700; }
tr.output td { border-top: 2px solid #888; }
td.last { outline: 2px solid #333; outline-offset: -2px; }
"""


def _row(name: str, definition: str, values: Sequence[Value], cls: str, last: bool) -> str:
    cells = []
    n = len(values)
    for k, v in enumerate(values):
        kind = "t" if v is True else "f" if v is False else "num"
        extra = " last" if last and k == n - 1 else ""
        cells.append(f'<td class="{kind}{extra}">{html.escape(_cell(v))}</td>')
    return (
        f'<tr class="{cls}"><td class="name">{html.escape(name)}</td>'
        f'<td class="def" title="{html.escape(definition)}">{html.escape(definition)}</td>'
        + "".join(cells)
        + "</tr>"
    )


def _run_table(program: SourceProgram, run: ProgramRun, index: int) -> str:
    defs: dict[str, str] = getattr(program, "definitions", {}) or {}
    n = len(run.input)
    verdict = "accept" if run.accept else "reject"
    head = (
        f"<h2>input {index}: <code>{html.escape(run.input) or '(empty)'}</code> (n = {n})"
        f'<span class="accept {"yes" if run.accept else "no"}">{verdict}</span></h2>'
    )
    rows = [
        '<tr class="pos"><th class="name">position</th><th class="def">definition</th>'
        + "".join(f"<th>{k}</th>" for k in range(1, n + 1))
        + "</tr>",
        '<tr class="input"><td class="name">input</td><td class="def"></td>'
        + "".join(f"<td>{html.escape(c)}</td>" for c in run.input)
        + "</tr>",
    ]
    last = program.statements[-1]
    for name in program.statements:
        cls = "output" if name == last else "stmt"
        rows.append(_row(name, defs.get(name, ""), run.values[name], cls, name == last))
    table = "<table>" + "".join(rows) + "</table>"
    return f'<div class="run">{head}<div class="scroll">{table}</div></div>'


def trace_html(program: SourceProgram, runs: Sequence[ProgramRun], *, source: str = "") -> str:
    """A standalone HTML page with one grid per run (``source``: the file, shown in the
    heading)."""
    title = f"{program.notation.display} trace: {program.name}"
    alphabet = "".join(program.alphabet)
    meta = (
        f"{len(program.statements)} statements, alphabet <code>{html.escape(alphabet)}</code>"
        f"{f', from <code>{html.escape(source)}</code>' if source else ''}. "
        "Green cells (1) are true, grey 0s false, yellow cells are counts; the last row is the "
        "output, and the framed cell (the output at the last position) decides acceptance."
    )
    body = "".join(_run_table(program, r, k + 1) for k, r in enumerate(runs))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f'<h1>{html.escape(title)}</h1><p class="meta">{meta}</p>{body}</body></html>\n'
    )

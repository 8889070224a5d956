"""Checks that a report reads well: the kinds of slips a reader notices first.

* :func:`table_problems`: the tables of a rendered ``report.md``: an empty header row, Python
  reprs in cells (``[False, True]``, ``None``, ``snake_case`` identifiers, ``n**3``), numbers
  printed with more than :data:`MAX_DIGITS` significant digits.
* :func:`figure_problems`: a matplotlib figure before it is saved: two panels with the same
  panel label (``(a)``) or the same title, a plotted line that no legend of the figure names,
  several lines and no legend.

Each returns a list of one-line descriptions (empty when all is well); the report tests run
every experiment's figures and the rendered report through them.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DIGITS = 6
"""The most significant digits a number in a report table may show."""

_REPR = re.compile(r"\[(True|False|None)\b|\b(True|False|None)\]|^(True|False|None)$")
_SNAKE = re.compile(r"(?<![\w'\"#.])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w'\"(])")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+\.\d+(?:e[-+]?\d+)?(?![\w.])")
_POWER = re.compile(r"[\w)]\*\*[-\d(]")
_SEPARATOR = re.compile(r"[|: ]*-[-|: ]*")
_PANEL = re.compile(r"^\s*\(([a-z0-9]{1,2})\)")


def significant_digits(number: str) -> int:
    """How many significant digits a decimal literal shows (``0.0756`` → 3)."""
    mantissa = number.lstrip("+-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def _tables(markdown: str) -> list[tuple[str, list[list[str]]]]:
    """(title, rows) of every pipe table; the title is the bold line above it, if any."""
    out: list[tuple[str, list[list[str]]]] = []
    lines = markdown.splitlines()
    k = 0
    while k < len(lines):
        if not lines[k].startswith("|"):
            k += 1
            continue
        start = k
        while k < len(lines) and lines[k].startswith("|"):
            k += 1
        title = next((ln for ln in reversed(lines[max(0, start - 3) : start]) if ln.strip()), "")
        rows = [_cells(ln) for ln in lines[start:k] if not _SEPARATOR.fullmatch(ln)]
        out.append((title.strip("* "), rows))
    return out


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def table_problems(markdown: str) -> list[str]:
    """Problems in the pipe tables of a rendered report (see the module docstring)."""
    problems: list[str] = []
    for title, rows in _tables(markdown):
        where = title[:60] or "a table"
        if rows and not any(rows[0]):
            problems.append(f"{where}: empty header row")
        for row in rows:
            for cell in row:
                problems += [f"{where}: {p}" for p in _cell_problems(cell)]
    return problems


def _cell_problems(cell: str) -> list[str]:
    text = re.sub(r"`[^`]*`", "", cell)  # code spans show formulas as typed
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    out = []
    if _REPR.search(text):
        out.append(f"Python value in a cell: {cell[:40]!r}")
    snake = _SNAKE.search(text)
    if snake:
        out.append(f"identifier in a cell: {snake.group(0)!r}")
    if _POWER.search(text):
        out.append(f"Python power in a cell: {cell[:40]!r}")
    for number in _NUMBER.findall(text):
        if significant_digits(number) > MAX_DIGITS:
            out.append(f"{number} shows more than {MAX_DIGITS} significant digits")
    return out


def figure_problems(fig: Any) -> list[str]:
    """Problems of one matplotlib figure (see the module docstring)."""
    problems: list[str] = []
    axes = [ax for ax in fig.axes if ax.get_visible()]
    titles = [ax.get_title() or ax.get_title("left") for ax in axes]
    named = [t for t in titles if t]
    for t in set(named):
        if named.count(t) > 1:
            problems.append(f"panel title {t!r} appears {named.count(t)} times")
    panels = [m.group(1) for t in titles if (m := _PANEL.match(t))]
    for p in set(panels):
        if panels.count(p) > 1:
            problems.append(f"panel label ({p}) appears {panels.count(p)} times")
    # a legend may serve several panels (the figure's, or one panel's for series they share)
    legends = [*fig.legends, *(ax.get_legend() for ax in axes if ax.get_legend())]
    names = {t.get_text() for leg in legends for t in leg.get_texts()}
    for ax, title in zip(axes, titles):
        lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) and ln.get_visible()]
        if not names:
            if len(lines) > 1:
                problems.append(f"panel {title[:40]!r}: {len(lines)} lines and no legend")
            continue
        for ln in lines:
            if ln.get_label() not in names:
                label = ln.get_label()
                shown = "an unlabelled line" if label.startswith("_") else repr(label)
                problems.append(f"panel {title[:40]!r}: {shown} is not in the legend")
    return problems

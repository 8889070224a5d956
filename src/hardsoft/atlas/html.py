"""The atlas as HTML: a table coloured by status whose cells open their evidence. The same
template fragment (``report/templates/atlas_table.html.j2``) is the first section of the
``hardsoft reproduce`` report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from hardsoft.model.io import atomic_write


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("hardsoft.report", "templates"),
        autoescape=select_autoescape(["html", "html.j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.do"],
    )


def render_page(table: dict[str, Any], prefix: str = "") -> str:
    """The standalone page (artefact links relative to the atlas folder, after ``prefix``)."""
    return _environment().get_template("atlas_page.html.j2").render(atlas=table, prefix=prefix)


def write_html(path: Path, table: dict[str, Any]) -> None:
    """Write the standalone page atomically."""
    page = render_page(table)
    atomic_write(path, lambda tmp: Path(tmp).write_text(page), "the atlas page")

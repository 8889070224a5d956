"""What every stored user row of the atlas needs, regular or program row
(:mod:`hardsoft.atlas.rows`, :mod:`hardsoft.atlas.program_rows`): a checked row name and the
atomic JSON write of its record."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hardsoft.atlas.table import ROW_IDS
from hardsoft.errors import HardsoftError
from hardsoft.model.io import atomic_write


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text + "\n"), str(path))


def check_row_name(name: str) -> str:
    """A row name: lower-case letters, digits and dashes (it names files)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,47}", name or ""):
        raise HardsoftError(f"row name {name!r} must be 1-48 lower-case letters, digits or dashes")
    if name in ROW_IDS:  # two rows of one name: the atlas would mix their cells
        raise HardsoftError(f"row name {name!r} is a built-in row of the atlas; choose another")
    return name

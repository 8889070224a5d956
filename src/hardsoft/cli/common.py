"""Helpers shared by the command modules: JSON output and option parsing."""

from __future__ import annotations

import json
import math
from typing import Any

from rich.console import Console

from hardsoft.errors import HardsoftError

console = Console()
err_console = Console(stderr=True)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else (1e308 if obj > 0 else -1e308)
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):
        return _jsonable(obj.tolist())
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    return obj


def print_json(obj: Any) -> None:
    """Print one machine-readable JSON object on stdout (NaN/inf mapped to valid JSON)."""
    print(json.dumps(_jsonable(obj), indent=None, sort_keys=False))


def parse_int_list(text: str, option: str) -> list[int]:
    """Parse ``"16,32,64"`` into integers; a bad entry is a one-line error naming ``option``."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise HardsoftError(f"{option} expects comma-separated integers, got {text!r}") from None
    if not values:
        raise HardsoftError(f"{option} is empty")
    return values

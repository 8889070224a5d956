"""How numbers and formulas in n read in the report's tables and the experiments' summaries:
one place, so an experiment and the report never print the same value two ways."""

from __future__ import annotations

import re
from typing import Any


def fmt(value: Any) -> str:
    """A table cell: floats to 4 significant digits, booleans as yes/no, lists joined with
    commas, None as a dash (never a Python repr)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def expression(text: str, digits: int = 4) -> str:
    """A formula in n as a reader writes it: ``0.07564510952019236/n**3`` → ``0.07565/n³``,
    ``1/(4*n**3)`` → ``1/(4n³)`` (numbers to ``digits`` significant digits)."""
    out = re.sub(
        r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?", lambda m: f"{float(m.group(0)):.{digits}g}", text
    )
    out = re.sub(
        r"\*\*(-?\d+)",
        lambda m: "" if m.group(1) == "1" else m.group(1).translate(_SUPERSCRIPT),
        out,
    )
    out = re.sub(r"(\d)\*(?=[a-z(])", r"\1", out)
    return out.replace("*", "·")

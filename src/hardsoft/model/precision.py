"""The float format a model computes in, against the length up to which its certificate proves
it exact in that format.

A compiled model's certificate carries ``float_limits``: per format, the largest n for which the
rounding of every head stays inside the margin the readout tolerates (docs/compiler.md,
"Rounding"; compiled PARITY: 547 in float32, 12,682,383 in float64). Past it the outputs may be
wrong at some positions with nothing else to show it, so ``hardsoft run`` and ``hardsoft check``
warn (stderr) and say so in their JSON (:func:`precision_report`).
"""

from __future__ import annotations

from typing import Any

import torch


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``"float32"``."""
    return str(dtype).removeprefix("torch.")


def float_limit(meta: dict[str, Any] | None, dtype: torch.dtype) -> int | None:
    """The certified largest n in ``dtype`` from a model's ``meta`` (None: no such claim)."""
    cert = (meta or {}).get("certificate")
    limits = cert.get("float_limits") if isinstance(cert, dict) else None
    value = limits.get(dtype_name(dtype)) if isinstance(limits, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
        return None
    return int(value)


def precision_report(meta: dict[str, Any] | None, dtype: torch.dtype, n: int) -> dict[str, Any]:
    """``{"dtype", "certified_max_n", "n", "beyond_limit", "warning"}`` for the longest input
    ``n``: ``warning`` is one line when ``n`` exceeds the certified limit, else None."""
    limit = float_limit(meta, dtype)
    beyond = limit is not None and n > limit
    warning = None
    if beyond:
        warning = (
            f"n = {n:,} exceeds this model's certified {dtype_name(dtype)} limit n <= {limit:,} "
            "(certificate float_limits): outputs may be wrong at some positions; "
            + ("use --dtype float64" if dtype != torch.float64 else "check them (hardsoft check)")
        )
    return {
        "dtype": dtype_name(dtype),
        "certified_max_n": limit,
        "n": n,
        "beyond_limit": beyond,
        "warning": warning,
    }

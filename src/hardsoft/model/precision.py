"""The float format a model computes in, against the length up to which its certificate proves
it exact in that format, and the length a bounded model was built for.

A compiled model's certificate carries ``float_limits``: per format, the largest n for which
rounding cannot change an output (docs/compiler.md, "Rounding"; docs/programs.md, "Float
limits"; compiled PARITY: 547 in float32, 12,682,383 in float64); 0 says that no length is
proven (a RASP output read to 10⁻⁹ in float32). A model compiled with ``--max-len N``
(``meta["program"]["max_len"]``) is exact only for n <= N. Past either limit the outputs may
be wrong at some positions with nothing else to show it, so ``hardsoft run`` and ``hardsoft
check`` warn (stderr) and say so in their JSON (:func:`precision_report`).
"""

from __future__ import annotations

from typing import Any

import torch

from hardsoft.errors import HardsoftError


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``"float32"``."""
    return str(dtype).removeprefix("torch.")


def float_limit(meta: dict[str, Any] | None, dtype: torch.dtype) -> int | None:
    """The certified largest n in ``dtype`` from a model's ``meta`` (None: no such claim; 0:
    the certificate proves no length exact in that format)."""
    cert = (meta or {}).get("certificate")
    limits = cert.get("float_limits") if isinstance(cert, dict) else None
    value = limits.get(dtype_name(dtype)) if isinstance(limits, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return int(value)


def length_bound(meta: dict[str, Any] | None) -> int | None:
    """The longest input a bounded model was built for (``meta["program"]["max_len"]``);
    None: every length. A value that is not a positive integer is a malformed model file."""
    prog = (meta or {}).get("program")
    value = prog.get("max_len") if isinstance(prog, dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HardsoftError(
            f"the model file's meta['program']['max_len'] must be a positive integer or null, "
            f"got {value!r}"
        )
    return value


def _binding(meta: dict[str, Any] | None, dtype: torch.dtype) -> str:
    cert = (meta or {}).get("certificate") or {}
    why = ((cert.get("float_limits") or {}).get("binding") or {}).get(dtype_name(dtype))
    return f" ({why})" if isinstance(why, str) and why else ""


def precision_report(meta: dict[str, Any] | None, dtype: torch.dtype, n: int) -> dict[str, Any]:
    """``{"dtype", "certified_max_n", "length_bound", "n", "beyond_limit", "warning"}`` for the
    longest input ``n``: ``warning`` is one line when ``n`` exceeds the certified float limit
    or the length bound (or no length is certified in ``dtype``), else None."""
    limit = float_limit(meta, dtype)
    bound = length_bound(meta)
    name = dtype_name(dtype)
    other = "use --dtype float64" if dtype != torch.float64 else "check them (hardsoft check)"
    warnings = []
    if limit == 0:
        warnings.append(
            f"this model's certificate proves no input length exact in {name} (certificate "
            f"float_limits{_binding(meta, dtype)}): outputs may be wrong at some positions; {other}"
        )
    elif limit is not None and n > limit and (bound is None or limit < bound):
        warnings.append(
            f"n = {n:,} exceeds this model's certified {name} limit n <= {limit:,} "
            f"(certificate float_limits): outputs may be wrong at some positions; {other}"
        )
    if bound is not None and n > bound:
        warnings.append(
            f"n = {n:,} exceeds the length this model was compiled for, n <= {bound:,} "
            f"(--max-len {bound}): it is exact only up to it, so outputs may be wrong; compile "
            "with a larger --max-len"
        )
    return {
        "dtype": name,
        "certified_max_n": limit,
        "length_bound": bound,
        "n": n,
        "beyond_limit": bool(warnings),
        "warning": "; ".join(warnings) or None,
    }

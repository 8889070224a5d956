"""Reading a compiled program's outputs by their declared encodings, and comparing them with
the program's own interpreter.

``model.meta["program"]["outputs"]`` lists, per output coordinate, the statement it carries
and how (docs/rasp.md, "Outputs"): ``bool`` (1 for true), ``onehot`` (1 where the statement
has ``value``), ``number`` (its value, or a count carried as count/n or count/i: ``unit``).
``read`` says how a value is read off the coordinate: ``threshold`` (> 1/2), ``round``,
``nearest`` (of ``values``) or ``exact``. :func:`decode` turns the coordinates into values;
:func:`agrees` compares one with the interpreter's value of the statement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError

TOLERANCE = 1e-9
"""Relative tolerance for outputs read ``exact`` (means: float64 rounding of sums of n terms)."""

UNITS = {
    "count/n": lambda i, n: n,
    "count/i": lambda i, n: i,
    "mean*(n-1)/n": lambda i, n: n / (n - 1) if n > 1 else 1,
}
"""How a value is carried: the factor that decodes it at 1-based position i of a length-n
input (a count carried as count/n or count/i; a mean over j != i as its sum over j != i
divided by n)."""


def program_outputs(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The output entries of a compiled program's meta (an error for other models)."""
    prog = meta.get("program")
    if not isinstance(prog, dict) or not isinstance(prog.get("outputs"), list):
        raise HardsoftError("the model is not a compiled program (no meta['program']['outputs'])")
    return list(prog["outputs"])


def decode_one(entry: dict[str, Any], v: float, i: int, n: int) -> Any:
    """The value coordinate ``v`` carries at 1-based position ``i`` of a length-n input."""
    enc = entry.get("encoding")
    if enc in ("bool", "onehot"):
        return bool(v > 0.5)
    unit = entry.get("unit")
    if unit is not None:
        if unit not in UNITS:
            raise HardsoftError(f"output {entry.get('name')!r}: unknown unit {unit!r}")
        scaled = v * UNITS[unit](i, n)
        return int(round(scaled)) if entry.get("read") == "round" else float(scaled)
    read = entry.get("read", "exact")
    if read == "round":
        return int(round(v))
    if read == "nearest":
        return min(entry["values"], key=lambda x: abs(x - v))
    return float(v)


def decode(entries: Sequence[dict[str, Any]], outputs: np.ndarray) -> list[list[Any]]:
    """Per position, per output, the value read (``outputs``: ``[n, d_out]``)."""
    n = len(outputs)
    return [
        [decode_one(e, float(outputs[i, k]), i + 1, n) for k, e in enumerate(entries)]
        for i in range(n)
    ]


def _same(a: Any, b: Any) -> bool:
    """Equal as RASP compares values (Python's ``==``: 0 == 0.0 == False), lists and tuples
    alike (JSON has no tuples)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def expected(entry: dict[str, Any], value: Any) -> Any:
    """What the coordinate should read for the statement's ``value`` (None: not compared,
    a number output where the value is None, which the ``NAME=None`` output covers)."""
    enc = entry.get("encoding")
    if enc == "bool":
        return value is True
    if enc == "onehot":
        if entry.get("value") is None:
            return value is None
        return value is not None and _same(value, entry["value"])
    return value


def agrees(entry: dict[str, Any], got: Any, value: Any) -> tuple[bool, float]:
    """Whether the read value ``got`` matches the interpreter's ``value``, and the error."""
    want = expected(entry, value)
    if entry.get("encoding") in ("bool", "onehot"):
        return got == want, 0.0 if got == want else 1.0
    if want is None:
        return True, 0.0
    if isinstance(want, bool):
        want = int(want)
    if not isinstance(want, (int, float)):
        return False, math.inf
    err = abs(float(got) - float(want))
    return err <= TOLERANCE * max(1.0, abs(float(want))), err

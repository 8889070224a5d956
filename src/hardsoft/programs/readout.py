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


ENCODINGS = ("bool", "onehot", "number")
READS = ("threshold", "round", "nearest", "exact")


def check_program_meta(meta: dict[str, Any], d_out: int) -> None:
    """``meta["program"]`` of a model file, checked once when the file is read: an object
    whose ``outputs`` has one entry per output coordinate, each with a ``name`` and a
    ``statement`` (strings), a known ``encoding``, ``unit`` and ``read``, and non-empty
    numeric ``values`` where it is read as the nearest of them; ``max_len`` an integer >= 0
    or null; ``vocab`` an object. A malformed one is a one-line error (a file edited
    by hand, or not written by hardsoft), not a crash where it is first used. A string is the
    name of a built-in task (``hardsoft program NAME``), which has no outputs to check."""
    prog = meta.get("program")
    if prog is None or isinstance(prog, str):
        return
    if not isinstance(prog, dict):
        raise HardsoftError(f"meta['program'] is {type(prog).__name__}, not an object")
    outputs = prog.get("outputs")
    if not isinstance(outputs, list):
        raise HardsoftError("meta['program'] has no list 'outputs'")
    if len(outputs) != d_out:
        raise HardsoftError(
            f"meta['program'] lists {len(outputs)} outputs for the model's {d_out} output "
            "coordinates"
        )
    for k, entry in enumerate(outputs, 1):
        _check_output_entry(entry, f"meta['program'] output {k}")
    bound = prog.get("max_len")  # 0, a bound nothing meets, is for check to report
    if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool) or bound < 0):
        raise HardsoftError(f"meta['program'] max_len must be an integer >= 0, got {bound!r}")
    for key in ("vocab",):
        if prog.get(key) is not None and not isinstance(prog[key], dict):
            raise HardsoftError(f"meta['program'] {key} must be an object, got {prog[key]!r}")
    for key in ("name", "notation", "source"):
        if prog.get(key) is not None and not isinstance(prog[key], str):
            raise HardsoftError(f"meta['program'] {key} must be a string, got {prog[key]!r}")


def _check_output_entry(entry: Any, where: str) -> None:
    if not isinstance(entry, dict):
        raise HardsoftError(f"{where} is {type(entry).__name__}, not an object")
    for key in ("name", "statement"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise HardsoftError(f"{where} has no {key} (a non-empty string)")
    choices = {"encoding": ENCODINGS, "unit": (None, *UNITS), "read": READS}
    defaults = {"encoding": "bool", "unit": None, "read": "exact"}
    for key, allowed in choices.items():
        if entry.get(key, defaults[key]) not in allowed:
            raise HardsoftError(f"{where}: unknown {key} {entry[key]!r}")
    if entry.get("read") == "nearest":
        values = entry.get("values")
        numbers = isinstance(values, list) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in values
        )
        if not values or not numbers:
            raise HardsoftError(f"{where} is read as the nearest of its values, which must be "
                                f"a non-empty list of numbers, got {values!r}")  # fmt: skip


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

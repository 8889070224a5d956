"""Validation of user-supplied values: one place for the command line and the Python API.

Every function checks one kind of value and returns it normalised, or raises a one-line
:class:`~hardsoft.errors.HardsoftError` that names the option (``name``: ``"--chunk-size"`` on
the command line, ``"chunk_size"`` from Python). The CLI attaches them to options through
:mod:`hardsoft.cli.common`; library entry points call them on their arguments, so a bad value
is refused the same way whichever door it came through. docs/errors.md lists the error classes.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

from hardsoft.errors import HardsoftError

SEED_MAX = 2**64 - 1
"""Seeds are unsigned 64-bit integers: what numpy's and torch's generators both accept."""

AUTO = "auto"


def integer(value: Any, name: str, *, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int in ``[lo, hi]`` (bounds optional). Bools and floats are refused,
    so ``chunk_size=True`` or ``samples=2.5`` do not slip through as 1 or 2."""
    if isinstance(value, bool) or not isinstance(value, int):
        if hasattr(value, "__index__") and not isinstance(value, bool):
            value = value.__index__()  # numpy integers
        else:
            raise HardsoftError(f"{name} must be an integer, got {value!r}")
    if lo is not None and value < lo:
        raise HardsoftError(f"{name} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise HardsoftError(f"{name} must be <= {hi}, got {value}")
    return int(value)


def positive_int(value: Any, name: str, *, hi: int | None = None) -> int:
    """An integer >= 1."""
    return integer(value, name, lo=1, hi=hi)


def nonneg_int(value: Any, name: str, *, hi: int | None = None) -> int:
    """An integer >= 0."""
    return integer(value, name, lo=0, hi=hi)


def real(
    value: Any,
    name: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """A finite float in the interval given by ``lo``/``hi`` (closed unless ``*_open``).
    NaN and ±inf are always refused: no option of hardsoft means anything with them."""
    if isinstance(value, bool):
        raise HardsoftError(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise HardsoftError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise HardsoftError(f"{name} must be a finite number, got {value!r}")
    too_low = lo is not None and (x < lo or (lo_open and x == lo))
    too_high = hi is not None and (x > hi or (hi_open and x == hi))
    if (too_low or too_high) and lo is not None and hi is not None:
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise HardsoftError(f"{name} must be in {interval}, got {x:g}")
    if too_low:
        raise HardsoftError(f"{name} must be {'>' if lo_open else '>='} {lo:g}, got {x:g}")
    if too_high:
        raise HardsoftError(f"{name} must be {'<' if hi_open else '<='} {hi:g}, got {x:g}")
    return x


def probability(value: Any, name: str, *, open_interval: bool = False) -> float:
    """A probability in [0, 1] (or (0, 1) with ``open_interval``)."""
    return real(value, name, lo=0.0, hi=1.0, lo_open=open_interval, hi_open=open_interval)


def seed(value: Any, name: str = "seed") -> int:
    """A seed in [0, 2^64): the range both numpy's and torch's generators take as given (numpy
    silently accepts larger ones, torch refuses them, so one range is enforced everywhere)."""
    return integer(value, name, lo=0, hi=SEED_MAX)


def alphabet(value: Any, name: str = "alphabet") -> tuple[str, ...]:
    """An alphabet: a non-empty string or sequence of single characters, none repeated. A
    repeat is refused everywhere (compile, random-model, eval, a model file) rather than
    silently deduplicated in some places and refused in others."""
    if isinstance(value, str):
        symbols = tuple(value)
    else:
        try:
            symbols = tuple(value)
        except TypeError:
            raise HardsoftError(f"{name} must be a string of symbols, got {value!r}") from None
    if not symbols:
        raise HardsoftError(f"{name} is empty (the alphabet needs a symbol)")
    for a in symbols:
        if not isinstance(a, str) or len(a) != 1:
            raise HardsoftError(f"{name}: symbols must be single characters, got {a!r}")
        if a == "\x00":  # numpy's strings drop it: words over it could not be evaluated
            raise HardsoftError(f"{name}: the NUL character '\\x00' cannot be a symbol")
    seen: set[str] = set()
    for a in symbols:
        if a in seen:
            raise HardsoftError(f"{name} {''.join(symbols)!r} repeats the symbol {a!r}")
        seen.add(a)
    return symbols


def chunk_size(value: Any, name: str = "chunk_size") -> int | str | None:
    """An attention block size: None (never stream), ``"auto"`` or an integer >= 1."""
    if value is None or value == AUTO:
        return value
    if isinstance(value, str):
        raise HardsoftError(f"{name} must be a positive integer, None or 'auto', got {value!r}")
    return positive_int(value, name)


def device(value: Any, name: str = "device") -> str:
    """``cpu``, ``cuda`` or ``cuda:K``, refused when that device does not exist here."""
    import torch

    text = str(value).strip()
    if text == "cpu":
        return text
    kind, _, index = text.partition(":")
    if kind != "cuda" or (index and not index.isdigit()):
        raise HardsoftError(f"{name}: unknown device {text!r} (cpu, cuda or cuda:K)")
    if not torch.cuda.is_available():
        raise HardsoftError(f"{name} {text} was requested but no CUDA device is available")
    count = torch.cuda.device_count()
    if index and int(index) >= count:
        raise HardsoftError(f"{name} {text}: there are only {count} CUDA device(s)")
    return text


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def _check_creatable(path: Path, name: str) -> None:
    """The folders up to ``path`` exist or can be created by us."""
    parent = path.parent
    probe = _nearest_existing(parent)
    if not probe.is_dir():
        raise HardsoftError(f"{name} {str(path)!r}: {str(probe)!r} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise HardsoftError(f"{name} {str(path)!r}: the folder {str(probe)!r} is not writable")


def output_file(value: Any, name: str = "output", *, suffix: str | None = None) -> Path:
    """A file we may (over)write atomically: not empty, not a folder, not a device or pipe, and
    inside a folder that exists (or can be created) and is writable. With ``suffix`` (e.g.
    ``".png"``) the name must end with it (any case), so a PNG is not written into ``x.txt``."""
    text = os.fspath(value) if value is not None else ""
    if text.strip() in ("", "."):
        raise HardsoftError(f"{name} is empty: give a file name")
    path = Path(text)
    if path.is_dir():
        raise HardsoftError(f"{name} {text!r} is a folder; give a file name")
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise HardsoftError(f"{name} {text!r} exists and is not a regular file")
    if text.endswith(os.sep):
        raise HardsoftError(f"{name} {text!r} names a folder; give a file name")
    if suffix is not None and path.suffix.lower() != suffix.lower():
        raise HardsoftError(f"{name} {text!r} must be a {suffix} file name (it writes {suffix})")
    _check_creatable(path, name)
    return path


def output_dir(value: Any, name: str = "output") -> Path:
    """A folder we may create or write into: not empty, not an existing file, writable."""
    text = os.fspath(value) if value is not None else ""
    if not text.strip():
        raise HardsoftError(f"{name} is empty: give a folder")
    path = Path(text)
    if path.exists():
        if not path.is_dir():
            raise HardsoftError(f"{name} {text!r} exists and is not a folder")
        if not os.access(path, os.W_OK | os.X_OK):
            raise HardsoftError(f"{name} {text!r} is not writable")
        return path
    _check_creatable(path, name)
    return path


def input_file(value: Any, name: str = "input file") -> Path:
    """An existing regular file we can read (a folder or a missing file is named as such)."""
    text = os.fspath(value) if value is not None else ""
    if not text.strip():
        raise HardsoftError(f"{name} is empty: give a file")
    path = Path(text)
    if path.is_dir():
        raise HardsoftError(f"{name} {text!r} is a folder, not a file")
    if not path.exists():
        raise HardsoftError(f"{name} {text!r}: no such file")
    if not os.access(path, os.R_OK):
        raise HardsoftError(f"{name} {text!r} is not readable")
    return path


def read_text(value: Any, name: str = "input file") -> str:
    """The UTF-8 text of a file; a byte sequence that is not UTF-8 is an error naming its line
    and column (not a UnicodeDecodeError traceback)."""
    path = input_file(value, name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise HardsoftError(f"cannot read {name} {str(path)!r}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start : exc.start + 1].hex()
        raise HardsoftError(
            f"{name} {str(path)!r} is not UTF-8 text: line {line}, column {column} (byte 0x{bad})"
        ) from None


def path_text(value: Any, name: str) -> str:
    """A non-empty path as text (for arguments such as MODEL that are checked later)."""
    text = os.fspath(value) if value is not None else ""
    if not text.strip():
        raise HardsoftError(f"{name} is empty: give a path")
    return text


def not_the_input(out: Any, source: Any, name: str = "output") -> Path:
    """An output that is not the input file it is made from: writing a converted model over
    its source would lose the original (the thing the conversion's guarantee is about)."""
    path = Path(os.fspath(out))
    src = Path(os.fspath(source))
    if path.exists() and src.exists() and os.path.samefile(path, src):
        raise HardsoftError(f"{name} {str(path)!r} is the input file; write to another file")
    return path

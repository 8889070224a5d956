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
    return not_an_input(path, name)


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


MAX_INPUT_BYTES = 1 << 28
"""Largest input file read whole (256 MiB): words to run or check, a DFA. Longer inputs are
for ``--stream``, which reads in chunks."""

_BLOCK = 1 << 20


def _size_text(nbytes: int) -> str:
    return f"{nbytes / 2**20:g} MiB" if nbytes >= 2**20 else f"{nbytes} bytes"


def read_bytes(value: Any, name: str = "input file", *, limit: int | None = None) -> bytes:
    """The bytes of an input file, at most ``limit`` of them (default
    :data:`MAX_INPUT_BYTES`): a larger file is refused by its size before reading, and a pipe
    or device (``/dev/stdin``, a symlink to ``/dev/urandom``) is read in blocks and refused
    once it passes the limit, rather than read forever."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    path = input_file(value, name)
    most = _size_text(limit)
    try:
        size = path.stat().st_size
        if size > limit:
            raise HardsoftError(
                f"{name} {str(path)!r} is larger than {most} ({size:,} bytes); at most {most} "
                "is read"
            )
        blocks, total = [], 0
        with open(path, "rb") as f:
            while block := f.read(min(_BLOCK, limit + 1 - total)):
                blocks.append(block)
                total += len(block)
                if total > limit:
                    raise HardsoftError(
                        f"{name} {str(path)!r} is larger than {most}: it passed that while it "
                        f"was read (a pipe or a device has no size to check first); at most "
                        f"{most} is read"
                    )
    except OSError as exc:
        raise HardsoftError(f"cannot read {name} {str(path)!r}: {exc.strerror}") from None
    return b"".join(blocks)


def read_text(value: Any, name: str = "input file", *, limit: int | None = None) -> str:
    """The UTF-8 text of a file (at most ``limit`` bytes: :func:`read_bytes`); a byte sequence
    that is not UTF-8 is an error naming its line and column (not a UnicodeDecodeError
    traceback)."""
    path = input_file(value, name)
    data = read_bytes(path, name, limit=limit)
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


_INPUTS: dict[tuple[int, int], str] = {}
"""The files the running command reads, by identity (device, inode) → how its command line
names them. :func:`output_file` refuses to (over)write one of them, so every write through
:func:`hardsoft.model.io.atomic_write` is guarded, into an output folder too. Empty outside a
command: the CLI fills it (:func:`protect_inputs`) and clears it (:func:`clear_inputs`)."""


def _identity(path: Any) -> tuple[int, int] | None:
    """The file ``path`` names after following symlinks (device, inode): a symlink and a
    hard link to a file have the file's identity. None if nothing is there."""
    try:
        st = os.stat(os.fspath(path))
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def protect_inputs(inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> None:
    """Record the command's input files (option or argument name → path; None skipped) and
    refuse, now, an output that is one of them: ``program compile p.cr -o p.cr`` would have
    replaced the program with a model. Symlinks and hard links are resolved (same inode).
    Later writes are refused too (:func:`output_file`), e.g. a file an output folder holds."""
    for name, path in inputs.items():
        ident = _identity(path) if path is not None else None
        if ident is not None:
            _INPUTS.setdefault(ident, f"{name} {os.fspath(path)!r}")
    for name, path in (outputs or {}).items():
        if path is not None:
            not_an_input(path, name)


def clear_inputs() -> None:
    """Forget the recorded inputs (the CLI, when a command ends)."""
    _INPUTS.clear()


def not_an_input(out: Any, name: str = "output") -> Path:
    """``out``, refused when it is one of the running command's input files (the same file,
    through a symlink or a hard link too): writing there would lose the input."""
    path = Path(os.fspath(out))
    ident = _identity(path) if _INPUTS else None
    if ident is not None and ident in _INPUTS:
        raise HardsoftError(
            f"{name} {str(path)!r} is the input file {_INPUTS[ident]}: writing there would "
            "replace it; write to another file"
        )
    return path


MAX_NESTING = 100
"""How deep an expression of a program file may nest (``!!!x``, ``(((x)))`` around an
operator, ``#(#(...))``): every stage after the parser (checks, interpreter, compiler) walks
expressions recursively, and Python's stack holds about 1000 calls. A long chain of one
associative operator (``a && b && ...``) is not nesting: the parsers balance it."""


def nesting(root: Any, children: Any, where: str, limit: int | None = None) -> int:
    """The depth of the tree at ``root`` (``children(node)`` its subtrees), measured without
    recursion; deeper than ``limit`` (default :data:`MAX_NESTING`) is a one-line error naming
    ``where`` and the limit."""
    limit = MAX_NESTING if limit is None else limit
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise HardsoftError(
                f"{where} nests more than {limit} levels deep (the nesting limit of program "
                "files: write the inner part as its own statement)"
            )
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in children(node))
    return deepest

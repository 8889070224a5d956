"""Programs written in the theory's own notations: the contract every notation implements.

A *source program* is a file in one of the notations the seed papers' authors write their
constructions in: C-RASP (Yang & Chiang, COLM 2024; ``.cr``, :mod:`hardsoft.programs.crasp`),
B-RASP (Yang, Chiang & Angluin, NeurIPS 2024; ``.brasp``, ``hardsoft.programs.brasp``) and
Tracr's RASP (Lindner et al. 2023; ``FILE.py:NAME``, ``hardsoft.programs.rasp``). Each
notation's package exposes ``load(path, *, alphabet, name) -> SourceProgram``; the commands
(``program run``, ``program compile``, ``check --program``) and the ``programs`` experiment
see only this module.

Every program is straight-line: named statements evaluated in order, each with one value per
position. Its **output is the last statement**, and a word is **accepted** when that value is
true at the last position (the empty word is rejected: it has no last position).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hardsoft import validate
from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer

__all__ = [
    "DEFAULT_TARGETS",
    "EXAMPLES",
    "NOTATION_TARGETS",
    "ExampleProgram",
    "Notation",
    "ProgramRun",
    "SourceProgram",
    "Value",
    "ExampleFile",
    "example_files",
    "example_programs",
    "load_program",
    "notation_of",
    "program_alphabet",
    "program_file",
    "read_source",
    "require_symbols",
    "resolve_program",
    "source_file",
]


class Notation(str, Enum):
    """The notations a program file can be written in (the file's suffix decides)."""

    CRASP = "crasp"
    BRASP = "brasp"
    RASP = "rasp"

    @property
    def display(self) -> str:
        """The notation's name as the papers write it."""
        return _TITLES[self]


_TITLES = {Notation.CRASP: "C-RASP", Notation.BRASP: "B-RASP", Notation.RASP: "RASP (Tracr)"}

DEFAULT_TARGETS: dict[Notation, str] = {
    Notation.CRASP: "hard",
    Notation.BRASP: "hard",
    Notation.RASP: "soft-temperature",
}
"""The target ``program compile`` builds when none is given: hard attention where the
notation is a logic of hard attention; softmax for RASP, whose averages need it (or
average-hard)."""

NOTATION_TARGETS: dict[Notation, tuple[str, ...]] = {
    Notation.CRASP: ("hard", "soft-temperature", "soft-pe", "soft-ln"),
    Notation.BRASP: ("hard", "soft-temperature", "soft-pe"),
    Notation.RASP: ("average-hard", "soft-temperature", "hard"),
}
"""The targets each notation's ``compile`` offers (a program may still refuse one, with the
reason: a RASP mean cannot be unique-hard)."""

Value = bool | int | float | str | None
"""One statement's value at one position (``None``: undefined there, e.g. a RASP aggregate
that selects nothing)."""


@dataclass(frozen=True)
class ProgramRun:
    """A program run on one word: ``values`` holds every named statement (SOp) in program
    order, one value per position; ``accept`` is the output (the last statement) at the last
    position (False for the empty word)."""

    input: str
    values: dict[str, list[Value]]
    accept: bool

    def to_dict(self) -> dict:
        """What ``program run --json`` prints per input. JSON has no infinity or NaN: a
        non-finite float value is written as the string ``"inf"``, ``"-inf"`` or ``"nan"``
        (it was written as 1e308, another number; a numerical statement never holds a string,
        so the two cannot be confused)."""
        values = {name: [_finite_or_text(v) for v in vals] for name, vals in self.values.items()}
        return {"input": self.input, "accept": self.accept, "values": values}


def _finite_or_text(v: Any) -> Any:
    """A statement's value for JSON: non-finite floats as text, lists element by element."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (list, tuple)):
        return [_finite_or_text(x) for x in v]
    return v


@runtime_checkable
class SourceProgram(Protocol):
    """What every notation's program offers.

    ``run`` is the notation's plain interpreter: literal, and independent of the compiler (it
    is the reference ``check --program`` compares compiled models with).

    ``compile(target, masks=, outputs=, max_len=)`` builds a transformer whose output k is the
    k-th name of ``outputs`` (default: the last statement). The model carries
    ``meta["certificate"]`` as compiled formulas do, and ``meta["program"]`` =
    ``{"notation", "name", "source": the program text (or the file name for .py), "outputs":
    [{"name": output name, "statement": statement name, "encoding": "bool" | "number" |
    "onehot", "value": v (onehot only), "unit": None or how a number is carried}]}``.
    Encodings: ``bool`` — the output is 1 where the statement is true, else 0; ``onehot`` — 1
    where the statement's value equals ``value``; ``number`` — the statement's value itself
    (``unit`` None), or the value divided by the length (``unit`` ending in ``/n``) or by the
    position (``/i``). ``max_len``: the longest input the model is built for, where a notation
    needs one (C-RASP models work at every length; there it is the length at which the
    certificate evaluates τ(n)).

    A program may also offer ``definitions``: statement name → its source text (traces show
    it)."""

    notation: Notation
    name: str
    alphabet: tuple[str, ...]
    statements: tuple[str, ...]

    def run(self, word: str) -> ProgramRun: ...

    def compile(
        self,
        target: str,
        *,
        masks: str = "strict",
        outputs: Sequence[str] | None = None,
        max_len: int | None = None,
    ) -> Transformer: ...


def program_alphabet(
    given: str | Sequence[Any] | None,
    declared: Sequence[Any] | None,
    mentioned: Iterable[str] = (),
    *,
    missing: str,
) -> tuple[Any, ...]:
    """The alphabet a program is read, run and compiled over (RASP: its vocabulary), by one
    rule for every notation and every command (``program run``, ``program compile``, ``check
    --program``, ``atlas add-row --program``; ``decompile --as`` writes programs that declare
    the model's): ``given`` (``--alphabet``) where there is one; else what the file declares
    (a C-RASP ``// alphabet:`` comment, B-RASP's ``Q_a(i)`` statements, a RASP file's
    ``vocab``); else the symbols its statements mention, sorted; else the error ``missing``.
    Each notation refuses a statement that uses a symbol outside it; :func:`require_symbols`
    refuses a word with one, as the compiled model does."""
    if isinstance(given, str):
        return validate.alphabet(given, "--alphabet")
    if given is not None:
        return tuple(given)
    if declared is not None:
        return tuple(declared)
    found = tuple(sorted(set(mentioned)))
    if not found:
        raise HardsoftError(missing)
    return found


ALPHABET_HINT = "--alphabet SYMBOLS runs and compiles it over other symbols"


def require_symbols(word: str, alphabet: Sequence[str], where: str = "") -> None:
    """Refuse a word with a symbol outside the program's ``alphabet``: the interpreter refuses
    what the compiled model refuses, in the model's words (``symbol 'b' at position 2 is not
    in the model's alphabet 'a'``, :meth:`Transformer.encode`; ``where`` prefixes it as
    ``hardsoft run`` does, ``--input 2: ...``) and with the ``--alphabet`` hint."""
    allowed = set(alphabet)
    if set(word) <= allowed:
        return
    i = next(k for k, c in enumerate(word) if c not in allowed)
    raise HardsoftError(
        f"{where}{': ' if where else ''}symbol {word[i]!r} at position {i + 1} is not in the "
        f"program's alphabet {''.join(alphabet)!r} ({ALPHABET_HINT})"
    )


NOTATION_PACKAGES: dict[str, str] = {
    ".cr": "hardsoft.programs.crasp",
    ".brasp": "hardsoft.programs.brasp",
    ".py": "hardsoft.programs.rasp",
}
"""The package that reads each file suffix; each exposes ``load(path, *, alphabet, name)``."""

SUFFIX_NOTATION: dict[str, Notation] = {
    ".cr": Notation.CRASP,
    ".brasp": Notation.BRASP,
    ".py": Notation.RASP,
}

EXAMPLES = Path(__file__).parent / "examples"
"""The shipped example programs (package data), written by us."""

MAX_SOURCE_BYTES = 1 << 20
"""Largest program file read (a program is text a person writes)."""


def _split_py(path: Path) -> tuple[Path, str | None]:
    """``FILE.py:NAME`` → (``FILE.py``, ``NAME``); other paths unchanged."""
    text = str(path)
    head, sep, tail = text.rpartition(":")
    if sep and head.endswith(".py") and tail and "/" not in tail:
        return Path(head), tail
    return path, None


def notation_of(path: Path | str) -> Notation:
    """The notation of a program file, by its suffix (``FILE.py:NAME`` is RASP); an unknown
    suffix is a one-line error."""
    file, _ = _split_py(Path(path))
    suffix = file.suffix.lower()
    if suffix not in SUFFIX_NOTATION:
        known = ", ".join(f"{s} ({SUFFIX_NOTATION[s].display})" for s in SUFFIX_NOTATION)
        raise HardsoftError(
            f"{str(path)!r}: unknown program notation {suffix or '(no suffix)'!r} (known: {known})"
        )
    return SUFFIX_NOTATION[suffix]


def source_file(path: Path) -> Path:
    """``path``, checked to be a program file before anything reads or runs it: it exists,
    is a regular file (a folder, a pipe or a symlink to ``/dev/urandom`` is not, and would
    never end), and has at most :data:`MAX_SOURCE_BYTES` bytes."""
    path = Path(path)
    if not path.exists():
        raise HardsoftError(f"no such program file: {str(path)!r}")
    if path.is_dir():
        raise HardsoftError(f"{str(path)!r} is a folder, not a program file")
    if not path.is_file():
        raise HardsoftError(
            f"{str(path)!r} is not a regular file (a device, a pipe or a socket); a program "
            "file must be one"
        )
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise HardsoftError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    if size > MAX_SOURCE_BYTES:
        raise HardsoftError(
            f"{str(path)!r} has {size} bytes; a program file has at most {MAX_SOURCE_BYTES}"
        )
    return path


def read_source(path: Path) -> str:
    """A program file's text (UTF-8), with one-line errors for a missing, unreadable, binary
    or oversized file (:func:`source_file`; every notation reads its files here)."""
    path = source_file(path)
    data = validate.read_bytes(path, "program file", limit=MAX_SOURCE_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise HardsoftError(f"{str(path)!r} is not UTF-8 text (line {line})") from None


@dataclass(frozen=True)
class ExampleFile:
    """A shipped example program: its ``@NAME``, file, notation and whether this
    installation has that notation's package."""

    name: str
    path: Path
    notation: Notation
    available: bool


def _available(notation: Notation) -> bool:
    suffix = next(s for s, n in SUFFIX_NOTATION.items() if n is notation)
    return importlib.util.find_spec(NOTATION_PACKAGES[suffix]) is not None


def example_files() -> list[ExampleFile]:
    """Every shipped example program (``*.cr``, ``*.brasp``, ``*.py``), sorted by notation
    and name. ``@NAME`` (the file's stem, or its name with the suffix where stems repeat)
    refers to it in ``program run/compile`` and ``check --program``."""
    files = [
        p
        for p in sorted(EXAMPLES.glob("*"))
        if p.is_file() and p.suffix in SUFFIX_NOTATION and not p.name.startswith("_")
    ]
    stems = [p.stem for p in files]
    out = []
    for p in files:
        notation = SUFFIX_NOTATION[p.suffix]
        name = p.stem if stems.count(p.stem) == 1 else p.name
        out.append(ExampleFile(name, p, notation, _available(notation)))
    order = list(Notation)
    return sorted(out, key=lambda e: (order.index(e.notation), e.name))


@dataclass(frozen=True)
class ExampleProgram:
    """One program of a shipped example file: the file itself, or for a RASP file one of
    the SOps it offers (``@tracr_lib:hist``)."""

    file: ExampleFile
    inner: str | None = None

    @property
    def name(self) -> str:
        """How commands name it: ``@NAME`` or ``@NAME:PROG``."""
        return f"@{self.file.name}" + (f":{self.inner}" if self.inner else "")

    @property
    def label(self) -> str:
        """The name without ``@`` (tables, figures)."""
        return self.name[1:]

    @property
    def path(self) -> str:
        """What :func:`load_program` reads."""
        return f"{self.file.path}:{self.inner}" if self.inner else str(self.file.path)


def example_programs() -> list[ExampleProgram]:
    """Every program of every shipped example file, in :func:`example_files`' order. A file
    whose notation package offers ``programs_in(path)`` (RASP: a Python file holds several
    SOps) gives one entry per program; an unavailable notation gives its file alone."""
    out: list[ExampleProgram] = []
    for e in example_files():
        suffix = e.path.suffix.lower()
        lister = None
        if e.available:
            package = importlib.import_module(NOTATION_PACKAGES[suffix])
            lister = getattr(package, "programs_in", None)
        if lister is None:
            out.append(ExampleProgram(e))
        else:
            out += [ExampleProgram(e, inner) for inner in lister(e.path)]
    return out


def resolve_program(text: str | Path) -> Path:
    """A program argument as a path: ``@NAME`` is a shipped example (:func:`example_files`,
    also ``@NAME.cr``; ``@NAME:PROG`` for a ``.py`` example), anything else a file path."""
    text = str(text)
    if not text.startswith("@"):
        return Path(text)
    name, sep, prog = text[1:].partition(":")
    hits = [e for e in example_files() if name in (e.name, e.path.name, e.path.stem)]
    if len(hits) > 1:
        which = " or ".join(f"@{e.name}" for e in hits)
        raise HardsoftError(f"{text!r} names {len(hits)} shipped examples: say {which}")
    local = _split_py(Path(text))[0]
    if hits and local.exists():  # a file of the user's called @NAME: never shadow it silently
        raise HardsoftError(
            f"{text!r} names both the shipped example @{hits[0].name} and the file "
            f"{str(local)!r} here: say ./{text} for the file, or rename it"
        )
    if hits:
        return Path(f"{hits[0].path}:{prog}") if sep else hits[0].path
    known = ", ".join(f"@{e.name}" for e in example_files()) or "none"
    raise HardsoftError(f"no shipped example program {text!r} (known: {known})")


def program_file(text: str | Path) -> Path:
    """The file a program argument reads: ``@NAME`` resolved, the ``:NAME`` of ``FILE.py:NAME``
    dropped (what the command must not overwrite)."""
    return _split_py(resolve_program(text))[0]


def load_program(
    path: Path | str, *, alphabet: str | None = None, name: str | None = None
) -> SourceProgram:
    """Read a program file (``@NAME``: a shipped example) in the notation its suffix names.

    ``alphabet`` (a string of symbols) overrides the program's own; symbols the program uses
    outside it are an error naming the statement. ``name`` names the program (default: the
    file's stem); for ``FILE.py:NAME`` it is the RASP program inside the file. A notation whose
    package this installation lacks is a one-line error."""
    file, inner = _split_py(resolve_program(path))
    notation = notation_of(file)
    suffix = file.suffix.lower()
    module = NOTATION_PACKAGES[suffix]
    try:
        package = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise HardsoftError(
            f"{str(file)!r}: the {notation.display} notation ({suffix}) is not available in "
            "this installation (notation not available)"
        ) from None
    if inner is not None and name is None:
        name = inner
    program: SourceProgram = package.load(file, alphabet=alphabet, name=name)
    return program

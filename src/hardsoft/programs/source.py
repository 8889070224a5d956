"""The program front-end contract: every notation (C-RASP, B-RASP, Tracr's RASP) is read into a
:class:`SourceProgram` with a plain interpreter (:meth:`SourceProgram.run`) and a compiler to
the project's one model type (:meth:`SourceProgram.compile`). :func:`load_program` picks the
notation by the file's suffix."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer


class Notation(str, Enum):
    CRASP = "crasp"
    BRASP = "brasp"
    RASP = "rasp"


Value = bool | int | float | str | None


@dataclass(frozen=True)
class ProgramRun:
    input: str
    # every named statement/SOp in program order, one value per position
    values: dict[str, list[Value]]
    accept: bool  # the output (last statement) is true at the last position


class SourceProgram(Protocol):
    notation: Notation
    name: str
    alphabet: tuple[str, ...]
    statements: tuple[str, ...]  # names in program order; the last is the output

    def run(self, word: str) -> ProgramRun: ...  # the plain, independent interpreter

    def compile(
        self,
        target: str,
        *,
        masks: str = "strict",
        outputs: Sequence[str] | None = None,
        max_len: int | None = None,
    ) -> Transformer: ...


_LOADERS = {
    ".cr": "hardsoft.programs.crasp",
    ".brasp": "hardsoft.programs.brasp",
    ".py": "hardsoft.programs.rasp",
}


def load_program(
    path: Path, *, alphabet: str | None = None, name: str | None = None
) -> SourceProgram:
    """Read a program file; its notation comes from the suffix (``.cr``, ``.brasp``,
    ``FILE.py:NAME``)."""
    suffix = Path(str(path).split(":")[0]).suffix
    module = _LOADERS.get(suffix)
    if module is None:
        known = ", ".join(_LOADERS)
        raise HardsoftError(f"{str(path)!r}: unknown program suffix {suffix!r} (one of {known})")
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        raise HardsoftError(f"{str(path)!r}: the {suffix} notation is not available") from None
    program: SourceProgram = loaded.load(Path(path), alphabet=alphabet, name=name)
    return program

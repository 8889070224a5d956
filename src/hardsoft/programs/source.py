"""Programs written in a notation (C-RASP, B-RASP, RASP), loaded from a file and run or compiled.

The shared front-end contract: every notation's package exposes ``load(path, *, alphabet,
name) -> SourceProgram``; :func:`load_program` dispatches on the file's suffix.
"""

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

    def run(self, word: str) -> ProgramRun:  # the plain, independent interpreter
        ...

    def compile(
        self,
        target: str,
        *,
        masks: str = "strict",
        outputs: Sequence[str] | None = None,
        max_len: int | None = None,
    ) -> Transformer:
        # model.meta["certificate"] as for compiled formulas, and model.meta["program"] =
        # {"notation", "name", "source": the program text (or file name for .py),
        #  "outputs": [{"name": output name, "statement": statement name,
        #               "encoding": "bool" | "number" | "onehot", "value": v (onehot only),
        #               "unit": None or e.g. "count/n" (how a number is carried)}]}
        # `check --program` compares output k with run().values[statement] by that encoding.
        ...


_LOADERS = {
    ".cr": "hardsoft.programs.crasp",
    ".brasp": "hardsoft.programs.brasp",
    ".py": "hardsoft.programs.rasp",
}


def load_program(
    path: Path, *, alphabet: str | None = None, name: str | None = None
) -> SourceProgram:
    """The program in ``path``, by its suffix (``FILE.py:NAME`` names the SOp in a .py file)."""
    path = Path(path)
    head, sep, tail = str(path).rpartition(":")
    if sep and Path(head).suffix in _LOADERS and "/" not in tail:
        path, name = Path(head), name or tail
    module = _LOADERS.get(path.suffix)
    if module is None:
        known = ", ".join(_LOADERS)
        raise HardsoftError(f"{str(path)!r}: unknown program file type (one of {known})")
    loader = importlib.import_module(module)
    program: SourceProgram = loader.load(path, alphabet=alphabet, name=name)
    return program

"""B-RASP (Yang, Chiang & Angluin, NeurIPS 2024) as a hardsoft program notation: ``.brasp``
files as the b-rasp.github.io simulator prints them (:mod:`.parser`), a plain interpreter
(:mod:`.interpret`), compilation to unique-hard heads and their softmax simulations through
the compiler's IR (:mod:`.compile`), and LTL formulas written back as B-RASP (:mod:`.from_ltl`,
for ``hardsoft decompile --as brasp``). docs/programs.md, "B-RASP"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hardsoft import validate
from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer
from hardsoft.programs.brasp.compile import compile_program
from hardsoft.programs.brasp.interpret import run_vectors
from hardsoft.programs.brasp.parser import parse_program
from hardsoft.programs.brasp.syntax import Program
from hardsoft.programs.source import Notation, ProgramRun

__all__ = ["BraspProgram", "compile_program", "load", "parse_program", "read_program"]


@dataclass(frozen=True)
class BraspProgram:
    """A checked B-RASP program with its interpreter and compiler (the
    :class:`~hardsoft.programs.source.SourceProgram` of the notation)."""

    program: Program
    name: str
    source: str
    where: str = ""
    """Prefixes error messages (the file name)."""
    notation: Notation = Notation.BRASP

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.program.alphabet

    @property
    def statements(self) -> tuple[str, ...]:
        return self.program.names

    def run(self, word: str) -> ProgramRun:
        """Every statement's value at every position of ``word``; accepted iff the last
        statement is true at the last position (the empty word is rejected)."""
        vectors = run_vectors(self.program, word)
        values: dict[str, list[bool | int | float | str | None]] = {
            name: [bool(x) for x in v] for name, v in vectors.items()
        }
        last = vectors[self.statements[-1]]
        return ProgramRun(word, values, bool(len(last) and last[-1]))

    def compile(
        self,
        target: str,
        *,
        masks: str = "strict",
        outputs: Sequence[str] | None = None,
        max_len: int | None = None,
    ) -> Transformer:
        return compile_program(
            self.program,
            target,
            masks=masks,
            outputs=outputs,
            max_len=max_len,
            name=self.name,
            source=self.source,
            where=self.where,
        )


def read_program(
    text: str, *, alphabet: str | None = None, name: str = "program", where: str = ""
) -> BraspProgram:
    """A B-RASP program from its text (``alphabet``: the symbols, default the declared ones
    in order; ``where`` prefixes error messages)."""
    alpha = validate.alphabet(alphabet) if alphabet is not None else None
    return BraspProgram(parse_program(text, alpha, where), name, text, where)


def load(path: Path, *, alphabet: str | None = None, name: str | None = None) -> BraspProgram:
    """Read a ``.brasp`` file (the loader :func:`hardsoft.programs.source.load_program`
    dispatches to)."""
    path = Path(path)
    where = f"{str(path)!r}: "
    if path.is_dir():
        raise HardsoftError(f"{str(path)!r} is a folder, not a program file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HardsoftError(f"no such program file: {str(path)!r}") from None
    except UnicodeDecodeError as exc:
        raise HardsoftError(f"{where}not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise HardsoftError(f"{where}cannot be read: {exc.strerror}") from None
    return read_program(text, alphabet=alphabet, name=name or path.stem, where=where)

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
from hardsoft.model.transformer import Transformer
from hardsoft.programs.brasp.compile import compile_program
from hardsoft.programs.brasp.interpret import run_vectors
from hardsoft.programs.brasp.parser import parse_program
from hardsoft.programs.brasp.syntax import Declare, Program, statement_text
from hardsoft.programs.source import Notation, ProgramRun, read_source

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

    @property
    def definitions(self) -> dict[str, str]:
        """Each statement's right-hand side as B-RASP writes it (traces show it); a
        declaration ``Q_a(i)`` is shown as the symbol it tests."""
        out = {}
        for name in self.statements:
            s = self.program.statement(name)
            out[name] = (
                f"symbol {s.symbol}"
                if isinstance(s, Declare)
                else statement_text(s).split(":= ", 1)[1]
            )
        return out

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
    text = read_source(path)  # a file, at most 1 MiB, UTF-8: as every notation
    return read_program(text, alphabet=alphabet, name=name or path.stem, where=where)

"""A checked C-RASP program: run it (the plain interpreter), translate it to LTL[C,+] and
compile it through the logic compiler (:class:`CRaspProgram`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from hardsoft import validate
from hardsoft.errors import HardsoftError
from hardsoft.logic import syntax as L
from hardsoft.model.transformer import Transformer
from hardsoft.programs.crasp.checker import Checked, check_program
from hardsoft.programs.crasp.interpret import evaluate
from hardsoft.programs.crasp.parser import parse_program
from hardsoft.programs.crasp.syntax import Type
from hardsoft.programs.crasp.translate import translate
from hardsoft.programs.quoting import STRING, unescape
from hardsoft.programs.source import (
    Notation,
    ProgramRun,
    Value,
    program_alphabet,
    read_source,
    require_symbols,
)

__all__ = ["CRaspProgram", "from_text", "load", "DEFAULT_CERT_N"]

DEFAULT_CERT_N = 1000
"""The length at which a compiled program's certificate evaluates its bounds by default."""

_PRAGMA = re.compile(rf"^[ \t]*//[ \t]*alphabet:[ \t]*({STRING}|\S+)[ \t]*$", re.MULTILINE)
"""``// alphabet: SYMBOLS``: a comment declaring the program's alphabet (other tools ignore it);
``// alphabet: "SYMBOLS"`` in double quotes, escaped (:mod:`hardsoft.programs.quoting`), for an
alphabet with spaces, quotes, backslashes or characters that do not print."""
_PRAGMA_LIKE = re.compile(r"^[ \t]*//[ \t]*alphabet[ \t]*[:=].*$", re.MULTILINE | re.IGNORECASE)
"""A comment that means to declare the alphabet; one not of the form above is refused (it was
silently ignored, and the program then ran over the symbols it mentions)."""


def _declared(value: str) -> str:
    """The alphabet a ``// alphabet:`` comment declares (quoted or not)."""
    if len(value) >= 2 and value[0] == value[-1] == '"' and re.fullmatch(STRING, value):
        return unescape(value[1:-1])
    return value


def _declared_alphabet(text: str, where: str) -> tuple[str, ...] | None:
    """The alphabet of the ``// alphabet:`` comment (None without one); a malformed comment,
    or two that disagree, is a one-line error naming the line."""
    found: list[str] = []
    for m in _PRAGMA_LIKE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        exact = _PRAGMA.fullmatch(m.group(0))
        if exact is None:
            raise HardsoftError(
                f"{where} line {line}: malformed alphabet comment {m.group(0).strip()!r}; "
                "write // alphabet: SYMBOLS (the symbols as one word, e.g. // alphabet: ab, "
                'or quoted: // alphabet: "a b")'
            )
        found.append(_declared(exact.group(1)))
    if len(set(found)) > 1:
        raise HardsoftError(f"{where}: two '// alphabet:' comments disagree: {found[0]!r}, "
                            f"{found[1]!r}")  # fmt: skip
    if not found:
        return None
    return validate.alphabet(found[0], f"{where}: the '// alphabet:' comment")


RESULTS = {
    "TL[Y]": "Thm. 13",
    "TL[S]": "Thm. 16",
    "past LTL": "Cor. 18",
    "past TL[C,+]": "Thm. 21",
    "past LTL[C,+]": "Cor. 23",
}
"""The result of Yang, Strobl, Chiang & Angluin (TACL 2026) about future-masked transformers
for each past-only fragment a C-RASP program's formulas fall in."""


@dataclass
class CRaspProgram:
    """A C-RASP program (:class:`hardsoft.programs.source.SourceProgram`).

    ``alphabet``: by :func:`~hardsoft.programs.source.program_alphabet` (``--alphabet``, else a
    ``// alphabet:`` comment, else the symbols the program mentions); :meth:`run` refuses a
    word with another symbol, as the compiled model does. ``alphabet_declared``: it was given
    or declared, not inferred."""

    name: str
    text: str
    checked: Checked
    alphabet: tuple[str, ...]
    alphabet_declared: bool
    notation: Notation = field(default=Notation.CRASP, init=False)

    @property
    def statements(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.checked.statements)

    @property
    def types(self) -> dict[str, Type]:
        """Each statement's type (Boolean or count)."""
        return dict(self.checked.types)

    @cached_property
    def definitions(self) -> dict[str, str]:
        """Each statement's right-hand side as written in the file (comments removed)."""
        lines = self.text.splitlines()
        out = {}
        for s in self.checked.statements:
            line = lines[s.line - 1] if 0 < s.line <= len(lines) else ""
            rhs = line.split("=", 1)[1] if "=" in line else line
            out[s.name] = rhs.split("//", 1)[0].strip()
        return out

    # -------------------------------------------------------------- running

    def _ids(self, words: Sequence[str]) -> np.ndarray:
        for w in words:
            require_symbols(w, self.alphabet)
        index = {a: k for k, a in enumerate(self.alphabet)}
        ids = np.array([[index[c] for c in w] for w in words], dtype=np.int64)
        return ids.reshape(len(words), len(words[0]) if words else 0)

    def values(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """Every statement's values ``[B, n]`` on token ids over :attr:`alphabet` (the batch
        form of :meth:`run`, for checks)."""
        return evaluate(self.checked, np.asarray(ids), self.alphabet)

    def run(self, word: str) -> ProgramRun:
        """The plain interpreter on one word: every statement's value at every position."""
        if not isinstance(word, str):
            raise HardsoftError(f"expected an input word, got {word!r}")
        values = evaluate(self.checked, self._ids([word]), self.alphabet)
        out: dict[str, list[Value]] = {}
        for s in self.checked.statements:
            row = values[s.name][0]
            kind = self.checked.types[s.name]
            out[s.name] = [bool(v) for v in row] if kind is Type.BOOL else [int(v) for v in row]
        last = self.statements[-1]
        accept = bool(word) and bool(out[last][-1])
        return ProgramRun(word, out, accept)

    # -------------------------------------------------------------- translation and compilation

    @cached_property
    def formulas(self) -> dict[str, L.Formula]:
        """Every Boolean statement as a past-only LTL[C,+] formula (program order)."""
        return translate(self.checked)

    def output_statements(self, outputs: Sequence[str] | None) -> list[str]:
        """The statements ``outputs`` names (default: the last statement), checked: known,
        Boolean, none twice."""
        names = list(outputs) if outputs else [self.statements[-1]]
        seen: set[str] = set()
        for nm in names:
            if nm not in self.checked.types:
                raise HardsoftError(
                    f"--output {nm}: the program has no statement {nm} (statements: "
                    f"{', '.join(self.statements)})"
                )
            if self.checked.types[nm] is Type.COUNT:
                raise HardsoftError(
                    f"--output {nm}: statement {nm} is a count; compiled outputs are Boolean "
                    f"(0/1), so compile a comparison of it instead, e.g. {nm}_pos = {nm} > 0"
                )
            if nm in seen:
                raise HardsoftError(f"--output {nm} is given twice")
            seen.add(nm)
        return names

    def compile(
        self,
        target: str,
        *,
        masks: str = "strict",
        outputs: Sequence[str] | None = None,
        max_len: int | None = None,
    ) -> Transformer:
        """Compile the output statements (default: the last) through the logic compiler,
        with future masks only (C-RASP is past-only). Output k is 1 where the k-th statement
        is true, else 0, at every position of every input: the certificate says why.
        ``max_len``: the length at which the certificate evaluates τ(n) and its error bounds
        (default 1000); the model itself works at every length."""
        from hardsoft.compile import Target, compile_formula
        from hardsoft.logic import fragment
        from hardsoft.programs.compiled import compact_text, logic_certificate

        names = self.output_statements(outputs)
        n = DEFAULT_CERT_N if max_len is None else validate.positive_int(max_len, "max_len")
        chosen = {nm: self.formulas[nm] for nm in names}
        model = compile_formula(
            chosen,
            self.alphabet,
            target=target,
            causal=True,
            masks=masks,
            n=n,
            name=f"C-RASP {self.name}",
        )
        joint = next(iter(chosen.values()))
        for f in list(chosen.values())[1:]:
            joint = L.And(joint, f)
        if Target.parse(target, "target") is Target.SOFT_LN:  # its own certificate and label
            model.meta["certificate"]["route"] = "C-RASP"
        else:
            result = RESULTS.get(fragment(joint).name, "Cor. 23")
            model.meta["certificate"] = logic_certificate(
                model.meta["certificate"], target, result=result, route="C-RASP"
            )
        model.meta["formulas"] = {nm: compact_text(L.to_text(f)) for nm, f in chosen.items()}
        model.meta["program"] = {
            "notation": self.notation.value,
            "name": self.name,
            "source": self.text,
            "outputs": [
                {"name": nm, "statement": nm, "encoding": "bool", "value": None, "unit": None}
                for nm in names
            ],
        }
        return model


def from_text(
    text: str, *, alphabet: str | None = None, name: str = "program", where: str | None = None
) -> CRaspProgram:
    """A checked C-RASP program from its text, over the alphabet
    :func:`~hardsoft.programs.source.program_alphabet` decides: ``alphabet``, else a
    ``// alphabet: SYMBOLS`` comment, else the symbols the program mentions (sorted)."""
    in_file = f"{where!r}: " if where else ""  # a syntax error names the file
    where = where or f"program {name!r}"
    declared = _declared_alphabet(text, where)  # checked even where --alphabet overrides it
    given = None if alphabet is None else validate.alphabet(alphabet, "--alphabet")
    fixed = given if given is not None else declared  # checked against before it is decided
    checked = check_program(parse_program(text, in_file), alphabet=fixed, where=where)
    missing = (
        f"{where} mentions no symbol: give its alphabet (--alphabet, or a comment "
        "// alphabet: SYMBOLS)"
    )
    found = program_alphabet(given, declared, checked.symbols, missing=missing)
    return CRaspProgram(name, text, checked, found, fixed is not None)


def load(path: Path, *, alphabet: str | None = None, name: str | None = None) -> CRaspProgram:
    """Read and check a ``.cr`` file (the notation packages' common entry point)."""
    path = Path(path)
    text = read_source(path)
    return from_text(text, alphabet=alphabet, name=name or path.stem, where=str(path))

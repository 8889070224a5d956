"""``decompile --as crasp|brasp`` writes files that read back for every alphabet the compiler
accepts: quotes, brackets, backslash, space, newline, the notations' own keywords and
operators, unicode. Each file is loaded by ``program run``'s loader and must agree with the
model at every position of every word up to length 3 (issue 41: alphabet ``"a`` gave
``C1 = #\"\"\"``, alphabet ``()`` the B-RASP line ``Q_((i)``)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hardsoft.compile import compile_formula
from hardsoft.decompile import decompile
from hardsoft.logic import syntax as L
from hardsoft.programs.brasp.from_ltl import decompiled_program
from hardsoft.programs.crasp.emit import to_crasp
from hardsoft.programs.quoting import escape, unescape
from hardsoft.programs.source import load_program

HOSTILE = [
    '"a', "()", "a\\", "a b", "#/", "ié", "ij", "01", "&|", ":=", "\n\t", "Q_", "'\"", "[]",
    "?!", "{}", "é😀", "\u2028\x01",
]  # fmt: skip


SYMBOLS = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
"""Any character an alphabet may hold (not a surrogate; NUL is refused: numpy drops it)."""


def counting(x: str, y: str) -> L.Formula:
    """C-RASP: more x than y so far, and the symbol now is not y."""
    more = L.Compare(">", L.CountPast(L.Sym(x)), L.CountPast(L.Sym(y)))
    return L.And(more, L.Not(L.Sym(y)))


def temporal(x: str, y: str) -> L.Formula:
    """B-RASP: x just before, and a y somewhere before."""
    return L.And(L.Prev(L.Sym(x)), L.Past(L.Sym(y)))


def round_trip(tmp_path: Path, alphabet: str, notation: str) -> None:
    x, y = alphabet[0], alphabet[1]
    formula = counting(x, y) if notation == "crasp" else temporal(x, y)
    model = compile_formula(formula, alphabet)
    result = decompile(model, verify_n=3, random_words=0)
    if notation == "crasp":
        text = to_crasp([("out", f) for f in result.formulas], model.spec.alphabet)
    else:
        text = decompiled_program(result.outputs, model.spec.alphabet)
    path = tmp_path / f"back.{'cr' if notation == 'crasp' else 'brasp'}"
    path.write_text(text, encoding="utf-8")
    program = load_program(path)
    assert tuple(program.alphabet) == tuple(alphabet), text
    last = list(program.statements)[-1]
    for n in range(1, 4):
        words = ["".join(w) for w in itertools.product(alphabet, repeat=n)]
        outs = model.run_words(words)
        for word, out in zip(words, outs):
            got = program.run(word).values[last]
            assert list(out[:, 0] > 0.5) == [bool(v) for v in got], (text, word)


@pytest.mark.parametrize("alphabet", HOSTILE, ids=[escape(a) for a in HOSTILE])
@pytest.mark.parametrize("notation", ["crasp", "brasp"])
def test_decompiled_program_reads_back_for_hostile_alphabets(
    tmp_path: Path, alphabet: str, notation: str
) -> None:
    round_trip(tmp_path, alphabet, notation)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    alphabet=st.lists(SYMBOLS, min_size=2, max_size=3, unique=True),
    notation=st.sampled_from(["crasp", "brasp"]),
)  # fmt: skip
def test_decompiled_program_reads_back_for_any_alphabet(
    tmp_path: Path, alphabet: list[str], notation: str
) -> None:
    round_trip(tmp_path, "".join(alphabet), notation)


@given(st.text(SYMBOLS, max_size=8))
def test_escape_round_trips(text: str) -> None:
    escaped = escape(text)
    assert unescape(escaped) == text
    assert '"' not in escaped.replace('\\"', "") and "\n" not in escaped
    assert np.all([c.isprintable() for c in escaped])


def test_a_lone_backslash_still_reads_as_itself() -> None:
    """A file written before the escapes (``"\\"`` for the backslash) reads the same."""
    from hardsoft.programs.crasp.program import from_text

    program = from_text('x = #"\\"\ny = x > 1\n', alphabet="\\a")
    assert program.run("\\a\\").values["x"] == [1, 1, 2]


def test_nul_is_refused_as_a_symbol() -> None:
    from hardsoft.errors import HardsoftError

    with pytest.raises(HardsoftError, match="NUL"):
        compile_formula(L.Sym("a"), "a\x00")

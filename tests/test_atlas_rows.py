"""``hardsoft atlas add-row`` as a newcomer meets it: the row lands on the page (or the command
says how to build one), its status says what was shown (impossible, constructed or possible,
not "decided" for all), rows are labelled by their unique names, a name is not silently
re-used for another language, formulas print readably, and ``x{m}`` / ``x{m,n}`` are
repetitions, not symbols."""

from __future__ import annotations

import itertools
import json
import re
import time

import numpy as np
import pytest

from hardsoft.atlas import ltl_search
from hardsoft.atlas.build import build_atlas
from hardsoft.atlas.rows import add_row
from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import dfa_from_regex

from ._cli import run_cli as run


def test_add_row_puts_the_row_on_an_existing_page(tmp_path) -> None:  # type: ignore[no-untyped-def]
    build_atlas(tmp_path, quick=True, only="ones-star,uhat-strict")
    r = run("atlas", "add-row", "--regex", "(aa)*", "--name", "even-as", "--out", str(tmp_path))
    assert r.rc == 0, r.err
    assert "the row is on the page" in r.out
    table = json.loads((tmp_path / "atlas.json").read_text())
    user = [c for c in table["cells"] if c.get("user_row")]
    # (aa)* over the one letter a is not star-free (impossible there) but solvable: its formula
    # MOD(2, 0)(#<[true]) is the position's parity, compiled from a position feature with no
    # head at all, so the hard model lies in uhat-pe too; the soft models settle the rest
    assert sorted((c["row"], c["column"], c["status"], c["evidence_kind"]) for c in user) == [
        ("even-as", "ahat", "constructed", "proof"),
        ("even-as", "soft-pe", "constructed", "proof"),
        ("even-as", "soft-tau", "constructed", "proof"),
        ("even-as", "soft-tau-pe", "constructed", "proof"),
        ("even-as", "uhat-pe", "constructed", "proof"),
        ("even-as", "uhat-strict", "impossible", "proof"),
    ]
    assert "even-as" in (tmp_path / "index.html").read_text()
    assert table["kinds"]["proof"] == 7 and table["counts"]["impossible"] == 1


def test_add_row_without_a_page_says_how_to_build_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = run("atlas", "add-row", "--regex", "a*", "--name", "as", "--alphabet", "ab",
            "--out", str(tmp_path))  # fmt: skip
    assert r.rc == 0, r.err
    text = " ".join(r.out.split())  # the console wraps long lines
    assert f"hardsoft atlas --out {tmp_path}" in text
    assert "'a' & !P 'b'" in text  # not !(!'a' | P !'a')
    assert "[constructed, proof]" in text


def test_statuses_say_what_was_shown(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert add_row(tmp_path, "ab", regex=".*ab.*", alphabet="ab")["status"] == "constructed"
    assert add_row(tmp_path, "aa", regex="(aa)*", alphabet="ab")["status"] == "impossible"
    monkeypatch.setattr(ltl_search, "MAX_FORMULAS", 50)  # the search gives up: the translation
    rec = add_row(tmp_path, "ab2", regex=".*ab.*", alphabet="ab")
    assert rec["status"] == "constructed" and rec["construction"]["formula"] is None
    assert rec["construction"]["search"]["stopped"] == "budget of 50 formulas kept"
    assert "formula_source" not in rec["regular"]  # the local-divisor translation's formula
    import hardsoft.regular.compile as rc

    monkeypatch.setattr(rc, "MAX_BUILT", 10)  # a size limit: possible, and the number named
    rec = add_row(tmp_path, "ab3", regex=".*ab.*", alphabet="ab")
    assert rec["status"] == "possible" and "passed 10 distinct nodes" in rec["regular"]["refused"]


def test_the_formula_search_counts_its_budget_never_a_clock(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The search stops after a number of candidates, not of seconds, so a busy machine gets
    the same answer (the CLI test's `(ab)*` row once stopped at a wall-clock limit): a
    formula is found after the same count every time, with a clock that has run out, and a
    budget one short of that count stops it."""
    dfa = dfa_from_regex(".*ab.*", "ab")
    formula, stats = ltl_search.search(dfa)
    assert formula is not None and stats["stopped"] == "" and stats["candidates"] > 100
    monkeypatch.setattr(time, "perf_counter", lambda: float("inf"))  # a clock would stop it
    monkeypatch.setattr(time, "monotonic", lambda: float("inf"))
    monkeypatch.setattr(time, "time", lambda: float("inf"))
    assert ltl_search.search(dfa) == (formula, stats)
    budget = stats["candidates"] - 1
    monkeypatch.setattr(ltl_search, "MAX_CANDIDATES", budget)
    none, short = ltl_search.search(dfa)
    assert none is None and short["stopped"] == f"budget of {budget} candidates tried"


def _formulas(size: int, symbols: str) -> list:  # type: ignore[type-arg]
    """Every formula of exactly ``size`` nodes over the search's operators, written out
    syntactically (no equivalence merging): the independent side of the next test."""
    from hardsoft.logic.syntax import And, Const, Not, Or, Past, Prev, Since, Sym

    if size == 1:
        return [Sym(a) for a in symbols] + [Const(True)]
    out = []
    for f in _formulas(size - 1, symbols):
        out += [Not(f), Prev(f), Past(f), Or(f, Past(f)), And(f, Not(Past(Not(f))))]
    for left in range(1, size - 1):
        for f, g in itertools.product(
            _formulas(left, symbols), _formulas(size - 1 - left, symbols)
        ):
            out += [Since(f, g), And(f, g), Or(f, g)]
    return out


def test_a_search_that_stops_says_a_true_lower_bound(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The claim "no formula of at most k nodes defines it" is checked against every formula
    of at most k nodes, enumerated without merging and evaluated with the logic evaluator."""
    from hardsoft.languages.base import all_words
    from hardsoft.logic import evaluate

    monkeypatch.setattr(ltl_search, "MAX_FORMULAS", 100)
    dfa = dfa_from_regex("(aab)*", "ab")
    formula, stats = ltl_search.search(dfa)
    assert formula is None and stats["none_up_to"] == 4
    assert "no past formula of at most 4 nodes defines it" in ltl_search.outcome(stats)
    words = all_words("ab", stats["length"])
    target = np.array([[dfa.accepts(w[: i + 1]) for i in range(len(w))] for w in words])
    for size in range(1, 5):
        for f in _formulas(size, "ab"):
            assert not np.array_equal(evaluate(f, words, "ab"), target), f
    a_star = dfa_from_regex("a*", "ab")  # the enumeration does find a formula where one exists
    target = np.array([[a_star.accepts(w[: i + 1]) for i in range(len(w))] for w in words])
    assert any(np.array_equal(evaluate(f, words, "ab"), target) for f in _formulas(2, "ab"))


def test_rows_are_labelled_by_name_and_names_are_not_reused_silently(tmp_path) -> None:  # type: ignore[no-untyped-def]
    build_atlas(tmp_path, quick=True, only="ones-star,uhat-strict")
    for name in ("one", "two"):
        r = run("atlas", "add-row", "--regex", "a*", "--name", name, "--alphabet", "ab",
                "--out", str(tmp_path))  # fmt: skip
        assert r.rc == 0, r.err
    table = json.loads((tmp_path / "atlas.json").read_text())
    titles = [r["title"] for r in table["rows"]]
    assert titles == ["1* (Tomita 1)", "one", "two"]  # one expression, 2 rows
    add_row(tmp_path, "one", regex="a*", alphabet="ab")  # the same language again: fine
    r = run("atlas", "add-row", "--regex", "b*", "--name", "one", "--alphabet", "ab",
            "--out", str(tmp_path))  # fmt: skip
    assert r.rc == 2 and "already exists" in r.err and "--force" in r.err
    r = run("atlas", "add-row", "--regex", "b*", "--name", "one", "--alphabet", "ab",
            "--out", str(tmp_path), "--force", "--json")  # fmt: skip
    assert r.rc == 0 and json.loads(r.out)["regex"] == "b*"


@pytest.mark.parametrize(
    ("regex", "alphabet"),
    [
        ("a{3}", None),
        ("b[ab]{2}", "ab"),
        ("(ab){0,2}", "ab"),
        ("(a|b){2,3}a", "ab"),
        (".{2}", "ab"),
    ],
)
def test_bounded_repetition(regex: str, alphabet: str | None) -> None:
    """x{m} and x{m,n} mean what Python's re says, on every word up to length 7."""
    dfa = dfa_from_regex(regex, alphabet)
    python = re.compile(regex.replace(".", "[" + "".join(dfa.alphabet) + "]"))
    for n in range(8):
        for w in map("".join, itertools.product(dfa.alphabet, repeat=n)):
            assert dfa.accepts(w) == bool(python.fullmatch(w)), (regex, w)


@pytest.mark.parametrize(
    ("regex", "message"),
    [("a{2,}", "x{2}x*"), ("a{0}", "only the empty word"), ("a{x}", "only bound a repetition"),
     ("a{3,1}", "bad regular expression"), ("a{100}", "at most 64")],
)  # fmt: skip
def test_bad_repetitions_are_refused(regex: str, message: str) -> None:
    with pytest.raises(HardsoftError, match=re.escape(message)):
        dfa_from_regex(regex, "ab")


# ---- issue 41: limits while the automaton is built, and the minimisation --------------------


@pytest.mark.parametrize(
    ("regex", "message"),
    [("(a|b)*a(a|b){64}", "while it was determinised"),  # 2^65 states: 620 MB and growing
     ("((a{64}){64}){64}", "written out, pass 5,000 characters")],
)  # fmt: skip
def test_a_regex_is_refused_while_its_automaton_grows(regex: str, message: str) -> None:
    with pytest.raises(HardsoftError, match=re.escape(message)):
        dfa_from_regex(regex, "ab")


@pytest.mark.parametrize(("k", "states"), [(24, 26), (9, 2**10)])
def test_minimal_dfas_that_pyformlang_took_minutes_over(k: int, states: int) -> None:
    """(a|b){24}: 26 states, which pyformlang's minimisation took 85 s to find (and grew
    exponentially with k); (a|b)*a(a|b){9}: the 2^10 states of the k-th symbol from the end."""
    regex = f"(a|b){{{k}}}" if k == 24 else f"(a|b)*a(a|b){{{k}}}"
    dfa = dfa_from_regex(regex, "ab")
    assert dfa.n_states == states
    python = re.compile(regex)
    rng = np.random.default_rng(k)
    for n in (k, k + 1, 2 * k):
        for _ in range(50):
            w = "".join(rng.choice(["a", "b"], size=n))
            assert dfa.accepts(w) == bool(python.fullmatch(w)), (regex, w)


def test_a_dfa_file_is_refused_by_its_states_before_any_work(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hardsoft.languages.regular import MAX_BUILD_STATES, dfa_from_file

    n = MAX_BUILD_STATES + 1
    path = tmp_path / "big.json"
    transitions = {str(q): {"a": str((q + 1) % n)} for q in range(n)}
    path.write_text(json.dumps({"alphabet": "a", "start": "0", "accept": ["0"],
                                "transitions": transitions}))  # fmt: skip
    with pytest.raises(HardsoftError, match=f"has {n:,} states"):
        dfa_from_file(path)


def test_the_minimal_dfa_of_a_file_against_automata_lib(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Random complete DFAs (unreachable and equivalent states included): the number of
    states of the minimal DFA agrees with automata-lib's, and every word up to length 6 gets
    the file's own answer."""
    from automata.fa.dfa import DFA as AutoDFA

    from hardsoft.languages.regular import dfa_from_file

    rng = np.random.default_rng(41)
    for trial in range(40):
        alphabet = "ab" if trial % 2 else "abc"
        n = int(rng.integers(1, 30))
        delta = {str(q): {a: str(int(rng.integers(0, n))) for a in alphabet} for q in range(n)}
        accept = [str(q) for q in range(n) if rng.random() < 0.4]
        path = tmp_path / "d.json"
        path.write_text(json.dumps({"alphabet": alphabet, "start": "0", "accept": accept,
                                    "transitions": delta}))  # fmt: skip
        ours = dfa_from_file(path)
        other = AutoDFA(states=set(delta), input_symbols=set(alphabet), transitions=delta,
                        initial_state="0", final_states=set(accept)).minify()  # fmt: skip
        assert ours.n_states == len(other.states), (trial, delta, accept)
        for m in range(7):
            for w in map("".join, itertools.product(alphabet, repeat=m)):
                assert ours.accepts(w) == other.accepts_input(w), (trial, w)


@pytest.mark.parametrize(
    ("regex", "column"),
    [("(ab", 1), ("ab)", 3), ("a**", 3), ("*a", 1), ("[]a", 1), ("Σ(a", 2), ("a|", 2)],
)
def test_regex_syntax_errors_point_at_the_character(regex: str, column: int) -> None:
    """A syntax error has the one form of every notation (docs/errors.md): the column, the
    expression and a caret under the bad character."""
    with pytest.raises(HardsoftError) as info:
        dfa_from_regex(regex, "ab")
    lines = str(info.value).split("\n")
    assert f"syntax error at column {column}:" in lines[0], lines
    assert lines[1] == f"  {regex}" and lines[2] == "  " + " " * (column - 1) + "^", lines


@pytest.mark.parametrize("regex", ["[ab]{2}?", "a{1,2}?b", "(ab){2}?", "a{2}?", "[ab]{1,3}?a"])
def test_a_lazy_or_possessive_repetition_is_the_same_language(regex: str) -> None:
    """Python reads ``x{m,n}?`` (lazy) as ``x{m,n}``: the same words; written out, the ``?``
    once made the last copy optional (``[ab]{2}?`` took 'a')."""
    dfa = dfa_from_regex(regex, "ab")
    python = re.compile(regex)
    for n in range(8):
        for w in map("".join, itertools.product("ab", repeat=n)):
            assert dfa.accepts(w) == bool(python.fullmatch(w)), (regex, w)


@pytest.mark.parametrize(("regex", "column"), [("[.]", 2), ("[[a]", 2), ("a[Σb]", 3), ("[]a]", 1)])
def test_a_class_holds_symbols_only(regex: str, column: int) -> None:
    """``.``, ``Σ`` and ``[`` inside ``[..]`` are refused with a caret: Python reads ``[.]`` as
    a literal dot and ``[[a]`` as the class of ``[`` and ``a``, which the automaton once did not."""
    with pytest.raises(HardsoftError, match=f"syntax error at column {column}:"):
        dfa_from_regex(regex, "ab")


@pytest.mark.parametrize(("regex", "column"), [("a*+a", 3), ("[ab]{1,3}+a", 10), ("b?+", 3)])
def test_a_possessive_repetition_is_refused(regex: str, column: int) -> None:
    """Python's possessive ``x*+`` never gives back (``a*+a`` matches nothing); the automaton
    once read it as ``(a*)+``: refused with a caret instead of silently other words."""
    with pytest.raises(HardsoftError, match=f"syntax error at column {column}: possessive"):
        dfa_from_regex(regex, "ab")

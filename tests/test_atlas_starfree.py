"""Star-freeness of regular rows (``hardsoft atlas add-row``), against the rows whose answer is
known and against an independent check on many random regular expressions.

The independent check shares nothing with :mod:`hardsoft.atlas.starfree` or with the pyformlang
DFA: it builds the DFA with automata-lib (another library, from the same expression), and
decides aperiodicity by enumerating every word u up to a length bound and running u^N and
u^(N+1) (N = the number of states, at least any transformation's index) from every state of
that DFA; a non-star-free verdict's witness is replayed through Python's ``re`` module (a third,
backtracking matcher): x w^k y and x w^(k+1) y must differ in membership.
"""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from automata.fa.dfa import DFA as AutoDFA
from automata.fa.nfa import NFA

from hardsoft.atlas.rows import add_row, decide_row, stored_rows
from hardsoft.atlas.starfree import decide_star_free, index_and_period
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language
from hardsoft.languages.regular import dfa_from_file, dfa_from_regex

from ._cli import run_cli as run


@pytest.mark.parametrize(
    ("regex", "alphabet", "star_free"),
    [
        ("0*(10*10*)*", "01", False),  # PARITY (even number of 1s)
        ("(aa)*", "a", False),
        ("(aa)*", "ab", False),
        (".*ab.*", "ab", True),  # Σ*abΣ*
        ("(ab)*", "ab", True),  # star-free although written with a star
        ("1.*", "01", True),  # FIRST
        ("1*", "01", True),  # 1*
        ("(a|b)*", "ab", True),
        ("((ab)*c)*", "abc", True),
        ("(aaa)*b", "ab", False),
        ("((aa)*b)*", "ab", False),
    ],
)
def test_known_rows(regex: str, alphabet: str, star_free: bool) -> None:
    decision = decide_star_free(dfa_from_regex(regex, alphabet))
    assert decision.star_free is star_free
    if not star_free:
        assert decision.witness_period is not None and decision.witness_period > 1


def test_registered_regular_languages_agree_with_their_oracles() -> None:
    parity = dfa_from_regex("0*(10*10*)*", "01")
    oracle = get_language("parity-even")
    for n in range(9):
        for word in ("".join(t) for t in itertools.product("01", repeat=n)):
            assert parity.accepts(word) == oracle.member(word)
    aa = get_language("aa-star")
    assert [aa.member("a" * n) for n in range(5)] == [True, False, True, False, True]
    assert not aa.member("aab") and not aa.member("b")


def _random_regex(rng: np.random.Generator, alphabet: str, depth: int) -> str:
    """A random expression over ``alphabet`` with | * + ? and concatenation."""
    depth = max(depth, 0)
    if depth == 0 or rng.random() < 0.25:
        return alphabet[int(rng.integers(len(alphabet)))]
    op = rng.choice(["cat", "cat", "alt", "star", "plus", "opt", "cycle"])
    if op == "cycle":  # (uu)* or (uuu)*: the periodic shapes random expressions rarely hit
        inner = _random_regex(rng, alphabet, depth - 2)
        return "(" + inner * int(rng.integers(2, 4)) + ")*"
    if op in ("cat", "alt"):
        a = _random_regex(rng, alphabet, depth - 1)
        b = _random_regex(rng, alphabet, depth - 1)
        return f"{a}{b}" if op == "cat" else f"({a}|{b})"
    inner = _random_regex(rng, alphabet, depth - 1)
    return f"({inner})" + {"star": "*", "plus": "+", "opt": "?"}[str(op)]


class _Independent:
    """automata-lib's minimal DFA of the expression, completed with a sink (None)."""

    def __init__(self, regex: str, alphabet: str) -> None:
        dfa = AutoDFA.from_nfa(NFA.from_regex(regex, input_symbols=set(alphabet))).minify()
        self.alphabet = alphabet
        self.trans = {q: dict(edges) for q, edges in dfa.transitions.items()}
        self.states = list(dfa.states)
        self.final = set(dfa.final_states)
        self.partial = any(a not in self.trans.get(q, {}) for q in self.states for a in alphabet)

    @property
    def n_states(self) -> int:
        return len(self.states) + int(self.partial)

    def step(self, q: object, word: str) -> object:
        for a in word:
            if q is None:
                return None
            q = self.trans.get(q, {}).get(a)
        return q

    def aperiodic_up_to(self, bound: int) -> bool:
        n = self.n_states
        starts = [*self.states, None]
        for length in range(1, bound + 1):
            for u in map("".join, itertools.product(self.alphabet, repeat=length)):
                if any(self.step(q, u * n) != self.step(q, u * (n + 1)) for q in starts):
                    return False
        return True


def _bound(alphabet: str) -> int:
    return 6 if len(alphabet) == 2 else 4


def test_star_freeness_against_an_independent_check_on_random_expressions() -> None:
    rng = np.random.default_rng(2024)
    verdicts = {True: 0, False: 0}
    for trial in range(300):
        alphabet = "ab" if trial % 2 == 0 else "abc"
        regex = _random_regex(rng, alphabet, depth=4)
        ours = decide_star_free(dfa_from_regex(regex, alphabet))
        other = _Independent(regex, alphabet)
        assert ours.n_states == other.n_states, regex
        assert ours.star_free == other.aperiodic_up_to(_bound(alphabet)), regex
        verdicts[ours.star_free] += 1
        if not ours.star_free:
            _replay_witness(regex, ours)
    # both answers occur often enough for the comparison to mean something
    assert verdicts[True] >= 20 and verdicts[False] >= 20, verdicts


def _replay_witness(regex: str, decision) -> None:  # type: ignore[no-untyped-def]
    """x w^k y and x w^(k+1) y differ in membership for the witness's k and the next p − 1
    powers (so for every k ≥ index, by periodicity), by Python's ``re``."""
    assert decision.context is not None and decision.witness
    x, y = decision.context
    w, k, p = decision.witness, decision.witness_index, decision.witness_period
    pattern = re.compile(regex)
    members = [bool(pattern.fullmatch(x + w * j + y)) for j in range(k, k + p + 1)]
    assert members[0] != members[1], (regex, w, x, y)
    assert members[0] == members[p], (regex, w, p)  # period p, as claimed


def test_index_and_period() -> None:
    assert index_and_period((1, 0)) == (1, 2)  # a swap
    assert index_and_period((1, 2, 2)) == (2, 1)  # 0 -> 1 -> 2 -> 2: m^2 = m^3
    assert index_and_period((1, 2, 0, 4, 3)) == (1, 6)


def test_add_row_stores_the_row_and_its_dfa(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rec = add_row(tmp_path, "ab-star", regex="1*", alphabet="01")
    assert rec["star_free"] is True and rec["status"] == "constructed"
    again = dfa_from_file(tmp_path / "rows" / "ab-star.dfa.json")
    assert decide_star_free(again).star_free is True
    assert rec["construction"]["formula"] == "'1' & !P '0'"  # simplified, then verified
    assert [r["name"] for r in stored_rows(tmp_path)] == ["ab-star"]


def test_a_star_free_row_gets_a_compiled_model_checked_against_its_dfa(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hardsoft.check import check_language
    from hardsoft.languages.regular import RegularLanguage
    from hardsoft.model.io import load_model

    rec = add_row(tmp_path, "has-ab", regex=".*ab.*", alphabet="ab")
    assert rec["construction"]["verified"]  # the search's formula, checked at every length
    hard = next(t for t in rec["regular"]["targets"] if t["target"] == "hard")
    assert hard["exact"] and hard["mismatches"] == 0 and "uhat-strict" in hard["columns"]
    model = load_model(tmp_path / hard["model"])
    assert {h.spec.weighting.value for b in model.blocks for h in b.heads} <= {
        "leftmost",
        "rightmost",
    }
    lang = RegularLanguage("contains-ab", dfa_from_regex(".*ab.*", "ab"))
    rep = check_language(model, lang, exhaustive_max_n=10, random_n=[300], samples=8, seed=5)
    assert rep["mismatches"] == 0
    assert "construction" not in add_row(tmp_path, "aa", regex="(aa)*", alphabet="ab")


def test_add_row_from_a_dfa_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "mod3.json"
    path.write_text(
        json.dumps(
            {
                "alphabet": "ab",
                "start": "s0",
                "accept": ["s0"],
                "transitions": {
                    "s0": {"a": "s1", "b": "s0"},
                    "s1": {"a": "s2", "b": "s1"},
                    "s2": {"a": "s0", "b": "s2"},
                },
            }
        )
    )
    rec = decide_row("mod3", dfa_file=path)
    assert rec["star_free"] is False and rec["witness"]["period"] == 3


def test_a_dfa_file_with_a_repeated_symbol_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rep.json"
    path.write_text(json.dumps({"alphabet": "aa", "start": "0", "accept": [], "transitions": {}}))
    with pytest.raises(HardsoftError, match="repeats the symbol"):
        decide_row("rep", dfa_file=path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--regex", "a|", "--name", "x"], "empty alternative"),
        (["--regex", "(ab", "--name", "x"], "bad regular expression"),
        (["--regex", "ab", "--name", "X Y"], "row name"),
        (["--regex", "ac", "--name", "x", "--alphabet", "ab"], "not in the alphabet"),
        (["--name", "x"], "exactly one"),
        # an alphabet with a repeated symbol, or an empty one, is refused (not deduplicated or
        # silently replaced by the expression's symbols), as everywhere else
        (["--regex", "a", "--name", "x", "--alphabet", "aa"], "repeats the symbol 'a'"),
        (["--regex", "a", "--name", "x", "--alphabet", ""], "--alphabet is empty"),
        (["--regex", "(", "--name", "x"], "mentions no symbol"),
        (["--regex", "(aa)*", "--name", "parity"], "built-in row"),
    ],
)
def test_add_row_bad_input(tmp_path, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    r = run("atlas", "add-row", *args, "--out", str(tmp_path))
    assert r.rc == 2 and message in r.err, r.err


def test_add_row_cli_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = run(
        "atlas",
        "add-row",
        "--regex",
        "(aa)*",
        "--name",
        "even-as",
        "--out",
        str(tmp_path),
        "--json",
    )
    assert r.rc == 0, r.err
    rec = json.loads(r.out)
    assert rec["star_free"] is False and rec["witness"]["word"] == "a"
    with pytest.raises(HardsoftError):
        decide_row("x", regex="(", alphabet="ab")


def test_a_dfa_file_accepting_an_unknown_state_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "typo.json"
    dfa = {"alphabet": "ab", "start": "q0", "accept": ["q9"], "transitions": {"q0": {"a": "q1"}}}
    path.write_text(json.dumps(dfa))
    with pytest.raises(HardsoftError, match="accepting state 'q9' is no state"):
        decide_row("typo", dfa_file=path)


def test_the_search_stays_within_its_word_budget_on_large_alphabets() -> None:
    """A 300-symbol alphabet asked for 8·10^9 words (24 GB) before the search was bounded;
    the default lengths of small alphabets are unchanged."""
    from hardsoft.atlas.ltl_search import MAX_CELLS, affordable_length, search

    assert [affordable_length(k, n, cells=True) for k, n in ((2, 7), (3, 5), (4, 4))] == [7, 5, 4]
    assert [affordable_length(k, n) for k, n in ((2, 12), (3, 8), (4, 6))] == [12, 8, 6]
    assert 10**4 * 4 > MAX_CELLS >= 10**3 * 3 and affordable_length(10, 5, cells=True) == 3
    big = "".join(chr(0x4E00 + i) for i in range(300))
    formula, stats = search(dfa_from_regex("一", big))
    assert formula is None and "too large" in stats["stopped"]

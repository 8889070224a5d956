"""The regular languages of the atlas's regular rows (Tomita, FLaRe, bounded Dyck, the A5 word
problem): each oracle (written from the definition) against the language's DFA (written apart
from it) on every word up to a length and on random long words, against a third definition
here (sympy's permutation groups, Python's ``eval``, another characterisation), their exact
samplers, the registry's names, and ``hardsoft language dfa``."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter

import numpy as np
import pytest

from hardsoft.errors import HardsoftError
from hardsoft.languages import all_words, get_language, language_names
from hardsoft.languages.regular import (
    RegularLanguage,
    dfa_from_file,
    dfa_from_json,
    dfa_from_regex,
)

from ._cli import run_cli
from .test_languages import chi_square

REGULAR = [n for n in language_names() if get_language(n).automaton() is not None]
NEW = [
    "tomita2",
    "tomita3",
    "tomita4",
    "tomita5",
    "tomita6",
    "tomita7",
    "even-pairs",
    "repeat-01",
    "cycle-navigation",
    "modular-arithmetic-simple",
    "dyck2-depth2",
    "dyck2-depth3",
    "a5-identity",
]
EXHAUSTIVE = {2: 12, 4: 7, 8: 5, 9: 5}
"""Every word up to this length, by alphabet size (more than 10^5 words beyond)."""


def test_every_new_language_declares_a_dfa() -> None:
    assert set(NEW) <= set(REGULAR)
    assert {"parity-odd", "first", "ones-star"} <= set(REGULAR)  # FLaRe's Parity, First; Tomita 1


@pytest.mark.parametrize("name", REGULAR)
def test_oracle_and_dfa_agree_on_every_short_word(name: str) -> None:
    lang = get_language(name)
    dfa = lang.automaton()
    assert dfa is not None
    n = EXHAUSTIVE[len(lang.alphabet)]
    for m in range(n):
        words = all_words(lang.alphabet, m)
        assert [lang.member(w) for w in words] == [dfa.accepts(w) for w in words], (name, m)
    # every word of length n, and with it every shorter one, as a prefix: the oracle's own
    # per-prefix reference against the DFA's
    by_dfa = RegularLanguage(name, dfa)
    for w in all_words(lang.alphabet, n):
        assert (lang.prefix_reference(w) == by_dfa.prefix_reference(w)).all(), (name, w)


@pytest.mark.parametrize("name", REGULAR)
def test_oracle_and_dfa_agree_on_random_long_words(name: str) -> None:
    lang = get_language(name)
    by_dfa = RegularLanguage(name, lang.automaton())
    rng = np.random.default_rng(7)
    for n, count in ((61, 20), (200, 20), (1001, 8)):
        words = lang.sample_uniform(n, count, rng)
        if lang.has_members(n) and lang.has_nonmembers(n):
            words += lang.sample_balanced(n, count, rng)[0]  # members and near misses
        for w in words:
            assert (lang.prefix_reference(w) == by_dfa.prefix_reference(w)).all(), (name, w)
            assert lang.member(w) == by_dfa.member(w), (name, w)


@pytest.mark.parametrize("name", NEW)
def test_sampled_members_are_members_of_every_length(name: str) -> None:
    """The DFA proposes the words, the oracle labels them: both agree on members (which the
    uniform words above rarely hit for cycle navigation, modular arithmetic or bounded Dyck)."""
    lang = get_language(name)
    rng = np.random.default_rng(8)
    for n in range(0, 40):
        if lang.has_members(n):
            assert all(lang.member(w) for w in lang.sample_positive(n, 5, rng)), (name, n)
        if lang.has_nonmembers(n) and n:
            assert not any(lang.member(w) for w in lang.sample_negative(n, 5, rng)), (name, n)


@pytest.mark.parametrize(
    "name,n",
    [
        ("tomita3", 8),
        ("tomita4", 7),
        ("even-pairs", 6),
        ("cycle-navigation", 4),
        ("modular-arithmetic-simple", 5),
        ("dyck2-depth2", 6),
        ("a5-identity", 10),
    ],
)
def test_member_sampler_is_uniform_over_members(name: str, n: int) -> None:
    lang = get_language(name)
    members = [w for w in all_words(lang.alphabet, n) if lang.member(w)]
    draws = 50 * len(members)
    counts = Counter(lang.sample_positive(n, draws, np.random.default_rng(9)))
    assert set(counts) <= set(members)
    assert chi_square(counts, {w: draws / len(members) for w in members})


# ----------------------------------------------------------------- third definitions
def _runs(word: str) -> list[tuple[str, int]]:
    return [(s, len(list(g))) for s, g in itertools.groupby(word)]


THIRD = {
    "tomita2": lambda w: w == "10" * (len(w) // 2),
    # no maximal odd block of 1s right before a maximal odd block of 0s, by regular expressions
    "tomita3": lambda w: (
        not any(
            a == "1" and b == "0" and m % 2 == 1 and k % 2 == 1
            for (a, m), (b, k) in zip(_runs(w), _runs(w)[1:])
        )
    ),
    "tomita4": lambda w: all(len(g) < 3 for g in w.split("1")),
    "tomita5": lambda w: Counter(w)["0"] % 2 == 0 and Counter(w)["1"] % 2 == 0,
    "tomita6": lambda w: (sum(c == "0" for c in w) - sum(c == "1" for c in w)) % 3 == 0,
    "tomita7": lambda w: re.fullmatch("0*1*0*1*", w) is not None,
    "even-pairs": lambda w: w == "" or w[0] == w[-1],  # FLaRe's automaton: first = last
    "repeat-01": lambda w: (
        w[0::2] == "0" * len(w[0::2]) and w[1::2] == "1" * len(w[1::2]) and len(w) % 2 == 0
    ),
}


@pytest.mark.parametrize("name", list(THIRD))
def test_against_another_characterisation(name: str) -> None:
    lang = get_language(name)
    for m in range(11):
        for w in all_words(lang.alphabet, m):
            assert lang.member(w) == THIRD[name](w), (name, w)


def _left_to_right(expr: str) -> int:
    """``d op d op d ...`` evaluated left to right modulo 5 by Python's ``eval`` on the fully
    parenthesised expression."""
    text = expr[0]
    for k in range(1, len(expr), 2):
        text = f"({text}{expr[k]}{expr[k + 1]})"
    return eval(text) % 5


def test_modular_arithmetic_against_eval() -> None:
    lang = get_language("modular-arithmetic-simple")
    rng = np.random.default_rng(10)
    for terms in range(1, 40):
        digits = rng.integers(0, 5, size=terms)
        ops = rng.choice(list("+-*"), size=terms - 1)
        expr = str(digits[0]) + "".join(f"{o}{d}" for o, d in zip(ops, digits[1:]))
        value = _left_to_right(expr)
        assert lang.member(f"{expr}={value}") and lang.automaton().accepts(f"{expr}={value}")
        wrong = f"{expr}={(value + 1 + terms % 4) % 5}"
        assert not lang.member(wrong) and not lang.automaton().accepts(wrong)
    assert lang.member("2+3*4=0") and not lang.member("2+3*4=4")  # no precedence: (2+3)*4
    assert not lang.member("=0") and not lang.member("1+=1") and not lang.member("1=1=1")


def test_cycle_navigation_by_walking_the_cycle() -> None:
    lang = get_language("cycle-navigation")
    rng = np.random.default_rng(11)
    for n in range(0, 60):
        moves = "".join(rng.choice(list("<>="), size=n))
        position = 0
        for m in moves:
            position = (position + {"<": -1, ">": 1, "=": 0}[m]) % 5
        for d in "01234":
            assert lang.member(moves + d) == (int(d) == position)
            assert lang.automaton().accepts(moves + d) == (int(d) == position)
    assert not lang.member("><") and not lang.member("0>0") and not lang.member("00")


def test_bounded_dyck_is_dyck_within_the_depth() -> None:
    dyck = get_language("dyck2")
    for name, depth in (("dyck2-depth2", 2), ("dyck2-depth3", 3)):
        lang = get_language(name)
        for w in all_words("()[]", 7) + all_words("()[]", 8)[::7]:
            heights = np.cumsum([1 if c in "([" else -1 for c in w])
            assert lang.member(w) == (dyck.member(w) and heights.max() <= depth), w
    assert get_language("dyck2-depth3").member("([[]])()") and not get_language(
        "dyck2-depth2"
    ).member("([[]])()")


def test_a5_word_problem_against_sympy() -> None:
    from sympy.combinatorics import Permutation, PermutationGroup

    from hardsoft.atlas.starfree import transition_monoid

    lang = get_language("a5-identity")
    gens = {"a": Permutation([[0, 1, 2, 3, 4]]), "b": Permutation([[0, 1, 2]], size=5)}
    group = PermutationGroup(list(gens.values()))
    assert group.order() == 60 and not group.is_solvable and group.is_alternating
    dfa = lang.automaton()
    assert dfa.n_states == 60 and len(transition_monoid(dfa)) == 60  # the monoid is the group
    rng = np.random.default_rng(12)
    for n in (5, 10, 30, 200):
        for w in lang.sample_uniform(n, 40, rng) + lang.sample_positive(n, 5, rng):
            product = Permutation(list(range(5)))
            for ch in w:
                product = product * gens[ch]  # sympy: p*q applies p first
            assert lang.member(w) == product.is_Identity == dfa.accepts(w), w


# ----------------------------------------------------------------- names and the DFA file
def _nerode_classes(dfa) -> int:
    """The number of Myhill-Nerode classes of a complete DFA's language, by Moore's partition
    refinement over the reachable states (written here, apart from pyformlang)."""
    reach, todo = {0}, [0]
    while todo:
        for nxt in dfa.delta[todo.pop()]:
            if nxt not in reach:
                reach.add(nxt)
                todo.append(nxt)
    block = {q: int(q in dfa.accepting) for q in reach}
    while True:
        sig = {q: (block[q], *(block[t] for t in dfa.delta[q])) for q in reach}
        ids: dict[tuple[int, ...], int] = {}
        new = {q: ids.setdefault(sig[q], len(ids)) for q in reach}
        if len(ids) == len(set(block.values())):
            return len(ids)
        block = new


@pytest.mark.parametrize("name", REGULAR)
def test_every_declared_dfa_is_minimal(name: str) -> None:
    """``language dfa`` says "minimal DFA, N states": N is the number of Nerode classes
    (cycle-navigation had two rejecting sinks, 8 states for 7 classes)."""
    dfa = get_language(name).automaton()
    assert dfa.n_states == _nerode_classes(dfa), name


def test_a_dfa_with_an_explicit_dead_state_and_missing_transitions_is_minimised() -> None:
    """An explicit rejecting state without transitions, beside transitions left out (both go
    to a rejecting sink): one sink, not two."""
    data = {
        "alphabet": "ab",
        "start": "s",
        "accept": ["t"],
        "transitions": {"s": {"a": "t", "b": "dead"}, "t": {}, "dead": {}},
    }
    dfa = dfa_from_json(data)
    assert dfa.n_states == _nerode_classes(dfa) == 3  # start, accept, sink
    accepted = [dfa.accepts(w) for w in ("", "a", "b", "aa", "ab")]
    assert accepted == [False, True, False, False, False]


def test_registry_names_and_aliases() -> None:
    assert get_language("tomita1").name == "ones-star"
    assert get_language("dyck-2-3").name == "dyck2-depth3"
    assert get_language("dyck3-depth2").alphabet == tuple("()[]{}")
    assert get_language("dyck1-depth2").member("(())()")
    with pytest.raises(HardsoftError, match="unknown language"):
        get_language("dyck2-depth0")


def test_language_dfa_writes_a_dfa_file_that_add_row_reads(tmp_path) -> None:
    path = tmp_path / "d.dfa.json"
    r = run_cli("language", "dfa", "dyck2-depth2", "-o", str(path), "--json")
    assert r.rc == 0, r.err
    out = json.loads(r.out)
    assert out["states"] == get_language("dyck2-depth2").automaton().n_states == 8
    dfa = dfa_from_file(path)  # symbols ()[] are regex syntax, fine in a DFA file
    ours = get_language("dyck2-depth2").automaton()
    assert dfa.n_states == ours.n_states  # minimal both, and the same language:
    assert all(dfa.accepts(w) == ours.accepts(w) for w in all_words("()[]", 7))
    printed = run_cli("language", "dfa", "tomita5")  # no -o: the DFA file on stdout
    assert printed.rc == 0 and json.loads(printed.out)["alphabet"] == "01"
    (tmp_path / "t5.json").write_text(printed.out)
    r = run_cli("atlas", "add-row", "--dfa", str(tmp_path / "t5.json"), "--name", "my-t5",
                "--out", str(tmp_path / "atlas"), "--json")  # fmt: skip
    assert r.rc == 0, r.err
    assert json.loads(r.out)["star_free"] is False  # Tomita 5 holds the group Z2 x Z2


def test_language_dfa_refuses_what_declares_none() -> None:
    r = run_cli("language", "dfa", "majority")
    assert r.rc == 2 and r.err.startswith("error: majority declares no DFA")
    r = run_cli("language", "dfa", "parity-process")
    assert r.rc == 2 and "is a process" in r.err


def test_regex_syntax_symbols_stay_refused_in_regular_expressions() -> None:
    with pytest.raises(HardsoftError, match="regex syntax"):
        dfa_from_regex("(ab)*", "()")

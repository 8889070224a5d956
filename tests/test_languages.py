"""Language oracles against brute-force definitions, samplers against the oracles, the registry
and user errors. The reference implementations here are deliberately different code paths
(grammar enumeration, reduction, regular expressions, direct quantifier search)."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import numpy as np
import pytest

from hardsoft.errors import HardsoftError
from hardsoft.languages import (
    Dyck,
    InductionTask,
    all_words,
    flipflop_state,
    get_language,
    khop_targets,
    language_names,
)

LANGS = [n for n in language_names() if get_language(n).kind == "language"]


# ----------------------------------------------------------------------- brute-force oracles
def dyck_grammar(pairs: list[str], max_len: int) -> set[str]:
    """All DYCK words up to max_len from the grammar S -> eps | o S c S."""
    by_len: dict[int, set[str]] = {0: {""}}
    for n in range(2, max_len + 1, 2):
        words = set()
        for inner in range(0, n - 1, 2):
            rest = n - 2 - inner
            for o, c in pairs:
                for u in by_len[inner]:
                    for v in by_len[rest]:
                        words.add(o + u + c + v)
        by_len[n] = words
    return set().union(*by_len.values())


def dyck_reduce(word: str, pairs: list[str]) -> bool:
    """Balanced iff repeatedly deleting adjacent matched pairs empties the word."""
    prev = None
    while prev != word:
        prev = word
        for pr in pairs:
            word = word.replace(pr, "")
    return word == ""


def flipflop_ref(word: str) -> bool:
    if not re.fullmatch(r"w[01]([wri][01])*r[01]", word):
        return False
    instr, data = word[0::2], word[1::2]
    for j, ins in enumerate(instr):
        if ins == "r":
            last_w = instr.rfind("w", 0, j)
            if data[j] != data[last_w]:
                return False
    return True


REFERENCE = {
    "parity-even": lambda w: sum(int(c) for c in w) % 2 == 0,
    "parity-odd": lambda w: sum(int(c) for c in w) % 2 == 1,
    "ones-star": lambda w: set(w) <= {"1"},
    "anbn": lambda w: w in {"a" * k + "b" * k for k in range(len(w) + 1)},
    "majority": lambda w: sum(c == "1" for c in w) > sum(c == "0" for c in w),
    "first": lambda w: len(w) > 0 and w[0] == "1",
    "flipflop": flipflop_ref,
}


@pytest.mark.parametrize("name", list(REFERENCE))
def test_oracle_matches_definition_exhaustively(name: str) -> None:
    lang = get_language(name)
    max_n = 6 if len(lang.alphabet) > 2 else 10
    for n in range(max_n + 1):
        words = all_words(lang.alphabet, n)
        expected = np.array([REFERENCE[name](w) for w in words])
        assert (lang.members(words) == expected).all(), (name, n)


@pytest.mark.parametrize("k,max_n", [(1, 12), (2, 8), (3, 6)])
def test_dyck_against_grammar_exhaustively(k: int, max_n: int) -> None:
    lang = get_language(f"dyck{k}")
    pairs = [lang.alphabet[2 * t : 2 * t + 2] for t in range(k)]
    grammar = dyck_grammar(pairs, max_n)
    for n in range(max_n + 1):
        for w in all_words(lang.alphabet, n):
            assert lang.member(w) == (w in grammar), w


def test_dyck_bracket_order_and_any_k() -> None:
    assert get_language("dyck1").alphabet == ("(", ")")
    assert get_language("dyck2").alphabet == ("(", ")", "[", "]")
    assert get_language("dyck3").alphabet == ("(", ")", "[", "]", "{", "}")
    d5 = get_language("dyck5")
    assert d5.alphabet[6:] == ("<", ">", "a", "A")
    assert d5.member("<a{}A>") and not d5.member("<a{}>A")


def test_dyck_long_random_against_reduction() -> None:
    rng = np.random.default_rng(1)
    lang = get_language("dyck3")
    pairs = ["()", "[]", "{}"]
    words, _ = lang.sample_balanced(40, 200, rng)
    words += lang.sample_uniform(10, 200, rng)
    for w in words:
        assert lang.member(w) == dyck_reduce(w, pairs)


@pytest.mark.parametrize("name", LANGS + ["dyck4"])
def test_prefix_reference_is_prefix_membership(name: str) -> None:
    lang = get_language(name)
    rng = np.random.default_rng(2)
    words = lang.sample_uniform(12, 30, rng)
    for n in (8, 12):
        if lang.has_members(n) and lang.has_nonmembers(n):
            words += lang.sample_balanced(n, 30, rng)[0]
    for w in words:
        ref = lang.prefix_reference(w)
        assert ref.shape == (len(w),)
        expected = [int(lang.member(w[: i + 1])) for i in range(len(w))]
        assert ref.tolist() == expected, w


def both_kinds(lang, n: int) -> int:
    """``n``, or ``n + 1`` for a language whose members all have odd length (FLaRe's modular
    arithmetic)."""
    return n if lang.has_members(n) and lang.has_nonmembers(n) else n + 1


@pytest.mark.parametrize("name", LANGS)
def test_balanced_sampler_labels_and_balance(name: str) -> None:
    lang = get_language(name)
    rng = np.random.default_rng(3)
    n = both_kinds(lang, 10)
    words, labels = lang.sample_balanced(n, 101, rng)
    assert len(words) == 101 and all(len(w) == n for w in words)
    truth = np.array([REFERENCE[name](w) if name in REFERENCE else lang.member(w) for w in words])
    assert (labels == truth).all()
    assert labels.sum() == 51


@pytest.mark.parametrize("name", LANGS)
def test_hard_negatives_are_one_substitution_from_a_member(name: str) -> None:
    lang = get_language(name)
    rng = np.random.default_rng(4)
    negs = lang.sample_negative(both_kinds(lang, 8), 40, rng, hard=True)
    for w in negs:
        assert not lang.member(w)
        neighbours = (
            w[:i] + s + w[i + 1 :] for i in range(len(w)) for s in lang.alphabet if s != w[i]
        )
        assert any(lang.member(v) for v in neighbours), (name, w)


@pytest.mark.parametrize("name", LANGS)
def test_uniform_sampler_is_uniform_over_strings(name: str) -> None:
    lang = get_language(name)
    words = lang.sample_uniform(3, 6000, np.random.default_rng(5))
    counts = Counter(words)
    k = len(lang.alphabet) ** 3
    assert set(counts) <= set(all_words(lang.alphabet, 3))
    assert chi_square(counts, {w: 6000 / k for w in all_words(lang.alphabet, 3)})


def chi_square(counts: Counter, expected: dict[str, float]) -> bool:
    """Pearson chi-square goodness of fit at level 0.001 (Wilson-Hilferty quantile)."""
    stat = sum((counts.get(w, 0) - e) ** 2 / e for w, e in expected.items())
    df = len(expected) - 1
    z = 3.09
    crit = df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3
    return stat < crit


@pytest.mark.parametrize("name,n", [("dyck1", 8), ("dyck2", 6), ("flipflop", 8), ("parity-odd", 6)])
def test_positive_sampler_is_uniform_over_members(name: str, n: int) -> None:
    lang = get_language(name)
    members = [w for w in all_words(lang.alphabet, n) if REFERENCE.get(name, lang.member)(w)]
    draws = 50 * len(members)
    counts = Counter(lang.sample_positive(n, draws, np.random.default_rng(6)))
    assert set(counts) <= set(members)
    assert chi_square(counts, {w: draws / len(members) for w in members})


def test_no_members_at_length_is_a_clear_error_or_one_class() -> None:
    d = get_language("dyck2")
    with pytest.raises(HardsoftError, match="no members of length 7"):
        d.sample_balanced(7, 10, 0)
    words, labels = d.sample_balanced(7, 10, 0, allow_one_class=True)
    assert len(words) == 10 and not labels.any()
    with pytest.raises(HardsoftError, match="no non-members of length 0"):
        get_language("ones-star").sample_balanced(0, 4, 0)
    with pytest.raises(HardsoftError):
        get_language("flipflop").sample_positive(2, 1, 0)


@pytest.mark.parametrize("name", language_names())
def test_unknown_symbol_names_the_symbol(name: str) -> None:
    lang = get_language(name)
    with pytest.raises(HardsoftError, match="'%'"):
        lang.prefix_reference(lang.alphabet[0] + "%")
    if lang.kind == "language":
        with pytest.raises(HardsoftError, match="'%'"):
            lang.member("%")
        with pytest.raises(HardsoftError, match="'%'"):
            lang.members([lang.alphabet[0], "%"])


def test_registry_and_bad_names() -> None:
    assert {"parity-even", "parity-odd", "dyck1", "dyck2", "dyck3", "ones-star", "anbn"} <= set(
        language_names()
    )
    assert {"majority", "first", "flipflop", "induction-head", "khop2", "khop3"} <= set(
        language_names()
    )
    for name in language_names():
        assert get_language(name).name == name
    assert get_language("khop1").name == "induction-head"
    assert isinstance(get_language("dyck7"), Dyck)
    for bad in ("nope", "dyck0", "khop0", ""):
        with pytest.raises(HardsoftError, match="unknown language"):
            get_language(bad)
    with pytest.raises(HardsoftError):
        get_language("parity-even").sample_uniform(-1, 3)


def test_conventions() -> None:
    assert get_language("parity-even").member("") and not get_language("parity-odd").member("")
    assert get_language("anbn").member("") and get_language("dyck1").member("")
    assert not get_language("majority").member("01") and get_language("majority").member("101")
    assert get_language("flipflop").member("w0i1r0w1r1")
    assert not get_language("flipflop").member("w1r1i0")


# ----------------------------------------------------------------------- induction heads
def khop_reference(word: str, k: int) -> list[str | None]:
    """Sanford et al.'s definition with explicit sets, 1-based positions."""
    x = " " + word

    def find(i: int) -> int:
        if i == 0:
            return 0
        return max([0] + [j for j in range(2, i + 1) if x[j - 1] == x[i]])

    out = []
    for i in range(1, len(word) + 1):
        pos = i
        for _ in range(k):
            pos = find(pos)
        out.append(x[pos] if pos else None)
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_khop_against_definition(k: int) -> None:
    task = get_language(f"khop{k}") if k > 1 else get_language("induction-head")
    assert task.kind == "task"
    rng = np.random.default_rng(7)
    words = task.sample_uniform(9, 150, rng) + all_words(("a", "b"), 6)
    for w in words:
        assert task.reference_symbols(w) == khop_reference(w, k), w


def test_basic_induction_head_reading() -> None:
    # rightmost earlier j with w_j = w_n, output w_{j+1}
    w = "abcbad"[:5]  # a b c b a
    assert get_language("induction-head").reference_symbols(w)[-1] == "b"
    assert khop_targets(np.array([0, 1, 0, 1]), 1).tolist() == [-1, -1, 1, 0]
    task = InductionTask(2, alphabet=("x", "y", "z"))
    # z at 6 -> after the z at 3 is x at 4 -> after the x at 1 is y at 2
    assert task.prefix_reference("xyzxyz").tolist() == [-1, -1, -1, -1, -1, 1]


def test_task_has_no_membership() -> None:
    task = get_language("khop2")
    with pytest.raises(HardsoftError, match="task"):
        task.member("ab")
    with pytest.raises(HardsoftError, match="task"):
        task.sample_balanced(4, 4, 0)


def test_flipflop_state() -> None:
    w = "w1i0r1w0r0"
    assert flipflop_state(w).tolist() == [-1, 1, 1, 1, 1, 1, 1, 0, 0, 0]
    for word in itertools.islice(get_language("flipflop").sample_positive(12, 20, 8), 20):
        state = flipflop_state(word)
        for t in range(1, len(word), 2):
            if word[t - 1] == "r":
                assert int(word[t]) == state[t - 2]


def test_flipflop_near_misses_keep_the_shape() -> None:
    lang = get_language("flipflop")
    negs = lang.sample_negative(12, 100, np.random.default_rng(12))
    for w in negs:
        assert re.fullmatch(r"([wri][01])+", w) and not flipflop_ref(w)
    # some of them fail only because a read returns the wrong bit
    wrong_read = [w for w in negs if re.fullmatch(r"w[01]([wri][01])*r[01]", w)]
    assert len(wrong_read) > 30

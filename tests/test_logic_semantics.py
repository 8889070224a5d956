"""The vectorised evaluator against a deliberately naive one written straight from Yang et al.
(arXiv:2412.09925v1) §4 (one position at a time, quantifiers as loops), on hand-picked and random
formulas and words."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardsoft.errors import HardsoftError
from hardsoft.logic import (
    Add,
    And,
    Compare,
    Const,
    CountFuture,
    CountPast,
    First,
    Formula,
    Future,
    Implies,
    IntConst,
    Last,
    Length,
    Mod,
    Next,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Scale,
    Since,
    Somewhere,
    Sub,
    Sym,
    Until,
    accepts,
    accepts_batch,
    evaluate,
    evaluate_all,
    evaluate_term,
    parse,
    random_formula,
    subnodes,
    values,
)

# ----------------------------------------------------------------- the naive reference


def naive(node: Node, w: str, i: int) -> bool | int:
    """Value of ``node`` at 1-based position ``i`` of ``w``, straight from the definitions."""
    n = len(w)
    assert 1 <= i <= n
    if isinstance(node, Sym):
        return w[i - 1] == node.symbol
    if isinstance(node, Const):
        return node.value
    if isinstance(node, First):
        return i == 1
    if isinstance(node, Last):
        return i == n
    if isinstance(node, Not):
        return not naive(node.arg, w, i)
    if isinstance(node, And):
        return bool(naive(node.left, w, i)) and bool(naive(node.right, w, i))
    if isinstance(node, Or):
        return bool(naive(node.left, w, i)) or bool(naive(node.right, w, i))
    if isinstance(node, Implies):
        return (not naive(node.left, w, i)) or bool(naive(node.right, w, i))
    if isinstance(node, Prev):
        return i > 1 and bool(naive(node.arg, w, i - 1))
    if isinstance(node, Next):
        return i < n and bool(naive(node.arg, w, i + 1))
    if isinstance(node, Since):
        return any(
            naive(node.right, w, j) and all(naive(node.left, w, k) for k in range(j + 1, i))
            for j in range(1, i)
        )
    if isinstance(node, Until):
        return any(
            naive(node.right, w, j) and all(naive(node.left, w, k) for k in range(i + 1, j))
            for j in range(i + 1, n + 1)
        )
    if isinstance(node, Past):
        return any(naive(node.arg, w, j) for j in range(1, i))
    if isinstance(node, Future):
        return any(naive(node.arg, w, j) for j in range(i + 1, n + 1))
    if isinstance(node, Somewhere):
        return any(naive(node.arg, w, j) for j in range(1, n + 1))
    if isinstance(node, Compare):
        a, b = naive(node.left, w, i), naive(node.right, w, i)
        return {
            "<": a < b,
            "<=": a <= b,
            "=": a == b,
            "!=": a != b,
            ">=": a >= b,
            ">": a > b,
        }[node.op]
    if isinstance(node, Mod):
        t = naive(node.term, w, i)
        # remainder in 0..m-1 without relying on Python's % for negatives
        r = t - node.modulus * (t // node.modulus)
        while r < 0:
            r += node.modulus
        return r == node.residue
    if isinstance(node, CountPast):
        return sum(1 for j in range(1, i + 1) if naive(node.arg, w, j))
    if isinstance(node, CountFuture):
        return sum(1 for j in range(i, n + 1) if naive(node.arg, w, j))
    if isinstance(node, IntConst):
        return node.value
    if isinstance(node, Position):
        return i
    if isinstance(node, Length):
        return n
    if isinstance(node, Add):
        return naive(node.left, w, i) + naive(node.right, w, i)
    if isinstance(node, Sub):
        return naive(node.left, w, i) - naive(node.right, w, i)
    if isinstance(node, Scale):
        return node.factor * naive(node.arg, w, i)
    raise TypeError(node)


def naive_values(node: Node, w: str) -> list:
    return [naive(node, w, i) for i in range(1, len(w) + 1)]


# ----------------------------------------------------------------- hand-checked examples


def test_since_until_are_strict() -> None:
    f = parse("'a' S 'b'")
    # b at 1; a at 2,3: S holds at 2,3,4 (witness j=1), not at 1 (no j < 1)
    assert values(f, "baab").tolist() == [False, True, True, True]
    # the c at 2 breaks the stretch from the b at 1
    assert values(f, "bcab").tolist() == [False, True, False, False]
    g = parse("'a' U 'b'")
    assert values(g, "aab").tolist() == [True, True, False]
    assert values(g, "b").tolist() == [False]


def test_prev_next_first_last() -> None:
    w = "abcab"
    assert values(parse("Y 'a'"), w).tolist() == [False, True, False, False, True]
    assert values(parse("X 'a'"), w).tolist() == [False, False, True, False, False]
    assert values(parse("first"), w).tolist() == [True, False, False, False, False]
    assert values(parse("last"), w).tolist() == [False, False, False, False, True]


def test_counts_position_length_and_mod_of_negatives() -> None:
    w = "abaab"
    assert evaluate_term(parse("#<['a'] < 0").left, [w])[0].tolist() == [1, 1, 2, 3, 3]
    assert evaluate_term(CountFuture(Sym("a")), [w])[0].tolist() == [3, 2, 2, 1, 0]
    assert evaluate_term(Position() - 4, [w])[0].tolist() == [-3, -2, -1, 0, 1]
    assert evaluate_term(Length(), [w])[0].tolist() == [5] * 5
    # (i - 4) mod 3 = 2 for i - 4 in {-1, 2}: positions 3 (i-4 = -1) only among 1..5
    assert values(parse("MOD(3, 2)(i - 4)"), w).tolist() == [False, False, True, False, False]


def test_parity_formulas_agree_with_counting() -> None:
    a, b = parse("MOD(2, 1)(#<['1'])"), parse("!E (#<[Y '1'] = #>['1'])")
    for n in range(1, 9):
        for bits in itertools.product("01", repeat=n):
            w = "".join(bits)
            odd = w.count("1") % 2 == 1
            assert accepts(a, w) == odd
            assert accepts(b, w) == odd


def test_empty_word_is_rejected_and_has_no_columns() -> None:
    for text in ("true", "!'a'", "#<['a'] = 0", "first"):
        f = parse(text)
        assert accepts(f, "") is False
        assert evaluate(f, ["", ""]).shape == (2, 0)
        assert accepts_batch(f, ["", ""]).tolist() == [False, False]


def test_token_id_input_matches_strings() -> None:
    f = parse("'b' S 'a' | #<['c'] > 1")
    ids = np.array([[0, 1, 2, 2], [2, 0, 1, 1]])
    words = ["abcc", "cabb"]
    assert np.array_equal(evaluate(f, ids, alphabet="abc"), evaluate(f, words))


def test_input_errors_are_hardsoft_errors() -> None:
    f = parse("'a'")
    with pytest.raises(HardsoftError, match="equal length"):
        evaluate(f, ["ab", "a"])
    with pytest.raises(HardsoftError, match="not in the alphabet"):
        evaluate(f, ["az"], alphabet="ab")
    with pytest.raises(HardsoftError, match="alphabet"):
        evaluate(f, np.array([[0, 1]]))
    with pytest.raises(HardsoftError, match="shape"):
        evaluate(f, np.array([0, 1]), alphabet="ab")
    with pytest.raises(HardsoftError, match="token ids"):
        evaluate(f, np.array([[0, 2]]), alphabet="ab")
    with pytest.raises(HardsoftError, match="single string"):
        evaluate(f, "ab")  # type: ignore[arg-type]


def test_evaluate_all_covers_every_subnode() -> None:
    f = parse("!E (#<[Y '1'] = #>['1'])")
    memo = evaluate_all(f, ["0110"])
    assert set(memo) == set(subnodes(f))
    for node, value in memo.items():
        assert value.tolist()[0] == naive_values(node, "0110")


# ----------------------------------------------------------------- random cross-checks


def _check(formula: Formula, words: list[str]) -> None:
    got = evaluate(formula, words)
    for b, w in enumerate(words):
        assert got[b].tolist() == naive_values(formula, w), (str(formula), w)


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 7),
    depth=st.integers(0, 4),
)
def test_vectorised_matches_naive_on_random_formulas(seed: int, n: int, depth: int) -> None:
    rng = random.Random(seed)
    formula = random_formula(rng, "ab", depth)
    words = ["".join(rng.choice("abc") for _ in range(n)) for _ in range(4)]
    _check(formula, words)
    for sub in subnodes(formula):
        if not isinstance(sub, Formula):
            got = evaluate_term(sub, words)
            for b, w in enumerate(words):
                assert got[b].tolist() == naive_values(sub, w)


def test_every_formula_of_the_binary_alphabet_up_to_length_5_on_many_random_formulas() -> None:
    rng = random.Random(1234)
    words_by_n = {n: ["".join(t) for t in itertools.product("01", repeat=n)] for n in (1, 3, 5)}
    for _ in range(60):
        f = random_formula(rng, "01", 3)
        for words in words_by_n.values():
            _check(f, words)

"""The streaming evaluator of past-only formulas equals the whole-word evaluator at every
position, whatever the chunking."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hardsoft.errors import HardsoftError
from hardsoft.logic import evaluate, parse, random_formula
from hardsoft.logic.random import PAST_OPERATORS
from hardsoft.logic.streaming import StreamEvaluator

ALPHABET = "abc"
# past operators plus `last` and `n` (a stream knows n before the first chunk)
OPS = PAST_OPERATORS | {"last", "n"}


def _streamed(formula, ids: np.ndarray, chunk: int) -> np.ndarray:
    ev = StreamEvaluator(formula, ALPHABET, len(ids))
    parts = [ev.feed(ids[s : s + chunk]) for s in range(0, len(ids), chunk)]
    assert ev.pos == len(ids)
    return np.concatenate(parts) if parts else np.zeros(0, bool)


def test_random_past_formulas_match_the_evaluator() -> None:
    r = random.Random(7)
    rng = np.random.default_rng(7)
    for trial in range(300):
        formula = random_formula(r, ALPHABET, depth=r.randint(1, 5), operators=OPS)
        n = int(rng.integers(1, 40))
        # random words, and words of few symbols (long runs exercise S and P)
        k = 1 + trial % 3
        ids = rng.integers(0, k, size=n)
        expected = evaluate(formula, ids[None], list(ALPHABET))[0]
        for chunk in (1, 3, 7, n):
            got = _streamed(formula, ids, chunk)
            assert got.dtype == bool
            assert np.array_equal(got, expected), (str(formula), ids.tolist(), chunk)


@pytest.mark.parametrize(
    "text",
    [
        "'a' S 'b'",
        "!('a' S !'b') & Y P 'c'",
        "MOD(3,1)(#<['a'] - 2 * #<[Y 'b']) | last",
        "#<['a'] > i - #<['b'] & first S 'c'",
        "Y Y Y 'a' | (i = n)",
    ],
)
def test_hand_written_formulas_on_longer_words(text: str) -> None:
    formula = parse(text, alphabet=ALPHABET)
    rng = np.random.default_rng(1)
    for k in (1, 2, 3):
        ids = rng.integers(0, k, size=500)
        expected = evaluate(formula, ids[None], list(ALPHABET))[0]
        for chunk in (1, 3, 7, 64, 500):
            assert np.array_equal(_streamed(formula, ids, chunk), expected)


@pytest.mark.parametrize(
    "text,op",
    [("X 'a'", "X"), ("'a' U 'b'", "U"), ("P F 'a'", "F"), ("E 'a'", "E"), ("#>['a'] > 1", "#>")],
)
def test_future_operators_are_refused(text: str, op: str) -> None:
    with pytest.raises(HardsoftError, match=f"operator {op} reads positions after"):
        StreamEvaluator(parse(text, alphabet=ALPHABET), ALPHABET, 10)


def test_feeding_past_n_is_refused() -> None:
    ev = StreamEvaluator(parse("'a'", alphabet=ALPHABET), ALPHABET, 3)
    ev.feed(np.array([0, 1]))
    with pytest.raises(HardsoftError, match="3 positions; 4 were fed"):
        ev.feed(np.array([0, 1]))

"""The full non-strict matrix (``-m slow``): every target × every shipped formula and random
formulas (depth <= 4, every operator) compiled with ``masks="nonstrict"``, on all strings up
to length 10 over {0,1} (7 over 3 letters, 5 over 4 letters) and on random strings of length
1000 and 10000 in float64, against the logic evaluator. Zero mismatches, exact 0/1 outputs,
and no strict mask in any model."""

from __future__ import annotations

import pytest

from hardsoft.check import check_formula
from hardsoft.compile import TARGETS, compile_formula
from hardsoft.logic import FORMULAS, random_formula
from hardsoft.logic.random import PAST_OPERATORS

pytestmark = pytest.mark.slow

EXHAUSTIVE = {2: 10, 3: 7, 4: 5}


def nonstrict(formula, alphabet: str, target: str, causal: bool = False):
    model = compile_formula(formula, alphabet, target, causal, masks="nonstrict")
    masks = {str(h.mask) for layer in model.spec.layers for h in layer.heads}
    assert masks <= ({"future"} if causal else {"none", "future", "past"}), masks
    return model


def assert_exact(report: dict) -> None:
    assert report["mismatches"] == 0, report["first_mismatch"]
    assert report["max_abs_error"] < 1e-9


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(FORMULAS))
def test_shipped_formula_full(name: str, target: str) -> None:
    entry = FORMULAS[name]
    model = nonstrict(entry.formula, entry.alphabet, target)
    exhaustive = EXHAUSTIVE[len(entry.alphabet)]
    options = dict(exhaustive_max_n=exhaustive, random_n=[1000], samples=4)
    assert_exact(check_formula(model, entry.formula, **options))
    assert_exact(
        check_formula(model, entry.formula, exhaustive_max_n=0, random_n=[10000], samples=1)
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(40))
def test_random_formula_binary(seed: int, target: str) -> None:
    formula = random_formula(5000 + seed, "01", depth=4)
    model = nonstrict(formula, "01", target)
    assert_exact(check_formula(model, formula, exhaustive_max_n=10, random_n=[1000], samples=2))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(20))
def test_random_formula_four_letters(seed: int, target: str) -> None:
    formula = random_formula(6000 + seed, "abcd", depth=4)
    model = nonstrict(formula, "abcd", target)
    assert_exact(check_formula(model, formula, exhaustive_max_n=5, random_n=[100], samples=4))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(8))
def test_random_formula_long(seed: int, target: str) -> None:
    formula = random_formula(7000 + seed, "01", depth=4)
    model = nonstrict(formula, "01", target)
    assert_exact(check_formula(model, formula, exhaustive_max_n=0, random_n=[10000], samples=1))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(20))
def test_random_past_formula_causal(seed: int, target: str) -> None:
    formula = random_formula(8000 + seed, "01", depth=4, operators=PAST_OPERATORS)
    model = nonstrict(formula, "01", target, causal=True)
    assert_exact(check_formula(model, formula, exhaustive_max_n=10, random_n=[1000], samples=2))

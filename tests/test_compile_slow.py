"""The full compiler matrix (``-m slow``): every target × every shipped formula and a
property suite of random formulas (depth <= 4, every operator), on all strings up to length 12
over {0,1} and up to length 6 over a 4-letter alphabet, and on random strings of lengths 100,
1000 and 10000 in float64, against the logic evaluator. Zero mismatches, exact 0/1 outputs."""

from __future__ import annotations

import pytest

from hardsoft.check import check_formula
from hardsoft.compile import TARGETS, compile_formula
from hardsoft.logic import FORMULAS, random_formula
from hardsoft.logic.random import PAST_OPERATORS

pytestmark = pytest.mark.slow


def exhaustive_n(alphabet: str) -> int:
    return {1: 16, 2: 12, 3: 8, 4: 6}.get(len(alphabet), 5)


def assert_exact(report: dict) -> None:
    assert report["mismatches"] == 0, report["first_mismatch"]
    assert report["max_abs_error"] < 1e-9


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(FORMULAS))
def test_shipped_formula_full(name: str, target: str) -> None:
    entry = FORMULAS[name]
    model = compile_formula(entry.text, entry.alphabet, target)
    report = check_formula(
        model,
        entry.formula,
        exhaustive_max_n=exhaustive_n(entry.alphabet),
        random_n=[100, 1000],
        samples=8,
    )
    assert_exact(report)
    assert_exact(
        check_formula(model, entry.formula, exhaustive_max_n=0, random_n=[10000], samples=1)
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(40))
def test_random_formula_binary(seed: int, target: str) -> None:
    formula = random_formula(seed, "01", depth=4)
    model = compile_formula(formula, "01", target)
    assert_exact(
        check_formula(model, formula, exhaustive_max_n=12, random_n=[100, 1000], samples=4)
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(20))
def test_random_formula_four_letters(seed: int, target: str) -> None:
    formula = random_formula(500 + seed, "abcd", depth=4)
    model = compile_formula(formula, "abcd", target)
    assert_exact(check_formula(model, formula, exhaustive_max_n=6, random_n=[100], samples=4))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(12))
def test_random_formula_long(seed: int, target: str) -> None:
    formula = random_formula(900 + seed, "01", depth=4)
    model = compile_formula(formula, "01", target)
    assert_exact(check_formula(model, formula, exhaustive_max_n=0, random_n=[10000], samples=1))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(20))
def test_random_past_formula_causal(seed: int, target: str) -> None:
    formula = random_formula(700 + seed, "01", depth=4, operators=PAST_OPERATORS)
    model = compile_formula(formula, "01", target, causal=True)
    assert {h.mask for layer in model.spec.layers for h in layer.heads} <= {
        "future",
        "strict-future",
    }
    assert_exact(
        check_formula(model, formula, exhaustive_max_n=12, random_n=[100, 1000], samples=4)
    )

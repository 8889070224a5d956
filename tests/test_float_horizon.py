"""The float-horizon experiment's pieces: the bisection, the words, the streamed prefix
references (against the logic evaluator), and the sharper sign-test limit held in float32."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardsoft.check import formula_reference
from hardsoft.compile import compile_formula
from hardsoft.experiments import float_horizon as fh
from hardsoft.logic import parse


def test_bisection_brackets_the_first_failure() -> None:
    for edge in (5, 1000, 4097, 123_457):
        seen: list[int] = []

        def exact(n: int, edge: int = edge, seen: list[int] = seen) -> bool:
            seen.append(n)
            return n < edge

        found = fh.first_failure(exact, 8, 1 << 20)
        assert found.first_failure is not None and found.first_failure >= edge
        assert found.largest_exact is None or found.largest_exact < edge
        width = found.first_failure - (found.largest_exact or 0)
        assert width <= max(1, int(found.first_failure * fh.REL))
        assert found.runs == len(seen)
    never = fh.first_failure(lambda n: True, 100, 1000)
    assert never.first_failure is None and never.largest_exact == 800


@pytest.mark.parametrize("kind", fh.WORDS)
def test_words_are_prefixes_of_one_word(kind: str) -> None:
    long = np.concatenate(list(fh.word_chunks(kind, 200_000, 3)))
    short = np.concatenate(list(fh.word_chunks(kind, 70_001, 3, chunk=999)))
    assert np.array_equal(long[:70_001], short)
    assert set(np.unique(long)) <= {0, 1}


@pytest.mark.parametrize("name", list(fh.PREFIX_RULES))
def test_prefix_rules_agree_with_the_logic_evaluator(name: str) -> None:
    formula, alphabet = fh.FORMULAS[name]
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)
    for kind in fh.WORDS:
        ids = np.concatenate(list(fh.word_chunks(kind, 3000, 1)))
        rule = fh.PREFIX_RULES[name](np.cumsum(ids), np.arange(1, 3001))
        assert np.array_equal(rule, ref(ids[None])[0]), (name, kind)


def test_stream_exact_can_fail_and_the_sign_limit_holds_in_float32() -> None:
    parity = compile_formula(*fh.FORMULAS["PARITY (MOD)"], target="soft-temperature")
    assert fh.stream_exact(parity, "PARITY (MOD)", "random", 5000, 0)  # float64: exact
    assert not fh.stream_exact(parity.to(torch.float32), "PARITY (MOD)", "random", 8192, 0)
    majority = compile_formula(*fh.FORMULAS["MAJORITY"], target="soft-temperature")
    limit = majority.meta["certificate"]["float_limits"]["float32"]
    assert limit == int(2**24 / 10)  # 1/((2·3 − 1)·Σ|c|·u): x = C1/i − C0/i − 1/(2i)
    majority = majority.to(torch.float32)
    for kind in fh.WORDS:
        assert fh.stream_exact(majority, "MAJORITY", kind, limit, 0), kind


def test_stream_check_row_checks_every_position_of_a_file() -> None:
    """The experiment's `check --stream` row: every position of the file compared, none wrong
    (compiled PARITY in float64 is exact far beyond n = 5000)."""
    row = fh.stream_check_row(5000, seed=3)
    assert row["n"] == 5000 and row["checked_positions"] == 5000
    assert row["mismatched_positions"] == 0

"""Restrictions as objects: parsing, fixing, free fraction, completions, application."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardsoft.errors import HardsoftError
from hardsoft.limits.restriction import Restriction
from hardsoft.model import random_model


def test_string_round_trip_and_free_fraction():
    rho = Restriction.from_string("0**1*", ("0", "1"))
    assert str(rho) == "0**1*"
    assert rho.free_positions().tolist() == [1, 2, 4]
    assert rho.fixed_positions().tolist() == [0, 3]
    assert rho.free_fraction == pytest.approx(3 / 5)


def test_fix_refines_and_rejects_conflicts():
    rho = Restriction.free(4, "ab")
    finer = rho.fix({1: "b"})
    assert str(finer) == "*b**"
    assert finer.is_finer_than(rho) and not rho.is_finer_than(finer)
    with pytest.raises(HardsoftError):
        finer.fix({1: "a"})


def test_other_alphabets_and_bad_symbols():
    rho = Restriction.from_string("(*)*[", tuple("()[]"))
    assert rho.num_free == 2
    with pytest.raises(HardsoftError):
        Restriction.from_string("0*2", ("0", "1"))
    with pytest.raises(HardsoftError):
        Restriction.free(0, "01")


def test_fill_and_agrees():
    rho = Restriction.from_string("1*0*", ("0", "1"))
    assert rho.fill(["0", "1"]) == "1001"
    assert rho.fill({1: "1", 3: "0"}) == "1100"
    assert rho.agrees("1000") and not rho.agrees("0000")
    with pytest.raises(HardsoftError):
        rho.fill({0: "1"})


def test_random_completion_agrees():
    rng = np.random.default_rng(1)
    rho = Restriction.from_string("1**0**1", ("0", "1"))
    for _ in range(20):
        assert rho.agrees(rho.random_completion(rng))


def test_apply_to_model_matches_running_the_model():
    m = random_model(
        weighting="rightmost", layers=1, heads=1, d_model=8, seed=3, dtype=torch.float64
    )
    rho = Restriction.from_string("1**0", ("0", "1"))
    rm = rho.apply(m)
    got = rm.accept([["0", "0"], ["1", "1"]])
    with torch.no_grad():
        want = m(m.encode(["1000", "1110"])).accept.numpy()
    assert got.tolist() == want.tolist()

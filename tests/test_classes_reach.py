"""Exact reachability of class combinations (hardsoft.classes.reach): the classes propagation
keeps are those the model's own forward pass shows. Ground truth is the model: every position
of every word carries one of its layer's classes (nothing was pruned that occurs), and, for
one-directional models, every kept class occurs at some position of a short word (nothing was
kept that never occurs)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.classes import reach
from hardsoft.classes.propagation import ClassTable, propagate
from hardsoft.errors import HardsoftError
from hardsoft.model import random_model


def _words(alphabet: str, n: int) -> list[str]:
    return ["".join(w) for k in range(1, n + 1) for w in itertools.product(alphabet, repeat=k)]


def _seen_classes(table: ClassTable, words: list[str]) -> list[set[int]]:
    """Per layer, the classes whose vector the model's residual stream carries somewhere; a
    residual matching no class fails the test."""
    seen: list[set[int]] = [set() for _ in table.layers]
    m = table.model
    for n in sorted({len(w) for w in words}):
        batch = [w for w in words if len(w) == n]
        with torch.no_grad():
            out = m(m.encode(batch), trace=True, chunk_size=None)
        assert out.trace is not None
        for ell, layer in enumerate(table.layers):
            resid = out.trace[f"resid.{ell}"].reshape(-1, layer.vectors.shape[1]).numpy()
            v = layer.vectors
            sq = (v * v).sum(axis=1)[None, :] - 2.0 * resid @ v.T
            nearest = sq.argmin(axis=1)
            gap = np.abs(resid - v[nearest]).max(axis=1)
            scale = 1e-9 * max(1.0, float(np.abs(v).max()))
            assert (gap <= scale).all(), f"layer {ell}: a position carries no class of the table"
            seen[ell] |= {int(k) for k in nearest}
    return seen


@pytest.mark.parametrize("mask", ["future", "strict-future", "past", "strict-past"])
@pytest.mark.parametrize("weighting", ["rightmost", "leftmost"])
@pytest.mark.parametrize("seed", [1, 5])
def test_one_directional_classes_are_exactly_those_that_occur(
    mask: str, weighting: str, seed: int
) -> None:
    model = random_model(
        weighting=weighting, mask=mask, layers=2, heads=2, d_model=16, alphabet="01",
        position_features=("1",), seed=seed,
    )  # fmt: skip
    assert reach.reading(model) is (mask in ("future", "strict-future"))
    table = propagate(model)
    seen = _seen_classes(table, _words("01", 8))
    assert seen == [set(range(len(layer))) for layer in table.layers]


@pytest.mark.parametrize("mask", ["strict-future", "past"])
def test_position_features_read_both_ways(mask: str) -> None:
    model = random_model(
        weighting="rightmost", mask=mask, layers=2, heads=2, d_model=16, alphabet="ab",
        position_features=("1", "(-1)^i", "[i=n]"), seed=3,
    )  # fmt: skip
    table = propagate(model)
    seen = _seen_classes(table, _words("ab", 12))  # 12 (not 10) shows the last two classes
    assert seen == [set(range(len(layer))) for layer in table.layers]


def test_three_layers() -> None:
    model = random_model(
        weighting="rightmost", mask="strict-future", layers=3, heads=2, d_model=16,
        alphabet="01", position_features=("1",), seed=5,
    )  # fmt: skip
    table = propagate(model)
    assert table.counts == [2, 6, 15, 35]  # 36 final classes when pruned by facts alone
    seen = _seen_classes(table, _words("01", 9))
    assert seen == [set(range(len(layer))) for layer in table.layers]


def test_two_way_models_have_no_machine() -> None:
    model = random_model(
        weighting="rightmost", mask="none", layers=1, heads=1, d_model=8, alphabet="01",
        position_features=("1",), seed=0,
    )  # fmt: skip
    assert reach.reading(model) is None
    table = propagate(model)  # pruned by facts: a superset, still covering every position
    seen = _seen_classes(table, _words("01", 6))
    assert all(s <= set(range(len(layer))) for s, layer in zip(seen, table.layers))


def test_the_estimate_counts_the_combinations_that_occur() -> None:
    model = random_model(
        weighting="rightmost", mask="strict-future", layers=3, heads=2, d_model=16,
        alphabet="01", position_features=("1",), seed=5,
    )  # fmt: skip
    with pytest.raises(HardsoftError, match=r"^block 3 may have up to \d+ classes \(combinations"):
        propagate(model, max_classes=20)  # 35 final classes (15 query classes x 2 heads)

"""The random unique-hard models of the decompile experiment and of ``benchmarks/decompile.py``
come from one helper, :func:`random_decompile_model`, with the recipe both report."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
import torch

from hardsoft.experiments.decompile_roundtrip import random_decompile_model, random_model_row
from hardsoft.model import random_model
from hardsoft.model.spec import Mask, Weighting

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("layers,heads", [(1, 2), (2, 2), (3, 1)])
def test_the_recipe(layers: int, heads: int) -> None:
    """d_model 8, the constant feature 1, every head unique-hard with the given mask; 2 heads
    per layer, 1 from 3 layers on; the same weights as the explicit call."""
    model = random_decompile_model("rightmost", "strict-past", layers, seed=31)
    spec = model.spec
    assert spec.d_model == 8 and tuple(spec.position_features) == ("1",)
    assert len(spec.layers) == layers and spec.alphabet == ("0", "1")
    assert [len(layer.heads) for layer in spec.layers] == [heads] * layers
    assert all(
        (h.weighting, h.mask) == (Weighting.RIGHTMOST, Mask.STRICT_PAST)
        for layer in spec.layers
        for h in layer.heads
    )
    explicit = random_model(
        layers=layers,
        heads=heads,
        d_model=8,
        weighting="rightmost",
        mask="strict-past",
        position_features=("1",),
        seed=31,
    )
    got, want = model.state_dict(), explicit.state_dict()
    assert got.keys() == want.keys()
    assert all(torch.equal(got[k], want[k]) for k in got)


def test_the_experiment_row_reports_the_heads() -> None:
    row = random_model_row("leftmost", "future", 3, quick=True, seed=0)
    assert (row["layers"], row["heads"], row["mismatches"]) == (3, 1, 0)


def test_the_benchmark_builds_its_random_models_with_the_helper(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the benchmark imports its _common
    monkeypatch.delitem(sys.modules, "decompile", raising=False)
    bench = importlib.import_module("decompile")
    try:
        assert bench.random_decompile_model is random_decompile_model
        assert all(len(entry) == 3 for entry in bench.RANDOM)  # (weighting, mask, layers)
        assert not hasattr(bench, "random_model")
    finally:
        sys.modules.pop("decompile", None)

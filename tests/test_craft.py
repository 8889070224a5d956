"""The craft stage: gadgets on exact Booleans and named-coordinate assembly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.craft import (
    AttentionHead,
    CraftLayer,
    Neuron,
    Residual,
    assemble,
    ramp,
    round_bool,
    standard_residual,
)


def ffn_value(neurons: list[Neuron], inputs: dict[str, float], dst: str) -> float:
    return sum(
        w * max(0.0, sum(c * inputs[k] for k, c in nr.inputs.items()) + nr.bias)
        for nr in neurons
        for t, w in nr.outputs.items()
        if t == dst
    )


def test_round_bool_restores_exact_booleans() -> None:
    nr = round_bool("x", "y")
    for x in np.linspace(0, 1 / 3, 50):
        assert ffn_value(nr, {"x": x}, "y") == 0.0
    for x in np.linspace(2 / 3, 1, 50):
        assert ffn_value(nr, {"x": x}, "y") == pytest.approx(1.0, abs=1e-12)


def test_ramp_is_an_exact_step_outside_its_window() -> None:
    nr = ramp({"x": 1.0}, 2.0, 2.5, "y")
    for x in np.linspace(-3, 2, 40):
        assert ffn_value(nr, {"x": x}, "y") == 0.0
    for x in np.linspace(2.5, 9, 40):
        assert ffn_value(nr, {"x": x}, "y") == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError):
        ramp({"x": 1.0}, 1.0, 1.0, "y")


def test_assemble_previous_symbol_model() -> None:
    """Y 'a' by a strict-future rightmost head with constant scores, rounded by an FFN."""
    res = standard_residual("ab", ["1"])
    res.add("att")
    res.add("out")
    layers = [
        CraftLayer(
            heads=[AttentionHead("rightmost", "strict-future", [], [], {"att": {"tok:a": 1.0}})]
        ),
        CraftLayer(neurons=round_bool("att", "out")),
    ]
    model = assemble(
        alphabet="ab", position_features=["1"], residual=res, layers=layers, outputs=["out"]
    )
    assert model.dtype == torch.float64 and model.spec.d_model == res.dim
    for n in range(1, 7):
        for word in map("".join, itertools.product("ab", repeat=n)):
            got = model.run_words([word])[0][:, 0]
            want = [float(i > 0 and word[i - 1] == "a") for i in range(n)]
            assert got.tolist() == want, word


def test_residual_names_are_unique() -> None:
    res = Residual()
    res.add("x")
    with pytest.raises(ValueError):
        res.add("x")
    assert "x" in res and res.dim == 1 and res["x"] == 0

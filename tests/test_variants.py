"""The incremental variant residuals (hardsoft.limits.variants) against whole forward passes,
and the sensitivity engine's long-n mode against its full mode."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from hardsoft.limits.sensitivity import measure_sensitivity
from hardsoft.limits.variants import VariantRunner, full_residuals
from hardsoft.model import random_model


def model(layers: int, mask: str = "none", layer_norm: str = "none", weighting="softmax"):
    return random_model(
        layers=layers,
        heads=2,
        d_model=12,
        mask=mask,
        layer_norm=layer_norm,
        weighting=weighting,
        weight_scale=1.5,
        seed=layers,
        dtype=torch.float64,
    ).eval()


@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("mask", ["none", "future", "strict-past"])
def test_variant_residuals_equal_whole_forward_passes(layers: int, mask: str) -> None:
    m = model(layers, mask, layer_norm="pre" if layers == 3 else "none")
    n = 40
    rng = np.random.default_rng(layers)
    word = torch.from_numpy(rng.integers(0, 2, size=(1, n)))
    flip = torch.tensor([0, 7, 19, 38, 38])
    var = word.repeat(len(flip), 1)
    var[torch.arange(len(flip)), flip] = 1 - var[torch.arange(len(flip)), flip]
    rows = torch.tensor([3, 7, 19, 38, 39])
    with torch.no_grad():
        runner = VariantRunner(m, word, rows, chunk=16)
        got_word, got_var = runner.base, runner.variants(var, flip)
        ref_word, ref_var = full_residuals(m, word, 16), full_residuals(m, var, 16)
    for k in range(layers + 1):
        keep = rows if k == layers else torch.arange(n)
        torch.testing.assert_close(
            got_word[k][:, keep], ref_word[k][:, keep], rtol=1e-9, atol=1e-11
        )
        torch.testing.assert_close(got_var[k][:, keep], ref_var[k][:, keep], rtol=1e-9, atol=1e-11)
    last = got_var[layers]
    others = torch.ones(n, dtype=torch.bool)
    others[rows] = False
    assert bool(last[:, others].isnan().all()) and not bool(last[:, rows].isnan().any())


def test_sensitivity_long_n_mode_equals_the_full_mode() -> None:
    """Forcing the long-n mode (long_n = 2) changes no statistic that it measures; the last
    layer's other positions become 'not measured' (NaN)."""
    m = model(2)
    kw = dict(samples=2, flips=5, seed=1, supplement_rows=3, chunk_size=16)
    full = measure_sensitivity(m, [24, 48], **kw)
    inc = measure_sensitivity(m, [24, 48], long_n=2, **kw)
    for a, b in zip(full.stats, inc.stats):
        for name in ("last_max", "last_mean", "flipped_max", "supp_last_max", "supp_other_max"):
            np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-8, atol=1e-14)
        np.testing.assert_allclose(b.other_max[:-1], a.other_max[:-1], rtol=1e-8, atol=1e-14)
        assert math.isnan(b.other_max[-1]) and math.isnan(b.other_mean[-1])
    assert inc.violations == full.violations == []
    assert inc.slope("last_max") is not None


def test_compiled_model_sensitivity_at_long_n_uses_fast_paths() -> None:
    """A compiled PARITY model through the long-n mode: the change at the last position does
    not decay (PARITY's output flips), measured at n = 9000 in seconds."""
    from hardsoft.compile import compile_formula

    m = compile_formula("MOD(2,1)(#<['1'])", "01", target="soft-temperature")
    rep = measure_sensitivity(m, [9000], samples=1, flips=3, supplement_rows=2, check_bound=False)
    assert rep.series("last_max")[0] > 0.5

"""The exact dependency analysis, judged by brute force: for every completion of a restriction,
the model's output equals the analysis' table at the completion's dependency-set assignment,
and every layer's value table matches the model's own activations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.errors import HardsoftError
from hardsoft.limits.contrast_models import ones_star_model
from hardsoft.limits.dependency import analyse
from hardsoft.limits.restriction import Restriction
from hardsoft.model import MASKS, random_model


def _completions(rho: Restriction):
    free = rho.free_positions()
    for vals in itertools.product(rho.alphabet, repeat=len(free)):
        yield rho.fill(list(vals))


def _random_restriction(n, alphabet, frac_fixed, rng):
    syms = [
        alphabet[int(rng.integers(len(alphabet)))] if rng.random() < frac_fixed else None
        for _ in range(n)
    ]
    return Restriction(tuple(syms), tuple(alphabet))


def _check_exhaustive(model, rho):
    an = analyse(model, rho)
    words = list(_completions(rho))
    with torch.no_grad():
        out = model(model.encode(words))
    acc = out.accept.numpy()
    y = out.outputs[:, -1].numpy()
    idx = {a: i for i, a in enumerate(rho.alphabet)}
    for w, a, yy in zip(words, acc, y):
        row = 0
        for p in an.output_deps:
            row = row * len(idx) + idx[w[int(p)]]
        assert bool(an.accept_table[row]) == bool(a)
        np.testing.assert_allclose(an.output_values[row], yy, rtol=1e-9, atol=1e-9)
    # the dependency set is a set of free positions
    assert set(an.output_deps.tolist()) <= set(rho.free_positions().tolist())
    return an


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("weighting", ["leftmost", "rightmost"])
def test_output_table_matches_brute_force(weighting, mask):
    rng = np.random.default_rng(0)
    for seed in range(3):
        m = random_model(
            weighting=weighting,
            mask=mask,
            layers=2,
            heads=2,
            d_model=8,
            seed=seed,
            dtype=torch.float64,
        )
        rho = _random_restriction(8, ("0", "1"), 0.3, rng)
        _check_exhaustive(m, rho)


@pytest.mark.parametrize("layer_norm", ["pre", "post"])
def test_layer_norm_models(layer_norm):
    rng = np.random.default_rng(1)
    m = random_model(
        weighting="rightmost",
        layers=2,
        heads=1,
        d_model=8,
        seed=4,
        layer_norm=layer_norm,
        dtype=torch.float64,
    )
    _check_exhaustive(m, _random_restriction(7, ("0", "1"), 0.2, rng))


def test_three_symbol_alphabet():
    rng = np.random.default_rng(2)
    m = random_model(
        weighting="leftmost",
        alphabet="abc",
        layers=1,
        heads=2,
        d_model=8,
        seed=5,
        dtype=torch.float64,
    )
    _check_exhaustive(m, _random_restriction(6, ("a", "b", "c"), 0.3, rng))


def test_exact_ties_in_a_constructed_model():
    # 1*: every non-0 position ties at score 0, every 0 at score 1 (rightmost tie rule)
    m = ones_star_model()
    for text in ["********", "***0****", "0*******", "*******1"]:
        an = _check_exhaustive(m, Restriction.from_string(text, ("0", "1")))
        if "0" in text:
            assert an.output_constant and not an.accept_table[0]


def test_value_tables_match_model_activations():
    rng = np.random.default_rng(3)
    m = random_model(
        weighting="rightmost",
        mask="future",
        layers=2,
        heads=2,
        d_model=8,
        seed=7,
        dtype=torch.float64,
    )
    rho = _random_restriction(9, ("0", "1"), 0.3, rng)
    an = analyse(m, rho, all_positions=True)
    words = [rho.random_completion(rng) for _ in range(40)]
    with torch.no_grad():
        tr = m(m.encode(words), trace=True).trace
    for b, w in enumerate(words):
        codes = np.array([rho.alphabet.index(ch) for ch in w])
        for k, layer in enumerate(an.layers):
            resid = tr[f"resid.{k}"][b]
            for j in range(rho.n):
                np.testing.assert_allclose(
                    layer.value_of(j, codes).numpy(), resid[j].numpy(), rtol=1e-9, atol=1e-9
                )


@pytest.mark.parametrize("weighting", ["softmax", "average"])
def test_rejects_non_unique_hard_attention(weighting):
    m = random_model(weighting=weighting, layers=2, heads=2, d_model=8, seed=0)
    with pytest.raises(HardsoftError, match="layer 1 head 1"):
        analyse(m, Restriction.free(8, ("0", "1")))


def test_enumeration_cap_is_a_clear_error():
    m = random_model(
        weighting="rightmost", layers=2, heads=2, d_model=8, seed=1, dtype=torch.float64
    )
    with pytest.raises(HardsoftError, match="cap"):
        analyse(m, Restriction.free(24, ("0", "1")), max_rows=4)

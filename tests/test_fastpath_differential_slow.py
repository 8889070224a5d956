"""An adversarial differential pass of the fast attention paths against the dense path, on
models nobody compiled.

The fast paths (hardsoft.model.fastpath) decide per input, by exact checks, which path runs.
Here random models of every weighting, mask, feature set and layer-norm placement (and a
variant whose keys read position coordinates only, so the window path applies) run at
n = 512 … 8192 on words built to create ties and near-ties: constant words, periodic words,
one flipped symbol, long blocks, and random words. The outputs with the fast paths (policy
"auto") must equal the dense path's up to float rounding: 1e-9 relative in float64, 1e-3 in
float32 (where a forward pass's own rounding is about 1e-5). The slow test draws its cases
with hypothesis; the fast one runs a fixed handful and checks that the fast paths ran.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hardsoft.model import random_model
from hardsoft.model.fastpath import fast_paths, head_paths
from hardsoft.model.spec import MASKS, WEIGHTINGS

FEATURES = [
    (),
    ("1",),
    ("(-1)^i",),
    ("1", "(-1)^i"),
    ("[i mod 3 = 0]",),
    ("1", "i/n", "(-1)^i", "[i=1]", "[i=n]"),
    ("1", "i/n"),
    ("1", "i", "i^2"),
]
WORDS = ("constant-0", "constant-1", "periodic", "one-flip", "blocks", "random")
TOLERANCE = {torch.float64: 1e-9, torch.float32: 1e-3}


def word(kind: str, n: int, rng: np.random.Generator) -> str:
    """Words that make keys tie or nearly tie: constant, periodic (period 1..6), constant with
    one flipped symbol, blocks of 64, or uniform."""
    if kind.startswith("constant"):
        return kind[-1] * n
    if kind == "periodic":
        pattern = "".join(rng.choice(["0", "1"], int(rng.integers(1, 7))))
        return (pattern * n)[:n]
    if kind == "one-flip":
        chars = ["0"] * n
        chars[int(rng.integers(n))] = "1"
        return "".join(chars)
    if kind == "blocks":
        return "".join("1" if (i // 64) % 2 else "0" for i in range(n))
    return "".join(rng.choice(["0", "1"], n))


def _positions_only(model) -> None:
    """Keys of the first layer read position coordinates only (the window path's case): the
    token embedding fills the first half of the residual, positions the second."""
    half = model.spec.d_model // 2
    with torch.no_grad():
        model.W_E[:, half:] = 0
        model.W_pos[:, :half] = 0
        for head in model.blocks[0].heads:
            head.W_K[:half] = 0


def differential(case: dict, n: int, kind: str, seed: int) -> tuple[float, dict[str, str]]:
    """(largest |fast − dense| / (1 + max |dense|), the paths the fast run took)."""
    split = case.pop("positions_only", False)
    model = random_model(d_model=8, seed=seed, **case)
    if split:
        _positions_only(model)
    tokens = model.encode([word(kind, n, np.random.default_rng(seed))])
    with torch.no_grad():
        with fast_paths("auto"):
            fast = model(tokens).outputs
            paths = head_paths(model)
        with fast_paths("off"):
            dense = model(tokens).outputs
    error = float((fast - dense).abs().max()) / (1.0 + float(dense.abs().max()))
    return error, paths


def _case(weighting, mask, features, layer_norm, layers, heads, scale, tau, dtype, split):
    return {
        "weighting": weighting,
        "mask": mask,
        "position_features": features,
        "layer_norm": layer_norm,
        "layers": layers,
        "heads": heads,
        "weight_scale": scale,
        "tau": tau if weighting == "softmax" else None,
        "dtype": dtype,
        "positions_only": split,
    }


FAST_CASES = [
    (_case("softmax", "future", ("1", "(-1)^i"), "none", 2, 2, 1.0, None, torch.float64, False),
     "periodic"),
    (_case("leftmost", "none", (), "pre", 2, 1, 3.0, None, torch.float64, False), "constant-0"),
    (_case("rightmost", "strict-past", ("[i mod 3 = 0]",), "post", 1, 2, 1.0, None,
           torch.float32, False), "one-flip"),
    (_case("average", "strict-future", ("1",), "none", 2, 2, 0.0, None, torch.float64, False),
     "random"),
    (_case("softmax", "past", ("1", "i/n"), "none", 1, 2, 10.0, "1/n", torch.float64, True),
     "blocks"),
    (_case("leftmost", "future", ("1", "i", "i^2"), "none", 1, 1, 3.0, None, torch.float64,
           True), "constant-1"),
]  # fmt: skip


@pytest.mark.parametrize("case,kind", FAST_CASES)
def test_fast_paths_equal_the_dense_path_on_random_models(case: dict, kind: str) -> None:
    dtype = case["dtype"]
    error, paths = differential(dict(case), 512, kind, seed=7)
    assert error <= TOLERANCE[dtype], (error, paths)


def test_the_fast_cases_exercise_every_fast_path() -> None:
    seen = set()
    for case, kind in FAST_CASES:
        seen |= set(differential(dict(case), 512, kind, seed=7)[1].values())
    assert {"uniform", "scan", "window", "classes"} <= seen, seen


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    weighting=st.sampled_from(WEIGHTINGS),
    mask=st.sampled_from(MASKS),
    features=st.sampled_from(FEATURES),
    layer_norm=st.sampled_from(["none", "pre", "post"]),
    layers=st.integers(1, 2),
    heads=st.integers(1, 2),
    scale=st.sampled_from([0.0, 1.0, 3.0, 10.0]),
    tau=st.sampled_from([None, "1", "1/n", "0.01"]),
    dtype=st.sampled_from([torch.float64, torch.float32]),
    split=st.booleans(),
    n=st.sampled_from([512, 1024, 2048, 4096, 8192]),
    kind=st.sampled_from(WORDS),
    seed=st.integers(0, 10_000),
)
def test_fast_paths_equal_the_dense_path_adversarially(
    weighting, mask, features, layer_norm, layers, heads, scale, tau, dtype, split, n, kind, seed
) -> None:
    case = _case(weighting, mask, features, layer_norm, layers, heads, scale, tau, dtype, split)
    error, paths = differential(case, n, kind, seed)
    assert error <= TOLERANCE[dtype], (error, paths)


def test_window_check_on_a_model_without_position_features() -> None:
    """Found by the differential pass: keys that read only (all-zero) position coordinates of
    a model with no position features made the window path crash (``unbind`` of an empty
    polynomial table); now the check declines and another path runs."""
    case = _case("softmax", "none", (), "none", 1, 1, 1.0, None, torch.float64, True)
    error, paths = differential(case, 512, "periodic", seed=0)
    assert error <= TOLERANCE[torch.float64] and paths["blocks.0.attn.0"] != "dense"


def test_dense_path_keeps_exact_ties_of_hard_attention() -> None:
    """Found by the differential pass: with bitwise equal keys (a rightmost head whose keys
    read only the constant feature 1) the dense path's matmul rounded equal dot products
    differently in different columns and broke the tie at the wrong position (0.086 away
    from the fast path). Hard heads now score each distinct key once."""
    import numpy as np

    from hardsoft.model.attention import pair_scores

    case = _case("rightmost", "none", ("1",), "none", 1, 2, 1.0, None, torch.float64, True)
    error, paths = differential(case, 512, "periodic", seed=0)
    assert error <= TOLERANCE[torch.float64], (error, paths)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 300, 7, generator=g, dtype=torch.float64)
    k = torch.randn(1, 1, 7, generator=g, dtype=torch.float64).expand(1, 300, 7)
    s = pair_scores(q, k, "rightmost")
    assert bool((s == s[..., :1]).all())  # every key equal: every score in a row equal
    assert np.allclose(s.numpy(), (q @ k.transpose(-1, -2)).numpy(), rtol=1e-12, atol=1e-12)

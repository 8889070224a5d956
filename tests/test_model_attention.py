"""Attention weightings and masks against brute-force references (planted ties included)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.model import MASKS, WEIGHTINGS, attend, attend_chunked, weights_from_scores

pytestmark = pytest.mark.floatcmp  # float comparisons: make test-cpus runs them per CPU path


def allowed_ref(mask: str, i: int, j: int) -> bool:
    return {
        "none": True,
        "future": j <= i,
        "strict-future": j < i,
        "past": j >= i,
        "strict-past": j > i,
    }[mask]


def weights_ref(scores: np.ndarray, mask: str, weighting: str) -> np.ndarray:
    """Plain-Python reference, one row at a time, straight from Hahn (2020) §3."""
    n_q, n_k = scores.shape
    out = np.zeros_like(scores)
    for i in range(n_q):
        allowed = [j for j in range(n_k) if allowed_ref(mask, i, j)]
        if not allowed:
            continue
        best = max(scores[i, j] for j in allowed)
        maxima = [j for j in allowed if scores[i, j] == best]
        if weighting == "leftmost":
            out[i, maxima[0]] = 1.0
        elif weighting == "rightmost":
            out[i, maxima[-1]] = 1.0
        elif weighting == "average":
            for j in maxima:
                out[i, j] = 1.0 / len(maxima)
        else:
            e = [np.exp(scores[i, j] - best) for j in allowed]
            total = sum(e)
            for j, v in zip(allowed, e):
                out[i, j] = v / total
    return out


def planted_scores(rng: np.random.Generator, n: int) -> np.ndarray:
    """Scores from a small integer range, so exact ties (also of the maximum) are frequent."""
    return rng.integers(-2, 3, size=(n, n)).astype(np.float64)


@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("mask", MASKS)
def test_weights_match_reference_with_planted_ties(weighting: str, mask: str) -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 7, 12):
        for _ in range(5):
            s = planted_scores(rng, n)
            from hardsoft.model.attention import allowed_block

            allowed = allowed_block(mask, 0, n, 0, n, torch.device("cpu"))
            got = weights_from_scores(torch.tensor(s), allowed, weighting).numpy()
            np.testing.assert_allclose(got, weights_ref(s, mask, weighting), atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_unique_hard_pick_on_long_rows_with_ties(dtype: torch.dtype) -> None:
    """torch.max's first-index rule must hold on long rows too (vectorised reduction paths),
    also on non-contiguous inputs and rows that are entirely -inf."""
    from hardsoft.model.attention import unique_hard_pick

    rng = np.random.default_rng(3)
    for n_k in (1, 7, 64, 513, 4099):
        s = rng.integers(0, 3, size=(3, 9, n_k)).astype(np.float64)
        s[1, :, : n_k // 2] = -np.inf
        s[2, 4] = -np.inf
        for t in (torch.tensor(s, dtype=dtype), torch.tensor(s, dtype=dtype).mT.contiguous().mT):
            row_max, left = unique_hard_pick(t, "leftmost")
            _, right = unique_hard_pick(t, "rightmost")
            # a maximum is one of its inputs (no rounding): bitwise on any IEEE machine
            np.testing.assert_array_equal(row_max.numpy(), s.max(-1))
            np.testing.assert_array_equal(left.numpy(), s.argmax(-1))
            np.testing.assert_array_equal(right.numpy(), n_k - 1 - s[..., ::-1].argmax(-1))


@pytest.mark.parametrize("mask", MASKS)
def test_hard_block_pick_equals_pick_on_masked_scores(mask: str) -> None:
    """The chunked path's block step (rightmost scores reversed keys) against the plain pick."""
    from hardsoft.model.attention import allowed_block, hard_block_pick, unique_hard_pick

    g = torch.Generator().manual_seed(2)
    q = torch.randint(-1, 2, (2, 40, 3), generator=g).double()
    k = torch.randint(-1, 2, (2, 700, 3), generator=g).double()
    allowed = allowed_block(mask, 300, 340, 0, 700, torch.device("cpu"))
    scores = q @ k.mT * 0.7  # integer dot products (exact in any order), one rounding by 0.7
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    for weighting in ("leftmost", "rightmost"):
        got_max, got_pick = hard_block_pick(q, k, 0.7, allowed, weighting)
        ref_max, ref_pick = unique_hard_pick(scores, weighting)
        assert torch.equal(got_max, ref_max)
        live = ref_max > float("-inf")
        assert torch.equal(got_pick[live], ref_pick[live])


def test_ties_are_really_exercised() -> None:
    rng = np.random.default_rng(0)
    s = planted_scores(rng, 12)
    rows_with_tied_max = sum(int((row == row.max()).sum() > 1) for row in s)
    assert rows_with_tied_max >= 3


@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("chunk", [1, 3, 5])
def test_chunked_equals_full(weighting: str, mask: str, chunk: int) -> None:
    g = torch.Generator().manual_seed(1)
    B, n, d = 2, 11, 3
    # integer-valued q, k give exact ties between positions
    q = torch.randint(-1, 2, (B, n, d), generator=g).double()
    k = torch.randint(-1, 2, (B, n, d), generator=g).double()
    v = torch.randn(B, n, 4, generator=g, dtype=torch.float64)
    full, _ = attend(q, k, v, weighting, mask, 0.7, use_sdpa=False)
    chunked = attend_chunked(q, k, v, weighting, mask, 0.7, chunk)
    torch.testing.assert_close(chunked, full, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("mask", MASKS)
def test_sdpa_path_equals_explicit_softmax(mask: str) -> None:
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(3, 9, 4, generator=g, dtype=torch.float64) for _ in range(3))
    a, _ = attend(q, k, v, "softmax", mask, 1.3, use_sdpa=True)
    b, _ = attend(q, k, v, "softmax", mask, 1.3, use_sdpa=False)
    torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-12)
    assert torch.isfinite(a).all()


@pytest.mark.parametrize("mask", ["strict-future", "strict-past"])
@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_row_without_allowed_position_outputs_zero(mask: str, weighting: str) -> None:
    q = torch.ones(1, 4, 2, dtype=torch.float64)
    v = torch.ones(1, 4, 3, dtype=torch.float64)
    for use_sdpa in (True, False):
        out, _ = attend(q, q, v, weighting, mask, 1.0, use_sdpa=use_sdpa)
        empty_row = 0 if mask == "strict-future" else 3
        # rows of 0, 1 or 2 allowed keys: weights 1 or 1/2, exact sums of exact terms
        assert torch.equal(out[0, empty_row], torch.zeros(3, dtype=torch.float64))
        assert torch.equal(out[0, 1], torch.ones(3, dtype=torch.float64))
    chunked = attend_chunked(q, q, v, weighting, mask, 1.0, 2)
    assert torch.equal(chunked[0, empty_row], torch.zeros(3, dtype=torch.float64))


@pytest.mark.parametrize("use_sdpa", [True, False])
def test_softmax_is_finite_for_huge_scores(use_sdpa: bool) -> None:
    n = 6
    q = torch.full((1, n, 1), 1e6, dtype=torch.float64)
    k = torch.arange(n, dtype=torch.float64).reshape(1, n, 1) * 1e6  # scores up to 5e12
    v = torch.arange(n, dtype=torch.float64).reshape(1, n, 1)
    out, _ = attend(q, k, v, "softmax", "future", 1.0, use_sdpa=use_sdpa)
    assert torch.isfinite(out).all()
    # the gap between neighbouring scores is 1e12: the weight sits on the largest allowed j
    torch.testing.assert_close(out[0, :, 0], torch.arange(n, dtype=torch.float64))
    chunked = attend_chunked(q, k, v, "softmax", "future", 1.0, 4)
    torch.testing.assert_close(chunked, out)


@pytest.mark.parametrize("hard", ["leftmost", "rightmost", "average"])
def test_temperature_softmax_converges_to_hardmax(hard: str) -> None:
    """With a unique maximum the L1 gap to hardmax falls like (m−1)e^{−γ/τ} as τ → 0."""
    rng = np.random.default_rng(3)
    s = rng.normal(size=(8, 8))
    hardw = weights_ref(s, "none", hard)
    gaps = []
    for tau in (1.0, 0.1, 0.01, 0.001):
        soft = weights_ref(s / tau, "none", "softmax")
        gaps.append(np.abs(soft - hardw).sum(axis=1).max())
    assert all(a > b for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-6
    srt = np.sort(s, axis=1)
    gamma = (srt[:, -1] - srt[:, -2]).min()
    for tau in (0.1, 0.01):
        soft = weights_ref(s / tau, "none", "softmax")
        bound = 2 * 7 * np.exp(-gamma / tau)
        assert np.abs(soft - hardw).sum(axis=1).max() <= bound + 1e-15


def test_average_splits_evenly_among_exact_ties() -> None:
    s = torch.tensor([[1.0, 3.0, 3.0, 0.0, 3.0]], dtype=torch.float64)
    w = weights_from_scores(s, None, "average")  # 1/3: one correctly rounded division
    assert torch.equal(w, torch.tensor([[0, 1 / 3, 1 / 3, 0, 1 / 3]], dtype=torch.float64))
    assert torch.equal(weights_from_scores(s, None, "leftmost")[0], torch.eye(5)[1].double())
    assert torch.equal(weights_from_scores(s, None, "rightmost")[0], torch.eye(5)[4].double())


def test_all_masks_enumerated() -> None:
    from hardsoft.model.attention import allowed_block
    from hardsoft.model.spec import Mask

    n = 5
    for mask in MASKS:
        a = allowed_block(mask, 0, n, 0, n, torch.device("cpu"))
        ref = np.array([[allowed_ref(mask, i, j) for j in range(n)] for i in range(n)])
        got = np.ones((n, n), dtype=bool) if a is None else a.numpy()
        assert (got == ref).all(), mask
        for qs, ks in itertools.product(range(0, n, 2), range(0, n, 2)):
            block = allowed_block(mask, qs, min(n, qs + 2), ks, min(n, ks + 2), torch.device("cpu"))
            sub = ref[qs : qs + 2, ks : ks + 2]
            got_b = np.ones_like(sub) if block is None else block.numpy()
            assert (got_b == sub).all()
            qe, ke = min(n, qs + 2), min(n, ks + 2)
            assert Mask(mask).block_fully_allowed(qs, qe, ks, ke) == bool(sub.all())
            assert Mask(mask).block_may_be_allowed(qs, qe, ks, ke) == bool(sub.any())

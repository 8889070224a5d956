"""The fused forward pass (Block._fused, Transformer._embed_blocks: the residual stream in blocks
of positions, without autograd, trace or hooks) against the unfused one, bitwise: both make the
same calls on the same numbers (transformer.positionwise, docs/model.md "The residual stream in
blocks"), so this holds whichever kernels the BLAS picks (``make test-cpus`` runs it under each
MKL code path); the exp of the window kernel without its slow path; the window path's early
rejection on a sample."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from hardsoft.compile import compile_formula
from hardsoft.model import random_model, transformer
from hardsoft.model.attention import weights_from_scores
from hardsoft.model.fastkernels import attend_gathered, exp_gaps
from hardsoft.model.fastpath import (
    WINDOW_MAX,
    WINDOW_SAMPLE,
    _plan,
    fast_paths,
    window_attention,
)
from hardsoft.model.spec import Weighting

from .test_fastpath import IN, TOK, one_head_model

pytestmark = pytest.mark.floatcmp  # float comparisons: make test-cpus runs them per CPU path


def unfused(model, tokens: torch.Tensor, mode: str = "auto") -> torch.Tensor:
    """The same forward, but through the unfused path: a forward hook on every head turns
    the fused path off (a hook may keep a head's output)."""
    handles = [
        head.register_forward_hook(lambda *a: None) for b in model.blocks for head in b.heads
    ]
    try:
        with torch.no_grad(), fast_paths(mode):
            return model(tokens).outputs
    finally:
        for h in handles:
            h.remove()


def fused(model, tokens: torch.Tensor, mode: str = "auto") -> torch.Tensor:
    with torch.no_grad(), fast_paths(mode):
        return model(tokens).outputs


@pytest.mark.parametrize("layer_norm", ["none", "pre", "post"])
@pytest.mark.parametrize("mode", ["force", "off"])
@pytest.mark.parametrize(("dtype", "batch"), [(torch.float64, 3), (torch.float32, 1)])
def test_fused_forward_equals_the_unfused_one_bitwise(
    monkeypatch, layer_norm, mode, dtype, batch
) -> None:
    monkeypatch.setattr(transformer, "FUSED_ROWS", 7)  # many blocks, one of them partial
    model = random_model(
        layers=3, heads=2, d_model=12, d_ff=5, mask="future", layer_norm=layer_norm,
        seed=3, dtype=dtype,
    )  # fmt: skip
    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, 2, size=(batch, 40)))
    a, b = fused(model, tokens, mode), unfused(model, tokens, mode)
    assert torch.equal(a, b)
    with torch.no_grad(), fast_paths(mode):  # traced: unfused, weights materialised
        traced = model(tokens, trace=True).outputs
    tol = 1e-12 if dtype == torch.float64 else 1e-4
    torch.testing.assert_close(a, traced, rtol=tol, atol=tol)


def test_fused_forward_of_compiled_parity_is_exact_and_leaves_no_alias(monkeypatch) -> None:
    monkeypatch.setattr(transformer, "FUSED_ROWS", 100)
    model = compile_formula("MOD(2,1)(#<['1'])", "01", target="soft-temperature")
    bits = np.random.default_rng(1).integers(0, 2, 1500)
    tokens = torch.from_numpy(bits)[None]
    a = fused(model, tokens)
    assert torch.equal(a, unfused(model, tokens))
    assert np.array_equal(a[0, :, 0].numpy() > 0.5, np.cumsum(bits) % 2 == 1)
    with torch.no_grad():  # a block called on its own does not write into its input
        x = model.embed(tokens)
        before = x.clone()
        model.blocks[0](x)
    assert torch.equal(x, before)


def test_training_keeps_the_unfused_path_with_gradients() -> None:
    model = random_model(layers=2, heads=2, d_model=8, seed=1, dtype=torch.float64)
    tokens = torch.from_numpy(np.random.default_rng(2).integers(0, 2, size=(2, 9)))
    out = model(tokens).outputs
    out.sum().backward()
    assert model.blocks[0].heads[0].W_Q.grad is not None
    with torch.no_grad():
        assert torch.equal(out.detach(), model(tokens).outputs)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_exp_gaps_drops_only_weights_below_the_normal_range(dtype) -> None:
    tiny = torch.finfo(dtype).smallest_normal
    low = math.log(tiny)
    gaps = torch.cat(
        [torch.linspace(low - 60, 0, 4001, dtype=torch.float64), torch.tensor([-math.inf])]
    )
    gaps = gaps.to(dtype)
    got = exp_gaps(gaps.clone())
    want = gaps.exp()
    keep = gaps >= low + 2.0
    assert torch.equal(got[keep], want[keep])  # the same exp call, same shape, where it is kept
    assert not got[~keep].any()  # exactly 0 where dropped (−inf included)
    assert float(want[~keep].max()) < 8 * tiny  # and only weights below e^2 × smallest normal


def test_window_softmax_with_deep_gaps_equals_the_reference_softmax() -> None:
    """Rows whose scores spread over ~800 (PARITY's lookup windows): the gathered softmax
    (dropping the subnormal weights) equals weights_from_scores up to rounding."""
    g = torch.Generator().manual_seed(0)
    c, w, d = 50, 29, 2
    q = torch.randn(1, c, d, dtype=torch.float64, generator=g)
    kq = torch.randn(1, c, w, d, dtype=torch.float64, generator=g)
    vq = torch.randn(1, c, w, 3, dtype=torch.float64, generator=g)
    valid = torch.rand(1, c, w, generator=g) < 0.8
    valid[..., 0] = True
    scale = 300.0
    got = attend_gathered(q, kq, vq, valid, scale, Weighting.SOFTMAX)
    scores = (kq @ q[..., None])[..., 0] * scale
    assert float((scores.amax(-1, keepdim=True) - scores).max()) > 750  # deep gaps occur
    want = (weights_from_scores(scores, valid, "softmax")[..., None] * vq).sum(-2)
    torch.testing.assert_close(got, want, rtol=1e-13, atol=1e-300)


def test_a_too_wide_window_is_rejected_on_a_sample_first() -> None:
    """A soft score over ``j/n`` (τ = 1) has no narrow window: on a long input the windows of
    a sample of queries already say so, before those of all n are computed."""
    model = one_head_model("softmax", "future", 1)
    head = model.blocks[0].heads[0]
    with torch.no_grad():
        head.W_Q[TOK + 1, 0], head.W_K[IN, 0] = 1.0, 1.0
        head.W_V[TOK + 1, 0] = 1.0
    n = 4 * WINDOW_SAMPLE + 1
    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, 2, size=(1, n)))
    why: list[str] = []
    with torch.no_grad():
        x = model.embed(tokens)
        q, k, v = head.qkv(x)
        src, scale = head.position_source, head.score_scale(n)
        got = window_attention(head, _plan(head), src, x, q, k, v, scale, False, why)
    assert got is None and why[-1].startswith("window: at least "), why
    assert why[-1].endswith(f"(at most {WINDOW_MAX})")


def test_every_head_hook_still_fires_without_autograd() -> None:
    """A forward or pre-hook on a head or block turns the fused pass off: it is called."""
    model = random_model(layers=2, heads=2, d_model=8, seed=1, dtype=torch.float64)
    tokens = torch.zeros(1, 5, dtype=torch.long)
    calls: list[str] = []
    head, block = model.blocks[1].heads[0], model.blocks[0]
    for register, name in (
        (head.register_forward_pre_hook, "head pre"),
        (head.register_forward_hook, "head"),
        (block.register_forward_hook, "block"),
    ):
        handle = register(lambda *a, name=name: calls.append(name))
        with torch.no_grad():
            model(tokens)
        handle.remove()
    assert calls == ["head pre", "head", "block"]

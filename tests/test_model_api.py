"""The analysis API of Head / Block / Transformer: its pieces, composed by hand, give exactly what
``forward`` computes (the engines in limits/ and programs/tieless rely on this)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.model import Mask, Transformer, random_model
from hardsoft.model.transformer import Block, Head, ModuleSeq

pytestmark = pytest.mark.floatcmp  # float comparisons: make test-cpus runs them per CPU path

CASES = list(
    itertools.product(
        ("softmax", "leftmost", "rightmost", "average"),
        ("none", "future", "strict-past"),
        ("none", "pre", "post"),
    )
)


def _model(weighting: str, mask: str, ln: str) -> Transformer:
    return random_model(
        weighting=weighting,
        mask=mask,
        layer_norm=ln,
        tau="1/2" if weighting == "softmax" else None,
        layers=2,
        heads=2,
        d_model=8,
        seed=3,
        dtype=torch.float64,
    )


@pytest.mark.parametrize("weighting, mask, ln", CASES)
@torch.no_grad()
def test_pieces_compose_to_forward(weighting: str, mask: str, ln: str) -> None:
    """Each layer from the traced residual it starts from: the pieces that are the very calls
    ``forward`` makes (embedding, queries) agree bitwise; the weights, recomputed from the
    scores, and what is built on them agree up to rounding (docs/model.md, "What is bitwise")."""
    model = _model(weighting, mask, ln)
    tokens = model.encode(["0110100", "1110001", "0000000"])
    out = model(tokens, trace=True, chunk_size=None)
    tr = out.trace
    assert tr is not None
    n = tokens.shape[1]
    assert torch.equal(model.embed(tokens), tr["resid.0"])
    for ell, block in enumerate(model.blocks):
        x = tr[f"resid.{ell}"]
        a_in = block.attn_input(x)
        att = torch.zeros_like(x)
        for h, head in enumerate(block.heads):
            q, k, v = head.qkv(a_in)
            assert torch.equal(q, tr[f"blocks.{ell}.attn.{h}.q"])
            w = head.weights_from_scores(head.scores(q, k, n), head.allowed(None, n))
            torch.testing.assert_close(w, tr[f"blocks.{ell}.attn.{h}.pattern"], rtol=0, atol=1e-12)
            o = head.output(w, v)
            torch.testing.assert_close(o, tr[f"blocks.{ell}.attn.{h}.out"], rtol=0, atol=1e-12)
            att = att + o
        got = block.after_attention(x + att)
        torch.testing.assert_close(got, tr[f"resid.{ell + 1}"], rtol=0, atol=1e-12)
    y = model.readout(tr[f"resid.{len(model.blocks)}"])
    assert torch.equal(y, out.outputs)
    assert torch.equal(model.accepts(out.outputs[:, -1]), out.accept)


@pytest.mark.parametrize("mask", [m.value for m in Mask])
def test_allowed_is_the_mask_table(mask: str) -> None:
    head = _model("leftmost", mask, "none").blocks[0].heads[0]
    n = 6
    rows = torch.tensor([0, 2, 5])
    got = head.allowed(rows, n)
    table = np.array([[Mask(mask).allows(i, j) for j in range(n)] for i in (0, 2, 5)])
    if mask == "none":
        assert got is None and table.all()
    else:
        assert got is not None and np.array_equal(got.numpy(), table)
        full = head.allowed(None, n)
        assert full is not None and torch.equal(full[rows], got)


def test_scores_use_the_temperature_of_the_input_length() -> None:
    head = _model("softmax", "none", "none").blocks[0].heads[0]
    q, k = (
        torch.randn(2, 3, head.spec.d_head, dtype=torch.float64),
        torch.randn(2, 5, head.spec.d_head, dtype=torch.float64),
    )
    # three query rows, five keys, but the temperature is τ(n) of the input length n = 40
    torch.testing.assert_close(
        head.scores(q, k, 40), (q @ k.transpose(-1, -2)) * head.score_scale(40)
    )


def test_module_sequences_are_typed_plain_module_lists() -> None:
    model = _model("rightmost", "none", "pre")
    assert isinstance(model.blocks, torch.nn.ModuleList) and isinstance(model.blocks, ModuleSeq)
    assert all(isinstance(b, Block) for b in model.blocks)
    assert isinstance(model.blocks[0], Block) and isinstance(model.blocks[0].heads[1], Head)
    assert isinstance(model.blocks[:1], ModuleSeq) and len(model.blocks[:1]) == 1
    keys = set(model.state_dict())
    assert "blocks.1.heads.0.W_Q" in keys and "blocks.0.ln1.weight" in keys

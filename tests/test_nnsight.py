"""Tracing a hardsoft Transformer with nnsight: read an attention pattern, patch it.

The expected outputs after a patch are computed by hand from the weights (the last layer has no
feed-forward and no layer norm, so the change in the outputs is linear in the pattern)."""

from __future__ import annotations

import functools

import pytest
import torch

from hardsoft.model import LayerSpec, ModelSpec, Transformer, random_model

nnsight = pytest.importorskip("nnsight", reason="the interop extra is not installed")


def _model() -> Transformer:
    base = random_model(layers=2, heads=2, d_model=8, d_ff=0, mask="future", seed=4)
    spec = ModelSpec(
        alphabet=base.spec.alphabet,
        d_model=8,
        layers=(LayerSpec(heads=base.spec.layers[0].heads, d_ff=6), base.spec.layers[1]),
        position_features=base.spec.position_features,
    )
    model = Transformer(spec, dtype=torch.float64)
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return model


@pytest.mark.floatcmp
def test_hook_pattern_is_the_traced_pattern_and_changes_nothing() -> None:
    model = _model()
    tokens = model.encode(["0110", "1011"])
    out = model(tokens, trace=True)
    plain = model(tokens, chunk_size=None)
    assert torch.allclose(out.outputs, plain.outputs, rtol=0, atol=1e-12)
    seen = {}
    hook = (
        model.blocks[1]
        .heads[0]
        .hook_pattern.register_forward_hook(lambda mod, args, result: seen.setdefault("p", result))
    )
    model(tokens, trace=True)
    hook.remove()
    assert torch.equal(seen["p"], out.trace["blocks.1.attn.0.pattern"])


@pytest.mark.floatcmp
def test_nnsight_reads_and_patches_an_attention_pattern() -> None:
    model = _model()
    tokens = model.encode(["01101", "11100", "00010"])
    forward = functools.partial(model, trace=True)  # materialise the patterns
    net = nnsight.NNsight(model)
    ref = model(tokens, trace=True)

    with net.trace(tokens, fn=forward):
        pattern = net.blocks[1].heads[0].hook_pattern.output.save()
    assert torch.equal(pattern, ref.trace["blocks.1.attn.0.pattern"])

    n = tokens.shape[1]
    uniform = torch.tril(torch.ones(n, n, dtype=torch.float64))
    uniform = (uniform / uniform.sum(-1, keepdim=True)).expand(len(tokens), n, n)
    with net.trace(tokens, fn=forward):
        net.blocks[1].heads[0].hook_pattern.output = uniform
        patched = net.output.save()

    head = model.blocks[1].heads[0]
    v = ref.trace["resid.1"] @ head.W_V
    delta = ((uniform - ref.trace["blocks.1.attn.0.pattern"]) @ v) @ head.W_O @ model.W_U
    expected = ref.outputs + delta
    assert (patched.outputs - expected).abs().max().item() < 1e-12
    assert (patched.outputs - ref.outputs).abs().max().item() > 1e-3  # the patch did something

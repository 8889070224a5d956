"""The Transformer module: features, spec, trace, chunking, save/load, the random factory."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from hardsoft.errors import HardsoftError
from hardsoft.model import (
    HeadSpec,
    LayerSpec,
    Mask,
    ModelSpec,
    Transformer,
    Weighting,
    eval_tau,
    feature_matrix,
    load_model,
    parse_feature,
    random_model,
    read_metadata,
    save_model,
)


@pytest.mark.parametrize(
    "name, bounded, fn",
    [
        ("1", True, lambda i, n: 1.0),
        ("i", False, lambda i, n: i),
        ("n", False, lambda i, n: n),
        ("i/n", True, lambda i, n: i / n),
        ("1/i", True, lambda i, n: 1 / i),
        ("(-1)^i", True, lambda i, n: (-1) ** i),
        ("i^2", False, lambda i, n: i * i),
        ("(i/n)^2", True, lambda i, n: (i / n) ** 2),
        ("[i=1]", True, lambda i, n: float(i == 1)),
        ("[i=n]", True, lambda i, n: float(i == n)),
        ("[i mod 3 = 2]", True, lambda i, n: float(i % 3 == 2)),
        ("n*i^2", False, lambda i, n: n * i * i),
        ("i/n * (-1)^i", True, lambda i, n: (i / n) * (-1) ** i),
    ],
)
def test_scalar_features(name, bounded, fn) -> None:
    f = parse_feature(name)
    assert f.bounded is bounded
    for n in (1, 5, 8):
        got = f.compute(n).numpy()[:, 0]
        want = np.array([fn(i, n) for i in range(1, n + 1)], dtype=np.float64)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_vector_features_and_matrix() -> None:
    m = feature_matrix(("1", "learned:6", "sinusoidal:4"), 5)
    assert m.shape == (5, 1 + 6 + 4)
    assert torch.equal(m[:, 1:7], torch.eye(6, dtype=torch.float64)[:5])
    assert torch.allclose(
        m[0, 7:],
        torch.tensor(
            [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], dtype=torch.float64
        ),
    )
    assert parse_feature("sinusoidal:4").bounded and parse_feature("learned:6").bounded
    with pytest.raises(HardsoftError, match="exceeds the learned position table"):
        feature_matrix(("learned:6",), 7)


@pytest.mark.parametrize(
    "bad", ["i^3", "[i mod 0 = 0]", "[i mod 2 = 2]", "learned:x", "sinusoidal:3", "learned:2*i"]
)
def test_bad_features_are_clear_errors(bad: str) -> None:
    with pytest.raises(HardsoftError):
        parse_feature(bad)


def test_tau_expressions() -> None:
    assert eval_tau(None, 10) == 1.0
    assert eval_tau("1/(4*n)", 10) == pytest.approx(1 / 40)
    assert eval_tau("1/(n*log(n))", 8) == pytest.approx(1 / (8 * math.log(8)))
    for bad in ("__import__('os')", "n.real", "1/(n-n)", "-n", "(", "x"):
        with pytest.raises(HardsoftError):
            eval_tau(bad, 5)


def test_spec_validation_errors() -> None:
    ok = ModelSpec(alphabet=("0", "1"), d_model=2)
    ok.validate()
    bad_specs = [
        ModelSpec(alphabet=(), d_model=2),
        ModelSpec(alphabet=("0", "0"), d_model=2),
        ModelSpec(alphabet=("ab",), d_model=2),
        ModelSpec(
            alphabet=("0",),
            d_model=2,
            layers=(LayerSpec(heads=(HeadSpec(weighting="leftmost", tau="n"),)),),
        ),
    ]
    for spec in bad_specs:
        with pytest.raises(HardsoftError):
            spec.validate()


def test_options_are_validated_once_at_construction() -> None:
    """Unknown weightings, masks and layer-norm placements fail when the spec is built, with
    one line naming the option; known ones become enums that still equal their strings."""
    for make, what in (
        (lambda: HeadSpec(weighting="max"), "weighting"),
        (lambda: HeadSpec(mask="left"), "mask"),
        (lambda: ModelSpec(alphabet=("0",), d_model=2, layer_norm="mid"), "layer_norm"),
    ):
        with pytest.raises(HardsoftError, match=f"unknown {what}"):
            make()
    head = HeadSpec(weighting="rightmost", mask="strict-future")
    assert head.weighting is Weighting.RIGHTMOST and head.weighting == "rightmost"
    assert f"{head.mask}" == "strict-future" and head.mask.is_strict
    spec = ModelSpec(alphabet=("0",), d_model=2, layers=(LayerSpec(heads=(head,)),))
    assert spec.to_dict()["layers"][0]["heads"][0]["mask"] == "strict-future"
    assert type(spec.to_dict()["layers"][0]["heads"][0]["mask"]) is str


def test_mask_table() -> None:
    """Mask.allows on ints, numpy and torch agrees with the definitions (j vs i)."""
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    expected = {
        "none": np.ones((5, 5), bool),
        "future": j <= i,
        "strict-future": j < i,
        "past": j >= i,
        "strict-past": j > i,
    }
    for name, table in expected.items():
        mask = Mask(name)
        assert np.array_equal(np.broadcast_to(mask.allows(i, j), (5, 5)), table)
        assert torch.equal(
            torch.broadcast_to(mask.allows(torch.tensor(i), torch.tensor(j)), (5, 5)),
            torch.from_numpy(table),
        )
        assert all(mask.allows(a, b) == table[a, b] for a in range(5) for b in range(5))
        for qs, qe, ks, ke in ((0, 2, 3, 5), (3, 5, 0, 2), (1, 4, 1, 4), (2, 3, 2, 3)):
            block = table[qs:qe, ks:ke]
            assert mask.block_may_be_allowed(qs, qe, ks, ke) == bool(block.any())
            assert mask.block_fully_allowed(qs, qe, ks, ke) == bool(block.all())


def manual_forward(model: Transformer, word: str) -> np.ndarray:
    """A plain numpy re-implementation of Hahn (2020) §3 (no layer norm) as an independent check."""
    from tests.test_model_attention import weights_ref

    sp = model.spec
    n = len(word)
    P = lambda t: t.detach().numpy()  # noqa: E731
    x = P(model.W_E)[[sp.alphabet.index(a) for a in word]] + P(
        feature_matrix(sp.position_features, n)
    ) @ P(model.W_pos)
    for block in model.blocks:
        att = np.zeros_like(x)
        for head in block.heads:
            q, k, v = x @ P(head.W_Q), x @ P(head.W_K), x @ P(head.W_V)
            s = (q @ k.T) * head.score_scale(n)
            w = weights_ref(s, head.spec.mask, head.spec.weighting)
            att += w @ v @ P(head.W_O)
        h = x + att
        x = h + np.maximum(h @ P(block.W_in) + P(block.b_in), 0) @ P(block.W_out) + P(block.b_out)
    return x @ P(model.W_U) + P(model.b_U)


@pytest.mark.parametrize("weighting", ["softmax", "leftmost", "rightmost", "average"])
@pytest.mark.parametrize("mask", ["none", "future", "strict-past"])
def test_module_matches_manual_forward(weighting: str, mask: str) -> None:
    tau = "1/log(n+1)" if weighting == "softmax" else None
    model = random_model(
        weighting=weighting,
        mask=mask,
        tau=tau,
        layers=2,
        heads=2,
        d_model=8,
        seed=5,
        dtype=torch.float64,
    )
    for word in ("0", "01101", "1110001011"):
        got = model.run_words([word])[0]
        np.testing.assert_allclose(got, manual_forward(model, word), atol=1e-10)


@pytest.mark.parametrize("weighting", ["softmax", "leftmost", "rightmost", "average"])
def test_chunked_model_equals_full(weighting: str) -> None:
    model = random_model(
        weighting=weighting,
        mask="future",
        layers=3,
        heads=2,
        d_model=12,
        seed=7,
        dtype=torch.float64,
    )
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("01"), 37)) for _ in range(4)]
    t = model.encode(words)
    full = model(t).outputs
    for chunk in (4, 16):
        torch.testing.assert_close(model(t, chunk_size=chunk).outputs, full, atol=1e-11, rtol=1e-11)


def test_trace_has_every_activation() -> None:
    model = random_model(
        weighting="softmax", layers=2, heads=3, d_model=8, seed=0, dtype=torch.float64
    )
    out = model(model.encode(["0110", "1001"]), trace=True)
    tr = out.trace
    assert tr is not None
    for ell in range(2):
        for h in range(3):
            pat = tr[f"blocks.{ell}.attn.{h}.pattern"]
            assert pat.shape == (2, 4, 4)
            torch.testing.assert_close(pat.sum(-1), torch.ones(2, 4, dtype=torch.float64))
        assert tr[f"blocks.{ell}.resid_post"].shape == (2, 4, 8)
        assert torch.equal(tr[f"blocks.{ell}.resid_post"], tr[f"resid.{ell + 1}"])
    torch.testing.assert_close(tr["resid.0"], tr["embed.tokens"] + tr["embed.positions"])
    torch.testing.assert_close(tr["outputs"], out.outputs)
    # the traced run computes the same outputs as the fast path
    torch.testing.assert_close(model(model.encode(["0110", "1001"])).outputs, out.outputs)


@pytest.mark.parametrize("layer_norm", ["pre", "post"])
def test_layer_norm_options(layer_norm: str) -> None:
    model = random_model(
        weighting="softmax", layer_norm=layer_norm, layers=2, seed=1, dtype=torch.float64
    )
    out = model(model.encode(["0101"]), trace=True)
    assert torch.isfinite(out.outputs).all()
    if layer_norm == "post":
        # post-norm: the residual leaving a layer is LN(.), whose mean is the mean of LN's bias
        x = out.trace["resid.2"]
        ln = model.blocks[1].ln2
        assert torch.allclose(ln.weight, torch.ones_like(ln.weight))
        want = torch.full_like(x.mean(-1), float(ln.bias.detach().mean()))
        torch.testing.assert_close(x.mean(-1), want, atol=1e-12, rtol=0)
    spec = ModelSpec(
        alphabet=("0",), d_model=3, layer_norm="post", ln_eps=0.0, layers=(LayerSpec(d_ff=2),)
    )
    assert Transformer(spec).blocks[0].ln1.eps == 0.0


@pytest.mark.floatcmp
def test_save_load_round_trip_bit_for_bit(tmp_path) -> None:
    for dtype in (torch.float32, torch.float64):
        model = random_model(
            weighting="softmax", layer_norm="pre", tau="1/log(n+2)", seed=3, dtype=dtype
        )
        model.meta["certificate"] = {"tau": "1/log(n+2)"}
        path = tmp_path / f"m-{dtype}.safetensors"
        save_model(model, path)
        loaded = load_model(path)
        assert loaded.spec == model.spec and loaded.meta == model.meta and loaded.dtype == dtype
        t = model.encode(["0110101", "1111000"])
        assert torch.equal(model(t).outputs, loaded(t).outputs)
        assert read_metadata(path)["spec"]["alphabet"] == ["0", "1"]


def test_corrupt_and_foreign_files_are_clear_errors(tmp_path) -> None:
    from safetensors.torch import save_file

    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x00\x01not a safetensors file at all")
    foreign = tmp_path / "foreign.safetensors"
    save_file({"w": torch.zeros(2)}, str(foreign))
    model = random_model(seed=0)
    good = tmp_path / "good.safetensors"
    save_model(model, good)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(good.read_bytes()[:-50])
    for path, pattern in [
        (tmp_path / "missing.safetensors", "no such file"),
        (garbage, "not a valid safetensors"),
        (foreign, "not a hardsoft model"),
        (truncated, "safetensors"),
    ]:
        with pytest.raises(HardsoftError, match=pattern):
            load_model(path)


def test_save_is_atomic_and_keeps_old_file_on_failure(tmp_path) -> None:
    path = tmp_path / "m.safetensors"
    model = random_model(seed=0)
    save_model(model, path)
    before = path.read_bytes()
    model.meta["bad"] = object()  # not JSON-serialisable: the save must fail before touching path
    with pytest.raises(TypeError):
        save_model(model, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.safetensors"]


def test_random_factory_is_seeded() -> None:
    a = random_model(weighting="rightmost", seed=11)
    b = random_model(weighting="rightmost", seed=11)
    c = random_model(weighting="rightmost", seed=12)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert any(not torch.equal(sa[k], sc[k]) for k in sa)
    assert (
        json.loads(json.dumps(a.spec.to_dict()))["layers"][0]["heads"][0]["weighting"]
        == "rightmost"
    )


def test_encode_errors_and_mixed_lengths() -> None:
    model = random_model(alphabet="ab", seed=0, dtype=torch.float64)
    with pytest.raises(HardsoftError, match="symbol 'c' at position 2"):
        model.encode(["ac"])
    outs = model.run_words(["ab", "", "abba", "b"])
    assert [o.shape[0] for o in outs] == [2, 0, 4, 1]
    torch.testing.assert_close(
        torch.tensor(outs[2]), model(model.encode(["abba"])).outputs[0].detach()
    )

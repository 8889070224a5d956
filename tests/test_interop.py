"""TransformerLens export and import: the same function, weight for weight, at every position.

Compiled models are also checked against the logic evaluator (independent ground truth); the
round trip through TransformerLens must keep them correct."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from hardsoft.errors import HardsoftError
from hardsoft.model import HeadSpec, LayerSpec, ModelSpec, Transformer, random_model, save_model

tl = pytest.importorskip("transformer_lens", reason="the interop extra is not installed")

from hardsoft.interop import (  # noqa: E402
    build_hooked,
    from_transformer_lens,
    load_transformer_lens,
    to_transformer_lens,
    transformer_lens_weights,
)
from tests._cli import run_cli  # noqa: E402

TOL = 1e-9
BOUNDED = ("1", "i", "sinusoidal:4", "(-1)^i", "[i=1]")  # none of these depends on n


def _tokens(k: int, n: int, count: int = 12, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, k, (count, n), generator=torch.Generator().manual_seed(seed + n))


def _max_diff(model: Transformer, hooked, n: int) -> float:
    tokens = _tokens(len(model.spec.alphabet), n)
    with torch.no_grad():
        return (model(tokens).outputs - hooked(tokens)).abs().max().item()


def _compiled(name: str):
    from hardsoft.compile import compile_formula
    from hardsoft.logic.library import get_formula

    f = get_formula(name)
    return f, compile_formula(f.formula, f.alphabet, target="soft-pe", causal=True)


@pytest.mark.parametrize("name", ["parity-mod", "majority"])
def test_compiled_soft_pe_models_match_in_transformer_lens(name) -> None:
    """Every position, float64, n up to 64 (the export is per length: the features use n);
    the thresholded logits are the formula's truth values, and the cache holds the patterns."""
    from hardsoft.logic.semantics import evaluate

    f, model = _compiled(name)
    assert model.dtype == torch.float64
    for n in [*range(1, 13), 23, 40, 64]:
        export = transformer_lens_weights(model, n)
        hooked = build_hooked(export)
        tokens = _tokens(len(f.alphabet), n, count=16)
        with torch.no_grad():
            logits, cache = hooked.run_with_cache(tokens)
            ours = model(tokens, trace=True)
        assert (ours.outputs - logits).abs().max().item() <= TOL, n
        words = ["".join(f.alphabet[i] for i in row) for row in tokens.tolist()]
        truth = evaluate(f.formula, words, f.alphabet)
        np.testing.assert_array_equal((logits[..., 0] > 0.5).numpy(), truth)
        for ell, layer in enumerate(model.spec.layers):
            pattern = cache["pattern", ell]  # [B, heads, n, n]
            for h in range(len(layer.heads)):
                mine = ours.trace[f"blocks.{ell}.attn.{h}.pattern"]
                assert (pattern[:, h] - mine).abs().max().item() <= TOL


def _has_nonstrict_masks() -> bool:
    import inspect

    from hardsoft.compile import compile_formula

    return "masks" in inspect.signature(compile_formula).parameters


@pytest.mark.skipif(not _has_nonstrict_masks(), reason="the compiler has no non-strict masks yet")
@pytest.mark.parametrize("name", ["suffix-abc", "ones-star", "parity-mod", "majority"])
def test_nonstrict_compiled_models_match_in_transformer_lens(name) -> None:
    """Non-strict masks (Y and S through future masks) make formulas with past operators
    expressible: same logits, and the formula's truth values, at every position."""
    from hardsoft.compile import compile_formula
    from hardsoft.logic.library import get_formula
    from hardsoft.logic.semantics import evaluate

    f = get_formula(name)
    model = compile_formula(f.formula, f.alphabet, target="soft-pe", masks="nonstrict")
    for n in (1, 2, 3, 7, 16, 33, 64):
        hooked = build_hooked(transformer_lens_weights(model, n))
        tokens = _tokens(len(f.alphabet), n, count=16)
        with torch.no_grad():
            logits = hooked(tokens)
            assert (model(tokens).outputs - logits).abs().max().item() <= TOL, n
        words = ["".join(f.alphabet[i] for i in row) for row in tokens.tolist()]
        np.testing.assert_array_equal(
            (logits[..., 0] > 0.5).numpy(), evaluate(f.formula, words, f.alphabet)
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["parity-mod", "majority"])
def test_compiled_models_match_at_every_length_up_to_64(name) -> None:
    _, model = _compiled(name)
    for n in range(1, 65):
        assert _max_diff(model, build_hooked(transformer_lens_weights(model, n)), n) <= TOL


def _mixed_model(layer_norm: str, mask: str) -> Transformer:
    """Heads of different d_head and value widths, a layer without feed-forward, a layer with
    one head fewer and one without heads, temperatures and 1/sqrt(d_head) scaling."""
    heads = (
        HeadSpec(mask=mask, d_head=3, d_value=5, tau="0.5", scale=True),
        HeadSpec(mask=mask, d_head=0, d_value=2),
        HeadSpec(mask=mask, d_head=6, d_value=1, tau="3"),
    )
    spec = ModelSpec(
        alphabet=("a", "b", "c"),
        d_model=10,
        layers=(
            LayerSpec(heads=heads, d_ff=7),
            LayerSpec(heads=heads[:2], d_ff=0),
            LayerSpec(heads=(), d_ff=4),
        ),
        position_features=BOUNDED,
        layer_norm=layer_norm,
        d_out=3,
    )
    model = Transformer(spec, dtype=torch.float64)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "ln" not in name:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.7)
    return model


@pytest.mark.parametrize("layer_norm", ["none", "pre"])
@pytest.mark.parametrize("mask", ["none", "future"])
def test_padding_zero_heads_layers_and_norms_are_exact(layer_norm, mask) -> None:
    model = _mixed_model(layer_norm, mask)
    export = transformer_lens_weights(model, 20)
    assert not export.length_dependent and export.exact_lengths == "1 <= n <= 20"
    assert export.config["d_head"] == 6 and export.config["n_heads"] == 3
    hooked = build_hooked(export)
    for n in (1, 2, 7, 20):
        assert _max_diff(model, hooked, n) <= TOL


def test_length_dependent_models_are_exported_for_one_length_and_say_so() -> None:
    model = random_model(layers=1, heads=2, tau="1/n", dtype=torch.float64, seed=3)
    export = transformer_lens_weights(model, 12)
    assert export.length_dependent and export.exact_lengths == "n = 12 only"
    assert any("i/n" in r for r in export.reasons) and any("τ(n)" in r for r in export.reasons)
    with pytest.warns(UserWarning, match="length exactly 12"):
        hooked = to_transformer_lens(model, 12)
    assert _max_diff(model, hooked, 12) <= TOL
    assert _max_diff(model, hooked, 5) > 1e-3  # a shorter input really differs


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"weighting": "rightmost"}, r"head 1 of layer 0 .* rightmost attention"),
        ({"mask": "strict-future"}, r"head 1 of layer 0 .* strict-future mask"),
        ({"mask": "past"}, r"head 1 of layer 0 .* past mask"),
        ({"mask": "none"}, r"head 1 of layer 0 .* one attention direction"),
    ],
)
def test_what_transformer_lens_cannot_express_is_one_line_naming_the_head(change, message):
    base = {"mask": "future", "d_head": 2}
    spec = ModelSpec(
        alphabet=("0", "1"),
        d_model=4,
        layers=(LayerSpec(heads=(HeadSpec(**base), HeadSpec(**{**base, **change}))),),
    )
    with pytest.raises(HardsoftError, match=message) as err:
        transformer_lens_weights(Transformer(spec), 8)
    assert "\n" not in str(err.value)


def test_post_layer_norm_is_refused() -> None:
    model = random_model(layers=1, heads=1, layer_norm="post", mask="future")
    with pytest.raises(HardsoftError, match="post layer norm"):
        transformer_lens_weights(model, 8)


def _tl_model(**overrides):
    cfg = dict(
        n_layers=2,
        d_model=12,
        n_ctx=24,
        d_head=4,
        n_heads=3,
        d_mlp=16,
        d_vocab=3,
        d_vocab_out=2,
        act_fn="relu",
        normalization_type="LN",
        attention_dir="causal",
        dtype=torch.float64,
        seed=0,
        default_prepend_bos=False,
    )
    cfg.update(overrides)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        hooked = tl.HookedTransformer(tl.HookedTransformerConfig(**cfg))
    with torch.no_grad():  # TransformerLens initialises LN to (1, 0): make them nontrivial
        for name, p in hooked.named_parameters():
            if name.endswith((".w", ".b")) or "b_in" in name or "b_U" in name:
                p.add_(0.3 * torch.randn_like(p))
    return hooked


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"normalization_type": None, "attention_dir": "bidirectional"},
        {"normalization_type": "LNPre"},
        {"attn_only": True, "d_mlp": None},
        {"use_attn_scale": True, "attn_scale": 3.0},
        {"use_attn_scale": False},
    ],
)
def test_from_transformer_lens_computes_the_same_function(overrides) -> None:
    hooked = _tl_model(**overrides)
    model = from_transformer_lens(hooked, alphabet="abc")
    assert model.spec.alphabet == ("a", "b", "c") and model.spec.position_features == (
        "learned:24",
    )
    for n in (1, 9, 24):
        assert _max_diff(model, hooked, n) <= TOL
    with pytest.raises(HardsoftError, match="learned position table"):
        model(_tokens(3, 25))


def test_from_transformer_lens_refuses_what_hardsoft_lacks() -> None:
    hooked = _tl_model()
    with torch.no_grad():
        hooked.blocks[1].attn.b_K[2, 0] = 0.5
    with pytest.raises(HardsoftError, match=r"blocks\.1\.attn\.b_K is nonzero \(head 2"):
        from_transformer_lens(hooked)
    with pytest.raises(HardsoftError, match="positional_embedding_type='rotary'"):
        from_transformer_lens(_tl_model(positional_embedding_type="rotary", rotary_dim=4))
    with pytest.raises(HardsoftError, match="act_fn='gelu'"):
        from_transformer_lens(_tl_model(act_fn="gelu"))
    with pytest.raises(HardsoftError, match="alphabet needs 3 symbols"):
        from_transformer_lens(_tl_model(), alphabet="ab")


def test_engines_run_on_an_imported_model() -> None:
    """Lemma 5's measurement runs on a TransformerLens model (its bound holds: a real check),
    and a compiled model sent through TransformerLens and back still passes `check` against
    the logic evaluator at its export length."""
    from hardsoft.check import check_formula
    from hardsoft.limits.sensitivity import measure_sensitivity

    hooked = _tl_model(n_ctx=64)
    with torch.no_grad():
        for p in hooked.parameters():
            p.mul_(0.3)
    report = measure_sensitivity(from_transformer_lens(hooked), [16, 64], samples=2, flips=4)
    assert not report.violations

    f, compiled = _compiled("majority")
    back = from_transformer_lens(build_hooked(transformer_lens_weights(compiled, 12)), f.alphabet)
    result = check_formula(back, f.formula, exhaustive_max_n=0, random_n=[12], samples=400)
    assert result["mismatches"] == 0 and result["checked_positions"] == 400 * 12, result


def test_export_cli_writes_loadable_files_and_json(tmp_path) -> None:
    _, model = _compiled("parity-mod")
    path = tmp_path / "parity.safetensors"
    save_model(model, path)
    out = tmp_path / "tl"
    cli = [sys.executable, "-c", "from hardsoft.cli import main; main()", "export"]
    cmd = [*cli, str(path), "--to", "transformer-lens"]
    res = subprocess.run(
        [*cmd, "--n-ctx", "16", "-o", str(out), "--json"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["exact_lengths"] == "n = 16 only" and data["length_dependent"]
    assert data["verification"]["max_abs_diff"] <= TOL and "warning:" in res.stderr
    hooked = load_transformer_lens(out)
    assert _max_diff(model, hooked, 16) <= TOL
    # the two files belong together: a config from another export is refused
    (out / "config.json").write_text(json.dumps({**data["config"], "n_ctx": 17}))
    with pytest.raises(HardsoftError, match="does not belong"):
        load_transformer_lens(out)
    hard = tmp_path / "hard.safetensors"
    save_model(random_model(weighting="leftmost", mask="future", layers=1), hard)
    res = subprocess.run([*cli, str(hard), "--n-ctx", "8", "-o", str(out)], capture_output=True)
    err = res.stderr.decode().strip()
    assert res.returncode == 2 and err.startswith("error: head 0 of layer 0") and "\n" not in err


def test_export_past_a_bounded_models_length_warns(tmp_path) -> None:
    """sort compiled for n <= 4, exported at n_ctx 6: the export reproduces hardsoft's model
    there, but that model is exact only up to 4; the export said "exact for n = 6 only"
    with no word of the bound (run and check warn past it)."""
    model = tmp_path / "sort4.safetensors"
    res = run_cli("program", "compile", "@tracr_lib:sort", "--max-len", "4", "-o", str(model))
    assert res.rc == 0, res.err
    res = run_cli("export", str(model), "-o", str(tmp_path / "tl"), "--n-ctx", "6", "--json")
    assert res.rc == 0, res.err
    assert "exceeds the length this model was compiled for, n <= 4" in res.err
    assert json.loads(res.out)["precision"]["beyond_limit"] is True
    res = run_cli("export", str(model), "-o", str(tmp_path / "tl4"), "--n-ctx", "4", "--json")
    assert res.rc == 0 and "compiled for" not in res.err, res.err
    assert json.loads(res.out)["precision"]["beyond_limit"] is False

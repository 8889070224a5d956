"""The compiler against the independent logic evaluator (never against itself).

Fast slice: every operator and every shipped formula for every target on all strings up to
length 7–8 (binary) or 5 (larger alphabets), the numerically hardest target on random strings of
length 1000, a few random formulas, causal compilation, sharing, the certificate and the proven
head-error bounds measured inside the model. The full matrix is in test_compile_slow.py.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
import torch

from hardsoft.compile import TARGETS, compile_formula
from hardsoft.compile import bounds as B
from hardsoft.errors import HardsoftError
from hardsoft.logic import FORMULAS, evaluate, parse, random_formula
from hardsoft.logic.random import PAST_OPERATORS
from hardsoft.model import eval_tau, load_model, read_metadata, save_model


@functools.cache
def compiled(text: str, alphabet: str, target: str, causal: bool = False):
    return compile_formula(text, alphabet, target, causal)


def all_ids(k: int, n: int) -> np.ndarray:
    return np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)


def outputs(model, ids: np.ndarray, trace: bool = False):
    with torch.no_grad():
        res = model(torch.from_numpy(ids), trace=trace)
    return res


def assert_agrees(model, formula, alphabet: str, ids: np.ndarray) -> None:
    """Output coordinate 0 equals the evaluator's 0/1 value at every position (to 1e-9)."""
    out = outputs(model, ids).outputs[..., 0].numpy()
    ref = evaluate(formula, ids, list(alphabet)).astype(np.float64)
    err = np.abs(out - ref)
    if err.max() > 1e-9:
        b, p = np.unravel_index(int(err.argmax()), err.shape)
        word = "".join(alphabet[c] for c in ids[b])
        raise AssertionError(
            f"mismatch on {word!r} at position {p + 1}: model {out[b, p]}, reference {ref[b, p]}"
        )


def check_exhaustive(text: str, alphabet: str, target: str, max_n: int, causal=False) -> None:
    formula = parse(text, alphabet=alphabet)
    model = compiled(text, alphabet, target, causal)
    for n in range(1, max_n + 1):
        assert_agrees(model, formula, alphabet, all_ids(len(alphabet), n))


OPERATOR_CASES = [
    ("'1'", "01"),
    ("true & !false", "01"),
    ("first | last", "01"),
    ("'a' -> Y 'b'", "ab"),
    ("X '1' & Y '0'", "01"),
    ("'0' S '1'", "01"),
    ("'0' U '1'", "01"),
    ("P '1' & !F '0'", "01"),
    ("E ('a' & X 'b')", "abc"),
    ("#<['1'] > #<['0']", "01"),
    ("#<['1'] - 2 * #<['0'] + i >= 3", "01"),
    ("#>['1'] = 2", "01"),
    ("#>['a'] != #>['b']", "ab"),
    ("#<['1'] <= #>['0']", "01"),
    ("i < n - 1", "01"),
    ("MOD(3, 1)(i)", "01"),
    ("MOD(2, 1)(#<['1'])", "01"),
    ("MOD(3, 0)(#>['b'] - i)", "ab"),
    ("MOD(2, 0)(#<['a'] + #>['b'] + n)", "ab"),
    ("#<[Y '1'] = #>['1']", "01"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("text,alphabet", OPERATOR_CASES)
def test_every_operator_matches_evaluator(text: str, alphabet: str, target: str) -> None:
    check_exhaustive(text, alphabet, target, 6 if len(alphabet) == 2 else 4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(FORMULAS))
def test_shipped_formulas_match_evaluator(name: str, target: str) -> None:
    entry = FORMULAS[name]
    check_exhaustive(entry.text, entry.alphabet, target, 8 if len(entry.alphabet) == 2 else 5)


@pytest.mark.parametrize("name", ["parity-mod", "parity-count", "majority", "dyck1"])
def test_soft_temperature_long_random_strings(name: str) -> None:
    entry = FORMULAS[name]
    model = compiled(entry.text, entry.alphabet, "soft-temperature")
    ids = np.random.default_rng(1).integers(0, len(entry.alphabet), size=(2, 1000))
    assert_agrees(model, entry.formula, entry.alphabet, ids)


@pytest.mark.parametrize("seed", range(4))
def test_random_formulas_all_targets(seed: int) -> None:
    alphabet = "01"
    formula = random_formula(1000 + seed, alphabet, depth=4)
    for target in TARGETS:
        model = compile_formula(formula, alphabet, target)
        for n in range(1, 7):
            assert_agrees(model, formula, alphabet, all_ids(2, n))
        ids = np.random.default_rng(seed).integers(0, 2, size=(4, 60))
        assert_agrees(model, formula, alphabet, ids)


CAUSAL_CASES = [
    ("'c' & Y ('b' & Y 'a')", "abc"),
    ("'0' S ('1' & Y '1')", "01"),
    ("MOD(2, 1)(#<['1']) | first", "01"),
    ("#<['1'] > #<['0'] & P '1'", "01"),
    ("MOD(3, 2)(#<['a'] - 2 * #<['b'] + i)", "ab"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("text,alphabet", CAUSAL_CASES)
def test_causal_uses_only_future_masks(text: str, alphabet: str, target: str) -> None:
    check_exhaustive(text, alphabet, target, 7 if len(alphabet) == 2 else 5, causal=True)
    model = compiled(text, alphabet, target, True)
    masks = {h.mask for layer in model.spec.layers for h in layer.heads}
    assert masks <= {"future", "strict-future"}
    assert model.meta["certificate"]["causal"] is True


@pytest.mark.parametrize("text", ["X '1'", "'0' U '1'", "F '1'", "E '1'", "last", "#>['1'] > 0"])
def test_causal_rejects_future_operators(text: str) -> None:
    with pytest.raises(HardsoftError, match="causal"):
        compile_formula(text, "01", "soft-temperature", causal=True)


@pytest.mark.floatcmp
def test_causal_prefix_outputs_do_not_depend_on_the_future() -> None:
    """Past-fragment outputs at position i are the same whatever follows: the readout exactly,
    the values up to rounding (n = 25 and n = 40 are BLAS calls of other shapes)."""
    model = compiled("MOD(2, 1)(#<['1']) & '0' S '1'", "01", "soft-temperature", True)
    ids = np.random.default_rng(3).integers(0, 2, size=(3, 40))
    full = outputs(model, ids).outputs[..., 0].numpy()
    prefix = outputs(model, ids[:, :25]).outputs[..., 0].numpy()
    assert np.array_equal(full[:, :25] > 0.5, prefix > 0.5)
    np.testing.assert_allclose(full[:, :25], prefix, rtol=0, atol=1e-12)


def test_bad_inputs_are_user_errors() -> None:
    with pytest.raises(HardsoftError):
        compile_formula("'a' & ", "ab")
    with pytest.raises(HardsoftError):
        compile_formula("'c'", "ab")
    with pytest.raises(HardsoftError, match="target"):
        compile_formula("'a'", "ab", target="medium")


def test_common_subformulas_compiled_once() -> None:
    """phi_{k+1} = phi_k & Y phi_k has tree size 2^k but k distinct subformulas: the width
    grows by a constant per level."""
    widths, sizes = [], []
    phi = "'1'"
    for _ in range(7):
        phi = f"({phi}) & Y ({phi})"
        model = compile_formula(phi, "01", "soft-temperature")
        widths.append(model.meta["certificate"]["residual_width"])
        sizes.append(model.meta["certificate"]["formula_size"])
    steps = np.diff(widths)
    assert len(set(steps.tolist())) == 1 and steps[0] <= 4
    assert all(b >= 2 * a for a, b in zip(sizes, sizes[1:]))
    formula = parse(phi, alphabet="01")
    assert_agrees(model, formula, "01", all_ids(2, 8))


def test_weights_do_not_depend_on_n_and_features_bounded() -> None:
    """The same weights serve every length; soft-temperature uses bounded features only and
    soft-pe uses tau = 1."""
    cert = compiled("!E (#<[Y '1'] = #>['1'])", "01", "soft-temperature").meta["certificate"]
    assert cert["bounded_position_features"] is True
    assert all(f["bounded"] for f in cert["position_features"])
    assert all(
        h["tau"] is not None
        for h in cert["heads"]
        if h["weighting"] == "softmax" and not h["gadget"].startswith(("count", "inverse"))
    )
    pe = compiled("!E (#<[Y '1'] = #>['1'])", "01", "soft-pe").meta["certificate"]
    assert pe["tau"] == [] and not pe["bounded_position_features"]
    hard = compiled("!E (#<[Y '1'] = #>['1'])", "01", "hard").meta["certificate"]
    assert set(hard["weightings"]) <= {"leftmost", "rightmost", "average"}
    assert hard["exact_by_construction"] is True


@pytest.mark.floatcmp
def test_certificate_contents_and_saved_metadata(tmp_path) -> None:
    model = compile_formula("MOD(2, 1)(#<['1'])", "01", "soft-temperature", n=500)
    cert = model.meta["certificate"]
    assert cert["layers"] == len(model.blocks)
    assert cert["residual_width"] == model.spec.d_model
    assert cert["parameters"] == sum(p.numel() for p in model.parameters())
    assert cert["heads_total"] == sum(len(layer.heads) for layer in model.spec.layers)
    for t in cert["tau"]:
        assert math.isclose(t["value_at_n"], eval_tau(t["expression"], 500))
    assert cert["max_error_bound"] < cert["rounding_margin"] == pytest.approx(1 / 3)
    assert "n^3" in cert["tau_order"]
    path = tmp_path / "m.safetensors"
    save_model(model, path)
    assert read_metadata(path)["meta"]["certificate"] == cert
    again = load_model(path)
    ids = all_ids(2, 6)
    assert np.array_equal(outputs(again, ids).outputs.numpy(), outputs(model, ids).outputs.numpy())


def _soft_head_errors(model, ids: np.ndarray) -> dict[str, float]:
    """For each rounded soft head output ``tmp -> dst`` (``model.meta["rounded"]``): max
    |tmp − dst| where the head's output is used (sign heads: outside their gated position)."""
    res = outputs(model, ids, trace=True)
    names = model.meta["residual"]
    errors: dict[str, float] = {}
    n = ids.shape[1]
    for ell in range(len(model.blocks)):
        mid = res.trace[f"blocks.{ell}.resid_mid"].numpy()
        post = res.trace[f"blocks.{ell}.resid_post"].numpy()
        for tmp_name, dst_name in model.meta["rounded"].items():
            tmp = mid[..., names.index(tmp_name)]
            exact = post[..., names.index(dst_name)]
            if not np.any(tmp) and not np.any(exact):
                continue
            keep = np.ones_like(tmp, dtype=bool)
            if tmp_name.startswith("sign_att"):
                keep[:, 0] = False  # the gate: i = 1 (pre) or n = 1
                if n == 1:
                    keep[:] = False
            if keep.any():
                err = float(np.abs(tmp - exact)[keep].max())
                errors[tmp_name] = max(errors.get(tmp_name, 0.0), err)
    return errors


@pytest.mark.parametrize("text", ["'0' S '1' & X '1'", "MOD(3, 1)(#<['1']) & #>['0'] > #<['1']"])
@pytest.mark.parametrize("target", ["soft-temperature", "soft-pe"])
def test_measured_head_errors_within_certificate(text: str, target: str) -> None:
    """Each soft head's pre-rounding output is within its proven bound of the exact value
    (the rounded value, itself checked against the evaluator) at many lengths."""
    model = compile_formula(text, "01", target)
    formula = parse(text, alphabet="01")
    bound = max(h["error_bound"] for h in model.meta["certificate"]["heads"])
    assert bound < B.ROUNDING_MARGIN
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 5, 9, 33, 200, 700):
        ids = rng.integers(0, 2, size=(4, n))
        assert_agrees(model, formula, "01", ids)
        errs = _soft_head_errors(model, ids)
        if n >= 9:
            assert errs, "no soft head outputs found"
        assert max(errs.values(), default=0.0) <= bound + 1e-12


def test_bound_functions() -> None:
    assert B.shift_bound_sup(B.SHIFT_LAMBDA) < 0.05
    assert B.sign_bound(0.5, B.SIGN_LAMBDA) < 0.05
    lam = B.choose_retrieval_lambda(3)
    assert B.retrieval_residue_bound(lam) <= 0.05
    assert 3 * B.retrieval_value_bound(lam) <= 0.2
    # the geometric tail bound really bounds the softmax mass off the witness
    for n in (2, 10, 100):
        s = B.SHIFT_LAMBDA * np.arange(1, n) / 2.0
        w = np.exp(s - s.max())
        assert 1 - w[-1] / w.sum() <= B.shift_bound(B.SHIFT_LAMBDA, n)


@pytest.mark.parametrize("seed", range(3))
def test_random_past_formulas_causal(seed: int) -> None:
    formula = random_formula(2000 + seed, "ab", depth=4, operators=PAST_OPERATORS)
    model = compile_formula(formula, "ab", "soft-temperature", causal=True)
    for n in range(1, 7):
        assert_agrees(model, formula, "ab", all_ids(2, n))


def test_certified_temperature_is_sufficient_but_not_wasteful() -> None:
    """The bisection of the compiler experiment: the certified τ is exact (s = 1 works), a
    much softer τ is not (s_max is finite), at two lengths."""
    from hardsoft.experiments.compiler import largest_exact_factor

    for n in (16, 64):
        s = largest_exact_factor("Y '1'", "01", n, strings=4, seed=0)
        assert 1.0 <= s < 2.0**10


def test_experiment_is_registered() -> None:
    from hardsoft.experiments import all_experiments

    names = {e.name: e for e in all_experiments()}
    assert (
        "compiler" in names and names["compiler"].seed_ref == "Yang et al. (arXiv:2412.09925v1) §4"
    )


@pytest.mark.parametrize("n", [10_000, 100_000, 1_000_000])
def test_float64_margins_at_large_n(n: int) -> None:
    """The soft-temperature gadgets' scores, built from the same position features and τ(n)
    in float64, keep their proven margins at large n (one query row each, O(n) work): the
    lookup puts >= 1 − ε_res on j = C, the sign head >= 1 − ε on the right parity, the shift
    head >= 1 − ε_shift on the witness."""
    from hardsoft.model import feature_matrix
    from hardsoft.model.attention import weights_from_scores

    feats = feature_matrix(["i/n*1/n", "(i/n)^2", "(-1)^i", "i/n"], n)
    j_n2, j2, alt, j_over_n = feats.T
    lam = B.choose_retrieval_lambda(1)
    rng = np.random.default_rng(n)
    for big_n in (n, n // 2 + 1, 1):  # N = i (prefix) or n − i + 1 (suffix): any value <= n
        for c in {0, 1, big_n, int(rng.integers(0, big_n + 1))}:
            q = torch.tensor([2.0 * c / big_n, 1.0 / big_n], dtype=torch.float64)
            scores = (q[0] * j_n2 - q[1] * j2) / eval_tau(f"1/({lam}*n**3)", n)
            w = weights_from_scores(scores[None, :], None, "softmax")[0]
            target = max(c, 1) - 1
            assert 1 - float(w[target]) <= B.retrieval_residue_bound(lam) + 1e-9
            value = float(w @ j_over_n)
            assert abs(value - (target + 1) / n) <= B.retrieval_value_bound(lam) / n + 1e-12
    for d in (-3, -1, 0, 2, 5):
        x = (d + 0.5) / n
        scores = x * alt / eval_tau("1/(4*n)", n)
        w = weights_from_scores(scores[None, :], None, "softmax")[0]
        even = float(w[1::2].sum())  # positions 2, 4, ... (0-based odd indices)
        expected = 1.0 if d >= 0 else 0.0
        assert abs(even - expected) <= B.sign_bound(0.5, B.SIGN_LAMBDA)
    i = n  # the shift at the last position: witness = the rightmost P before i
    p = torch.from_numpy((rng.random(n) < 0.001).astype(np.float64))
    p[i - 1] = 0.0
    p[int(rng.integers(0, i - 1))] = 1.0
    scores = (p + 0.5 * j_over_n) / eval_tau("1/(8*n)", n)
    allowed = torch.arange(n) < i - 1
    w = weights_from_scores(scores[None, :], allowed[None, :], "softmax")[0]
    witness = int(torch.nonzero(p[: i - 1]).max())
    assert 1 - float(w[witness]) <= B.shift_bound(B.SHIFT_LAMBDA, n)


def test_ir_table_does_not_grow_across_compilations() -> None:
    """Interned IR nodes are held weakly: compiling many formulas in one process frees them,
    while nodes that are alive stay unique (equal structure gives the same object)."""
    import gc

    from hardsoft.compile import ir
    from hardsoft.logic.random import random_formula

    gc.collect()
    before = len(ir._TABLE)
    for i in range(60):
        compile_formula(random_formula(i, "01", depth=3), "01", target="hard")
    gc.collect()
    assert len(ir._TABLE) <= before + 5
    a = ir.node(ir.BAtom, "1")
    assert ir.node(ir.BNot, a) is ir.node(ir.BNot, ir.node(ir.BAtom, "1"))


@pytest.mark.parametrize(
    "text,match",
    [
        ("MOD(100000, 1)(#<['1'])", "reads 100000 residues"),
        ("MOD(150, 1)(#<['1'] + #<['0'])", "150\\^2 residue combinations"),
        ("MOD(150, 1)(#<['1'] + i)", "150\\^2 residue combinations"),
        ("MOD(1000, 1)(#<['1']) & MOD(1100, 2)(#<['0'])", "2100 residues"),
    ],
)
def test_size_limits_are_checked_before_building(text: str, match: str, monkeypatch) -> None:
    """A model that would blow up is refused with one line, on the IR, before any gadget is
    built (the builder is never created)."""
    import hardsoft.compile.compiler as C

    def no_builder(*args, **kwargs):
        raise AssertionError("the builder ran before the size check")

    monkeypatch.setattr(C, "Builder", no_builder)
    with pytest.raises(HardsoftError, match=match):
        compile_formula(text, "01", "soft-temperature")


def test_mod_of_position_is_one_feature_for_any_modulus() -> None:
    model = compile_formula("MOD(1000000, 999999)(i) | MOD(6, 3)(4 * i + 1)", "01", "hard")
    features = [f["name"] for f in model.meta["certificate"]["position_features"]]
    assert len([f for f in features if f.startswith("[i mod")]) == 2
    formula = parse("MOD(1000000, 999999)(i) | MOD(6, 3)(4 * i + 1)", alphabet="01")
    for n in range(1, 9):
        assert_agrees(model, formula, "01", all_ids(2, n))
    assert compile_formula("MOD(4, 1)(2 * i)", "01").meta["certificate"]["layers"] == 0


def test_parameter_count_is_known_before_assembly(monkeypatch) -> None:
    """The parameter cap is checked on the craft description; the count it uses is the one
    the assembled model has (compile_formula asserts the two agree)."""
    from hardsoft.compile import limits

    for text in ("!E (#<[Y '1'] = #>['1'])", "MOD(3, 1)(#<['1']) & X '0'", "'1'"):
        for masks in ("strict", "nonstrict"):
            model = compile_formula(text, "01", "soft-pe", masks=masks)
            assert model.meta["certificate"]["parameters"] == model.parameter_count()
    monkeypatch.setattr(limits, "MAX_PARAMETERS", 100)
    with pytest.raises(HardsoftError, match="parameters"):
        compile_formula("!E (#<[Y '1'] = #>['1'])", "01", "soft-pe")


@pytest.mark.parametrize("masks", ["strict", "nonstrict"])
def test_float32_exact_at_the_certified_float_limit(masks: str) -> None:
    """The certificate's float32 limit (lookup heads: n <= (56u)^(-1/2) = 547) is met: the
    float32 model is exact there (on random, all-ones and alternating strings)."""
    model = compile_formula("MOD(2, 1)(#<['1'])", "01", "soft-temperature", masks=masks)
    limits = model.meta["certificate"]["float_limits"]
    assert limits["float32"] == 547 and limits["float64"] > 10**7
    assert any("lookup" in h for h in limits["binding_heads"])
    n = limits["float32"]
    ids = np.random.default_rng(0).integers(0, 2, size=(3, n))
    ids[1] = 1
    ids[2] = np.arange(n) % 2
    assert_agrees(model.to(torch.float32), parse("MOD(2, 1)(#<['1'])", alphabet="01"), "01", ids)
    shifts = compile_formula("Y '1' | '0' S '1'", "01", "hard").meta["certificate"]
    assert shifts["float_limits"]["float32"] is None  # exact scores: nothing to round

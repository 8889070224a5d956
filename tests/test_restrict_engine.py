"""The restriction engine end to end: verified witnesses on random and hand-built models, the
flip-soundness property, DYCK completions, the contrast languages and the CLI.

Ground truth is independent of the engine: membership comes from ``hardsoft.languages``'
oracles, outputs from running the model, and the hand-built models are checked exhaustively
against the oracles first."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from hardsoft.cli import app
from hardsoft.languages import get_language
from hardsoft.languages.dyck import complete_dyck
from hardsoft.limits.contrast_models import anbn_model, ones_star_model, parity_lookup_model
from hardsoft.limits.depth_reduction import Params
from hardsoft.limits.restrict import contrast_check, flip_test, restrict
from hardsoft.limits.restriction import Restriction
from hardsoft.model import random_model, save_model

ALPHA = {"parity-even": "01", "parity-odd": "01", "dyck1": "()", "dyck2": "()[]"}


def _model(lang, layers, heads, d, seed, **kw):
    return random_model(
        weighting=kw.pop("weighting", "rightmost"),
        alphabet=ALPHA[lang],
        layers=layers,
        heads=heads,
        d_model=d,
        seed=seed,
        dtype=torch.float64,
        **kw,
    )


def _check_witness(model, result, lang):
    w = result.witness
    assert w is not None and w.verified, w.reason
    L = get_language(lang)
    # independent re-check: agree with the restriction, differ only outside D, same output,
    # exactly one in the language
    rho = result.restriction
    assert rho.agrees(w.x) and rho.agrees(w.x_prime)
    diff = [i for i in range(rho.n) if w.x[i] != w.x_prime[i]]
    assert diff and not set(diff) & set(result.dependency_set)
    assert all(rho.symbols[i] is None for i in diff)
    with torch.no_grad():
        acc = model(model.encode([w.x, w.x_prime])).accept.tolist()
    assert acc[0] == acc[1]
    assert L.member(w.x) != L.member(w.x_prime)


@pytest.mark.parametrize(
    "lang,layers,heads,d,seed",
    [
        ("parity-even", 1, 1, 8, 0),
        ("parity-odd", 2, 2, 16, 1),
        ("parity-even", 3, 2, 32, 2),
        ("dyck1", 2, 2, 16, 3),
        ("dyck2", 2, 1, 8, 4),
    ],
)
def test_verified_witness_on_random_models(lang, layers, heads, d, seed):
    m = _model(lang, layers, heads, d, seed)
    r = restrict(m, 64, lang, seed=seed)
    _check_witness(m, r, lang)
    assert len(r.layers) == layers
    # DYCK: the first and last 0.2 n positions stay fixed to "(" and ")"
    if lang.startswith("dyck"):
        s = str(r.restriction)
        assert s[:12] == "(" * 12 and s[-12:] == ")" * 12


def test_flip_property_1000_trials():
    m = _model("parity-even", 2, 2, 16, 5, mask="future")
    r = restrict(m, 64, "parity-even", seed=5)
    res = flip_test(m, r, trials=1000, seed=1)
    assert res["changed"] == 0
    assert res["max_output_difference"] <= 1e-9


def test_leftmost_and_layer_norm_models():
    m = _model("parity-odd", 2, 2, 16, 6, weighting="leftmost", layer_norm="pre")
    r = restrict(m, 64, "parity-odd", seed=6)
    _check_witness(m, r, "parity-odd")
    assert flip_test(m, r, trials=200, seed=2)["changed"] == 0


def test_stage3_moser_tardos_with_k1():
    m = _model("parity-even", 1, 2, 16, 0)
    r = restrict(m, 256, "parity-even", params=Params(k=1, seed=0))
    _check_witness(m, r, "parity-even")
    log = r.layers[0]
    assert log.unsatisfied_final == 0
    assert log.free_after_stage3 <= log.free_after_stage2 <= log.free_after_stage1
    assert flip_test(m, r, trials=200, seed=3)["changed"] == 0


def test_parity_lookup_model_is_correct_up_to_8_and_shown_wrong_at_64():
    m = parity_lookup_model(8)
    L = get_language("parity-even")
    for n in range(1, 9):
        words = ["".join(w) for w in itertools.product("01", repeat=n)]
        with torch.no_grad():
            acc = m(m.encode(words)).accept.tolist()
        assert acc == [L.member(w) for w in words]
    r = restrict(m, 64, "parity-even")
    _check_witness(m, r, "parity-even")
    w = r.witness
    # the model is wrong on exactly one of the two inputs
    assert (w.accept != L.member(w.x)) != (w.accept_prime != L.member(w.x_prime))


@pytest.mark.parametrize("lang,make", [("ones-star", ones_star_model), ("anbn", anbn_model)])
def test_contrast_models_exact_and_engine_cannot_defeat_them(lang, make):
    m = make()
    L = get_language(lang)
    rng = np.random.default_rng(0)
    for n in list(range(1, 11)) + [64, 257, 1000]:
        if n <= 10:
            words = ["".join(w) for w in itertools.product(L.alphabet, repeat=n)]
        else:
            words = ["".join(rng.choice(list(L.alphabet), n)) for _ in range(30)]
            words += L.sample_positive(n, 3, rng) if L.has_members(n) else []
        with torch.no_grad():
            acc = m(m.encode(words)).accept.tolist()
        assert acc == [L.member(w) for w in words]
    rep = contrast_check(m, lang, 64, samples=100)
    assert rep["output_constant"] and not rep["constant_accept"]
    assert rep["completions_in_language"] == 0 and rep["model_correct_on_completions"]
    assert not rep["witness_verified"]


def _dyck_brute_force_exists(rho, alphabet):
    L = get_language("dyck1" if len(alphabet) == 2 else "dyck2")
    free = rho.free_positions()
    return any(L.member(rho.fill(list(v))) for v in itertools.product(alphabet, repeat=len(free)))


def test_dyck1_completion_is_complete_on_small_inputs():
    rng = np.random.default_rng(0)
    L = get_language("dyck1")
    for _ in range(200):
        n = int(rng.integers(2, 11))
        syms = tuple("()"[int(rng.integers(2))] if rng.random() < 0.4 else None for _ in range(n))
        rho = Restriction(syms, ("(", ")"))
        got = complete_dyck(rho.symbols, ("(", ")"))
        exists = _dyck_brute_force_exists(rho, ("(", ")"))
        assert (got is not None) == exists
        if got is not None:
            assert rho.agrees(got) and L.member(got)


def test_dyck2_completion_is_a_member_when_found():
    rng = np.random.default_rng(1)
    L = get_language("dyck2")
    found = 0
    for _ in range(200):
        n = 2 * int(rng.integers(1, 6))
        syms = tuple("()[]"[int(rng.integers(4))] if rng.random() < 0.3 else None for _ in range(n))
        rho = Restriction(syms, tuple("()[]"))
        got = complete_dyck(rho.symbols, tuple("()[]"))
        if got is not None:
            found += 1
            assert rho.agrees(got) and L.member(got)
        else:
            # the heuristic may miss, but never when the restriction fixes nothing
            assert any(s is not None for s in syms)
    assert found > 100


def test_cli_json_shape_and_errors(tmp_path):
    path = tmp_path / "m.safetensors"
    save_model(_model("parity-even", 2, 2, 8, 7), path)
    runner = CliRunner()
    res = runner.invoke(
        app, ["restrict", str(path), "--n", "64", "--language", "parity-even", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert set(out) >= {"restriction", "free_fraction", "dependency_set", "witness", "layers"}
    assert len(out["restriction"]) == 64
    assert out["free_fraction"] == pytest.approx(out["restriction"].count("*") / 64)
    w = out["witness"]
    assert set(w) >= {"x", "x_prime", "accept", "in_language", "verified"}
    assert w["verified"] is True and w["in_language"][0] != w["in_language"][1]
    assert all(1 <= p <= 64 for p in out["dependency_set"])
    # text mode prints the verdict
    res = runner.invoke(app, ["restrict", str(path), "--n", "64", "--language", "parity-odd"])
    assert res.exit_code == 0 and "verified: true" in res.output
    # bad inputs are user errors
    soft = tmp_path / "s.safetensors"
    save_model(random_model(weighting="softmax", layers=1, heads=1, d_model=8), soft)
    for args in (
        [str(soft), "--n", "16", "--language", "parity-even"],
        [str(path), "--n", "16", "--language", "majority"],
        [str(path), "--n", "16", "--language", "dyck1"],
    ):
        res = runner.invoke(app, ["restrict", *args])
        assert res.exit_code != 0
        assert isinstance(res.exception, Exception)


@pytest.mark.slow
@pytest.mark.parametrize("n", [64, 256, 1024])
def test_grid_of_random_models(n):
    configs = [
        (lang, layers, heads, d, seed)
        for seed, (layers, heads, d) in enumerate(
            [(1, 1, 8), (1, 2, 16), (2, 1, 16), (2, 2, 32), (3, 1, 8), (3, 2, 16)]
        )
        for lang in ("parity-even", "parity-odd", "dyck1", "dyck2")
    ]
    for lang, layers, heads, d, seed in configs:
        m = _model(lang, layers, heads, d, seed)
        r = restrict(m, n, lang, seed=seed)
        _check_witness(m, r, lang)
        assert flip_test(m, r, trials=1000, seed=seed)["changed"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("n", [256, 1024])
def test_parity_lookup_at_larger_n(n):
    m = parity_lookup_model(8)
    r = restrict(m, n, "parity-even")
    _check_witness(m, r, "parity-even")


@pytest.mark.parametrize("formula", ["Y '1'", "'1' S '0'", "E '1'"])
def test_compiled_hard_models(formula):
    """Models from the compiler (unique-hard heads with strict masks and exact ties): "E '1'"
    has local heads (the nearest 1 to the left/right), where full capture (k = 0) would fix
    every position, so the automatic choice of k moves on to k > 0."""
    from hardsoft.compile import compile_formula

    m = compile_formula(formula, "01", target="hard")
    r = restrict(m, 64, "parity-even")
    _check_witness(m, r, "parity-even")
    assert r.restriction.free_fraction >= 0.5
    assert flip_test(m, r, trials=300, seed=4)["changed"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("n", [256, 1024])
@pytest.mark.parametrize("formula", ["Y '1'", "'1' S '0'", "X '1'", "F (Y '0')", "E '1'"])
def test_compiled_hard_models_large_n(formula, n):
    from hardsoft.compile import compile_formula

    m = compile_formula(formula, "01", target="hard")
    for lang in ("parity-even", "parity-odd"):
        r = restrict(m, n, lang)
        _check_witness(m, r, lang)
        assert flip_test(m, r, trials=1000, seed=n)["changed"] == 0


@pytest.mark.parametrize(
    "c, H, eta, C, q, S",
    [(1, 1, 0.25, 1.0, 0.9, 2), (2, 2, 0.1, 0.5, 0.5, 2), (3, 1, 0.45, 0.3, 0.95, 3)],
)
def test_paper_k_meets_lemma17_condition_with_the_factor_c(c, H, eta, C, q, S) -> None:
    """Hahn's supplement, Lemma 17 (eq. 14): each of at most |V| n / k iterations fixes up to
    c inputs, so the free set keeps (1 − 2η) C n positions only if |V| c / k <= η C (|V| = S^c;
    2^c c / k in the binary case). The returned k meets that and condition (12), and k/2 fails
    one of them (conditions evaluated here from the supplement's formulas)."""
    import math

    from hardsoft.limits.depth_reduction import paper_k

    def meets(k: float) -> bool:
        V = S**c
        A = 1 / (k * k)
        f = (V * V / eta) * c * c * k * k * H / C
        log_d = math.log1p(-((q / S) ** c)) * eta * C / (c * c)
        rhs = (math.log(A) + math.log(0.5) + f * math.log1p(-A)) / k if A < 1 else -math.inf
        return log_d <= rhs and V * c / k <= eta * C

    k = paper_k(c, H, eta, C, q, S)
    assert math.isfinite(k) and meets(k)
    assert S**c * c / k <= eta * C
    assert k == 1 or not meets(k / 2)

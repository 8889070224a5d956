"""The soft-ln target (layer norm with ε = 0, τ = 1, future masks; Yang & Chiang (COLM 2024))
and PARITY by Chiang & Cholak (2022): every shipped C-RASP program checked exact against its
own interpreter, the models in the soft-ln class, layer norm never fed a zero-variance vector,
the certificate's margins, float limits and ε effects against measurements."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.atlas.evidence import class_violations
from hardsoft.atlas.table import column
from hardsoft.check import check_language, check_model
from hardsoft.compile import compile_formula
from hardsoft.compile.parity_ln import parity_layernorm
from hardsoft.errors import HardsoftError
from hardsoft.logic import evaluate, parse
from hardsoft.model.transformer import LayerNorm, Transformer
from hardsoft.programs.reference import program_reference
from hardsoft.programs.source import example_programs, load_program
from tests._cli import run_cli

CRASP = [e.name for e in example_programs() if e.file.notation.value == "crasp"]
REFUSED = {"@contains_ab": "Y"}
"""Shipped C-RASP programs outside the counting fragment, with the operator named."""
MAJORITY = "#<['1'] > #<['0']"
NESTED = "#<[#<['a'] > #<['b']] > #<[#<['b'] > #<['a']]"


def _set_eps(model: Transformer, eps: float) -> Transformer:
    for block in model.blocks:
        block.ln1.eps = block.ln2.eps = eps
    return model


def _outputs(model: Transformer, words: list[str]) -> np.ndarray:
    return np.stack([o[:, 0] for o in model.run_words(words)])


@pytest.mark.parametrize("name", CRASP)
def test_every_crasp_program_compiles_and_checks_exact(name: str) -> None:
    """Every word to length 8 and random words to n = 10^4, every position, against the
    program's own interpreter; a program outside the fragment is refused, naming why."""
    prog = load_program(name)
    if name in REFUSED:
        with pytest.raises(HardsoftError, match=REFUSED[name]):
            prog.compile("soft-ln")
        return
    model = prog.compile("soft-ln")
    reference, numeric, _ = program_reference(model, prog)
    rep = check_model(
        model, reference, readout="outputs", numeric=numeric, exhaustive_max_n=8,
        random_n=[100, 1000, 10_000], samples=3, seed=7,
    )  # fmt: skip
    assert rep["mismatches"] == 0, rep["first_mismatch"]
    assert rep["exhaustive_lengths"] == list(range(1, 9))
    assert rep["max_abs_error"] < 1e-9
    assert class_violations(model, column("soft-ln")) == []
    cert = model.meta["certificate"]
    assert cert["float_limits"]["float64"] >= 10**5  # exact at 10^5 in float64, proven
    assert cert["layer_norm"]["eps"] == 0.0 and cert["route"] == "C-RASP"


def test_the_model_is_in_the_layer_norm_class() -> None:
    model = compile_formula(MAJORITY, "01", target="soft-ln")
    spec = model.spec
    assert str(spec.layer_norm) == "post" and spec.ln_eps == 0.0
    heads = [h for layer in spec.layers for h in layer.heads]
    assert heads and all(str(h.weighting) == "softmax" and h.tau is None for h in heads)
    assert all(str(h.mask) == "future" for h in heads)
    assert spec.bounded_positions and set(spec.position_features) == {"1", "[i=1]"}
    cert = model.meta["certificate"]
    assert cert["n_independent"] and cert["tau"] == [] and "Yang & Chiang" in cert["theorem"]
    assert "first position" in cert["deviations"]


def test_layer_norm_with_eps_zero_is_exact() -> None:
    """(z, −z, 0, ..., 0) ↦ ±√(d/2) for z of any size (a pure rescaling, no ε)."""
    d = 10
    norm = LayerNorm(d, 0.0).double()
    for z in (1e-150, 1e-8, 0.5, 3e5):
        x = torch.zeros(1, d, dtype=torch.float64)
        x[0, 0], x[0, 1] = z, -z
        y = norm(x)[0]
        want = torch.tensor([1.0, -1.0], dtype=torch.float64) * (d / 2) ** 0.5
        assert torch.allclose(y[:2], want, rtol=1e-15, atol=0)
        assert bool((y[2:] == 0).all())


def _min_variance(model: Transformer, words: list[str]) -> float:
    """The smallest variance any layer norm of ``model`` is fed on ``words``."""
    seen: list[float] = []

    def hook(module, args) -> None:
        x = args[0]
        seen.append(float(((x - x.mean(-1, keepdim=True)) ** 2).mean(-1).min()))

    handles = [
        m.register_forward_pre_hook(hook) for m in model.modules() if isinstance(m, LayerNorm)
    ]
    try:
        model.run_words(words)
    finally:
        for h in handles:
            h.remove()
    assert seen
    return min(seen)


@pytest.mark.parametrize("formula, alphabet", [
    (MAJORITY, "01"),
    ("#<['('] = #<[')'] & #<[#<['('] < #<[')']] = 0", "()"),
    ("#<['a'] = #<['b'] & #<['a' & #<['b'] > 0] = 0", "ab"),
])  # fmt: skip
def test_layer_norm_never_sees_zero_variance(formula: str, alphabet: str) -> None:
    """Every layer norm input holds the pair of ``one`` (or of the outputs) at ±F ≠ 0: its
    variance is at least F² = (one/i)²·(2B/d) > 0. Checked on every word up to 8, and at
    n = 2000 (variance ≈ 1/n², far above 0)."""
    model = compile_formula(formula, alphabet, target="soft-ln")
    words = ["".join(w) for k in range(1, 9) for w in itertools.product(alphabet, repeat=k)]
    assert _min_variance(model, words) > 1e-4
    long = [alphabet[0] * 2000, alphabet[-1] * 2000, (alphabet * 1000)]
    assert _min_variance(model, long) > 1e-9


@pytest.mark.parametrize("formula, operator", [
    ("Y '1'", "Y"), ("'0' S '1'", "S"), ("MOD(2, 1)(#<['1'])", "MOD of a count"),
])  # fmt: skip
def test_outside_the_fragment_is_refused_with_the_reason(formula: str, operator: str) -> None:
    with pytest.raises(HardsoftError, match="outside it") as exc:
        compile_formula(formula, "01", target="soft-ln")
    assert operator in str(exc.value) and "\n" not in str(exc.value)


def test_cli_refusals_are_one_line(tmp_path) -> None:
    res = run_cli("compile", "X '1'", "--alphabet", "01", "--target", "soft-ln")
    assert res.rc == 2 and res.err.startswith("error:") and "looks to the right" in res.err
    out = tmp_path / "m.safetensors"
    res = run_cli("program", "compile", "@ab_plus", "--target", "soft-ln", "-o", str(out))
    assert res.rc == 2 and "B-RASP" in res.err and res.err.count("\n") == 1
    assert not out.exists()


def test_p_is_written_by_counts() -> None:
    model = compile_formula("P '1' & !'0'", "01", target="soft-ln")
    words = ["".join(w) for k in range(1, 9) for w in itertools.product("01", repeat=k)]
    phi = parse("P '1' & !'0'", alphabet=("0", "1"))
    for k in range(1, 9):
        batch = [w for w in words if len(w) == k]
        assert np.array_equal(_outputs(model, batch) > 0.5, evaluate(phi, batch, ["0", "1"]) > 0)
    assert "P" in model.meta["certificate"]["deviations"]


# ------------------------------------------------------------------ long inputs
def _random_words(alphabet: str, n: int, count: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(list(alphabet), n)) for _ in range(count)]


@pytest.mark.parametrize("name", [n for n in CRASP if n not in REFUSED])
def test_exact_at_ten_thousand_float64(name: str) -> None:
    prog = load_program(name)
    model = prog.compile("soft-ln")
    reference, numeric, _ = program_reference(model, prog)
    rep = check_model(model, reference, readout="outputs", numeric=numeric, exhaustive_max_n=0,
                      random_n=[10_000], samples=2, seed=3)  # fmt: skip
    assert rep["mismatches"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CRASP if n not in REFUSED])
def test_exact_at_ten_to_the_five_float64(name: str) -> None:
    prog = load_program(name)
    model = prog.compile("soft-ln")
    assert model.meta["certificate"]["float_limits"]["float64"] >= 10**5
    reference, numeric, _ = program_reference(model, prog)
    rep = check_model(model, reference, readout="outputs", numeric=numeric, exhaustive_max_n=0,
                      random_n=[100_000], samples=2, seed=5, chunk_size="auto")  # fmt: skip
    assert rep["mismatches"] == 0


@pytest.mark.floatcmp  # a float32 run at its derived limit: per CPU path
def test_float32_exact_at_its_certified_limit() -> None:
    """The derived float32 limit is a sound (conservative) bound: exact there."""
    for formula, alphabet, lang in [(MAJORITY, "01", "majority"),
                                    ("#<['('] = #<[')'] & #<[#<['('] < #<[')']] = 0", "()",
                                     "dyck1")]:  # fmt: skip
        model = compile_formula(formula, alphabet, target="soft-ln")
        limit = min(model.meta["certificate"]["float_limits"]["float32"], 20_000)
        rep = check_language(model.to(torch.float32), lang, exhaustive_max_n=0,
                             random_n=[limit], samples=4, seed=2)  # fmt: skip
        assert rep["mismatches"] == 0, (formula, limit)


# ------------------------------------------------------------------ ε > 0
def _margin_at_last(model: Transformer, words: list[str]) -> float:
    return float(np.abs(_outputs(model, words)[:, -1] - 0.5).min())


def test_eps_collapses_the_margin_where_the_certificate_says() -> None:
    """MAJORITY at ε = 1e-5: the margin is at least the certificate's lower bound at every n,
    at least 1/4 up to its n, and below 1/4 from its other n; the answers stay right."""
    from hardsoft.compile import ln_bounds

    model = compile_formula(MAJORITY, "01", target="soft-ln")
    cert = model.meta["certificate"]["layer_norm"]["eps_effect"]["at"]
    row = next(r for r in cert if r["eps"] == 1e-5)
    lo, hi = row["margin_at_least_quarter_up_to_n"], row["margin_below_quarter_from_n"]
    assert 150 < lo < hi < 400 and row["exact_up_to_n"] is None
    _set_eps(model, 1e-5)
    shapes = ln_bounds.shapes(_ln(MAJORITY, "01"))
    for n in (10, 50, lo, hi, 2 * hi):
        words = _random_words("01", n, 8, seed=n) + ["10" * (n // 2) + "1" * (n % 2)]
        measured = _margin_at_last(model, words)
        assert measured >= ln_bounds.margin_bounds(shapes, n, 1e-5)[0] - 1e-12
        if n <= lo:
            assert measured >= 0.25
        if n >= hi:
            assert measured < 0.25
        rep = check_language(model, "majority", exhaustive_max_n=0, random_n=[n], samples=8)
        assert rep["mismatches"] == 0  # one comparison layer: ε shrinks the margin only


def _ln(formula: str, alphabet: str):
    from hardsoft.compile.ir import lower_all
    from hardsoft.compile.layernorm import build_ln_model

    alpha = tuple(alphabet)
    roots = lower_all([parse(formula, alphabet=alpha)], alpha, True, False)
    return build_ln_model(roots, alpha, (), formula)


def test_eps_breaks_a_count_of_comparisons_above_the_certified_n() -> None:
    """A count of comparison results weighs position j by r_j = (1 + ε/σ_j²)^(-1/2): at
    ε = 1e-5 the nested comparison ties on a^k b^(3k−1) (#<[a > b] = #<[b > a] at the end) and
    the weighted counts break the tie from n = 71; the certificate proves exactness only to a
    smaller n (never past a failure), and exact at ε = 0."""
    model = compile_formula(NESTED, "ab", target="soft-ln")
    phi = parse(NESTED, alphabet=("a", "b"))
    row = next(r for r in model.meta["certificate"]["layer_norm"]["eps_effect"]["at"]
               if r["eps"] == 1e-5)  # fmt: skip
    proven = row["exact_up_to_n"]
    words = ["a" * k + "b" * (3 * k - 1) for k in range(1, 40)]
    wrong_at = []
    for eps in (0.0, 1e-5):
        _set_eps(model, eps)
        for w in words:
            got = _outputs(model, [w])[0] > 0.5
            want = evaluate(phi, [w], ["a", "b"])[0] > 0
            if not np.array_equal(got, want):
                wrong_at.append((eps, len(w)))
                break
    assert wrong_at and wrong_at[0][0] == 1e-5  # ε = 0: exact on every word
    first = wrong_at[0][1]
    assert proven is not None and proven < first <= 120, (proven, first)


# ------------------------------------------------------------------ PARITY (Chiang & Cholak)
def test_parity_is_exact_at_the_last_position() -> None:
    model = parity_layernorm()
    assert class_violations(model, column("soft-ln")) == []
    assert model.spec.ln_eps == 0.0 and str(model.spec.layer_norm) == "post"
    assert all(str(h.spec.mask) == "none" for b in model.blocks for h in b.heads)
    rep = check_language(model, "parity-even", exhaustive_max_n=12, random_n=[1000, 10_000],
                         samples=6, seed=4)  # fmt: skip
    assert rep["mismatches"] == 0 and rep["positions"] == "last"
    assert rep["checked_positions"] == rep["checked_strings"]  # one position per word
    assert rep["max_abs_error"] < 1e-12
    for k in range(1, 13):  # independent of the oracle: the count of 1s
        words = ["".join(w) for w in itertools.product("01", repeat=k)]
        got = _outputs(model, words)[:, -1] > 0.5
        assert np.array_equal(got, np.array([w.count("1") % 2 == 0 for w in words]))


@pytest.mark.slow
def test_parity_exact_at_ten_to_the_five() -> None:
    model = parity_layernorm()
    words = _random_words("01", 100_000, 3, seed=9) + ["1" * 100_000, "1" * 99_999 + "0"]
    got = _outputs(model, words)[:, -1] > 0.5
    assert np.array_equal(got, np.array([w.count("1") % 2 == 0 for w in words]))


def test_parity_eps_keeps_the_answer_and_collapses_the_margin() -> None:
    from hardsoft.compile import parity_ln

    model = parity_layernorm()
    d = model.spec.d_model
    row = next(r for r in model.meta["certificate"]["layer_norm"]["eps_effect"]["at"]
               if r["eps"] == 1e-5)  # fmt: skip
    lo, hi = row["margin_at_least_quarter_up_to_n"], row["margin_below_quarter_from_n"]
    _set_eps(model, 1e-5)
    for n in (4, lo, hi, 4 * hi, 200):
        words = _random_words("01", n, 8, seed=n) + ["1" * n]
        out = _outputs(model, words)[:, -1]
        assert np.array_equal(out > 0.5, np.array([w.count("1") % 2 == 0 for w in words]))
        measured = float(np.abs(out - 0.5).min())
        assert measured >= parity_ln.margin(d, n, 1e-5)[0] - 1e-12
        assert (measured >= 0.25) if n <= lo else True
        assert (measured < 0.25) if n >= hi else True


def test_parity_cli_builds_and_checks(tmp_path) -> None:
    out = tmp_path / "parity.safetensors"
    res = run_cli("program", "parity", "--target", "soft-ln", "-o", str(out), "--json")
    assert res.rc == 0, res.err
    res = run_cli("check", str(out), "--language", "parity-even", "--exhaustive-max-n", "9",
                  "--random-n", "500", "--json")  # fmt: skip
    assert res.rc == 0 and '"positions": "last"' in res.out
    res = run_cli("program", "parity", "--route", "logic", "-o", str(out))
    assert res.rc == 2 and "no logic route" in res.err

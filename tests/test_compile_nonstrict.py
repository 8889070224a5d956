"""Non-strict masks (``masks="nonstrict"``): only the masks none, future (j ≤ i) and past
(j ≥ i), following Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Prop. 11 and Thms. 12, 13,
15, 16. Checked against the independent logic evaluator; the heavy matrix is in
test_compile_nonstrict_slow.py."""

from __future__ import annotations

import functools
import itertools
import subprocess
import sys

import numpy as np
import pytest
import torch

from hardsoft.compile import TARGETS, compile_formula
from hardsoft.compile import bounds as B
from hardsoft.errors import HardsoftError
from hardsoft.logic import FORMULAS, evaluate, parse, random_formula
from hardsoft.logic.random import PAST_OPERATORS
from hardsoft.model import load_model, read_metadata, save_model

NONSTRICT_MASKS = {"none", "future", "past"}


@functools.cache
def compiled(text: str, alphabet: str, target: str, causal: bool = False):
    return compile_formula(text, alphabet, target, causal, masks="nonstrict")


def all_ids(k: int, n: int) -> np.ndarray:
    return np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)


def assert_agrees(model, formula, alphabet: str, ids: np.ndarray) -> None:
    with torch.no_grad():
        out = model(torch.from_numpy(ids)).outputs[..., 0].numpy()
    ref = evaluate(formula, ids, list(alphabet)).astype(np.float64)
    err = np.abs(out - ref)
    if err.max() > 1e-9:
        b, p = np.unravel_index(int(err.argmax()), err.shape)
        word = "".join(alphabet[c] for c in ids[b])
        raise AssertionError(f"{word!r} at {p + 1}: model {out[b, p]}, reference {ref[b, p]}")


def masks_of(model) -> set[str]:
    return {str(h.mask) for layer in model.spec.layers for h in layer.heads}


OPERATOR_CASES = [
    ("first | last", "01"),
    ("first & '1' | last & '0'", "01"),
    ("'a' -> Y 'b'", "ab"),
    ("X '1' & Y '0'", "01"),
    ("Y Y '1' | X X '0'", "01"),
    ("'0' S '1'", "01"),
    ("'0' U '1'", "01"),
    ("P '1' & !F '0'", "01"),
    ("E ('a' & X 'b')", "abc"),
    ("#<['1'] > #<['0']", "01"),
    ("#>['a'] != #>['b']", "ab"),
    ("#<['1'] <= #>['0']", "01"),
    ("i < n - 1", "01"),
    ("MOD(3, 1)(i) & MOD(2, 0)(2 * i + 1) | MOD(4, 2)(3 * i)", "01"),
    ("MOD(2, 1)(#<['1'])", "01"),
    ("MOD(3, 0)(#>['b'] - i)", "ab"),
    ("#<[Y '1'] = #>['1']", "01"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("text,alphabet", OPERATOR_CASES)
def test_every_operator_matches_evaluator(text: str, alphabet: str, target: str) -> None:
    formula = parse(text, alphabet=alphabet)
    model = compiled(text, alphabet, target)
    assert masks_of(model) <= NONSTRICT_MASKS
    for n in range(1, (7 if len(alphabet) == 2 else 5) + 1):
        assert_agrees(model, formula, alphabet, all_ids(len(alphabet), n))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(FORMULAS))
def test_shipped_formulas(name: str, target: str) -> None:
    entry = FORMULAS[name]
    model = compiled(entry.text, entry.alphabet, target)
    assert masks_of(model) <= NONSTRICT_MASKS
    for n in range(1, (8 if len(entry.alphabet) == 2 else 5) + 1):
        assert_agrees(model, entry.formula, entry.alphabet, all_ids(len(entry.alphabet), n))


@pytest.mark.parametrize("seed", range(3))
def test_random_formulas_all_targets(seed: int) -> None:
    formula = random_formula(3000 + seed, "01", depth=4)
    for target in TARGETS:
        model = compile_formula(formula, "01", target, masks="nonstrict")
        assert masks_of(model) <= NONSTRICT_MASKS
        for n in range(1, 7):
            assert_agrees(model, formula, "01", all_ids(2, n))
        ids = np.random.default_rng(seed).integers(0, 2, size=(3, 80))
        assert_agrees(model, formula, "01", ids)


@pytest.mark.parametrize("name", ["parity-count", "dyck1", "ngram-abc"])
def test_soft_temperature_long_random_strings(name: str) -> None:
    entry = FORMULAS[name]
    model = compiled(entry.text, entry.alphabet, "soft-temperature")
    ids = np.random.default_rng(2).integers(0, len(entry.alphabet), size=(2, 1000))
    assert_agrees(model, entry.formula, entry.alphabet, ids)


CAUSAL_CASES = [
    ("'c' & Y ('b' & Y 'a')", "abc"),
    ("'0' S ('1' & Y '1')", "01"),
    ("first | Y first & P '1'", "01"),
    ("#<['1'] > #<['0'] & P '1'", "01"),
    ("MOD(3, 2)(#<['a'] - 2 * #<['b'] + i)", "ab"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("text,alphabet", CAUSAL_CASES)
def test_causal_uses_only_the_future_mask(text: str, alphabet: str, target: str) -> None:
    formula = parse(text, alphabet=alphabet)
    model = compiled(text, alphabet, target, True)
    assert masks_of(model) == {"future"}
    for n in range(1, (7 if len(alphabet) == 2 else 5) + 1):
        assert_agrees(model, formula, alphabet, all_ids(len(alphabet), n))


@pytest.mark.parametrize("seed", range(2))
def test_random_past_formulas_causal(seed: int) -> None:
    formula = random_formula(4000 + seed, "ab", depth=4, operators=PAST_OPERATORS)
    for target in TARGETS:
        model = compile_formula(formula, "ab", target, causal=True, masks="nonstrict")
        assert masks_of(model) <= {"future"}
        for n in range(1, 7):
            assert_agrees(model, formula, "ab", all_ids(2, n))


def _prefix_activations(model, prefix: np.ndarray, extensions: list[np.ndarray]) -> float:
    """The largest difference, over every traced activation (embeddings, every head's output,
    every residual) at positions 1..len(prefix), between the prefix alone and each extension."""
    k = prefix.shape[1]
    with torch.no_grad():
        base = model(torch.from_numpy(prefix), trace=True).trace
        worst = 0.0
        for ext in extensions:
            full = np.concatenate([prefix, ext], axis=1)
            trace = model(torch.from_numpy(full), trace=True).trace
            for name, value in base.items():
                if name.endswith(".pattern") or value.numel() == 0:
                    continue
                diff = (trace[name][:, :k] - value).abs().max().item()
                worst = max(worst, diff)
    return worst


N_FREE = [
    ("'c' & Y ('b' & Y 'a') | first", "abc", ("hard", "soft-pe")),
    ("'0' S ('1' & Y '1') & !P '0'", "01", ("hard", "soft-pe")),
    ("#<['1'] > #<['0'] & P '1'", "01", ("hard", "soft-pe")),
    ("MOD(3, 1)(#<['1']) | MOD(2, 1)(i)", "01", ("hard",)),
]


@pytest.mark.parametrize("text,alphabet,targets", N_FREE)
def test_theorem16_computation_does_not_depend_on_n(text: str, alphabet: str, targets) -> None:
    """Yang et al. (arXiv:2412.09925v1) Thm. 16: with non-strict future masks, the hard and soft-pe
    models use no n-dependent feature and no τ(n), so every activation at positions 1..i (outputs
    before rounding included) is the same for every extension of a prefix."""
    rng = np.random.default_rng(5)
    prefix = rng.integers(0, len(alphabet), size=(6, 9))
    extensions = [rng.integers(0, len(alphabet), size=(6, m)) for m in (1, 7, 40)]
    for target in targets:
        model = compiled(text, alphabet, target, True)
        cert = model.meta["certificate"]
        assert cert["n_independent"], cert["n_dependent_features"] + cert["heads_with_tau"]
        assert _prefix_activations(model, prefix, extensions) <= 1e-12
    # the property is real: a τ(n) model (and soft-pe's n-scaled lookup) computes differently
    for target in {"soft-temperature", "soft-pe"} - set(targets):
        model = compiled(text, alphabet, target, True)
        assert not model.meta["certificate"]["n_independent"]
        assert _prefix_activations(model, prefix, extensions) > 1e-9


def test_saved_nonstrict_spec_has_no_strict_mask(tmp_path) -> None:
    model = compile_formula(
        "'0' S '1' & X '1' | #<['1'] = #>['0'] & last", "01", "soft-temperature", masks="nonstrict"
    )
    path = tmp_path / "m.safetensors"
    save_model(model, path)
    spec = read_metadata(path)["spec"]
    masks = {h["mask"] for layer in spec["layers"] for h in layer["heads"]}
    assert masks <= NONSTRICT_MASKS and not any(m.startswith("strict") for m in masks)
    assert load_model(path).meta["certificate"]["masks_mode"] == "nonstrict"
    strict = compile_formula("'0' S '1' & X '1'", "01", "soft-temperature", masks="strict")
    assert {"strict-future", "strict-past"} <= masks_of(strict)


def test_certificate_names_the_theorem_of_every_head() -> None:
    model = compile_formula(
        "first | last | Y '1' | '0' S '1' | #<['1'] > 2 | MOD(2, 0)(#<['0'])",
        "01",
        "soft-temperature",
        masks="nonstrict",
    )
    heads = model.meta["certificate"]["heads"]
    assert "Thm. 15" in model.meta["certificate"]["constructions"]["S/U/P/F"]
    cited = {h["gadget"]: h["theorem"] for h in heads}
    stated = [h["theorem"] for h in heads if h["theorem"].endswith("(as stated)")]
    own = [h["theorem"] for h in heads if h["theorem"].startswith("own construction (")]
    assert len(stated) + len(own) == len(heads)
    assert all(t.startswith("Yang et al. (arXiv:2412.09925v1) ") for t in stated)
    assert all("cf. Yang et al. (arXiv:2412.09925v1) " in t for t in own)
    assert cited["prev-even"] == "Yang et al. (arXiv:2412.09925v1) Thm. 12 (as stated)"
    assert cited["shift-past-nonstrict"].startswith("own construction")
    assert "Prop. 11a" in cited["first"] and "Prop. 11b" in cited["last"]
    assert "Thm. 12" in cited["prev-even"] and "Thm. 12" in cited["prev-odd"]
    assert "Thm. 15" in cited["shift-past-nonstrict"]
    assert "Thm. 20" in cited["lookup-pre"] and "Thm. 20" in cited["sign-pre"]
    causal = compile_formula("Y '1' | '0' S '1'", "01", "hard", causal=True, masks="nonstrict")
    cited = {h["gadget"]: h["theorem"] for h in causal.meta["certificate"]["heads"]}
    assert "Thm. 13" in cited["prev-even"] and "Thm. 16" in cited["shift-past-nonstrict"]


@pytest.mark.parametrize("target", ["soft-temperature", "soft-pe"])
def test_parity_heads_within_their_bound(target: str) -> None:
    """The (−1)^i heads of Y: at odd i >= 3 the even-parity head reads φ at i − 1 and its gate
    within ε; at i = 1 its gate is exactly 0 (no even position); at even i the odd-parity
    head reads φ at i − 1."""
    model = compile_formula("Y '1'", "01", target, masks="nonstrict")
    bound = max(h["error_bound"] for h in model.meta["certificate"]["heads"])
    assert bound <= B.ParityBound(B.PARITY_LAMBDA).sup() < 0.05
    names = model.meta["residual"]
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 8, 33, 300):
        ids = rng.integers(0, 2, size=(4, n))
        with torch.no_grad():
            mid = model(torch.from_numpy(ids), trace=True).trace["blocks.0.resid_mid"].numpy()
        col = {nm: mid[..., names.index(nm)] for nm in names}
        gates = sorted(nm for nm in names if nm.startswith("parity_gate"))
        values = sorted(
            (nm for nm in names if nm.startswith("parity_att")), key=lambda s: int(s.split(":")[1])
        )
        even_gate, odd_gate = gates
        even_val, odd_val = values
        prev = np.zeros_like(ids, dtype=float)
        prev[:, 1:] = ids[:, :-1]
        i = np.arange(1, n + 1)
        odd_i, even_i = (i % 2 == 1) & (i >= 3), i % 2 == 0
        assert np.all(col[even_gate][:, 0] == 0.0)
        if odd_i.any():
            assert np.abs(col[even_val][:, odd_i] - prev[:, odd_i]).max() <= bound
            assert np.abs(col[even_gate][:, odd_i] - 1).max() <= bound
        if even_i.any():
            assert np.abs(col[odd_val][:, even_i] - prev[:, even_i]).max() <= bound
            assert np.abs(col[odd_gate][:, even_i] - 1).max() <= bound


def test_bounds_really_bound_the_softmax_mass() -> None:
    """The parity, non-strict shift and linear-key sign bounds against the exact softmax of
    their scaled scores (soft-temperature form; soft-pe has the same scores with n -> i)."""
    lam = B.PARITY_LAMBDA
    for n in (2, 3, 9, 50):
        for i in range(2, n + 1):
            j = np.arange(1, i + 1)
            even = i % 2 == 1  # odd i reads the nearest even position
            sign = np.where(j % 2 == 0, 1.0, -1.0) * (1.0 if even else -1.0)
            s = lam * n * sign + lam * j
            w = np.exp(s - s.max())
            assert 1 - w[i - 2] / w.sum() <= B.ParityBound(lam).at(n) + 1e-15
    lam = B.LINEAR_SIGN_LAMBDA
    for i in (2, 3, 10, 77):
        j = np.arange(1, i + 1)
        for d in range(-i - 1, i + 2):
            x = (d + 0.5) / i
            s = lam * x * j * np.where(j % 2 == 0, 1.0, -1.0)
            w = np.exp(s - s.max())
            even = w[j % 2 == 0].sum() / w.sum()
            assert abs(even - float(x > 0)) <= B.LinearSignBound(0.5, lam).at(i) + 1e-15


def test_bad_masks_is_one_line() -> None:
    with pytest.raises(HardsoftError, match="mask mode"):
        compile_formula("'1'", "01", masks="loose")
    res = subprocess.run(
        [sys.executable, "-c", "from hardsoft.cli import main; main()", "compile", "'1'"]
        + ["-a", "01", "--masks", "loose"],
        capture_output=True,
        text=True,
    )
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: unknown mask")


def test_certified_nonstrict_temperature_is_sufficient() -> None:
    """The compiler experiment's bisection on a non-strict model: the certified τ is exact
    (s = 1 works) and a much softer τ is not."""
    from hardsoft.experiments.compiler import largest_exact_factor

    for text in ("Y '1'", "'0' S '1'"):
        s = largest_exact_factor(text, "01", 32, strings=4, seed=0, masks="nonstrict")
        assert 1.0 <= s < 2.0**10


@pytest.mark.parametrize("name", ["suffix-abc", "ngram-abc", "first"])
def test_conjunctions_fold_into_the_parity_ramps(name: str) -> None:
    """A ``&`` of a non-strict ``Y``/``X`` (or Prop. 11 flag) with exact inputs is folded into
    the pending ramps (``¬`` too), so n-gram formulas need no more layers than with strict
    masks; the models stay exact (checked above and here)."""
    entry = FORMULAS[name]
    for target in TARGETS:
        strict = compile_formula(entry.text, entry.alphabet, target)
        loose = compiled(entry.text, entry.alphabet, target)
        assert loose.meta["certificate"]["layers"] == strict.meta["certificate"]["layers"]
        for n in range(1, 6):
            assert_agrees(loose, entry.formula, entry.alphabet, all_ids(len(entry.alphabet), n))
    for text in ("'1' & !Y '0'", "'0' & !first & '0'", "!last & '1'"):
        negated = compile_formula(text, "01", "hard", masks="nonstrict")
        assert negated.meta["certificate"]["layers"] == 1
        for n in range(1, 8):
            assert_agrees(negated, parse(text, alphabet="01"), "01", all_ids(2, n))

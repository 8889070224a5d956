"""The logic route to the §6 tasks (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1), cf.
Corollary 17), the two-route ``program`` command, symbol-valued outputs in ``check`` and ``run``.

Ground truth is independent of the models: the task oracles (``prefix_reference`` in
``hardsoft.languages``) and the logic evaluator. The heavy matrix is in test_routes_slow.py.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from hardsoft.check import INVALID, check_formula, check_language, symbol_readout
from hardsoft.cli import app, main
from hardsoft.cli.common import expand_named, formula_options
from hardsoft.compile import compile_formula
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language
from hardsoft.logic import Not, Prev, Since, Sym, evaluate
from hardsoft.model import load_model
from hardsoft.programs.ahat.logic_route import any_of, task_formulas, task_reference_name
from hardsoft.programs.ahat.routes import build, check_route, tau_ratio

runner = CliRunner()
TASKS = [("induction-head", None), ("khop", 2), ("khop", 3), ("flipflop", None)]


def _words(alphabet, n: int) -> list[str]:
    return ["".join(p) for p in itertools.product(alphabet, repeat=n)]


def _read(outs: dict[str, np.ndarray], names: list[str], alphabet) -> np.ndarray:
    """The oracle's encoding of evaluator outputs (symbol index, -1 none, -2 invalid)."""
    return symbol_readout(np.stack([outs[nm] for nm in names], -1), names, alphabet)


def _formula_targets(name: str, k, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(what the formulas say, what the oracle says) at every position of ``words``."""
    formulas, alphabet = task_formulas(name, k)
    lang = get_language(task_reference_name(name, k))
    outs = {nm: evaluate(f, words, alphabet) for nm, f in formulas.items()}
    ref = np.stack([lang.prefix_reference(w) for w in words])
    if name == "flipflop":
        return outs["accept"].astype(np.int64), ref
    return _read(outs, list(formulas), alphabet), ref


@pytest.mark.parametrize("name, k", TASKS)
def test_formulas_match_the_oracle_exhaustively(name: str, k) -> None:
    """Every word up to length 6 (4 letters) / 5 (flip-flop's 5 letters): the formulas give
    the task's target at every position (the no-answer positions included)."""
    alphabet = task_formulas(name, k)[1]
    for n in range(1, 7 if len(alphabet) == 4 else 6):
        got, want = _formula_targets(name, k, _words(alphabet, n))
        assert np.array_equal(got, want), (name, k, n)


@pytest.mark.parametrize("name, k", TASKS)
def test_formulas_match_the_oracle_on_long_random_words(name: str, k) -> None:
    lang = get_language(task_reference_name(name, k))
    rng = np.random.default_rng(7)
    for n in (300, 2000):
        words = lang.sample_uniform(n, 6, rng)
        if name == "flipflop":  # uniform words fail at once; members exercise the reads
            words += lang.sample_positive(n, 4, rng) + lang.sample_negative(n, 4, rng)
        got, want = _formula_targets(name, k, words)
        assert np.array_equal(got, want)
        if name == "flipflop":
            assert want[:, -1].sum() == 4  # the members are accepted at their last position


def test_at_find_needs_the_not_previous_conjunct() -> None:
    """Negative control: without ``¬Y Q_σ`` at i, 'abaa' reads both the a at find(4) = 4 and
    the b after the earlier a, so the check above can fail."""
    alphabet = "abcd"

    def naive(chi):
        return any_of(
            Sym(s) & ((Prev(Sym(s)) & chi) | Since(Not(Prev(Sym(s))), Prev(Sym(s)) & chi))
            for s in alphabet
        )

    words = _words(alphabet, 4)
    outs = {a: evaluate(naive(Sym(a)), words, alphabet) for a in alphabet}
    got = _read(outs, list(alphabet), alphabet)
    ref = np.stack([get_language("induction-head").prefix_reference(w) for w in words])
    bad = [w for w, g, r in zip(words, got, ref) if not np.array_equal(g, r)]
    assert "abaa" in bad and got[words.index("abaa"), 3] == INVALID


def test_symbol_readout() -> None:
    names = ["a", "b", "none"]
    outs = np.array(
        [
            [0.0, 1.0, 0.0],  # b
            [0.0, 0.0, 1.0],  # none
            [1.0, 1.0, 0.0],  # two symbols: invalid
            [0.0, 0.0, 0.0],  # no symbol but none says 0: invalid
            [1.0, 0.0, 1.0],  # a symbol and none: invalid
            [0.9, 0.1, 0.2],  # a (> 1/2)
        ]
    )
    assert symbol_readout(outs, names, "ab").tolist() == [1, -1, INVALID, INVALID, INVALID, 0]
    assert symbol_readout(outs[:, :2], names[:2], "ab").tolist() == [1, -1, INVALID, -1, 0, 0]


@pytest.mark.parametrize("name, k", TASKS[:2] + TASKS[3:])
@pytest.mark.parametrize("target", ["hard", "soft-temperature"])
def test_logic_route_models_are_exact(name: str, k, target: str) -> None:
    """Quick subset of the slow matrix: exhaustive to n = 4, random words at n = 300."""
    r = build(name, k, target, route="logic")
    assert r.route == "logic" and r.model.spec.output_names == tuple(r.formulas)
    rep = check_language(r.model, r.reference, exhaustive_max_n=4, random_n=[300], samples=3)
    assert rep["mismatches"] == 0 and rep["max_abs_error"] < 1e-9
    assert (
        rep["checked_positions"]
        == sum(len(r.model.spec.alphabet) ** n * n for n in range(1, 5)) + 3 * 300
    )  # every position, the no-answer ones included
    rep = check_formula(r.model, r.formulas, exhaustive_max_n=3, random_n=[], samples=1)
    assert rep["mismatches"] == 0


def test_logic_route_check_detects_a_wrong_task() -> None:
    """The induction head's model is not a 2-hop model: the check says so, at a position where
    the oracles really differ."""
    r = build("induction-head", None, "hard", route="logic")
    rep = check_language(r.model, "khop2", exhaustive_max_n=4, random_n=[], samples=1)
    assert rep["mismatches"] > 0
    fm = rep["first_mismatch"]
    want = get_language("khop2").prefix_reference(fm["word"])[fm["position"] - 1]
    other = get_language("induction-head").prefix_reference(fm["word"])[fm["position"] - 1]
    assert fm["expected"] == want and fm["got"] == other != want


@pytest.mark.parametrize("name, k", TASKS)
def test_logic_certificate_is_theta_one_over_n(name: str, k) -> None:
    cert = build(name, k, "soft-temperature", route="logic").certificate
    assert cert["route"] == "logic" and "Cor. 18" in cert["theorem"]
    assert cert["theorem"].startswith("own construction (strict mask")  # default strict masks
    assert cert["values"]["1000"]["tau"] == pytest.approx(1 / 8000)
    assert tau_ratio(cert) >= 0.19
    assert cert["bounds_below_margin"] and cert["tau_order"] == "Theta(1/n)"
    assert all(h["weighting"] == "softmax" for h in cert["heads"])
    assert build(name, k, "hard", route="logic").certificate["values"] == {}


def test_tieless_route_is_the_default_and_keeps_its_certificate() -> None:
    r = build("induction-head", None, "soft-temperature")
    assert r.route == "tieless" and r.certificate["route"] == "tieless"
    assert r.model.meta["certificate"]["route"] == "tieless"  # saved with the model
    assert set(r.certificate["values"]["1000"]) >= {"tau", "gamma"}
    assert tau_ratio(r.certificate) < 0.19  # Theta(1/(n log n)): below the logic route's 1/5


@pytest.mark.parametrize(
    "name, route, target, message",
    [
        ("flipflop", "logic", "average-hard", "--route logic builds --target hard"),
        ("flipflop", "tieless", "hard", "--route tieless builds --target average-hard"),
        ("dyck", "logic", "hard", "program dyck has no logic route"),
        ("flipflop", "fast", "hard", "unknown route 'fast'"),
    ],
)
def test_bad_route_or_target(name: str, route: str, target: str, message: str) -> None:
    with pytest.raises(HardsoftError, match=message):
        check_route(name, route, target)


def test_khop_needs_k_on_the_logic_route() -> None:
    with pytest.raises(HardsoftError, match="needs --k"):
        build("khop", None, "hard", route="logic")
    with pytest.raises(HardsoftError, match="takes no --k"):
        build("flipflop", 2, "hard", route="logic")


def test_formula_options() -> None:
    assert formula_options(["'a' & Y 'b'"], ()) == "'a' & Y 'b'"
    assert formula_options(["accept=#<['a'] = 2"], ("accept",)) == "#<['a'] = 2"
    assert formula_options(["#<['a'] = 2"], ("accept",)) == "#<['a'] = 2"
    assert formula_options(["p=Y 'a'", "q=i = 3"], ("p", "q")) == {"p": "Y 'a'", "q": "i = 3"}
    with pytest.raises(HardsoftError, match="NAME one of the model's outputs"):
        formula_options(["Y 'a'", "q=i = 3"], ("p", "q"))
    with pytest.raises(HardsoftError, match="given twice"):
        formula_options(["p=Y 'a'", "p=i = 3"], ("p", "q"))
    with pytest.raises(HardsoftError, match="one output"):
        formula_options(["Y 'a'", "'a'"], ())


def test_expand_named() -> None:
    """``@NAME`` is replaced by the named formula's text, in one formula or per output."""
    parity = "MOD(2, 1)(#<['1'])"
    assert expand_named("@parity-mod") == parity
    assert expand_named("'a' & Y 'b'") == "'a' & Y 'b'"
    assert expand_named({"p": "@parity-mod", "q": "Y '1'"}) == {"p": parity, "q": "Y '1'"}
    with pytest.raises(HardsoftError, match="unknown formula 'nope'"):
        expand_named("@nope")


def test_check_formulas_needs_one_formula_per_output() -> None:
    model = compile_formula({"p": "Y '1'", "q": "P '1'"}, "01", "hard")
    with pytest.raises(HardsoftError, match="no formula for output"):
        check_formula(model, {"p": "Y '1'"}, exhaustive_max_n=2, random_n=[])
    with pytest.raises(HardsoftError, match="has no output 'r'"):
        check_formula(model, {"p": "Y '1'", "q": "P '1'", "r": "'1'"}, exhaustive_max_n=2)
    with pytest.raises(HardsoftError, match="2 named outputs"):
        check_formula(model, "Y '1'", exhaustive_max_n=2)
    bad = check_formula(model, {"p": "Y '1'", "q": "Y '1'"}, exhaustive_max_n=4, random_n=[])
    assert bad["mismatches"] > 0 and bad["first_mismatch"]["read"] == "q"
    w, pos = bad["first_mismatch"]["word"], bad["first_mismatch"]["position"]
    assert evaluate(Since(Sym("1") | Not(Sym("1")), Sym("1")), [w], "01")[0, pos - 1]


# ---------------------------------------------------------------- the CLI


def test_cli_program_logic_route_run_and_check(tmp_path: Path) -> None:
    path = tmp_path / "ih.safetensors"
    res = runner.invoke(
        app,
        ["program", "induction-head", "--route", "logic", "--target", "soft-temperature"]
        + ["-o", str(path), "--json"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["route"] == "logic" and summary["output_names"] == ["a", "b", "c", "d", "none"]
    assert summary["certificate"]["values"]["5000"]["tau"] == pytest.approx(1 / 40000)
    res = runner.invoke(app, ["run", str(path), "--input", "abcabd", "--json"])
    (result,) = json.loads(res.stdout)["results"]
    assert result["output_names"] == ["a", "b", "c", "d", "none"]
    assert len(result["outputs"]) == 6 and all(len(row) == 5 for row in result["outputs"])
    want = get_language("induction-head").reference_symbols("abcabd")
    assert result["symbols"] == [s or "none" for s in want]
    args = ["check", str(path), "--exhaustive-max-n", "4", "--random-n", "300", "--samples", "2"]
    res = runner.invoke(app, [*args, "--language", "induction-head", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["mismatches"] == 0
    res = runner.invoke(app, [*args, "--language", "khop2"])
    assert res.exit_code == 1 and "expected none, got 'b'" in res.stdout.replace("\n", " ")


def test_cli_run_and_check_on_named_outputs(tmp_path: Path) -> None:
    path = tmp_path / "two.safetensors"
    res = runner.invoke(
        app,
        ["compile", "--output", "p=Y '1'", "--output", "q=#<['1'] = 2", "--alphabet", "01"]
        + ["--target", "soft-temperature", "-o", str(path)],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["run", str(path), "--input", "0110", "--json"])
    (r,) = json.loads(res.stdout)["results"]
    assert r["output_names"] == ["p", "q"] and "symbols" not in r
    assert r["outputs"] == [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
    args = ["check", str(path), "--exhaustive-max-n", "5", "--random-n", "40", "--json"]
    res = runner.invoke(app, [*args, "--formula", "p=Y '1'", "--formula", "q=#<['1'] = 2"])
    assert res.exit_code == 0 and json.loads(res.stdout)["mismatches"] == 0
    res = runner.invoke(app, [*args, "--formula", "p=Y '1'", "--formula", "q=#<['1'] = 1"])
    assert res.exit_code == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["program", "flipflop", "--route", "logic", "--target", "average-hard"], "--route logic"),
        (["program", "dyck", "--k", "2", "--route", "logic"], "no logic route"),
        (["program", "flipflop", "--route", "nope"], "unknown route"),
        (["compile", "--output", "=Y '1'", "--alphabet", "01"], "output name is empty"),
        (["compile", "--output", "p=Y '1'", "--output", "p='1'", "-a", "01"], "given twice"),
    ],
)
def test_cli_bad_input_is_one_line(
    tmp_path: Path, argv: list[str], message: str, monkeypatch, capsys
) -> None:
    """Through the entry point ``main``: one line ``error: ...``, exit code 2, no file written."""
    out = tmp_path / "m.safetensors"
    if argv[0] == "program":
        argv = [*argv, "-o", str(out)]
    monkeypatch.setattr(sys, "argv", ["hardsoft", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not out.exists()


@pytest.mark.floatcmp
def test_saved_logic_model_round_trips(tmp_path: Path) -> None:
    r = build("khop", 2, "soft-temperature", route="logic")
    from hardsoft.model import save_model

    save_model(r.model, tmp_path / "k2.safetensors")
    loaded = load_model(tmp_path / "k2.safetensors")
    assert loaded.spec.output_names == ("a", "b", "c", "d", "none")
    assert loaded.meta["certificate"]["values"]["1000"]["tau"] == pytest.approx(1 / 8000)
    words = get_language("khop2").sample_uniform(40, 3, 1)
    assert np.array_equal(np.stack(loaded.run_words(words)), np.stack(r.model.run_words(words)))


@pytest.mark.parametrize("target", ["hard", "soft-temperature"])
def test_logic_route_with_nonstrict_masks(target: str) -> None:
    """The paper's masks only (none, j <= i, j >= i): still exact, still Θ(1/n)."""
    r = build("induction-head", None, target, route="logic", masks="nonstrict")
    masks = {h.mask.value for layer in r.model.spec.layers for h in layer.heads}
    assert masks and not any(m.startswith("strict") for m in masks)
    rep = check_language(r.model, r.reference, exhaustive_max_n=4, random_n=[200], samples=2)
    assert rep["mismatches"] == 0
    if target == "soft-temperature":
        assert tau_ratio(r.certificate) >= 0.19
    with pytest.raises(HardsoftError, match="--masks applies to --route logic"):
        build("induction-head", None, "soft-temperature", masks="nonstrict")


def test_since_with_an_implied_predicate_shifts_on_it_directly() -> None:
    """``¬p S (p ∧ q)``: ψ = p ∧ q implies ¬φ = p, so the shift's predicate is p itself
    (absorption in the IR), which saves a Boolean stage per hop of the logic route."""
    from hardsoft.compile.ir import BShift, lower

    p = Prev(Sym("a"))
    node = lower(Since(Not(p), p & Sym("b")), ("a", "b"))
    assert isinstance(node, BShift) and node.pred == lower(p, ("a", "b"))
    general = lower(Since(Sym("a"), Sym("b")), ("a", "b"))  # b does not imply ¬a
    assert isinstance(general, BShift) and general.pred != lower(Sym("b"), ("a", "b"))
    assert build("induction-head", None, "hard", route="logic").sizes["layers"] == 3

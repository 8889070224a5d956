"""The "done when" matrix of the logic route (``pytest -m slow``): induction head, 2-hop (and
3-hop) and flip-flop by both routes and both of each route's targets, checked against the task
oracles exhaustively to n = 5 and on random words at n = 300 and 2000, plus the CLI path and
the τ bisection."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hardsoft.check import check_language
from hardsoft.cli import app
from hardsoft.model.spec import eval_tau
from hardsoft.programs.ahat.routes import ROUTE_TARGETS, build, largest_exact_tau_logic, tau_ratio
from hardsoft.programs.ahat.tieless import sample_words

pytestmark = pytest.mark.slow
runner = CliRunner()
TASKS = [("induction-head", None), ("khop", 2), ("khop", 3), ("flipflop", None)]
CASES = [
    (name, k, route, target)
    for name, k in TASKS
    for route in ("logic", "tieless")
    for target in ROUTE_TARGETS[route][:2]
]


@pytest.mark.parametrize("name, k, route, target", CASES)
def test_route_is_exact(name: str, k, route: str, target: str) -> None:
    r = build(name, k, target, route=route)
    rep = check_language(
        r.model, r.reference, exhaustive_max_n=5, random_n=[300, 2000], samples=8, seed=11
    )
    assert rep["mismatches"] == 0, rep["first_mismatch"]
    assert rep["exhaustive_lengths"] == [1, 2, 3, 4, 5]
    assert rep["max_abs_error"] < 1e-6
    if route == "logic" and target == "soft-temperature":
        assert tau_ratio(r.certificate) >= 0.19


@pytest.mark.parametrize("name, k", [("induction-head", None), ("khop", 2), ("flipflop", None)])
def test_logic_route_nonstrict_is_exact(name: str, k) -> None:
    r = build(name, k, "soft-temperature", route="logic", masks="nonstrict")
    rep = check_language(
        r.model, r.reference, exhaustive_max_n=5, random_n=[300, 2000], samples=4, seed=12
    )
    assert rep["mismatches"] == 0, rep["first_mismatch"]
    assert tau_ratio(r.certificate) >= 0.19


@pytest.mark.parametrize("name, k", [("induction-head", None), ("khop", 2), ("flipflop", None)])
def test_cli_program_then_check(tmp_path: Path, name: str, k) -> None:
    path = tmp_path / "m.safetensors"
    ks = ["--k", str(k)] if k else []
    res = runner.invoke(
        app,
        ["program", name, *ks, "--route", "logic", "--target", "soft-temperature"]
        + ["-o", str(path), "--json"],
    )
    assert res.exit_code == 0, res.output
    cert = json.loads(res.stdout)["certificate"]
    assert cert["values"]["5000"]["tau"] / cert["values"]["1000"]["tau"] >= 0.19
    language = {"induction-head": "induction-head", "khop": f"khop{k}"}.get(name, name)
    res = runner.invoke(
        app,
        ["check", str(path), "--language", language, "--exhaustive-max-n", "5"]
        + ["--random-n", "300,2000", "--samples", "4", "--json"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["mismatches"] == 0


@pytest.mark.parametrize("name, k", [("induction-head", None), ("flipflop", None)])
def test_largest_exact_tau_is_theta_one_over_n(name: str, k) -> None:
    """The bisected largest exact τ is above the certified τ(n) and falls like 1/n (log-log
    slope within 0.2 of −1 over n = 32 … 512)."""
    r = build(name, k, "soft-temperature", route="logic")
    ns, taus = [32, 128, 512], []
    for n in ns:
        words = sample_words(r.reference, r.model.spec.alphabet, n, 4, 5 * n)
        certified = eval_tau(r.certificate["tau"], n)
        taus.append(largest_exact_tau_logic(r.model, r.formulas, words, lo=certified, iters=14))
        assert taus[-1] >= certified
    slope = math.log(taus[-1] / taus[0]) / math.log(ns[-1] / ns[0])
    assert -1.2 < slope < -0.8

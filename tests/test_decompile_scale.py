"""Decompile at scale: the time budget, the grouped check, exact constants, the comparison with
a language's oracle, and a silent solver. Ground truth stays independent: formulas are judged
by the logic evaluator and the language oracles, models by their own forward pass."""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from hardsoft.classes.budget import BudgetExceeded, budget, check, stage
from hardsoft.classes.conditions import quiet_solver
from hardsoft.compile import compile_formula
from hardsoft.decompile import decompile
from hardsoft.decompile.decompiler import (
    WORDS_PER_LENGTH,
    compare_language,
    exact_constant,
    random_words_upto,
)
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language
from hardsoft.logic import evaluate, parse
from hardsoft.logic.syntax import Const
from hardsoft.model import random_model, save_model


def test_budget_names_the_stage() -> None:
    with budget(0.0001):
        stage("block 2: query class 3 of 9")
        import time

        time.sleep(0.001)
        with pytest.raises(BudgetExceeded, match="during block 2: query class 3 of 9"):
            check()
    check()  # no budget outside: nothing happens


def test_decompile_stops_within_its_budget() -> None:
    model = random_model(
        weighting="rightmost", mask="strict-future", layers=3, heads=2, d_model=16,
        alphabet="01", position_features=("1",), seed=5,
    )  # fmt: skip
    with pytest.raises(
        HardsoftError, match=r"over --budget 0\.5 s, during (layer 0|block|writing|shrinking|check)"
    ):
        decompile(model, budget=0.5)


def test_random_words_share_lengths_and_reach_max_n() -> None:
    words = random_words_upto(("a", "b"), 35, 500, seed=3)
    assert len(words) == 35 and max(len(w) for w in words) == 500
    lengths = [len(w) for w in words]
    groups = [lengths[k : k + WORDS_PER_LENGTH] for k in range(0, 35, WORDS_PER_LENGTH)]
    assert all(len(set(g)) == 1 for g in groups) and len(groups) == 4
    assert random_words_upto(("a",), 0, 9, seed=0) == []


def test_unsatisfiable_past_formula_prints_false() -> None:
    f = parse("P '1' & !P ('1' & !P '1')", "01")
    assert exact_constant(f, ("0", "1")) == Const(False)
    assert exact_constant(parse("P '1' | !P '1'", "01"), ("0", "1")) == Const(True)
    g = parse("P '1' & '0'", "01")
    assert exact_constant(g, ("0", "1")) is g
    h = parse("F '1' & !F '1'", "01")  # future operators: not decided here, left as they are
    assert exact_constant(h, ("0", "1")) is h


def test_readme_uhat_example_is_false_and_checked() -> None:
    model = random_model(
        weighting="leftmost", mask="strict-future", layers=2, heads=2, d_model=16,
        alphabet="01", position_features=("1",), seed=1,
    )  # fmt: skip
    d = decompile(model, verify_n=6, random_words=20, random_max_n=200)
    assert d.formulas == [Const(False)]
    # the propagation keeps only classes that occur (hardsoft.classes.reach): no final class
    # accepts, so the output is false before any simplification (42 nodes when pruned by facts)
    assert d.outputs[0].size_before == 1
    assert d.verified["mismatches"] == 0  # the model itself rejects everywhere


def test_compare_language_names_the_shortest_difference() -> None:
    lang = get_language("contains-ab")
    near = parse("'b' & Y 'a' | P ('b' & Y 'a') | 'a' & first & last", "ab")
    r = compare_language(near, lang, 6)
    assert r["shortest_difference"] == "a" and r["formula_accepts"] and not r["language_accepts"]
    words = [w for n in range(1, 7) for w in ("".join(t) for t in _product("ab", n))]
    want = lang.members(words)
    got = np.array([evaluate(near, [w], "ab")[0, -1] for w in words])
    assert r["differences"] == int((got != want).sum()) and r["words"] == len(words)
    exact = parse("'b' & Y 'a' | P ('b' & Y 'a')", "ab")
    assert compare_language(exact, lang, 6)["equal_to_n"]


def _product(alphabet: str, n: int):
    from itertools import product

    return product(alphabet, repeat=n)


def test_cli_language_and_budget(tmp_path: Path, monkeypatch, capsys) -> None:
    from hardsoft.cli import main

    model = compile_formula("'b' & Y 'a'", alphabet="ab", target="hard")
    path = tmp_path / "m.safetensors"
    save_model(model, path)

    def cli(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["hardsoft", *args])
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = cli("decompile", str(path), "--language", "contains-ab", "--json",
                       "--language-n", "6", "--verify-n", "4", "--random-words", "0")  # fmt: skip
    info = json.loads(out)
    assert code == 1 and info["language"]["shortest_difference"] == "aba"
    assert info["outputs"][0]["size_before_simplification"] >= info["outputs"][0]["size"]
    code, out, _ = cli("decompile", str(path), "--language", "ends-ab", "--language-n", "6")
    assert code == 0 and "equal on every one" in out
    code, _, err = cli("decompile", str(path), "--language", "parity-even")
    assert code == 2 and err.startswith("error:") and "over '01'" in err
    code, _, err = cli("decompile", str(path), "--budget", "0")
    assert code == 2 and "--budget" in err


def test_solver_output_is_silenced(capfd) -> None:
    with quiet_solver():
        os.write(sys.stdout.fileno(), b"HighsMipSolverData::transformNewIntegerFeasibleSolution\n")
    print("after", flush=True)
    assert capfd.readouterr().out == "after\n"


def test_outputs_written_per_query_class_are_exact(monkeypatch) -> None:
    """Forced past the whole-BDD bound, an output is written per query class of the last
    block; the formula still equals the whole one on every word, and the model on its check."""
    import hardsoft.classes.outputs as outputs

    m = random_model(weighting="rightmost", mask="strict-future", layers=2, heads=2,
                     d_model=16, alphabet="01", position_features=("1",), seed=5)  # fmt: skip
    whole = decompile(m, verify_n=0, random_words=0).formulas[0]
    monkeypatch.setattr(outputs, "WHOLE_NODES", 0)
    d = decompile(m, verify_n=6, random_words=20, random_max_n=60)
    assert d.verified["mismatches"] == 0 and d.verified["positions"] > 0
    assert d.formulas[0] != whole  # written the other way
    alphabet = ("0", "1")
    for n in range(1, 9):
        ws = ["".join(t) for t in itertools.product(alphabet, repeat=n)]
        assert (evaluate(d.formulas[0], ws, alphabet) == evaluate(whole, ws, alphabet)).all()


@pytest.mark.parametrize("mask", ["strict-future", "past"])
def test_large_unions_written_in_pieces_are_exact(monkeypatch, mask: str) -> None:
    """Forced to write every union of classes in pieces (query classes of the layer before
    and outcomes), unrefined, a three-layer model's output still equals the model on its
    check and the formula written as one cover on every word to n = 8."""
    import hardsoft.classes.boolean as boolean

    m = random_model(weighting="rightmost", mask=mask, layers=3, heads=2, d_model=16,
                     alphabet="01", position_features=("1",), seed=5)  # fmt: skip
    whole = decompile(m, verify_n=0, random_words=0)
    assert whole.table.preds.pieces_written == 0
    monkeypatch.setattr(boolean, "PIECES_NODES", 0)
    d = decompile(m, verify_n=8, random_words=40, random_max_n=300)
    assert d.table.preds.pieces_written > 0
    assert d.verified["mismatches"] == 0 and d.verified["positions"] > 0
    alphabet = ("0", "1")
    for n in range(1, 9):
        ws = ["".join(t) for t in itertools.product(alphabet, repeat=n)]
        got = evaluate(d.formulas[0], ws, alphabet)
        assert (got == evaluate(whole.formulas[0], ws, alphabet)).all()


def test_shrink_proves_each_step() -> None:
    """A hardened 1* recognizer's formula shrinks to the task's; the result agrees with the
    original on every word to n = 9 by the evaluator (not the automaton that chose the steps).
    Formulas with future operators are shrunk by the two-way automaton."""
    from hardsoft.decompile.shrink import shrink
    from hardsoft.logic.syntax import size

    alphabet = ("0", "1")
    f = parse(
        "'1' & (!P '0' & (MOD(2, 0)(i) & P ('1' & MOD(2, 1)(i)) "
        "| MOD(2, 1)(i) & P ('1' & MOD(2, 0)(i)) | first))",
        alphabet,
    )
    g = shrink(f, alphabet)
    assert g == parse("'1' & !P '0'", alphabet) and size(g) < size(f)
    for n in range(1, 10):
        ws = ["".join(t) for t in itertools.product(alphabet, repeat=n)]
        assert (evaluate(f, ws, alphabet) == evaluate(g, ws, alphabet)).all()
    future = parse("'1' & F ('0' | !'0')", alphabet)
    assert shrink(future, alphabet) == parse("'1' & !last", alphabet)

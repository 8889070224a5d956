"""The long-inputs experiment: its rows check every position against the evaluator (a wrong
model is caught), the DYCK-2 strings are what they claim, and its claim judge reads the metrics."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardsoft.compile import compile_formula
from hardsoft.experiments.long_inputs import (
    FORMULAS,
    QUICK,
    dyck2_rows,
    formula_row,
    word_ids,
)
from hardsoft.model.fastpath import fast_paths
from hardsoft.report.claims import CLAIMS, DEVIATES, EXTENDS


@pytest.mark.parametrize("name", ["PARITY (MOD)", "DYCK-1"])
def test_rows_are_exact_on_both_paths(name: str) -> None:
    formula, alphabet = FORMULAS[name]
    model = compile_formula(formula, alphabet, target="soft-temperature")
    with torch.no_grad(), fast_paths("force"):
        row = formula_row(name, model, 600, QUICK, seed=0)
    assert row["mismatches"] == 0 and row["dense_mismatches"] == 0
    assert row["paths"] and "dense" not in row["paths"]


def test_a_wrong_model_is_counted() -> None:
    """MAJORITY's model checked as if it were PARITY: the row must report mismatches."""
    formula, alphabet = FORMULAS["MAJORITY"]
    model = compile_formula(formula, alphabet, target="soft-temperature")
    with torch.no_grad():
        row = formula_row("PARITY (MOD)", model, 200, QUICK, seed=1)
    assert row["mismatches"] > 0


def test_dyck1_words_are_balanced() -> None:
    ids = word_ids(1000, np.random.default_rng(0), balanced=True)[0]
    depth = np.cumsum(1 - 2 * ids)
    assert depth.min() >= 0 and depth[-1] == 0


def test_dyck2_rows() -> None:
    with torch.no_grad():
        rows = dyck2_rows(64, seed=0)
    assert [r["string"] for r in rows] == ["depth n/2", "random balanced"]
    assert all(r["mismatches"] == 0 and r["n"] == 64 for r in rows)


def test_claim_judge() -> None:
    judge = CLAIMS["long-inputs"].judge
    metrics = {"mismatches": 0, "largest_n": 10**5, "dense_max_n": 4096}
    metrics["speedup_at_dense_max_n"] = {"MAJORITY": 12.0, "DYCK-1": 5.0}
    verdict, key = judge(metrics)
    assert verdict == EXTENDS and "5–12×" in key and "100,000" in key
    assert judge({**metrics, "mismatches": 3})[0] == DEVIATES

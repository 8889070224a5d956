"""``hardsoft check --stream``: a compiled model and the streaming reference of its formula,
side by side over one long input file; mismatches give exit 1 and the first wrong position."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hardsoft.logic import evaluate, parse
from tests._cli import run_cli

PARITY = "MOD(2,1)(#<['1'])"
MAJORITY = "#<['1'] > #<['0']"
N = 12_000


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("check-stream")
    out = {}
    for name, formula in (("parity", PARITY), ("majority", MAJORITY), ("next", "X '1'")):
        path = d / f"{name}.safetensors"
        causal = ("--causal",) if name != "next" else ()
        r = run_cli(
            "compile",
            formula,
            "--alphabet",
            "01",
            "--target",
            "soft-temperature",
            *causal,
            "-o",
            str(path),
        )
        assert r.rc == 0, r.err
        out[name] = path
    rng = np.random.default_rng(5)
    # a random word, then a run of 1s so MAJORITY changes its value along the way
    ids = np.concatenate([rng.integers(0, 2, N - 2000), np.ones(2000, dtype=np.int64)])
    out["word"] = d / "word.txt"
    out["word"].write_text("".join("01"[int(c)] for c in ids) + "\n")
    return out


def _check(model: Path, formula: str, word: Path, *extra: str):
    return run_cli(
        "check",
        str(model),
        "--formula",
        formula,
        "--stream",
        "--input-file",
        str(word),
        "--json",
        *extra,
    )


@pytest.mark.parametrize("name,formula", [("parity", PARITY), ("majority", MAJORITY)])
@pytest.mark.parametrize("chunk", ["1000", "4093"])
def test_compiled_models_pass(files, name: str, formula: str, chunk: str) -> None:
    r = _check(files[name], formula, files["word"], "--chunk", chunk)
    assert r.rc == 0, r.err
    report = json.loads(r.out)
    assert report["checked_positions"] == report["n"] == N
    assert report["mismatched_positions"] == 0 and report["first_mismatch"] is None
    assert report["max_abs_error"] < 0.5
    assert report["chunk"] == int(chunk)


def test_a_wrong_formula_gives_exit_1_and_the_first_mismatch(files) -> None:
    # PARITY flipped at positions 7000 and 9000 only
    wrong = f"({PARITY} & !(i = 7000 | i = 9000)) | (!{PARITY} & (i = 7000 | i = 9000))"
    r = _check(files["parity"], wrong, files["word"], "--chunk", "999")
    assert r.rc == 1
    report = json.loads(r.out)
    assert report["mismatched_positions"] == 2
    fm = report["first_mismatch"]
    assert fm["position"] == 7000
    ids = np.array([[int(c) for c in files["word"].read_text().strip()]])
    truth = bool(evaluate(parse(PARITY, alphabet="01"), ids, "01")[0, 6999])
    assert fm["expected"] == int(not truth) and fm["got"] == int(truth)
    text = run_cli(
        "check", str(files["parity"]), "-f", wrong, "--stream", "--input-file", str(files["word"])
    )
    assert text.rc == 1 and "first mismatch at position 7000" in text.out


def test_a_named_formula(files) -> None:
    """``-f @NAME`` with --stream reads the named formula (the helpers check uses too)."""
    r = _check(files["parity"], "@parity-mod", files["word"])
    assert r.rc == 0, r.err
    report = json.loads(r.out)
    assert report["reference"] == {"formula": "MOD(2, 1)(#<['1'])"}
    assert report["checked_positions"] == N and report["mismatched_positions"] == 0
    r = _check(files["parity"], "@nope", files["word"])
    assert r.rc == 2 and "unknown formula 'nope'" in r.err


def test_refusals(files) -> None:
    r = run_cli("check", str(files["parity"]), "-f", PARITY, "--stream")
    assert r.rc == 2 and "--stream reads one input from --input-file" in r.err
    r = _check(files["parity"], "X '1'", files["word"])
    assert r.rc == 2 and "operator X reads positions after" in r.err
    r = _check(files["parity"], "P ('1' U '0')", files["word"])
    assert r.rc == 2 and "operator U" in r.err
    r = _check(files["next"], "'1'", files["word"])
    assert r.rc == 2 and "head blocks." in r.err
    r = run_cli(
        "check",
        str(files["parity"]),
        "-l",
        "parity",
        "--stream",
        "--input-file",
        str(files["word"]),
    )
    assert r.rc == 2 and "one --formula" in r.err
    r = run_cli("check", str(files["parity"]), "-f", PARITY, "--input-file", str(files["word"]))
    assert r.rc == 2 and "--input-file only with --stream" in r.err

"""The model-vs-reference checker and the ``compile`` / ``check`` commands."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from hardsoft.check import all_strings, check_formula, check_language, check_model
from hardsoft.cli import app
from hardsoft.compile import compile_formula
from hardsoft.languages import get_language
from hardsoft.logic import evaluate, parse

runner = CliRunner()


def test_all_strings_is_every_string_once() -> None:
    for k, n in [(2, 5), (3, 3), (4, 2), (1, 3)]:
        got = [tuple(r) for r in all_strings(k, n).tolist()]
        assert got == list(itertools.product(range(k), repeat=n))


def test_check_formula_agrees_and_reports_fields() -> None:
    model = compile_formula("'0' S '1'", "01", "soft-temperature")
    rep = check_formula(model, "'0' S '1'", exhaustive_max_n=8, random_n=[50], samples=5)
    assert rep["mismatches"] == 0 and rep["first_mismatch"] is None
    assert rep["checked_strings"] == sum(2**n for n in range(1, 9)) + 5
    assert rep["max_n"] == 50 and rep["lengths"] == [*range(1, 9), 50]
    assert rep["max_abs_error"] < 1e-9


def test_check_finds_a_real_counterexample() -> None:
    """A model for 'Y 1' checked against 'P 1': the reported first mismatch is a genuine
    disagreement according to the evaluator."""
    model = compile_formula("Y '1'", "01", "hard")
    rep = check_formula(model, "P '1'", exhaustive_max_n=5, random_n=[], samples=1)
    assert rep["mismatches"] > 0
    fm = rep["first_mismatch"]
    word, pos = fm["word"], fm["position"]
    assert evaluate(parse("P '1'"), [word], "01")[0, pos - 1] == bool(fm["expected"])
    assert evaluate(parse("Y '1'"), [word], "01")[0, pos - 1] == bool(fm["got"])
    assert fm["expected"] != fm["got"]


def test_sampled_when_too_many_strings() -> None:
    model = compile_formula("'a'", "abcd", "hard")
    rep = check_formula(model, "'a'", exhaustive_max_n=7, random_n=[], max_exhaustive=4**5)
    assert rep["exhaustive_lengths"] == [1, 2, 3, 4, 5]
    assert rep["sampled_lengths"] == [6, 7] and rep["mismatches"] == 0


def test_check_language_parity() -> None:
    model = compile_formula("MOD(2, 1)(#<['1'])", "01", "soft-temperature")
    good = check_language(model, "parity-odd", exhaustive_max_n=7, random_n=[40], samples=4)
    assert good["mismatches"] == 0 and good["checked_positions"] > 0
    bad = check_language(model, "parity-even", exhaustive_max_n=3, random_n=[], samples=1)
    assert bad["mismatches"] > 0
    fm = bad["first_mismatch"]
    prefix = fm["word"][: fm["position"]]
    assert int(get_language("parity-even").member(prefix)) == fm["expected"]


def test_check_model_with_symbol_valued_reference() -> None:
    """References given as symbol indices (here the token's own index, which the model
    outputs) are compared position by position; -1 positions are skipped."""
    model = compile_formula("'1'", "01", "hard")

    def reference(ids: np.ndarray) -> np.ndarray:
        ref = ids.copy()
        ref[:, 0] = -1
        return ref  # the symbol index of the token itself, which is the model's output

    rep = check_model(model, reference, exhaustive_max_n=4, random_n=[], samples=1)
    assert rep["mismatches"] == 0
    assert rep["checked_positions"] == sum(2**n * (n - 1) for n in range(1, 5))


def _invoke(args: list[str]):
    return runner.invoke(app, args)


def test_cli_compile_and_check(tmp_path) -> None:
    path = tmp_path / "m.safetensors"
    res = _invoke(
        [
            "compile",
            "#<['1'] > #<['0']",
            "--alphabet",
            "01",
            "--target",
            "soft-temperature",
            "-o",
            str(path),
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    cert = json.loads(res.stdout)["certificate"]
    for key in (
        "position_features",
        "tau",
        "heads",
        "layers",
        "residual_width",
        "parameters",
        "max_error_bound",
    ):
        assert key in cert
    assert all(f["bounded"] for f in cert["position_features"])
    assert cert["tau"][0]["expression"] == "1/(4*n)"
    res = _invoke(
        [
            "check",
            str(path),
            "--formula",
            "#<['1'] > #<['0']",
            "--exhaustive-max-n",
            "8",
            "--random-n",
            "100",
            "--samples",
            "3",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["mismatches"] == 0 and rep["max_n"] == 100
    res = _invoke(
        [
            "check",
            str(path),
            "--formula",
            "#<['1'] >= #<['0']",
            "--exhaustive-max-n",
            "4",
            "--random-n",
            "",
            "--json",
        ]
    )
    assert res.exit_code == 1
    assert json.loads(res.stdout)["first_mismatch"] is not None


def test_cli_language_mode(tmp_path) -> None:
    path = tmp_path / "p.safetensors"
    assert _invoke(["compile", "@parity-mod", "--target", "hard", "-o", str(path)]).exit_code == 0
    res = _invoke(
        [
            "check",
            str(path),
            "--language",
            "parity-odd",
            "--exhaustive-max-n",
            "6",
            "--random-n",
            "30",
            "--samples",
            "2",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["mismatches"] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["compile", "X '1'", "--alphabet", "01", "--causal"],
        ["compile", "'1' &", "--alphabet", "01"],
        ["compile", "'1'", "--alphabet", "01", "--target", "warm"],
        ["compile", "'1'"],
    ],
)
def test_cli_compile_user_errors(args: list[str]) -> None:
    """Bad input raises HardsoftError (which ``hardsoft.cli.main`` prints as one line, exit 2)."""
    from hardsoft.errors import HardsoftError

    res = runner.invoke(app, args)
    assert res.exit_code != 0
    assert isinstance(res.exception, HardsoftError) and str(res.exception)


def test_cli_check_needs_exactly_one_reference(tmp_path) -> None:
    import subprocess
    import sys

    path = tmp_path / "m.safetensors"
    assert _invoke(["compile", "'1'", "--alphabet", "01", "-o", str(path)]).exit_code == 0
    proc = subprocess.run(
        [sys.executable, "-c", "from hardsoft.cli import main; main()", "check", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "exactly one" in proc.stderr


def _trained_dyck2(tmp_path):
    """A (barely) trained 2DYCK next-symbol predictor: its readout is P(EOS) > p/2."""
    from hardsoft.learn import ArchConfig, TrainConfig, train
    from hardsoft.model import load_model

    cfg = TrainConfig(
        language="dyck2", arch=ArchConfig(d_model=8, layers=1, heads=1), steps=20, warmup=2
    )
    train(cfg, tmp_path / "run", show_progress=False)
    return load_model(
        tmp_path / "run" / "model.safetensors"
    ), tmp_path / "run" / "model.safetensors"


def test_check_reads_a_trained_model_by_its_declared_readout(tmp_path) -> None:
    """A trained predictor is judged by P(EOS) > threshold at every position, not by its raw
    first output (which once gave thousands of false mismatches on dyck2)."""
    import torch

    from hardsoft.model.readout import acceptance_of

    model, _ = _trained_dyck2(tmp_path)
    rule = acceptance_of(model)
    assert rule.kind == "eos" and rule.index == 4
    report = check_language(model, "dyck2", exhaustive_max_n=5, random_n=[])
    assert report["readout"].startswith("P(EOS)")
    expected_bad, raw_bad, total = 0, 0, 0
    lang = get_language("dyck2")
    for n in range(1, 6):
        ids = all_strings(4, n)
        with torch.no_grad():
            out = model(torch.from_numpy(ids)).outputs.double()
        p_eos = torch.softmax(out, -1)[..., 4].numpy()
        words = ["".join("()[]"[c] for c in row) for row in ids]
        truth = np.stack([np.asarray(lang.prefix_reference(w)) for w in words]).astype(bool)
        expected_bad += int(((p_eos > rule.threshold) != truth).sum())
        raw_bad += int(((out[..., 0].numpy() > 0.5) != truth).sum())
        total += truth.size
    assert report["mismatched_positions"] == expected_bad != raw_bad
    rows = report["by_length"]
    assert [r["n"] for r in rows] == [1, 2, 3, 4, 5]
    assert sum(r["positions"] - r["positions_right"] for r in rows) == expected_bad
    assert sum(r["positions"] for r in rows) == total


def test_cli_check_reports_accuracy_by_length_for_a_trained_model(tmp_path) -> None:
    _, path = _trained_dyck2(tmp_path)
    res = runner.invoke(
        app,
        ["check", str(path), "--language", "dyck2", "--exhaustive-max-n", "4", "--random-n", ""],
    )
    assert res.exit_code in (0, 1), res.output
    assert "accuracy by length" in res.output and "P(EOS)" in res.output
    assert "positions right" in res.output


def _coverage(exhaustive_max_n: int, random_n: list[int], samples: int) -> tuple[int, int]:
    """(strings, positions) that check covers over two symbols, counted from the options
    (with the hard words it adds at every random length)."""
    from hardsoft.languages.hard_words import hard_words

    hard = [len(hard_words("01", n)) for n in random_n]
    strings = sum(2**n for n in range(1, exhaustive_max_n + 1)) + samples * len(random_n)
    positions = sum(n * 2**n for n in range(1, exhaustive_max_n + 1)) + samples * sum(random_n)
    return strings + sum(hard), positions + sum(h * n for h, n in zip(hard, random_n))


def test_the_default_check_covers_what_its_help_says(tmp_path) -> None:
    """Issue #32: the default check once ran 2.2M positions for minutes. Its --help states the
    default's size; the stated numbers follow from the option defaults, and a default run over
    two symbols checks exactly that many strings and positions."""
    import re

    import typer

    command = typer.main.get_command(app).commands["check"]  # type: ignore[attr-defined]
    defaults = {p.name: p.default for p in command.params}
    lengths = [int(x) for x in defaults["random_n"].split(",")]
    strings, positions = _coverage(defaults["exhaustive_max_n"], lengths, defaults["samples"])
    text = " ".join(command.help.split())
    stated = re.search(r"every string of length 1 to (\d+) \(([\d,]+) strings over two", text)
    assert stated and int(stated[1]) == defaults["exhaustive_max_n"], text
    exhaustive, _ = _coverage(defaults["exhaustive_max_n"], [], defaults["samples"])
    assert int(stated[2].replace(",", "")) == exhaustive
    about = re.search(r"about ([\d,]+) positions over two symbols", text)
    assert about and abs(int(about[1].replace(",", "")) - positions) <= 0.02 * positions
    assert f"{defaults['samples']} random strings" in text

    path = tmp_path / "m.safetensors"
    assert _invoke(["compile", "'1' & !P '0'", "--alphabet", "01", "-o", str(path)]).exit_code == 0
    res = _invoke(["check", str(path), "-f", "'1' & !P '0'", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert (report["checked_strings"], report["checked_positions"]) == (strings, positions)

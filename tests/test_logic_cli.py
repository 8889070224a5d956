"""``hardsoft eval`` and ``hardsoft formulas``: JSON contents checked against plain-Python
definitions, syntax errors exit 2 with the caret message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hardsoft.cli import app, main

runner = CliRunner()
HARDSOFT = [sys.executable, "-c", "from hardsoft.cli import main; main()"]


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_eval_json_values_match_definitions() -> None:
    word = "0110100"
    out = _json(["eval", "MOD(2,1)(#<['1'])", "--input", word, "--json"])
    prefix_odd = [int(word[: k + 1].count("1") % 2 == 1) for k in range(len(word))]
    assert out["values"] == prefix_odd
    assert out["accept"] is (word.count("1") % 2 == 1)
    assert out["input"] == word
    assert out["formula"] == "MOD(2, 1)(#<['1'])"


def test_eval_named_formula_and_default_alphabet() -> None:
    out = _json(["eval", "@dyck1", "--input", "(()())", "--json"])
    assert out["accept"] is True and len(out["values"]) == 6
    out = _json(["eval", "'b' S 'a'", "--input", "abbc", "--json"])
    assert out["values"] == [0, 1, 1, 1]  # strict since: a at 1, then b's; c at 4 not needed
    out = _json(["eval", "first", "--input", "", "--json"])
    assert out["values"] == [] and out["accept"] is False


def test_eval_human_output_shows_positions() -> None:
    result = runner.invoke(app, ["eval", "Y 'a'", "--input", "aab"])
    assert result.exit_code == 0
    assert "value    0 1 1" in result.stdout
    assert "accept:   True" in result.stdout


def test_formulas_list_and_show() -> None:
    names = [r["name"] for r in _json(["formulas", "list", "--json"])["formulas"]]
    assert "parity-count" in names and "dyck1" in names
    shown = _json(["formulas", "show", "parity-count", "--json"])
    assert shown["formula"] == "!E (#<[Y '1'] = #>['1'])"
    assert shown["fragment"] == "LTL[C,+]" and shown["past_only"] is False
    assert set(shown["operators"]) == {"!", "E", "=", "#<", "#>", "Y", "sym"}


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        HARDSOFT + args, capture_output=True, text=True, cwd=Path(__file__).parent, timeout=120
    )


def test_syntax_error_exits_2_with_the_caret_message() -> None:
    proc = _run(["eval", "'a' & )", "--input", "ab"])  # the real entry point, once
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: syntax error at column 7: expected a formula after '&'\n  'a' & )\n        ^\n"
    )


@pytest.mark.parametrize(
    "args, needle",
    [
        (["eval", "'a' & 'z'", "--input", "ab", "--alphabet", "ab"], "'z'"),
        (["eval", "@dyck1", "--input", "(x)"], "'x'"),
        (["eval", "@nope", "--input", "ab"], "unknown formula"),
        (["formulas", "show", "nope"], "unknown formula"),
        (["eval", "MOD(2, 3)(i)", "--input", "ab"], "residue"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    args: list[str], needle: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(sys, "argv", ["hardsoft", *args])
    with pytest.raises(SystemExit) as info:
        main()
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert err.startswith("error: ") and needle in err
    assert len(err.strip().splitlines()) == 1

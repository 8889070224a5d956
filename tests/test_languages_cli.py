"""The ``hardsoft language`` commands, through the real entry point (subprocess) and CliRunner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hardsoft.cli import app
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language, language_names

HARDSOFT = [sys.executable, "-c", "from hardsoft.cli import main; main()"]
runner = CliRunner()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*HARDSOFT, *args], capture_output=True, text=True, cwd=Path.cwd())


def invoke_json(*args: str) -> dict:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1
    return json.loads(lines[0])


def test_list_json_has_every_name() -> None:
    out = invoke_json("language", "list", "--json")
    names = {row["name"] for row in out["languages"]}
    assert set(language_names()) | {"parity-process", "dyck2-process"} == names


@pytest.mark.parametrize(
    "name,word,expected",
    [("dyck2", "([])", True), ("dyck2", "([)]", False), ("parity-even", "", True),
     ("parity-odd", "1101", True), ("flipflop", "w1r0", False), ("anbn", "aabb", True)],
)  # fmt: skip
def test_member_json_is_exactly_member(name: str, word: str, expected: bool) -> None:
    out = invoke_json("language", "member", name, "--input", word, "--json")
    assert out == {"member": expected}
    assert get_language(name).member(word) == expected


def test_sample_balanced_json_labels_match_oracle() -> None:
    out = invoke_json(
        "language", "sample", "dyck3", "--n", "10", "--count", "20", "--half-members", "--json"
    )
    lang = get_language("dyck3")
    assert len(out["words"]) == 20 and sum(out["labels"]) == 10
    assert [lang.member(w) for w in out["words"]] == out["labels"]


def test_sample_process_and_task() -> None:
    out = invoke_json(
        "language", "sample", "dyck2-process", "--n", "12", "--count", "5", "--p", "0.3",
        "--seed", "4", "--json",
    )  # fmt: skip
    assert out["kind"] == "process" and len(out["words"]) == 5
    assert all(len(w) == 12 and set(w) <= set("()[]") for w in out["words"])
    again = invoke_json(
        "language", "sample", "dyck2-process", "--n", "12", "--count", "5", "--p", "0.3",
        "--seed", "4", "--json",
    )  # fmt: skip
    assert again["words"] == out["words"]
    task = invoke_json("language", "sample", "khop2", "--n", "7", "--count", "3", "--json")
    lang = get_language("khop2")
    for w, t in zip(task["words"], task["targets"]):
        assert lang.prefix_reference(w).tolist() == t


ERRORS = [
    (["member", "nope", "--input", "1"], "unknown language"),
    (["member", "dyck1", "--input", "(x)"], "unknown symbol 'x'"),
    (["sample", "dyck1", "--n", "-3"], "--n must be >= 0"),
    (["sample", "dyck1", "--n", "5", "--half-members"], "no members of length 5"),
    (["sample", "parity-process", "--n", "5"], "needs --p"),
    (["sample", "dyck2-process", "--n", "5", "--p", "0.5"], "1/2"),
    (["sample", "dyck1", "--n", "4", "--p", "0.3"], "processes only"),
    (["member", "khop2", "--input", "ab"], "task"),
    (["member", "parity-process", "--input", "01"], "process"),
]


@pytest.mark.parametrize("args,needle", ERRORS)
def test_errors_are_hardsoft_errors(args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["language", *args])
    assert isinstance(result.exception, HardsoftError), result.output
    msg = str(result.exception)
    assert needle in msg and "\n" not in msg


@pytest.mark.parametrize("args,needle", [ERRORS[1], ERRORS[4]])
def test_errors_through_the_entry_point_are_one_line(args: list[str], needle: str) -> None:
    proc = run("language", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in proc.stderr


def test_sample_half_members_is_named_for_what_it_does_and_has_a_header() -> None:
    """`--balanced` read as "balanced brackets" for Dyck: the option is `--half-members` (the
    old name still works, with a note), and the label column has a header."""
    res = runner.invoke(app, ["language", "sample", "dyck2", "--n", "6", "--count", "4",
                              "--half-members", "--seed", "2"])  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].split() == ["string", "member"]
    rows = [line.split() for line in lines[1:]]
    lang = get_language("dyck2")
    assert len(rows) == 4 and [int(lang.member(w)) for w, _ in rows] == [int(x) for _, x in rows]
    assert sorted(int(x) for _, x in rows) == [0, 0, 1, 1]
    old = runner.invoke(app, ["language", "sample", "dyck2", "--n", "6", "--count", "4",
                              "--balanced", "--seed", "2", "--json"])  # fmt: skip
    assert old.exit_code == 0 and "deprecated" in old.output
    new = invoke_json("language", "sample", "dyck2", "--n", "6", "--count", "4",
                      "--half-members", "--seed", "2", "--json")  # fmt: skip
    assert new["half_members"] is True and [w for w, _ in rows] == new["words"]
    help_text = runner.invoke(app, ["language", "sample", "--help"]).output
    assert "--half-members" in help_text and "--balanced" not in help_text

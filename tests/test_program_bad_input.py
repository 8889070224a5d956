"""Issue #28's bad input (Build 7), for both notations, through the shared commands.

Every bad program file is given to ``program run`` (with ``--trace`` onto an existing page),
``program compile`` (``-o`` onto an existing model) and ``check MODEL --program``: each answers
one ``error:`` line naming the problem (and the statement where there is one; a syntax error
adds the line and a caret under the column), exits 2, and leaves every file already written
byte for byte as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import run_cli

# (suffix, file text, --alphabet or None, what the one line must say)
CASES = {
    # ---- C-RASP (.cr)
    "cr-syntax": (".cr", 'x = "a"\ny = (x ||\n', None, ["syntax error at line 2, column 10"]),
    "cr-undefined": (".cr", 'x = "a"\ny = x && z\n', None, ["statement y (line 2)", "z"]),
    "cr-repeated": (".cr", 'x = "a"\nx = "b"\n', None, ["statement x (line 2) repeats"]),
    "cr-count-as-bool": (
        ".cr", 'x = #"a"\ny = x && "a"\n', None,
        ["statement y (line 2)", "is a count, used as a Boolean"],
    ),
    "cr-cycle": (".cr", "x = y\ny = x\n", None, ["statement x (line 1)", "cycle x -> y -> x"]),
    "cr-unknown-predicate": (
        ".cr", '#import nosuch\nx = #[nosuch] "a" > 0\n', None, ["nosuch: unknown predicate"],
    ),
    "cr-outside-alphabet": (
        ".cr", 'x = "a"\ny = x || "c"\n', "ab",
        ["statement y (line 2)", '"c" is not in the alphabet'],
    ),
    "cr-empty": (".cr", "// nothing here\n", None, ["has no statements"]),
    # issue 41: nesting (a RecursionError, exit 3), keywords as names, a malformed comment
    "cr-deep-nesting": (
        ".cr", 'x = ' + "!" * 800 + '"a"\n', None,
        ["statement x (line 1) nests more than 100 levels deep", "nesting limit"],
    ),
    "cr-deep-parentheses": (
        ".cr", 'x = ' + "!(" * 120 + '"a"' + ")" * 120 + "\n", None, ["nesting limit"],
    ),
    "cr-keyword-name": (
        ".cr", 'true = "b"\nx = true && "a"\n', None,
        ["statement true (line 1): true is a keyword of C-RASP"],
    ),
    "cr-bad-alphabet-comment": (
        ".cr", '// alphabet: a b\nx = "a"\n', None,
        ["line 1: malformed alphabet comment '// alphabet: a b'"],
    ),
    # ---- B-RASP (.brasp)
    "brasp-syntax": (
        ".brasp", "Q_a(i)\nA(i) := Q_a(i) &\n", None, ["syntax error at line 2, column 17"],
    ),
    "brasp-undefined": (
        ".brasp", "Q_a(i)\nA(i) := B(i)\n", None, ["statement 'A' uses B(i)", "not defined"],
    ),
    "brasp-repeated": (
        ".brasp", "Q_a(i)\nA(i) := Q_a(i)\nA(i) := 1\n", None,
        ["line 3: statement 'A' is defined twice"],
    ),
    "brasp-cycle": (
        ".brasp", "Q_a(i)\nA(i) := B(i)\nB(i) := A(i)\n", None, ["'A' depends on itself"],
    ),
    "brasp-outside-alphabet": (
        ".brasp", "Q_a(i)\nQ_c(i)\nA(i) := Q_c(i)\n", "ab",
        ["line 2: Q_c(i) declares the symbol 'c'", "not in the alphabet 'ab'"],
    ),
    "brasp-empty": (".brasp", "# nothing here\n", None, ["no statements"]),
    "brasp-deep-nesting": (
        ".brasp", "Q_a(i)\nQ_b(i)\nA(i) := " + "!" * 800 + "Q_a(i)\n", None,
        ["line 3: statement 'A' nests more than 100 levels deep", "nesting limit"],
    ),
    "brasp-keyword-name": (
        ".brasp", "Q_a(i)\nQ_b(i)\nnot(i) := Q_a(i)\n", None,
        ["line 3: 'not' is a keyword of B-RASP"],
    ),
    "brasp-default-uses-j": (
        ".brasp", "Q_a(i)\nA(i) := leftmost [j<i, 1] 1 : Q_a(j)\n", None,
        ["statement 'A': the default reads Q_a(j)"],
    ),
    "brasp-j-outside-attention": (
        ".brasp", "Q_a(i)\nA(i) := Q_a(j)\n", None, ["statement 'A' reads Q_a(j)"],
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def existing(tmp_path_factory) -> dict[str, Path]:
    """Files a user already has: a compiled model and a trace page."""
    d = tmp_path_factory.mktemp("existing")
    model = d / "model.safetensors"
    assert run_cli("program", "compile", "@first_is_a", "-o", str(model)).rc == 0
    page = d / "trace.html"
    assert run_cli("program", "run", "@first_is_a", "-i", "ab", "--trace", str(page)).rc == 0
    return {"model": model, "trace": page}


def _one_error(res, needles: list[str]) -> None:
    lines = res.err.strip().splitlines()
    assert res.rc == 2, (res.rc, res.err, res.out)
    assert lines and lines[0].startswith("error:"), res.err
    if "syntax error" in lines[0]:  # the line, then a caret under the column
        assert len(lines) == 3 and lines[2].strip() == "^", res.err
        column = int(lines[0].split("column ")[1].split(":")[0])
        assert lines[2].index("^") == column + 1, res.err  # two spaces of indent
    else:
        assert len(lines) == 1, res.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize(
    ("suffix", "text", "line", "column"),
    [(".cr", 'x = "a"\ny = (x ||\n', 2, 10), (".brasp", "Q_a(i)\nA(i) := Q_a(i) &\n", 2, 17)],
)
def test_syntax_errors_have_one_form_in_every_notation(
    suffix: str, text: str, line: int, column: int, tmp_path: Path
) -> None:
    """One helper (``hardsoft.errors.syntax_error``) writes every parser's syntax error:
    'FILE': syntax error at line L, column C: ..., the line, a caret under column C (the C-RASP
    one once named no file). A formula on the command line has no file and one line: the
    column only."""
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(text)
    res = run_cli("program", "run", str(bad), "-i", "ab")
    _one_error(res, [f"error: {str(bad)!r}: syntax error at line {line}, column {column}: "])
    assert res.err.splitlines()[1] == "  " + text.splitlines()[line - 1]
    res = run_cli("eval", "'a' & )", "--input", "ab")
    _one_error(res, ["error: syntax error at column 7: expected a formula after '&'"])
    res = run_cli("eval", "'a' &\n)", "--input", "ab")  # a formula of two lines: line, column
    assert res.err.startswith("error: syntax error at line 2, column 1: "), res.err


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_program_files_are_one_line_and_damage_nothing(
    case: str, tmp_path: Path, existing: dict[str, Path]
) -> None:
    suffix, text, alphabet, needles = CASES[case]
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(text)
    extra = ["--alphabet", alphabet] if alphabet else []
    before = {k: p.read_bytes() for k, p in existing.items()}
    model, page = str(existing["model"]), str(existing["trace"])
    for argv in (
        ["program", "run", str(bad), "-i", "ab", "--trace", page, *extra],
        ["program", "compile", str(bad), "-o", model, *extra],
        ["program", "compile", str(bad), "-o", model, "--json", *extra],
    ):
        _one_error(run_cli(*argv), needles)
    if alphabet is None:  # check reads the program over the model's alphabet ('ab')
        _one_error(run_cli("check", model, "--program", str(bad)), needles)
    assert {k: p.read_bytes() for k, p in existing.items()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [bad.name]  # nothing else written


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--as", "brasp"], "B-RASP cannot express"),
        (["--as", "crasp"], "is not in C-RASP"),
    ],
)
def test_a_refused_decompile_leaves_the_output_file(tmp_path: Path, args, needle) -> None:
    """``decompile --as brasp|crasp -o OUT`` refused: OUT, already there, is unchanged."""
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    model = tmp_path / "m.safetensors"
    formula = "#<['a'] > #<['b']" if args[1] == "brasp" else "E 'a'"
    save_model(compile_formula(formula, "ab", "hard"), model)
    out = tmp_path / "out.txt"
    out.write_text("a program I keep\n")
    res = run_cli("decompile", str(model), *args, "-o", str(out),
                  "--verify-n", "3", "--random-words", "0")  # fmt: skip
    _one_error(res, [needle])
    assert out.read_text() == "a program I keep\n"


@pytest.mark.parametrize("suffix", [".cr", ".brasp"])
def test_a_long_chain_is_no_nesting(suffix: str, tmp_path: Path) -> None:
    """3,000 operands of && (C-RASP) or & (B-RASP) on one line: a RecursionError once; now the
    parser balances the chain (the same value), and run, compile and check agree."""
    terms = 3000
    if suffix == ".cr":  # true at i iff every symbol so far... one test: "a" at i, 3000 times
        text = (
            "// alphabet: ab\nx = "
            + " && ".join(['"a"'] * terms)
            + "\ny = x || "
            + (" || ".join(['"b"'] * terms))
            + "\n"
        )
    else:
        text = (
            "Q_a(i)\nQ_b(i)\nX(i) := "
            + " & ".join(["Q_a(i)"] * terms)
            + "\nY(i) := X(i) | "
            + (" | ".join(["Q_b(i)"] * terms))
            + "\n"
        )
    prog = tmp_path / f"long{suffix}"
    prog.write_text(text)
    res = run_cli("program", "run", str(prog), "-i", "ab", "-i", "ba", "--json")
    assert res.rc == 0, res.err
    runs = json.loads(res.out)["results"]
    first = [v for k, v in runs[0]["values"].items() if k in ("x", "X")][0]
    assert first == [True, False] and runs[0]["accept"] and runs[1]["accept"]
    model = tmp_path / "m.safetensors"
    assert run_cli("program", "compile", str(prog), "-o", str(model)).rc == 0
    res = run_cli("check", str(model), "--program", str(prog), "--exhaustive-max-n", "6",
                  "--random-n", "50", "--samples", "4")  # fmt: skip
    assert res.rc == 0, res.err

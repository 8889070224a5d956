"""The command line for RASP programs: ``program compile|run FILE.py[:NAME]``, ``check
--program``, ``run`` on a compiled program, and one ``error:`` line for each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import run_cli

LIB = Path(__file__).resolve().parents[1] / "src/hardsoft/programs/examples/tracr_lib.py"


def write(tmp_path: Path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def one_error(res, rc: int = 2) -> str:  # type: ignore[no-untyped-def]
    assert res.rc == rc, (res.out, res.err)
    lines = res.err.strip().splitlines()
    assert lines and lines[0].startswith("error: "), res.err
    assert "Traceback" not in res.err
    return lines[0]


def test_compile_check_and_run_end_to_end(tmp_path: Path) -> None:
    model = tmp_path / "hist.safetensors"
    res = run_cli("program", "compile", f"{LIB}:hist", "--target", "soft-temperature", "-o",
                  str(model), "--json")  # fmt: skip
    assert res.rc == 0, res.err
    summary = json.loads(res.out)
    assert summary["length_general"] and summary["exact_for"] == "every length n"
    assert summary["outputs"][0]["unit"] == "count/n"
    res = run_cli("check", str(model), "--program", f"{LIB}:hist", "--exhaustive-max-n", "5",
                  "--random-n", "200", "--samples", "3", "--json")  # fmt: skip
    assert res.rc == 0, res.err
    report = json.loads(res.out)
    assert report["mismatches"] == 0 and report["max_n"] == 200
    res = run_cli("program", "compile", f"{LIB}:hist", "-o", str(model))
    assert "output hist (carried as count/n; `run` prints it decoded)" in res.out
    assert "τ(n) = 1  (ε = " in res.out
    res = run_cli("run", str(model), "--input", "abcaab")
    assert res.rc == 0
    assert "hist (decoded from count/n): 3 2 1 3 3 2" in res.out
    res = run_cli("run", str(model), "--input", "abca", "--json")
    assert json.loads(res.out)["results"][0]["decoded"] == {"hist": [2, 1, 1, 2]}


def test_program_run_prints_every_statement(tmp_path: Path) -> None:
    res = run_cli("program", "run", f"{LIB}:pattern", "--input", "abcab", "--json")
    assert res.rc == 0, res.err
    out = json.loads(res.out)
    values = out["results"][0]["values"]
    assert out["statements"][-1] == "detect_pattern(abc)"
    assert values["detect_pattern(abc)"] == [None, None, True, False, False]


def test_vocab_and_max_len_options(tmp_path: Path) -> None:
    src = write(
        tmp_path,
        "from hardsoft import rasp\n"
        "program = rasp.numerical(rasp.Map(lambda i: i * i % 3, rasp.indices)).named('mod3')\n",
    )
    model = tmp_path / "m.safetensors"
    res = run_cli("program", "compile", str(src), "--vocab", "ab", "-o", str(model))
    line = one_error(res)
    assert "Map mod3 applies a Python function to indices" in line and "--max-len" in line
    res = run_cli("program", "compile", str(src), "--vocab", "ab", "--max-len", "9",
                  "--target", "average-hard", "-o", str(model), "--json")  # fmt: skip
    assert res.rc == 0, res.err
    assert json.loads(res.out)["exact_for"] == "n <= 9"
    res = run_cli("check", str(model), "--program", str(src), "--exhaustive-max-n", "3",
                  "--random-n", "9,50", "--samples", "2")  # fmt: skip
    assert res.rc == 0, res.err
    assert "skipped lengths [50]" in res.out


def test_a_mismatch_exits_1(tmp_path: Path) -> None:
    """check --program reads the program it is given: a different program is a mismatch."""
    model = tmp_path / "c.safetensors"
    assert run_cli("program", "compile", f"{LIB}:count", "-o", str(model)).rc == 0
    other = write(
        tmp_path,
        "from hardsoft import rasp\n"
        "program = rasp.numerical(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens,\n"
        "    lambda k, q: k == 'b'))).named('count_a')\n",
    )
    res = run_cli("check", str(model), "--program", str(other), "--vocab", "abc",
                  "--exhaustive-max-n", "3", "--random-n", "", "--json")  # fmt: skip
    assert res.rc == 1
    assert json.loads(res.out)["first_mismatch"]["output"] == "count_a"


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("from hardsoft import rasp\nx = rasp.tokens == 'a'\n", (), "defines no 'program'"),
        ("from hardsoft import rasp\nprogram = 3\n", (), "program in"),
        (
            "from hardsoft import rasp\nprogram = rasp.Map(lambda v: int(v), rasp.tokens)\n",
            ("--vocab", "1a"),
            "raised ValueError",
        ),
        ("from hardsoft import rasp\nprogram = (\n", (), "line"),
        ("raise RuntimeError('boom')\n", (), "raised RuntimeError: boom (line 1)"),
        ("from hardsoft import rasp\nprogram = rasp.tokens == 'a'\n", (), "no vocabulary"),
        ("from hardsoft import rasp\nprogram = rasp.tokens == 'a'\n", ("--vocab", "aa"), "repeats"),
    ],
)
def test_bad_files_are_one_error_line(
    tmp_path: Path, text: str, args: tuple, expected: str
) -> None:
    src = write(tmp_path, text)
    model = tmp_path / "m.safetensors"
    res = run_cli("program", "compile", str(src), *args, "-o", str(model))
    assert expected in one_error(res)
    assert not model.exists()


def test_a_syntax_error_points_at_the_column(tmp_path: Path) -> None:
    src = write(tmp_path, "from hardsoft import rasp\nprogram = rasp.tokens ==\n")
    res = run_cli("program", "run", str(src), "--vocab", "ab", "--input", "ab")
    one_error(res)
    lines = res.err.splitlines()
    assert lines[0].startswith(f"error: {str(src)!r}: syntax error at line 2, column 25: ")
    assert lines[1].strip() == "program = rasp.tokens ==" and lines[2].strip() == "^"
    assert lines[2].index("^") == 2 + 24  # under column 25 of the indented line


def test_errors_while_running(tmp_path: Path) -> None:
    src = write(
        tmp_path,
        "from hardsoft import rasp\n"
        "everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)\n"
        "program = rasp.Aggregate(everything, rasp.tokens).named('pick')\n",
    )
    res = run_cli("program", "run", str(src), "--vocab", "ab", "--input", "ab")
    assert "categorical Aggregate pick averages several values" in one_error(res)
    res = run_cli("program", "run", str(src), "--vocab", "ab", "--input", "abz")
    assert "'z' at position 3 is not in the program's alphabet 'ab'" in one_error(res)
    res = run_cli("program", "run", f"{LIB}:nothing", "--input", "ab")
    assert "defines no 'nothing' (its SOps:" in one_error(res)


def test_an_exception_in_a_users_map_is_one_line(tmp_path: Path) -> None:
    """Running: the Map, its error, the value and where (RASP's index and the 1-based
    position); compiling: refused (the value is one its input can take), nothing written."""
    src = write(
        tmp_path,
        "from hardsoft import rasp\n"
        "program = rasp.Map(lambda x: {'a': 1}[x], rasp.tokens).named('lookup')\n",
    )
    res = run_cli("program", "run", str(src), "--vocab", "ab", "--input", "aab", "--json")
    line = one_error(res)
    assert "Map lookup raised KeyError: 'b' on 'b' (index 2, position 3)" in line
    model = tmp_path / "m.safetensors"
    model.write_bytes(b"kept")
    res = run_cli("program", "compile", str(src), "--vocab", "ab", "-o", str(model))
    assert "Map lookup raised KeyError" in one_error(res)
    assert model.read_bytes() == b"kept"


def test_options_for_the_other_mode_are_refused(tmp_path: Path) -> None:
    assert "No such option: --vocab" in one_error(
        run_cli("program", "dyck", "--vocab", "ab", "-o", str(tmp_path / "x.safetensors"))
    )
    assert "Missing argument 'FILE'" in one_error(run_cli("program", "compile"))
    assert "No such option: -o" in one_error(
        run_cli("program", "run", f"{LIB}:hist", "--input", "ab", "-o", str(tmp_path / "a.st"))
    )
    assert "unknown program notation '.txt'" in one_error(
        run_cli("program", "run", str(tmp_path / "x.txt"), "--input", "a")
    )


def test_causal_compile_and_check(tmp_path: Path) -> None:
    """--causal compiles Tracr's causal semantics; check --program reads it from the model."""
    src = write(
        tmp_path,
        "from hardsoft import rasp\n"
        "sel = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)\n"
        "program = rasp.numerical(rasp.SelectorWidth(sel)).named('width')\n",
    )
    model = tmp_path / "w.safetensors"
    res = run_cli("program", "compile", str(src), "--vocab", "ab", "--causal", "-o", str(model),
                  "--json")  # fmt: skip
    assert res.rc == 0, res.err
    assert json.loads(res.out)["causal"] is True
    res = run_cli("check", str(model), "--program", str(src), "--exhaustive-max-n", "4",
                  "--random-n", "30", "--samples", "2")  # fmt: skip
    assert res.rc == 0, res.out + res.err
    plain = tmp_path / "p.safetensors"
    assert run_cli("program", "compile", str(src), "--vocab", "ab", "-o", str(plain)).rc == 0
    res = run_cli("check", str(model), "--program", str(src), "--exhaustive-max-n", "3")
    assert res.rc == 0  # the model says causal: checked against causal_eval, not evaluate
    res = run_cli("check", str(plain), "--program", str(src), "--exhaustive-max-n", "3")
    assert res.rc == 0
    line = one_error(run_cli("program", "compile", "@dyck1", "--causal", "-o", str(plain)))
    assert "--causal is for RASP programs" in line


# ---- issue 41 ----------------------------------------------------------------------------


def test_what_a_file_prints_goes_to_stderr_and_json_stays_one_object(tmp_path: Path) -> None:
    prog = write(
        tmp_path,
        "from hardsoft import rasp\nvocab = 'ab'\nprint('loading')\n"
        "def make():\n    print('making')\n    return rasp.Map(lambda x: x == 'a', rasp.tokens)\n"
        "program = make\n",
    )
    res = run_cli("program", "run", str(prog), "--input", "ab", "--json")
    assert res.rc == 0, res.err
    assert json.loads(res.out)["results"][0]["accept"] is False
    assert "loading" in res.err and "making" in res.err and "loading" not in res.out


def test_infinity_is_not_written_as_a_large_number(tmp_path: Path) -> None:
    """JSON has no infinity: a RASP value inf was written 1e+308 (another number)."""
    prog = write(
        tmp_path,
        "from hardsoft import rasp\nvocab = 'ab'\nprogram = rasp.numerical(rasp.Map(\n"
        "    lambda x: float('inf') if x == 'a' else float('-inf'), rasp.tokens)).named('big')\n",
    )
    res = run_cli("program", "run", str(prog), "--input", "ab", "--json")
    assert res.rc == 0, res.err
    assert json.loads(res.out)["results"][0]["values"]["big"] == ["inf", "-inf"]
    assert "1e+308" not in res.out


@pytest.mark.parametrize(
    ("vocab", "needle"),
    [("[1, 2, 2]", "repeats the value 2"), ("[None, 'a']", "holds None")],
)
def test_a_vocabulary_is_not_silently_changed(tmp_path: Path, vocab: str, needle: str) -> None:
    prog = write(tmp_path, f"from hardsoft import rasp\nvocab = {vocab}\nprogram = rasp.tokens\n")
    out = str(tmp_path / "m.safetensors")
    for argv in (
        ["program", "run", str(prog), "-i", "a"],
        ["program", "compile", str(prog), "-o", out],
    ):
        assert needle in one_error(run_cli(*argv))


def test_max_len_is_capped_before_any_work(tmp_path: Path) -> None:
    """--max-len 100000 grew with no progress and no end (width 4N, parameters ~100 N²)."""
    res = run_cli("program", "compile", f"{LIB}:sort", "--max-len", "100000",
                  "-o", str(tmp_path / "m.safetensors"))  # fmt: skip
    assert "at most 256" in one_error(res)

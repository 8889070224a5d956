"""One alphabet rule (hardsoft.programs.source.program_alphabet) for every notation and command:
a program run by its interpreter refuses the words its compiled model refuses, in the model's
words plus the ``--alphabet`` hint; ``--alphabet`` widens both alike; ``check --program``,
``atlas add-row --program`` and ``decompile --as`` read or write programs over the same
alphabet. Each notation's program below mentions or declares the symbol ``a`` only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hardsoft.model import load_model
from hardsoft.programs.source import ALPHABET_HINT, load_program, program_alphabet
from tests._cli import run_cli

PROGRAMS = {
    # the C-RASP program: no '// alphabet:' comment, so the symbols it mentions
    ".cr": 'Y = (2 * (#("a"))) == (#(true))\n',
    # B-RASP declares its symbols (Q_a)
    ".brasp": "Q_a(i)\nfirst_is_a(i) := leftmost [j<=i, 1] Q_a(j) : 0\n",
    # RASP: the file's vocab
    ".py": 'from hardsoft import rasp\nvocab = {"a"}\nprogram = rasp.tokens == "a"\n',
}


def _file(tmp_path: Path, suffix: str) -> Path:
    path = tmp_path / f"prog{suffix}"
    path.write_text(PROGRAMS[suffix])
    return path


def _error(res) -> str:
    assert res.rc == 2 and res.out == "", (res.rc, res.out, res.err)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    return lines[0]


def test_the_rule_given_then_declared_then_mentioned() -> None:
    missing = "no alphabet"
    assert program_alphabet("ba", ("a",), "c", missing=missing) == ("b", "a")
    assert program_alphabet(None, ("b", "a"), "c", missing=missing) == ("b", "a")
    assert program_alphabet(None, None, "cac", missing=missing) == ("a", "c")
    with pytest.raises(Exception, match="no alphabet"):
        program_alphabet(None, None, "", missing=missing)
    with pytest.raises(Exception, match="repeats the symbol"):
        program_alphabet("aa", None, "", missing=missing)


@pytest.mark.parametrize("suffix", sorted(PROGRAMS))
def test_the_interpreter_refuses_what_the_model_refuses(tmp_path: Path, suffix: str) -> None:
    prog = _file(tmp_path, suffix)
    assert load_program(prog).alphabet == ("a",)
    model = tmp_path / "m.safetensors"
    assert run_cli("program", "compile", str(prog), "-o", str(model)).rc == 0
    assert tuple(load_model(model).spec.alphabet) == ("a",)
    by_model = _error(run_cli("run", str(model), "--input", "aab"))
    by_program = _error(run_cli("program", "run", str(prog), "--input", "aab"))
    want = "error: --input 1: symbol 'b' at position 3 is not in the model's alphabet 'a'"
    assert by_model == want
    assert by_program == by_model.replace("model's", "program's") + f" ({ALPHABET_HINT})"
    assert run_cli("program", "run", str(prog), "--input", "aaa").rc == 0


@pytest.mark.parametrize("suffix", sorted(PROGRAMS))
def test_alphabet_widens_interpreter_model_and_check_alike(tmp_path: Path, suffix: str) -> None:
    prog = _file(tmp_path, suffix)
    model = tmp_path / "m.safetensors"
    res = run_cli("program", "run", str(prog), "--alphabet", "ab", "--input", "aab", "--json")
    assert res.rc == 0, res.err
    words = [r["input"] for r in json.loads(res.out)["results"]]
    assert words == ["aab"]
    assert run_cli("program", "compile", str(prog), "-o", str(model), "--alphabet", "ab").rc == 0
    assert tuple(load_model(model).spec.alphabet) == ("a", "b")
    assert run_cli("run", str(model), "--input", "aab").rc == 0
    # check reads the program over the model's alphabet (by the same rule: given)
    res = run_cli(
        "check", str(model), "--program", str(prog), "--exhaustive-max-n", "3", "--random-n", "9"
    )
    assert res.rc == 0, res.err


@pytest.mark.parametrize(("notation", "suffix"), [("crasp", ".cr"), ("brasp", ".brasp")])
def test_decompiled_programs_declare_the_models_alphabet(
    tmp_path: Path, notation: str, suffix: str
) -> None:
    """``decompile --as`` writes the model's alphabet into the program, so the program read
    back refuses what the model refuses (here a model over 'ab' whose formula mentions 'a')."""
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    model = tmp_path / "m.safetensors"
    save_model(compile_formula("Y 'a'", "ab", "hard"), model)
    back = tmp_path / f"back{suffix}"
    res = run_cli("decompile", str(model), "--as", notation, "-o", str(back))
    assert res.rc == 0, res.err
    assert load_program(back).alphabet == ("a", "b")
    by_model = _error(run_cli("run", str(model), "--input", "abc"))  # --input 1: ...
    by_program = _error(run_cli("program", "run", str(back), "--input", "abc"))
    assert by_program == by_model.replace("model's", "program's") + f" ({ALPHABET_HINT})"


def test_an_atlas_program_row_uses_the_rule(tmp_path: Path) -> None:
    """``atlas add-row --program``: the row's alphabet and every target's model's alphabet are
    the program's by the rule (the C-RASP program mentions 'a' only), and ``--alphabet``
    widens them."""
    prog = _file(tmp_path, ".cr")
    for extra, want in (([], "a"), (["--alphabet", "ab"], "ab")):
        out = tmp_path / f"atlas-{want}"
        args = ["atlas", "add-row", "--program", str(prog), "--name", "half", "--out", str(out)]
        res = run_cli(*args, *extra, "--json")
        assert res.rc == 0, res.err
        record = json.loads(res.out)
        assert record["alphabet"] == want
        models = [out / t["model"] for t in record["targets"] if "model" in t]
        assert models and all("".join(load_model(m).spec.alphabet) == want for m in models)

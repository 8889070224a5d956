"""Program files end to end: the shared front end (``programs/source.py``: notation dispatch,
``@NAME`` examples, ``FILE.py:NAME``), the reference by output encoding, and the commands
``program run|compile|list``, ``check --program`` and ``decompile --as crasp``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hardsoft.check import check_model
from hardsoft.errors import HardsoftError
from hardsoft.model import random_model
from hardsoft.model.io import read_metadata
from hardsoft.programs import source
from hardsoft.programs.reference import program_reference
from hardsoft.programs.source import (
    Notation,
    ProgramRun,
    SourceProgram,
    load_program,
    notation_of,
    resolve_program,
)
from tests._cli import run_cli

DYCK = Path(source.EXAMPLES / "dyck1.cr")


def one_error_line(res, *needles: str) -> None:
    lines = res.err.strip().splitlines()
    assert res.rc == 2, (res.rc, res.err, res.out)
    assert len(lines) == 1 and lines[0].startswith("error:"), res.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# ------------------------------------------------------------------ the shared front end


def test_load_program_dispatches_on_the_suffix(tmp_path: Path) -> None:
    prog = load_program(DYCK)
    assert isinstance(prog, SourceProgram)
    assert prog.notation is Notation.CRASP and prog.name == "dyck1"
    assert prog.alphabet == ("(", ")") and prog.statements[-1] == "dyck1"
    run = prog.run("(())")
    assert isinstance(run, ProgramRun) and run.accept
    assert run.to_dict()["values"]["opens"] == [1, 2, 2, 2]
    assert notation_of("x.brasp") is Notation.BRASP
    assert notation_of("progs.py:majority") is Notation.RASP
    with pytest.raises(HardsoftError, match="unknown program notation '.txt'"):
        load_program(tmp_path / "p.txt")
    with pytest.raises(HardsoftError, match="no such program file"):
        load_program(tmp_path / "missing.cr")
    bad = tmp_path / "bin.cr"
    bad.write_bytes(b"\xff\xfe x = 1")
    with pytest.raises(HardsoftError, match="not UTF-8"):
        load_program(bad)


def test_a_missing_notation_package_is_one_line(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(source.NOTATION_PACKAGES, ".brasp", "hardsoft.programs.no_such_pkg")
    f = tmp_path / "p.brasp"
    f.write_text("Q_a(i)\n")
    with pytest.raises(HardsoftError, match=r"B-RASP notation \(\.brasp\) is not available"):
        load_program(f)


def test_py_programs_pass_their_name(monkeypatch, tmp_path: Path) -> None:
    """``FILE.py:NAME`` reaches the RASP package as ``load(FILE.py, name=NAME)``."""
    seen = {}

    class Fake:
        @staticmethod
        def load(path, *, alphabet, name):
            seen.update(path=path, alphabet=alphabet, name=name)
            return "program"

    monkeypatch.setattr(source.importlib, "import_module", lambda module: Fake)
    assert load_program(f"{tmp_path}/progs.py:majority", alphabet="ab") == "program"
    assert seen == {"path": tmp_path / "progs.py", "alphabet": "ab", "name": "majority"}


def test_shipped_examples_resolve_by_name() -> None:
    assert resolve_program("@dyck1") == DYCK
    assert resolve_program("@dyck1.cr") == DYCK
    assert resolve_program("dyck1.cr") == Path("dyck1.cr")
    with pytest.raises(HardsoftError, match="no shipped example program '@nosuch'"):
        resolve_program("@nosuch")
    names = [e.name for e in source.example_files()]
    assert {"dyck1", "anbncn", "majority", "first_symbol", "last_symbol"} <= set(names)


# ------------------------------------------------------------------ the reference by encoding


class _Stub:
    """A program whose statements are given arrays (for the number and one-hot encodings)."""

    notation = Notation.RASP
    name = "stub"

    def __init__(self, alphabet, values) -> None:
        self.alphabet = alphabet
        self.statements = tuple(values)
        self._values = values

    def run(self, word: str) -> ProgramRun:
        key = tuple(self.alphabet.index(c) for c in word)
        vals = {k: list(f(key)) for k, f in self._values.items()}
        return ProgramRun(word, vals, bool(vals[self.statements[-1]][-1]) if word else False)


def test_numeric_and_onehot_outputs_are_compared_by_their_encoding() -> None:
    """A model's own outputs, declared as a number (value/n), a one-hot value and a bit, agree
    with a program that returns them; nudging the number past the tolerance is a mismatch."""
    from hardsoft.compile import compile_formula

    model = compile_formula({"f": "'a'", "l": "Y 'b'", "b": "#<['a'] > #<['b']"}, "ab")

    def outputs(key):
        return model.run_words(["".join("ab"[k] for k in key)])[0]

    def frac(key):  # column 0 carries value/n
        return outputs(key)[:, 0] * len(key)

    def label(key):  # column 1 is 1 where the label is "on"
        return ["on" if v > 0.5 else "off" for v in outputs(key)[:, 1]]

    def bit(key):
        return [bool(v > 0.5) for v in outputs(key)[:, 2]]

    model.meta["program"] = {
        "notation": "rasp",
        "name": "stub",
        "source": "stub.py",
        "outputs": [
            {"name": "f", "statement": "frac", "encoding": "number", "value": None, "unit": "x/n"},
            {"name": "l", "statement": "label", "encoding": "onehot", "value": "on", "unit": None},
            {"name": "b", "statement": "bit", "encoding": "bool", "value": None, "unit": None},
        ],
    }
    prog = _Stub(("a", "b"), {"frac": frac, "label": label, "bit": bit})
    reference, numeric, specs = program_reference(model, prog)
    assert numeric == [True, False, False] and [s.statement for s in specs] == [
        "frac", "label", "bit"
    ]  # fmt: skip
    options = dict(exhaustive_max_n=4, random_n=[9], samples=3)
    rep = check_model(model, reference, readout="outputs", numeric=numeric, **options)
    assert rep["mismatches"] == 0 and rep["checked_positions"] > 0
    # an undefined value (None, e.g. an aggregate over nothing) is skipped, not compared
    prog._values["frac"] = lambda key: [None, *list(frac(key))[1:]]
    reference, numeric, _ = program_reference(model, prog)
    assert np.isnan(reference(np.array([[0, 1]]))[0, 0, 0])
    rep = check_model(model, reference, readout="outputs", numeric=numeric, **options)
    assert rep["mismatches"] == 0
    prog._values["frac"] = lambda key: frac(key) + 1e-3 * len(key)
    reference, numeric, _ = program_reference(model, prog)
    rep = check_model(model, reference, readout="outputs", numeric=numeric, **options)
    assert rep["mismatches"] > 0 and rep["first_mismatch"]["output_of"] == "f"


def test_reference_refuses_a_foreign_model() -> None:
    prog = load_program(DYCK)
    model = random_model(layers=1, heads=1, d_model=8, alphabet="ab", seed=0)
    with pytest.raises(HardsoftError, match="alphabet 'ab' is not the program's"):
        program_reference(model, prog)
    from hardsoft.compile import compile_formula

    model = compile_formula({"x": "'('"}, "()")
    with pytest.raises(HardsoftError, match="statement 'x', which the program 'dyck1' does not"):
        program_reference(model, prog)


# ------------------------------------------------------------------ commands


def test_program_run_json_and_text(tmp_path: Path) -> None:
    res = run_cli("program", "run", "@dyck1", "--input", "(()", "--input", "()", "--json")
    assert res.rc == 0, res.err
    results = json.loads(res.out)["results"]
    assert [r["input"] for r in results] == ["(()", "()"]
    assert [r["accept"] for r in results] == [False, True]
    assert results[0]["values"]["opens"] == [1, 2, 2]
    assert results[0]["values"]["dyck1"] == [False, False, False]
    res = run_cli("program", "run", str(DYCK), "-i", "()")
    lines = res.out.splitlines()
    assert res.rc == 0 and lines[-1] == "accept: True"
    assert lines[-2].split() == ["dyck1", "0", "1"] and lines[2].split() == ["position", "1", "2"]


def test_program_run_trace_is_a_readable_page(tmp_path: Path) -> None:
    page = tmp_path / "t.html"
    res = run_cli("program", "run", "@majority", "-i", "0110", "-i", "1", "--trace", str(page))
    assert res.rc == 0, res.err
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count('<div class="run">') == 2
    assert "ones &gt; zeros" in html and ">accept<" in html and ">reject<" in html
    one_error_line(run_cli("program", "run", "@majority", "-i", "1", "--trace", str(tmp_path)),
                   "is a folder")  # fmt: skip


def test_program_compile_check_and_decompile(tmp_path: Path) -> None:
    model = tmp_path / "maj.safetensors"
    res = run_cli("program", "compile", "@majority", "--target", "soft-temperature",
                  "-o", str(model), "--json")  # fmt: skip
    assert res.rc == 0, res.err
    summary = json.loads(res.out)
    assert summary["notation"] == "crasp" and summary["output_names"] == ["majority"]
    assert summary["formulas"]["majority"] == "#<['1'] > #<['0']"
    assert summary["certificate"]["values"]["1000"]["tau"] > 0
    meta = read_metadata(model)["meta"]
    assert meta["program"]["name"] == "majority" and meta["certificate"]["route"] == "C-RASP"
    res = run_cli("check", str(model), "--program", "@majority", "--exhaustive-max-n", "8",
                  "--random-n", "300", "--samples", "8", "--json")  # fmt: skip
    assert res.rc == 0, res.err
    report = json.loads(res.out)
    assert report["mismatches"] == 0 and report["reference"]["outputs"] == {"majority": "majority"}
    # a program that computes something else under the same statement name: exit 1
    other = tmp_path / "other.cr"
    other.write_text('ones = #"1"\nzeros = #"0"\nmajority = ones >= zeros\n')
    res = run_cli("check", str(model), "--program", str(other), "--exhaustive-max-n", "4",
                  "--random-n", "", "--json")  # fmt: skip
    assert res.rc == 1 and json.loads(res.out)["first_mismatch"]["word"] in ("01", "10")
    hard = tmp_path / "maj-hard.safetensors"
    assert run_cli("program", "compile", "@majority", "-o", str(hard)).rc == 0
    back = tmp_path / "back.cr"
    res = run_cli("decompile", str(hard), "--as", "crasp", "-o", str(back), "--verify-n", "4",
                  "--random-words", "0", "--json")  # fmt: skip
    assert res.rc == 0, res.err
    assert json.loads(res.out)["program"] == back.read_text()
    res = run_cli("check", str(hard), "--program", str(back), "--exhaustive-max-n", "8",
                  "--random-n", "100", "--samples", "4")  # fmt: skip
    assert res.rc == 0, res.err + res.out


def test_program_list_shows_tasks_and_files() -> None:
    res = run_cli("program", "list", "--json")
    assert res.rc == 0
    data = json.loads(res.out)
    names = [p["name"] for p in data["programs"]]
    assert names == ["induction-head", "khop", "flipflop", "dyck", "parity"]
    assert data["programs"][-1]["routes"] == ["layernorm"]
    files = {f["name"]: f for f in data["files"]}
    assert files["@dyck1"]["notation"] == "crasp" and files["@dyck1"]["alphabet"] == "()"
    assert files["@dyck1"]["statements"][-1] == "dyck1"


@pytest.mark.parametrize(
    "args, needles",
    [
        (["program", "run", "@dyck1"], ["give at least one --input"]),
        (
            ["program", "run", "@dyck1", "-i", "(a"],
            ["--input 1: symbol 'a' at position 2 is not in the program's alphabet"],
        ),
        (["program", "run", "nosuch.cr", "-i", "a"], ["no such program file"]),
        (["program", "run", "x.txt", "-i", "a"], ["unknown program notation"]),
        (
            ["program", "compile", "@dyck1", "--output", "opens", "-o", "{out}"],
            ["statement opens is a count"],
        ),
        (["program", "compile", "@dyck1", "--target", "nope", "-o", "{out}"], ["target"]),
        (["program", "compile", "@dyck1", "--masks", "nope", "-o", "{out}"], ["mask"]),
        (
            ["program", "compile", "@dyck1", "-a", "ab", "-o", "{out}"],
            ['statement opens (line 5): symbol "(" is not in the alphabet'],
        ),
        (["check", "{model}", "--program", "@anbncn"], ["is not in the alphabet"]),
        (["check", "{model}", "--program", "@dyck1", "--formula", "'a'"], ["exactly one of"]),
        (["decompile", "{model}", "--as", "nope"], ["--as notation 'nope'"]),
        (["program", "nosuch", "-o", "{out}"], ["nosuch"]),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, args, needles) -> None:
    model = tmp_path / "m.safetensors"
    assert run_cli("program", "compile", "@dyck1", "-o", str(model)).rc == 0
    before = model.read_bytes()
    out = tmp_path / "new.safetensors"
    argv = [a.format(out=out, model=model) for a in args]
    one_error_line(run_cli(*argv), *needles)
    assert not out.exists() and model.read_bytes() == before


def test_bad_program_file_errors_name_the_statement(tmp_path: Path) -> None:
    f = tmp_path / "bad.cr"
    f.write_text('x = #"a"\ny = x && "a"\n')
    one_error_line(run_cli("program", "run", str(f), "-i", "a"),
                   '"statement y (line 2): x is a count, used as a Boolean'[1:])  # fmt: skip
    f.write_text('x = "a"\ny = (x ||\n')
    res = run_cli("program", "compile", str(f), "-o", str(tmp_path / "m.safetensors"))
    lines = res.err.strip().splitlines()
    assert res.rc == 2 and lines[0].startswith(
        f"error: {str(f)!r}: syntax error at line 2, column 10"
    )
    assert lines[1:] == ["  y = (x ||", "           ^"]


def test_examples_match_model_outputs_through_check_numpy(tmp_path: Path) -> None:
    """The compiled anbncn model against the interpreter at long random words (n = 2000),
    where almost every prefix is out: the check must see the same all-zero outputs."""
    prog = load_program("@anbncn")
    model = prog.compile("soft-temperature")
    reference, numeric, _ = program_reference(model, prog)
    rep = check_model(model, reference, readout="outputs", numeric=numeric,
                      exhaustive_max_n=6, random_n=[2000], samples=2)  # fmt: skip
    assert rep["mismatches"] == 0
    ids = np.array([[0] * 5 + [1] * 5 + [2] * 5])
    assert reference(ids)[0, -1, 0] == 1.0 and reference(ids)[0, -2, 0] == 0.0


# ------------------------------------------------------------------ the programs experiment


def test_programs_experiment_checks_every_target(tmp_path: Path, monkeypatch) -> None:
    """One program per notation (the full set runs in `hardsoft reproduce`): every target its
    notation offers built (or refused with the reason) and checked, a table row each, the
    figure written, and the claim's verdict read back."""
    from hardsoft.experiments import Context
    from hardsoft.experiments import programs as experiment
    from hardsoft.report.claims import CLAIMS

    chosen = [
        e for e in source.example_programs() if e.name in ("@dyck1", "@ab_plus", "@tracr_lib:hist")
    ]
    assert len(chosen) == 3
    monkeypatch.setattr(experiment, "example_programs", lambda: chosen)
    targets = dict(source.NOTATION_TARGETS)  # a target C-RASP refuses: listed with its reason
    targets[Notation.CRASP] = (*targets[Notation.CRASP], "bogus")
    monkeypatch.setattr(experiment, "NOTATION_TARGETS", targets)
    result = experiment.run(Context(quick=True, figures_dir=tmp_path))
    m = result.metrics
    assert m["programs"] == 3 and m["notations"] == ["crasp", "brasp", "rasp"]
    assert {(r["program"], r["target"]) for r in m["rows"]} == {
        (e.label, t) for e in chosen for t in targets[e.file.notation]
    }
    refused = [r for r in m["rows"] if "refused" in r]
    assert [(r["program"], r["target"]) for r in refused] == [("dyck1", "bogus")]
    assert "bogus" in refused[0]["refused"] and "\n" not in refused[0]["refused"]
    assert m["models"] == 10 and m["refused"] == 1
    assert m["mismatches"] == 0 and m["all_exact"] and m["checked_positions"] > 4000
    assert all(r["positions"] > 0 for r in m["rows"] if "refused" not in r)
    assert (tmp_path / result.figures[0]).stat().st_size > 10_000
    assert len(result.tables[0].rows) == 11
    verdict, key = CLAIMS["programs"].judge(m)
    assert verdict == "extends" and "0 mismatches" in key


def test_example_programs_list_every_program_of_every_file() -> None:
    """`program list` and the experiment see the same programs: a RASP file's SOps one by one."""
    programs = source.example_programs()
    names = [e.name for e in programs]
    assert "@dyck1" in names and "@ab_plus" in names and "@tracr_lib:hist" in names
    assert "@tracr_lib" not in names
    res = run_cli("program", "list", "--json")
    assert [f["name"] for f in json.loads(res.out)["files"]] == names
    for e in programs[:3] + programs[-2:]:
        assert load_program(e.path).statements


def test_docs_show_what_the_code_prints() -> None:
    """docs/programs.md's worked example is the current output of `program run`."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "programs.md").read_text()
    res = run_cli("program", "run", "@dyck1", "--input", "())(")
    assert res.rc == 0
    assert '$ hardsoft program run @dyck1 --input "())(" --trace dyck1.html\n' + res.out in doc
    source_text = (source.EXAMPLES / "dyck1.cr").read_text()
    body = [ln for ln in source_text.splitlines() if ln and not ln.startswith("// ")]
    assert "\n".join(body) in doc

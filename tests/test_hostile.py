"""Regression tests for issue 41 (part 2): internal errors, misleading behaviours and the
pieces of the hang fixes that a unit test can pin without a clock. Each reported case gives a
correct answer, a warned answer or one ``error:`` line; the CLI-level hostile cases (nesting,
file size and kind, an output that is an input, pipes, Ctrl-C) are in test_cli_fuzz.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hardsoft.compile import compile_formula
from hardsoft.errors import HardsoftError
from hardsoft.model import load_model, save_model
from tests._cli import run_cli


def one_error(res, *needles: str) -> str:  # type: ignore[no-untyped-def]
    lines = res.err.strip().splitlines()
    assert res.rc == 2, (res.rc, res.err, res.out)
    assert len(lines) == 1 and lines[0].startswith("error:"), res.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# ---- malformed meta["program"]: exit 2 with one line, not exit 3 --------------------------


MALFORMED = {
    "no name": (lambda p: p["outputs"][0].pop("name"), "output 1 has no name"),
    "no statement": (lambda p: p["outputs"][0].pop("statement"), "has no statement"),
    "more outputs": (lambda p: p["outputs"].append(dict(p["outputs"][0])), "lists 2 outputs"),
    "empty values": (
        lambda p: p["outputs"][0].update(read="nearest", values=[]),
        "non-empty list of numbers",
    ),
    "max_len ten": (lambda p: p.update(max_len="ten"), "max_len must be an integer >= 0"),
    "outputs not a list": (lambda p: p.update(outputs={"x": 1}), "has no list 'outputs'"),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("compiled")
    assert run_cli("program", "compile", "@dyck1", "-o", str(d / "dyck1.safetensors")).rc == 0
    return d / "dyck1.safetensors"


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_program_metadata_is_one_line(case: str, compiled: Path, tmp_path: Path) -> None:
    change, needle = MALFORMED[case]
    model = load_model(compiled)
    change(model.meta["program"])
    bad = tmp_path / "bad.safetensors"
    save_model(model, bad)
    one_error(run_cli("run", str(bad), "--input", "()"), f"{str(bad)!r}", needle)
    one_error(run_cli("check", str(bad), "--program", "@dyck1", "--exhaustive-max-n", "3",
                      "--random-n", "8"), needle)  # fmt: skip


def test_a_built_in_task_model_checks_against_a_program(tmp_path: Path) -> None:
    """``program dyck`` writes meta["program"] as the task's name (a string): ``check
    --program`` read it as an object and exited 3."""
    model = tmp_path / "d.safetensors"
    assert run_cli("program", "dyck", "--k", "1", "-o", str(model)).rc == 0
    res = run_cli("check", str(model), "--program", "@dyck1", "--exhaustive-max-n", "6",
                  "--random-n", "20", "--samples", "4")  # fmt: skip
    assert res.rc == 0, res.err


# ---- misleading -----------------------------------------------------------------------------


def test_compile_reads_a_name_as_eval_and_check_do(tmp_path: Path) -> None:
    """``compile first`` compiled the named formula @first while ``eval`` and ``check -f``
    read ``first`` as the keyword: compile-then-check of one text failed."""
    model = tmp_path / "first.safetensors"
    assert run_cli("compile", "first", "--alphabet", "01", "-o", str(model)).rc == 0
    res = run_cli("check", str(model), "--formula", "first", "--exhaustive-max-n", "6",
                  "--random-n", "20", "--samples", "4")  # fmt: skip
    assert res.rc == 0, res.err
    one_error(run_cli("compile", "parity-mod", "-o", str(model)), "written @parity-mod")
    assert run_cli("compile", "@parity-mod", "-o", str(model)).rc == 0


@pytest.mark.parametrize(
    ("extra", "needle"),
    [(["--stream", "--dense"], "--dense runs the dense reference"),
     (["--chunk", "64"], "--chunk sets the chunks of --stream"),
     (["--stream", "--chunk-size", "8"], "--chunk-size is the attention block size")],
)  # fmt: skip
def test_options_a_mode_ignores_are_refused(extra: list[str], needle: str, tmp_path: Path) -> None:
    model = tmp_path / "p.safetensors"
    save_model(compile_formula("MOD(2,1)(#<['1'])", "01", causal=True), model)
    word = tmp_path / "w.txt"
    word.write_text("0110\n")
    for command in (["run", str(model)], ["check", str(model), "-f", "MOD(2,1)(#<['1'])"]):
        one_error(run_cli(*command, "--input-file", str(word), *extra), needle)


def test_decompile_says_when_verify_n_was_cut(tmp_path: Path) -> None:
    """--verify-n 40 checked every word up to n = 13 only, and said nothing."""
    model = tmp_path / "m.safetensors"
    save_model(compile_formula("Y 'a'", "ab", "hard"), model)
    res = run_cli("decompile", str(model), "--verify-n", "40", "--random-words", "0", "--json")
    assert res.rc == 0, res.err
    verified = json.loads(res.out)["verified"]
    assert verified["exhaustive_requested"] == 40 and verified["exhaustive_n"] == 13
    assert "up to n = 13 only" in verified["exhaustive_limited"]
    assert res.err.startswith("warning: --verify-n 40: every word was checked up to n = 13 only")


def test_a_local_file_is_not_shadowed_by_a_shipped_example(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("@dyck1.cr").write_text('// alphabet: ()\nx = "("\n')
    one_error(run_cli("program", "run", "@dyck1.cr", "-i", "()"), "names both the shipped")
    res = run_cli("program", "run", "./@dyck1.cr", "-i", "(", "--json")
    assert res.rc == 0 and json.loads(res.out)["statements"] == ["x"], res.err
    res = run_cli("program", "run", "@dyck1", "-i", "()", "--json")  # the example, unambiguous
    assert res.rc == 0 and json.loads(res.out)["results"][0]["accept"] is True


# ---- stale temporary files of killed writes ---------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_next_write_removes_stale_temporary_files(tmp_path: Path) -> None:
    """SIGKILL mid-write left hidden temporary files (one of 96 MB); the next write to the
    folder removes those of processes that are gone, and nothing else."""
    from hardsoft.model import io

    out = tmp_path / "m.safetensors"
    prefix = io.temp_prefix(out)
    host = prefix.split("hardsoft-")[1].split("-")[0]
    stale = tmp_path / f".m.safetensors.hardsoft-{host}-{_dead_pid()}-x.tmp"
    mine = tmp_path / f"{prefix}live.tmp"  # this process: a write in progress
    user = tmp_path / ".m.safetensors.keep"  # not a name hardsoft writes
    for f in (stale, mine, user):
        f.write_bytes(b"partial")
    save_model(compile_formula("'a'", "ab"), out)
    assert not stale.exists() and mine.exists() and user.exists() and out.exists()


def test_a_killed_write_leaves_nothing_after_the_next_one(tmp_path: Path) -> None:
    """A real SIGKILL in the middle of a write (the temporary file is there), then a write."""
    code = (
        "import os, sys, time, pathlib\n"
        "from hardsoft.model.io import atomic_write\n"
        "def slow(tmp):\n"
        "    pathlib.Path(tmp).write_bytes(b'x' * 1000)\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(600)\n"
        f"atomic_write(pathlib.Path({str(tmp_path / 'o.txt')!r}), slow)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    proc.kill()
    proc.wait()
    assert len(list(tmp_path.glob(".o.txt.*"))) == 1  # what SIGKILL leaves
    from hardsoft.model.io import atomic_write

    atomic_write(tmp_path / "o.txt", lambda tmp: Path(tmp).write_text("done"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.txt"]


# ---- the hang fixes, pinned without a clock -------------------------------------------------


def test_decompile_budget_is_looked_at_inside_head_outcomes(monkeypatch) -> None:
    """--budget 60 stopped at 210 s: one query class's head outcomes never looked at it."""
    import inspect

    from hardsoft.classes import budget
    from hardsoft.decompile import decompile

    callers: set[str] = set()
    real = budget.check

    def spy() -> None:
        callers.add(inspect.stack()[1].function)
        real()

    monkeypatch.setattr(budget, "check", spy)
    model = compile_formula("Y 'a' & P 'b'", "ab", "hard")
    decompile(model, verify_n=3, random_words=0, budget=600)
    assert {"head_outcomes", "_block"} <= callers, callers


def test_prev_k_shares_one_chain_of_y() -> None:
    """``#import prevK`` built K separate chains Y^1 .. Y^K (K²/2 nodes: 3.3 GB at K = 10^4)."""
    from hardsoft.logic.structure import children
    from hardsoft.logic.syntax import Prev
    from hardsoft.programs.crasp import from_text

    prog = from_text('#import prev300\nx = #[prev300] "a" > 0\n', alphabet="ab")
    seen: dict[int, object] = {}
    stack = [prog.formulas["x"]]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(children(node))
    prevs = [n for n in seen.values() if isinstance(n, Prev)]
    assert 300 <= len(prevs) <= 301, len(prevs)


def test_a_linear_statement_checker_still_finds_what_it_found() -> None:
    """The checker no longer copies the later statements per statement (quadratic); a guard
    naming the statement itself, a forward use and a cycle are still named."""
    from hardsoft.programs.crasp import from_text

    with pytest.raises(HardsoftError, match="x is a statement; a guard"):
        from_text('#import pred\nx = #[x] "a" > 0\n', alphabet="ab")
    with pytest.raises(HardsoftError, match="defined later"):
        from_text('x = y\ny = "a"\n', alphabet="ab")
    with pytest.raises(HardsoftError, match="a cycle x -> y -> x"):
        from_text("x = y\ny = x\n", alphabet="ab")
    chain = 'x0 = "a"\n' + "".join(f"x{k} = !x{k - 1}\n" for k in range(1, 5001))
    assert from_text(chain, alphabet="ab").run("a").accept is True  # 5,000 negations of true


@pytest.mark.skipif(not os.path.exists("/dev/urandom"), reason="needs /dev/urandom")
def test_an_endless_input_file_is_refused_at_the_cap(tmp_path: Path, monkeypatch) -> None:
    from hardsoft import validate

    monkeypatch.setattr(validate, "MAX_INPUT_BYTES", 1 << 16)
    link = tmp_path / "w.txt"
    link.symlink_to("/dev/urandom")
    with pytest.raises(HardsoftError, match="larger than 65536 bytes"):
        validate.read_bytes(link, "--input-file")

"""``hardsoft atlas add-row --program FILE``: a program's language as an atlas row. A column is
constructed only where a model compiled from the program had 0 mismatches against the
program's interpreter and lies in the column's class as read from the model; refused targets
carry their reason; bad input is one ``error:`` line and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hardsoft.atlas import program_rows
from hardsoft.atlas.build import build_atlas, to_csv
from hardsoft.atlas.evidence import class_violations
from hardsoft.atlas.program_rows import add_program_row
from hardsoft.atlas.table import column
from hardsoft.errors import HardsoftError
from hardsoft.model.io import load_model

from ._cli import run_cli as run

MAJORITY = """// alphabet: 01
ones = #"1"
zeros = #"0"
majority = ones > zeros
"""

FIRST_A = """Q_a(i)
Q_b(i)
first_is_a(i) := leftmost [j<=i, 1] Q_a(j) : 0
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _targets(rec: dict) -> dict[str, dict]:
    return {t["target"]: t for t in rec["targets"]}


def _settled_honestly(rec: dict, out: Path) -> None:
    """Every settled column: a stored model that reloads, is in the class, and whose stored
    check found 0 mismatches; every unsettled column has a recorded reason per model."""
    for t in rec["targets"]:
        if "refused" in t:
            continue
        model = load_model(out / t["model"])
        report = json.loads((out / t["check"]).read_text())
        assert report["mismatches"] == t["mismatches"]
        for cid in t["columns"]:
            assert t["exact"] and report["mismatches"] == 0
            assert class_violations(model, column(cid)) == []
        for cid, why in t["outside"].items():
            assert cid not in t["columns"] and why
    assert rec["settled"] == sorted({c for t in rec["targets"] for c in t.get("columns", [])})


def test_a_crasp_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    prog = _write(tmp_path, "majority.cr", MAJORITY)
    out = tmp_path / "atlas"
    rec = add_program_row(out, "maj", prog)
    _settled_honestly(rec, out)
    targets = _targets(rec)
    assert set(targets) == {"hard", "soft-temperature", "soft-pe"}
    # counting needs average heads: the hard model is average-hard, never unique-hard
    assert "ahat" in targets["hard"]["columns"]
    assert "uhat-strict" not in rec["settled"] and "uhat-pe" not in rec["settled"]
    assert any("average" in w for w in targets["hard"]["outside"]["uhat-strict"])
    assert "soft-tau" in targets["soft-temperature"]["columns"]
    assert "soft-pe" in targets["soft-pe"]["columns"]
    # a fixed margin is never claimed from a finite check
    for cid in ("soft-margin", "soft-ln", "soft-ln-eps"):
        assert cid not in rec["settled"]
        assert program_rows.MARGIN_REASON in targets["soft-pe"]["outside"][cid]
    assert (out / "rows" / "maj.json").is_file()


def test_a_brasp_row_on_the_page_json_and_csv(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "atlas"
    build_atlas(out, quick=True, only="ones-star,uhat-strict")
    prog = _write(tmp_path, "first_a.brasp", FIRST_A)
    r = run("atlas", "add-row", "--program", prog, "--name", "first-a", "--out", str(out), "--json")
    assert r.rc == 0, r.err
    rec = json.loads(r.out)  # one JSON object
    assert rec["notation"] == "brasp" and rec["page_updated"] is True
    _settled_honestly(rec, out)
    hard = _targets(rec)["hard"]
    # unique-hard heads with a non-strict mask (j <= i): in uhat-pe, not in uhat-strict
    assert "uhat-pe" in hard["columns"] and "uhat-strict" not in hard["columns"]
    assert any("non-strict" in w for w in hard["outside"]["uhat-strict"])
    table = json.loads((out / "atlas.json").read_text())
    cells = [c for c in table["cells"] if c["row"] == "first-a"]
    assert sorted(c["column"] for c in cells) == rec["settled"]
    for c in cells:
        assert (c["status"], c["evidence_kind"], c["verdict"]) == ("constructed", "proof", "agrees")
        for path in c["evidence"]["artefacts"].values():
            assert (out / path).is_file()
    assert table["kinds"]["proof"] == 1 + len(cells)
    csv = to_csv(table)
    assert sum(line.startswith("first-a,") for line in csv.splitlines()) == len(cells)
    assert "first-a" in (out / "index.html").read_text()


def test_the_stored_commands_recheck_the_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    prog = _write(tmp_path, "first_a.brasp", FIRST_A)
    out = tmp_path / "atlas"
    rec = add_program_row(out, "first-a", prog)
    check = _targets(rec)["hard"]["commands"][1].split()
    assert check[:2] == ["hardsoft", "check"]
    check[2] = str(out / check[2])
    r = run(*check[1:])
    assert r.rc == 0, r.err
    assert json.loads(r.out)["mismatches"] == 0


def test_a_wrong_model_settles_nothing(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A check with mismatches (here: the interpreter's verdict flipped) gives no cell."""
    from hardsoft.programs import reference

    real = reference._encode
    monkeypatch.setattr(reference, "_encode", lambda spec, values: 1.0 - real(spec, values))
    rec = add_program_row(tmp_path, "maj", _write(tmp_path, "m.cr", MAJORITY))
    assert rec["settled"] == [] and rec["status"] == "open"
    assert all(t["mismatches"] > 0 and not t["columns"] for t in rec["targets"])


def test_refused_targets_are_recorded_with_their_reasons(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A RASP program every target refuses (a threshold on an average with no fixed grid):
    each refusal is one line, no cell is claimed, and the row is still listed on the page
    with what each target gave."""
    prog = _write(
        tmp_path,
        "tie.py",
        "from hardsoft import rasp\n"
        "is_one = rasp.numerical(rasp.Map(lambda t: 1 if t == '1' else 0, rasp.tokens))\n"
        "same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)\n"
        "frac = rasp.numerical(rasp.Aggregate(same, is_one, default=0))\n"
        "ones = rasp.Map(lambda f: f > 0.5, frac)\n"
        "vocab = {'0', '1'}\n",
    )
    out = tmp_path / "atlas"
    build_atlas(out, quick=True, only="ones-star,uhat-strict")
    r = run("atlas", "add-row", "--program", f"{prog}:ones", "--name", "tie",
            "--out", str(out))  # fmt: skip
    assert r.rc == 0, r.err
    rec = json.loads((out / "rows" / "tie.json").read_text())
    assert [t["target"] for t in rec["targets"]] == ["average-hard", "soft-temperature", "hard"]
    text = " ".join(r.out.split())
    for t in rec["targets"]:
        assert t["refused"].startswith("cannot compile") and "\n" not in t["refused"]
        assert f"{t['target']}: refused: cannot compile" in text
    assert rec["settled"] == [] and rec["status"] == "open"
    table = json.loads((out / "atlas.json").read_text())
    assert not [c for c in table["cells"] if c["row"] == "tie"]
    entry = next(row for row in table["rows"] if row["id"] == "tie")
    assert "average-hard: refused" in entry["note"]
    assert "average-hard: refused" in (out / "index.html").read_text()


def test_a_rasp_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A RASP program (a prefix average thresholded: uniform heads) compiles for every
    target; where each model lands is read from the model."""
    prog = _write(
        tmp_path,
        "frac.py",
        "from hardsoft import rasp\n"
        "is_one = rasp.numerical(rasp.Map(lambda t: 1 if t == '1' else 0, rasp.tokens))\n"
        "prevs = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)\n"
        "frac = rasp.numerical(rasp.Aggregate(prevs, is_one, default=0))\n"
        "more = rasp.Map(lambda f: f > 0.5, frac)\n"
        "vocab = {'0', '1'}\n",
    )
    out = tmp_path / "atlas"
    rec = add_program_row(out, "more-ones", f"{prog}:more")
    _settled_honestly(rec, out)
    assert all("refused" not in t and t["exact"] for t in rec["targets"])
    assert rec["settled"]


def test_names_are_not_reused_for_another_program(tmp_path) -> None:  # type: ignore[no-untyped-def]
    maj = _write(tmp_path, "m.cr", MAJORITY)
    first = _write(tmp_path, "f.brasp", FIRST_A)
    out = tmp_path / "atlas"
    add_program_row(out, "row", maj)
    add_program_row(out, "row", maj)  # the same program again: fine
    before = (out / "rows" / "row.json").read_text()
    with pytest.raises(HardsoftError, match="already exists"):
        add_program_row(out, "row", first)
    r = run("atlas", "add-row", "--regex", "a*", "--name", "row", "--alphabet", "ab",
            "--out", str(out))  # fmt: skip
    assert r.rc == 2 and "already exists" in r.err
    assert (out / "rows" / "row.json").read_text() == before
    assert add_program_row(out, "row", first, force=True)["notation"] == "brasp"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--program", "nope.cr"], "no such program file"),
        (["--program", "{bad}"], "^"),
        (["--program", "{maj}", "--regex", "a*"], "exactly one of --regex, --dfa and --program"),
        (["--program", "{count}"], "must be Boolean"),
        (["--program", "{tokens}:shifted"], "not Boolean"),
        (["--program", "x.txt"], "unknown program notation"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, args, message) -> None:  # type: ignore[no-untyped-def]
    files = {
        "bad": _write(tmp_path, "bad.cr", 'ones = #"1"\nx = ones >\n'),
        "maj": _write(tmp_path, "m.cr", MAJORITY),
        "count": _write(tmp_path, "c.cr", '// alphabet: 01\nones = #"1"\n'),
        "tokens": _write(
            tmp_path,
            "t.py",
            "from hardsoft import rasp\nshifted = rasp.Map(lambda t: t, rasp.tokens)\n"
            "vocab = {'a', 'b'}\n",
        ),
    }
    args = [a.format(**files) for a in args]
    out = tmp_path / "atlas"
    r = run("atlas", "add-row", *args, "--name", "x", "--out", str(out))
    assert r.rc == 2
    assert r.err.startswith("error:") and message in r.err and "Traceback" not in r.err
    assert not out.exists()


def test_a_model_exact_only_up_to_a_bound_settles_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A RASP program that needs a length bound (its file's max_len) gives models exact only
    up to it: refused, since a column's class is about every length."""
    prog = _write(
        tmp_path,
        "bound.py",
        "from hardsoft import rasp\n"
        "every = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)\n"
        "length = rasp.numerical(rasp.SelectorWidth(every))\n"
        "odd = rasp.Map(lambda n: n * n % 3 == 1, length)\n"
        "vocab = {'a', 'b'}\nmax_len = 6\n",
    )
    rec = add_program_row(tmp_path, "odd", f"{prog}:odd")
    assert rec["settled"] == []
    assert all("length at most 6" in t["refused"] for t in rec["targets"])


def test_replacing_a_row_leaves_only_its_own_artefacts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "atlas"
    add_program_row(out, "row", _write(tmp_path, "m.cr", MAJORITY))
    (out / "rows" / "row" / "average-hard.safetensors").write_bytes(b"old")  # another notation's
    rec = add_program_row(out, "row", _write(tmp_path, "f.brasp", FIRST_A), force=True)
    named = {Path(t[k]).name for t in rec["targets"] for k in ("model", "check") if k in t}
    assert {p.name for p in (out / "rows" / "row").iterdir()} == named

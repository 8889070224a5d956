"""The atlas (``hardsoft atlas``): every cell has a status, a citation and stored evidence;
constructed cells' stored models pass the exact check again; impossible cells' stored witnesses
still fool their stored models; a wrong construction or a model outside the column's class is
reported as disagreeing, never hidden."""

from __future__ import annotations

import csv
import io
import json
import shlex
from pathlib import Path

import pytest

from hardsoft.atlas import evidence as E
from hardsoft.atlas.build import build_atlas, parse_only
from hardsoft.atlas.rows import add_row
from hardsoft.atlas.table import CLAIMS, COLUMN_IDS, COLUMNS, ROW_IDS, ROWS, Status, column, row
from hardsoft.errors import HardsoftError

from ._cli import run_cli

THEORY = "+".join(c.id for c in COLUMNS if not c.empirical)
SUBSET = f"parity+aa-star+first+flipflop,{THEORY}"


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("atlas")
    return out, build_atlas(out, quick=True, only=SUBSET)


def test_every_cell_is_declared_once() -> None:
    assert set(CLAIMS) == {(r, c) for r in ROW_IDS for c in COLUMN_IDS}
    for claim in CLAIMS.values():
        assert claim.citation and claim.status in Status
        if claim.status.needs_evidence:
            assert claim.how != "none"


def test_cells_have_status_citation_and_stored_evidence(atlas) -> None:
    out, table = atlas
    assert table["cells_total"] == 4 * 7
    assert not table["disagreements"] and not table["no_evidence"]
    for cell in table["cells"]:
        assert cell["status"] in {s.value for s in Status} and cell["citation"]
        assert (out / cell["evidence_path"]).is_file()
        if Status(cell["status"]).needs_evidence:
            assert cell["verdict"] == "agrees", cell
            for path in cell["evidence"]["artefacts"].values():
                assert (out / path).is_file()
            assert cell["evidence"]["commands"]


def _cells(table: dict, status: str) -> list[dict]:
    return [c for c in table["cells"] if c["status"] == status]


def test_constructed_models_pass_the_check_again(atlas) -> None:
    out, table = atlas
    cells = _cells(table, "constructed")
    assert len(cells) >= 15
    for cell in cells:
        rep = E.recheck_constructed(out, cell)
        assert rep["mismatches"] == 0 and rep["max_abs_error"] == 0.0, cell["evidence_path"]


def test_a_stored_check_command_runs_and_passes(atlas, monkeypatch) -> None:
    out, table = atlas
    cell = next(c for c in _cells(table, "constructed") if c["row"] == "parity")
    cmd = next(c for c in cell["evidence"]["commands"] if c.startswith("hardsoft check"))
    monkeypatch.chdir(out)
    r = run_cli(*shlex.split(cmd)[1:], "--json")
    assert r.rc == 0, r.err
    assert json.loads(r.out)["mismatches"] == 0


def test_impossible_witnesses_still_fool_their_models(atlas) -> None:
    out, table = atlas
    cells = _cells(table, "impossible")
    assert {c["column"] for c in cells} == {"uhat-strict", "uhat-pe", "soft-margin"}
    for cell in cells:
        assert E.recheck_impossible(out, cell), cell["evidence_path"]


def test_lemma5_cells_measure_decay_under_the_bound(atlas) -> None:
    _, table = atlas
    cells = [c for c in table["cells"] if c["column"] == "soft-margin"]
    assert len(cells) == 4
    for cell in cells:
        num = cell["evidence"]["numbers"]
        assert num["violations"] == 0 and num["slope_ci"][1] < 0
        assert all(i <= b for i, b in zip(num["max_influence"], num["bound"]))


def test_the_witness_recheck_can_fail(atlas, tmp_path) -> None:
    """The same pair does not fool a correct model: the compiled PARITY model tells it apart."""
    out, table = atlas
    imp = next(c for c in _cells(table, "impossible") if c["row"] == "parity")
    con = next(c for c in _cells(table, "constructed") if c["row"] == "parity")
    fake = dict(imp, evidence=dict(imp["evidence"]))
    fake["evidence"]["artefacts"] = {
        "model": con["evidence"]["artefacts"]["model"],
        "witness": imp["evidence"]["artefacts"]["witness"],
    }
    assert not E.recheck_witness(out, fake)


def test_the_decided_cell_and_the_star_free_column(atlas) -> None:
    _, table = atlas
    decided = _cells(table, "decided")
    assert [c["row"] for c in decided] == ["aa-star"]
    assert decided[0]["evidence"]["decision"]["star_free"] is False
    first = next(c for c in table["cells"] if (c["row"], c["column"]) == ("first", "uhat-strict"))
    assert first["evidence"]["decision"]["star_free"] is True
    assert first["evidence"]["numbers"]["position_features"] == []


def test_second_build_reuses_the_stored_cells(atlas) -> None:
    out, _ = atlas
    again = build_atlas(out, quick=True, only=SUBSET)
    assert all(c.get("reused") for c in again["cells"] if not c.get("user_row"))


def test_a_wrong_construction_disagrees(tmp_path) -> None:
    wrong = row("parity").__class__(**{**row("parity").__dict__, "formula": "MOD(2, 1)(#<['1'])"})
    ev = E.produce_compile(wrong, column("ahat"), E.Budget(True), tmp_path / "c", tmp_path)
    assert not ev.agrees and ev.status is None and "WRONG" in ev.summary


def test_a_model_outside_the_column_class_disagrees(tmp_path) -> None:
    """A softmax (soft-pe) compile of FIRST is exact but not a unique-hard model."""
    from hardsoft.compile import compile_formula
    from hardsoft.logic import parse

    r = row("first")
    model = compile_formula(parse(r.formula or "", alphabet=r.alphabet), r.alphabet, "soft-pe")
    bad = E.class_violations(model, column("uhat-strict"))
    assert any("softmax" in b for b in bad) and any("position features" in b for b in bad)
    assert E.class_violations(model, column("soft-pe")) == []
    assert any("unbounded" in b for b in E.class_violations(model, column("soft-tau")))


def test_csv_and_json(atlas) -> None:
    out, table = atlas
    lines = list(csv.reader(io.StringIO((out / "atlas.csv").read_text())))
    assert lines[0][:3] == ["row", "column", "status"] and len(lines) == 1 + table["cells_total"]
    assert json.loads((out / "atlas.json").read_text())["cells_total"] == table["cells_total"]


def test_cli_json_and_user_rows(tmp_path, monkeypatch) -> None:
    import hardsoft.atlas.build as B

    monkeypatch.setattr(B, "ROWS", tuple(r for r in B.ROWS if r.id in ("first", "aa-star")))
    add_row(tmp_path, "ab-star", regex="(ab)*", alphabet="ab")
    r = run_cli("atlas", "--only", "first,uhat-strict", "--out", str(tmp_path), "--json")
    assert r.rc == 0, r.err
    table = json.loads(r.out)
    assert [c["row"] for c in table["cells"]] == ["first"]
    assert table["cells"][0]["regenerate"].startswith("hardsoft atlas --quick --only first,")
    r = run_cli("atlas", "--only", "*,uhat-strict", "--out", str(tmp_path), "--json")
    table = json.loads(r.out)
    user = [c for c in table["cells"] if c.get("user_row")]
    assert [c["row"] for c in user] == ["ab-star"] and user[0]["status"] == "decided"
    assert len(table["cells"]) == 3 and "model" in user[0]["evidence"]["artefacts"]


def test_a_learned_cell_stores_models_metrics_and_reruns(tmp_path, monkeypatch) -> None:
    plan = {"max_n": 4, "steps": 30, "d_model": 8, "layers": 1, "seeds": 3, "samples": 16}
    monkeypatch.setattr(E, "learn_plan", lambda budget: plan)
    ev = E.produce_learn(
        row("first"), column("trained-lstm"), E.Budget(True), tmp_path / "c", tmp_path
    )
    assert ev.status is Status.LEARNED
    metrics = json.loads((tmp_path / ev.artefacts["metrics"]).read_text())
    assert all((tmp_path / path).is_file() for path in ev.artefacts.values())
    assert len(metrics["per_seed"]) == 3 and metrics["lengths"][-3:] == [8, 40, 400]
    for key in ("train", "2x", "10x", "100x"):
        acc = metrics["accuracy"][key]
        assert 0 <= acc["min"] <= acc["mean"] <= acc["max"] <= 1
    cmd = next(c for c in ev.commands if c.startswith("hardsoft evaluate"))
    monkeypatch.chdir(tmp_path)
    r = run_cli(*shlex.split(cmd)[1:])
    assert r.rc == 0, r.err
    rows = json.loads(r.out)["rows"]
    assert rows[-1]["accuracy"] == metrics["per_seed"][0]["100x"]  # the stored number, rerun


def test_learned_cells_outside_quick_rows_are_pending(tmp_path) -> None:
    table = build_atlas(tmp_path, quick=True, only="majority+induction-head,trained-lstm")
    assert [c["status"] for c in table["cells"]] == ["pending", "pending"]
    assert "full" in table["cells"][0]["note"] and "task" in table["cells"][1]["note"]


@pytest.mark.parametrize("text", ["parity", "nope,ahat", "parity,nope", "a,b,c", "", " "])
def test_only_is_checked(text: str) -> None:
    with pytest.raises(HardsoftError):
        parse_only(text)
    r = run_cli("atlas", "--only", text, "--out", "/tmp/never-written-atlas")
    assert r.rc == 2 and r.err.startswith("error: ")


def test_parse_only() -> None:
    assert parse_only("parity+first,*") == ({"parity", "first"}, None)
    assert parse_only(None) == (None, None)
    assert parse_only("*,ahat") == (None, {"ahat"})


@pytest.mark.slow
def test_the_whole_quick_atlas(tmp_path) -> None:
    """The done-when of the atlas: >= 60 cells backed by evidence, none disagreeing; every
    constructed model passes again and every witness still fools its model."""
    table = build_atlas(tmp_path, quick=True)
    assert table["cells_total"] == len(ROWS) * len(COLUMNS)
    assert table["cells_with_evidence"] >= 60 and not table["disagreements"]
    for cell in _cells(table, "constructed"):
        assert E.recheck_constructed(tmp_path, cell)["mismatches"] == 0
    for cell in _cells(table, "impossible"):
        assert E.recheck_impossible(tmp_path, cell)


def test_the_sensitivity_recheck_can_fail(atlas) -> None:
    """Changed numbers no longer match a fresh measurement."""
    out, table = atlas
    cell = next(c for c in table["cells"] if c["column"] == "soft-margin")
    assert E.recheck_impossible(out, cell)
    numbers = dict(cell["evidence"]["numbers"])
    numbers["max_influence"] = [2 * x for x in numbers["max_influence"]]
    fake = dict(cell, evidence=dict(cell["evidence"], numbers=numbers))
    assert not E.recheck_impossible(out, fake)


def test_a_failed_producer_is_reported_and_not_cached(tmp_path, monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise HardsoftError("a forward pass needs about 9 GiB of memory")

    monkeypatch.setattr(E, "produce_compile", refuse)
    table = build_atlas(tmp_path, quick=True, only="first,ahat")
    cell = table["cells"][0]
    assert cell["verdict"] == "no evidence" and "9 GiB" in cell["error"]
    assert table["no_evidence"] == ["first × ahat"] and table["cells_with_evidence"] == 0
    monkeypatch.undo()
    again = build_atlas(tmp_path, quick=True, only="first,ahat")
    assert again["cells"][0]["verdict"] == "agrees" and not again["cells"][0]["reused"]

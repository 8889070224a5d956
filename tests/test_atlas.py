"""The atlas (``hardsoft atlas``): every cell has a status, an evidence kind, a citation and
stored evidence; constructed cells' stored models pass the exact check again; impossible
cells rest on a theorem whose applicability check ran, with illustrations beside them that
still fool their models; a wrong construction, a model outside the column's class or a check
that fails is reported as disagreeing, never hidden."""

from __future__ import annotations

import csv
import io
import json
import shlex
from pathlib import Path

import pytest

from hardsoft.atlas import construct, illustrate, learned
from hardsoft.atlas.build import build_atlas, parse_only
from hardsoft.atlas.evidence import Budget, class_violations
from hardsoft.atlas.rows import add_row
from hardsoft.atlas.table import (
    CLAIMS,
    COLUMN_IDS,
    COLUMNS,
    REGULAR_COLUMNS,
    ROW_IDS,
    ROWS,
    EvidenceKind,
    Status,
    column,
    row,
)
from hardsoft.errors import HardsoftError

from ._cli import run_cli

THEORY = "+".join(c.id for c in COLUMNS if not c.empirical)
SUBSET = f"parity+aa-star+first+flipflop,{THEORY}"


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("atlas")
    return out, build_atlas(out, quick=True, only=SUBSET)


def test_every_cell_is_declared_once() -> None:
    """Every cell has one claim, except a regular row's construction columns, which the
    regular-row machinery settles (tests/test_atlas_regular_rows.py)."""
    regular = {r.id for r in ROWS if r.regular}
    assert regular and set(CLAIMS) == {
        (r, c) for r in ROW_IDS for c in COLUMN_IDS if not (r in regular and c in REGULAR_COLUMNS)
    }


def test_cells_have_status_kind_citation_and_stored_evidence(atlas) -> None:
    out, table = atlas
    assert table["cells_total"] == 4 * 8
    assert not table["disagreements"] and not table["no_evidence"]
    for cell in table["cells"]:
        assert cell["status"] in {s.value for s in Status} and cell["citation"]
        assert cell["evidence_kind"] in {k.value for k in EvidenceKind}
        assert (out / cell["evidence_path"]).is_file()
        if cell["evidence_kind"] == "proof":
            assert cell["verdict"] == "agrees", cell
            for path in cell["evidence"]["artefacts"].values():
                assert (out / path).is_file()
    assert sum(table["kinds"].values()) == table["cells_total"]


def _cells(table: dict, status: str) -> list[dict]:
    return [c for c in table["cells"] if c["status"] == status]


def test_constructed_models_pass_the_check_again(atlas) -> None:
    out, table = atlas
    cells = _cells(table, "constructed")
    assert len(cells) >= 15
    for cell in cells:
        rep = construct.recheck_constructed(out, cell)
        assert rep["mismatches"] == 0 and rep["max_abs_error"] == 0.0, cell["evidence_path"]


def test_a_stored_check_command_runs_and_passes(atlas, monkeypatch) -> None:
    out, table = atlas
    cell = next(c for c in _cells(table, "constructed") if c["row"] == "parity")
    cmd = next(c for c in cell["evidence"]["commands"] if c.startswith("hardsoft check"))
    monkeypatch.chdir(out)
    r = run_cli(*shlex.split(cmd)[1:], "--json")
    assert r.rc == 0, r.err
    assert json.loads(r.out)["mismatches"] == 0


def test_impossible_cells_rest_on_a_checked_theorem(atlas) -> None:
    _, table = atlas
    cells = _cells(table, "impossible")
    assert {c["column"] for c in cells} == {"uhat-strict", "uhat-pe", "soft-margin", "soft-ln-eps"}
    for cell in cells:
        ev = cell["evidence"]
        assert cell["evidence_kind"] == "proof" and ev["check"]["passed"], cell["evidence_path"]


def test_illustrations_still_fool_their_models_and_depend_on_the_input(atlas) -> None:
    out, table = atlas
    shown = [
        c for c in table["cells"] if ((c["evidence"] or {}).get("illustration") or {}).get("found")
    ]
    restrictions = [c for c in shown if c["column"].startswith("uhat")]
    assert restrictions and len(shown) > len(restrictions)
    for cell in restrictions:
        ill = cell["evidence"]["illustration"]
        assert ill["numbers"]["dependency_set"], cell["evidence_path"]  # not a constant model
        assert illustrate.recheck_witness(out, ill), cell["evidence_path"]
    for cell in shown:
        if cell["column"].startswith("soft"):
            num = cell["evidence"]["illustration"]["numbers"]
            assert num["violations"] == 0 and num["slope_ci"][1] < 0
            assert illustrate.recheck_sensitivity(out, cell["evidence"]["illustration"])


def test_the_witness_recheck_can_fail(atlas) -> None:
    """The same pair does not fool a correct model: the compiled PARITY model tells it apart."""
    out, table = atlas
    imp = next(c for c in _cells(table, "impossible") if c["row"] == "parity")
    con = next(c for c in _cells(table, "constructed") if c["row"] == "parity")
    ill = dict(imp["evidence"]["illustration"])
    ill["artefacts"] = {
        "model": con["evidence"]["artefacts"]["model"],
        "witness": ill["artefacts"]["witness"],
    }
    assert not illustrate.recheck_witness(out, ill)


def test_the_sensitivity_recheck_can_fail(atlas) -> None:
    """Changed numbers no longer match a fresh measurement."""
    out, table = atlas
    cell = next(c for c in table["cells"] if c["column"] == "soft-margin")
    ill = cell["evidence"]["illustration"]
    assert illustrate.recheck_sensitivity(out, ill)
    numbers = dict(ill["numbers"], max_influence=[2 * x for x in ill["numbers"]["max_influence"]])
    assert not illustrate.recheck_sensitivity(out, dict(ill, numbers=numbers))


def test_the_star_free_column(atlas) -> None:
    _, table = atlas
    aa = next(c for c in table["cells"] if (c["row"], c["column"]) == ("aa-star", "uhat-strict"))
    assert aa["status"] == "impossible" and aa["evidence"]["decision"]["star_free"] is False
    first = next(c for c in table["cells"] if (c["row"], c["column"]) == ("first", "uhat-strict"))
    assert first["evidence"]["decision"]["star_free"] is True
    assert first["evidence"]["numbers"]["position_features"] == []


def test_theorem_labels_come_from_the_models_certificates(atlas) -> None:
    """The label of a compiled cell is the one its stored model's certificate gives
    (compile/results.py), e.g. Thm. 20 for PARITY, Thm. 15 for 1*, Cor. 22 for (aa)*."""
    from hardsoft.compile.results import certificate_label
    from hardsoft.model.io import load_model

    out, table = atlas
    compiled = [
        c
        for c in _cells(table, "constructed")
        if c["column"] in ("soft-tau", "soft-pe") and c["row"] != "flipflop"
    ]
    assert compiled
    for cell in compiled:
        model = load_model(out / cell["evidence"]["artefacts"]["model"])
        assert cell["theorem"] == certificate_label(model.meta["certificate"])
    parity = next(c for c in compiled if c["row"] == "parity")
    assert parity["theorem"].endswith("Thm. 20)")


def test_the_average_hard_column_has_only_average_heads(atlas) -> None:
    _, table = atlas
    for cell in table["cells"]:
        if cell["column"] == "ahat":
            assert cell["evidence"]["numbers"]["weightings"] == ["average"], cell["row"]


def test_second_build_reuses_the_stored_cells(atlas) -> None:
    out, _ = atlas
    again = build_atlas(out, quick=True, only=SUBSET)
    assert all(c.get("reused") for c in again["cells"] if not c.get("user_row"))


def test_a_wrong_construction_disagrees(tmp_path) -> None:
    wrong = row("parity").__class__(**{**row("parity").__dict__, "formula": "MOD(2, 1)(#<['1'])"})
    ev = construct.produce_compile(
        wrong, column("soft-tau"), Budget(True), tmp_path / "c", tmp_path
    )
    assert not ev.agrees and ev.status is None and "WRONG" in ev.summary


def test_a_failing_applicability_check_disagrees(tmp_path, monkeypatch) -> None:
    """A fooling set that does not separate its prefixes proves nothing: the cell says so."""
    import hardsoft.atlas.build as B

    bad = row("anbn").__class__(**{**row("anbn").__dict__, "fooling": ("a", "a")})
    monkeypatch.setattr(B, "ROWS", (bad,))
    table = build_atlas(tmp_path, quick=True, only="anbn,uhat-strict")
    cell = table["cells"][0]
    assert cell["verdict"] == "DISAGREES" and "NOT shown" in cell["evidence"]["summary"]
    assert table["disagreements"] == ["anbn × uhat-strict"]


def test_a_model_outside_the_column_class_disagrees(tmp_path) -> None:
    """A softmax (soft-pe) compile of FIRST is exact but not a unique-hard model."""
    from hardsoft.compile import compile_formula
    from hardsoft.logic import parse

    r = row("first")
    model = compile_formula(parse(r.formula or "", alphabet=r.alphabet), r.alphabet, "soft-pe")
    bad = class_violations(model, column("uhat-strict"))
    assert any("softmax" in b for b in bad) and any("position features" in b for b in bad)
    assert class_violations(model, column("soft-pe")) == []
    assert any("unbounded" in b for b in class_violations(model, column("soft-tau")))
    assert any("masks" in b for b in class_violations(model, column("soft-margin")))
    hard = compile_formula(parse(r.formula or "", alphabet=r.alphabet), r.alphabet, "hard")
    assert any("rightmost" in b for b in class_violations(hard, column("ahat")))


def test_layer_norm_epsilon_is_part_of_the_class() -> None:
    import dataclasses

    from hardsoft.model import random_model
    from hardsoft.model.transformer import Transformer

    base = random_model(seed=0, layer_norm="pre", position_features=("1", "i/n"))

    def ln(eps: float) -> Transformer:
        return Transformer(dataclasses.replace(base.spec, ln_eps=eps))

    assert class_violations(ln(1e-5), column("soft-ln-eps")) == []
    assert any("ε" in b for b in class_violations(ln(1e-5), column("soft-ln")))
    assert class_violations(ln(0.0), column("soft-ln")) == []
    assert any("ε = 0" in b for b in class_violations(ln(0.0), column("soft-ln-eps")))
    assert any("layer norm" in b for b in class_violations(ln(1e-5), column("soft-margin")))


def test_csv_and_json(atlas) -> None:
    out, table = atlas
    lines = list(csv.reader(io.StringIO((out / "atlas.csv").read_text())))
    assert lines[0][:5] == ["row", "column", "status", "evidence_kind", "verdict"]
    assert len(lines) == 1 + table["cells_total"]
    stored = json.loads((out / "atlas.json").read_text())
    assert stored["cells_total"] == table["cells_total"] and stored["kinds"] == table["kinds"]


def test_cli_json_and_user_rows(tmp_path, monkeypatch) -> None:
    import hardsoft.atlas.build as B

    monkeypatch.setattr(B, "ROWS", tuple(r for r in B.ROWS if r.id in ("first", "aa-star")))
    add_row(tmp_path, "ab-star", regex="(ab)*", alphabet="ab")
    r = run_cli("atlas", "--only", "first,uhat-strict", "--out", str(tmp_path), "--json")
    assert r.rc == 0, r.err
    table = json.loads(r.out)
    assert [c["row"] for c in table["cells"]] == ["first"]
    assert table["cells"][0]["regenerate"].startswith("hardsoft atlas --quick --only first,")
    assert table["cells"][0]["evidence_kind"] == "proof"
    r = run_cli("atlas", "--only", "*,uhat-strict", "--out", str(tmp_path), "--json")
    table = json.loads(r.out)
    user = [c for c in table["cells"] if c.get("user_row")]
    assert [c["row"] for c in user] == ["ab-star"] and user[0]["status"] == "constructed"
    assert user[0]["row_source"] == "(ab)*" and user[0]["evidence_kind"] == "proof"
    assert len(table["cells"]) == 3 and "model" in user[0]["evidence"]["artefacts"]


def test_a_learned_cell_follows_the_protocol(tmp_path, monkeypatch) -> None:
    """Status by the rule: a run that does not reach the threshold reads "not learned in our
    runs" with its numbers; the stored accuracy reruns from the stored model."""
    tiny = learned.Protocol(max_n=4, steps=20, d_model=8, layers=1, seeds=3, samples=8)
    monkeypatch.setattr(learned, "protocol", lambda budget: tiny)
    ev = learned.produce_learn(
        row("parity"), column("trained-lstm"), Budget(True), tmp_path / "c", tmp_path
    )
    assert ev.kind is EvidenceKind.ILLUSTRATION and ev.agrees
    metrics = json.loads((tmp_path / ev.artefacts["metrics"]).read_text())
    assert all((tmp_path / path).is_file() for path in ev.artefacts.values())
    assert len(metrics["per_seed"]) == 3 and metrics["lengths"][-5:] == list(learned.LONG)
    passed = sum(s["test_to_2x"] >= learned.THRESHOLD for s in metrics["per_seed"])
    assert metrics["seeds_learned"] == passed
    assert (ev.status is Status.LEARNED) == (passed >= 2)
    if ev.status is Status.NOT_LEARNED:
        assert ev.summary.startswith("not learned in our runs")
    cmd = next(c for c in ev.commands if c.startswith("hardsoft evaluate"))
    monkeypatch.chdir(tmp_path)
    r = run_cli(*shlex.split(cmd)[1:])
    assert r.rc == 0, r.err
    rows = {row["n"]: row["accuracy"] for row in json.loads(r.out)["rows"]}
    long = sum(rows[n] for n in learned.LONG) / len(learned.LONG)
    assert long == pytest.approx(metrics["per_seed"][0]["long_100_500"])  # the stored number


def test_learned_cells_outside_quick_rows_are_pending(tmp_path) -> None:
    table = build_atlas(tmp_path, quick=True, only="majority+induction-head,trained-lstm")
    assert [c["status"] for c in table["cells"]] == ["pending", "pending"]
    assert "full" in table["cells"][0]["note"] and "task" in table["cells"][1]["note"]
    assert {c["evidence_kind"] for c in table["cells"]} == {"citation"}


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
    """Every cell built, none disagreeing; every constructed model passes again and every
    illustration still fools its model."""
    table = build_atlas(tmp_path, quick=True)
    built = {(c["row"], c["column"]) for c in table["cells"]}
    quick = {k for k in CLAIMS if row(k[0]).quick}  # full-only rows: docs/atlas.md
    assert quick <= built  # and each quick regular row's star-free cell, at least:
    assert table["cells_total"] >= len(quick) + sum(r.regular and r.quick for r in ROWS)
    assert table["cells_proved"] >= 90 and not table["disagreements"]
    for cell in _cells(table, "constructed"):
        assert construct.recheck_constructed(tmp_path, cell)["mismatches"] == 0
    for cell in _cells(table, "impossible"):
        ill = cell["evidence"]["illustration"] or {}
        if ill.get("found") and "witness" in ill["artefacts"]:
            assert illustrate.recheck_witness(tmp_path, ill)


def test_a_failed_producer_is_reported_and_not_cached(tmp_path, monkeypatch) -> None:
    import hardsoft.atlas.build as B

    def refuse(*args, **kwargs):
        raise HardsoftError("a forward pass needs about 9 GiB of memory")

    monkeypatch.setitem(B.CONSTRUCTORS, "harden", refuse)
    table = build_atlas(tmp_path, quick=True, only="first,ahat")
    cell = table["cells"][0]
    assert cell["verdict"] == "no evidence" and "9 GiB" in cell["error"]
    assert table["no_evidence"] == ["first × ahat"] and table["cells_proved"] == 0
    monkeypatch.undo()
    again = build_atlas(tmp_path, quick=True, only="first,ahat")
    assert again["cells"][0]["verdict"] == "agrees" and not again["cells"][0]["reused"]


def test_anbn_with_unique_hard_attention_and_position_features() -> None:
    """The crafted aⁿbⁿ model: unique-hard heads and bounded position features only (in the
    uhat-pe class, not the strict no-PE one), exact at every position of every word to n = 12
    and of members and near misses to n = 2000."""
    from hardsoft.atlas.crafted import anbn_unique_hard
    from hardsoft.check import check_language
    from hardsoft.model.features import parse_feature

    model = anbn_unique_hard()
    assert class_violations(model, column("uhat-pe")) == []
    assert class_violations(model, column("uhat-strict"))
    assert all(parse_feature(f).bounded for f in model.spec.position_features)
    rep = check_language(model, "anbn", exhaustive_max_n=12, random_n=[100, 2000], samples=8)
    assert rep["mismatches"] == 0 and rep["max_abs_error"] == 0.0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--executor", "nope"], "unknown executor 'nope'"),
        (["--address", "127.0.0.1:1"], "--address needs --executor ray"),
        (["--cpus", "2"], "--cpus needs --executor ray"),
    ],
)
def test_executor_options_are_checked_before_any_cell(tmp_path, args, message) -> None:
    r = run_cli("atlas", "--only", "parity,uhat-strict", "--out", str(tmp_path), *args)
    assert r.rc == 2 and r.err.startswith("error: ") and message in r.err
    assert not (tmp_path / "cells").exists()

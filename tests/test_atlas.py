"""The atlas (``hardsoft atlas``): every cell has a status, an evidence kind, a citation and
stored evidence; constructed cells' stored models pass the exact check again; impossible
cells rest on a theorem whose applicability check ran, with illustrations beside them that
still fool their models; a wrong construction, a model outside the column's class or a check
that fails is reported as disagreeing, never hidden."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from pathlib import Path

import pytest

from hardsoft.atlas import construct, illustrate, layernorm, learned
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

THEORY_COLUMNS = [c.id for c in COLUMNS if not c.empirical]
THEORY = "+".join(THEORY_COLUMNS)
SUBSET = f"parity+aa-star+first+flipflop,{THEORY}"
RESTRICTED = "dyck1+majority,uhat-pe"
"""DYCK-1 (its witness is the 6th model tried: the first five have a constant answer) and
MAJORITY (a witness built here, not by the engine) with a restriction illustration."""


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("atlas")
    return out, build_atlas(out, quick=True, only=SUBSET)


@pytest.fixture(scope="module")
def restricted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("atlas-restricted")
    return out, build_atlas(out, quick=True, only=RESTRICTED)


def test_every_cell_is_declared_once() -> None:
    """Every cell has one claim, except a regular row's construction columns, which the
    regular-row machinery settles (tests/test_atlas_regular_rows.py)."""
    regular = {r.id for r in ROWS if r.regular}
    assert regular and set(CLAIMS) == {
        (r, c) for r in ROW_IDS for c in COLUMN_IDS if not (r in regular and c in REGULAR_COLUMNS)
    }


def test_cells_have_status_kind_citation_and_stored_evidence(atlas) -> None:
    out, table = atlas
    assert table["cells_total"] == 4 * len(THEORY_COLUMNS)
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
        # soft-ln: the output is ½ ± ½ after a layer norm, exact up to its rounding (~1e-16)
        tol = 1e-12 if cell["column"] == "soft-ln" else 0.0
        assert rep["mismatches"] == 0 and rep["max_abs_error"] <= tol, cell["evidence_path"]


def test_a_stored_check_command_runs_and_passes(atlas, monkeypatch) -> None:
    out, table = atlas
    cell = next(c for c in _cells(table, "constructed") if c["row"] == "parity")
    cmd = next(c for c in cell["evidence"]["commands"] if c.startswith("hardsoft check"))
    monkeypatch.chdir(out)
    r = run_cli(*shlex.split(cmd)[1:], "--json")
    assert r.rc == 0, r.err
    assert json.loads(r.out)["mismatches"] == 0


def _cited(table: dict) -> list[str]:
    """Every command a cell cites (its evidence's and its illustration's), once each."""
    cmds: list[str] = []
    for cell in table["cells"]:
        ev = cell.get("evidence") or {}
        cmds += ev.get("commands") or []
        cmds += (ev.get("illustration") or {}).get("commands") or []
    return list(dict.fromkeys(cmds))


def _invocations(cmd: str, out: Path) -> list[list[str]]:
    """The ``hardsoft`` argument lists of one cited command line: ``a && b`` split, a cited
    ``sh FILE`` read (relative to the atlas folder), comments dropped."""
    calls = []
    for piece in cmd.split(" && "):
        args = shlex.split(piece, comments=True)
        if args[0] == "sh":
            lines = (out / args[1]).read_text().splitlines()
            calls += [shlex.split(line)[1:] for line in lines if line.startswith("hardsoft ")]
        else:
            assert args[0] == "hardsoft", cmd
            calls.append(args[1:])
    return calls


def _parses(args: list[str]) -> None:
    """Parse ``hardsoft ARGS`` with the CLI's own parser, running nothing (for commands too
    long to run in a test: training); a bad option raises."""
    import typer

    from hardsoft.cli import app

    root = typer.main.get_command(app)
    ctx = root.context_class(root)
    cmd, rest = root, list(args)
    while hasattr(cmd, "get_command"):  # a group: down to the subcommand (train, atlas add-row)
        cmd = cmd.get_command(ctx, rest.pop(0))
        assert cmd is not None, args
    cmd.make_context(args[0], rest)


def test_the_parse_only_check_can_fail() -> None:
    _parses(["train", "--language", "first", "--steps", "100", "-o", "x"])
    with pytest.raises(Exception, match="--bogus"):
        _parses(["train", "--language", "first", "--bogus", "1"])
    with pytest.raises(Exception, match="integer"):
        _parses(["train", "--steps", "many"])


def _run_cited(out: Path, table: dict, workdir: Path, monkeypatch) -> int:
    """Run every command the cells cite in a copy of the atlas folder (training is parsed
    only); a cited ``restrict`` must give back the stored restriction with an answer that
    varies. The number of invocations run."""
    import shutil

    shutil.copytree(out, workdir)
    monkeypatch.chdir(workdir)
    ran = 0
    for cmd in _cited(table):
        for args in _invocations(cmd, workdir):
            if args[0] == "train":
                _parses(args)
                continue
            r = run_cli(*args)
            assert r.rc == 0, (cmd, r.err)
            ran += 1
            if args[0] == "restrict":
                witness = Path(args[1]).parent / illustrate.WITNESS_FILE
                stored = json.loads(witness.read_text())
                got = json.loads(r.out)
                assert got["restriction"] == stored["restriction"], cmd
                assert got["output_constant"] is False, cmd
    return ran


@pytest.mark.parametrize("which", ["atlas", "restricted"])
def test_every_cited_command_runs(which, request, tmp_path, monkeypatch) -> None:
    """Each command a cell cites parses and runs (MAJORITY's illustrations once cited
    `hardsoft restrict --language majority`, which is no restriction target)."""
    out, table = request.getfixturevalue(which)
    assert _run_cited(out, table, tmp_path / "copy", monkeypatch) >= 10


def test_impossible_cells_rest_on_a_checked_theorem(atlas) -> None:
    _, table = atlas
    cells = _cells(table, "impossible")
    assert {c["column"] for c in cells} == {"uhat-strict", "uhat-pe", "soft-margin", "soft-ln-eps"}
    for cell in cells:
        ev = cell["evidence"]
        assert cell["evidence_kind"] == "proof" and ev["check"]["passed"], cell["evidence_path"]


def _shown(table: dict) -> list[dict]:
    return [
        c for c in table["cells"] if ((c["evidence"] or {}).get("illustration") or {}).get("found")
    ]


def test_illustrations_still_fool_their_models_and_depend_on_the_input(atlas) -> None:
    out, table = atlas
    shown = _shown(table)
    restrictions = [c for c in shown if c["column"].startswith("uhat")]
    assert restrictions and len(shown) > len(restrictions)
    for cell in restrictions:
        ill = cell["evidence"]["illustration"]
        assert ill["numbers"]["dependency_set"], cell["evidence_path"]  # not a constant model
        assert illustrate.recheck_witness(out, ill), cell["evidence_path"]  # nor its answer
    for cell in shown:
        ill = cell["evidence"]["illustration"]
        if "slope_ci" in ill["numbers"]:  # Lemma 5 on one random model
            assert ill["numbers"]["violations"] == 0 and ill["numbers"]["slope_ci"][1] < 0
            assert illustrate.recheck_sensitivity(out, ill)
        elif cell["column"] == "soft-ln-eps":  # the row's soft-ln model with ε = 1e-5
            assert layernorm.recheck_eps(out, ill, row(cell["row"])), cell["evidence_path"]


def test_no_restriction_illustration_has_a_constant_answer(restricted) -> None:
    """On the answer, not the output row: the stored model accepts one completion of the stored
    restriction and rejects another (run here), and the engine's output_constant is false; DYCK-1
    skips the first five models tried, whose answer is constant."""
    out, table = restricted
    cells = {c["row"]: c for c in table["cells"]}
    assert set(cells) == {"dyck1", "majority"} and not table["disagreements"]
    for cell in cells.values():
        ill = cell["evidence"]["illustration"]
        assert ill["found"], cell["evidence_path"]
        record = json.loads((out / ill["artefacts"]["witness"]).read_text())
        assert record["output_constant"] is False and record["answer_varies"]
        assert illustrate.recheck_witness(out, ill), cell["evidence_path"]
    assert cells["dyck1"]["evidence"]["illustration"]["numbers"]["models_tried"] == 6


def test_a_model_with_a_constant_answer_is_never_shown() -> None:
    """The vacuous case the old filter let through: DYCK-1 × uhat-strict's third model keeps 14
    positions in its output row's dependency set, but its accept/reject answer is the same on
    every completion (the model run on random completions here). No answer pair exists."""
    import numpy as np
    import torch

    from hardsoft.limits.restrict import restrict

    r, c = row("dyck1"), column("uhat-strict")
    seed, shape, mask = list(illustrate._candidates(c, Budget(True)))[2]
    model, _ = illustrate._random_hard(r, c, seed, shape, mask)
    result = restrict(model, r.restriction_n, "dyck1", seed=seed)
    assert result.dependency_set and result.witness and result.witness.verified
    assert result.analysis.output_constant
    assert illustrate.answer_pair(result, np.random.default_rng(0)) is None
    rng = np.random.default_rng(1)
    words = [result.restriction.random_completion(rng) for _ in range(64)]
    with torch.no_grad():
        answers = model(model.encode(words)).accept.cpu().numpy()
    assert len(set(answers.tolist())) == 1


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


def test_the_layer_norm_column_is_built(atlas) -> None:
    """soft-ln: every row a C-RASP definition or Chiang & Cholak covers is constructed
    (checked here, in the class, with the certified margin ½); (aa)* among them; PARITY read
    at the last position. soft-ln-eps: the row's own soft-ln model with ε = 1e-5 beside the
    theorem, its margin measured where its certificate says it falls."""
    from hardsoft.model.io import load_model

    out, table = atlas
    cells = {c["row"]: c for c in table["cells"] if c["column"] == "soft-ln"}
    for rid in ("parity", "aa-star", "first"):
        cell = cells[rid]
        assert cell["status"] == "constructed" and cell["evidence_kind"] == "proof", rid
        assert cell["verdict"] == "agrees" and not cell["evidence"]["numbers"]["outside_class"]
        model = load_model(out / cell["evidence"]["artefacts"]["model"])
        assert model.spec.ln_eps == 0.0 and model.meta["certificate"]["target"] == "soft-ln"
        assert "margin 1/2 at every n" in cell["evidence"]["summary"]
    assert "Chiang & Cholak" in cells["parity"]["theorem"]
    assert "last position" in cells["parity"]["evidence"]["summary"]
    assert "Yang & Chiang" in cells["aa-star"]["theorem"]
    assert cells["flipflop"]["status"] == "open"
    eps = {c["row"]: c for c in table["cells"] if c["column"] == "soft-ln-eps"}
    parity = eps["parity"]["evidence"]["illustration"]
    cert = parity["numbers"]["certificate"]
    measured = {m["n"]: m["margin"] for m in parity["numbers"]["measured"]}
    assert all(m < 0.25 for n, m in measured.items() if n >= cert["margin_below_quarter_from_n"])
    assert eps["flipflop"]["evidence"]["illustration"] is None  # no soft-ln model to show


def test_a_soft_ln_model_without_a_margin_is_outside_the_class(tmp_path, monkeypatch) -> None:
    """The fixed margin is part of the class: a soft-ln model whose certificate states none
    makes its constructed cell disagree."""
    import hardsoft.atlas.layernorm as LN

    real = LN._ln_model

    def no_margin(r):
        model, cmd = real(r)
        model.meta["certificate"]["layer_norm"]["margin"]["values"]["1000"]["margin"] = 0.1
        return model, cmd

    monkeypatch.setattr(LN, "_ln_model", no_margin)
    ev = LN.produce_crasp_ln(row("majority"), column("soft-ln"), Budget(True), tmp_path / "c",
                             tmp_path)  # fmt: skip
    assert not ev.agrees and "margin" in ev.summary


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
    assert any("unbounded" in b for b in class_violations(model, column("soft-margin")))
    from hardsoft.model import random_model

    masked = random_model(weighting="softmax", mask="future", position_features=("1", "i/n"))
    assert class_violations(masked, column("soft-margin")) == []  # any masks (Lemma 5 extended)
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
    """Status by the rule (full mode): "learned in our runs" or "not learned in our runs" with
    its numbers, the accuracy beyond the training lengths reported apart from 1–2L; the stored
    accuracy reruns from the stored model."""
    tiny = learned.Protocol(max_n=4, steps=20, d_model=8, layers=1, seeds=3, samples=8)
    monkeypatch.setattr(learned, "protocol", lambda budget: tiny)
    ev = learned.produce_learn(
        row("parity"), column("trained-lstm"), Budget(False), tmp_path / "c", tmp_path
    )
    assert ev.kind is EvidenceKind.ILLUSTRATION and ev.agrees
    metrics = json.loads((tmp_path / ev.artefacts["metrics"]).read_text())
    assert all((tmp_path / path).is_file() for path in ev.artefacts.values())
    assert len(metrics["per_seed"]) == 3 and metrics["lengths"][-5:] == list(learned.LONG)
    passed = sum(s["test_to_2x"] >= learned.THRESHOLD for s in metrics["per_seed"])
    assert metrics["seeds_learned"] == passed
    assert (ev.status is Status.LEARNED) == (passed >= 2)
    assert ev.summary.startswith(f"{ev.status.label}: ") and ev.status.label.endswith("our runs")
    beyond = metrics["accuracy"]["beyond_training"]["mean"]
    assert f"beyond them, 5–8 {beyond:.2f}" in ev.summary and "training lengths 1–4" in ev.summary
    cmd = next(c for c in ev.commands if c.startswith("hardsoft evaluate"))
    monkeypatch.chdir(tmp_path)
    r = run_cli(*shlex.split(cmd)[1:])
    assert r.rc == 0, r.err
    rows = {row["n"]: row["accuracy"] for row in json.loads(r.out)["rows"]}
    long = sum(rows[n] for n in learned.LONG) / len(learned.LONG)
    assert long == pytest.approx(metrics["per_seed"][0]["long_100_500"])  # the stored number


def test_a_quick_learned_cell_is_a_smoke_test(tmp_path, monkeypatch) -> None:
    """Quick mode's short runs are no finding: the cell stays pending and says "smoke test"."""
    tiny = learned.Protocol(max_n=4, steps=5, d_model=8, layers=1, seeds=1, samples=4)
    monkeypatch.setattr(learned, "protocol", lambda budget: tiny)
    ev = learned.produce_learn(
        row("first"), column("trained-lstm"), Budget(True), tmp_path / "c", tmp_path
    )
    assert ev.status is Status.PENDING and ev.numbers["smoke_test"]
    assert ev.summary.startswith("smoke test (5 steps, width 8), not a finding")
    assert "learned in our runs" not in ev.summary


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
def test_the_whole_quick_atlas(tmp_path, monkeypatch) -> None:
    """Every cell built, none disagreeing; every constructed model passes again, every
    restriction illustration still fools its model and its answer varies (DYCK × uhat-strict
    finds no such model among the 16 tried and says so); every cited command runs."""
    table = build_atlas(tmp_path / "atlas", quick=True)
    out = tmp_path / "atlas"
    built = {(c["row"], c["column"]) for c in table["cells"]}
    quick = {k for k in CLAIMS if row(k[0]).quick}  # full-only rows: docs/atlas.md
    assert quick <= built  # and each quick regular row's star-free cell, at least:
    assert table["cells_total"] >= len(quick) + sum(r.regular and r.quick for r in ROWS)
    assert table["cells_proved"] >= 100 and not table["disagreements"] and not table["no_evidence"]
    for cell in _cells(table, "constructed"):
        assert construct.recheck_constructed(out, cell)["mismatches"] == 0
    for cell in _cells(table, "impossible"):
        ill = cell["evidence"]["illustration"] or {}
        if ill.get("found") and "witness" in ill["artefacts"]:
            assert illustrate.recheck_witness(out, ill)
        elif cell["column"].startswith("uhat") and ill:
            assert "varies" in ill["summary"], cell["evidence_path"]
    _run_cited(out, table, tmp_path / "copy", monkeypatch)


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


PREPRINT_TAU_ONLY = {"Thm. 21", "Cor. 23"}
"""Theorem 21 and Corollary 23 are stated with a temperature τ(n) only (arXiv:2412.09925v1
§4.4–4.5): no τ = 1 (soft-pe) model is their construction as stated."""


def test_cell_labels_name_the_version_and_stay_inside_the_hypotheses(atlas) -> None:
    """Every Yang et al. number a cell cites names the preprint version; a cell labelled "as
    stated" has a model inside the result's hypotheses (its certificate's target); the task
    rows' logic-route cells all cite Cor. 18 (future-masked past LTL)."""
    from hardsoft.model.io import load_model

    out, table = atlas
    for cell in table["cells"]:
        for text in (cell["citation"], cell.get("theorem") or ""):
            assert "2026" not in text, text
            if "Yang et al." in text:
                assert "Yang et al. (arXiv:2412.09925v1)" in text, text
        stated = re.search(r"((?:Thm|Cor)\. \d+) \(as stated\)", cell.get("theorem") or "")
        if stated:
            model = load_model(out / cell["evidence"]["artefacts"]["model"])
            target = model.meta["certificate"]["target"]
            assert target != "hard", cell["evidence_path"]
            assert not (target == "soft-pe" and stated.group(1) in PREPRINT_TAU_ONLY)
    logic = [c for c in table["cells"] if c["row"] == "flipflop" and c["column"] != "ahat"]
    logic = [c for c in logic if c["column"] in ("uhat-strict", "uhat-pe", "soft-tau", "soft-pe")]
    assert len(logic) == 4
    for cell in logic:
        assert cell["theorem"].endswith("Cor. 18)") or "Cor. 18 (as stated)" in cell["theorem"]
        assert "Cor. 18" in cell["citation"], cell["column"]


def test_constructed_cells_show_the_certificate_bound_and_float_limits(atlas) -> None:
    """A constructed cell shows what its model's certificate proves: the error bound against
    the rounding margin and where float arithmetic stops it (PARITY's lookup: exact in float32
    only to n = 547), read from the stored model."""
    from hardsoft.model.io import load_model

    out, table = atlas
    for cell in _cells(table, "constructed"):
        assert "certificate" in cell["evidence"]["summary"], cell["evidence_path"]
    cell = next(c for c in table["cells"] if (c["row"], c["column"]) == ("parity", "soft-tau"))
    cert = load_model(out / cell["evidence"]["artefacts"]["model"]).meta["certificate"]
    num = cell["evidence"]["numbers"]
    limits = cert["float_limits"]
    assert num["float32_exact_to_n"] == limits["float32"] and limits["float32"] < 10**4
    assert num["float64_exact_to_n"] == limits["float64"]
    assert num["error_bound"] == cert["max_error_bound"] < cert["rounding_margin"]
    assert f"n ≤ {limits['float32']:,} in float32" in cell["evidence"]["summary"]


def test_the_tau_n_any_position_features_column(tmp_path) -> None:
    """DYCK-2 by Theorem 26 (``program dyck --k 2 --route tieless --target soft-temperature``):
    exact, in the column's class and not in soft-tau's (unbounded position features), with
    Theorem 26's hypothesis (uniform–tieless) checked; every row but the regular ones (whose
    construction columns the regular-row machinery settles) has a constructed cell."""
    from hardsoft.atlas.checks import check_theorem26
    from hardsoft.model.io import load_model

    fixed = [r for r in ROW_IDS if not row(r).regular]  # regular rows: their machinery's cells
    assert all(CLAIMS[(r, "soft-tau-pe")].status is Status.CONSTRUCTED for r in fixed)
    ev = construct.produce_program(
        row("dyck2"), column("soft-tau-pe"), "tieless", Budget(True), tmp_path / "c", tmp_path
    )
    assert ev.agrees and ev.status is Status.CONSTRUCTED, ev.summary
    assert ev.check and ev.check["name"] == "theorem26" and ev.check["passed"]
    assert ev.numbers["theorem"].startswith("Yang et al. (arXiv:2412.09925v1) Theorem 26")
    model = load_model(tmp_path / ev.artefacts["model"])
    assert class_violations(model, column("soft-tau-pe")) == []
    assert any("unbounded" in b for b in class_violations(model, column("soft-tau")))
    assert not check_theorem26({}).passed  # no stored tieless check: nothing shown
    broken = dict(model.meta["tieless_check"], uniform_tieless=False)
    assert not check_theorem26({"tieless_check": broken}).passed


@pytest.mark.parametrize("mask", ["future", "strict-future", "past"])
def test_lemma5_with_masks(mask: str) -> None:
    """Our extension of Lemma 5 to masked models (docs/atlas.md, "Lemma 5 with masks"), seen
    on a random two-layer softmax model (τ = 1, bounded features): the last activation's
    largest change under one symbol change falls like log(n)/n (past masks: position n sees
    only itself, so nothing changes)."""
    import math

    import torch

    from hardsoft.limits.sensitivity import measure_sensitivity
    from hardsoft.model import random_model

    model = random_model(
        weighting="softmax",
        weight_scale=1.0,
        seed=0,
        alphabet="01",
        layers=2,
        heads=2,
        position_features=illustrate.BOUNDED_FEATURES,
        mask=mask,
        dtype=torch.float64,
    )
    lengths = [16, 64, 256]
    rep = measure_sensitivity(model, lengths, samples=2, flips=16, seed=0, check_bound=False)
    change = rep.series("last_max")
    if mask == "past":
        assert max(change) == 0.0
        return
    scaled = [x * n / (1 + math.log(n)) for x, n in zip(change, lengths)]
    assert change[-1] < change[0] / 4 and scaled[-1] <= 1.5 * scaled[0], (change, scaled)


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

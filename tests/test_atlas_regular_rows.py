"""The atlas's built-in regular rows (Tomita, FLaRe, bounded Dyck, the A5 word problem): their
construction columns come from the regular-row machinery of ``atlas add-row --dfa`` run on the
language's DFA, and give what a user's row of the same DFA gives; their expected answer (the
theory's) must match the decision; their models are exact against the language's own oracle
(not only the DFA); stored cells are reused, a changed DFA or a failed job is not."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from hardsoft.atlas import regular_rows
from hardsoft.atlas.build import VERSION, build_atlas, plan, summarize
from hardsoft.atlas.checks import run_check
from hardsoft.atlas.evidence import class_violations
from hardsoft.atlas.table import (
    CLAIMS,
    COLUMN_IDS,
    FULL_ONLY,
    REGULAR_COLUMNS,
    ROWS,
    column,
    row,
)
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language

from ._cli import run_cli

REGULAR = [r for r in ROWS if r.regular]
SUBSET = "tomita3+tomita4+modular-arithmetic+a5-identity"
"""Two-letter rows of each answer, a nine-letter one (refused by a size limit) and A5."""


@pytest.fixture(scope="module")
def regular(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("regular")
    return out, build_atlas(out, quick=True, only=f"{SUBSET},uhat-strict")


def test_the_regular_rows_and_their_claims() -> None:
    ids = {r.id for r in REGULAR}
    assert {f"tomita{k}" for k in range(2, 8)} <= ids  # Tomita 1 is the ones-star row
    assert {"even-pairs", "repeat-01", "cycle-navigation", "modular-arithmetic"} <= ids
    assert {"dyck2-depth2", "dyck2-depth3", "a5-identity"} <= ids
    for r in REGULAR:
        lang = get_language(r.language)
        assert lang.automaton() is not None and "".join(lang.alphabet) == r.alphabet, r.id
        assert r.star_free is not None and r.source, r.id
        claimed = {c for (rid, c) in CLAIMS if rid == r.id}
        assert claimed == set(COLUMN_IDS) - set(REGULAR_COLUMNS), r.id


def test_star_free_cells_come_from_the_machinery(regular) -> None:
    out, table = regular
    assert not table["disagreements"] and not table["no_evidence"]
    cells = {c["row"]: c for c in table["cells"]}
    assert set(cells) == set(SUBSET.split("+"))
    for rid, cell in cells.items():
        r = row(rid)
        assert cell["column"] == "uhat-strict" and cell["evidence_kind"] == "proof"
        assert cell["verdict"] == "agrees" and not cell["user_row"]
        assert cell["status"] == ("impossible" if not r.star_free else "constructed"), rid
        assert cell["row_title"] == r.title and "as expected" in cell["evidence"]["summary"]
        assert (out / cell["evidence_path"]).is_file()
        for path in cell["evidence"]["artefacts"].values():
            assert (out / path).is_file()
        assert any("add-row --dfa" in cmd for cmd in cell["evidence"]["commands"])
    assert "period 5" in cells["a5-identity"]["evidence"]["summary"]


def test_a_constructed_model_is_exact_against_the_oracle(regular) -> None:
    """The machinery checks its model against the DFA; here it is checked again against the
    language's own oracle (written apart from the DFA)."""
    from hardsoft.check import check_language
    from hardsoft.model.io import load_model

    out, table = regular
    cell = next(c for c in table["cells"] if c["row"] == "tomita4")
    model = load_model(out / cell["evidence"]["artefacts"]["model"])
    assert class_violations(model, column("uhat-strict")) == []
    rep = check_language(
        model, get_language("tomita4"), exhaustive_max_n=10, random_n=[300], samples=16
    )
    assert rep["mismatches"] == 0 and rep["max_n"] == 300


def test_stored_cells_are_reused_and_a_changed_dfa_is_not(regular, monkeypatch) -> None:
    out, table = regular
    again = build_atlas(out, quick=True, only=f"{SUBSET},uhat-strict")
    assert all(c["reused"] for c in again["cells"])
    assert [c["status"] for c in again["cells"]] == [c["status"] for c in table["cells"]]
    t3 = row("tomita3")
    assert regular_rows.stored(t3, out, True, VERSION) is not None
    assert regular_rows.stored(t3, out, False, VERSION) is None  # the other mode
    evidence = out / "cells" / "tomita3" / "uhat-strict" / "evidence.json"
    kept = evidence.read_text()
    evidence.unlink()  # a lost cell file: the row is built again, not shown without it
    assert regular_rows.stored(t3, out, True, VERSION) is None
    evidence.write_text(kept)
    other = get_language("tomita5").automaton()
    monkeypatch.setattr(regular_rows, "row_dfa", lambda r: other)
    assert regular_rows.stored(t3, out, True, VERSION) is None


def test_the_same_dfa_as_a_users_row_gives_the_same_decision(regular, tmp_path) -> None:
    out, table = regular
    path = tmp_path / "t3.dfa.json"
    assert run_cli("language", "dfa", "tomita3", "-o", str(path)).rc == 0
    r = run_cli("atlas", "add-row", "--dfa", str(path), "--name", "my-t3", "--out",
                str(tmp_path / "mine"), "--json")  # fmt: skip
    assert r.rc == 0, r.err
    mine = json.loads(r.out)
    builtin = next(c for c in table["cells"] if c["row"] == "tomita3")["evidence"]["decision"]
    for key in ("star_free", "monoid_size", "minimal_dfa_states", "witness"):
        assert mine[key] == builtin[key], key


def test_a_wrong_expected_answer_disagrees(tmp_path) -> None:
    wrong = dataclasses.replace(row("tomita3"), star_free=True)
    cells = regular_rows.build(wrong, tmp_path, True, VERSION)
    star_free = [c for c in cells if c["column"] == "uhat-strict"]
    assert [c["verdict"] for c in star_free] == ["DISAGREES"]
    assert "DISAGREES with the row's expected answer" in star_free[0]["evidence"]["summary"]
    assert all(c["verdict"] == "agrees" for c in cells if c["column"] != "uhat-strict")
    assert summarize(cells, True, 0.0)["disagreements"] == ["tomita3 × uhat-strict"]


def test_a_failed_regular_job_is_reported_and_not_cached(tmp_path, monkeypatch) -> None:
    def refuse(record, folder, out=None):
        raise HardsoftError("the transition monoid has more than 200000 elements")

    monkeypatch.setattr(regular_rows, "settle", refuse)
    table = build_atlas(tmp_path, quick=True, only="tomita3,uhat-strict")
    cell = table["cells"][0]
    assert cell["verdict"] == "no evidence" and "200000" in cell["error"]
    assert table["no_evidence"] == ["tomita3 × uhat-strict"]
    monkeypatch.undo()
    again = build_atlas(tmp_path, quick=True, only="tomita3,uhat-strict")
    assert again["cells"][0]["verdict"] == "agrees" and not again["cells"][0]["reused"]


def test_a_column_the_machinery_does_not_settle_shows_no_cell(tmp_path) -> None:
    """Tomita 5 is solvable, not star-free: its hard model counts with average-hard heads, so
    no model of it is unique-hard (no claim is made in that column), while ahat is built."""
    table = build_atlas(tmp_path, quick=True, only="tomita5,uhat-pe+ahat")
    assert [(c["column"], c["status"]) for c in table["cells"]] == [("ahat", "constructed")]


def test_modular_arithmetic_hinges_on_one_symbol_at_odd_lengths() -> None:
    """Its members all have odd length: the one-symbol check takes n + 1 where n has none."""
    r = row("modular-arithmetic")
    check = run_check("one-symbol", r, get_language(r.language), quick=True)
    assert check.passed and check.numbers["lengths"] == [17, 65, 257]
    x, y = (check.numbers["pairs"]["17"][k] for k in ("x", "x_prime"))
    assert get_language(r.language).member(x) != get_language(r.language).member(y)


def test_full_only_rows_are_left_out_of_quick_unless_named() -> None:
    quick = {j.row for j in plan(None, None, quick=True)}
    full = {j.row for j in plan(None, None, quick=False)}
    assert full - quick == set(FULL_ONLY) and set(FULL_ONLY) <= {r.id for r in REGULAR}
    assert {j.row for j in plan({"tomita7"}, None, quick=True)} == {"tomita7"}
    assert all(j.column is None for j in plan({"tomita7"}, {"uhat-strict"}, quick=True))

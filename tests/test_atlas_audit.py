"""The atlas audit: invariants over every cell, fast enough for the default suite.

* a citation names authors, a year and a place in the publication (section, theorem, ...);
* an impossible cell names a theorem and a check that it applies, and that check runs and
  passes here (an illustration alone never backs an impossible cell);
* a possible cell is a checked theorem or a citation, an open cell a citation;
* an illustration is never counted as a proof, and a ✓ is never shown for one;
* each compiled cell's theorem label comes from compile/results.py, whose fragment table
  agrees with the compiler experiment's theorem list;
* docs/atlas.md states every column's exact model class, generated from the table;
* a program row's cells (``atlas add-row --program``) are constructed proofs only: each
  model behind one reloads, lies in the column's class and its stored check is exact.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from hardsoft.atlas import build
from hardsoft.atlas.evidence import Budget, Evidence
from hardsoft.atlas.table import (
    CLAIMS,
    COLUMNS,
    EvidenceKind,
    Status,
    column,
    columns_markdown,
    row,
)

AUTHORS_YEAR = re.compile(
    r"[A-Z][\w'’-]+(?: et al\.)?[^()]*\((?:(?:[A-Za-z]+ )?\d{4}|arXiv:\d{4}\.\d{4,5}v\d+\))"
)
"""Authors, then a year (with the venue) or the arXiv version the numbers were read from."""
PLACE = re.compile(
    r"§|Thm\.|Theorem|Lemma|Cor\.|Corollary|Prop\.|Appendix|abstract|main theorem|"
    r"Discussion|experimental setup|summary tables"
)
CHECKED = [(key, claim) for key, claim in CLAIMS.items() if claim.check]


@pytest.mark.parametrize("key", sorted(CLAIMS), ids="×".join)
def test_every_citation_names_authors_year_and_place(key: tuple[str, str]) -> None:
    citation = CLAIMS[key].citation
    assert AUTHORS_YEAR.search(citation), citation
    assert PLACE.search(citation), citation


def test_statuses_are_backed_by_their_kind_of_evidence() -> None:
    for (rid, cid), claim in CLAIMS.items():
        where = f"{rid} × {cid}"
        if claim.status is Status.IMPOSSIBLE:
            assert claim.check and claim.how == "none", where  # a theorem and its check
        elif claim.status is Status.CONSTRUCTED:
            assert claim.how in (*build.CONSTRUCTORS, "program-logic", "program-tieless"), where
            assert not claim.check, where
        elif claim.status is Status.POSSIBLE:
            assert claim.how == "none", where  # nothing built: a checked theorem or a citation
        elif claim.status is Status.OPEN:
            assert claim.how == "none" and not claim.check and not claim.illustrate, where
        else:  # learned cells: the protocol decides learned / not learned; tasks pending
            assert claim.how in ("learn", "none") and column(cid).empirical, where
        if claim.illustrate:
            assert claim.check, f"{where}: an illustration beside no proof"


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Evidence]:
    """Every cell backed by a theorem and a check, run through the build's own producer
    (illustrations left out: they are not what the audit is about, and they are slow)."""
    out = tmp_path_factory.mktemp("audit")
    budget = Budget(quick=True)
    evidence = {}
    for (rid, cid), claim in CHECKED:
        quiet = dataclasses.replace(claim, illustrate=None)
        folder = out / "cells" / rid / cid
        ev = build._checked(row(rid), column(cid), quiet, budget, folder, out)
        evidence[(rid, cid)] = ev
    return evidence


def test_every_applicability_check_runs_and_passes(checked) -> None:
    assert len(checked) == len(CHECKED) >= 40
    impossible = [k for k, c in CHECKED if c.status is Status.IMPOSSIBLE]
    assert {k for k, _ in CHECKED} >= set(impossible) and impossible
    for key, ev in checked.items():
        assert ev.kind is EvidenceKind.PROOF and ev.agrees, (key, ev.summary)
        assert ev.check and ev.check["passed"] and ev.check["name"] == CLAIMS[key].check
        assert ev.status is CLAIMS[key].status


def test_an_illustration_is_never_counted_as_a_proof(checked) -> None:
    """Cells as the build writes them: proofs with an illustration beside them, an
    illustration-only cell (training runs), a citation. The counts keep them apart, and the
    page shows a ✓ only on the proofs."""
    from hardsoft.atlas.html import render_page

    cells = []
    beside = {"kind": "illustration", "found": True, "summary": "a witness on one model"}
    for (rid, cid), ev in list(checked.items())[:3]:
        ev = dataclasses.replace(ev, illustration=beside)
        cells.append(_cell(rid, cid, ev.kind.value, "agrees", ev.to_json()))
    learned = Evidence(Status.NOT_LEARNED, EvidenceKind.ILLUSTRATION, True, "runs")
    cells.append(_cell("parity", "trained-lstm", "illustration", "measured", learned.to_json()))
    cells.append(_cell("dyck2", "soft-ln", "citation", "not run here", None))
    table = build.summarize(cells, quick=True, seconds=0.0)
    assert table["kinds"] == {"proof": 3, "illustration": 1, "citation": 1}
    assert table["cells_proved"] == 3 and table["illustrations_beside_proofs"] == 3
    summaries = re.findall(r"<summary>(.*?)</summary>", render_page(table), re.S)
    assert len(summaries) == 5 and sum("✓" in s for s in summaries) == 3


def _cell(rid: str, cid: str, kind: str, verdict: str, evidence: dict | None) -> dict:
    return {
        "row": rid,
        "row_title": row(rid).title,
        "column": cid,
        "column_title": column(cid).title,
        "status": CLAIMS[(rid, cid)].status.value,
        "evidence_kind": kind,
        "citation": CLAIMS[(rid, cid)].citation,
        "theorem": None,
        "note": "",
        "verdict": verdict,
        "evidence": evidence,
        "evidence_path": f"cells/{rid}/{cid}/evidence.json",
    }


def test_fragment_results_agree_with_the_compiler_experiment() -> None:
    """compile/results.py's fragment → result table (the atlas's theorem labels) gives the
    compiler experiment's theorem wherever that experiment's fragment label is the one
    :func:`fragment` computes."""
    from hardsoft.compile.results import formula_result
    from hardsoft.experiments.compiler import THEOREMS
    from hardsoft.logic import parse
    from hardsoft.logic.structure import fragment

    agreeing = 0
    for thm, frag, text, alphabet, causal in THEOREMS:
        f = fragment(parse(text, alphabet=alphabet))
        if f.name != frag.removesuffix(" (causal)"):
            continue  # the experiment's representative uses an operator of a larger fragment
        assert formula_result(f.base, causal, "soft-pe") == thm, (text, thm)
        agreeing += 1
    assert agreeing >= 9


def test_docs_state_every_column_class() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "atlas.md").read_text()
    assert columns_markdown() in docs
    for col in COLUMNS:
        assert f"`{col.id}`" in docs


@pytest.fixture(scope="module")
def program_atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """Two program rows (a shipped C-RASP and a shipped B-RASP example) and their cells as
    the page shows them."""
    from hardsoft.atlas.program_rows import add_program_row

    out = tmp_path_factory.mktemp("audit-programs")
    add_program_row(out, "maj", "@majority")
    add_program_row(out, "first-a", "@first_is_a")
    cells, rows = build._user_rows(out)
    return out, [*cells, *({"row_entry": r} for r in rows)]


def test_program_row_cells_are_checked_constructions(program_atlas) -> None:
    """Every cell of a program row: constructed, proof, agreeing; each model behind it
    reloads, is in the column's class and its stored check found 0 mismatches; the
    fixed-margin columns are never claimed; the table counts the cells as proofs."""
    from hardsoft.atlas.evidence import class_violations
    from hardsoft.model.io import load_model

    out, items = program_atlas
    cells = [c for c in items if "row_entry" not in c]
    entries = [c["row_entry"] for c in items if "row_entry" in c]
    assert {c["row"] for c in cells} == {e["id"] for e in entries} == {"maj", "first-a"}
    assert all(e["note"] for e in entries)
    for c in cells:
        where = f"{c['row']} × {c['column']}"
        assert (c["status"], c["evidence_kind"], c["verdict"]) == (
            "constructed",
            "proof",
            "agrees",
        ), where
        assert not column(c["column"]).fixed_margin and not column(c["column"]).empirical, where
        arts = c["evidence"]["artefacts"]
        models = [k.removesuffix(" model") for k in arts if k.endswith(" model")]
        assert models, where
        for target in models:
            model = load_model(out / arts[f"{target} model"])
            assert class_violations(model, column(c["column"])) == [], where
            report = json.loads((out / arts[f"{target} check"]).read_text())
            assert report["mismatches"] == 0 and report["checked_strings"] > 0, where
        assert c["evidence"]["commands"], where
    table = build.summarize(cells, quick=True, seconds=0.0, extra_rows=entries)
    assert table["kinds"] == {"proof": len(cells)} and table["cells_proved"] == len(cells)

"""The report: rendered through templates, opening with the claims summary table; experiments
without a registered claim, or with metrics a judge cannot read, never make it fail."""

from __future__ import annotations

import pytest

from hardsoft.experiments import all_experiments
from hardsoft.report.claims import (
    CLAIMS,
    DEVIATES,
    NO_CLAIM,
    REPRODUCED,
    UNDETERMINED,
    verdict_for,
)
from hardsoft.report.render import render_html, render_markdown


def _record(name: str, metrics: dict, **extra) -> dict:
    return {
        "name": name,
        "title": f"Title of {name}",
        "mode": "quick",
        "version": "1",
        "package_version": "0",
        "created_at": "2026-01-01T00:00:00+00:00",
        "metrics": metrics,
        "figures": ["f.png"],
        "tables": [{"title": "t", "columns": ["a", "b"], "rows": [[1, 0.123456], [True, "x|y"]]}],
        "summary": "a <b>summary</b>",
        **extra,
    }


RECORDS = [
    _record("hard-attention-restrictions", {"witnesses": 4, "verified": 4}),
    _record("compiler", {"mismatches": 2, "largest_n_checked": 100}),
    _record("softmax-to-hardmax", {"final_row_gap": 0.1}),  # a metric is missing
    _record("zz-unregistered", {}, seed_ref="Somebody (2024) §2"),
]


def test_verdicts_come_from_the_registry_and_never_raise() -> None:
    rows = [verdict_for(r) for r in RECORDS]
    assert [r.verdict for r in rows] == [REPRODUCED, DEVIATES, UNDETERMINED, NO_CLAIM]
    assert rows[0].key_number == "4/4 witnesses verified"
    assert rows[1].key_number == "2 mismatching positions up to n = 100"
    assert "rows_within_gap_bound" in rows[2].key_number
    assert rows[3].paper == "Somebody (2024) §2" and rows[3].claim == NO_CLAIM


def test_html_opens_with_the_summary_table_and_escapes_text() -> None:
    page = render_html(RECORDS, "report <title>")
    assert "<title>report &lt;title&gt;</title>" in page
    summary_at = page.index('id="summary"')
    assert summary_at < page.index('id="hard-attention-restrictions"')
    for cell in (
        "Hahn (2020) §5, Theorem 1",
        "Yang et al. (arXiv:2412.09925v1) §4",
        "4/4 witnesses verified",
    ):
        assert cell in page
    assert page.count('class="verdict v-none"') == 1 and "No claim registered" in page
    assert "a &lt;b&gt;summary&lt;/b&gt;" in page and "<b>summary</b>" not in page
    assert '<img src="figures/f.png"' in page and "0.1235" in page


def test_markdown_has_the_same_summary() -> None:
    md = render_markdown(RECORDS, "r")
    lines = md.splitlines()
    header = lines.index(
        "| experiment | claim | paper and section | what was run | verdict | key number |"
    )
    assert lines[header + 2].startswith("| [Title of hard-attention-restrictions]")
    assert "**reproduced**" in lines[header + 2] and "**no claim registered**" in md
    assert "| yes | x\\|y | " in md  # cells escaped, booleans in words


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_every_claim_names_an_experiment_and_a_paper_section(name) -> None:
    names = {e.name for e in all_experiments()}
    assert name in names, f"claim for unknown experiment {name!r}"
    claim = CLAIMS[name]
    dated = "(20" in claim.paper or "(arXiv:2412.09925v1)" in claim.paper  # a year or the version
    assert dated and ("§" in claim.paper or "Theorem" in claim.paper)
    assert claim.claim and claim.what_ran

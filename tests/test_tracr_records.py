"""The recorded side by side with Tracr and the InterpBench run, and what README and docs say of
them: the tables are the scripts' own rendering of the raw results (no hand edits), and every
count quoted in README.md and docs/rasp.md is the count in the raw results. Nothing is run
here (Tracr is not a dependency): a re-run that changes a number fails this test until the
text says the new number."""

from __future__ import annotations

import argparse
import json
import re
import runpy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks/results"
README = (ROOT / "README.md").read_text()
DOCS = (ROOT / "docs/rasp.md").read_text()
TRACR_NS = (10, 20, 40)


@pytest.fixture(scope="module")
def tracr_lib() -> dict[str, Any]:
    return runpy.run_path(str(ROOT / "benchmarks/tracr_lib.py"))


@pytest.fixture(scope="module")
def tracr_data() -> dict[str, Any]:
    return json.loads((RESULTS / "tracr_lib.json").read_text())


def right_of(data: dict[str, Any], builders: dict[str, Any], setting: str, n: int) -> list[str]:
    """The programs Tracr got right on every checked word at max_seq_len n (measured rows)."""
    right = []
    for name in builders:
        row = data["results"][name]["tracr"][setting].get(str(n))
        if (
            row
            and "checks" in row
            and all(c["right_words"] == c["words"] for c in row["checks"].values())
        ):
            right.append(name)
    return right


def test_tracr_table_is_the_scripts_rendering(tracr_lib: dict, tracr_data: dict) -> None:
    args = argparse.Namespace(max_seq_lens=list(TRACR_NS), samples=4)
    assert (RESULTS / "tracr_lib.md").read_text() == tracr_lib["markdown"](tracr_data, args)


def test_every_tracr_row_is_recorded(tracr_lib: dict, tracr_data: dict) -> None:
    """Both settings at every N for all 15 programs: measured, or an error recorded as such."""
    missing = [
        (name, setting, n)
        for name in tracr_lib["BUILDERS"]
        for setting in tracr_lib["SETTINGS"]
        for n in TRACR_NS
        if str(n) not in tracr_data["results"][name]["tracr"].get(setting, {})
    ]
    assert not missing


def test_tracr_counts_quoted(tracr_lib: dict, tracr_data: dict) -> None:
    """README and docs/rasp.md say, per setting, how many of the 15 Tracr gets right at each N."""
    for setting, exactness in tracr_lib["SETTINGS"].items():
        a, b, c = (len(right_of(tracr_data, tracr_lib["BUILDERS"], setting, n)) for n in TRACR_NS)
        text = f"mlp_exactness={exactness}: {a}, {b} and {c} of 15 right at N = 10, 20 and 40"
        for where, body in (("README.md", README), ("docs/rasp.md", DOCS)):
            assert text in _flat(body), f"{where} lacks {text!r}"


def test_tracr_lib_statuses_quoted(tracr_data: dict) -> None:
    """How many of Tracr's own lib functions (only the import changed) are length-general."""
    statuses = [r["ours_tracr_lib"]["status"] for r in tracr_data["results"].values()]
    text = f"{statuses.count('length-general')} of its {len(statuses)} functions length-general"
    assert text in _flat(README)


def test_tracr_sizes_quoted(tracr_data: dict) -> None:
    """The sizes of Tracr's models that README and docs/rasp.md quote, per N."""
    rows = tracr_data["results"]["make_reverse"]["tracr"]["default"]
    p10, p20, p40 = (rows[str(n)]["parameters"] for n in TRACR_NS)
    text = f"make_reverse: {p10:,} parameters at N = 10, {p20:,} at N = 20 and {p40:,} at N = 40"
    for where, body in (("README.md", README), ("docs/rasp.md", DOCS)):
        assert text in _flat(body), f"{where} lacks {text!r}"
    for name in ("make_sort_freq", "make_shuffle_dyck", "make_shuffle_dyck2"):
        rows = tracr_data["results"][name]["tracr"]["default"]
        p10, p20, p40 = (rows[str(n)].get("parameters") for n in TRACR_NS)
        assert f"{name} {p10:,}, {p20:,} and {p40:,}" in _flat(DOCS), name


def test_interpbench_table_is_the_scripts_rendering() -> None:
    data = json.loads((RESULTS / "interpbench.json").read_text())
    render = runpy.run_path(str(ROOT / "benchmarks/interpbench.py"))["markdown"]
    md = (RESULTS / "interpbench.md").read_text()
    corpus = re.search(r"InterpBench \((FlyingPumba/InterpBench at commit \w+)\)", md)
    assert corpus, "interpbench.md names no corpus commit"
    assert md == render(data["results"], data["env"], corpus.group(1))


def test_interpbench_counts_quoted() -> None:
    results = json.loads((RESULTS / "interpbench.json").read_text())["results"]
    counts = Counter(r["status"] for r in results.values())
    compiled = sum("check" in r for r in results.values())
    wrong = sum(
        bool(r.get("check", {}).get("mismatches") or r.get("check_10x", {}).get("mismatches"))
        for r in results.values()
    )
    lg, bd, ref = counts["length-general"], counts["bounded"], counts["refused"]
    readme = _flat(README)
    assert f"{lg} length-general, {bd} bounded" in readme
    assert f"{ref} refused" in readme
    assert f"{wrong} of the {compiled} compiled models disagreeing" in readme
    for status, count in (("length-general", lg), ("bounded", bd), ("refused", ref)):
        assert re.search(rf"^\| {status} \| {count} \|", DOCS, re.M), status
    assert f"All {compiled} compiled models agree" in _flat(DOCS)
    md = (RESULTS / "interpbench.md").read_text()
    assert f"{compiled} compiled models checked, {wrong} disagreeing" in md


def _flat(text: str) -> str:
    """Text with README's comment markers, line breaks and backticks folded away."""
    return re.sub(r"\s*\n\s*(#\s+)?", " ", text).replace("`", "")

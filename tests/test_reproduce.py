"""The reproduce pipeline: store, resume, report, failure isolation."""

from __future__ import annotations

import json
import sqlite3

import pytest

from hardsoft.experiments import _REGISTRY, Context, Result, Table, register
from hardsoft.reproduce import reproduce


@pytest.fixture
def toy_experiments():
    calls = {"good": 0, "bad": 0}

    @register("zz-toy-good", title="Toy good", version="1", order=10_000)
    def good(ctx: Context) -> Result:
        calls["good"] += 1
        (ctx.figure_path("toy.png")).write_bytes(b"\x89PNG fake")
        return Result(
            metrics={"x": 1.5},
            figures=["toy.png"],
            tables=[Table("t", ["a", "b"], [[1, 2.5]])],
            summary="toy summary",
        )

    @register("zz-toy-bad", title="Toy bad", version="1", order=10_001)
    def bad(ctx: Context) -> Result:
        calls["bad"] += 1
        raise RuntimeError("boom")

    yield calls
    _REGISTRY.pop("zz-toy-good")
    _REGISTRY.pop("zz-toy-bad")


def test_store_resume_and_failure_isolation(tmp_path, toy_experiments) -> None:
    out = tmp_path / "run"
    s1 = reproduce(out, only=["zz-toy-good", "zz-toy-bad"], show_progress=False)
    assert [r["name"] for r in s1["ran"]] == ["zz-toy-good"]
    assert [f["name"] for f in s1["failed"]] == ["zz-toy-bad"] and "boom" in s1["failed"][0][
        "error"
    ]
    md = (out / "report.md").read_text()
    assert "Toy good" in md and "toy summary" in md and "figures/toy.png" in md
    assert "zz-toy-good" in (out / "index.html").read_text()
    # resumable: a current record is skipped, the failed one is retried
    s2 = reproduce(out, only=["zz-toy-good", "zz-toy-bad"], show_progress=False)
    assert s2["skipped"] == ["zz-toy-good"] and toy_experiments == {"good": 1, "bad": 2}
    # the stored record carries config, versions, metrics and timings
    con = sqlite3.connect(out / "results.sqlite")
    (text,) = con.execute("SELECT record FROM results WHERE name = 'zz-toy-good'").fetchone()
    rec = json.loads(text)
    for key in (
        "config",
        "package_version",
        "git_commit",
        "metrics",
        "duration_s",
        "torch_version",
    ):
        assert key in rec
    assert rec["metrics"] == {"x": 1.5}
    s3 = reproduce(out, only=["zz-toy-good"], force=True, show_progress=False)
    assert [r["name"] for r in s3["ran"]] == ["zz-toy-good"]


def test_unknown_experiment_is_a_clear_error(tmp_path) -> None:
    from hardsoft.errors import HardsoftError

    with pytest.raises(HardsoftError, match="unknown experiment 'nope'"):
        reproduce(tmp_path, only=["nope"], show_progress=False)


def test_sanity_experiment_runs_and_bound_holds(tmp_path) -> None:
    s = reproduce(tmp_path, only=["softmax-to-hardmax"], show_progress=False)
    assert not s["failed"]
    assert (tmp_path / "figures" / "softmax_to_hardmax.png").stat().st_size > 10_000
    con = sqlite3.connect(tmp_path / "results.sqlite")
    (text,) = con.execute("SELECT record FROM results").fetchone()
    metrics = json.loads(text)["metrics"]
    assert metrics["rows_within_gap_bound"] is True
    assert metrics["final_row_gap"] < 1e-9

"""Sweeps, `reproduce` and the atlas on a local Ray: one small Ray session for the whole
module (2 CPUs, no dashboard, the smallest object store), a 2 × 2 × 2 grid, three atlas cells,
and Ray's one-line errors."""

from __future__ import annotations

import json
import sys
import time

import pytest

from hardsoft.cli import main
from hardsoft.errors import HardsoftError
from hardsoft.experiments import _REGISTRY, Context, Result, register
from hardsoft.learn.executors import LocalExecutor, RayExecutor, ray_session
from hardsoft.learn.sweep import grid_cells, run_cells
from hardsoft.reproduce import reproduce

ray = pytest.importorskip("ray", reason="the [sweep] extra (Ray) is not installed")


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        log_to_driver=False,
        configure_logging=False,
    )
    yield
    ray.shutdown()


def _cli(args: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["hardsoft", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_ray_sweep_of_a_2x2x2_grid_matches_the_in_process_runs(
    tmp_path, capsys, monkeypatch
) -> None:
    opts = ["--steps", "5", "--d-model", "8", "--layers", "1", "--max-n", "8"]
    opts += ["--batch-size", "4", "--warmup", "1"]
    args = ["sweep", "train", "--language", "parity,dyck2", "--arch", "transformer,lstm"]
    args += ["--seeds", "0,1", *opts, "--executor", "ray", "-o", str(tmp_path / "ray"), "--json"]
    code, out, _ = _cli(args, capsys, monkeypatch)
    data = json.loads(out)
    assert code == 0 and data["executor"] == "ray" and data["trained"] == 8
    runs = data["runs"]
    assert {(r["language"], r["arch"], r["seed"]) for r in runs} == {
        (lang, arch, seed)
        for lang in ("parity", "dyck2")
        for arch in ("transformer", "lstm")
        for seed in (0, 1)
    }
    assert all(r["steps_done"] == 5 and r["final_loss"] > 0 for r in runs)
    # the same grid in-process gives the same numbers (a Ray task is an ordinary train run)
    axes = {"language": ["parity", "dyck2"], "arch": ["transformer", "lstm"], "seed": [0, 1]}
    axes.update(steps=[5], d_model=[8], layers=[1], max_n=[8], batch_size=[4], warmup=[1])
    local = run_cells(grid_cells(axes, tmp_path / "local"), LocalExecutor())
    assert [r["final_loss"] for r in local] == pytest.approx(
        [r["final_loss"] for r in runs], abs=1e-6
    )
    # rerun: every cell is complete and skipped
    code, out, _ = _cli(args, capsys, monkeypatch)
    assert json.loads(out)["skipped"] == 8


def test_ray_executor_reports_a_failed_job_and_keeps_the_others() -> None:
    results = dict(RayExecutor().map(_maybe_fail, [(1,), (-1,), (3,)]))
    assert results[0] == ("ok", 2) and results[2] == ("ok", 6)
    state, message = results[1]
    assert state == "error" and message == "ValueError: negative input -1"


def _maybe_fail(x: int) -> int:
    if x < 0:
        raise ValueError(f"negative input {x}")
    return 2 * x


def test_unknown_address_is_a_fast_one_line_error(tmp_path, capsys, monkeypatch) -> None:
    started = time.perf_counter()
    args = ["sweep", "train", "--arch", "lstm", "--executor", "ray", "--address", "127.0.0.1:1"]
    code, out, err = _cli(args + ["-o", str(tmp_path / "s")], capsys, monkeypatch)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no Ray cluster at --address '127.0.0.1:1'" in err
    assert time.perf_counter() - started < 30  # not Ray's minute of retries
    with pytest.raises(HardsoftError, match="HOST:PORT"):
        with ray_session(address="nowhere"):
            pass


@pytest.fixture
def toy_experiments():
    @register("zz-ray-toy-a", title="Toy A", version="1", order=10_100)
    def toy_a(ctx: Context) -> Result:
        ctx.figure_path("toy-a.png").write_bytes(b"\x89PNG toy")
        return Result(metrics={"executor": ctx.executor}, figures=["toy-a.png"])

    @register("zz-ray-toy-b", title="Toy B", version="1", order=10_101)
    def toy_b(ctx: Context) -> Result:
        raise RuntimeError("toy failure")

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    _REGISTRY.pop("zz-ray-toy-a")
    _REGISTRY.pop("zz-ray-toy-b")


def test_reproduce_runs_experiments_as_ray_tasks(tmp_path, toy_experiments) -> None:
    names = ["zz-ray-toy-a", "zz-ray-toy-b"]
    s = reproduce(tmp_path, only=names, executor="ray", show_progress=False)
    assert [r["name"] for r in s["ran"]] == ["zz-ray-toy-a"]
    assert [f["name"] for f in s["failed"]] == ["zz-ray-toy-b"]
    assert "toy failure" in s["failed"][0]["error"]
    assert (tmp_path / "figures" / "toy-a.png").read_bytes() == b"\x89PNG toy"
    assert "Toy A" in (tmp_path / "report.md").read_text()
    again = reproduce(tmp_path, only=names, executor="ray", show_progress=False)
    assert again["skipped"] == ["zz-ray-toy-a"]


ATLAS_SUBSET = "parity+tomita3+a5-identity,uhat-strict"


def _atlas(out, capsys, monkeypatch, executor: str = "ray") -> dict:
    args = ["atlas", "--only", ATLAS_SUBSET, "--executor", executor, "--out", str(out), "--json"]
    code, text, err = _cli(args, capsys, monkeypatch)
    assert code == 0, err
    return json.loads(text)


def _said(table: dict) -> list[tuple]:
    return [
        (c["row"], c["column"], c["status"], c["verdict"], c["evidence"]["summary"])
        for c in table["cells"]
    ]


def test_atlas_cells_as_ray_tasks_match_in_process_and_resume(tmp_path, capsys, monkeypatch):
    """`hardsoft atlas --executor ray`: the same cells as in-process, each stored as it
    finishes; a rerun reuses them all, and a lost cell is the only one run again."""
    table = _atlas(tmp_path / "ray", capsys, monkeypatch)
    assert table["executor"] == "ray" and table["cells_total"] == 3
    assert not table["disagreements"] and not any(c["reused"] for c in table["cells"])
    local = _atlas(tmp_path / "local", capsys, monkeypatch, executor="local")
    assert _said(local) == _said(table)
    assert all(c["reused"] for c in _atlas(tmp_path / "ray", capsys, monkeypatch)["cells"])
    (tmp_path / "ray" / "cells" / "parity" / "uhat-strict" / "evidence.json").unlink()
    again = _atlas(tmp_path / "ray", capsys, monkeypatch)
    assert {c["row"]: c["reused"] for c in again["cells"]} == {
        "parity": False,
        "tomita3": True,
        "a5-identity": True,
    }
    assert _said(again) == _said(table)

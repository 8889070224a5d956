"""Sweeps without Ray: the grid (product, zip, dedup, validation), the in-process executor,
resumption, and the one-line errors of `hardsoft sweep train`."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from hardsoft.cli import main
from hardsoft.errors import HardsoftError
from hardsoft.learn import TrainConfig, load_run, train
from hardsoft.learn.executors import LocalExecutor, make_executor
from hardsoft.learn.sweep import grid_cells, is_complete, make_config, run_cells


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _cli(args: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    """Run `hardsoft ARGS` through the real entry point: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["hardsoft", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_grid_is_a_product_named_by_its_varied_options(tmp_path) -> None:
    axes = {"language": ["parity", "dyck2"], "arch": ["transformer", "lstm"], "seed": [0, 1]}
    axes["steps"] = [7]
    cells = grid_cells(axes, tmp_path)
    assert len(cells) == 8
    assert [c.key for c in cells[:2]] == [
        {"language": "parity", "arch": "transformer", "seed": 0},
        {"language": "parity", "arch": "transformer", "seed": 1},
    ]
    assert cells[0].dir == tmp_path / "parity-transformer-s0"
    assert all(c.config.steps == 7 for c in cells)
    assert {c.config.language for c in cells} == {"parity", "dyck2"}
    # a varied option names the folder
    more = grid_cells({**axes, "lr": [1e-3, 3e-3]}, tmp_path)
    assert len(more) == 16 and more[0].dir.name == "parity-transformer-s0-lr=0.001"


def test_zip_pairs_options_and_lstm_cells_are_not_duplicated(tmp_path) -> None:
    axes = {
        "language": ["parity"],
        "arch": ["transformer", "lstm"],
        "seed": [0],
        "min_n": [8, 32],
        "max_n": [8, 32],
        "layer_norm": ["none", "pre"],
    }
    cells = grid_cells(axes, tmp_path, zipped=["min_n", "max_n"])
    # transformer: 2 lengths x 2 norms; LSTM: 2 lengths (layer norm does not apply)
    assert len(cells) == 6
    assert all(c.config.min_n == c.config.max_n for c in cells)
    lstm = [c for c in cells if c.config.arch.arch == "lstm"]
    assert len(lstm) == 2 and all("layer_norm" not in c.key for c in lstm)
    assert len({c.dir for c in cells}) == 6
    with pytest.raises(HardsoftError, match="grid cell"):
        grid_cells({**axes, "min_n": [8, 64]}, tmp_path, zipped=["max_n"])  # 64 > 32


@pytest.mark.parametrize(
    "axes, zipped, message",
    [
        ({"language": [], "arch": ["lstm"]}, (), "empty grid"),
        ({"min_n": [1, 2], "max_n": [8]}, ("min_n", "max_n"), "mismatched comma lists"),
        ({"max_n": [8]}, ("d_model",), "not a grid option"),
        ({"language": ["dyck-nine"]}, (), "unknown language"),
        ({"language": ["dyck9"], "objective": ["process"]}, (), "no Hahn process"),
    ],
)
def test_bad_grids_fail_before_anything_runs(tmp_path, axes, zipped, message) -> None:
    with pytest.raises(HardsoftError, match=message):
        grid_cells(axes, tmp_path / "never", zipped)
    assert not (tmp_path / "never").exists()


def test_local_sweep_writes_train_folders_and_resumes(tmp_path) -> None:
    axes = {"language": ["dyck2"], "arch": ["transformer", "lstm"], "seed": [0]}
    axes.update(steps=[4], d_model=[8], layers=[1], max_n=[6], batch_size=[4], warmup=[1])
    cells = grid_cells(axes, tmp_path)
    first = run_cells(cells, LocalExecutor())
    assert [r["status"] for r in first] == ["trained", "trained"]
    # the cell's folder is the one `hardsoft train` writes, with the same weights
    ref = train(cells[0].config, tmp_path / "ref", show_progress=False)
    assert first[0]["final_loss"] == pytest.approx(ref["final_loss"], abs=1e-6)
    _, a = load_run(cells[0].dir)
    _, b = load_run(tmp_path / "ref")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert {"config.json", "model.safetensors", "optimizer.pt", "metrics.json"} <= {
        p.name for p in cells[0].dir.iterdir()
    }
    again = run_cells(cells, LocalExecutor())
    assert [r["status"] for r in again] == ["skipped", "skipped"]
    assert again[1]["final_loss"] == first[1]["final_loss"]
    # more steps: the run is no longer complete and resumes from its checkpoint
    longer = grid_cells({**axes, "steps": [6]}, tmp_path)
    assert not is_complete(longer[0].dir, longer[0].config)
    grown = run_cells(longer, LocalExecutor())
    assert [r["status"] for r in grown] == ["trained", "trained"]
    assert [r["steps_done"] for r in grown] == [6, 6]


def test_a_failing_cell_is_reported_and_the_others_still_run(tmp_path) -> None:
    cells = grid_cells(
        {"language": ["parity"], "arch": ["lstm"], "seed": [0, 1], "steps": [2], "d_model": [4]},
        tmp_path,
    )
    (cells[0].dir).mkdir(parents=True)
    (cells[0].dir / "config.json").write_text(json.dumps(TrainConfig(steps=9).to_dict()))
    (cells[0].dir / "optimizer.pt").write_bytes(b"")  # a different run lives there
    runs = run_cells(cells, LocalExecutor())
    assert runs[0]["status"] == "failed" and "different configuration" in runs[0]["error"]
    assert runs[1]["status"] == "trained"


def test_make_config_ignores_transformer_options_for_the_lstm() -> None:
    cfg = make_config({"arch": "lstm", "layer_norm": "none", "heads": 4, "d_model": 8})
    assert cfg.arch.layer_norm == "pre" and cfg.arch.heads == 2 and cfg.arch.d_model == 8
    with pytest.raises(HardsoftError, match="unknown training option"):
        make_config({"arch": "lstm", "bogus": 1})


def test_cli_local_sweep_json(tmp_path, capsys, monkeypatch) -> None:
    args = ["sweep", "train", "--language", "parity", "--arch", "lstm", "--seeds", "0,1"]
    args += ["--steps", "3", "--d-model", "4", "--max-n", "5", "-o", str(tmp_path), "--json"]
    code, out, _ = _cli(args, capsys, monkeypatch)
    data = json.loads(out)
    assert code == 0 and data["executor"] == "local" and len(data["runs"]) == 2
    for r in data["runs"]:
        assert {"language", "arch", "seed", "dir", "final_loss", "steps_done"} <= set(r)
        assert r["steps_done"] == 3 and r["final_loss"] > 0


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--seeds", ","], "empty grid: --seeds has no values"),
        (["--min-n", "2,3", "--max-n", "8", "--zip", "min-n,max-n"], "mismatched comma lists"),
        (["--executor", "spark"], "unknown executor 'spark'"),
        (["--address", "127.0.0.1:1"], "--address needs --executor ray"),
        (["--cpus", "2"], "--cpus needs --executor ray"),
        (["--executor", "ray", "--cpus", "0"], "--cpus must be >= 1"),
        (["--steps", "ten"], "--steps expects int values"),
        (["--language", "parity,dyck-nine"], "unknown language"),
        (["--language", "first", "--objective", "process"], "no Hahn process"),
    ],
)
def test_cli_bad_input_is_one_line(tmp_path, capsys, monkeypatch, extra, message) -> None:
    args = ["sweep", "train", "--arch", "lstm", "--steps", "1", "-o", str(tmp_path / "s")]
    code, out, err = _cli(args + extra, capsys, monkeypatch)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "s").exists()


def test_executor_ray_without_ray_installed(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(HardsoftError, match=r"hardsoft\[sweep\]"):
        make_executor("ray")
    args = ["sweep", "train", "--arch", "lstm", "--executor", "ray", "-o", str(tmp_path / "s")]
    code, _, err = _cli(args, capsys, monkeypatch)
    assert code == 2 and "needs Ray" in err and err.count("\n") == 1
    code, _, err = _cli(
        ["reproduce", "--executor", "ray", "--only", "learning-theorem6", "-o", str(tmp_path)],
        capsys,
        monkeypatch,
    )
    assert code == 2 and "needs Ray" in err


def test_learning_experiment_on_a_tiny_plan_resumes_from_its_run_folders(
    tmp_path, monkeypatch
) -> None:
    from hardsoft.experiments import Context, learning

    tiny = learning.Plan((4, 8), 2, 3, 64, 4, 16, (41, 45), 2, (4, 8))
    monkeypatch.setattr(learning, "QUICK", tiny)
    ctx = Context(quick=True, figures_dir=tmp_path / "figures")
    res = learning.run(ctx)
    cells = res.metrics["cells"]
    # 2 languages x 3 models x (2 lengths + the <= 40 run) x 2 seeds
    assert len(cells) == 2 * 3 * 3 * 2
    assert all(c["gap"] >= -1e-9 for c in cells if c["n"])
    assert all(0 <= c["beyond"] <= 1 for c in cells if c["n"] is None)
    assert all(("sensitivity" in c) == (c["model"] != "lstm") for c in cells)
    s = res.metrics["summary"]["parity/tf-none"]
    gaps = [
        c["gap"] for c in cells if (c["language"], c["model"], c["n"]) == ("parity", "tf-none", 8)
    ]
    assert s["gap"][1][0] == pytest.approx(sum(gaps) / 2) and s["gap"][1][1] <= s["gap"][1][0]
    assert sorted(res.figures) == [
        "learning-gap-at-n.png",
        "learning-generalization.png",
        "learning-sensitivity-vs-gap.png",
    ]
    assert all((tmp_path / "figures" / f).stat().st_size > 10_000 for f in res.figures)
    from hardsoft.report.claims import CLAIMS

    verdict, key = CLAIMS["learning-theorem6"].judge(res.metrics)  # the report reads these
    assert verdict in ("reproduced", "deviates") and key.startswith("PARITY at n = 8:")
    runs = tmp_path / "runs" / f"learning-theorem6-v{learning.VERSION}-quick"
    stamps = {p: p.stat().st_mtime_ns for p in runs.glob("*/eval.json")}
    assert len(stamps) == len(cells)
    again = learning.run(ctx)  # every run and evaluation is reused
    assert again.metrics["cells"] == cells
    assert stamps == {p: p.stat().st_mtime_ns for p in runs.glob("*/eval.json")}

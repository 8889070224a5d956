"""CLI: run / random-model, the JSON shapes other tools rely on, and error paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from hardsoft.model import load_model

HARDSOFT = [sys.executable, "-m", "hardsoft.cli"]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    code = "from hardsoft.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("m") / "m.safetensors"
    res = cli("random-model", "-o", str(path), "--weighting", "rightmost", "--seed", "3", "--json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["spec"]["layers"][0]["heads"][0]["weighting"] == "rightmost"
    return path


def test_run_json_shape_matches_the_model(model_file: Path, tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("0110\n\n111\n")
    res = cli("run", str(model_file), "--input", "01", "--input-file", str(inputs), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [r["input"] for r in out["results"]] == ["01", "0110", "111"]
    model = load_model(model_file)
    for r in out["results"]:
        y = model(model.encode([r["input"]])).outputs[0].detach()  # [n, d_out]
        assert r["output_names"] == [f"out{k}" for k in range(model.spec.d_out)]
        assert len(r["outputs"]) == len(r["input"])
        for got, want in zip(r["outputs"], y.tolist()):
            assert got == pytest.approx(want, abs=1e-12)  # one value per output, per position
        assert r["accept"] == bool(y[-1, 0] > 0.5)
        assert "symbols" not in r


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "{model}", "--input", "01x"], "symbol 'x' at position 3"),
        (["run", "{tmp}/missing.safetensors", "--input", "0"], "no such file"),
        (["run", "{model}"], "no input"),
        (["run", "{model}", "--input", ""], "the empty word has no position to read (--input 1)"),
        (["run", "{model}", "-i", "01", "-i", ""], "no position to read (--input 2)"),
        (["run", "{model}", "--input-file", "{tmp}/nope.txt"], "nope.txt': no such file"),
        (["run", "{model}", "--bogus"], "No such option"),
        (["random-model", "-o", "{tmp}/x.safetensors", "--weighting", "max"], "unknown weighting"),
        (["random-model", "-o", "{tmp}/x.safetensors", "--alphabet", ""], "alphabet is empty"),
        (["random-model", "-o", "{tmp}/x.safetensors", "--features", "i^7"], "unknown position"),
        (["random-model", "-o", "{tmp}/x.safetensors", "--tau", "x+1"], "bad temperature"),
    ],
)
def test_errors_are_one_line_and_nonzero(model_file, tmp_path, args, message) -> None:
    args = [a.format(model=model_file, tmp=tmp_path) for a in args]
    res = cli(*args)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def test_run_refuses_the_empty_word(model_file: Path) -> None:
    """The empty word has no position, so no outputs and no acceptance to read: exit 2 and
    nothing on stdout (it used to print accept false whatever the model's language)."""
    for extra in ((), ("--json",), ("--trace",)):
        res = cli("run", str(model_file), "-i", "", "-i", "0", *extra)
        assert res.returncode == 2 and res.stdout == "", (extra, res.stdout)
        assert res.stderr.startswith("error: the empty word has no position to read"), res.stderr


def test_failed_save_keeps_existing_file(model_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "keep.safetensors"
    target.write_bytes(model_file.read_bytes())
    res = cli("random-model", "-o", str(target), "--mask", "sideways")
    assert res.returncode == 2
    assert target.read_bytes() == model_file.read_bytes()
    assert load_model(target).spec.layers[0].heads[0].weighting == "rightmost"


def test_random_model_float32_option(tmp_path: Path) -> None:
    path = tmp_path / "f32.safetensors"
    assert cli("random-model", "-o", str(path), "--float32").returncode == 0
    assert load_model(path).dtype == torch.float32


def test_run_writes_npy_without_stream_and_its_json_matches(tmp_path) -> None:
    """``run -o OUT.npy``: the same outputs as ``--json``, [n, d] for one input, [B, n, d] for
    inputs of one length; mixed lengths are refused in one line and nothing is written."""
    import json

    import numpy as np

    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model
    from tests._cli import run_cli

    save_model(compile_formula("MOD(2,1)(#<['1'])", "01"), tmp_path / "p.safetensors")
    m = str(tmp_path / "p.safetensors")
    words = ["0110" * 1300, "1011" * 1300]  # 5200 positions: the vectorised JSON path
    res = run_cli("run", m, "-i", words[0], "-i", words[1], "--json")
    shown = json.loads(res.out)["results"]
    res = run_cli("run", m, "-i", words[0], "-i", words[1], "-o", str(tmp_path / "o.npy"), "--json")
    summary = json.loads(res.out)
    arr = np.load(tmp_path / "o.npy")
    assert arr.shape == (2, 5200, 1) and summary["shape"] == [2, 5200, 1]
    assert [r["outputs"] for r in shown] == arr.tolist()
    assert [x["accept"] for x in summary["inputs"]] == [r["accept"] for r in shown]
    ones = np.cumsum([c == "1" for c in words[1]]) % 2 == 1
    assert np.array_equal(arr[1, :, 0] > 0.5, ones)
    res = run_cli("run", m, "-i", "01", "-i", "011", "-o", str(tmp_path / "x.npy"), debug=False)
    assert res.rc == 2 and "one length" in res.err and not (tmp_path / "x.npy").exists()


def test_run_past_the_certified_float_limit_warns_and_says_so_in_json(tmp_path) -> None:
    import json

    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model
    from tests._cli import run_cli

    model = compile_formula("MOD(2,1)(#<['1'])", "01", target="soft-temperature")
    limit = model.meta["certificate"]["float_limits"]["float32"]
    save_model(model, tmp_path / "p.safetensors")
    m = str(tmp_path / "p.safetensors")
    word = "01" * (limit // 2 + 1)  # just past the float32 limit
    res = run_cli("run", m, "-i", word, "--dtype", "float32", "--json")
    assert res.rc == 0
    assert f"limit n <= {limit}" in res.err and res.err.startswith("warning:")
    precision = json.loads(res.out)["precision"]
    assert precision["beyond_limit"] and precision["certified_max_n"] == limit
    assert precision["dtype"] == "float32" and str(limit) in precision["warning"].replace(",", "")
    res = run_cli("run", m, "-i", word, "--json")  # float64: well inside its limit
    assert res.err == "" and not json.loads(res.out)["precision"]["beyond_limit"]
    (tmp_path / "w.txt").write_text(word + "\n")
    res = run_cli("run", m, "--stream", "--input-file", str(tmp_path / "w.txt"), "--dtype",
                  "float32", "-o", str(tmp_path / "o.npy"), "--json")  # fmt: skip
    assert res.rc == 0 and "certified float32 limit" in res.err
    assert json.loads(res.out)["precision"]["beyond_limit"]


def test_a_long_run_on_the_all_pairs_path_says_why_on_stderr(tmp_path) -> None:
    """A head that no fast path fits at a long input is named on stderr with the reason."""
    import torch

    from hardsoft.model import random_model, save_model
    from tests._cli import run_cli

    model = random_model(weighting="softmax", mask="future", layers=1, heads=1, d_model=4,
                         seed=0, dtype=torch.float64)  # fmt: skip
    model.meta["certificate"] = {"float_limits": {"float64": 4096}}  # as if compiled
    save_model(model, tmp_path / "r.safetensors")
    res = run_cli("run", str(tmp_path / "r.safetensors"), "-i", "01" * 4100,
                  "-o", str(tmp_path / "o.npy"))  # fmt: skip
    assert res.rc == 0, res.err
    assert "head blocks.0.attn.0 runs the all-pairs (chunked) path" in res.err
    assert "the query differs between positions" in res.err
    assert "8,200/8,200 query positions" in res.err
    # a run that will take long says first that its answer is past the float limit, once
    lines = res.err.splitlines()
    assert lines[0].startswith("warning: n = 8,200 exceeds") and "n <= 4,096" in lines[0]
    assert sum(line.startswith("warning:") for line in lines) == 1

"""Every command that takes ``--device``, run with ``--device cuda`` on small inputs and compared
with the same command on the CPU (issue #32). ``make test-gpu`` runs this file (``-m gpu``);
without CUDA it says so in one line (the Makefile) or skips (pytest).

Tolerances: the CPU and the GPU run the same code with different kernels (BLAS, reductions),
so floating-point results agree to rounding, not bitwise: float64 model outputs within 1e-9,
float32 training losses within 1e-3 relative (one step of AdamW amplifies rounding), and every
decision (acceptance, a check's verdict, the symbol read) exactly. Sampling is on the CPU
(numpy, seeded), so both devices see the same strings and batches.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from hardsoft.compile import compile_formula
from hardsoft.model import random_model, save_model
from hardsoft.stream import Stream
from tests._cli import run_cli
from tests._device import carried_state

GPU = os.environ.get("HARDSOFT_TEST_GPU", "cuda")
"""The device compared with the CPU; ``HARDSOFT_TEST_GPU=cpu`` dry-runs these tests on a
machine without CUDA (both sides on the CPU) to check the tests themselves."""
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        GPU.startswith("cuda") and not torch.cuda.is_available(), reason="no CUDA device"
    ),
]
FLOAT64_ATOL = 1e-9
LOSS_RTOL = 1e-3
PARITY = "MOD(2,1)(#<['1'])"
MAJORITY = "#<['1'] > #<['0']"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("gpu")
    for name, formula in (("parity", PARITY), ("majority", MAJORITY)):
        save_model(compile_formula(formula, "01", target="soft-temperature"), d / f"{name}.sm")
    soft = random_model(weighting="softmax", weight_scale=0.3, seed=0, dtype=torch.float64)
    save_model(soft, d / "soft.sm")
    rng = np.random.default_rng(0)
    (d / "w.txt").write_bytes((rng.integers(0, 2, 20_000, dtype=np.uint8) + 48).tobytes())
    out = {k: str(d / f"{k}.sm") for k in ("parity", "majority", "soft")}
    return out | {"word": str(d / "w.txt"), "dir": str(d)}


IGNORED = {"seconds", "device", "run", "out", "dir", "path", "model"}


def assert_close(a, b, rel: float, where: str = "") -> None:
    """Two JSON values alike: the same structure, floats within ``rel`` (and 1e-12), the rest
    equal; keys that name times, devices or paths are skipped."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a.keys() - IGNORED:
            assert_close(a[key], b[key], rel, f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, rel, f"{where}[{k}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert b == pytest.approx(a, rel=rel, abs=1e-12), where
    else:
        assert a == b, where


def both(*args: str) -> tuple[dict, dict]:
    """The command's JSON on the CPU and on CUDA (each must exit 0)."""
    got = []
    for device in ("cpu", GPU):
        res = run_cli(*args, "--device", device, "--json")
        assert res.rc == 0, (device, res.err)
        got.append(json.loads(res.out))
    return got[0], got[1]


@pytest.mark.parametrize("model", ["parity", "majority"])
def test_run_to_npy(files, model: str, tmp_path: Path) -> None:
    outs = []
    for device in ("cpu", GPU):
        path = tmp_path / f"{device}.npy"
        res = run_cli("run", files[model], "--input-file", files["word"], "-o", str(path),
                      "--device", device, "--json")  # fmt: skip
        assert res.rc == 0, res.err
        outs.append((np.load(path), json.loads(res.out)))
    (cpu, cpu_info), (gpu, gpu_info) = outs
    np.testing.assert_allclose(gpu, cpu, rtol=0, atol=FLOAT64_ATOL)
    assert np.array_equal(gpu > 0.5, cpu > 0.5)
    assert gpu_info["attention_paths"] == cpu_info["attention_paths"]
    assert gpu_info["inputs"] == cpu_info["inputs"]


@pytest.mark.parametrize("model", ["parity", "majority"])
def test_run_stream(files, model: str, tmp_path: Path) -> None:
    outs = []
    for device in ("cpu", GPU):
        path = tmp_path / f"{device}.npy"
        res = run_cli("run", files[model], "--stream", "--input-file", files["word"],
                      "--chunk", "3001", "-o", str(path), "--device", device, "--json")  # fmt: skip
        assert res.rc == 0, res.err
        outs.append(np.load(path))
    np.testing.assert_allclose(outs[1], outs[0], rtol=0, atol=FLOAT64_ATOL)
    assert np.array_equal(outs[1] > 0.5, outs[0] > 0.5)


def test_stream_state_lives_on_the_gpu(files) -> None:
    from hardsoft.model import load_model

    model = load_model(files["parity"], device=GPU)
    ids = torch.from_numpy(np.random.default_rng(1).integers(0, 2, 5000))
    stream = Stream(model, 5000)
    for s in range(0, 5000, 1234):
        stream.feed(ids[s : s + 1234])
    state = carried_state(stream)
    assert state and all(t.device == model.device for t in state.values()), state


def test_check_and_check_stream(files) -> None:
    cpu, gpu = both("check", files["parity"], "-f", PARITY, "--exhaustive-max-n", "8",
                    "--random-n", "100,5000", "--samples", "8")  # fmt: skip
    for key in ("checked_strings", "checked_positions", "mismatches"):
        assert gpu[key] == cpu[key] and cpu["mismatches"] == 0
    cpu, gpu = both("check", files["majority"], "-f", MAJORITY, "--stream",
                    "--input-file", files["word"], "--chunk", "4096")  # fmt: skip
    assert gpu["mismatched_positions"] == cpu["mismatched_positions"] == 0
    assert gpu["attention_paths"] == cpu["attention_paths"]


def test_train_evaluate_sweep(files) -> None:
    d = Path(files["dir"])
    losses = []
    for device in ("cpu", GPU):
        small = ["--d-model", "16", "--layers", "1", "--heads", "2"]
        res = run_cli("train", "-o", str(d / f"run-{device}"), "--steps", "5", "--max-n", "12",
                      *small, "--device", device, "--json")  # fmt: skip
        assert res.rc == 0, res.err
        losses.append(json.loads(res.out)["final_loss"])
    assert losses[1] == pytest.approx(losses[0], rel=LOSS_RTOL)
    evals = []
    for device in ("cpu", GPU):
        res = run_cli("evaluate", str(d / "run-cpu"), "--lengths", "4,16", "--samples", "8",
                      "--device", device, "--json")  # fmt: skip
        assert res.rc == 0, res.err
        evals.append(json.loads(res.out))
    assert_close(evals[0], evals[1], LOSS_RTOL)
    finals = []
    for device in ("cpu", GPU):
        res = run_cli("sweep", "train", "--language", "parity", "--arch", "lstm", "--steps", "3",
                      "--max-n", "6", "--d-model", "8", "-o", str(d / f"grid-{device}"),
                      "--device", device, "--json")  # fmt: skip
        assert res.rc == 0, res.err
        finals.append(json.loads(res.out)["runs"][0]["final_loss"])
    assert finals[1] == pytest.approx(finals[0], rel=LOSS_RTOL)


def test_sensitivity(files) -> None:
    cpu, gpu = both("sensitivity", files["soft"], "--lengths", "16,64,256", "--samples", "2")
    assert_close(cpu, gpu, 1e-6)  # float64 influences and bounds, and the fitted slopes


def test_reproduce_one_experiment(tmp_path: Path) -> None:
    for device in ("cpu", GPU):
        res = run_cli("reproduce", "--quick", "--only", "soft-attention-sensitivity",
                      "--out", str(tmp_path / device), "--device", device, "--json")  # fmt: skip
        assert res.rc == 0, res.err

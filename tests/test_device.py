"""Device correctness on a CPU-only machine (issue #32): the code paths that ``--device cuda``
runs create every tensor on the model's device.

Each test runs a path under :func:`tests._device.device_guard`: a tensor created without
``device=`` lands on ``meta``, and mixing it with the model's tensors (or copying it back) fails,
as a CPU tensor mixed into a CUDA computation would. The streamed runs also pin the device of
every state a head carries from one chunk to the next. tests/test_gpu.py runs the same commands
for real with ``--device cuda`` (``make test-gpu``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardsoft.compile import compile_formula
from hardsoft.model import random_model
from hardsoft.model.fastpath import fast_paths
from hardsoft.stream import Stream
from tests._device import carried_state, device_guard
from tests.test_fastpath import structured
from tests.test_stream import CASES, FORMULAS, _shift_head, streamed, whole


def _guarded_stream(model, ids: np.ndarray, chunk: int) -> tuple[torch.Tensor, Stream]:
    stream = Stream(model, len(ids))
    rows = []
    with device_guard():
        for s in range(0, len(ids), chunk):
            rows.append(stream.feed(torch.from_numpy(ids[s : s + chunk])))
    return torch.cat(rows), stream


def _pinned(stream: Stream, device: torch.device) -> None:
    state = carried_state(stream)
    assert state, "a stream that carries nothing was not exercised"
    wrong = {name: t.device for name, t in state.items() if t.device != device}
    assert not wrong, f"carried state not on {device}: {wrong}"


@pytest.mark.parametrize("mask", ["future", "strict-future"])
@pytest.mark.parametrize(("kind", "weighting"), CASES)
def test_every_stream_path_creates_and_carries_its_state_on_the_model_device(
    kind: str, weighting: str, mask: str
) -> None:
    model = _shift_head(weighting, mask) if kind == "shift" else structured(kind, weighting, mask)
    ids = np.random.default_rng(1).integers(0, 2, 150)
    out, stream = _guarded_stream(model, ids, 13)
    torch.testing.assert_close(out, whole(model, ids, "off"), rtol=1e-12, atol=1e-12)
    _pinned(stream, model.device)


@pytest.mark.floatcmp
@pytest.mark.parametrize("name", list(FORMULAS))
def test_compiled_streams_run_under_the_guard_bitwise_as_without(name: str) -> None:
    formula, alphabet = FORMULAS[name]
    model = compile_formula(formula, alphabet, target="soft-temperature")
    ids = np.random.default_rng(3).integers(0, 2, 1500)
    out, stream = _guarded_stream(model, ids, 333)
    plain, _ = streamed(model, ids, 333)
    assert torch.equal(out, plain)  # the same calls on the same numbers (the same chunks)
    _pinned(stream, model.device)


@pytest.mark.floatcmp
@pytest.mark.parametrize("kind", ["uniform", "scan", "window", "classes"])
@pytest.mark.parametrize("mask", ["future", "past", "none"])
def test_fast_paths_create_their_tensors_on_the_model_device(kind: str, mask: str) -> None:
    model = structured(kind, "softmax", mask)
    ids = torch.from_numpy(np.random.default_rng(2).integers(0, 2, (2, 600)))
    with torch.no_grad(), fast_paths("force"):
        plain = model(ids)
        with device_guard():
            guarded = model(ids)
    assert torch.equal(guarded.outputs, plain.outputs)  # the same calls on the same numbers
    assert guarded.paths == plain.paths


@pytest.mark.floatcmp
@pytest.mark.parametrize("weighting", ["softmax", "average", "leftmost", "rightmost"])
def test_dense_and_chunked_attention_under_the_guard(weighting: str) -> None:
    model = random_model(weighting=weighting, mask="future", seed=3, dtype=torch.float64)
    ids = torch.from_numpy(np.random.default_rng(4).integers(0, 2, (2, 300)))
    with torch.no_grad(), fast_paths("off"):
        for chunk in (None, 64):
            plain = model(ids, chunk_size=chunk).outputs
            with device_guard():
                guarded = model(ids, chunk_size=chunk).outputs
            assert torch.equal(guarded, plain)


def test_check_runs_under_the_guard() -> None:
    from hardsoft.check import check_formula, check_language

    model = compile_formula("MOD(2,1)(#<['1'])", "01", target="soft-temperature")
    with device_guard():
        report = check_formula(model, "MOD(2,1)(#<['1'])", exhaustive_max_n=6, random_n=[700])
        assert report["mismatches"] == 0 and report["checked_strings"] > 100
        report = check_language(model, "parity-odd", exhaustive_max_n=4, random_n=[50])
        assert report["checked_strings"] > 10


def test_training_and_evaluation_run_under_the_guard(tmp_path) -> None:
    from hardsoft.learn import ArchConfig, TrainConfig, train
    from hardsoft.learn.evaluate import cross_entropy_by_length
    from hardsoft.learn.train import load_run

    for arch, language, objective in (
        ("transformer", "parity", None),
        ("lstm", "dyck2", None),
        ("transformer", "contains-ab", "recognizer"),
    ):
        cfg = TrainConfig(
            language=language,
            objective=objective,
            arch=ArchConfig(arch=arch, layers=1, heads=1, d_model=8),
            max_n=6,
            steps=3,
            batch_size=4,
            warmup=1,
            val_max_n=8,
        )
        with device_guard():
            metrics = train(cfg, tmp_path / f"{arch}-{language}", show_progress=False)
        assert metrics["steps_done"] == 3
    from hardsoft.learn import get_process

    _, model = load_run(tmp_path / "transformer-parity")
    with device_guard():
        rows = cross_entropy_by_length(model, get_process("parity"), [4, 8], samples=4)
    assert len(rows) == 2


def test_sensitivity_runs_under_the_guard() -> None:
    from hardsoft.limits.sensitivity import measure_sensitivity

    model = random_model(weighting="softmax", weight_scale=0.3, seed=0, dtype=torch.float64)
    plain = measure_sensitivity(model, [16, 64], samples=2)
    with device_guard():
        guarded = measure_sensitivity(model, [16, 64], samples=2)
    assert guarded.slope("last_max") == plain.slope("last_max")


def test_every_device_command_runs_under_the_guard(tmp_path) -> None:
    """The commands that take --device, end to end (model loading, readouts, samplers,
    writers) on small inputs: nothing they compute with is created off the model's device."""
    from hardsoft.model import save_model
    from tests._cli import run_cli

    parity = compile_formula("MOD(2,1)(#<['1'])", "01", target="soft-temperature")
    save_model(parity, tmp_path / "p.safetensors")
    soft = random_model(weighting="softmax", weight_scale=0.3, seed=0, dtype=torch.float64)
    save_model(soft, tmp_path / "s.safetensors")
    (tmp_path / "w.txt").write_text("0110100111" * 70 + "\n")
    m, w = str(tmp_path / "p.safetensors"), str(tmp_path / "w.txt")
    commands = [
        ("run", m, "-i", "0110", "-i", "1" * 600, "--json"),
        ("run", m, "--input-file", w, "-o", str(tmp_path / "o.npy"), "--json"),
        ("run", m, "--stream", "--input-file", w, "--chunk", "64", "-o", str(tmp_path / "s.npy")),
        ("check", m, "-f", "MOD(2,1)(#<['1'])", "--exhaustive-max-n", "5", "--random-n", "600"),
        ("check", m, "-f", "MOD(2,1)(#<['1'])", "--stream", "--input-file", w, "--chunk", "100"),
        ("train", "-o", str(tmp_path / "run"), "--steps", "2", "--max-n", "5", "--d-model", "8",
         "--layers", "1", "--heads", "1", "--json"),
        ("evaluate", str(tmp_path / "run"), "--lengths", "4,8", "--samples", "4", "--json"),
        ("sensitivity", str(tmp_path / "s.safetensors"), "--lengths", "16,32", "--samples", "2",
         "--json"),
        ("sweep", "train", "--language", "parity", "--arch", "lstm", "--steps", "2",
         "--max-n", "4", "--d-model", "4", "-o", str(tmp_path / "grid"), "--json"),
    ]  # fmt: skip
    for args in commands:
        with device_guard():
            res = run_cli(*args)
        assert res.rc == 0, (args, res.err)


def _device_commands() -> list[tuple[str, ...]]:
    """Every leaf command of the CLI that takes ``--device``, read from the app."""
    import typer

    from hardsoft.cli import app

    found: list[tuple[str, ...]] = []

    def walk(cmd, path: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, (*path, name))
        elif any("--device" in getattr(p, "opts", ()) for p in cmd.params):
            found.append(path)

    walk(typer.main.get_command(app), ())
    return found


def test_every_device_command_is_run_on_cuda_and_under_the_guard() -> None:
    """A command that gains ``--device`` must join tests/test_gpu.py (``make test-gpu``) and the
    guarded list above; this fails until it does, naming it."""
    import inspect
    import re
    from pathlib import Path

    commands = _device_commands()
    assert {("run",), ("check",), ("train",), ("sweep", "train")} <= set(commands), commands
    gpu_tests = (Path(__file__).parent / "test_gpu.py").read_text()
    guarded = inspect.getsource(test_every_device_command_runs_under_the_guard)
    for path in commands:
        words = r",\s*".join(f'"{w}"' for w in path)
        assert re.search(rf"(run_cli|both)\(\s*{words}\s*,", gpu_tests), f"{path}: not in test_gpu"
        if path != ("reproduce",):  # a whole experiment: its parts are in the list
            assert re.search(rf"\(\s*{words}\s*,", guarded), f"{path}: not under the guard"

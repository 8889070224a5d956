"""What a new user ran into (issue #32, "Other commands"), each fixed: a size that cannot fit
names the size needed and what is available, impossible training requests are refused in one
line, and the README's examples show what they claim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import torch

from hardsoft.model import random_model, save_model
from tests._cli import run_cli


def test_sizes_that_cannot_fit_name_the_size_and_what_is_available(tmp_path: Path) -> None:
    uhat = random_model(weighting="leftmost", mask="strict-future", position_features=("1",),
                        layers=2, seed=1, dtype=torch.float64)  # fmt: skip
    soft = random_model(weighting="softmax", seed=0, dtype=torch.float64)
    save_model(uhat, tmp_path / "u.safetensors")
    save_model(soft, tmp_path / "s.safetensors")
    for args in (
        ("decompile", str(tmp_path / "u.safetensors"), "--random-max-n", str(10**12)),
        ("agree", str(tmp_path / "s.safetensors"), str(tmp_path / "s.safetensors"),
         "--lengths", str(10**8)),
    ):  # fmt: skip
        res = run_cli(*args, debug=False)
        assert res.rc == 2 and len(res.err.strip().splitlines()) == 1, res.err
        assert re.search(r"needs about [0-9.]+ [PTG]iB of memory; [0-9.]+ [KMGT]iB is", res.err)


def test_an_allocation_that_fails_anyway_says_how_much_it_asked_for() -> None:
    from hardsoft.cli import _oom_message

    try:
        np.empty(10**15)
    except MemoryError as exc:
        text = _oom_message(exc)
    assert re.match(r"out of memory: one step needed [0-9.]+ PiB; [0-9.]+ \w+ is available", text)
    torch_cpu = RuntimeError(
        "DefaultCPUAllocator: can't allocate memory: you tried to allocate 51200000000 bytes."
    )
    assert "one step needed 47.7 GiB" in _oom_message(torch_cpu)
    cuda = RuntimeError("CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has ...")
    assert _oom_message(cuda).startswith("out of memory on the GPU: one step needed 20.0 GiB")


def test_train_refuses_a_step_count_no_run_finishes(tmp_path: Path) -> None:
    res = run_cli("train", "--steps", str(10**15), "-o", str(tmp_path / "r"), debug=False)
    assert res.rc == 2 and "--steps must be <= 100000000" in res.err
    assert not (tmp_path / "r").exists()


def test_a_recognizer_needs_the_language_s_own_name(tmp_path: Path) -> None:
    """``parity`` names Hahn's PARITY process; as a recognizer it silently trained
    parity-even. Now it names the two languages instead."""
    args = ("train", "--language", "parity", "--objective", "recognizer")
    res = run_cli(*args, "-o", str(tmp_path / "r"), debug=False)
    assert res.rc == 2 and "parity-even, parity-odd" in res.err and "\n" not in res.err.strip()
    res = run_cli("train", "--language", "parity-even", "--objective", "recognizer", "--steps",
                  "1", "--max-n", "4", "--d-model", "4", "--layers", "1", "--heads", "1",
                  "-o", str(tmp_path / "ok"), "--json")  # fmt: skip
    assert res.rc == 0, res.err


def test_the_readme_khop2_example_shows_answers(tmp_path: Path) -> None:
    """The README runs the logic-route khop2 model on an input whose answers are not all
    none, and says which: none x5, then b c a (the task's own reference)."""
    from hardsoft.languages import get_language

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("hardsoft run khop2.safetensors"))
    word = line.split("--input")[1].split()[0]
    expected = get_language("khop2").reference_symbols(word)
    assert [s or "none" for s in expected][-3:] == ["b", "c", "a"] and "none x5, then b c a" in line
    res = run_cli("program", "khop", "--k", "2", "--route", "logic", "--target",
                  "soft-temperature", "-o", str(tmp_path / "k.safetensors"))  # fmt: skip
    assert res.rc == 0, res.err
    res = run_cli("run", str(tmp_path / "k.safetensors"), "--input", word, "--json")
    assert json.loads(res.out)["results"][0]["symbols"] == [s or "none" for s in expected]

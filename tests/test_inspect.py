"""Looking inside a model from the command line: `run --trace/--plot` and `agree`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from hardsoft.convert import harden
from hardsoft.model import load_model, random_model, save_model
from hardsoft.model.inspect import agreement, attention_patterns
from tests._cli import run_cli


@pytest.fixture
def soft(tmp_path: Path) -> Path:
    model = random_model(
        alphabet=("a", "b"), layers=2, heads=2, d_model=8, weighting="softmax", mask="future",
        position_features=("1", "(-1)^i"), seed=5,
    )  # fmt: skip
    path = tmp_path / "soft.safetensors"
    save_model(model, path)
    return path


def test_trace_reports_each_heads_argmax_and_weight(soft: Path) -> None:
    res = run_cli("run", str(soft), "-i", "abba", "-i", "ba", "--trace", "--json")
    assert res.rc == 0, res.err
    data = json.loads(res.out)["results"]
    model = load_model(soft)
    for r in data:
        heads = r["attention"]
        assert [h["head"] for h in heads] == [
            f"blocks.{L}.attn.{H}" for L in (0, 1) for H in (0, 1)
        ]
        patterns = attention_patterns(model, r["input"])
        for h in heads:
            p = patterns[h["head"]]
            assert np.allclose(p.sum(1), 1.0)
            for i, (j, w) in enumerate(zip(h["argmax"], h["weight"])):
                assert 1 <= j <= i + 1  # the future mask: position i+1 sees 1..i+1
                assert w == pytest.approx(p[i].max()) and p[i, j - 1] == p[i].max()
    text = run_cli("run", str(soft), "-i", "abba", "--trace")
    assert text.rc == 0 and "layer 2 head 1: 1->1 (1.00)" in text.out


def test_trace_of_a_hardened_model_has_weight_one(soft: Path, tmp_path: Path) -> None:
    hard = harden(load_model(soft), "leftmost")
    path = tmp_path / "hard.safetensors"
    save_model(hard, path)
    res = run_cli("run", str(path), "-i", "abbab", "--trace", "--json")
    for h in json.loads(res.out)["results"][0]["attention"]:
        assert h["weight"] == [1.0] * 5


def test_plot_writes_one_png_per_input(soft: Path, tmp_path: Path) -> None:
    out = tmp_path / "att.png"
    res = run_cli("run", str(soft), "-i", "abba", "-i", "bb", "--plot", str(out))
    assert res.rc == 0, res.err
    for path in (out, tmp_path / "att-2.png"):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_agreement_with_itself_and_with_a_changed_readout(soft: Path) -> None:
    a = load_model(soft)
    words = ["abba", "bbab", "aaaa", "baba"]
    same = agreement(a, a, words)
    assert (same.accept_positions, same.accept_strings) == (1.0, 1.0)
    assert (same.outputs_positions, same.outputs_strings) == (1.0, 1.0)
    ya = np.stack(a.run_words(words))
    b = load_model(soft)
    with torch.no_grad():  # moves about half the outputs across the threshold 1/2
        b.b_U += float(0.5 - np.median(ya)) * 2
    row = agreement(a, b, words)
    yb = np.stack(b.run_words(words))
    acc = (ya[..., 0] > 0.5) == (yb[..., 0] > 0.5)
    out = ((ya > 0.5) == (yb > 0.5)).all(-1)
    assert row.accept_positions == pytest.approx(acc.mean())
    assert row.accept_strings == pytest.approx(acc.all(1).mean())
    assert row.outputs_positions == pytest.approx(out.mean())
    assert row.outputs_strings == pytest.approx(out.all(1).mean())
    assert row.outputs_positions < 1.0


def test_agree_cli(soft: Path, tmp_path: Path) -> None:
    hard = tmp_path / "hard.safetensors"
    save_model(harden(load_model(soft)), hard)
    res = run_cli("agree", str(soft), str(hard), "--lengths", "4,16", "--count", "8", "--json",
                  "--language", "contains-ab")  # fmt: skip
    assert res.rc == 0, res.err
    data = json.loads(res.out)
    assert data["words"] == "language contains-ab" and [r["n"] for r in data["rows"]] == [4, 16]
    for r in data["rows"]:
        assert r["strings"] == 8 and 0 <= r["accept_positions"] <= 1
        assert r["accept_strings"] <= r["accept_positions"]
    res = run_cli("agree", str(soft), str(soft), "--lengths", "5", "--random")
    assert res.rc == 0 and "1.0000" in res.out
    other = tmp_path / "other.safetensors"
    save_model(random_model(alphabet=("0", "1"), layers=1, heads=1, d_model=4, seed=1), other)
    for args, message in [
        ([str(soft), str(other)], "different alphabets"),
        ([str(soft), str(soft), "--random", "--language", "first"], "not both"),
        ([str(soft), str(soft), "--language", "khop2"], "per-position task"),
        ([str(soft), str(soft), "--language", "first"], "do not read"),
        ([str(soft), str(soft), "--lengths", "0"], ">= 1"),
    ]:
        res = run_cli("agree", *args)
        assert res.rc == 2 and message in res.err, (args, res.err)


def test_agreement_in_batches_is_the_one_pass_answer(soft: Path) -> None:
    """The words go through both models in batches (with a progress call after each); the row
    is exactly what one pass over all the words gives."""
    a, b = load_model(soft), load_model(soft)
    rng = np.random.default_rng(3)
    words = ["".join(rng.choice(["a", "b"], 12)) for _ in range(150)]
    ya, yb = (torch.as_tensor(np.stack(m.run_words(words))) for m in (a, b))
    with torch.no_grad():  # moves about half the outputs across the threshold 1/2
        b.b_U += float(0.5 - ya.median()) * 2
    yb = torch.as_tensor(np.stack(b.run_words(words)))
    calls: list[int] = []
    row = agreement(a, b, words, progress=calls.append)
    assert calls == [64, 64, 22]
    acc = (ya[..., 0] > 0.5) == (yb[..., 0] > 0.5)
    out = ((ya > 0.5) == (yb > 0.5)).all(-1)
    assert row.accept_positions == float(acc.double().mean()) < 1.0
    assert row.accept_strings == float(acc.all(1).double().mean())
    assert row.outputs_positions == float(out.double().mean())
    assert row.outputs_strings == float(out.all(1).double().mean())
    assert agreement(a, b, words) == row


def test_agree_progress_bar_on_a_terminal_only(soft: Path, monkeypatch) -> None:
    """A progress bar on stderr when stderr is a terminal; never with --json; stdout is the
    same either way."""
    from rich.console import Console

    from hardsoft.cli import inspect_cmds

    args = ("agree", str(soft), str(soft), "--lengths", "4,16", "--count", "150", "--random")
    plain, plain_json = run_cli(*args), run_cli(*args, "--json")
    assert plain.rc == plain_json.rc == 0 and plain.err == plain_json.err == ""
    terminal = Console(stderr=True, force_terminal=True, markup=False, highlight=False)
    monkeypatch.setattr(inspect_cmds, "err_console", terminal)
    shown = run_cli(*args)
    assert shown.rc == 0 and shown.out == plain.out
    bar = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.err)  # without the terminal's codes
    assert "agree n=4" in bar and "agree n=16 " in bar and "300/300 words" in bar
    quiet = run_cli(*args, "--json")
    assert quiet.rc == 0 and quiet.out == plain_json.out and quiet.err == ""
    assert [r["strings"] for r in json.loads(quiet.out)["rows"]] == [150, 150]


def test_agree_defaults_to_the_trained_language(tmp_path: Path) -> None:
    run = tmp_path / "run"
    common = ["--steps", "2", "--warmup", "1", "--d-model", "8", "--layers", "1", "--max-n", "6"]
    assert run_cli("train", "-o", str(run), "--language", "dyck2-process", *common).rc == 0
    model = run / "model.safetensors"
    hard = tmp_path / "hard.safetensors"
    save_model(harden(load_model(model)), hard)
    res = run_cli("agree", str(model), str(hard), "--lengths", "4", "--count", "4", "--json")
    assert res.rc == 0, res.err
    data = json.loads(res.out)
    assert data["words"] == "language dyck2"  # the language the process stops in
    assert data["rows"][0]["outputs_positions"] is not None  # same width: every coordinate


def test_plot_refuses_a_name_that_is_not_png(soft: Path, tmp_path: Path) -> None:
    out = tmp_path / "att.txt"
    res = run_cli("run", str(soft), "-i", "abba", "--plot", str(out))
    assert res.rc == 2 and "--plot" in res.err and ".png" in res.err
    assert len(res.err.strip().splitlines()) == 1 and not out.exists()
    upper = tmp_path / "att.PNG"
    assert run_cli("run", str(soft), "-i", "abba", "--plot", str(upper)).rc == 0
    assert upper.read_bytes()[:4] == b"\x89PNG"


def test_run_refuses_options_of_the_other_mode(soft: Path, tmp_path: Path) -> None:
    """--trace/--plot with --stream were silently ignored; -o writes .npy only (without
    --stream; it once needed --stream) and not beside --trace/--plot."""
    word = tmp_path / "w.txt"
    word.write_text("abba")
    png, npy = tmp_path / "s.png", tmp_path / "z.txt"
    for args in (("--stream", "--input-file", str(word), "--trace"),
                 ("--stream", "--input-file", str(word), "--plot", str(png)),
                 ("-i", "abba", "-o", str(npy)),
                 ("-i", "abba", "--trace", "-o", str(tmp_path / "z.npy"))):  # fmt: skip
        res = run_cli("run", str(soft), *args)
        assert res.rc == 2 and len(res.err.strip().splitlines()) == 1, (args, res.err)
        assert res.err.startswith("error:")
    assert not png.exists() and not npy.exists()


def test_plot_into_a_folder_is_named_as_a_folder(soft: Path, tmp_path: Path) -> None:
    res = run_cli("run", str(soft), "-i", "abba", "--plot", str(tmp_path) + "/")
    assert res.rc == 2 and "folder" in res.err, res.err


def test_plot_checks_every_file_name_before_writing_any(soft: Path, tmp_path: Path) -> None:
    (tmp_path / "att-2.png").mkdir()
    out = tmp_path / "att.png"
    res = run_cli("run", str(soft), "-i", "abba", "-i", "bb", "--plot", str(out))
    assert res.rc == 2 and "--plot" in res.err and "att-2.png" in res.err, res.err
    assert not out.exists()

"""Looking inside a model from the command line: `run --trace/--plot` and `agree`."""

from __future__ import annotations

import json
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
    """--trace/--plot with --stream, and -o without it, were silently ignored."""
    word = tmp_path / "w.txt"
    word.write_text("abba")
    png, npy = tmp_path / "s.png", tmp_path / "z.npy"
    for args in (("--stream", "--input-file", str(word), "--trace"),
                 ("--stream", "--input-file", str(word), "--plot", str(png)),
                 ("-i", "abba", "-o", str(npy))):  # fmt: skip
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

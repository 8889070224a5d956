"""Streaming runs (hardsoft.stream, ``hardsoft run --stream``): chunk by chunk, the outputs equal
the non-streaming run's at every position up to rounding and their readout exactly, for any chunk
size; refusals are one line. Not bitwise: a chunk's matrix products are BLAS calls of another
shape and its prefix sums start from the carried state (docs/model.md, "What is bitwise")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from hardsoft.check import formula_reference
from hardsoft.cli import app
from hardsoft.compile import compile_formula
from hardsoft.errors import HardsoftError
from hardsoft.logic import parse
from hardsoft.model import save_model
from hardsoft.model.fastpath import fast_paths
from hardsoft.stream import Stream, file_length, read_chunks
from tests._cli import run_cli
from tests.test_fastpath import I2, ONE, TOK, I, one_head_model, structured

pytestmark = pytest.mark.floatcmp  # float comparisons: make test-cpus runs them per CPU path

ROUNDING = 1e-12
"""What a streamed output may differ by from the whole run's (outputs of size <= 1 here): the
tolerance the fast paths are held to against the dense path (tests/test_fastpath.py)."""


def same_up_to_rounding(a, b) -> None:
    """Equal up to :data:`ROUNDING`, and the acceptance readout (> 1/2) exactly equal."""
    a, b = (x if isinstance(x, torch.Tensor) else torch.from_numpy(np.array(x)) for x in (a, b))
    torch.testing.assert_close(a, b, rtol=0, atol=ROUNDING)
    assert torch.equal(a > 0.5, b > 0.5)


FORMULAS = {
    "parity": ("MOD(2,1)(#<['1'])", "01"),
    "majority": ("#<['1'] > #<['0']", "01"),
    "dyck1 (causal)": ("!P (#<['('] < #<[')']) & #<['('] = #<[')']", "()"),
}
CHUNKS = (1, 7, 64, 300)
runner = CliRunner()


def streamed(model, ids: np.ndarray, chunk: int) -> tuple[torch.Tensor, dict[str, str]]:
    stream = Stream(model, len(ids))
    rows = [stream.feed(torch.from_numpy(ids[s : s + chunk])) for s in range(0, len(ids), chunk)]
    return torch.cat(rows), stream.paths


def whole(model, ids: np.ndarray, mode: str) -> torch.Tensor:
    with torch.no_grad(), fast_paths(mode):
        return model(torch.from_numpy(ids)[None]).outputs[0]


@pytest.fixture(scope="module")
def compiled():
    return {k: compile_formula(f, a, target="soft-temperature") for k, (f, a) in FORMULAS.items()}


@pytest.mark.parametrize("name", list(FORMULAS))
def test_stream_equals_the_whole_run_at_every_position(compiled, name: str) -> None:
    model = compiled[name]
    formula, alphabet = FORMULAS[name]
    ids = np.random.default_rng(3).integers(0, 2, 300)
    fast, dense = whole(model, ids, "force"), whole(model, ids, "off")
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)(ids[None])[0]
    for chunk in CHUNKS:
        out, paths = streamed(model, ids, chunk)
        same_up_to_rounding(out, fast)
        torch.testing.assert_close(out, dense, rtol=0, atol=1e-12)
        assert np.array_equal(out[:, 0].numpy() > 0.5, ref)
        assert "dense" not in paths.values()


def test_chunks_that_split_at_odd_places_past_the_fast_path_threshold(compiled) -> None:
    model = compiled["parity"]
    ids = np.random.default_rng(5).integers(0, 2, 2000)
    out, paths = streamed(model, ids, 333)
    same_up_to_rounding(out, whole(model, ids, "auto"))
    assert set(paths.values()) == {"uniform", "window", "classes"}


def _shift_head(weighting: str, mask: str) -> torch.nn.Module:
    """A head reading (about) position i − 1, score 2(i−1)j − j², values from the tokens: the
    window path with content-dependent values, from the recent keys it carries."""
    model = one_head_model(weighting, mask, 2, "1/(4*n)" if weighting == "softmax" else None)
    head = model.blocks[0].heads[0]
    with torch.no_grad():
        head.W_Q[I], head.W_Q[ONE] = torch.tensor([2.0, 0.0]), torch.tensor([-2.0, -1.0])
        head.W_K[I, 0], head.W_K[I2, 1] = 1.0, 1.0
        head.W_V[TOK : TOK + 2] = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
        head.W_O[:, 7:9] = torch.eye(2, dtype=torch.float64)
    return model


CASES = [
    (kind, weighting)
    for kind in ("uniform", "scan", "classes", "shift")
    for weighting in ("softmax", "average", "leftmost", "rightmost")
    if not (kind == "classes" and weighting in ("leftmost", "rightmost"))  # refused: below
]


@pytest.mark.parametrize("mask", ["future", "strict-future"])
@pytest.mark.parametrize(("kind", "weighting"), CASES)
def test_each_stream_path_equals_the_dense_head(kind: str, weighting: str, mask: str) -> None:
    model = _shift_head(weighting, mask) if kind == "shift" else structured(kind, weighting, mask)
    ids = np.random.default_rng(1).integers(0, 2, 150)
    dense = whole(model, ids, "off")
    for chunk in (1, 13, 150):
        out, paths = streamed(model, ids, chunk)
        torch.testing.assert_close(out, dense, rtol=1e-12, atol=1e-12)
        assert paths["blocks.0.attn.0"] == ("window" if kind == "shift" else kind)


def test_window_with_positional_values(compiled) -> None:
    model = structured("window", "softmax", "future")
    with torch.no_grad():
        model.blocks[0].heads[0].W_V[TOK : TOK + 2] = 0.0  # values from positions only
    ids = np.random.default_rng(2).integers(0, 2, 200)
    out, paths = streamed(model, ids, 17)
    torch.testing.assert_close(out, whole(model, ids, "off"), rtol=1e-12, atol=1e-12)
    assert paths["blocks.0.attn.0"] == "window"


def test_refusals_name_the_head() -> None:
    model = structured("scan", "softmax", "past")
    with pytest.raises(HardsoftError, match=r"head blocks\.0\.attn\.0 has mask 'past'"):
        Stream(model, 10).feed(torch.zeros(10, dtype=torch.long))
    far = structured("window", "softmax", "future")  # content values, keys at j = 3..5
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, 2, 6000))
    with pytest.raises(HardsoftError, match=r"head blocks\.0\.attn\.0 fits none") as err:
        stream = Stream(far, 6000)
        for s in range(0, 6000, 1000):
            stream.feed(ids[s : s + 1000])
    assert "\n" not in str(err.value) and "positions 5001..6000" in str(err.value)
    hard = structured("classes", "leftmost", "future")  # unique-hard classes do not stream
    with pytest.raises(HardsoftError, match=r"head blocks\.0\.attn\.0 fits none"):
        Stream(hard, 400).feed(ids[:400])
    with pytest.raises(HardsoftError, match="more than the announced"):
        Stream(model, 3).feed(torch.zeros(4, dtype=torch.long))


def test_file_length_and_bad_bytes(tmp_path: Path) -> None:
    for text, n in ((b"0101", 4), (b"0101\n", 4), (b"0101\r\n", 4), (b"", 0)):
        (tmp_path / "f.txt").write_bytes(text)
        assert file_length(tmp_path / "f.txt") == n
    (tmp_path / "g.txt").write_bytes(b"01x1")
    n, chunks = read_chunks(tmp_path / "g.txt", ("0", "1"), 2)
    with pytest.raises(HardsoftError, match=r"byte b'x' at position 3"):
        list(chunks)


def test_cli_stream_jsonl_npy_and_dtype(compiled, tmp_path: Path) -> None:
    model = compiled["majority"]
    save_model(model, tmp_path / "m.safetensors")
    ids = np.random.default_rng(4).integers(0, 2, 257)
    (tmp_path / "w.txt").write_text("".join("01"[c] for c in ids) + "\n")
    base = ["run", str(tmp_path / "m.safetensors"), "--stream", "--input-file"]
    res = runner.invoke(app, [*base, str(tmp_path / "w.txt"), "--chunk", "10"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    rows = np.array([x["outputs"] for x in lines[:-1]])
    assert [x["position"] for x in lines[:-1]] == list(range(1, 258))
    same_up_to_rounding(rows, whole(model, ids, "auto").numpy())
    summary = lines[-1]["summary"]
    assert summary["n"] == 257 and summary["accept"] == bool(rows[-1, 0] > 0.5)
    out = tmp_path / "o.npy"
    res = runner.invoke(app, [*base, str(tmp_path / "w.txt"), "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    arr = np.load(out, mmap_mode="r")
    assert arr.shape == (257, 1) and arr.dtype == np.float64
    same_up_to_rounding(arr, rows)  # chunk 65,536 against chunk 10
    args = [*base, str(tmp_path / "w.txt"), "-o", str(out), "--dtype", "float32"]
    assert runner.invoke(app, args).exit_code == 0
    arr32 = np.load(out, mmap_mode="r")
    assert arr32.dtype == np.float32 and np.array_equal(arr32 > 0.5, rows > 0.5)


def test_cli_stream_jsonl_file_holds_the_stdout_lines(compiled, tmp_path: Path) -> None:
    """``--stream -o OUT.jsonl`` writes JSON Lines (it once wrote .npy bytes under that name)."""
    save_model(compiled["parity"], tmp_path / "m.safetensors")
    (tmp_path / "w.txt").write_text("0110100" * 30 + "\n")
    base = ["run", str(tmp_path / "m.safetensors"), "--stream", "--input-file"]
    res = run_cli(*base, str(tmp_path / "w.txt"), "--chunk", "50")
    expected = res.out.splitlines()[:-1]  # stdout's last line is the summary
    res = run_cli(*base, str(tmp_path / "w.txt"), "--chunk", "50", "-o", str(tmp_path / "o.jsonl"))
    assert res.rc == 0, res.err
    assert (tmp_path / "o.jsonl").read_text().splitlines() == expected
    assert json.loads(expected[-1])["position"] == 210


def test_cli_stream_errors_leave_no_output(compiled, tmp_path: Path) -> None:
    save_model(compiled["parity"], tmp_path / "m.safetensors")
    (tmp_path / "w.txt").write_text("0101\n0101\n")
    out = tmp_path / "o.npy"
    args = ["run", str(tmp_path / "m.safetensors"), "--stream", "--input-file"]
    res = run_cli(*args, str(tmp_path / "w.txt"), "-o", str(out), debug=False)
    assert res.rc == 2 and "one input" in res.err and len(res.err.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.glob(".o.npy*"))
    res = run_cli(*args[:3], "--input", "0101", debug=False)
    assert res.rc == 2 and "--input-file" in res.err
    res = run_cli("run", str(tmp_path / "m.safetensors"), "-i", "01", "--dtype", "x", debug=False)
    assert res.rc == 2 and "float32 or float64" in res.err
    # -o names what it writes: .npy or .jsonl with --stream, .npy without; nothing else
    for name, stream in (("o.txt", ["--stream", "--input-file", str(tmp_path / "w.txt")]),
                         ("o.jsonl", ["-i", "01"]), ("o.json", ["-i", "01"])):  # fmt: skip
        bad = tmp_path / name
        res = run_cli("run", str(tmp_path / "m.safetensors"), *stream, "-o", str(bad), debug=False)
        assert res.rc == 2 and ".npy" in res.err and not bad.exists(), res.err
    # an empty file, or one holding only a newline: the same one line for run and check
    for text in ("", "\n", "\r\n"):
        (tmp_path / "e.txt").write_text(text, newline="")
        for cmd in (["run"], ["check", "--formula", "'1'"]):
            res = run_cli(
                cmd[0],
                str(tmp_path / "m.safetensors"),
                *cmd[1:],
                "--stream",
                "--input-file",
                str(tmp_path / "e.txt"),
                debug=False,
            )
            assert res.rc == 2 and "holds the empty input" in res.err, res.err

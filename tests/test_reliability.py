"""Regression tests for issue #12 (reliability): each reported case gives a correct result or one
``error:`` line with a non-zero exit code, through the command line and the Python API alike.

The commands run in-process (``tests/_cli.py``); the fuzz test (test_cli_fuzz.py) explores the
same classes with generated inputs."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.languages.hard_words import hard_words
from hardsoft.model import load_model, random_model, save_model
from hardsoft.model.io import FORMAT
from hardsoft.model.spec import HeadSpec, LayerSpec, ModelSpec, check_tau, eval_tau
from tests._cli import run_cli

PARITY = "MOD(2,1)(#<['1'])"


def one_error_line(res, *needles: str) -> None:
    """Exit code 2, stderr is one line starting with ``error:`` containing every needle."""
    lines = res.err.strip().splitlines()
    assert res.rc == 2, (res.rc, res.err, res.out)
    assert len(lines) == 1 and lines[0].startswith("error:"), res.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in res.err + res.out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("rel")
    from hardsoft.compile import compile_formula

    parity = compile_formula(PARITY, "01", target="soft-temperature")
    save_model(parity, d / "parity.safetensors")
    rand = random_model(weighting="rightmost", seed=1, dtype=torch.float64)
    save_model(rand, d / "hard.safetensors")
    soft = random_model(weighting="softmax", weight_scale=0.3, seed=0, dtype=torch.float64)
    save_model(soft, d / "soft.safetensors")
    return {
        "dir": d,
        "parity": d / "parity.safetensors",
        "hard": d / "hard.safetensors",
        "soft": d / "soft.safetensors",
    }


# ---------------------------------------------------------------- silently wrong: chunk size


def test_check_chunk_size_minus_one_is_refused(files) -> None:
    args = ["check", str(files["parity"]), "-f", PARITY, "--exhaustive-max-n", "4"]
    one_error_line(run_cli(*args, "--random-n", "10", "--chunk-size", "-1"), "--chunk-size")


@pytest.mark.parametrize("chunk", ["0", "1", "3", "7"])
def test_check_chunk_size_gives_the_right_answer(files, chunk) -> None:
    args = ["check", str(files["parity"]), "-f", PARITY, "--exhaustive-max-n", "6"]
    res = run_cli(*args, "--random-n", "20", "--samples", "20", "--chunk-size", chunk, "--json")
    assert res.rc == 0, res.err
    report = json.loads(res.out)
    hard = len(hard_words("01", 20))  # the hard words check adds at each random length
    assert report["mismatches"] == 0 and report["checked_strings"] == 126 + 20 + hard


@pytest.mark.parametrize("bad", [-1, 0, True, 2.5, "big"])
def test_library_refuses_bad_chunk_sizes(files, bad) -> None:
    from hardsoft.check import check_formula

    model = load_model(files["parity"])
    with pytest.raises(HardsoftError, match="chunk_size"):
        model.run_words(["0110"], chunk_size=bad)
    with pytest.raises(HardsoftError, match="chunk_size"):
        check_formula(model, PARITY, exhaustive_max_n=2, random_n=[], chunk_size=bad)


def test_run_chunk_size_matches_unchunked(files) -> None:
    word = "0110100111010"
    full = run_cli("run", str(files["parity"]), "-i", word, "--chunk-size", "0", "--json")
    streamed = run_cli("run", str(files["parity"]), "-i", word, "--chunk-size", "3", "--json")
    a = [row[0] for row in json.loads(full.out)["results"][0]["outputs"]]
    b = [row[0] for row in json.loads(streamed.out)["results"][0]["outputs"]]
    assert np.allclose(a, b, atol=1e-9)
    assert [v > 0.5 for v in a] == [word[: k + 1].count("1") % 2 == 1 for k in range(len(word))]


# ---------------------------------------------------------------- exact integers


def exact_values(coef: int, const: int, op: str, word: str) -> list[int]:
    """coef * #<['1'] OP const at every position, in Python integers."""
    ops = {"<": int.__lt__, ">": int.__gt__, "=": int.__eq__}
    out, count = [], 0
    for ch in word:
        count += ch == "1"
        out.append(int(ops[op](coef * count, const)))
    return out


@pytest.mark.parametrize(
    "formula, expected",
    [
        ("#<['1'] < 9223372036854775808", [1, 1, 1, 1]),
        ("#<['1'] < " + "1" + "0" * 40, [1, 1, 1, 1]),
        ("#<['1'] > -" + "1" + "0" * 40, [1, 1, 1, 1]),
        ("9000000000000000000 * #<['1'] > 1", [0, 1, 1, 1]),
        ("9000000000000000000 * #<['1'] < 18000000000000000001", [1, 1, 1, 0]),
        ("MOD(100000000000000000000, 1)(#<['1'] + 99999999999999999999)", [0, 0, 1, 0]),
    ],
)
def test_eval_is_exact_beyond_int64(formula, expected) -> None:
    res = run_cli("eval", formula, "--input", "0111", "--json")
    assert res.rc == 0, res.err
    assert json.loads(res.out)["values"] == expected


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    coef=st.integers(-(2**80), 2**80),
    const=st.integers(-(2**90), 2**90),
    op=st.sampled_from(["<", ">", "="]),
    word=st.text("01", min_size=1, max_size=12),
)
def test_evaluator_matches_python_integers(coef, const, op, word) -> None:
    from hardsoft.logic import parse
    from hardsoft.logic.semantics import values

    formula = parse(f"{coef} * #<['1'] {op} {const}")
    assert values(formula, word).astype(int).tolist() == exact_values(coef, const, op, word)


@pytest.mark.parametrize(
    "formula",
    ["#<['1'] < 9223372036854775808", "9000000000000000000 * #<['1'] > 1", "#<['1'] < 2**52"],
)
def test_compile_refuses_what_float64_cannot_hold(formula, tmp_path) -> None:
    formula = formula.replace("2**52", str(2**52))
    out = tmp_path / "big.safetensors"
    one_error_line(run_cli("compile", formula, "--alphabet", "01", "-o", str(out)), "float64")
    assert not out.exists()


def test_compile_large_but_exact_constants_checks_clean(tmp_path) -> None:
    formula = f"{2**30} * #<['1'] - {2**30} * #<['0'] > 0"
    out = tmp_path / "c.safetensors"
    assert run_cli("compile", formula, "--alphabet", "01", "-o", str(out)).rc == 0
    res = run_cli("check", str(out), "-f", formula, "--exhaustive-max-n", "8", "--random-n",
                  "100", "--samples", "20", "--json")  # fmt: skip
    assert res.rc == 0 and json.loads(res.out)["mismatches"] == 0, res.err


def test_absurd_integer_literal_is_one_line() -> None:
    one_error_line(run_cli("eval", "#<['1'] < " + "9" * 5000, "-i", "01"), "digits")


# ---------------------------------------------------------------- seeds


@pytest.mark.parametrize("seed", ["-1", str(2**64), str(-(2**70))])
@pytest.mark.parametrize(
    "command",
    [
        ["language", "sample", "parity-even", "--n", "4"],
        ["restrict", "{hard}", "--n", "8", "--language", "parity-even"],
        ["sensitivity", "{soft}", "--lengths", "4,8"],
        ["check", "{parity}", "-f", PARITY],
        ["train", "-o", "{dir}/run", "--steps", "1"],
        ["random-model", "-o", "{dir}/seeded.safetensors"],
        ["reproduce", "--out", "{dir}/rep", "--only", "softmax-to-hardmax"],
    ],
)
def test_seeds_outside_uint64_are_refused(files, command, seed) -> None:
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in command]
    one_error_line(run_cli(*args, "--seed", seed), "--seed")


def test_largest_seed_is_accepted(files) -> None:
    res = run_cli("language", "sample", "parity-even", "--n", "4", "--seed", str(2**64 - 1))
    assert res.rc == 0, res.err
    out = files["dir"] / "maxseed.safetensors"
    assert run_cli("random-model", "-o", str(out), "--seed", str(2**64 - 1)).rc == 0


# ---------------------------------------------------------------- files and paths


def test_non_utf8_input_file_names_the_line(files) -> None:
    path = files["dir"] / "latin1.txt"
    path.write_bytes(b"0101\n11\n0\xe91\n")
    res = run_cli("run", str(files["hard"]), "--input-file", str(path))
    one_error_line(res, "not UTF-8", "line 3", "column 2")


def test_bad_symbol_in_input_file_names_the_line(files) -> None:
    path = files["dir"] / "symbols.txt"
    path.write_text("0101\n\n11x1\n")
    one_error_line(run_cli("run", str(files["hard"]), "--input-file", str(path)), "line 3", "'x'")


def test_folder_is_not_called_a_missing_file(files) -> None:
    res = run_cli("run", str(files["dir"]), "-i", "01")
    one_error_line(res, "is a folder")
    assert "no such file" not in res.err
    res = run_cli("run", str(files["hard"]), "--input-file", str(files["dir"]))
    one_error_line(res, "is a folder")


@pytest.mark.parametrize("target", ["{dir}", "", "{hard}/x.safetensors", "/dev/null"])
@pytest.mark.parametrize(
    "command",
    [
        ["random-model"],
        ["compile", PARITY, "--alphabet", "01"],
        ["program", "dyck", "--k", "1"],
    ],
)
def test_bad_output_targets_are_refused_and_nothing_changes(files, command, target) -> None:
    before = {p: p.read_bytes() for p in files["dir"].glob("*.safetensors")}
    out = target.format(dir=files["dir"], hard=files["hard"])
    one_error_line(run_cli(*command, "-o", out))
    assert {p: p.read_bytes() for p in files["dir"].glob("*.safetensors")} == before


def test_train_output_that_is_a_file_is_refused(files) -> None:
    one_error_line(run_cli("train", "-o", str(files["hard"]), "--steps", "1"), "not a folder")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize(
    "command",
    [
        ["run", "{hard}", "-i", "01"],
        ["check", "{parity}", "-f", PARITY],
        ["sensitivity", "{soft}", "--lengths", "4,8"],
        ["train", "-o", "{dir}/cuda-run", "--steps", "1"],
        ["reproduce", "--out", "{dir}/rep", "--only", "softmax-to-hardmax"],
    ],
)
def test_cuda_without_a_gpu_is_one_line(files, command) -> None:
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in command]
    one_error_line(run_cli(*args, "--device", "cuda"), "no CUDA device")
    with pytest.raises(HardsoftError, match="no CUDA device"):
        load_model(files["hard"], device="cuda")


@pytest.mark.parametrize("lr", ["nan", "inf", "-inf", "0", "-1"])
def test_learning_rate_must_be_finite_and_positive(files, lr) -> None:
    one_error_line(run_cli("train", "-o", str(files["dir"] / "lr"), "--lr", lr), "--lr")


def test_train_config_nan_refused_from_python(tmp_path) -> None:
    from hardsoft.learn import TrainConfig, train

    with pytest.raises(HardsoftError, match="lr"):
        train(TrainConfig(lr=float("nan"), steps=1), tmp_path / "r", show_progress=False)


# ---------------------------------------------------------------- model metadata


def write_model_with_spec(path: Path, source: Path, spec: object, meta: object = None) -> None:
    from safetensors import safe_open

    with safe_open(str(source), framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    metadata = {"format": FORMAT, "spec": json.dumps(spec), "meta": json.dumps(meta or {})}
    save_file(tensors, str(path), metadata=metadata)


def _set_head(key, value):
    def change(spec):
        spec["layers"][0]["heads"][0][key] = value
        return spec

    return change


@pytest.mark.parametrize(
    "change, needle",
    [
        (_set_head("tau", 5), "temperature"),
        (_set_head("tau", ["1/n"]), "temperature"),
        (_set_head("d_head", "8"), "d_head"),
        (_set_head("d_head", 8.5), "d_head"),
        (_set_head("scale", "yes"), "scale"),
        (_set_head("weighting", None), "weighting"),
        (_set_head("tau", "-" * 1000 + "1"), "temperature"),
        (_set_head("tau", "-" * 999 + "1"), "nested"),
        (_set_head("tau", "(-8)**(1/3)"), "undefined"),
        (_set_head("tau", "exp(-n)"), "must be positive"),
        (lambda s: [s], "spec is a list, not an object"),
        (lambda s: None, "spec is null, not an object"),
        (lambda s: {**s, "d_model": "16"}, "d_model"),
        (lambda s: {**s, "alphabet": "01"}, "alphabet"),
        (lambda s: {**s, "layers": {"0": 1}}, "layers"),
        (lambda s: {**s, "layers": [None]}, "layer"),
        (lambda s: {**s, "ln_eps": float("nan")}, "ln_eps"),
        (lambda s: {**s, "position_features": [1]}, "position feature"),
        (lambda s: {**s, "extra": [1]}, "extra"),
    ],
)
def test_model_metadata_with_wrong_types_is_one_line(files, tmp_path, change, needle) -> None:
    spec = json.loads(json.dumps(load_model(files["soft"]).spec.to_dict()))
    spec["layers"][0]["heads"][0]["tau"] = "1/n"
    path = tmp_path / "bad.safetensors"
    write_model_with_spec(path, files["soft"], change(spec))
    one_error_line(run_cli("run", str(path), "-i", "0110"), needle)
    with pytest.raises(HardsoftError, match="bad.safetensors"):
        load_model(path)


@pytest.mark.parametrize("meta", [[1], "x", None])
def test_meta_that_is_not_an_object_is_one_line(files, tmp_path, meta) -> None:
    from safetensors import safe_open

    with safe_open(str(files["soft"]), framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
        md = dict(f.metadata())
    md["meta"] = json.dumps(meta)
    path = tmp_path / "meta.safetensors"
    save_file(tensors, str(path), metadata=md)
    one_error_line(run_cli("run", str(path), "-i", "01"), "meta")


def test_non_finite_weights_are_refused(files, tmp_path) -> None:
    model = load_model(files["soft"])
    with torch.no_grad():
        model.W_U[0, 0] = float("nan")
    path = tmp_path / "nan.safetensors"
    save_model(model, path)
    one_error_line(run_cli("run", str(path), "-i", "01"), "non-finite")


def test_training_run_whose_config_is_not_an_object(files, tmp_path) -> None:
    res = run_cli("train", "-o", str(tmp_path / "run"), "--steps", "1", "--max-n", "4", "--json")
    assert res.rc == 0, res.err
    for bad in ("[1, 2]", "null", '"x"', '{"steps": "many"}', '{"arch": 3}', "{"):
        (tmp_path / "run" / "config.json").write_text(bad)
        one_error_line(run_cli("evaluate", str(tmp_path / "run"), "--lengths", "2,4"))


# ---------------------------------------------------------------- accepted but unusable


@pytest.mark.parametrize(
    "option",
    [
        ["--weight-scale", "nan"],
        ["--weight-scale", "inf"],
        ["--weight-scale", "-1"],
        ["--tau", "-1"],
        ["--tau", "(-8)**(1/3)"],
        ["--tau", "0"],
        ["--tau", "1/(n-2)"],
        ["--tau", "exp(n)"],
        ["--tau", "log(n)"],
    ],
)
def test_unusable_random_models_are_refused_at_creation(tmp_path, option) -> None:
    out = tmp_path / "x.safetensors"
    one_error_line(run_cli("random-model", "-o", str(out), *option))
    assert not out.exists()


def test_tau_checked_on_a_grid_and_valid_ones_pass() -> None:
    for good in ("1", "1/(4*n)", "1/(n*log(n+1))", "n**-0.5", "2**-3", "(-2)**2"):
        check_tau(good)
    with pytest.raises(HardsoftError, match="undefined at n = 2"):
        check_tau("1/(n-2)**2")
    assert eval_tau("(-2)**3 + 9", 5) == 1.0
    with pytest.raises(HardsoftError):
        HeadSpec(tau="(-8)**(1/3)").validate()


# ---------------------------------------------------------------- printing


def test_rich_markup_in_user_text_is_printed_as_is(tmp_path) -> None:
    out = tmp_path / "m[red].safetensors"
    res = run_cli("random-model", "-o", str(out), "--alphabet", "[/]", "--seed", "2")
    assert res.rc == 0, res.err
    assert "m[red].safetensors" in res.out.replace("\n", "")  # rich may wrap a long path
    res = run_cli("run", str(out), "-i", "[/][")
    assert res.rc == 0 and "'[/]['" in res.out, res.err
    res = run_cli("eval", "'[' & F '/'", "-i", "[/]", "--alphabet", "[/]")
    assert res.rc == 0 and "input    [ / ]" in res.out, res.err
    res = run_cli("language", "member", "dyck2", "-i", "[/]")
    assert res.rc in (0, 2) and "Traceback" not in res.err


# ---------------------------------------------------------------- smaller


def test_files_follow_the_umask(tmp_path, files) -> None:
    old = os.umask(0o027)
    try:
        path = tmp_path / "m.safetensors"
        save_model(load_model(files["hard"]), path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
    finally:
        os.umask(old)
    path2 = tmp_path / "m2.safetensors"
    save_model(load_model(files["hard"]), path2)
    assert stat.S_IMODE(path2.stat().st_mode) == 0o666 & ~old


def test_check_accepts_named_formulas_like_eval(files) -> None:
    res = run_cli("check", str(files["parity"]), "-f", "@parity-mod", "--random-n", "", "--json")
    assert res.rc == 0, res.err
    assert json.loads(res.out)["mismatches"] == 0
    one_error_line(run_cli("check", str(files["parity"]), "-f", "@no-such-formula"), "no-such")


@pytest.mark.parametrize(
    "command",
    [
        ["compile", PARITY, "--alphabet", "011"],
        ["random-model", "-o", "{dir}/rep.safetensors", "--alphabet", "011"],
        ["eval", PARITY, "-i", "01", "--alphabet", "011"],
    ],
)
def test_repeated_alphabet_letters_are_refused_everywhere(files, command) -> None:
    args = [a.format(dir=files["dir"]) for a in command]
    one_error_line(run_cli(*args), "'011' repeats the symbol '1'")


def test_compile_library_refuses_repeats_too() -> None:
    from hardsoft.compile import compile_formula

    with pytest.raises(HardsoftError, match="repeats the symbol"):
        compile_formula(PARITY, "011")


# ---------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    "command",
    [
        ["check", "{parity}", "-f", PARITY, "--random-n", "100000000"],
        ["check", "{parity}", "-f", PARITY, "--exhaustive-max-n", "100000000"],
        ["random-model", "-o", "{dir}/big.safetensors", "--d-model", "200000", "--layers", "64"],
        ["random-model", "-o", "{dir}/big.safetensors", "--heads", str(10**12)],
        ["random-model", "-o", "{dir}/big.safetensors", "--features", "learned:10000000000"],
        ["sensitivity", "{soft}", "--lengths", "100000000"],
        ["sensitivity", "{soft}", "--lengths", "2", "--flips", str(2**63)],  # fuzz-found
        ["train", "-o", "{dir}/big-run", "--heads", str(2**63)],
        ["restrict", "{hard}", "--n", str(10**9), "--language", "parity-even"],
        ["train", "-o", "{dir}/big-run", "--max-n", str(10**7), "--steps", "1"],
        ["language", "sample", "parity-even", "--n", str(10**12)],
        ["language", "sample", "dyck2-process", "--n", "4", "--p", "0.3", "--min-length", "10**9"],
    ],
)
def test_sizes_that_cannot_fit_are_refused_before_allocation(files, command) -> None:
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in command]
    args = [str(10**9) if a == "10**9" else a for a in args]
    # every case is far beyond any machine; the cap only keeps a wrong estimate from
    # allocating gigabytes on the test machine
    one_error_line(run_cli(*args, max_memory="2G"), "needs about", "of memory")
    assert not (files["dir"] / "big.safetensors").exists()
    assert not (files["dir"] / "big-run").exists()


def test_a_one_megabyte_line_that_cannot_fit(files) -> None:
    path = files["dir"] / "long.txt"
    path.write_text("01" * 500_000 + "\n")
    res = run_cli(
        "run", str(files["hard"]), "--input-file", str(path), "--chunk-size", "0", max_memory="2G"
    )
    one_error_line(res, "length 1000000", "needs about")


def test_memory_limit_from_the_environment(files) -> None:
    res = run_cli("run", str(files["soft"]), "-i", "01" * 3000, "--chunk-size", "0")
    assert res.rc == 0, res.err
    res = run_cli(
        "run", str(files["soft"]), "-i", "01" * 3000, "--chunk-size", "0", max_memory="64M"
    )
    one_error_line(res, "needs about", "available")


@pytest.mark.parametrize("layer_norm", ["none", "pre", "post"])
@pytest.mark.parametrize("features", [(), ("1", "i/n"), ("learned:7", "sinusoidal:4")])
def test_parameter_estimate_is_exact(layer_norm, features) -> None:
    spec = ModelSpec(
        alphabet=("a", "b", "c"),
        d_model=6,
        layers=(
            LayerSpec(heads=(HeadSpec(d_head=2), HeadSpec(d_head=3, d_value=1)), d_ff=5),
            LayerSpec(heads=(), d_ff=0),
        ),
        position_features=features,
        layer_norm=layer_norm,
        d_out=2,
    )
    from hardsoft.model import Transformer

    assert memory.parameter_count(spec) == Transformer(spec).parameter_count()


def test_forward_estimate_bounds_the_real_peak() -> None:
    """The estimate is meant as an upper-bound-minded count: at least the activations that a
    traced forward pass keeps."""
    model = random_model(layers=2, heads=2, d_model=8, dtype=torch.float64)
    tokens = torch.zeros(3, 40, dtype=torch.long)
    trace = model(tokens, trace=True, chunk_size=None).trace
    kept = sum(t.numel() for t in trace.values())
    assert memory.forward_elements(model.spec, 3, 40, None, trace=True) >= kept


# ---------------------------------------------------------------- reproduce


@pytest.fixture
def toy_experiment():
    from hardsoft.experiments import _REGISTRY, Context, Result, register

    calls: list[int] = []

    @register("zz-rel-toy", title="Toy", version="1", order=10_000)
    def toy(ctx: Context) -> Result:
        calls.append(ctx.seed)
        return Result(metrics={"seed": ctx.seed})

    yield calls
    _REGISTRY.pop("zz-rel-toy")


def test_reproduce_reruns_when_the_seed_changes(tmp_path, toy_experiment) -> None:
    out = str(tmp_path / "rep")
    for seed, expect_calls in (("0", [0]), ("0", [0]), ("7", [0, 7]), ("7", [0, 7])):
        res = run_cli("reproduce", "--out", out, "--only", "zz-rel-toy", "--seed", seed, "--json")
        assert res.rc == 0, res.err
        assert toy_experiment == expect_calls
    con = sqlite3.connect(tmp_path / "rep" / "results.sqlite")
    (text,) = con.execute("SELECT record FROM results WHERE name = 'zz-rel-toy'").fetchone()
    assert json.loads(text)["config"]["seed"] == 7 and json.loads(text)["metrics"]["seed"] == 7


def test_store_is_current_compares_seed_and_device(tmp_path) -> None:
    from hardsoft.report import ResultStore

    store = ResultStore(tmp_path / "r.sqlite")
    record = {
        "name": "x",
        "mode": "quick",
        "version": "1",
        "package_version": "p",
        "created_at": "now",
        "config": {"seed": 3, "device": "cpu"},
    }
    store.put(record)
    assert store.is_current("x", "quick", "1", "p", seed=3, device="cpu")
    assert not store.is_current("x", "quick", "1", "p", seed=4, device="cpu")
    assert not store.is_current("x", "quick", "1", "p", seed=3, device="cuda")
    assert not store.is_current("x", "quick", "2", "p", seed=3, device="cpu")
    assert not store.is_current("x", "full", "1", "p", seed=3, device="cpu")
    store.close()


def test_reproduce_refuses_a_folder_another_run_holds(tmp_path, toy_experiment) -> None:
    from hardsoft.report.store import store_lock

    out = tmp_path / "rep"
    with store_lock(out):
        res = run_cli("reproduce", "--out", str(out), "--only", "zz-rel-toy")
        one_error_line(res, "another hardsoft reproduce", f"pid {os.getpid()}")
    assert toy_experiment == []
    assert run_cli("reproduce", "--out", str(out), "--only", "zz-rel-toy").rc == 0
    assert toy_experiment == [0]


def test_lock_excludes_another_process(tmp_path) -> None:
    """flock excludes other processes, not only other calls in this one."""
    import subprocess
    import sys

    from hardsoft.report.store import store_lock

    code = (
        "import sys\nfrom hardsoft.report.store import store_lock\n"
        "from hardsoft.errors import HardsoftError\n"
        f"try:\n    with store_lock({str(tmp_path)!r}): print('got it')\n"
        "except HardsoftError as e: print(e)\n"
    )
    with store_lock(tmp_path):
        busy = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    free = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "another hardsoft reproduce" in busy.stdout, busy.stderr
    assert free.stdout.strip() == "got it", free.stderr


# ---------------------------------------------------------------- exit codes


def test_exit_code_one_is_a_negative_result(files) -> None:
    res = run_cli("check", str(files["hard"]), "-f", PARITY, "--random-n", "", "--json")
    assert res.rc == 1 and json.loads(res.out)["mismatches"] > 0, res.err


def test_usage_errors_exit_two(files) -> None:
    assert run_cli().rc == 2
    one_error_line(run_cli("no-such-command"), "No such command")
    one_error_line(run_cli("run", str(files["hard"]), "--bogus"), "No such option")
    one_error_line(run_cli("language"), "give a command")
    from hardsoft.cli import _bare_group

    # a group that runs by itself is not a missing command (`hardsoft atlas` builds the atlas)
    assert _bare_group(["program"]) and not _bare_group(["atlas"])
    assert not _bare_group(["language", "list"]) and not _bare_group(["run"])


def test_internal_errors_are_one_line_with_exit_three(monkeypatch, files) -> None:
    import hardsoft.model.transformer as tr

    def broken(*args, **kwargs):
        raise ValueError("a bug\nover two lines")

    monkeypatch.setattr(tr.Transformer, "run_words", broken)
    res = run_cli("run", str(files["hard"]), "-i", "01", debug=False)
    assert res.rc == 3
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: internal error"), res.err
    assert "ValueError: a bug over two lines" in lines[0]
    with pytest.raises(ValueError):
        run_cli("run", str(files["hard"]), "-i", "01")


def test_docs_list_every_exit_code() -> None:
    from hardsoft import cli

    text = (Path(__file__).parents[1] / "docs" / "errors.md").read_text()
    for code in (cli.EXIT_OK, cli.EXIT_NEGATIVE, cli.EXIT_USAGE, cli.EXIT_INTERNAL):
        assert f"| {code} |" in text
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "docs/errors.md" in readme


# ---------------------------------------------------------------- the validators


@pytest.mark.parametrize(
    "call",
    [
        lambda: validate.seed(-1),
        lambda: validate.seed(2**64),
        lambda: validate.seed(1.0),
        lambda: validate.positive_int(0, "x"),
        lambda: validate.positive_int(True, "x"),
        lambda: validate.real(math.nan, "x"),
        lambda: validate.real("1e400", "x"),
        lambda: validate.probability(1.5, "p"),
        lambda: validate.probability(0.0, "p", open_interval=True),
        lambda: validate.chunk_size(0),
        lambda: validate.chunk_size("never"),
        lambda: validate.device("tpu"),
        lambda: validate.device("cuda:x"),
        lambda: validate.output_file(""),
        lambda: validate.output_dir(""),
        lambda: validate.input_file(""),
        lambda: validate.alphabet(""),
        lambda: validate.alphabet(["ab"]),
    ],
)
def test_validators_refuse_with_a_hardsoft_error(call) -> None:
    with pytest.raises(HardsoftError):
        call()


def test_validators_pass_good_values_through(tmp_path) -> None:
    assert validate.seed(np.uint64(2**64 - 1)) == 2**64 - 1
    assert validate.chunk_size(None) is None and validate.chunk_size("auto") == "auto"
    assert validate.real("0.5", "x", lo=0, hi=1) == 0.5
    assert validate.device("cpu") == "cpu"
    assert validate.output_file(tmp_path / "new" / "deeper" / "f.bin") == (
        tmp_path / "new" / "deeper" / "f.bin"
    )
    assert validate.alphabet("ab") == ("a", "b")

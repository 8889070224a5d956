"""Named outputs of the compiler: a mapping of names to formulas compiles into one model whose
output coordinate k is output k's value, checked against the logic evaluator per output."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from hardsoft.compile import compile_formula
from hardsoft.errors import HardsoftError
from hardsoft.logic import evaluate, parse
from hardsoft.model import ModelSpec, load_model, read_metadata, save_model

OUTPUTS = {
    "prev1": "Y '1'",
    "since": "'0' S '1'",
    "odd": "MOD(2, 1)(#<['1'])",
    "majority": "#<['1'] > #<['0']",
    "const": "true",
    "again": "Y '1'",
}


def all_ids(k: int, n: int) -> np.ndarray:
    return np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)


@pytest.mark.parametrize("target", ["hard", "soft-temperature", "soft-pe"])
def test_each_output_matches_its_formula(target: str) -> None:
    model = compile_formula(OUTPUTS, "01", target)
    assert model.spec.output_names == tuple(OUTPUTS)
    assert model.spec.d_out == len(OUTPUTS)
    for n in range(1, 8):
        ids = all_ids(2, n)
        with torch.no_grad():
            out = model(torch.from_numpy(ids)).outputs.numpy()
        for k, text in enumerate(OUTPUTS.values()):
            ref = evaluate(parse(text, alphabet="01"), ids, ["0", "1"]).astype(np.float64)
            assert np.abs(out[..., k] - ref).max() < 1e-9, (target, text, n)


def test_shared_subformulas_compiled_once() -> None:
    """Two outputs that share Y '1' need no more heads than the two alone share."""
    both = compile_formula({"a": "Y '1'", "b": "Y '1' & '0'"}, "01", "soft-temperature")
    one = compile_formula("Y '1' & '0'", "01", "soft-temperature")
    assert both.meta["certificate"]["heads_total"] == one.meta["certificate"]["heads_total"]
    again = compile_formula({"a": "Y '1'", "b": "Y '1'"}, "01", "hard")
    assert again.meta["certificate"]["heads_total"] == 1


def test_certificate_lists_outputs_and_saved_spec_keeps_names(tmp_path) -> None:
    model = compile_formula({"x": "Y '1'", "y": "P '0'"}, "01", "hard")
    cert = model.meta["certificate"]
    assert [o["name"] for o in cert["outputs"]] == ["x", "y"]
    assert [o["output_coordinate"] for o in cert["outputs"]] == [0, 1]
    assert [o["formula"] for o in cert["outputs"]] == ["Y '1'", "P '0'"]
    path = tmp_path / "m.safetensors"
    save_model(model, path)
    assert read_metadata(path)["spec"]["output_names"] == ["x", "y"]
    assert load_model(path).spec.output_names == ("x", "y")


def test_single_formula_is_unnamed() -> None:
    model = compile_formula("Y '1'", "01", "hard")
    assert model.spec.output_names == () and model.spec.d_out == 1
    assert model.meta["certificate"]["outputs"][0]["name"] == ""
    assert model.meta["formula"] == "Y '1'"


@pytest.mark.parametrize(
    "outputs,match",
    [
        ({}, "no outputs"),
        ({"": "'1'"}, "empty"),
        ({" ": "'1'"}, "empty"),
        ([("a", "'1'"), ("a", "'0'")], "twice"),
        ({"a": 3}, "not a formula"),
        ({"a": "'2'"}, "alphabet"),
    ],
)
def test_bad_outputs_are_one_line_errors(outputs, match: str) -> None:
    with pytest.raises(HardsoftError, match=match):
        compile_formula(outputs, "01", "hard")


def test_spec_validates_output_names() -> None:
    with pytest.raises(HardsoftError, match="twice"):
        ModelSpec(alphabet=("0",), d_model=1, d_out=2, output_names=("a", "a")).validate()
    with pytest.raises(HardsoftError, match="2 output names"):
        ModelSpec(alphabet=("0",), d_model=1, d_out=1, output_names=("a", "b")).validate()
    spec = ModelSpec(alphabet=("0",), d_model=1, d_out=2, output_names=("a", "b"))
    assert ModelSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    with pytest.raises(HardsoftError, match="output_names"):
        ModelSpec.from_dict({**spec.to_dict(), "output_names": "ab"})


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from hardsoft.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


def test_cli_outputs(tmp_path) -> None:
    path = tmp_path / "m.safetensors"
    res = _cli(
        "compile",
        "--output",
        "prev=Y '1'",
        "--output",
        "odd=@parity-mod",
        "--alphabet",
        "01",
        "-o",
        str(path),
        "--json",
    )
    assert res.returncode == 0, res.stderr
    cert = json.loads(res.stdout)["certificate"]
    assert [o["name"] for o in cert["outputs"]] == ["prev", "odd"]
    assert load_model(path).spec.output_names == ("prev", "odd")
    for bad, match in [
        (["--output", "=Y '1'"], "empty"),
        (["--output", "a=Y '1'", "--output", "a='0'"], "twice"),
        (["--output", "noequals"], "NAME=FORMULA"),
        (["Y '1'", "--output", "a='0'"], "either"),
    ]:
        res = _cli("compile", *bad, "--alphabet", "01")
        assert res.returncode == 2
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and match in lines[0], res.stderr

"""``hardsoft decompile``: formulas from unique-hard transformers, checked here against the
model's own forward pass and against source formulas with the logic evaluator (both
independent of the class propagation)."""

from __future__ import annotations

import functools
import json
import re
import sys
from itertools import product
from pathlib import Path

import numpy as np
import pytest
import torch

from hardsoft.compile import compile_formula
from hardsoft.decompile import decompile, propagate
from hardsoft.errors import HardsoftError
from hardsoft.logic import evaluate, parse
from hardsoft.logic.syntax import size, to_text
from hardsoft.model import random_model, save_model
from hardsoft.model.features import parse_feature

WEIGHTINGS = ("leftmost", "rightmost")
MASKS = ("none", "future", "past", "strict-future", "strict-past")
DOC = Path(__file__).resolve().parents[1] / "docs" / "decompile.md"


def _words(alphabet: str, max_n: int, count: int, random_max_n: int, seed: int) -> list[str]:
    words = ["".join(t) for n in range(1, max_n + 1) for t in product(alphabet, repeat=n)]
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, random_max_n + 1))
        words.append("".join(rng.choice(list(alphabet), size=n)))
    return words


def assert_agrees(model, formulas, words: list[str]) -> int:
    """Every formula (logic evaluator) equals the model's output coordinate > 1/2 at every
    position of every word; returns the number of positions checked."""
    outs = model.run_words(words)
    checked = 0
    by_len: dict[int, list[int]] = {}
    for idx, w in enumerate(words):
        by_len.setdefault(len(w), []).append(idx)
    for idxs in by_len.values():
        group = [words[i] for i in idxs]
        y = np.stack([outs[i] for i in idxs])
        for k, f in enumerate(formulas):
            got = evaluate(f, group, model.spec.alphabet)
            bad = np.argwhere(got != (y[:, :, k] > 0.5))
            assert not len(bad), (to_text(f), group[bad[0][0]], bad[0][1])
            checked += got.size
    return checked


def _random(weighting: str, mask: str, layers: int, heads: int, seed: int, features=("1",)):
    return random_model(
        layers=layers,
        heads=heads,
        d_model=8,
        weighting=weighting,
        mask=mask,
        position_features=features,
        seed=seed,
    )


@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("layers", [1, 2])
def test_random_unique_hard_models_agree_at_every_position(
    weighting: str, mask: str, layers: int
) -> None:
    model = _random(weighting, mask, layers, 2, seed=7 * layers + len(mask))
    d = decompile(model, verify_n=4, random_words=10, random_max_n=50)
    assert d.verified["mismatches"] == 0 and d.verified["positions"] > 0
    assert assert_agrees(model, d.formulas, _words("01", 7, 20, 200, seed=layers)) > 2000


def test_three_layers_and_float32_model() -> None:
    model = _random("rightmost", "future", 3, 1, seed=3)
    assert model.dtype == torch.float32
    d = decompile(model, verify_n=0)
    assert len(d.classes) == 4
    assert_agrees(model, d.formulas, _words("01", 8, 20, 300, seed=1))


@pytest.mark.slow
@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_models_full_grid(weighting: str, mask: str, layers: int, seed: int) -> None:
    heads = 1 if layers == 3 else 2
    model = _random(weighting, mask, layers, heads, seed=seed)
    d = decompile(model, verify_n=0)
    assert_agrees(model, d.formulas, _words("01", 9, 100, 500, seed=seed))


@pytest.mark.parametrize("layer_norm", ["pre", "post"])
def test_layer_norm_models(layer_norm: str) -> None:
    model = random_model(
        layers=2,
        heads=2,
        d_model=8,
        weighting="leftmost",
        mask="strict-past",
        position_features=("1",),
        layer_norm=layer_norm,
        seed=5,
    )
    d = decompile(model, verify_n=0, random_words=0)
    assert_agrees(model, d.formulas, _words("01", 7, 20, 200, seed=6))


FEATURE_CASES = [
    (("1", "[i=1]", "[i=n]"), "leftmost", "none", 2),
    (("1", "(-1)^i"), "rightmost", "strict-future", 2),
    (("1", "[i mod 3 = 1]", "[i=1]"), "leftmost", "past", 2),
    (("1", "[i=1]", "[i=n]", "(-1)^i"), "rightmost", "future", 1),
]


@pytest.mark.parametrize("features,weighting,mask,heads", FEATURE_CASES)
def test_finite_position_features(features, weighting: str, mask: str, heads: int) -> None:
    model = _random(weighting, mask, 1, heads, seed=11, features=features)
    d = decompile(model, verify_n=0, random_words=0)
    assert_agrees(model, d.formulas, _words("01", 8, 30, 200, seed=2))


@pytest.mark.slow
def test_finite_position_features_two_layers() -> None:
    model = _random("rightmost", "strict-future", 2, 1, seed=11, features=("1", "(-1)^i"))
    d = decompile(model, verify_n=0, random_words=0)
    assert_agrees(model, d.formulas, _words("01", 9, 100, 500, seed=2))


def test_feature_cases_select_their_values() -> None:
    """Each declared (value, formula) case holds exactly where the feature takes the value."""
    for name in ("1", "[i=1]", "[i=n]", "(-1)^i", "[i mod 3 = 2]", "[i=1]*(-1)^i"):
        feature = parse_feature(name)
        assert feature.cases is not None
        for n in range(1, 13):
            values = feature.compute(n).numpy()[:, 0]
            word = ["a" * n]
            covered = np.zeros(n, dtype=bool)
            for value, text in feature.cases:
                where = evaluate(parse(text), word, "a")[0]
                assert (
                    np.array_equal(where, values == value)
                    or not where.any()
                    or (np.all(values[where] == value))
                ), (name, n, text)
                covered |= where
            assert covered.all(), (name, n)
    for name in ("i", "1/i", "i/n", "(i/n)^2", "n", "learned:4", "sinusoidal:2"):
        assert parse_feature(name).cases is None


ROUND_TRIP = [
    ("'a' S 'b'", "abc"),
    ("'a' U 'b'", "abc"),
    ("'c' & Y ('b' & Y 'a')", "abc"),
    ("E ('a' & X ('b' & X 'c'))", "abc"),
    ("'1' & !P '0'", "01"),
    ("('a' | X 'b') S ('c' & Y 'a')", "abc"),
    ("'a' & (X 'b' | Y 'c')", "abc"),
]


@functools.cache
def _round_trip(text: str, alphabet: str, masks: str):
    """The compiled model of ``text`` and its decompilation (shared by the tests)."""
    model = compile_formula(text, alphabet=alphabet, target="hard", masks=masks)
    return model, decompile(model, verify_n=0, random_words=0)


@pytest.mark.parametrize("masks", ["strict", "nonstrict"])
@pytest.mark.parametrize("text,alphabet", ROUND_TRIP)
def test_compile_decompile_round_trip(text: str, alphabet: str, masks: str) -> None:
    f = parse(text, alphabet=alphabet)
    g = _round_trip(text, alphabet, masks)[1].formulas[0]
    words = _words(alphabet, 6, 40, 300, seed=5)
    for n in sorted({len(w) for w in words}):
        group = [w for w in words if len(w) == n]
        assert np.array_equal(evaluate(f, group, alphabet), evaluate(g, group, alphabet)), (
            to_text(g),
            n,
        )
    assert size(g) <= 4 * size(f), to_text(g)


def test_named_outputs_and_readout() -> None:
    model = compile_formula(
        {"a_since_b": "'a' S 'b'", "prev_a": "Y 'a'"}, alphabet="ab", target="hard"
    )
    d = decompile(model, verify_n=6, random_words=10)
    assert [o.name for o in d.outputs] == ["a_since_b", "prev_a"]
    assert d.verified["mismatches"] == 0
    assert_agrees(model, d.formulas, _words("ab", 7, 10, 100, seed=3))


@pytest.mark.floatcmp
def test_class_table_scores_come_from_the_model() -> None:
    model = _random("leftmost", "future", 2, 2, seed=4)
    table = propagate(model)
    layer = table.layers[1]
    block = table.model.blocks[1]
    x = block.attn_input(torch.from_numpy(layer.vectors))
    for h, head in enumerate(block.heads):
        q, k = head.query(x), head.key(x)
        assert np.array_equal(layer.heads[h].scores, head.scores(q, k, 1).detach().numpy())
    assert table.outputs.shape == (len(table.layers[-1]), 1)


def test_harden_describes_the_hardened_model() -> None:
    from hardsoft.convert import harden

    soft = _random("softmax", "future", 1, 2, seed=9)
    with pytest.raises(HardsoftError, match="softmax head"):
        decompile(soft)
    d = decompile(soft, harden=True, verify_n=0)
    assert d.hardened and "hardened" in d.certificate
    assert_agrees(harden(soft, "leftmost"), d.formulas, _words("01", 7, 10, 100, seed=4))


@pytest.mark.parametrize(
    "make,needle",
    [
        (lambda: _random("softmax", "none", 1, 1, 0), "softmax head"),
        (lambda: _random("leftmost", "none", 1, 1, 0, features=("1", "1/i")), "key position j"),
        (lambda: _random("leftmost", "none", 1, 1, 0, features=("i/n",)), "key position j"),
        (lambda: _random("leftmost", "none", 1, 1, 0, features=("i//s",)), "'i//s'"),
    ],
)
def test_unsupported_models_are_refused(make, needle: str) -> None:
    with pytest.raises(HardsoftError, match=re.escape(needle)):
        decompile(make())


def test_too_many_classes_refused_before_the_work() -> None:
    model = _random("leftmost", "strict-future", 2, 2, seed=1)
    with pytest.raises(HardsoftError, match="--max-classes 3"):
        decompile(model, max_classes=3)


def _cli(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    from hardsoft.cli import main

    monkeypatch.setattr(sys, "argv", ["hardsoft", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_and_output_file(tmp_path: Path, monkeypatch, capsys) -> None:
    model = compile_formula("'a' & !P 'b'", alphabet="ab", target="hard", masks="nonstrict")
    path = tmp_path / "m.safetensors"
    save_model(model, path)
    out = tmp_path / "g.txt"
    code, stdout, err = _cli(
        [
            "decompile",
            str(path),
            "--json",
            "--verify-n",
            "5",
            "--random-words",
            "5",
            "-o",
            str(out),
        ],
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    info = json.loads(stdout)
    assert info["outputs"][0]["formula"] == "'a' & !P 'b'"
    assert info["verified"]["mismatches"] == 0 and info["verified"]["exhaustive_n"] == 5
    assert out.read_text() == "'a' & !P 'b'\n"


def test_cli_error_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "soft.safetensors"
    save_model(_random("softmax", "none", 1, 1, 0), path)
    code, _, err = _cli(["decompile", str(path)], monkeypatch, capsys)
    assert code == 2 and err.startswith("error: ") and "softmax head" in err
    assert len(err.strip().splitlines()) == 1


def test_doc_example_matches() -> None:
    """The worked example of docs/decompile.md is what decompile prints today."""
    d = _round_trip("('a' | X 'b') S ('c' & Y 'a')", "abc", "nonstrict")[1]
    doc = DOC.read_text()
    assert f"out0 (y[0] > 0.5):  {to_text(d.formulas[0])}" in doc
    assert f"classes per layer {d.classes}" in doc

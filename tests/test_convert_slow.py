"""The soften/harden acceptance checks at full size (docs/soften.md); run with ``-m slow``.

* random leftmost / rightmost / average models, masks none / future / past, 1–3 layers,
  softened through the CLI with ``--gap-inputs`` a word list: |hard − soft| <= error_bound at
  every position of every word;
* every shipped formula (and random ones) compiled for hard attention, softened at ``--n 200``
  with the certified gap: exact after rounding at every position, at every length 1..200,
  against the logic evaluator;
* a transformer trained with ``hardsoft train`` on PARITY, hardened: a verified witness at
  n = 256 (and whether the softmax model itself gets the pair right).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from hardsoft.check import check_formula
from hardsoft.compile import compile_formula
from hardsoft.convert import harden, soften
from hardsoft.logic.library import FORMULAS
from hardsoft.model import load_model, random_model, save_model

from .test_convert import cli

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("weighting", ["leftmost", "rightmost", "average"])
@pytest.mark.parametrize("mask", ["none", "future", "past"])
@pytest.mark.parametrize("layers", [1, 2, 3])
def test_random_models_bound_holds_on_the_word_list(weighting, mask, layers, tmp_path) -> None:
    rng = np.random.default_rng(layers)
    hard = random_model(
        weighting=weighting, mask=mask, layers=layers, seed=10 + layers, dtype=torch.float64
    )
    path, out = tmp_path / "hard.st", tmp_path / "soft.st"
    save_model(hard, path)
    words = ["".join(rng.choice(["0", "1"], size=n)) for n in range(1, 41) for _ in range(3)]
    (tmp_path / "words.txt").write_text("\n".join(words) + "\n")
    res = cli("soften", str(path), "-o", str(out), "--gap-inputs", str(tmp_path / "words.txt"),
              "--json")  # fmt: skip
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["gap_source"] == "measured" and info["n"] == 40
    soft = load_model(out)
    worst = 0.0
    for w, a, b in zip(words, hard.run_words(words), soft.run_words(words)):
        diff = np.abs(a - b)  # every position, every output coordinate
        worst = max(worst, float(diff.max()))
        assert diff.max() <= info["error_bound"], w
    assert worst == pytest.approx(info["measured_error"], rel=1e-9, abs=1e-300)


def _formulas() -> list[tuple[str, str, bool]]:
    from hardsoft.logic.random import random_formula
    from hardsoft.logic.syntax import to_text

    out = [(nf.text, nf.alphabet, False) for nf in FORMULAS.values()]
    out += [(FORMULAS[k].text, FORMULAS[k].alphabet, True) for k in ("parity-mod", "majority")]
    rng = random.Random(0)
    picked = 0
    while picked < 8:  # random formulas with attention (a formula like `false` has none)
        text = to_text(random_formula(rng, "01", depth=3))
        if any(layer.heads for layer in compile_formula(text, "01", target="hard").spec.layers):
            out.append((text, "01", False))
            picked += 1
    return out


@pytest.mark.parametrize("formula, alphabet, causal", _formulas())
def test_compiled_formulas_exact_to_200(formula, alphabet, causal, tmp_path) -> None:
    hard = compile_formula(formula, alphabet, target="hard", causal=causal)
    path, out = tmp_path / "hard.st", tmp_path / "soft.st"
    save_model(hard, path)
    res = cli("soften", str(path), "-o", str(out), "--n", "200", "--json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["gap_source"] == "certified" and info["n"] == 200 and info["error_bound"] < 0.5
    soft = load_model(out)
    exhaustive = 10 if len(alphabet) == 2 else 6
    rep = check_formula(
        soft, formula, exhaustive_max_n=exhaustive, random_n=list(range(exhaustive + 1, 201)),
        samples=6,
    )  # fmt: skip
    assert rep["mismatches"] == 0, rep["first_mismatch"]
    assert rep["max_abs_error"] <= info["error_bound"]


def test_trained_parity_transformer_hardened_witness_at_256(tmp_path: Path) -> None:
    from hardsoft.languages import get_language
    from hardsoft.learn import ArchConfig, TrainConfig, train
    from hardsoft.learn.train import load_run

    cfg = TrainConfig(language="parity", arch=ArchConfig(d_model=16), steps=300, max_n=40)
    train(cfg, tmp_path / "run", show_progress=False)
    _, soft = load_run(tmp_path / "run")
    save_model(harden(soft), tmp_path / "hard.st")
    res = cli("restrict", str(tmp_path / "hard.st"), "--n", "256", "--language", "parity-even",
              "--json")  # fmt: skip
    assert res.returncode == 0, res.stderr
    w = json.loads(res.stdout)["witness"]
    assert w["verified"], w["reason"]
    lang = get_language("parity-even")
    assert [lang.member(w["x"]), lang.member(w["x_prime"])] == w["in_language"]
    hard = load_model(tmp_path / "hard.st")
    with torch.no_grad():
        acc = hard(hard.encode([w["x"], w["x_prime"]])).accept.tolist()
        soft_acc = soft(soft.encode([w["x"], w["x_prime"]])).accept.tolist()
    assert acc == [w["accept"], w["accept_prime"]] and acc[0] == acc[1]
    # the softmax model may or may not separate the pair; it is a model of the same weights
    assert len(soft_acc) == 2


def test_softened_compiled_model_soften_n_matches_docs_example() -> None:
    hard = compile_formula("MOD(2,1)(#<['1'])", "01", target="hard")
    r = soften(hard, n=200)
    assert r.gap_source == "certified" and r.tau.endswith("/n**3")
    assert r.gap == pytest.approx(1 / 200**3)

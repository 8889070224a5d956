"""The recognizer objective (Butoi et al. 2025) of `hardsoft train`, the star-free languages it
is tried on, and the objective/language checks (no silent substitution)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from hardsoft.errors import HardsoftError
from hardsoft.languages import all_words, get_language
from hardsoft.learn import ArchConfig, TrainConfig, train
from hardsoft.learn.models import logits
from hardsoft.learn.recognize import (
    Objective,
    accuracy_by_length,
    perturbed_negatives,
    resolve_objective,
    sample_strings,
)
from hardsoft.learn.train import load_run
from hardsoft.model import load_model
from hardsoft.model.readout import acceptance_of
from tests._cli import run_cli

REFERENCE = {
    "contains-ab": lambda w: re.fullmatch(r"[ab]*ab[ab]*", w) is not None,
    "ends-ab": lambda w: re.fullmatch(r"[ab]*ab", w) is not None,
    "ab-star": lambda w: re.fullmatch(r"(ab)*", w) is not None,
    "dyck1-depth2": lambda w: re.fullmatch(r"(\((\(\))*\))*", w) is not None,
}
TINY = ArchConfig(layers=1, heads=1, d_model=8, features="1,(-1)^i", layer_norm="none")


@pytest.mark.parametrize("name", list(REFERENCE))
def test_new_languages_against_regular_expressions(name: str) -> None:
    lang = get_language(name)
    for n in range(11):
        words = all_words(lang.alphabet, n)
        expected = np.array([REFERENCE[name](w) for w in words])
        assert (lang.members(words) == expected).all(), (name, n)
        assert lang.has_members(n) == bool(expected.any())
        assert lang.has_nonmembers(n) == bool((~expected).any())


def test_bounded_dyck_is_dyck1_with_a_depth_bound() -> None:
    d1, d3 = get_language("dyck1"), get_language("dyck1-depth3")
    for w in all_words(("(", ")"), 10):
        depth = max([0] + [w[: i + 1].count("(") - w[: i + 1].count(")") for i in range(10)])
        assert d3.member(w) == (d1.member(w) and depth <= 3), w


@pytest.mark.parametrize("name", [*REFERENCE, "dyck1-depth3"])
def test_samplers_give_members_and_non_members(name: str) -> None:
    lang = get_language(name)
    rng = np.random.default_rng(0)
    for n in (6, 8, 300):
        if lang.has_members(n):
            assert lang.members(lang.sample_positive(n, 20, rng)).all()
        assert not lang.members(lang.sample_negative(n, 20, rng)).any()


def test_bounded_dyck_sampler_reaches_every_member_uniformly() -> None:
    lang = get_language("dyck1-depth2")
    members = [w for w in all_words(lang.alphabet, 8) if lang.member(w)]  # 2^3 = 8 of them
    counts: dict[str, int] = {}
    for w in lang.sample_positive(8, 4000, np.random.default_rng(1)):
        counts[w] = counts.get(w, 0) + 1
    assert set(counts) == set(members)
    expected = 4000 / len(members)
    assert max(abs(c - expected) for c in counts.values()) < 5 * expected**0.5


def test_objective_resolution_never_substitutes() -> None:
    assert resolve_objective("parity", None) is Objective.PROCESS
    assert resolve_objective("parity-even", "recognizer") is Objective.RECOGNIZER
    assert resolve_objective("first", None) is Objective.RECOGNIZER
    assert resolve_objective("dyck2-process", None) is Objective.PROCESS
    for language, objective, message in [
        ("parity-odd", "process", "no Hahn process"),
        ("nosuch", None, "unknown language"),
        ("induction-head", None, "per-position task"),
        ("parity-process", "recognizer", "is a process"),
        ("first", "classify", "unknown objective"),
    ]:
        with pytest.raises(HardsoftError, match=message):
            resolve_objective(language, objective)


@pytest.mark.parametrize("name", ["parity-odd", "dyck2", "contains-ab", "majority", "flipflop"])
def test_sample_strings_labels_and_balance(name: str) -> None:
    lang = get_language(name)
    rng = np.random.default_rng(3)
    n = 12 if name != "flipflop" else 10
    words, labels = sample_strings(lang, n, 40, rng)
    assert len(words) == 40 and all(len(w) == n for w in words)
    assert (labels == lang.members(words)).all()
    assert 0.35 <= labels.mean() <= 0.65
    neg = perturbed_negatives(lang, n, 20, rng)
    assert not lang.members(neg).any()
    # one edit of a random member of Σ*abΣ* (many ab factors) almost never leaves it: the
    # negatives then come from the random non-members
    assert bool(neg) == (name != "contains-ab")


def _one_edit_away(word: str, lang) -> bool:
    for i in range(len(word) + 1):
        for a in lang.alphabet:
            if lang.member(word[:i] + a + word[i:]):  # a deletion from a member
                return True
    for i in range(len(word)):
        if lang.member(word[:i] + word[i + 1 :]):  # an insertion into a member
            return True
        for a in lang.alphabet:
            if lang.member(word[:i] + a + word[i + 1 :]):
                return True
    return False


def test_perturbed_negatives_are_one_edit_from_a_member() -> None:
    lang = get_language("dyck1")
    for w in perturbed_negatives(lang, 9, 30, np.random.default_rng(4)):
        assert not lang.member(w) and _one_edit_away(w, lang)


def test_train_a_recognizer_declares_its_readout(tmp_path) -> None:
    cfg = TrainConfig(
        language="parity-even",
        objective="recognizer",
        arch=TINY,
        max_n=6,
        val_max_n=8,
        steps=4,
        warmup=1,
        batch_size=8,
    )
    metrics = train(cfg, tmp_path / "r", show_progress=False)
    assert metrics["steps_done"] == 4 and 0 <= metrics["validation"]["accuracy"] <= 1
    model = load_model(tmp_path / "r" / "model.safetensors")
    assert model.spec.output_names == ("accept",)
    readout = acceptance_of(model)
    assert (readout.kind, readout.index, readout.threshold) == ("coordinate", 0, 0.0)
    assert model.meta["config"]["objective"] == "recognizer"
    # the declared readout is the logit's sign, the one the recognizer is scored by
    tokens = model.encode(["0110", "1011"])
    out = model(tokens).outputs
    assert (model.accepts(out[:, -1]) == (out[:, -1, 0] > 0)).all()
    cfg2, loaded = load_run(tmp_path / "r")
    assert cfg2 == cfg
    rows = accuracy_by_length(loaded, get_language("parity-even"), [3, 7], samples=8)
    assert [r.n for r in rows] == [3, 7] and all(r.strings == 8 for r in rows)


def test_accuracy_by_length_against_the_oracle() -> None:
    """A hand-set recognizer of `first` (an LSTM-free check): a model whose logit is +1 exactly
    when the first symbol is 1 scores 1.0; its negation scores 0.0."""

    class FirstModel(torch.nn.Module):
        def __init__(self, sign: float) -> None:
            super().__init__()
            self.sign = sign

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            first = (tokens[:, :1] == 1).float() * 2 - 1
            return (self.sign * first).expand(tokens.shape).unsqueeze(-1)

    lang = get_language("first")
    good = accuracy_by_length(FirstModel(1.0), lang, [1, 5, 50], samples=32)
    bad = accuracy_by_length(FirstModel(-1.0), lang, [1, 5, 50], samples=32)
    assert [r.accuracy for r in good] == [1.0, 1.0, 1.0]
    assert [r.accuracy for r in bad] == [0.0, 0.0, 0.0]
    assert logits(FirstModel(1.0), torch.zeros(1, 3, dtype=torch.long)).shape == (1, 3, 1)


def test_lstm_recognizer(tmp_path) -> None:
    cfg = TrainConfig(
        language="ones-star",
        arch=ArchConfig(arch="lstm", d_model=8, layers=1),
        max_n=6,
        val_max_n=7,
        steps=3,
        warmup=1,
        batch_size=8,
    )
    assert cfg.objective == "recognizer"
    train(cfg, tmp_path / "l", show_progress=False)
    _, model = load_run(tmp_path / "l")
    assert logits(model, torch.zeros(2, 5, dtype=torch.long)).shape == (2, 5, 1)


def test_cli_train_objectives_and_errors(tmp_path) -> None:
    run = tmp_path / "pe"
    common = ["--steps", "2", "--warmup", "1", "--max-n", "6", "--d-model", "8", "--layers", "1"]
    res = run_cli("train", "-o", str(run), "--language", "parity-even", *common)
    assert res.rc == 0 and "process objective on parity-even" in " ".join(res.out.split())
    assert json.loads((run / "config.json").read_text())["objective"] == "process"
    names = load_model(run / "model.safetensors").spec.output_names
    assert names == ("next:0", "next:1", "eos")
    rec = tmp_path / "rec"
    res = run_cli(
        "train", "-o", str(rec), "--language", "parity-even", "--objective", "recognizer",
        "--val-max-n", "8", "--json", *common,
    )  # fmt: skip
    assert res.rc == 0, res.err
    data = json.loads(res.out)
    assert data["objective"] == "recognizer" and data["language"] == "parity-even"
    res = run_cli("evaluate", str(rec), "--lengths", "2,4,9", "--samples", "8", "--json")
    assert res.rc == 0, res.err
    ev = json.loads(res.out)
    assert [r["n"] for r in ev["rows"]] == [2, 4, 9]
    assert set(ev["mean_accuracy"]) == {"train", "validation", "test"}
    for args, message in [
        (["--language", "parity-odd", "--objective", "process"], "no Hahn process"),
        (["--language", "parity-evn"], "unknown language"),
        (["--language", "khop2"], "per-position task"),
        (["--language", "first", "--objective", "both"], "unknown objective"),
        (["--language", "first", "--p", "0.3"], "does not apply to a recognizer"),
    ]:
        res = run_cli("train", "-o", str(tmp_path / "bad"), *args, *common)
        assert res.rc == 2 and message in res.err, (args, res.err)
        assert len(res.err.strip().splitlines()) == 1
        assert not (tmp_path / "bad").exists()


def test_sweep_over_objectives(tmp_path) -> None:
    res = run_cli(
        "sweep", "train", "-o", str(tmp_path / "sw"), "--language", "first,contains-ab",
        "--objective", "recognizer", "--arch", "transformer,lstm", "--steps", "2",
        "--max-n", "5", "--val-max-n", "6", "--d-model", "8", "--layers", "1", "--json",
    )  # fmt: skip
    assert res.rc == 0, res.err
    data = json.loads(res.out)
    assert data["trained"] == 4 and data["failed"] == 0
    assert all("validation" in r for r in data["runs"])

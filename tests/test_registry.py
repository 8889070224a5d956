"""The one registry of languages, tasks and processes, and the capabilities languages declare."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from hardsoft.errors import HardsoftError
from hardsoft.languages import (
    DyckProcess,
    ParityProcess,
    get_language,
    get_process,
    is_process,
    language_names,
    process_names,
    restriction_targets,
)
from hardsoft.learn import get_process as learn_process
from hardsoft.limits.restriction import Restriction

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "hardsoft"


@pytest.mark.parametrize(
    "name, cls, p",
    [
        ("parity-process", ParityProcess, 0.5),
        ("parity", ParityProcess, 0.5),  # Hahn's PARITY, the training name
        ("parity-even", ParityProcess, 0.5),
        ("dyck2-process", DyckProcess, 0.3),
        ("dyck-process", DyckProcess, 0.3),
        ("dyck2", DyckProcess, 0.3),
        (" Dyck2 ", DyckProcess, 0.3),
    ],
)
def test_processes_by_name_or_by_their_language(name: str, cls: type, p: float) -> None:
    proc = get_process(name)
    assert type(proc) is cls and proc.p == p == cls.default_p
    assert get_process(name, 0.2).p == 0.2
    assert type(learn_process(name)) is cls  # the training code asks the same registry


@pytest.mark.parametrize(
    "name, message",
    [("nope", "unknown process"), ("dyck3", "has no Hahn process"), ("parity-odd", "has no")],
)
def test_unknown_processes_are_one_line_errors(name: str, message: str) -> None:
    with pytest.raises(HardsoftError, match=message):
        get_process(name)


def test_training_names_unknown_languages() -> None:
    with pytest.raises(HardsoftError, match="unknown language 'dyck9' for training"):
        learn_process("dyck9")
    with pytest.raises(HardsoftError, match="1/2"):  # a bad p is not an unknown language
        learn_process("dyck2", 0.7)


def test_process_names_and_is_process() -> None:
    assert process_names() == ["parity-process", "dyck2-process"]
    assert is_process("dyck-process") and is_process("parity-process")
    assert not is_process("dyck2") and not is_process("parity")
    for name in process_names():
        proc = get_process(name)
        assert proc.name == name and proc.kind == "process" and proc.description


def test_parity_alias_is_hahns_parity() -> None:
    assert get_language("parity").name == "parity-even"
    assert "parity" not in language_names()  # an alias, not listed twice


def test_restriction_targets_are_declared_by_the_classes() -> None:
    targets = restriction_targets()
    assert targets[:4] == ["parity-even", "parity-odd", "dyck1", "dyck2"]
    for name in language_names():
        lang = get_language(name)
        assert (name in targets) == lang.restriction_target
        assert set(lang.restriction_alphabet()) <= set(lang.alphabet)
    assert get_language("dyck5").restriction_target  # any k


def test_dyck_capabilities_follow_corollary_2() -> None:
    lang = get_language("dyck2")
    assert lang.restriction_alphabet() == ("(", ")")
    fixes = lang.initial_fixes(20)
    assert fixes == {0: "(", 1: "(", 2: "(", 3: "(", 19: ")", 18: ")", 17: ")", 16: ")"}
    rho = Restriction.free(20, ("(", ")")).fix(fixes)
    x = lang.witness_word(rho, np.random.default_rng(0))
    assert x is not None and rho.agrees(x) and lang.member(x)
    assert lang.witness_note(21) and lang.witness_note(20) is None


def test_parity_witness_flips_the_bit_without_randomness() -> None:
    lang = get_language("parity-odd")
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert lang.witness_flip("0", ("0", "1"), rng) == "1"
    assert lang.witness_flip("1", ("0", "1"), rng) == "0"
    assert rng.bit_generator.state == state
    # the default: another symbol of the alphabet
    other = get_language("flipflop").witness_flip("w", ("w", "r", "i"), rng)
    assert other in ("r", "i")


def test_no_language_dispatch_by_name_in_the_engines() -> None:
    for path in (SRC / "limits").glob("*.py"):
        text = path.read_text()
        assert 'startswith("dyck' not in text and 'startswith("parity' not in text, path.name


def test_process_encode_names_the_bad_symbol() -> None:
    proc = get_process("dyck2")
    assert proc.encode(["([])", "[]()"]).tolist() == [[0, 2, 3, 1], [2, 3, 0, 1]]
    with pytest.raises(HardsoftError, match="unknown symbol 'x' at position 3"):
        proc.encode(["()x)", "(())"])
    for odd in ("é", "λ"):  # latin-1 and beyond
        with pytest.raises(HardsoftError, match=f"unknown symbol '{odd}'"):
            proc.encode([f"(){odd})"])
    with pytest.raises(HardsoftError, match="equal length"):
        proc.encode(["()", "(())"])


def test_restrict_cli_takes_the_declared_targets(tmp_path: pathlib.Path) -> None:
    import json

    import torch
    from typer.testing import CliRunner

    from hardsoft.cli import app
    from hardsoft.model import random_model, save_model

    path = tmp_path / "m.safetensors"
    model = random_model(
        weighting="rightmost",
        alphabet="()[]{}",
        layers=1,
        heads=1,
        d_model=8,
        seed=0,
        dtype=torch.float64,
    )
    save_model(model, path)
    runner = CliRunner()
    res = runner.invoke(app, ["restrict", str(path), "--n", "20", "--language", "dyck3", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["language"] == "dyck3" and out["restriction"].startswith("((((")
    assert out["witness"]["verified"] is True
    res = runner.invoke(app, ["restrict", str(path), "--n", "20", "--language", "majority"])
    assert isinstance(res.exception, HardsoftError)  # main() prints it as one line, exit 2
    assert "unknown target 'majority'" in str(res.exception)


def test_restrict_says_when_resampling_hits_its_cap_or_passes_the_bound(
    tmp_path, monkeypatch
) -> None:
    """`restrict` once printed `resamplings/bound 5000/50.2` and `verified: true` with no word
    that Moser-Tardos had stopped at its cap; it now says so and what it means."""
    import functools

    from typer.testing import CliRunner

    from hardsoft.cli import app
    from hardsoft.limits import lll

    path = tmp_path / "m.st"
    cli = ["random-model", "--weighting", "leftmost", "--layers", "2", "--heads", "2"]
    runner = CliRunner()
    assert runner.invoke(app, [*cli, "--seed", "0", "--out", str(path)]).exit_code == 0
    args = ["restrict", str(path), "--n", "64", "--language", "parity-even", "--k", "2"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "resamplings, past the expected" in res.output and "converged" in res.output
    capped = functools.partial(lll.moser_tardos, max_resamplings=10)
    monkeypatch.setattr(lll, "moser_tardos", lambda *a, **k: capped(*a))
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "(cap)/" in out and "hit its cap of 10 " in out
    assert "not the construction of the Depth Reduction Lemma's proof" in out
    assert "verified: true" in out

"""The acceptance readout is data on the model: ``hardsoft train`` writes it into
``meta["acceptance"]``, the model layer only reads it, and a model file written before the
readout was stored gets it from its declared process name on the loading paths."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from hardsoft.languages import get_process
from hardsoft.learn import ArchConfig, TrainConfig, train
from hardsoft.learn.readout import declare_readout, process_readout
from hardsoft.learn.train import load_run
from hardsoft.model import load_model, save_model
from hardsoft.model.readout import DEFAULT, acceptance_of
from tests._cli import run_cli

CFG = TrainConfig(
    language="parity", arch=ArchConfig(layers=1, heads=1, d_model=8), steps=2, max_n=6
)


def test_process_readout_is_the_midpoint_of_p_eos_after_the_empty_prefix() -> None:
    for language in ("parity", "dyck2"):
        process = get_process(language)
        acc = process_readout(language)
        p_end = float(process.next_probs("")[process.eos_index])
        assert acc.kind == "eos" and acc.index == process.eos_index
        assert acc.threshold == p_end / 2 and 0 < acc.threshold < 0.5
        assert acc.language == process.stops_in


def test_train_writes_the_readout_into_the_model_file(tmp_path: Path) -> None:
    train(CFG, tmp_path, show_progress=False)
    model = load_model(tmp_path / "model.safetensors")  # the model layer alone
    assert model.meta["acceptance"] == process_readout("parity").to_dict()
    assert acceptance_of(model) == process_readout("parity")


def test_an_old_trained_file_gets_its_readout_on_the_loading_paths(tmp_path: Path) -> None:
    train(CFG, tmp_path, show_progress=False)
    model = load_model(tmp_path / "model.safetensors")
    del model.meta["acceptance"]  # as written before the readout was stored
    save_model(model, tmp_path / "model.safetensors")
    old = load_model(tmp_path / "model.safetensors")
    assert acceptance_of(old) == DEFAULT  # the model layer resolves nothing
    assert acceptance_of(declare_readout(old)) == process_readout("parity")
    _, loaded = load_run(tmp_path)
    assert acceptance_of(loaded) == process_readout("parity")
    # the CLI loads it the same way: its accept bits are the EOS readout's
    words = ["0110", "0111"]
    res = run_cli(
        "run", str(tmp_path / "model.safetensors"), "-i", words[0], "-i", words[1], "--json"
    )
    assert res.rc == 0, res.err
    with torch.no_grad():
        y = loaded(loaded.encode(words)).outputs[:, -1]
    expected = process_readout("parity").accept(y).tolist()
    assert [r["accept"] for r in json.loads(res.out)["results"]] == expected


def test_other_models_keep_the_default_readout() -> None:
    from hardsoft.model import random_model

    model = random_model(alphabet="01", seed=0)
    assert acceptance_of(declare_readout(model)) == DEFAULT

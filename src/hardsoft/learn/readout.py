"""The acceptance readout of a model trained on one of Hahn's processes (Hahn (2020) §6).

``hardsoft train`` stores the readout in the model's ``meta["acceptance"]``
(:func:`process_readout`), so the model layer reads it as data. A model file written before
the readout was stored carries only its training config; :func:`declare_readout` resolves the
process by the config's declared name and writes the readout into ``meta`` (the loading paths
of ``hardsoft.learn`` and of the CLI call it).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from hardsoft.learn.data import get_process
from hardsoft.model.readout import Acceptance, eos_midpoint

TRAIN_ORIGIN = "hardsoft train"


@lru_cache(maxsize=32)
def process_readout(language: str, p: float | None = None) -> Acceptance:
    """The ``eos`` readout of a model trained on ``language``'s process with parameter ``p``:
    accept iff ``P(EOS) > P(EOS | ε) / 2`` (see :mod:`hardsoft.model.readout`)."""
    process = get_process(language, p)
    p_end = float(process.next_probs("")[process.eos_index])
    return eos_midpoint(process.eos_index, p_end, process.stops_in or None)


def declare_readout(model: Any) -> Any:
    """Give a model written by ``hardsoft train`` without ``meta["acceptance"]`` the readout of
    its declared process (in place; returns ``model``). Other models are left as they are."""
    meta = getattr(model, "meta", None)
    if not isinstance(meta, dict) or meta.get("acceptance"):
        return model
    config = meta.get("config")
    if meta.get("origin") != TRAIN_ORIGIN or not isinstance(config, dict):
        return model
    language = config.get("language")
    spec = getattr(model, "spec", None)
    if isinstance(language, str) and spec is not None and spec.d_out == len(spec.alphabet) + 1:
        meta["acceptance"] = process_readout(language, config.get("p")).to_dict()
    return model

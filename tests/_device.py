"""A device-mismatch guard for CPU-only machines, and the collection of a stream's carried state.

``device_guard()`` makes every tensor created *without an explicit device* land on torch's
``meta`` device (no data). A model on the CPU then computes as usual, except that an operation
mixing one of those tensors with the model's tensors fails ("Tensor on device meta is not on
the expected device cpu!"), and copying one to the CPU fails too: exactly the tensors that
would sit on the CPU while a ``--device cuda`` model runs on the GPU. So a test that passes
under the guard on the CPU has created every tensor it computes with on the model's device.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import torch

GUARD = torch.device("meta")


def device_guard() -> torch.device:
    """``with device_guard(): ...``: tensors made without ``device=`` land on ``meta``."""
    return GUARD


def tensors_in(name: str, value: Any) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor held by ``value`` (tensors, dataclasses such as ScanState, tuples, lists),
    each with a dotted name; modules (the model's own parameters) are skipped."""
    if isinstance(value, torch.nn.Module):
        return
    if isinstance(value, torch.Tensor):
        yield name, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from tensors_in(f"{name}.{f.name}", getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for k, item in enumerate(value):
            yield from tensors_in(f"{name}[{k}]", item)


def carried_state(stream: Any) -> dict[str, torch.Tensor]:
    """Every tensor a :class:`hardsoft.stream.Stream` carries from one chunk to the next."""
    found: dict[str, torch.Tensor] = {}
    for head, paths in stream.heads.items():
        for path in paths or []:
            for attr, value in vars(path).items():
                found.update(tensors_in(f"{head}.{path.path}.{attr}", value))
    return found

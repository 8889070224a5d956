"""A device-mismatch guard for CPU-only machines, and the collection of a stream's carried state.

``device_guard()`` makes every tensor that hardsoft's code creates *without an explicit device*
land on torch's ``meta`` device (no data). A model on the CPU then computes as usual, except
that an operation mixing one of those tensors with the model's tensors fails ("Tensor on device
meta is not on the expected device cpu!"), and copying one to the CPU fails too: exactly the
tensors that would sit on the CPU while a ``--device cuda`` model runs on the GPU. So a test
that passes under the guard on the CPU has created every tensor it computes with on the
model's device. Tensors that torch creates for itself (an optimizer's step counter, which
torch 2.4 keeps on the CPU by design) are left alone: only calls from hardsoft's source count.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

import hardsoft

SOURCE = str(Path(hardsoft.__file__).parent)
FACTORIES = {
    torch.arange, torch.zeros, torch.ones, torch.full, torch.empty, torch.tensor,
    torch.as_tensor, torch.randn, torch.rand, torch.randint, torch.linspace, torch.eye,
    torch.logspace, torch.randperm, torch.empty_strided, torch.scalar_tensor,
}  # fmt: skip
"""torch's functions that create a tensor on the default device when given none."""


class _Guard(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = dict(kwargs or {})
        if func in FACTORIES and kwargs.get("device") is None:
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(SOURCE):
                kwargs["device"] = "meta"
        return func(*args, **kwargs)


def device_guard() -> TorchFunctionMode:
    """``with device_guard(): ...``: tensors that hardsoft makes without ``device=`` land on
    ``meta``."""
    return _Guard()


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

"""What a compiled program's outputs must be: the program's own interpreter, read through each
output's encoding (``model.meta["program"]["outputs"]``, :mod:`hardsoft.programs.source`).

:func:`program_reference` gives the per-position reference that ``check --program`` and the
``programs`` experiment hand to :func:`hardsoft.check.check_model` (``readout="outputs"``):
``[B, n, d]`` expected outputs, and which columns are numbers rather than bits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer
from hardsoft.programs.readout import ENCODINGS
from hardsoft.programs.source import SourceProgram

__all__ = ["BatchProgram", "OutputSpec", "output_specs", "program_reference"]


@runtime_checkable
class BatchProgram(Protocol):
    """A program whose interpreter also runs a batch of equal-length words at once:
    ``values(ids)`` maps every statement to ``[B, n]`` values (ids index its alphabet)."""

    def values(self, ids: np.ndarray) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True)
class OutputSpec:
    """How output column k carries statement ``statement``."""

    name: str
    statement: str
    encoding: str = "bool"
    value: Any = None
    unit: str | None = None

    @property
    def numeric(self) -> bool:
        return self.encoding == "number"


def output_specs(model: Transformer, program: SourceProgram) -> list[OutputSpec]:
    """The model's outputs as statements of ``program``: from ``meta["program"]`` when the
    model was compiled from a program; otherwise every output name must be a statement (an
    unnamed one-output model is the last statement), read as a bit."""
    names = tuple(model.spec.output_names)
    meta = (getattr(model, "meta", None) or {}).get("program")
    if isinstance(meta, dict):  # compiled from a program file (a string names a built-in task)
        specs = [
            OutputSpec(o["name"], o["statement"], o.get("encoding", "bool"), o.get("value"),
                       o.get("unit"))
            for o in meta.get("outputs", [])
        ]  # fmt: skip
        if len(specs) != model.spec.d_out:
            raise HardsoftError(
                f"the model's program metadata lists {len(specs)} outputs for its "
                f"{model.spec.d_out} output coordinates"
            )
    elif not names:
        if model.spec.d_out != 1:
            raise HardsoftError(
                f"the model has {model.spec.d_out} unnamed outputs: compare a program with a "
                "model whose outputs are named by statements"
            )
        last = program.statements[-1]
        specs = [OutputSpec(last, last)]
    else:
        specs = [OutputSpec(nm, nm) for nm in names]
    for s in specs:
        if s.statement not in program.statements:
            raise HardsoftError(
                f"the model's output {s.name!r} is statement {s.statement!r}, which the "
                f"program {program.name!r} does not have (statements: "
                f"{', '.join(program.statements)})"
            )
        if s.encoding not in ENCODINGS:
            raise HardsoftError(f"output {s.name!r} has an unknown encoding {s.encoding!r}")
    return specs


def _values_of(program: SourceProgram, ids: np.ndarray) -> dict[str, np.ndarray]:
    """Every statement's values ``[B, n]`` (object arrays where the interpreter runs one word
    at a time)."""
    if isinstance(program, BatchProgram):
        return program.values(ids)
    alphabet = program.alphabet
    runs = [program.run("".join(alphabet[int(c)] for c in row)) for row in ids]
    out = {}
    for name in program.statements:
        out[name] = np.array([r.values[name] for r in runs], dtype=object).reshape(ids.shape)
    return out


def _encode(spec: OutputSpec, values: np.ndarray) -> np.ndarray:
    """A statement's values ``[B, n]`` as the output column must carry them (NaN: undefined)."""
    n = values.shape[1]
    if spec.encoding == "onehot":
        return np.vectorize(lambda v: float(v == spec.value), otypes=[float])(values)
    if values.dtype == object:  # a per-word interpreter's values: None is undefined
        undefined = np.vectorize(lambda v: v is None, otypes=[bool])(values)
        col = np.where(undefined, 0, values).astype(np.float64)
        col[undefined] = np.nan
    else:
        undefined = np.zeros(values.shape, bool)
        col = values.astype(np.float64)
    if spec.encoding == "bool":
        return np.where(undefined, np.nan, col != 0).astype(np.float64)
    unit = spec.unit or ""
    if unit.endswith("/n"):
        col = col / max(n, 1)
    elif unit.endswith("/i"):
        col = col / np.arange(1, n + 1)
    return col


def program_reference(
    model: Transformer, program: SourceProgram, *, max_cells: int = 1 << 22
) -> tuple[Callable[[np.ndarray], np.ndarray], list[bool], list[OutputSpec]]:
    """``(reference, numeric, specs)`` for :func:`hardsoft.check.check_model` with
    ``readout="outputs"``: ``reference(ids)`` is ``[B, n, d]`` (column k: output k's expected
    value from the program's interpreter), ``numeric[k]`` whether output k is a number.
    The model's alphabet must be the program's. Batches are evaluated in slices of at most
    ``max_cells`` positions."""
    if tuple(model.spec.alphabet) != tuple(program.alphabet):
        raise HardsoftError(
            f"the model's alphabet {''.join(model.spec.alphabet)!r} is not the program's "
            f"{''.join(program.alphabet)!r}"
        )
    specs = output_specs(model, program)

    def reference(ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        rows = max(1, max_cells // max(ids.shape[1], 1))
        parts = []
        for s in range(0, len(ids), rows):
            values = _values_of(program, ids[s : s + rows])
            parts.append(np.stack([_encode(sp, values[sp.statement]) for sp in specs], axis=-1))
        if not parts:
            return np.zeros((0, ids.shape[1], len(specs)))
        return np.concatenate(parts, axis=0)

    return reference, [s.numeric for s in specs], specs

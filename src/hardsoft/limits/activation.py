"""Activation tables of a transformer under a restriction (Hahn (2020) §5, Definition 3): the
model checks of the restriction engine, layer 0 by the model's own embedding, and the table
arithmetic (assignments in mixed radix, projection onto a subset, distinct rows, pruning of
positions a table does not depend on) that the dependency analysis
(:mod:`hardsoft.limits.dependency`) builds every layer with. Importable from there too.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.limits.restriction import Restriction
from hardsoft.model.transformer import Transformer

__all__ = [
    "ActivationLayer",
    "assignments",
    "check_unique_hard",
    "distinct_rows",
    "embed_layer",
    "engine_model",
    "project",
    "prune_table",
    "symbol_ids",
]


# ---------------------------------------------------------------------------- model checks
def check_unique_hard(model: Transformer) -> None:
    """Raise a HardsoftError naming the first head that is not leftmost/rightmost hard."""
    for ell, layer in enumerate(model.spec.layers):
        for h, head in enumerate(layer.heads):
            if not head.weighting.is_unique_hard:
                raise HardsoftError(
                    f"layer {ell + 1} head {h + 1} uses {head.weighting!r} attention; the "
                    "restriction engine needs unique hard attention (leftmost or rightmost)"
                )


def engine_model(model: Transformer) -> Transformer:
    """A float64 copy of ``model`` for the analysis (the original is what witnesses run)."""
    m = copy.deepcopy(model).to(device="cpu", dtype=torch.float64)
    m.eval()
    return m


def symbol_ids(model: Transformer, alphabet: tuple[str, ...]) -> list[int]:
    """Token ids of ``alphabet`` in the model; an unknown symbol is a HardsoftError."""
    ids = []
    for a in alphabet:
        if a not in model.symbol_index:
            raise HardsoftError(
                f"symbol {a!r} is not in the model's alphabet {''.join(model.spec.alphabet)!r}"
            )
        ids.append(model.symbol_index[a])
    return ids


@lru_cache(maxsize=64)
def assignments(S: int, m: int) -> np.ndarray:
    """All ``S**m`` assignments of m positions, as rows; row r is r in base S (first column is
    the most significant digit), matching :func:`project`'s mixed-radix index."""
    if m == 0:
        return np.zeros((1, 0), dtype=np.int64)
    return np.array(list(itertools.product(range(S), repeat=m)), dtype=np.int64)


def project(assign: np.ndarray, dep_all: np.ndarray, dep_sub: np.ndarray, S: int) -> np.ndarray:
    """Row indices into the table of ``dep_sub`` (a subset of ``dep_all``) for ``assign``."""
    if len(dep_sub) == 0:
        return np.zeros(assign.shape[0], dtype=np.int64)
    cols = np.searchsorted(dep_all, dep_sub)
    radix = S ** np.arange(len(dep_sub) - 1, -1, -1, dtype=np.int64)
    return assign[:, cols] @ radix


# ---------------------------------------------------------------------------- activations
@dataclass
class ActivationLayer:
    """The activations ``x^(k)`` of one layer under a restriction.

    ``deps[j]``: sorted free positions ``x_j`` depends on; ``tables[j]``: for each assignment of
    ``deps[j]`` (mixed radix, see :func:`assignments`) the index of its value among position j's
    values; ``values[offset[j]:offset[j+1]]``: position j's distinct values (global value ids).
    Positions not computed (``None`` deps) are unknown and must not be used: :meth:`dep` and
    :meth:`table` refuse them.
    """

    deps: list[np.ndarray | None]
    tables: list[np.ndarray | None]
    values: torch.Tensor
    offset: np.ndarray
    S: int

    @property
    def n(self) -> int:
        return len(self.deps)

    @property
    def owner(self) -> np.ndarray:
        return np.repeat(np.arange(self.n), np.diff(self.offset))

    def dep(self, j: int) -> np.ndarray:
        """The dependency set of position ``j`` (which must have been computed)."""
        d = self.deps[j]
        if d is None:
            raise HardsoftError(f"position {j + 1} was not computed at this layer")
        return d

    def table(self, j: int) -> np.ndarray:
        """The value table of position ``j`` (which must have been computed)."""
        t = self.tables[j]
        if t is None:
            raise HardsoftError(f"position {j + 1} was not computed at this layer")
        return t

    def num_values(self, j: int) -> int:
        return int(self.offset[j + 1] - self.offset[j])

    def max_dep(self) -> int:
        return max((len(d) for d in self.deps if d is not None), default=0)

    def value_of(self, j: int, word_codes: np.ndarray) -> torch.Tensor:
        """The value of ``x_j`` on a full input (symbol indices into the analysis alphabet)."""
        row = 0
        for p in self.dep(j):
            row = row * self.S + int(word_codes[p])
        return self.values[self.offset[j] + self.table(j)[row]]


def distinct_rows(rows: torch.Tensor) -> tuple[torch.Tensor, np.ndarray]:
    """Distinct rows (first-occurrence order) and each row's index among them."""
    arr = rows.detach().cpu().numpy()
    if len(arr) <= 256:
        seen: dict[bytes, int] = {}
        inv = np.empty(len(arr), dtype=np.int64)
        first: list[int] = []
        for r in range(len(arr)):
            b = arr[r].tobytes()
            if b not in seen:
                seen[b] = len(first)
                first.append(r)
            inv[r] = seen[b]
        return rows[torch.tensor(first, dtype=torch.long)], inv
    _, first_idx, inv = np.unique(arr, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first_idx)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rows[torch.from_numpy(first_idx[order])], rank[inv.reshape(-1)]


def prune_table(dep: np.ndarray, table: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
    """Drop positions the table does not depend on (exactly equal values either way)."""
    m = len(dep)
    if m == 0:
        return dep, table
    t = table.reshape((S,) * m)
    keep: list[int] = []
    for axis in range(m):
        moved = np.moveaxis(t, axis, 0)
        if np.all(moved == moved[:1]):
            continue
        keep.append(axis)
    if len(keep) == m:
        return dep, table
    idx = tuple(slice(None) if a in keep else 0 for a in range(m))
    return dep[keep], np.ascontiguousarray(t[idx]).reshape(-1)


def embed_layer(model: Transformer, restriction: Restriction, sym: list[int]) -> ActivationLayer:
    """Layer 0, by the model's own embedding: ``x_j`` is the embedding of ρ(j) at j, or one of
    the |Σ| embeddings at j for a free position (which then depends on itself)."""
    n, S = restriction.n, len(sym)
    with torch.no_grad():  # every symbol at every position: [S, n, d]
        emb = model.embed(torch.tensor(sym, device=model.device)[:, None].expand(S, n))
    index = {a: i for i, a in enumerate(restriction.alphabet)}
    deps: list[np.ndarray | None] = []
    tables: list[np.ndarray | None] = []
    vals: list[torch.Tensor] = []
    offset = [0]
    for j, s in enumerate(restriction.symbols):
        if s is None:
            uniq, inv = distinct_rows(emb[:, j])
            d, t = prune_table(np.array([j], dtype=np.int64), inv.astype(np.int64), S)
            deps.append(d)
            tables.append(t)
            vals.append(uniq)
        else:
            deps.append(np.zeros(0, dtype=np.int64))
            tables.append(np.zeros(1, dtype=np.int64))
            vals.append(emb[index[s], j][None])
        offset.append(offset[-1] + len(vals[-1]))
    return ActivationLayer(deps, tables, torch.cat(vals).detach(), np.array(offset), S)

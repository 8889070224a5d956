"""Exact dependency analysis of a unique-hard-attention transformer under a restriction.

At a fixed restriction ρ every activation ``x_j^(k)`` (the residual vector after layer k at
position j) is a function of the free positions in a *dependency set* ``D_j^(k)``. The analysis
represents it by ``D_j^(k)`` and the finite table of its values over the ``|Σ|^|D|``
assignments of that set (Hahn (2020) §5, Definition 3: a c-transformer).

The analysis runs layer by layer: the activation tables (:mod:`hardsoft.limits.activation`),
the candidate sets of every head (:mod:`hardsoft.limits.candidates`), and here the next layer's
tables from them and the whole model's :class:`Analysis`. The names of the other two modules are
importable from this one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.limits.activation import (
    ActivationLayer,
    assignments,
    check_unique_hard,
    distinct_rows,
    embed_layer,
    engine_model,
    project,
    prune_table,
    symbol_ids,
)
from hardsoft.limits.candidates import HeadSets, TupleInfo, analyse_head
from hardsoft.limits.restriction import Restriction
from hardsoft.model.transformer import Transformer

__all__ = [
    "DEFAULT_MAX_ROWS",
    "ActivationLayer",
    "Analysis",
    "HeadSets",
    "TupleInfo",
    "analyse",
    "analyse_head",
    "analysis_of",
    "assignments",
    "check_unique_hard",
    "embed_layer",
    "engine_model",
    "next_layer",
    "output_table",
    "project",
    "symbol_ids",
]

DEFAULT_MAX_ROWS = 1 << 14
_EMPTY = np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------------------- next layer
def _position_deps(
    X: ActivationLayer, i: int, sets: list[HeadSets], ell: int, max_rows: int
) -> np.ndarray:
    """The dependency set of ``x_i`` after the layer: its own inputs and those of every
    candidate of every head, for every value of ``x_i``; too many assignments is an error."""
    dset = set(int(p) for p in X.dep(i))
    for hs in sets:
        for z in range(X.offset[i], X.offset[i + 1]):
            for j in hs.cands.get(z, ()):
                dset.update(int(p) for p in X.dep(int(j)))
    dep = np.array(sorted(dset), dtype=np.int64)
    rows = X.S ** len(dep)
    if rows > max_rows:
        raise HardsoftError(
            f"layer {ell + 1}, position {i + 1}: the activation depends on {len(dep)} free "
            f"positions ({rows} assignments > cap {max_rows}); fix more positions "
            "(smaller --C) or raise the cap"
        )
    return dep


def _attended(
    X: ActivationLayer, hs: HeadSets, zg: np.ndarray, assign: np.ndarray, dep: np.ndarray
) -> np.ndarray:
    """For each assignment of ``dep`` (query value ``zg``): the value id the head attends to,
    the candidate value with the largest key, or -1 if no key is allowed."""
    S = X.S
    pick = np.full(len(zg), -1, dtype=np.int64)
    for z in np.unique(zg):
        sel = np.nonzero(zg == z)[0]
        cj = hs.cands.get(int(z), _EMPTY)
        if len(cj) == 0:
            continue
        keys = hs.keys[int(z)]
        base = 0
        best_key = np.full(len(sel), -np.inf)
        best_vid = np.full(len(sel), -1, dtype=np.int64)
        for j in cj:
            j = int(j)
            loc = X.table(j)[project(assign[sel], dep, X.dep(j), S)]
            kj = keys[base + loc]
            better = kj > best_key
            best_key = np.where(better, kj, best_key)
            best_vid = np.where(better, X.offset[j] + loc, best_vid)
            base += X.num_values(j)
        pick[sel] = best_vid
    return pick


def _residual_rows(
    X: ActivationLayer, i: int, sets: list[HeadSets], dep: np.ndarray
) -> torch.Tensor:
    """``x_i`` + every head's output, per assignment of ``dep``: the residual stream after
    attention (before the rest of the layer), ``[S^|dep|, d]``."""
    assign = assignments(X.S, len(dep))
    zg = X.offset[i] + X.table(i)[project(assign, dep, X.dep(i), X.S)]
    x_rows = X.values[torch.from_numpy(zg)]
    if not sets:
        return x_rows
    att = None
    for hs in sets:
        assert hs.head_out is not None
        pick = _attended(X, hs, zg, assign, dep)
        o = torch.zeros(len(zg), X.values.shape[1], dtype=X.values.dtype)
        ok = pick >= 0
        if ok.any():
            o[torch.from_numpy(ok)] = hs.head_out[torch.from_numpy(pick[ok])]
        att = o if att is None else att + o
    assert att is not None  # sets is not empty
    return x_rows + att


def _tabulate(
    x: torch.Tensor, plan: list[tuple[int, np.ndarray, int]], n: int, S: int, prune: bool
) -> ActivationLayer:
    """The layer of activations from the rows ``x`` (position by position, as in ``plan``:
    position, dependency set, number of rows): distinct values and their tables."""
    new_deps: list[np.ndarray | None] = [None] * n
    new_tables: list[np.ndarray | None] = [None] * n
    vals: list[torch.Tensor | None] = [None] * n
    start = 0
    for i, dep, r in plan:
        uniq, inv = distinct_rows(x[start : start + r])
        start += r
        inv = inv.astype(np.int64)
        if prune:
            dep, inv = prune_table(dep, inv, S)
        new_deps[i], new_tables[i], vals[i] = dep, inv, uniq
    offset = [0]
    for i in range(n):
        v = vals[i]
        offset.append(offset[-1] + (0 if v is None else len(v)))
    values = torch.cat([v for v in vals if v is not None]).detach()
    return ActivationLayer(new_deps, new_tables, values, np.array(offset), S)


def next_layer(
    model: Transformer,
    ell: int,
    X: ActivationLayer,
    sets: list[HeadSets],
    *,
    positions: np.ndarray | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    prune: bool = True,
) -> ActivationLayer:
    """Activations after layer ``ell`` (at ``positions``, default all), enumerated over their
    dependency sets, from the candidate sets ``sets`` of the layer's heads. The attended
    positions come from the sets; the rest of the layer is the model's own
    :meth:`~hardsoft.model.transformer.Block.after_attention`."""
    block = model.blocks[ell]
    n = X.n
    positions = np.arange(n) if positions is None else np.asarray(positions)
    chunks: list[torch.Tensor] = []
    plan: list[tuple[int, np.ndarray, int]] = []
    for i in (int(p) for p in positions):
        dep = _position_deps(X, i, sets, ell, max_rows)
        rows = _residual_rows(X, i, sets if block.heads else [], dep)
        plan.append((i, dep, len(rows)))
        chunks.append(rows)
    if not chunks:
        empty: list[np.ndarray | None] = [None] * n
        return ActivationLayer(empty, [None] * n, X.values[:0], np.zeros(n + 1, np.int64), X.S)
    with torch.no_grad():
        x = block.after_attention(torch.cat(chunks))
    return _tabulate(x, plan, n, X.S, prune)


# ---------------------------------------------------------------------------- whole model
@dataclass
class Analysis:
    """Every layer's activations under a restriction, the output's dependency set and its
    acceptance table (over assignments of ``output_deps``, mixed radix)."""

    restriction: Restriction
    layers: list[ActivationLayer]
    output_deps: np.ndarray
    output_values: np.ndarray  # [rows, d_out]
    accept_table: np.ndarray  # [rows] bool

    def predicted_accept(self, word: str) -> bool:
        idx = {a: i for i, a in enumerate(self.restriction.alphabet)}
        row = 0
        for p in self.output_deps:
            row = row * len(idx) + idx[word[int(p)]]
        return bool(self.accept_table[row])

    def accept_deps(self) -> np.ndarray:
        """The positions the acceptance bit (not the whole output row) depends on."""
        dep, _ = prune_table(
            self.output_deps, self.accept_table.astype(np.int64), len(self.restriction.alphabet)
        )
        return dep

    @property
    def output_constant(self) -> bool:
        return bool(np.all(self.accept_table == self.accept_table[0]))


def output_table(
    model: Transformer, X: ActivationLayer
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Output dependency set (pruned to the positions the output row really depends on),
    output rows and acceptance over assignments of it, by the model's own readout and
    acceptance rule."""
    j = X.n - 1
    with torch.no_grad():
        y = model.readout(X.values[X.offset[j] : X.offset[j + 1]])
    uniq, inv = distinct_rows(y)
    dep, table = prune_table(X.dep(j), inv[X.table(j)].astype(np.int64), X.S)
    rows = uniq[torch.from_numpy(table)].cpu().numpy()
    return dep, rows, model.accepts(torch.from_numpy(rows)).numpy()


def analyse(
    model: Transformer,
    restriction: Restriction,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    all_positions: bool = False,
    prune: bool = True,
) -> Analysis:
    """The exact dependency analysis of ``model`` (unique hard attention) under ``restriction``.

    ``all_positions`` computes the last layer at every position (default: only the output
    position, which is all the output needs).
    """
    check_unique_hard(model)
    with torch.no_grad():
        return _analyse(model, restriction, max_rows, all_positions, prune)


def _analyse(
    model: Transformer, restriction: Restriction, max_rows: int, all_positions: bool, prune: bool
) -> Analysis:
    em = engine_model(model)
    sym = symbol_ids(em, restriction.alphabet)
    X = embed_layer(em, restriction, sym)
    layers = [X]
    L = len(em.blocks)
    for ell in range(L):
        last = ell == L - 1 and not all_positions
        qpos = np.array([X.n - 1]) if last else None
        sets = [
            analyse_head(em, ell, h, X, query_positions=qpos)
            for h in range(len(em.blocks[ell].heads))
        ]
        X = next_layer(em, ell, X, sets, positions=qpos, max_rows=max_rows, prune=prune)
        layers.append(X)
    return analysis_of(em, restriction, layers)


def analysis_of(
    em: Transformer, restriction: Restriction, layers: list[ActivationLayer]
) -> Analysis:
    """The :class:`Analysis` from every layer's activations under ``restriction`` (the last
    layer at least at the output position), read out by the engine model ``em``."""
    deps, rows, acc = output_table(em, layers[-1])
    return Analysis(restriction, layers, deps, rows, acc)

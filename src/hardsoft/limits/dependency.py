"""Exact dependency analysis of a unique-hard-attention transformer under a restriction.

At a fixed restriction ρ every activation ``x_j^(k)`` (the residual vector after layer k at
position j) is a function of the free positions in a *dependency set* ``D_j^(k)``. The analysis
represents it by ``D_j^(k)`` and the finite table of its values over the ``|Σ|^|D|``
assignments of that set (Hahn (2020) §5, Definition 3: a c-transformer).

Attention (Hahn (2020), supplement S1, Definition 7 and Figure 3). For a head at query position i
and a value z of its query activation, each allowed key position j has a *maximum* and a *minimum*
attainable score over j's own possible values. Scores are compared as the pair (score, tie key) —
the tie key is j for ``rightmost`` and n-1-j for ``leftmost`` — so the order is total. The *floor*
is the candidate with the largest minimum; a candidate whose maximum is below the floor's minimum
can never be attended to, whatever the other free positions hold. The remaining candidates form
``A(z)``; since the attended position always lies in ``A(z)``, it is a function of the scores in
``A(z)`` alone, and the head's output at i depends only on ``D_i ∪ ⋃_z ⋃_{j∈A(z)} D_j``. This is
sound with ties (handled by the tie key) and masks (disallowed keys are never candidates).

Scores are snapped to a grid of ``1e-10 × (bound on |score|)`` before comparison, so the engine's
own comparisons are exact and transitive. The model's floating-point arithmetic can differ from
the engine's by rounding; the two agree unless two scores lie within rounding error of each other
(or of a grid boundary), which the witness check (running the model) would catch.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.limits.restriction import Restriction
from hardsoft.model.transformer import Head, Transformer

# combined keys round(score/eps) * n + tie are integers below 1e10 * n < 2^53: exact in float64
INT_MIN = float("-inf")
INT_MAX = float("inf")
SNAP = 1e-10
DEFAULT_MAX_ROWS = 1 << 14
_CHUNK_ENTRIES = 1 << 23
_EMPTY = np.zeros(0, dtype=np.int64)


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


def _dedupe(rows: torch.Tensor) -> tuple[torch.Tensor, np.ndarray]:
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


def _prune(dep: np.ndarray, table: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
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
            uniq, inv = _dedupe(emb[:, j])
            d, t = _prune(np.array([j], dtype=np.int64), inv.astype(np.int64), S)
            deps.append(d)
            tables.append(t)
            vals.append(uniq)
        else:
            deps.append(np.zeros(0, dtype=np.int64))
            tables.append(np.zeros(1, dtype=np.int64))
            vals.append(emb[index[s], j][None])
        offset.append(offset[-1] + len(vals[-1]))
    return ActivationLayer(deps, tables, torch.cat(vals).detach(), np.array(offset), S)


# ---------------------------------------------------------------------------- attention
@dataclass
class HeadSets:
    """The result of analysing one head at one layer.

    Per query value z (global value id of the query activation), ``cands[z]`` lists ``A(z)``;
    ``keys[z]`` gives, for each candidate, the combined (score, tie) keys of all its values in
    value-id order (flat, candidate by candidate). ``tuples`` (when requested) holds the
    Stage-2 bookkeeping of every (head, position, value) tuple.
    """

    cands: dict[int, np.ndarray] = field(default_factory=dict)
    keys: dict[int, np.ndarray] = field(default_factory=dict)
    tuples: list[TupleInfo] = field(default_factory=list)
    head_out: torch.Tensor | None = None  # [Nv, d]: value-id -> v W_O
    query_of: np.ndarray | None = None  # value id -> position


@dataclass
class TupleInfo:
    """One ((h, i), z) tuple: its dependency size, satisfaction, and the first ``k`` ranked
    activations that bring new free inputs (``kdeps``) with, for each, the value ids attaining
    the maximum score (``maxvals``)."""

    head: int
    z: int
    position: int
    dep_size: int
    satisfied: bool
    kdeps: list[int]
    maxvals: list[np.ndarray]


@dataclass
class _HeadOnLayer:
    """One head read on every value of a layer: queries and keys per value id, the snapping
    grid ``eps`` of the scores and the tie key of every value (its position j for rightmost,
    n-1-j for leftmost, so that a larger key wins)."""

    head: Head
    Q: torch.Tensor
    K: torch.Tensor
    eps: float
    tie: torch.Tensor


def _head_on_layer(
    model: Transformer, ell: int, h: int, X: ActivationLayer
) -> tuple[_HeadOnLayer, torch.Tensor]:
    """The head's view of layer ``X`` and what it writes for each value id (``v W_O``)."""
    block = model.blocks[ell]
    head = block.heads[h]
    n = X.n
    with torch.no_grad():
        Q, K, V = head.qkv(block.attn_input(X.values))
        written = head.result(V)
    scale = head.score_scale(n)  # a bound on |score|, for the grid only
    bound = float(Q.norm(dim=1).max()) * float(K.norm(dim=1).max()) * scale if len(Q) else 0.0
    eps = SNAP * max(bound, 1e-300)
    owner = torch.from_numpy(X.owner)
    tie = owner if head.spec.weighting == "rightmost" else (n - 1 - owner)
    return _HeadOnLayer(head, Q, K, eps, tie.to(torch.float64)), written


def _keys(hv: _HeadOnLayer, zc: torch.Tensor, n: int) -> torch.Tensor:
    """Combined keys ``round(score / eps) · n + tie`` ``[len(zc), Nv]`` of the query values
    ``zc`` against every value: integers, exactly comparable, ties broken by position."""
    with torch.no_grad():
        s = hv.head.scores(hv.Q[zc], hv.K, n)
    s.div_(hv.eps).round_()
    return s.mul_(n).add_(hv.tie[None, :])


def _extremes(
    key: torch.Tensor, X: ActivationLayer, pad_idx: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per key position: the largest and smallest key over its values, ``[rows, n]``."""
    n = X.n
    if pad_idx is not None:  # gather into [z, n, vmax] (padded with the first value)
        M = key[:, pad_idx[:, 0]]
        m = M.clone()
        for t in range(1, pad_idx.shape[1]):
            kt = key[:, pad_idx[:, t]]
            torch.maximum(M, kt, out=M)
            torch.minimum(m, kt, out=m)
        return M, m
    idx = torch.from_numpy(X.owner)[None, :].expand(len(key), key.shape[1])
    M = torch.full((len(key), n), INT_MIN, dtype=key.dtype).scatter_reduce(
        1, idx, key, "amax", include_self=True
    )
    m = torch.full((len(key), n), INT_MAX, dtype=key.dtype).scatter_reduce(
        1, idx, key, "amin", include_self=True
    )
    return M, m


def _candidates(
    head: Head, M: torch.Tensor, m: torch.Tensor, qp: torch.Tensor, n: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``A(z)`` per query row (Boolean ``[rows, n]``): the allowed keys whose largest key is
    not below the floor (the largest smallest key), and ``M`` with disallowed keys at −inf."""
    allowed = head.allowed(qp, n)
    if allowed is not None:
        M = M.masked_fill(~allowed, INT_MIN)
        m = m.masked_fill(~allowed, INT_MIN)
    floor = m.max(dim=1).values
    A = (M >= floor[:, None]) & (floor[:, None] > INT_MIN)
    if allowed is not None:
        A &= allowed
    return A, M


def _record_sets(
    out: HeadSets, X: ActivationLayer, A: torch.Tensor, key_np: np.ndarray, zc_np: np.ndarray
) -> None:
    """Store ``A(z)`` and its candidates' keys (all their values, flat) for each query z."""
    counts = A.sum(1).numpy()
    rows_np, cols_np = (t.numpy() for t in torch.nonzero(A, as_tuple=True))
    rep = np.diff(X.offset)[cols_np]
    total = int(rep.sum())
    flat_row = np.repeat(rows_np, rep)
    starts = np.cumsum(rep) - rep
    flat_vid = np.repeat(X.offset[cols_np], rep) + (np.arange(total) - np.repeat(starts, rep))
    flat_key = key_np[flat_row, flat_vid]
    cand_split = np.cumsum(counts)[:-1]
    key_split = np.cumsum(np.bincount(flat_row, minlength=len(zc_np)))[:-1]
    for z, cj, kz in zip(zc_np, np.split(cols_np, cand_split), np.split(flat_key, key_split)):
        out.cands[int(z)] = cj
        out.keys[int(z)] = kz


def _record_tuples(
    out: HeadSets,
    X: ActivationLayer,
    h: int,
    A: torch.Tensor,
    M: torch.Tensor,
    key_np: np.ndarray,
    zc_np: np.ndarray,
    qp_np: np.ndarray,
    sat_bound: int,
    k_track: int,
) -> None:
    """Stage 2's bookkeeping for each ((h, i), z): rank ``A(z)`` by largest key, walk the
    ranking (:func:`_walk`), and keep the first ``k_track`` new-input activations with the
    value ids attaining their largest key."""
    counts = A.sum(1).numpy()
    n = X.n
    Mm = torch.where(A, M, torch.full_like(M, INT_MIN))
    t = int(min(n, max(8, 4 * (sat_bound + k_track) + 8)))
    top = torch.topk(Mm, t, dim=1).indices.numpy()
    M_np = M.numpy()
    for r in range(len(zc_np)):
        z, i = int(zc_np[r]), int(qp_np[r])
        cnt = int(counts[r])
        if cnt == 0:
            out.tuples.append(TupleInfo(h, z, i, 0, True, [], []))
            continue
        order = top[r][: min(cnt, t)]
        info = _walk(X, order, sat_bound, k_track, final=cnt <= t)
        if info is None:  # inconclusive within the top t: rank all of A(z)
            full = torch.topk(Mm[r], cnt).indices.numpy()
            info = _walk(X, full, sat_bound, k_track, final=True)
            assert info is not None  # a final walk always decides
        dep_size, seq = info
        satisfied = dep_size <= sat_bound
        kdeps = [] if satisfied else seq[:k_track]
        maxvals = []
        for j in kdeps:
            kv = key_np[r, X.offset[j] : X.offset[j + 1]]
            maxvals.append(np.nonzero(kv == M_np[r, j])[0].astype(np.int64))
        out.tuples.append(TupleInfo(h, z, i, dep_size, satisfied, kdeps, maxvals))


def _query_ids(X: ActivationLayer, query_positions: np.ndarray | None) -> np.ndarray:
    """The value ids of the query positions (all values when None)."""
    if query_positions is None:
        return np.arange(X.offset[-1])
    return np.concatenate(
        [np.arange(X.offset[i], X.offset[i + 1]) for i in query_positions]
    ).astype(np.int64)


def _pad_index(X: ActivationLayer, vmax: int) -> torch.Tensor | None:
    """For at most 8 values per position: value ids ``[n, vmax]`` padded with each position's
    first value (a gather then beats a scatter in :func:`_extremes`); else None."""
    counts_v = np.diff(X.offset)
    if vmax > 8:
        return None
    t = np.arange(vmax)[None, :]
    return torch.from_numpy(X.offset[:-1, None] + np.minimum(t, counts_v[:, None] - 1))


def analyse_head(
    model: Transformer,
    ell: int,
    h: int,
    X: ActivationLayer,
    *,
    query_positions: np.ndarray | None = None,
    want_sets: bool = True,
    want_tuples: bool = False,
    k: int = 0,
    c: int | None = None,
) -> HeadSets:
    """Candidates ``A(z)`` of head ``h`` of layer ``ell`` for every value z of every query
    position (or only ``query_positions``); optionally the Stage-2 tuple bookkeeping with
    satisfaction bound ``c*k`` (``c`` defaults to the layer's largest dependency set)."""
    n = X.n
    hv, written = _head_on_layer(model, ell, h, X)
    sat_bound = (X.max_dep() if c is None else c) * k
    k_track = max(k, 1)
    qids = _query_ids(X, query_positions)
    qpos_all = X.owner[qids]
    out = HeadSets(head_out=written, query_of=X.owner)
    vmax = int(np.diff(X.offset).max()) if n else 1
    pad_idx = _pad_index(X, vmax)
    chunk = max(1, _CHUNK_ENTRIES // max(hv.K.shape[0], n * vmax, 1))
    for start in range(0, len(qids), chunk):
        zc = torch.from_numpy(qids[start : start + chunk])
        qp = torch.from_numpy(qpos_all[start : start + chunk])
        key = _keys(hv, zc, n)
        M, m = _extremes(key, X, pad_idx)
        A, M = _candidates(hv.head, M, m, qp, n)
        key_np = key.numpy()
        if want_sets:
            _record_sets(out, X, A, key_np, zc.numpy())
        if want_tuples:
            _record_tuples(out, X, h, A, M, key_np, zc.numpy(), qp.numpy(), sat_bound, k_track)
    return out


def _walk(
    X: ActivationLayer, order: np.ndarray, sat_bound: int, k_track: int, final: bool = False
) -> tuple[int, list[int]] | None:
    """Walk a ranking: (size of the union of inputs, new-input activations in rank order).

    Returns None if the prefix ``order`` cannot decide satisfaction (the caller then ranks all).
    """
    union: set[int] = set()
    seq: list[int] = []
    for j in order:
        d = X.dep(int(j))
        if any(int(p) not in union for p in d):
            seq.append(int(j))
            union.update(int(p) for p in d)
        if len(union) > sat_bound and len(seq) >= k_track:
            return len(union), seq
    if final or len(order) < 1:
        return len(union), seq
    return None if len(union) <= sat_bound else (len(union), seq)


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
        uniq, inv = _dedupe(x[start : start + r])
        start += r
        inv = inv.astype(np.int64)
        if prune:
            dep, inv = _prune(dep, inv, S)
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
        dep, _ = _prune(
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
    uniq, inv = _dedupe(y)
    dep, table = _prune(X.dep(j), inv[X.table(j)].astype(np.int64), X.S)
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
    deps, rows, acc = output_table(em, X)
    return Analysis(restriction, layers, deps, rows, acc)

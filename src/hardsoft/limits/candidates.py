"""Which key positions a unique-hard head can attend to under a restriction: the candidate sets
``A(z)`` of the dependency analysis (:mod:`hardsoft.limits.dependency`, which re-exports these
names), and the Stage-2 tuple bookkeeping of the Depth Reduction Lemma.

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

from dataclasses import dataclass, field

import numpy as np
import torch

from hardsoft.limits.activation import ActivationLayer
from hardsoft.model.transformer import Head, Transformer

__all__ = ["HeadSets", "TupleInfo", "analyse_head"]

# combined keys round(score/eps) * n + tie are integers below 1e10 * n < 2^53: exact in float64
INT_MIN = float("-inf")
INT_MAX = float("inf")
SNAP = 1e-10
_CHUNK_ENTRIES = 1 << 23


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

"""Attention weightings and masks, computed exactly.

Hard weightings are exact: the maximum is found by comparison, ties go to the leftmost or
rightmost maximal position (unique-hard attention) or share the weight equally (average-hard),
never through a softmax approximation. Softmax is a stable log-sum-exp (scores up to 1e12 are
fine in float64). A query row with no allowed position outputs the zero vector.

Two execution paths compute the same function:

* :func:`attend` materialises the ``[B, n, n]`` scores (and can return the weights);
* :func:`attend_chunked` streams blocks of queries and keys with running maxima, so memory is
  ``O(chunk^2 + n·d)`` instead of ``O(n^2)``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from hardsoft.model.spec import Mask

NEG_INF = float("-inf")


def pair_scores(q: torch.Tensor, k: torch.Tensor, weighting: str) -> torch.Tensor:
    """``q · kᵀ`` ``[..., rows, keys]``. For hard weightings bitwise equal keys get bitwise
    equal scores, so an exact tie stays a tie: a BLAS matmul may round equal dot products
    differently in different columns, which broke ties by rounding (found by the fast-path
    differential test). Equal keys are scored once (one column per distinct key) and the
    column is gathered for each of them; with no equal keys this is the plain matmul. Softmax
    is continuous in the scores and keeps the matmul."""
    if weighting == "softmax" or q.shape[-1] == 0 or k.shape[-2] < 2:
        return q @ k.transpose(-1, -2)
    if q.shape[:-2] != k.shape[:-2]:  # broadcast batches: score every pair in one order
        out = q[..., :, None, 0] * k[..., None, :, 0]
        for c in range(1, q.shape[-1]):
            out = out + q[..., :, None, c] * k[..., None, :, c]
        return out
    flat = k.reshape(-1, k.shape[-1])
    keys, inverse = torch.unique(flat, dim=0, return_inverse=True)
    if keys.shape[0] == flat.shape[0]:  # no two keys equal: no tie to keep
        return q @ k.transpose(-1, -2)
    scores = q @ keys.transpose(0, 1)  # [..., rows, distinct keys]
    index = inverse.reshape(k.shape[:-1])[..., None, :]
    return torch.gather(scores, -1, index.expand(*scores.shape[:-1], k.shape[-2]))


def allowed_block(
    mask: Mask | str, q_start: int, q_end: int, k_start: int, k_end: int, device: torch.device
) -> torch.Tensor | None:
    """Boolean ``[q, k]`` matrix of allowed (query i, key j) pairs, or None if all are allowed.

    Positions are absolute indices, so blocks of a chunked computation agree with the full one.
    The table itself is :meth:`Mask.allows`.
    """
    mask = Mask.parse(mask, "mask")
    if mask is Mask.NONE:
        return None
    i = torch.arange(q_start, q_end, device=device)[:, None]
    j = torch.arange(k_start, k_end, device=device)[None, :]
    return mask.allows(i, j)


def weights_from_scores(scores: torch.Tensor, allowed: torch.Tensor | None, weighting: str):
    """Attention weights ``[..., n_q, n_k]`` from scores (already scaled by 1/τ for softmax)."""
    if allowed is not None:
        scores = scores.masked_fill(~allowed, NEG_INF)
    if weighting in ("leftmost", "rightmost"):
        row_max, pick = unique_hard_pick(scores, weighting)
        idx = torch.arange(scores.shape[-1], device=scores.device)
        return ((idx == pick[..., None]) & (row_max > NEG_INF)[..., None]).to(scores.dtype)
    row_max = scores.amax(dim=-1, keepdim=True)
    empty = row_max == NEG_INF
    if weighting == "softmax":
        shifted = torch.where(empty, torch.zeros_like(scores), scores - row_max)
        w = torch.exp(shifted)
        if allowed is not None:
            w = w.masked_fill(~allowed, 0.0)
        w = w / w.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(w.dtype).tiny)
        return torch.where(empty, torch.zeros_like(w), w)
    if weighting == "average":
        w = ((scores == row_max) & ~empty).to(scores.dtype)
        return w / w.sum(dim=-1, keepdim=True).clamp_min(1.0)
    raise ValueError(f"unknown weighting {weighting!r}")


def unique_hard_pick(scores: torch.Tensor, weighting: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Row maxima of ``scores [..., n_k]`` and the index of the leftmost (or rightmost) key
    attaining each, exactly: ``torch.max`` over a dimension returns the first maximal index
    (documented), and the last one is the first of the reversed row. One pass instead of a
    max, a comparison and a masked index reduction (see benchmarks/results/hard_pick.md)."""
    if weighting == "leftmost":
        return scores.max(dim=-1)
    row_max, rev = scores.flip(-1).max(dim=-1)
    return row_max, (scores.shape[-1] - 1) - rev


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    weighting: str,
    mask: str,
    score_scale: float,
    *,
    return_weights: bool = False,
    use_sdpa: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One head on ``q, k: [B, n, d_head]``, ``v: [B, n, d_value]``.

    ``score_scale`` multiplies ``q·k`` (it holds 1/sqrt(d_head) and, for softmax, 1/τ(n)).
    Softmax without requested weights goes through ``scaled_dot_product_attention``.
    """
    n = q.shape[-2]
    allowed = allowed_block(mask, 0, n, 0, n, q.device)
    if weighting == "softmax" and use_sdpa and not return_weights and q.shape[-1] > 0:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=score_scale)
        if allowed is not None:
            empty = ~allowed.any(dim=-1)
            out = out.masked_fill(empty[:, None], 0.0)
        return out, None
    scores = pair_scores(q, k, weighting) * score_scale
    w = weights_from_scores(scores, allowed, weighting)
    return w @ v, (w if return_weights else None)


def attend_chunked(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    weighting: str,
    mask: str,
    score_scale: float,
    chunk: int,
    progress: Callable[[int, int], None] | None = None,
) -> torch.Tensor:
    """Same function as :func:`attend`, streaming key blocks with running statistics.

    Softmax keeps a running max and denominator (online softmax); leftmost keeps the first
    strict improvement, rightmost the last non-strict one; average keeps the running max, the
    number of positions attaining it and the sum of their values. ``progress(rows done, n)``
    is called after each block of query rows (long inputs: the CLI shows it).
    """
    m, norm, acc = attention_state(q, k, v, weighting, mask, score_scale, chunk, progress)
    return acc / norm.clamp_min(torch.finfo(v.dtype).tiny)[..., None] * (norm > 0)[..., None]


def attention_state(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    weighting: str,
    mask: str,
    score_scale: float,
    chunk: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The streamed statistics of every query row: ``m [B, n]`` (the row maximum, −inf if no
    key is allowed), ``norm [B, n]`` and ``acc [B, n, d_v]``; the output is ``acc / norm``.
    Softmax: ``norm = Σ e^(s−m)``, ``acc = Σ e^(s−m) v``; average: the count and sum of the
    maximal keys; unique-hard: 1 and the picked value."""
    B, n, _ = q.shape
    d_v = v.shape[-1]
    m_all = torch.full((B, n), NEG_INF, dtype=q.dtype, device=q.device)
    norm_all = torch.zeros(B, n, dtype=v.dtype, device=v.device)
    acc_all = torch.zeros(B, n, d_v, dtype=v.dtype, device=v.device)
    for qs in range(0, n, chunk):
        qe = min(n, qs + chunk)
        m, norm, acc = _row_block_state(q, k, v, weighting, mask, score_scale, chunk, qs, qe)
        m_all[:, qs:qe], norm_all[:, qs:qe], acc_all[:, qs:qe] = m, norm, acc
        if progress is not None:
            progress(qe, n)
    return m_all, norm_all, acc_all


def _row_block_state(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    weighting: str,
    mask: str,
    score_scale: float,
    chunk: int,
    qs: int,
    qe: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`attention_state` of the query rows ``qs:qe``, streaming key blocks."""
    B, n, _ = q.shape
    d_v = v.shape[-1]
    mask_kind = Mask.parse(mask, "mask")
    qc = q[:, qs:qe]
    m = torch.full((B, qe - qs), NEG_INF, dtype=q.dtype, device=q.device)
    acc = torch.zeros(B, qe - qs, d_v, dtype=v.dtype, device=v.device)
    norm = torch.zeros(B, qe - qs, dtype=v.dtype, device=v.device)
    for ks in range(0, n, chunk):
        ke = min(n, ks + chunk)
        if not mask_kind.block_may_be_allowed(qs, qe, ks, ke):
            continue
        allowed = (
            None
            if mask_kind.block_fully_allowed(qs, qe, ks, ke)
            else allowed_block(mask, qs, qe, ks, ke, q.device)
        )
        vb = v[:, ks:ke]
        if weighting in ("leftmost", "rightmost"):
            bmax, pick = hard_block_pick(qc, k[:, ks:ke], score_scale, allowed, weighting)
            # leftmost: only a strictly larger block maximum replaces the running choice;
            # rightmost: an equal one does too; a row with no allowed key never takes
            take = (bmax > m) if weighting == "leftmost" else (bmax >= m) & (bmax > NEG_INF)
            picked = torch.gather(vb, 1, pick[..., None].expand(-1, -1, d_v))
            acc = torch.where(take[..., None], picked, acc)
            norm = torch.where(take, torch.ones_like(norm), norm)
            m = torch.where(take, bmax, m)
            continue
        s = pair_scores(qc, k[:, ks:ke], weighting) * score_scale
        if allowed is not None:
            s = s.masked_fill(~allowed, NEG_INF)
        bmax = s.amax(dim=-1)
        if weighting == "softmax":
            new_m = torch.maximum(m, bmax)
            safe_m = torch.where(new_m == NEG_INF, torch.zeros_like(new_m), new_m)
            decay = torch.exp(m - safe_m)
            p = torch.exp(s - safe_m[..., None])
            acc = acc * decay[..., None] + p @ vb
            norm = norm * decay + p.sum(-1)
            m = new_m
            continue
        hit = (s == bmax[..., None]) & (bmax[..., None] > NEG_INF)
        if weighting == "average":
            bsum = hit.to(v.dtype) @ vb
            bcnt = hit.sum(-1).to(v.dtype)
            better = bmax > m
            same = (bmax == m) & (bmax > NEG_INF)
            acc = torch.where(better[..., None], bsum, acc + same[..., None] * bsum)
            norm = torch.where(better, bcnt, norm + same * bcnt)
            m = torch.maximum(m, bmax)
            continue
        raise ValueError(f"unknown weighting {weighting!r}")
    return m, norm, acc


def softmax_one_key_changed(
    state: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    q: torch.Tensor,
    k_i: torch.Tensor,
    v_i: torch.Tensor,
    k_new: torch.Tensor,
    v_new: torch.Tensor,
    i: torch.Tensor,
    mask: str,
    score_scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A softmax head's outputs after the key and value at one position change, from the
    :func:`attention_state` of the unchanged input: O(n·d) per variant instead of O(n²).

    ``state`` is ``(m, norm, acc)`` ``[1, n]`` of the original input; ``q [1, n, d]`` its
    queries; variant b changes position ``i[b]`` from key/value ``k_i[b], v_i[b]`` to
    ``k_new[b], v_new[b]`` (``[B, d]``). Row j's term for key i is replaced in its sums:
    ``acc' = acc − e^(s−m) v_i + e^(s'−m) v'_i`` (with the reference max raised to s' if
    needed). Returns the outputs ``[B, n, d_v]`` and ``redo [B, n]``: rows whose update is not
    reliable — the changed position itself (its query changed too) and rows where the removed
    term carried more than half of the mass (the subtraction would cancel) — which the caller
    must recompute."""
    m, norm, acc = (t[0] for t in state)
    n = q.shape[1]
    rows = torch.arange(n, device=q.device)
    ok = Mask.parse(mask, "mask").allows(rows[None, :], i[:, None])  # [B, n]: j may see i
    s_old = (q[0] @ k_i.T).T * score_scale  # [B, n]
    s_new = (q[0] @ k_new.T).T * score_scale
    ref = torch.where(ok, torch.maximum(m[None], s_new), m[None])
    safe = torch.where(ref == NEG_INF, torch.zeros_like(ref), ref)
    decay = torch.exp(m[None] - safe)
    e_old = torch.where(ok, torch.exp(s_old - safe), torch.zeros_like(s_old))
    e_new = torch.where(ok, torch.exp(s_new - safe), torch.zeros_like(s_new))
    new_norm = norm[None] * decay - e_old + e_new
    new_acc = (
        acc[None] * decay[..., None]
        - e_old[..., None] * v_i[:, None]
        + e_new[..., None] * v_new[:, None]
    )
    out = new_acc / new_norm.clamp_min(torch.finfo(acc.dtype).tiny)[..., None]
    out = out * (new_norm > 0)[..., None]
    redo = (rows[None, :] == i[:, None]) | (e_old > 0.5 * norm[None] * decay)
    return out, redo


def hard_block_pick(
    q: torch.Tensor,
    k: torch.Tensor,
    score_scale: float,
    allowed: torch.Tensor | None,
    weighting: str,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One block of unique-hard attention: each query row's maximal score over the block's
    keys and the index of the leftmost (rightmost) key attaining it; rows with no allowed key
    get ``-inf``. For rightmost the keys are scored in reverse order (flipping ``k``, which is
    ``[B, block, d]``, not the ``[B, q, block]`` scores), so that torch.max's first maximal
    index is the block's last one."""
    reverse = weighting == "rightmost"
    kb = k.flip(1) if reverse else k
    s = pair_scores(q, kb, weighting) * score_scale
    if allowed is not None:
        s = s.masked_fill(~(allowed.flip(-1) if reverse else allowed), NEG_INF)
    row_max, first = s.max(dim=-1)
    return row_max, ((k.shape[1] - 1) - first) if reverse else first

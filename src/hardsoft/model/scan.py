"""Segmented prefix scans of attention states: the exact building block of the fast paths.

An attention head that reads a run of keys ``j`` with scores ``s_j`` (the same for every query
reading them) can be summarised by a small *state*, and the states of two adjacent runs combine
by an associative merge (online softmax; a running maximum with a count for average-hard; a
running maximum with the first or last index attaining it for unique-hard):

=========== ================================ ===========================================
weighting   state (``m``, ``w``, ``a``)       value read from it
=========== ================================ ===========================================
softmax     max, Σ e^(s−m), Σ e^(s−m) v_j     a / w
average     max, #{j: s_j = m}, Σ_{s_j=m} v_j  a / w
leftmost    max, first j with s_j = m, v_j    a
rightmost   max, last j with s_j = m, v_j     a
=========== ================================ ===========================================

:func:`segmented_scan` computes the inclusive prefix state of every element of ``[B, N]``
sequences cut into contiguous segments (a prefix never crosses a segment boundary) by the
Hillis–Steele doubling scan: ``⌈log₂ N⌉`` vectorised merge steps, O(N·d·log N) work, and a merge
tree of depth ``log₂ N``, so rounding errors grow like ``log N`` rather than ``N``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from hardsoft.model.spec import Weighting

NEG_INF = float("-inf")


@dataclass
class ScanState:
    """States ``[B, N]`` (``a``: ``[B, N, d]``); see the module docstring. ``idx`` holds the
    picked key's position (unique-hard only, else None)."""

    m: torch.Tensor
    w: torch.Tensor
    a: torch.Tensor
    idx: torch.Tensor | None = None

    def slice(self, sl: slice) -> ScanState:
        return ScanState(
            self.m[:, sl],
            self.w[:, sl],
            self.a[:, sl],
            None if self.idx is None else self.idx[:, sl],
        )

    def where(self, cond: torch.Tensor, other: ScanState) -> ScanState:
        """``self`` where ``cond`` ``[B, N]`` holds, else ``other``."""
        idx = None
        if self.idx is not None and other.idx is not None:
            idx = torch.where(cond, self.idx, other.idx)
        return ScanState(
            torch.where(cond, self.m, other.m),
            torch.where(cond, self.w, other.w),
            torch.where(cond[..., None], self.a, other.a),
            idx,
        )

    def cat(self, other: ScanState) -> ScanState:
        idx = None
        if self.idx is not None and other.idx is not None:
            idx = torch.cat([self.idx, other.idx], 1)
        return ScanState(
            torch.cat([self.m, other.m], 1),
            torch.cat([self.w, other.w], 1),
            torch.cat([self.a, other.a], 1),
            idx,
        )


def initial_state(
    scores: torch.Tensor, values: torch.Tensor, positions: torch.Tensor | None, weighting: str
) -> ScanState:
    """The state of each single key: its score, weight 1, its value (and its position)."""
    w = Weighting.parse(weighting, "weighting")
    idx = None
    if w.is_unique_hard:
        idx = (
            positions
            if positions is not None
            else torch.arange(scores.shape[1], device=scores.device).expand_as(scores)
        )
    return ScanState(scores, torch.ones_like(scores), values, idx)


def merge(left: ScanState, right: ScanState, weighting: str) -> ScanState:
    """The state of the keys of ``left`` followed by those of ``right`` (``left`` holds the
    earlier keys: unique-hard ties go to it for leftmost and to ``right`` for rightmost)."""
    if weighting == Weighting.SOFTMAX:
        m = torch.maximum(left.m, right.m)
        if bool(torch.isinf(m).any()):
            safe = torch.where(m == NEG_INF, torch.zeros_like(m), m)
            el, er = torch.exp(left.m - safe), torch.exp(right.m - safe)
        else:  # the larger side gets factor 1, the other exp(-|difference|)
            e = torch.exp(-(left.m - right.m).abs())
            left_big = left.m >= right.m
            one = torch.ones_like(e)
            el, er = torch.where(left_big, one, e), torch.where(left_big, e, one)
        w = left.w * el + right.w * er
        return ScanState(m, w, left.a * el[..., None] + right.a * er[..., None])
    if weighting == Weighting.AVERAGE:
        m = torch.maximum(left.m, right.m)
        tl = ((left.m == m) & (m > NEG_INF)).to(left.w.dtype)
        tr = ((right.m == m) & (m > NEG_INF)).to(left.w.dtype)
        return ScanState(
            m, left.w * tl + right.w * tr, left.a * tl[..., None] + right.a * tr[..., None]
        )
    if weighting == Weighting.LEFTMOST:
        take = right.m > left.m
    else:
        take = (right.m >= left.m) & (right.m > NEG_INF)
    return right.where(take, left)


def segmented_scan(
    scores: torch.Tensor,
    values: torch.Tensor,
    weighting: str,
    segments: torch.Tensor | None = None,
    positions: torch.Tensor | None = None,
) -> ScanState:
    """Inclusive prefix states of ``scores [B, N]`` / ``values [B, N, d]`` along dim 1, restarting
    wherever ``segments [B, N]`` (sorted ids, or None: one segment) changes. ``positions``: the
    key positions recorded by unique-hard picks (default 0..N−1)."""
    state = initial_state(scores, values, positions, weighting)
    n = scores.shape[1]
    off = 1
    while off < n:
        left, right = state.slice(slice(None, n - off)), state.slice(slice(off, None))
        merged = merge(left, right, weighting)
        if segments is not None:
            merged = merged.where(segments[:, off:] == segments[:, : n - off], right)
        state = ScanState(state.m.clone(), state.w.clone(), state.a.clone(), state.idx)
        state.m[:, off:], state.w[:, off:], state.a[:, off:] = merged.m, merged.w, merged.a
        if state.idx is not None and merged.idx is not None:
            state.idx = state.idx.clone()
            state.idx[:, off:] = merged.idx
        off *= 2
    return state


def prefix_sum(x: torch.Tensor) -> torch.Tensor:
    """Inclusive cumulative sum along dim 1 in two levels (blocks of about √N, then the block
    totals), so the rounding error grows like √N rather than N."""
    n = x.shape[1]
    bk = max(1, math.isqrt(n))
    nb = -(-n // bk)
    pad = nb * bk - n
    if pad:
        x = torch.cat([x, x.new_zeros(x.shape[0], pad, *x.shape[2:])], 1)
    blocks = x.reshape(x.shape[0], nb, bk, *x.shape[2:]).cumsum(2)
    totals = blocks[:, :, -1]
    carry = torch.cat([torch.zeros_like(totals[:, :1]), totals[:, :-1].cumsum(1)], 1)
    out = (blocks + carry[:, :, None]).reshape(x.shape[0], nb * bk, *x.shape[2:])
    return out[:, :n]


def read_state(state: ScanState, index: torch.Tensor, valid: torch.Tensor) -> ScanState:
    """The states at ``index [B, ...]`` (positions along dim 1); where ``valid`` is False, the
    empty state (``m = −∞``, nothing attended)."""
    b = index.shape[0]
    flat = index.clamp_min(0).reshape(b, -1)
    ok = valid.reshape(b, -1)
    d = state.a.shape[-1]
    m = torch.where(
        ok, state.m.gather(1, flat), torch.full_like(flat, NEG_INF, dtype=state.m.dtype)
    )
    w = torch.where(ok, state.w.gather(1, flat), torch.zeros_like(m))
    a = state.a.gather(1, flat[..., None].expand(-1, -1, d)) * ok[..., None]
    idx = None if state.idx is None else torch.where(ok, state.idx.gather(1, flat), -1)
    shape = index.shape
    return ScanState(
        m.view(shape), w.view(shape), a.view(*shape, d), None if idx is None else idx.view(shape)
    )


def finish(state: ScanState, weighting: str) -> torch.Tensor:
    """The attention output of each state (0 where nothing is attended)."""
    if Weighting.parse(weighting, "weighting").is_unique_hard:
        return state.a * (state.m > NEG_INF)[..., None]
    w = state.w[..., None]
    return torch.where(w > 0, state.a / w.clamp_min(torch.finfo(state.a.dtype).tiny), 0.0)

"""The fast attention kernels: given what detection (:mod:`hardsoft.model.fastpath`) found out
about a head (uniform scores, query-independent scores, a window of keys per query, key
classes), compute its output exactly as the dense path would, up to summation order.

Also used by the streaming runner (:mod:`hardsoft.stream`), which calls the same kernels on one
chunk of queries at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from hardsoft.model.attention import weights_from_scores
from hardsoft.model.scan import NEG_INF, ScanState, finish, prefix_sum, read_state, segmented_scan
from hardsoft.model.spec import Mask, Weighting

# ---- masks as ranges ------------------------------------------------------------------------


def mirrored(weighting: Weighting, mask: Mask) -> tuple[bool, Weighting, Mask]:
    """Past masks become future masks on the reversed sequence (leftmost <-> rightmost)."""
    if mask not in (Mask.PAST, Mask.STRICT_PAST):
        return False, weighting, mask
    swap = {Weighting.LEFTMOST: Weighting.RIGHTMOST, Weighting.RIGHTMOST: Weighting.LEFTMOST}
    return (
        True,
        swap.get(weighting, weighting),
        (Mask.FUTURE if mask is Mask.PAST else Mask.STRICT_FUTURE),
    )


def last_allowed(mask: Mask, b: int, n: int, device: torch.device) -> torch.Tensor:
    """For none / future / strict-future masks: the last allowed key (0-based) of each query,
    ``[B, n]`` (−1: none)."""
    i = torch.arange(n, device=device)
    if mask is Mask.NONE:
        hi = torch.full_like(i, n - 1)
    else:
        hi = i if mask is Mask.FUTURE else i - 1
    return hi.expand(b, n)


def mask_range(mask: Mask, n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The allowed keys ``[lo_i, hi_i]`` (1-based, as float64 ``[n]``) of every query i."""
    i = torch.arange(1, n + 1, dtype=torch.float64, device=device)
    one, last = torch.ones_like(i), torch.full_like(i, float(n))
    lo = {Mask.PAST: i, Mask.STRICT_PAST: i + 1}.get(mask, one)
    hi = {Mask.FUTURE: i, Mask.STRICT_FUTURE: i - 1}.get(mask, last)
    return lo, hi


def threshold(weighting: Weighting, dtype: torch.dtype) -> float:
    """Scores more than this below the row maximum get exactly zero weight in the dense path:
    exp underflows (softmax); any gap (hard weightings)."""
    if weighting is not Weighting.SOFTMAX:
        return 0.0
    tiny = torch.finfo(dtype).smallest_normal * torch.finfo(dtype).eps
    return -math.log(tiny) + 5.0


def score_slack(q: torch.Tensor, kabs: torch.Tensor, scale: float, terms: int) -> torch.Tensor:
    """A bound ``[B, n]`` on the rounding error of each query's scores (both sides)."""
    eps = torch.finfo(q.dtype).eps
    return 8.0 * (terms + 4) * eps * abs(scale) * (q.abs() @ kabs.to(q.dtype))


# ---- uniform and scan ------------------------------------------------------------------------


def uniform_attention(v: torch.Tensor, weighting: str, mask: str) -> torch.Tensor:
    """Attention with all scores equal: the mean of the allowed values (softmax, average-hard),
    or the first / last allowed value (leftmost / rightmost), by prefix sums."""
    flip, w, m = mirrored(Weighting.parse(weighting, "weighting"), Mask.parse(mask, "mask"))
    if flip:
        v = v.flip(1)
    b, n, _ = v.shape
    hi = last_allowed(m, b, n, v.device)
    ok = (hi >= 0)[..., None]
    if w is Weighting.LEFTMOST:
        out = v[:, :1].expand_as(v) * ok
    elif w is Weighting.RIGHTMOST:
        out = v.gather(1, hi.clamp_min(0)[..., None].expand_as(v)) * ok
    else:
        sums = prefix_sum(v).gather(1, hi.clamp_min(0)[..., None].expand_as(v))
        out = sums / (hi + 1).clamp_min(1)[..., None].to(v.dtype) * ok
    return out.flip(1) if flip else out


def scan_attention(s: torch.Tensor, v: torch.Tensor, weighting: str, mask: str) -> torch.Tensor:
    """Attention with query-independent scores ``s [B, n]`` (one prefix scan)."""
    flip, w, m = mirrored(Weighting.parse(weighting, "weighting"), Mask.parse(mask, "mask"))
    if flip:
        s, v = s.flip(1), v.flip(1)
    state = segmented_scan(s, v, w)
    hi = last_allowed(m, s.shape[0], s.shape[1], s.device)
    out = finish(read_state(state, hi, hi >= 0), w)
    return out.flip(1) if flip else out


def window_bounds(
    abc: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, t: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The keys ``[wlo, whi]`` (1-based) whose score ``A + B·j + C·j²`` can be within ``t`` of
    the row maximum over ``[lo, hi]``. Concave (C < 0): around the clipped vertex; linear: at
    the end the score rises towards; convex: the whole range (never narrower)."""
    a_, b_, c_ = abc.unbind(-1)
    concave = c_ < 0
    safe_c = torch.where(concave, c_, -torch.ones_like(c_))
    vertex = -b_ / (2 * safe_c)
    clipped = torch.minimum(torch.maximum(vertex, lo), hi)
    r = torch.sqrt((clipped - vertex) ** 2 + t / (-safe_c) + 0.25)
    c_lo, c_hi = torch.floor(vertex - r), torch.ceil(vertex + r)
    linear = c_ == 0
    reach = torch.where(b_ != 0, t / b_.abs().clamp_min(1e-300), torch.full_like(b_, math.inf))
    up = b_ > 0
    l_lo = torch.where(up, torch.floor(hi - reach), lo)
    l_hi = torch.where(up, hi, torch.ceil(lo + reach))
    wlo = torch.where(concave, c_lo, torch.where(linear, l_lo, lo))
    whi = torch.where(concave, c_hi, torch.where(linear, l_hi, hi))
    wlo = torch.maximum(wlo.nan_to_num(nan=-math.inf), lo)
    whi = torch.minimum(whi.nan_to_num(nan=math.inf), hi)
    return wlo, whi


WINDOW_CHUNK = 1 << 15
"""(query, key) pairs per block of :func:`attend_window`: its temporaries (about 10 arrays of
this many elements) stay in a core's cache, and none is a fresh multi-megabyte allocation
(at n = 10^6 this block size made the window path 1.5x faster than blocks of 4M pairs)."""


def attend_window(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    wlo: torch.Tensor,
    whi: torch.Tensor,
    width: int,
    scale: float,
    weighting: Weighting,
) -> torch.Tensor:
    """Attention of every query over its keys ``wlo..whi`` (at most ``width`` of them),
    computed in blocks of queries so memory stays O(block·width·d). Keys and values are
    gathered together (one row copy per key) from ``[k | v]``."""
    b, n, d = q.shape
    dv = v.shape[-1]
    out = torch.zeros(b, n, dv, dtype=v.dtype, device=v.device)
    if width <= 0:
        return out
    step = torch.arange(width, device=q.device)
    chunk = max(1, WINDOW_CHUNK // width)
    first_all = (wlo.long() - 1).expand(b, n)  # 0-based
    last_all = (whi.long() - 1).expand(b, n)
    kv = torch.cat([k, v], -1)
    for row in range(b):
        for s in range(0, n, chunk):
            e = min(n, s + chunk)
            idx = first_all[row, s:e, None] + step  # [c, W] 0-based
            valid = idx <= last_all[row, s:e, None]
            rows = kv[row].index_select(0, idx.clamp_(0, n - 1).view(-1))
            rows = rows.view(1, e - s, width, d + dv)
            out[row, s:e] = attend_gathered(
                q[row : row + 1, s:e], rows[..., :d], rows[..., d:], valid[None], scale, weighting
            )[0]
    return out


def attend_gathered(
    q: torch.Tensor,
    kq: torch.Tensor,
    vq: torch.Tensor,
    valid: torch.Tensor,
    scale: float,
    weighting: Weighting,
) -> torch.Tensor:
    """Attention of queries ``q [B, c, d]`` over their own gathered keys ``kq [B, c, W, d]``
    and values ``vq [B, c, W, dv]`` (``valid [B, c, W]``: which of the W are real keys).
    Scores and the weighted sum are batched matrix products; the softmax works in place."""
    b, c, w, d = kq.shape
    dv = vq.shape[-1]
    scores = torch.bmm(kq.reshape(b * c, w, d), q.reshape(b * c, d, 1)).view(b, c, w)
    scores.mul_(scale)
    if weighting is Weighting.SOFTMAX:  # weights_from_scores, with no temporaries
        scores.masked_fill_(~valid, NEG_INF)
        top = scores.amax(-1, keepdim=True)
        top.masked_fill_(top == NEG_INF, 0.0)
        scores.sub_(top)
        # exp of a gap below log(smallest normal) is subnormal (or 0), and torch's vectorised
        # exp leaves its fast path for it: 140 ns instead of 0.6 ns per value, 25 % of the
        # window path of compiled PARITY. Such a weight is < 2^-1022 of the row maximum's
        # (which is 1): it is set to exactly 0 (see exp_gaps).
        weights = exp_gaps(scores)
        weights.div_(weights.sum(-1, keepdim=True).clamp_min_(torch.finfo(weights.dtype).tiny))
    else:
        weights = weights_from_scores(scores, valid, weighting)
    return torch.bmm(weights.reshape(b * c, 1, w), vq.reshape(b * c, w, dv)).view(b, c, dv)


def exp_gaps(gaps: torch.Tensor) -> torch.Tensor:
    """``exp`` in place of score gaps ``s - max <= 0``, with the weights below
    ``e^2 ×`` the smallest normal float (gap below −706.4 in float64, −85.3 in float32; all
    subnormal or nearly) set to exactly 0, as are the gaps of disallowed keys (−inf).

    Same result up to rounding: every row with an allowed key has a weight 1 (its maximum),
    so the row's sum is >= 1 and a dropped weight (< 2^-1019 in float64) is far below half
    its ulp; the head's output moves by less than ``W · 2^-1019 · max|v|`` in absolute terms.
    Why: torch's vectorised ``exp`` leaves its fast path from about log(smallest normal) on
    (measured on a 2-core AVX-512 CPU: 0.6 ns per value at −707, 13–140 ns from −708 down,
    8 ns at −inf), and a window of compiled PARITY has a few percent of such gaps."""
    floor = math.log(torch.finfo(gaps.dtype).smallest_normal) + 2.0
    drop = gaps < floor
    return gaps.clamp_min_(floor).exp_().masked_fill_(drop, 0.0)


def unique_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct rows of ``x [N, d]`` and each row's index among them (like
    ``torch.unique(dim=0)``, which sorts rows lexicographically and is slow): rows are grouped
    by a random projection, and the grouping is verified exactly (else the slow way)."""
    if x.shape[1] == 1:
        u, inv = torch.unique(x[:, 0], return_inverse=True)
        return u[:, None], inv
    gen = torch.Generator(device="cpu").manual_seed(0)
    r = torch.randn(x.shape[1], generator=gen, dtype=torch.float64, device="cpu").to(x.device)
    _, inv = torch.unique(x.double() @ r, return_inverse=True)
    first = torch.full((int(inv.max()) + 1,), x.shape[0], dtype=torch.long, device=x.device)
    first = first.scatter_reduce(0, inv, torch.arange(x.shape[0], device=x.device), "amin")
    rows = x[first]
    if torch.equal(rows[inv], x):
        return rows, inv
    return torch.unique(x, dim=0, return_inverse=True)


# ---- classes ---------------------------------------------------------------------------------


@dataclass
class Classes:
    """Keys grouped by class: ``kappa [C, d]`` the class keys (content part), ``cls [B, n]``
    each key's class, ``pi [B, n]`` the query-independent score term of each key (or None)."""

    kappa: torch.Tensor
    cls: torch.Tensor
    pi: torch.Tensor | None


def combine_classes(
    weighting: Weighting,
    mask: Mask,
    classes: Classes,
    v: torch.Tensor,
    a: torch.Tensor,
    cand: torch.Tensor,
    bound: torch.Tensor | None,
    slack: torch.Tensor,
) -> torch.Tensor | None:
    """Per query, combine the states of its candidate classes at its last allowed key; None
    if a class left out might matter."""
    b, n, dv = v.shape
    cls, pi = classes.cls, classes.pi
    flip, weighting, mask = mirrored(weighting, mask)
    if flip:
        cls, v, a, cand = cls.flip(1), v.flip(1), a.flip(1), cand.flip(1)
        pi = None if pi is None else pi.flip(1)
        bound, slack = (None if bound is None else bound.flip(1)), slack.flip(1)
    hi = last_allowed(mask, b, n, v.device)
    c = len(classes.kappa)
    if pi is None and not weighting.is_unique_hard and c * (dv + 1) <= 16:
        st, valid = class_sums(cls, v, c, hi, cand)
    else:
        st, valid = class_scan(cls, pi, v, weighting, hi, cand)
    z = torch.where(valid, a + st.m, torch.full_like(a, NEG_INF))
    zmax = z.amax(-1)
    if bound is not None:
        extra = threshold(weighting, v.dtype) + 2 * slack
        if weighting is Weighting.SOFTMAX:
            extra = extra + math.log(n)
        pimax = 0.0 if pi is None else float(pi.max())
        if not bool(((hi < 0) | (bound + pimax + extra < zmax)).all()):
            return None
    out = pick(z, zmax, valid, st, weighting)
    return out.flip(1) if flip else out


def class_sums(
    cls: torch.Tensor, v: torch.Tensor, c: int, hi: torch.Tensor, cand: torch.Tensor
) -> tuple[ScanState, torch.Tensor]:
    """Per-class counts and sums of the values through ``hi`` (equal scores within a class),
    by prefix sums of the one-hot classes: few classes, O(n·C·d)."""
    onehot = torch.nn.functional.one_hot(cls, c).to(v.dtype)  # [B, n, C]
    at = hi.clamp_min(0)[..., None]
    counts = prefix_sum(onehot).gather(1, at.expand(-1, -1, c)).gather(2, cand)
    sums = prefix_sum(onehot[..., None] * v[:, :, None, :])
    sums = sums.gather(1, at[..., None].expand(-1, -1, c, v.shape[-1]))
    sums = sums.gather(2, cand[..., None].expand(-1, -1, -1, v.shape[-1]))
    valid = (counts > 0) & (hi >= 0)[..., None]
    m = torch.where(valid, torch.zeros_like(counts), torch.full_like(counts, NEG_INF))
    return ScanState(m, counts, sums * valid[..., None]), valid


def class_scan(
    cls: torch.Tensor,
    pi: torch.Tensor | None,
    v: torch.Tensor,
    weighting: Weighting,
    hi: torch.Tensor,
    cand: torch.Tensor,
) -> tuple[ScanState, torch.Tensor]:
    """Per-class states through ``hi``: keys sorted by (class, position), one segmented scan,
    and for each query and candidate class the state at its last member <= hi."""
    b, n, dv = v.shape
    pos = torch.arange(n, device=v.device)
    sort_key, order = torch.sort(cls * n + pos, dim=1)
    seg = sort_key // n
    s = torch.zeros_like(v[..., 0]) if pi is None else pi
    target = cand * n + hi[..., None]
    t = torch.searchsorted(sort_key, target.reshape(b, -1), right=True).view_as(target) - 1
    found = seg.gather(1, t.clamp_min(0).reshape(b, -1)).view_as(t) == cand
    valid = (t >= 0) & found & (hi >= 0)[..., None]
    if pi is None and weighting.is_unique_hard:
        return _member_state(sort_key, order, v, weighting, cand, t, valid), valid
    state = segmented_scan(
        s.gather(1, order),
        v.gather(1, order[..., None].expand(-1, -1, dv)),
        weighting,
        segments=seg,
        positions=order,
    )
    return read_state(state, t, valid), valid


def _member_state(
    sort_key: torch.Tensor,
    order: torch.Tensor,
    v: torch.Tensor,
    weighting: Weighting,
    cand: torch.Tensor,
    t: torch.Tensor,
    valid: torch.Tensor,
) -> ScanState:
    """Unique-hard states when every key of a class scores the same (no position term): the
    pick is the class's last member through ``hi`` (rightmost, index ``t`` in sorted order) or
    its first member (leftmost), so no scan is needed."""
    b, n, dv = v.shape
    if weighting is Weighting.LEFTMOST:
        t = torch.searchsorted(sort_key, (cand * n).reshape(b, -1)).view_as(cand)
    flat = t.clamp(0, n - 1).reshape(b, -1)
    idx = torch.where(valid, order.gather(1, flat).view_as(t), -1)
    a = v.gather(1, idx.clamp_min(0).reshape(b, -1, 1).expand(-1, -1, dv))
    a = a.view(*t.shape, dv) * valid[..., None]
    m = torch.zeros(t.shape, dtype=v.dtype, device=v.device).masked_fill_(~valid, NEG_INF)
    return ScanState(m, valid.to(v.dtype), a, idx)


def pick(z, zmax, valid, st, weighting: Weighting) -> torch.Tensor:
    """Combine per-class states ``[B, n, R]`` whose total scores are ``z`` into outputs."""
    if weighting is Weighting.SOFTMAX:
        safe = torch.where(zmax == NEG_INF, torch.zeros_like(zmax), zmax)
        e = torch.exp(z - safe[..., None]) * valid
        den = (e * st.w).sum(-1, keepdim=True)
        num = (e[..., None] * st.a).sum(-2)
        return torch.where(den > 0, num / den.clamp_min(torch.finfo(num.dtype).tiny), 0.0)
    top = valid & (z == zmax[..., None]) & (zmax > NEG_INF)[..., None]
    if weighting is Weighting.AVERAGE:
        t = top.to(st.a.dtype)
        den = (t * st.w).sum(-1, keepdim=True)
        num = (t[..., None] * st.a).sum(-2)
        return torch.where(den > 0, num / den.clamp_min(1.0), 0.0)
    assert st.idx is not None
    if weighting is Weighting.LEFTMOST:
        choice = torch.where(top, st.idx, st.idx.max() + 1).argmin(-1)
    else:
        choice = torch.where(top, st.idx, -1).argmax(-1)
    picked = st.a.gather(-2, choice[..., None, None].expand(*choice.shape, 1, st.a.shape[-1]))
    return picked[..., 0, :] * top.any(-1)[..., None]

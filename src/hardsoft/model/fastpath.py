"""Fast attention paths: the same function as the dense head, in O(n·w) instead of O(n²).

Most heads of compiled models have structure that makes most of the ``n × n`` score matrix
irrelevant. Each head is checked on every call (cheap, exact checks on its weights and on the
data it sees) and the first path that applies runs; otherwise the dense reference of
:mod:`hardsoft.model.attention` does. Which path ran is recorded per head
(:attr:`Head.last_path`, ``ModelOutput.paths``).

``uniform``
    Every score is 0 (``W_Q = 0``, ``W_K = 0`` or ``d_head = 0``): prefix averages by a scan.
``scan``
    The score does not depend on the query (all query vectors are equal): one prefix scan of
    the per-key states of :mod:`hardsoft.model.scan` (running-max softmax, average-hard and
    unique-hard by running maximum), any mask, O(n·d·log n).
``window``
    The key is a function of the position alone (its residual coordinates equal the position
    embedding on this input) and every position feature it reads is a polynomial of degree <= 2
    in j, so each query's score is ``A_i + B_i·j + C_i·j²``: only the keys whose score is within
    ``T`` of the row maximum are computed, O(n·w). ``T`` is the float underflow threshold of
    ``exp`` (about 750 in float64; keys further down contribute exactly 0 to the dense softmax)
    plus a bound on the rounding error of the scores; 0 plus that bound for hard weightings.
``classes``
    The keys take few distinct values (e.g. a key ``(−1)^j``), or their content takes many values
    but the score splits into ``a(query, content class) + π(j)`` with ``π`` the same for every
    query (e.g. a same-depth lookup with a positional tie-break): keys are grouped by class,
    each class is scanned in position order, and each query combines the states of its
    candidate classes (all classes when they are few; else the top classes by ``a``, with a
    per-query check that every other class is at least ``T`` below the row maximum, falling
    back to the dense path otherwise).

Outputs agree with the dense path up to rounding: the paths compute the same scores (the same
dot products, or a split of them into two terms) and sum the same terms in another order, and
the terms they omit are below the underflow threshold of the dense softmax. Tests compare them
with the dense path at small n and with the evaluators at large n.

Policy (:func:`fast_paths`): ``"auto"`` (the default) uses a fast path from n >= AUTO_MIN_N,
``"force"`` at every n (tests), ``"off"`` never (:func:`dense_reference`). Fast paths run only
without autograd (under ``torch.no_grad()`` or with no tensor requiring a gradient).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, cast

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.attention import pair_scores, weights_from_scores
from hardsoft.model.features import parse_feature
from hardsoft.model.scan import NEG_INF, ScanState, finish, prefix_sum, read_state, segmented_scan
from hardsoft.model.spec import Mask, Weighting

if TYPE_CHECKING:
    from hardsoft.model.transformer import Block, Head, Transformer


class Path(str, Enum):
    """How one head's attention was computed."""

    DENSE = "dense"
    CHUNKED = "chunked"
    UNIFORM = "uniform"
    SCAN = "scan"
    WINDOW = "window"
    CLASSES = "classes"

    def __str__(self) -> str:
        return str(self.value)


MODES = ("auto", "force", "off")
AUTO_MIN_N = 512
"""Below this length the dense path is as fast as any other (policy "auto")."""
WINDOW_MAX = 1024
"""The widest window (keys per query) the "auto" policy computes instead of the dense row."""
FEW_CLASSES = 16
"""Up to this many key classes, every query reads every class."""
TOP_CLASSES = 32
"""With more classes, each query reads its top classes by content score (if a query's row
maximum cannot be shown to lie among them, the head falls back to the dense path)."""

_MODE: ContextVar[str] = ContextVar("hardsoft_fast_paths", default="auto")


@contextmanager
def fast_paths(mode: str = "auto") -> Iterator[None]:
    """Within the block, use fast paths per ``mode``: "auto", "force" (every n) or "off"."""
    if mode not in MODES:
        raise HardsoftError(f"unknown fast-path mode {mode!r} (one of {', '.join(MODES)})")
    token = _MODE.set(mode)
    try:
        yield
    finally:
        _MODE.reset(token)


def dense_reference() -> AbstractContextManager[None]:
    """Within the block, every head runs the dense reference path."""
    return fast_paths("off")


def current_mode() -> str:
    return _MODE.get()


class PositionSource:
    """The model's raw position features and ``W_pos``, shared with its heads (a plain object,
    so the parameter is not registered twice); the feature matrix is cached per length."""

    def __init__(self, features: tuple[str, ...], W_pos: torch.Tensor) -> None:
        self.features = tuple(features)
        self.W_pos = W_pos
        self._cache: tuple[tuple, torch.Tensor] | None = None

    def raw(self, n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """The raw features ``[n, P]`` at length n."""
        from hardsoft.model.features import feature_matrix

        key = (n, dtype, device)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, feature_matrix(self.features, n, dtype, device))
        return self._cache[1]

    def polynomials(self, n: int) -> list[tuple[float, float, float] | None]:
        """Per raw column, ``(c0, c1, c2)`` if the feature is a polynomial in i, else None."""
        out: list[tuple[float, float, float] | None] = []
        for name in self.features:
            f = parse_feature(name)
            out += [f.polynomial(n) if f.dim == 1 else None] * f.dim
        return out


def _heads(model: Transformer) -> list[tuple[str, Head]]:
    """Every head of ``model`` with its name ``blocks.L.attn.H``."""
    out = []
    for ell, block in enumerate(cast("list[Block]", model.blocks)):
        for h, head in enumerate(cast("list[Head]", block.heads)):
            out.append((f"blocks.{ell}.attn.{h}", head))
    return out


def attach(model: Transformer) -> None:
    """Give every head of ``model`` its position source (again, if ``W_pos`` was replaced)."""
    heads = [h for _, h in _heads(model)]
    if heads and all(
        h.position_source is not None and h.position_source.W_pos is model.W_pos for h in heads
    ):
        return
    source = PositionSource(model.spec.position_features, model.W_pos)
    for head in heads:
        head.position_source = source


def head_paths(model: Transformer) -> dict[str, str]:
    """The path each head of ``model`` took in its last forward pass, by ``blocks.L.attn.H``."""
    return {name: str(head.last_path) for name, head in _heads(model)}


@dataclass
class _Plan:
    """What the weights alone say about a head, cached until a weight changes."""

    version: tuple
    uniform: bool
    key_rows: torch.Tensor


def _plan(head: Head) -> _Plan:
    params = (head.W_Q, head.W_K)
    version = tuple((p.data_ptr(), p._version) for p in params)
    plan = _PLANS.get(head)
    if plan is not None and plan.version == version:
        return plan
    with torch.no_grad():
        uniform = head.spec.d_head == 0 or not head.W_Q.any() or not head.W_K.any()
        rows = head.W_K.abs().sum(1).nonzero().flatten()
    plan = _Plan(version, bool(uniform), rows)
    _PLANS[head] = plan
    return plan


_PLANS: weakref.WeakKeyDictionary[Head, _Plan] = weakref.WeakKeyDictionary()


def attend_fast(
    head: Head, x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float
) -> tuple[torch.Tensor, Path] | None:
    """The head's attention output ``[B, n, d_value]`` by the first fast path that applies,
    with its name; None if none applies (or the policy says dense)."""
    mode = _MODE.get()
    n = x.shape[1]
    if mode == "off" or (mode == "auto" and n < AUTO_MIN_N):
        return None
    if torch.is_grad_enabled() and any(t.requires_grad for t in (x, q, k, v)):
        return None
    weighting, mask = head.spec.weighting, head.spec.mask
    plan = _plan(head)
    if plan.uniform:
        return uniform_attention(v, weighting, mask), Path.UNIFORM
    if torch.equal(q, q[:, :1].expand_as(q)):
        s = pair_scores(q[:, :1], k, weighting)[:, 0] * scale
        return scan_attention(s, v, weighting, mask), Path.SCAN
    force = mode == "force"
    src: PositionSource | None = getattr(head, "position_source", None)
    if src is not None:
        out = window_attention(head, plan, src, x, q, k, v, scale, force)
        if out is not None:
            return out, Path.WINDOW
    out = class_attention(head, plan, src, x, q, k, v, scale, force)
    if out is not None:
        return out, Path.CLASSES
    return None


# ---- masks as ranges ------------------------------------------------------------------------


def _mirrored(weighting: Weighting, mask: Mask) -> tuple[bool, Weighting, Mask]:
    """Past masks become future masks on the reversed sequence (leftmost <-> rightmost)."""
    if mask not in (Mask.PAST, Mask.STRICT_PAST):
        return False, weighting, mask
    swap = {Weighting.LEFTMOST: Weighting.RIGHTMOST, Weighting.RIGHTMOST: Weighting.LEFTMOST}
    return (
        True,
        swap.get(weighting, weighting),
        (Mask.FUTURE if mask is Mask.PAST else Mask.STRICT_FUTURE),
    )


def _last_allowed(mask: Mask, b: int, n: int, device: torch.device) -> torch.Tensor:
    """For none / future / strict-future masks: the last allowed key (0-based) of each query,
    ``[B, n]`` (−1: none)."""
    i = torch.arange(n, device=device)
    if mask is Mask.NONE:
        hi = torch.full_like(i, n - 1)
    else:
        hi = i if mask is Mask.FUTURE else i - 1
    return hi.expand(b, n)


def _range(mask: Mask, n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The allowed keys ``[lo_i, hi_i]`` (1-based, as float64 ``[n]``) of every query i."""
    i = torch.arange(1, n + 1, dtype=torch.float64, device=device)
    one, last = torch.ones_like(i), torch.full_like(i, float(n))
    lo = {Mask.PAST: i, Mask.STRICT_PAST: i + 1}.get(mask, one)
    hi = {Mask.FUTURE: i, Mask.STRICT_FUTURE: i - 1}.get(mask, last)
    return lo, hi


def _threshold(weighting: Weighting, dtype: torch.dtype) -> float:
    """Scores more than this below the row maximum get exactly zero weight in the dense path:
    exp underflows (softmax); any gap (hard weightings)."""
    if weighting is not Weighting.SOFTMAX:
        return 0.0
    tiny = torch.finfo(dtype).smallest_normal * torch.finfo(dtype).eps
    return -math.log(tiny) + 5.0


def _slack(q: torch.Tensor, kabs: torch.Tensor, scale: float, terms: int) -> torch.Tensor:
    """A bound ``[B, n]`` on the rounding error of each query's scores (both sides)."""
    eps = torch.finfo(q.dtype).eps
    return 8.0 * (terms + 4) * eps * abs(scale) * (q.abs() @ kabs.to(q.dtype))


# ---- uniform and scan ------------------------------------------------------------------------


def uniform_attention(v: torch.Tensor, weighting: str, mask: str) -> torch.Tensor:
    """Attention with all scores equal: the mean of the allowed values (softmax, average-hard),
    or the first / last allowed value (leftmost / rightmost), by prefix sums."""
    flip, w, m = _mirrored(Weighting.parse(weighting, "weighting"), Mask.parse(mask, "mask"))
    if flip:
        v = v.flip(1)
    b, n, _ = v.shape
    hi = _last_allowed(m, b, n, v.device)
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
    flip, w, m = _mirrored(Weighting.parse(weighting, "weighting"), Mask.parse(mask, "mask"))
    if flip:
        s, v = s.flip(1), v.flip(1)
    state = segmented_scan(s, v, w)
    hi = _last_allowed(m, s.shape[0], s.shape[1], s.device)
    out = finish(read_state(state, hi, hi >= 0), w)
    return out.flip(1) if flip else out


# ---- window ----------------------------------------------------------------------------------


def _position_only(x: torch.Tensor, rows: torch.Tensor, pew: torch.Tensor) -> torch.Tensor:
    """Per row of ``rows``: does coordinate ``x[..., row]`` equal the position embedding?"""
    return (x[:, :, rows] == pew[None]).all(dim=1).all(dim=0)


def window_attention(
    head: Head,
    plan: _Plan,
    src: PositionSource,
    x: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    force: bool,
) -> torch.Tensor | None:
    """The window path (module docstring), or None if the key is not a polynomial of the
    position on this input or a window would be too wide."""
    b, n, _ = q.shape
    rows = plan.key_rows
    raw = src.raw(n, x.dtype, x.device)
    w_pos = src.W_pos.detach()[:, rows]
    if not bool(_position_only(x, rows, raw @ w_pos).all()):
        return None
    feat_key = w_pos @ head.W_K.detach()[rows]  # [P, d_head]: key = Σ_f feature_f(j)·feat_key[f]
    used = feat_key.abs().sum(1) > 0
    polys = src.polynomials(n)
    if any(polys[f] is None for f in used.nonzero().flatten().tolist()):
        return None
    # reshape: a model without position features has no rows (torch.tensor([]) is 1-D)
    coef = torch.tensor([p or (0.0, 0.0, 0.0) for p in polys], dtype=torch.float64).reshape(-1, 3)
    abc = (scale * (q.double() @ feat_key.double().T)) @ coef.to(q.device)  # [B, n, 3]
    weighting, mask = head.spec.weighting, head.spec.mask
    kabs = (raw.abs() @ feat_key.abs()).amax(0)
    t = _threshold(weighting, q.dtype) + _slack(q, kabs, scale, len(polys) + len(rows)).double()
    lo, hi = _range(mask, n, x.device)
    wlo, whi = _window(abc, lo, hi, t)
    width = int((whi - wlo + 1).clamp_min(0).max())
    if width > (n if force else min(WINDOW_MAX, n // 4)):
        return None
    return _attend_window(q, k, v, wlo, whi, width, scale, weighting)


def _window(
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


def _attend_window(
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
    computed in query chunks so memory stays O(chunk·width·d)."""
    b, n, d = q.shape
    dv = v.shape[-1]
    out = torch.zeros(b, n, dv, dtype=v.dtype, device=v.device)
    if width <= 0:
        return out
    step = torch.arange(width, device=q.device)
    chunk = max(1, (1 << 22) // (width * max(1, d + dv)))
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        first = wlo[..., s:e].long().expand(b, e - s) - 1
        idx = first[..., None] + step  # [B, c, W] 0-based
        valid = idx <= (whi[..., s:e].long().expand(b, e - s) - 1)[..., None]
        flat = idx.clamp(0, n - 1).reshape(b, -1)
        kq = k.gather(1, flat[..., None].expand(-1, -1, d)).view(b, e - s, width, d)
        vq = v.gather(1, flat[..., None].expand(-1, -1, dv)).view(b, e - s, width, dv)
        scores = torch.einsum("bqwd,bqd->bqw", kq, q[:, s:e]) * scale
        if weighting is Weighting.SOFTMAX:  # weights_from_scores, with fewer temporaries
            scores = scores.masked_fill(~valid, NEG_INF)
            top = scores.amax(-1, keepdim=True)
            ex = torch.exp(scores - torch.where(top == NEG_INF, 0.0, top))
            w = ex / ex.sum(-1, keepdim=True).clamp_min(torch.finfo(ex.dtype).tiny)
        else:
            w = weights_from_scores(scores, valid, weighting)
        out[:, s:e] = torch.einsum("bqw,bqwd->bqd", w, vq)
    return out


def unique_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct rows of ``x [N, d]`` and each row's index among them (like
    ``torch.unique(dim=0)``, which sorts rows lexicographically and is slow): rows are grouped
    by a random projection, and the grouping is verified exactly (else the slow way)."""
    if x.shape[1] == 1:
        u, inv = torch.unique(x[:, 0], return_inverse=True)
        return u[:, None], inv
    gen = torch.Generator(device="cpu").manual_seed(0)
    r = torch.randn(x.shape[1], generator=gen, dtype=torch.float64).to(x.device)
    _, inv = torch.unique(x.double() @ r, return_inverse=True)
    first = torch.full((int(inv.max()) + 1,), x.shape[0], dtype=torch.long, device=x.device)
    first = first.scatter_reduce(0, inv, torch.arange(x.shape[0], device=x.device), "amin")
    rows = x[first]
    if torch.equal(rows[inv], x):
        return rows, inv
    return torch.unique(x, dim=0, return_inverse=True)


# ---- classes ---------------------------------------------------------------------------------


@dataclass
class _Classes:
    """Keys grouped by class: ``kappa [C, d]`` the class keys (content part), ``cls [B, n]``
    each key's class, ``pi [B, n]`` the query-independent score term of each key (or None)."""

    kappa: torch.Tensor
    cls: torch.Tensor
    pi: torch.Tensor | None


def _key_classes(
    head: Head,
    plan: _Plan,
    src: PositionSource | None,
    x: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    scale: float,
) -> _Classes | None:
    """Classes of the whole key if they are few; else of its content with the varying position
    coordinates split off as a term ``π(j)`` (if the query weighs them identically)."""
    b, n, d = k.shape
    kappa, inv = unique_rows(k.reshape(-1, d))
    if len(kappa) <= FEW_CLASSES or src is None:
        return _Classes(kappa, inv.view(b, n), None)
    rows = plan.key_rows
    pew = src.raw(n, x.dtype, x.device) @ src.W_pos.detach()[:, rows]
    varying = (pew != pew[:1]).any(0)
    pos = _position_only(x, rows, pew) & varying
    if not bool(pos.any()):
        return _Classes(kappa, inv.view(b, n), None)
    w_k = head.W_K.detach()
    g = q @ w_k[rows[pos]].T  # [B, n, p]: the query's weights on the position coordinates
    if not torch.equal(g, g[:, :1].expand_as(g)):
        return None
    content = rows[~pos]
    u = x[:, :, content] @ w_k[content]
    pi = (x[:, :, rows[pos]] @ g[:, 0, :, None])[..., 0] * scale
    kappa, inv = unique_rows(u.reshape(-1, d))
    return _Classes(kappa, inv.view(b, n), pi)


def _candidates(
    q: torch.Tensor, kappa: torch.Tensor, scale: float, top: int, force: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None:
    """Per query: the content scores ``a [B, n, R]`` of its candidate classes ``cand`` and the
    best content score among the other classes (``bound [B, n]``, None if all are read)."""
    b, n, d = q.shape
    c = len(kappa)
    if c <= max(FEW_CLASSES, top):
        a = (q @ kappa.T) * scale
        return a, torch.arange(c, device=q.device).expand(b, n, c), None
    qu, qinv = unique_rows(q.reshape(-1, d))
    if not force and len(qu) * c > b * n * n // 4:
        return None
    vals, idxs = [], []
    chunk = max(1, (1 << 23) // c)
    for s in range(0, len(qu), chunk):  # rank by q·κ (scale > 0 keeps the order), then scale
        v, i = torch.topk(qu[s : s + chunk] @ kappa.T, top + 1, dim=-1)
        vals.append(v * scale)
        idxs.append(i)
    val, idx = torch.cat(vals)[qinv], torch.cat(idxs)[qinv]
    return val[:, :top].view(b, n, top), idx[:, :top].view(b, n, top), val[:, top].view(b, n)


def class_attention(
    head: Head,
    plan: _Plan,
    src: PositionSource | None,
    x: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    force: bool,
) -> torch.Tensor | None:
    """The class path (module docstring), or None where it does not apply or cannot show
    that the classes it leaves out are negligible."""
    classes = _key_classes(head, plan, src, x, q, k, scale)
    if classes is None:
        return None
    kabs = k.abs().amax(dim=(0, 1))
    slack = _slack(q, kabs, scale, q.shape[-1])
    cands = _candidates(q, classes.kappa, scale, TOP_CLASSES, force)
    if cands is None:
        return None
    return _combine_classes(head, classes, v, *cands, slack)


def _combine_classes(
    head: Head,
    classes: _Classes,
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
    flip, weighting, mask = _mirrored(head.spec.weighting, head.spec.mask)
    if flip:
        cls, v, a, cand = cls.flip(1), v.flip(1), a.flip(1), cand.flip(1)
        pi = None if pi is None else pi.flip(1)
        bound, slack = (None if bound is None else bound.flip(1)), slack.flip(1)
    hi = _last_allowed(mask, b, n, v.device)
    c = len(classes.kappa)
    if pi is None and not weighting.is_unique_hard and c * (dv + 1) <= 16:
        st, valid = _class_sums(cls, v, c, hi, cand)
    else:
        st, valid = _class_scan(cls, pi, v, weighting, hi, cand)
    z = torch.where(valid, a + st.m, torch.full_like(a, NEG_INF))
    zmax = z.amax(-1)
    if bound is not None:
        extra = _threshold(weighting, v.dtype) + 2 * slack
        if weighting is Weighting.SOFTMAX:
            extra = extra + math.log(n)
        pimax = 0.0 if pi is None else float(pi.max())
        if not bool(((hi < 0) | (bound + pimax + extra < zmax)).all()):
            return None
    out = _pick(z, zmax, valid, st, weighting)
    return out.flip(1) if flip else out


def _class_sums(
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


def _class_scan(
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
    state = segmented_scan(
        s.gather(1, order),
        v.gather(1, order[..., None].expand(-1, -1, dv)),
        weighting,
        segments=seg,
        positions=order,
    )
    target = cand * n + hi[..., None]
    t = torch.searchsorted(sort_key, target.reshape(b, -1), right=True).view_as(target) - 1
    found = seg.gather(1, t.clamp_min(0).reshape(b, -1)).view_as(t) == cand
    valid = (t >= 0) & found & (hi >= 0)[..., None]
    return read_state(state, t, valid), valid


def _pick(z, zmax, valid, st, weighting: Weighting) -> torch.Tensor:
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

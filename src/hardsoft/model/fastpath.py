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

This module holds the *detection* (which path applies to a head, on its weights and this
input) and the policy; the kernels that compute each path live in
:mod:`hardsoft.model.fastkernels` (their public names are importable from here too).

Policy (:func:`fast_paths`): ``"auto"`` (the default) uses a fast path from n >= AUTO_MIN_N
(the uniform path at every n: its prefix sums of integer values are exact, which the float
limits of compiled programs count on; except where a trace asks for the weights), ``"force"``
at every n (tests), ``"off"`` never (:func:`dense_reference`). Fast paths run only
without autograd (under ``torch.no_grad()`` or with no tensor requiring a gradient).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, cast

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.attention import pair_scores
from hardsoft.model.fastkernels import (
    Classes,
    attend_window,
    combine_classes,
    mask_range,
    scan_attention,
    score_slack,
    threshold,
    uniform_attention,
    unique_rows,
    window_bounds,
)
from hardsoft.model.features import parse_feature

if TYPE_CHECKING:
    from hardsoft.model.transformer import Block, Head, Transformer


__all__ = [
    "AUTO_MIN_N",
    "FEW_CLASSES",
    "MODES",
    "TOP_CLASSES",
    "WINDOW_MAX",
    "Path",
    "PositionSource",
    "attach",
    "attend_fast",
    "class_attention",
    "current_mode",
    "dense_reference",
    "fast_paths",
    "head_names",
    "head_paths",
    "head_plan",
    "position_source",
    "scan_attention",
    "report_slow_heads",
    "slow_heads",
    "slow_progress",
    "uniform_attention",
    "unique_rows",
    "window_attention",
]


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


SlowReporter = Callable[["Head", str, int, int], None]
"""``(head, why no fast path applied, query rows done, n)``: called as a head's chunked
(all-pairs) attention progresses, block by block."""
_SLOW: ContextVar[SlowReporter | None] = ContextVar("hardsoft_slow_heads", default=None)


@contextmanager
def report_slow_heads(reporter: SlowReporter) -> Iterator[None]:
    """Within the block, every head that takes the chunked path reports its progress to
    ``reporter`` (the CLI prints why, and how far it got, on long inputs)."""
    token = _SLOW.set(reporter)
    try:
        yield
    finally:
        _SLOW.reset(token)


def slow_progress(head: Head) -> Callable[[int, int], None] | None:
    """The progress callback for ``head``'s chunked attention (None: nobody listens)."""
    reporter = _SLOW.get()
    if reporter is None:
        return None
    return lambda done, n: reporter(head, head.last_reason, done, n)


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
    source = _SOURCES.get(model)
    if (
        source is not None
        and source.W_pos is model.W_pos
        and all(h.position_source is source for h in heads)
    ):
        return
    source = PositionSource(model.spec.position_features, model.W_pos)
    _SOURCES[model] = source
    for head in heads:
        head.position_source = source


_SOURCES: weakref.WeakKeyDictionary[Transformer, PositionSource] = weakref.WeakKeyDictionary()


def position_source(model: Transformer) -> PositionSource:
    """The position source ``model`` shares with its heads (its raw features, cached per
    length, so the embedding and the window path compute them once)."""
    attach(model)
    return _SOURCES[model]


def head_names(model: Transformer) -> dict[int, str]:
    """``id(head)`` -> ``blocks.L.attn.H`` for every head of ``model``."""
    return {id(head): name for name, head in _heads(model)}


def head_paths(model: Transformer) -> dict[str, str]:
    """The path each head of ``model`` took in its last forward pass, by ``blocks.L.attn.H``."""
    return {name: str(head.last_path) for name, head in _heads(model)}


def slow_heads(model: Transformer) -> dict[str, str]:
    """The heads whose last forward pass took the dense or chunked path (O(n²) time), each
    with why no fast path applied (``Head.last_reason``)."""
    slow = (Path.DENSE, Path.CHUNKED)
    return {
        name: head.last_reason or "no fast path applies"
        for name, head in _heads(model)
        if head.last_path in slow
    }


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


def head_plan(head: Head) -> tuple[bool, torch.Tensor]:
    """What the weights alone say about ``head``: whether every score is 0 (the uniform path)
    and the residual rows its key reads (the nonzero rows of ``W_K``)."""
    plan = _plan(head)
    return plan.uniform, plan.key_rows


def attend_fast(
    head: Head,
    x: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    keep: bool = False,
) -> tuple[torch.Tensor, Path] | None:
    """The head's attention output ``[B, n, d_value]`` by the first fast path that applies,
    with its name; None if none applies (or the policy says dense). Why each path did not
    apply is left in ``head.last_reason`` ("" when a fast path ran). ``keep``: the caller
    wants the attention weights (a trace), so a short input runs dense, uniform heads too."""
    why: list[str] = []
    out = _attend_fast(head, x, q, k, v, scale, why, keep)
    head.last_reason = "; ".join(why) if out is None else ""
    return out


def _attend_fast(
    head: Head,
    x: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    why: list[str],
    keep: bool = False,
) -> tuple[torch.Tensor, Path] | None:
    mode = _MODE.get()
    n = x.shape[1]
    if mode == "off" or (mode == "auto" and keep and n < AUTO_MIN_N):
        why.append("the dense reference was asked for" if mode == "off" else "short input")
        return None
    if torch.is_grad_enabled() and any(t.requires_grad for t in (x, q, k, v)):
        why.append("autograd is on (fast paths run without gradients)")
        return None
    weighting, mask = head.spec.weighting, head.spec.mask
    plan = _plan(head)
    if plan.uniform:  # at every n: its sums of integer values are exact (float limits)
        return uniform_attention(v, weighting, mask), Path.UNIFORM
    if mode == "auto" and n < AUTO_MIN_N:
        why.append("short input")
        return None
    if torch.equal(q, q[:, :1].expand_as(q)):
        s = pair_scores(q[:, :1], k, weighting)[:, 0] * scale
        return scan_attention(s, v, weighting, mask), Path.SCAN
    why.append("scan: the query differs between positions")
    force = mode == "force"
    src: PositionSource | None = getattr(head, "position_source", None)
    if src is not None:
        out = window_attention(head, plan, src, x, q, k, v, scale, force, why)
        if out is not None:
            return out, Path.WINDOW
    else:
        why.append("window: the model has no position features")
    out = class_attention(head, plan, src, x, q, k, v, scale, force, why)
    if out is not None:
        return out, Path.CLASSES
    return None


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
    why: list[str] | None = None,
) -> torch.Tensor | None:
    """The window path (module docstring), or None if the key is not a polynomial of the
    position on this input or a window would be too wide (the reason appended to ``why``)."""
    why = [] if why is None else why
    b, n, _ = q.shape
    rows = plan.key_rows
    raw = src.raw(n, x.dtype, x.device)
    w_pos = src.W_pos.detach()[:, rows]
    if not bool(_position_only(x, rows, raw @ w_pos).all()):
        why.append("window: the key reads coordinates that are not the position embedding")
        return None
    feat_key = w_pos @ head.W_K.detach()[rows]  # [P, d_head]: key = Σ_f feature_f(j)·feat_key[f]
    used = feat_key.abs().sum(1) > 0
    polys = src.polynomials(n)
    if any(polys[f] is None for f in used.nonzero().flatten().tolist()):
        why.append("window: the key reads a position feature that is not a polynomial in j")
        return None
    # reshape: a model without position features has no rows (torch.tensor([]) is 1-D)
    coef = torch.tensor(
        [p or (0.0, 0.0, 0.0) for p in polys], dtype=torch.float64, device=q.device
    ).reshape(-1, 3)
    weighting, mask = head.spec.weighting, head.spec.mask
    kabs = (raw.abs() @ feat_key.abs()).amax(0)
    base = threshold(weighting, q.dtype)
    terms = len(polys) + len(rows)
    lo, hi = mask_range(mask, n, x.device)

    def bounds(qs: torch.Tensor, at: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The windows of queries ``qs`` (the rows ``at`` of q, or all of them)."""
        abc = (scale * (qs.double() @ feat_key.double().T)) @ coef  # [B, rows, 3]
        t = base + score_slack(qs, kabs, scale, terms).double()
        return window_bounds(abc, lo if at is None else lo[at], hi if at is None else hi[at], t)

    limit = n if force else min(WINDOW_MAX, n // 4)
    if n > 4 * WINDOW_SAMPLE:  # a head that is too wide is mostly so at a sample of queries
        at = torch.linspace(0, n - 1, WINDOW_SAMPLE, device=x.device).round().long()
        wlo, whi = bounds(q[:, at], at)
        width = int((whi - wlo + 1).clamp_min(0).max())
        if width > limit:
            why.append(_too_wide(f"at least {width}", q.dtype, limit))
            return None
    wlo, whi = bounds(q, None)
    width = int((whi - wlo + 1).clamp_min(0).max())
    if width > limit:
        why.append(_too_wide(str(width), q.dtype, limit))
        return None
    return attend_window(q, k, v, wlo, whi, width, scale, weighting)


def _too_wide(width: str, dtype: torch.dtype, limit: int) -> str:
    return (
        f"window: {width} keys per query are within the {str(dtype)[6:]} threshold of "
        f"the row maximum (at most {limit})"
    )


WINDOW_SAMPLE = 4096
"""Queries whose windows are computed first on a long input: if one of them is too wide, the
head leaves the window path without computing the windows of all n queries."""


def _key_classes(
    head: Head,
    plan: _Plan,
    src: PositionSource | None,
    x: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    scale: float,
) -> Classes | None:
    """Classes of the whole key if they are few; else of its content with the varying position
    coordinates split off as a term ``π(j)`` (if the query weighs them identically)."""
    b, n, d = k.shape
    kappa, inv = unique_rows(k.reshape(-1, d))
    if len(kappa) <= FEW_CLASSES or src is None:
        return Classes(kappa, inv.view(b, n), None)
    rows = plan.key_rows
    pew = src.raw(n, x.dtype, x.device) @ src.W_pos.detach()[:, rows]
    varying = (pew != pew[:1]).any(0)
    pos = _position_only(x, rows, pew) & varying
    if not bool(pos.any()):
        return Classes(kappa, inv.view(b, n), None)
    w_k = head.W_K.detach()
    g = q @ w_k[rows[pos]].T  # [B, n, p]: the query's weights on the position coordinates
    if not torch.equal(g, g[:, :1].expand_as(g)):
        return None
    content = rows[~pos]
    u = x[:, :, content] @ w_k[content]
    pi = (x[:, :, rows[pos]] @ g[:, 0, :, None])[..., 0] * scale
    kappa, inv = unique_rows(u.reshape(-1, d))
    return Classes(kappa, inv.view(b, n), pi)


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
    why: list[str] | None = None,
) -> torch.Tensor | None:
    """The class path (module docstring), or None where it does not apply or cannot show
    that the classes it leaves out are negligible (the reason appended to ``why``)."""
    why = [] if why is None else why
    classes = _key_classes(head, plan, src, x, q, k, scale)
    if classes is None:
        why.append("classes: many distinct keys, and the query weighs their position part unevenly")
        return None
    kabs = k.abs().amax(dim=(0, 1))
    slack = score_slack(q, kabs, scale, q.shape[-1])
    cands = _candidates(q, classes.kappa, scale, TOP_CLASSES, force)
    if cands is None:
        why.append(f"classes: {len(classes.kappa)} distinct keys, too many to read per query")
        return None
    out = combine_classes(head.spec.weighting, head.spec.mask, classes, v, *cands, slack)
    if out is None:
        why.append(
            f"classes: {len(classes.kappa)} distinct keys, and a query's best key could not be "
            "shown to lie among the classes it reads"
        )
    return out

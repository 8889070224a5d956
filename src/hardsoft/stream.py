"""Streaming runs: a model over one very long input, chunk by chunk, in memory O(chunk + state).

The input is read in chunks of positions; each chunk goes through the whole model (the model's
own pieces: :meth:`Transformer.embed` at an offset, :meth:`Block.attn_input`, :meth:`Head.qkv`,
:meth:`Head.result`, :meth:`Block.after_attention`, :meth:`Transformer.readout`), and every
head carries a bounded state from one chunk to the next:

``uniform``  every score is 0 (its weights say so): the running sum of the values (softmax,
             average-hard), the first value (leftmost) or the previous one (rightmost).
``scan``     the query is the same vector at every position: the running attention state of
             :mod:`hardsoft.model.scan` (max, weight, weighted value sum; the picked index).
``window``   the key and the value read only residual coordinates that equal the position
             embedding, and the score is a polynomial of degree <= 2 in the key position:
             the keys a query can attend to are recomputed from their positions (state: none).
``classes``  the keys take at most ``FEW_CLASSES`` distinct values (softmax, average-hard):
             per class, the count and the sum of the values seen so far.

Each head starts with every path whose conditions hold on the first chunk and keeps, chunk by
chunk, those whose conditions still hold (all of them are exact, so any survivor gives the
head's output); a head with none left, a dense-only head, and a head whose mask reads keys to
the right of its query (masks ``none``, ``past``, ``strict-past``: the stream has not read them
yet) are refused with one line naming the head. Position features that depend on the length
(``[i=n]``, ``i/n``) take n from the input before the first chunk (for a file: its size).

The outputs equal the non-streaming run's up to summation order (the same kernels of
:mod:`hardsoft.model.fastkernels`, with the carried state added to each chunk's prefix sums).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.attention import pair_scores
from hardsoft.model.fastkernels import (
    attend_gathered,
    pick,
    score_slack,
    threshold,
    unique_rows,
    window_bounds,
)
from hardsoft.model.fastpath import FEW_CLASSES, head_plan
from hardsoft.model.features import feature_rows
from hardsoft.model.scan import NEG_INF, ScanState, finish, merge, prefix_sum, segmented_scan
from hardsoft.model.spec import Mask, Weighting
from hardsoft.model.transformer import Head, Transformer

DEFAULT_CHUNK = 1 << 16
"""Positions per chunk of ``hardsoft run --stream`` (memory grows linearly with it)."""
WINDOW_LIMIT = 4096
"""The widest key window per query the window path streams."""
CAUSAL = (Mask.FUTURE, Mask.STRICT_FUTURE)


class HeadStream(ABC):
    """One streamable path of one head: ``step`` returns the head's mixed values ``[1, c, dv]``
    for the next chunk (and updates the carried state), or None if the path does not apply to
    this chunk (the head then drops it)."""

    path = ""

    def __init__(self, head: Head, n: int) -> None:
        self.head, self.n = head, n
        self.reason = ""  # why step() last returned None
        self.device = head.W_Q.device  # every carried state lives here (tests pin it)
        self.weighting, self.mask = head.spec.weighting, head.spec.mask
        self.strict = head.spec.mask is Mask.STRICT_FUTURE
        self.scale = head.score_scale(n)

    @abstractmethod
    def step(
        self, pos0: int, x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
    ) -> torch.Tensor | None:
        """The head's mixed values for the chunk at 0-based ``pos0``, or None."""


def _shift(carry: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``rows`` moved one position later, ``carry`` first (strict masks: through i − 1)."""
    return torch.cat([carry[None], rows[:-1]], 0)


class UniformStream(HeadStream):
    """All scores 0: running sums (softmax, average-hard), the first or previous value."""

    path = "uniform"

    def __init__(self, head: Head, n: int, dv: int, dtype: torch.dtype) -> None:
        super().__init__(head, n)
        self.total = torch.zeros(dv, dtype=dtype, device=self.device)
        self.first: torch.Tensor | None = None
        self.last = torch.zeros(dv, dtype=dtype, device=self.device)

    def step(self, pos0, x, q, k, v):
        vals = v[0]
        c = vals.shape[0]
        here = torch.arange(pos0, pos0 + c, device=self.device)
        hi = here - (1 if self.strict else 0)  # last allowed key
        ok = (hi >= 0)[:, None]
        if self.weighting is Weighting.LEFTMOST:
            if self.first is None:
                self.first = vals[0]
            out = self.first.expand_as(vals) * ok
        elif self.weighting is Weighting.RIGHTMOST:
            out = (_shift(self.last, vals) if self.strict else vals) * ok
            self.last = vals[-1]
        else:
            before = self.total
            sums = prefix_sum(vals[None])[0] + before
            self.total = sums[-1]
            if self.strict:
                sums = _shift(before, sums)
            out = sums / (hi + 1).clamp_min(1)[:, None].to(vals.dtype) * ok
        return out[None]


def _empty_state(dv: int, dtype: torch.dtype, hard: bool, device: torch.device) -> ScanState:
    idx = torch.full((1, 1), -1, dtype=torch.long, device=device) if hard else None
    return ScanState(
        torch.full((1, 1), NEG_INF, dtype=dtype, device=device),
        torch.zeros(1, 1, dtype=dtype, device=device),
        torch.zeros(1, 1, dv, dtype=dtype, device=device),
        idx,
    )


def _expand(st: ScanState, c: int) -> ScanState:
    idx = None if st.idx is None else st.idx.expand(1, c)
    return ScanState(st.m.expand(1, c), st.w.expand(1, c), st.a.expand(1, c, -1), idx)


class ScanStream(HeadStream):
    """Query-independent scores: the running attention state of all keys read so far."""

    path = "scan"

    def __init__(self, head: Head, n: int, q0: torch.Tensor, dv: int) -> None:
        super().__init__(head, n)
        self.q0 = q0  # [1, 1, d_head]: the query of every position
        self.carry = _empty_state(dv, q0.dtype, self.weighting.is_unique_hard, self.device)

    def step(self, pos0, x, q, k, v):
        if not torch.equal(q, self.q0.expand_as(q)):
            self.reason = "the query differs between positions"
            return None
        c = q.shape[1]
        s = pair_scores(self.q0, k, self.weighting)[:, 0] * self.scale
        positions = torch.arange(pos0, pos0 + c, device=self.device)[None]
        state = segmented_scan(s, v, self.weighting, positions=positions)
        merged = merge(_expand(self.carry, c), state, self.weighting)
        last = merged.slice(slice(c - 1, c))
        read = self.carry.cat(merged.slice(slice(0, c - 1))) if self.strict else merged
        self.carry = last
        return finish(read, self.weighting)


class WindowStream(HeadStream):
    """Keys that are functions of the position alone, scores polynomial in it. Each query's
    window of keys is recomputed from the key positions when the values are position-only
    too (no state); otherwise the window must lie within the last ``WINDOW_LIMIT`` positions,
    whose keys and values are carried (e.g. a head reading position i − 1)."""

    path = "window"

    def __init__(self, head: Head, n: int, features: tuple[str, ...], W_pos: torch.Tensor):
        super().__init__(head, n)
        self.features, self.W_pos = features, W_pos.detach()
        _, key_rows = head_plan(head)
        value_rows = head.W_V.detach().abs().sum(1).nonzero().flatten()
        self.rows = torch.unique(torch.cat([key_rows, value_rows]))
        self.is_key = torch.isin(self.rows, key_rows)
        w_pos = self.W_pos[:, key_rows]
        self.feat_key = w_pos @ head.W_K.detach()[key_rows]  # [P, d_head]
        self.key_terms = len(key_rows)
        self.coef, self.colmax = _polynomials(features, n, self.feat_key)
        self.coef = None if self.coef is None else self.coef.to(self.device)
        self.colmax = self.colmax.to(self.device)
        self.recent: tuple[torch.Tensor, torch.Tensor] | None = None  # last keys, values

    def _position_rows(self, positions: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """The head-input coordinates ``rows`` at 1-based ``positions``, from the embedding."""
        return feature_rows(self.features, positions, self.n, dtype) @ self.W_pos[:, self.rows]

    def _bounds(self, here: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The window ``[wlo, whi]`` (1-based) of each query, as the fast path computes it."""
        assert self.coef is not None
        abc = (self.scale * (q.double() @ self.feat_key.double().T)) @ self.coef  # [1, c, 3]
        kabs = self.colmax.to(q.dtype) @ self.feat_key.abs()
        terms = self.coef.shape[0] + self.key_terms
        t = threshold(self.weighting, q.dtype) + score_slack(q, kabs, self.scale, terms).double()
        hi = here.double() - (1 if self.strict else 0)
        return window_bounds(abc, torch.ones_like(hi), hi, t)

    def step(self, pos0, x, q, k, v):
        if self.coef is None:
            self.reason = "the key reads a position feature that is not a polynomial in j"
            return None
        c = q.shape[1]
        here = torch.arange(pos0 + 1, pos0 + c + 1, device=self.device)
        same = x[0][:, self.rows] == self._position_rows(here, x.dtype)  # [c, rows]
        if not bool(same[:, self.is_key].all()):
            self.reason = "the key reads coordinates that are not the position embedding"
            return None
        recent_k = k[0] if self.recent is None else torch.cat([self.recent[0], k[0]])
        recent_v = v[0] if self.recent is None else torch.cat([self.recent[1], v[0]])
        base = pos0 + c - len(recent_k) + 1  # the 1-based position of recent_k[0]
        self.recent = (recent_k[-WINDOW_LIMIT:], recent_v[-WINDOW_LIMIT:])
        wlo, whi = self._bounds(here, q)
        width = int((whi - wlo + 1).clamp_min(0).max())
        if width > WINDOW_LIMIT:
            self.reason = (
                f"{width} keys per query are within the {str(q.dtype)[6:]} threshold of the "
                f"row maximum (at most {WINDOW_LIMIT})"
            )
            return None
        out = torch.zeros(1, c, v.shape[-1], dtype=v.dtype, device=self.device)
        if width <= 0:
            return out
        first, last = int(wlo.min()), int(whi.max())
        span = last - first + 1  # consecutive queries share most keys (e.g. a lookup of C_i)
        keys: tuple[torch.Tensor, torch.Tensor] | None = None
        if not bool(same.all()):  # values depend on the content: read them from recent
            if first < base:
                self.reason = (
                    f"its values read content and its window reaches back past the last "
                    f"{WINDOW_LIMIT} positions"
                )
                return None
            keys = (
                recent_k[first - base : last - base + 1],
                recent_v[first - base : last - base + 1],
            )
        elif span <= c * width:
            keys = self._keys(torch.arange(first, last + 1, device=self.device), x)
        step = max(1, (1 << 21) // (width * x.shape[-1]))
        for s in range(0, c, step):
            e = min(c, s + step)
            span_w = torch.arange(width, device=self.device)
            idx = wlo[:, s:e].long()[..., None] + span_w  # 1-based [1, e-s, W]
            valid = idx <= whi[:, s:e].long()[..., None]
            if keys is None:
                kq, vq = self._keys(idx.clamp(1, self.n).flatten(), x)
            else:
                at = (idx - first).clamp(0, span - 1).flatten()
                kq, vq = keys[0][at], keys[1][at]
            kq, vq = kq.view(1, e - s, width, -1), vq.view(1, e - s, width, -1)
            out[:, s:e] = attend_gathered(q[:, s:e], kq, vq, valid, self.scale, self.weighting)
        return out

    def _keys(self, positions: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values at 1-based ``positions``, from the position embedding alone."""
        xt = x.new_zeros(len(positions), x.shape[-1])
        xt[:, self.rows] = self._position_rows(positions, x.dtype)
        return self.head.key(xt), self.head.value(xt)


def _polynomials(
    features: tuple[str, ...], n: int, feat_key: torch.Tensor
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """Per raw feature column: its coefficients ``(c0, c1, c2)`` (None if a column the key
    reads is not a polynomial of degree <= 2) and a bound on its absolute value over 1..n."""
    from hardsoft.model.features import parse_feature

    polys: list[tuple[float, float, float] | None] = []
    for name in features:
        f = parse_feature(name)
        polys += [f.polynomial(n) if f.dim == 1 else None] * f.dim
    used = (feat_key.abs().sum(1) > 0).nonzero().flatten().tolist()
    colmax = torch.zeros(len(polys), dtype=torch.float64, device="cpu")  # host tables
    if any(polys[f] is None for f in used):
        return None, colmax
    for f in used:
        c0, c1, c2 = polys[f] or (0.0, 0.0, 0.0)
        cands = [1.0, float(n)]
        if c2:
            vertex = -c1 / (2 * c2)
            cands += [min(max(math.floor(vertex) + d, 1.0), float(n)) for d in (0, 1)]
        colmax[f] = max(abs(c0 + c1 * i + c2 * i * i) for i in cands)
    coef = torch.tensor(
        [p or (0.0, 0.0, 0.0) for p in polys], dtype=torch.float64, device="cpu"
    ).reshape(-1, 3)
    return coef, colmax


class ClassStream(HeadStream):
    """At most ``FEW_CLASSES`` distinct keys (softmax, average-hard): per class, the count and
    the sum of the values read so far; each query combines the classes by their scores."""

    path = "classes"

    def __init__(self, head: Head, n: int, dk: int, dv: int, dtype: torch.dtype) -> None:
        super().__init__(head, n)
        self.kappa = torch.zeros(0, dk, dtype=dtype, device=self.device)
        self.counts = torch.zeros(0, dtype=dtype, device=self.device)
        self.sums = torch.zeros(0, dv, dtype=dtype, device=self.device)

    def _classes(self, keys: torch.Tensor) -> torch.Tensor | None:
        """Each key's class (new classes appended), or None past ``FEW_CLASSES``."""
        u, inv = unique_rows(keys)
        same = (u[:, None, :] == self.kappa[None]).all(-1)  # [U, C]
        new = ~same.any(1)
        if len(self.kappa) + int(new.sum()) > FEW_CLASSES:
            self.reason = f"more than {FEW_CLASSES} distinct keys"
            return None
        c0 = len(self.kappa)
        self.kappa = torch.cat([self.kappa, u[new]])
        grow = int(new.sum())
        self.counts = torch.cat([self.counts, self.counts.new_zeros(grow)])
        self.sums = torch.cat([self.sums, self.sums.new_zeros(grow, self.sums.shape[1])])
        ids = torch.empty(len(u), dtype=torch.long, device=self.device)
        if c0:
            ids[~new] = same[~new].to(torch.long).argmax(1)
        ids[new] = torch.arange(c0, c0 + grow, device=self.device)
        return ids[inv]

    def step(self, pos0, x, q, k, v):
        cls = self._classes(k[0])
        if cls is None:
            return None
        vals = v[0]
        onehot = torch.nn.functional.one_hot(cls, len(self.kappa)).to(vals.dtype)  # [c, C]
        counts = prefix_sum(onehot[None])[0] + self.counts
        sums = prefix_sum((onehot[..., None] * vals[:, None, :])[None])[0] + self.sums
        before_c, before_s = self.counts, self.sums
        self.counts, self.sums = counts[-1], sums[-1]
        if self.strict:
            counts, sums = _shift(before_c, counts), _shift(before_s, sums)
        valid = (counts > 0)[None]
        m = torch.where(valid, torch.zeros_like(counts), torch.full_like(counts, NEG_INF))
        st = ScanState(m, counts[None], sums[None] * valid[..., None])
        a = (q @ self.kappa.T) * self.scale
        z = torch.where(valid, a + st.m, torch.full_like(a, NEG_INF))
        return pick(z, z.amax(-1), valid, st, self.weighting)


def _candidates(model: Transformer, name: str, head: Head, n: int, q, k, v) -> list[HeadStream]:
    """The paths that may stream ``head`` (refusing, in one line, a head that reads right)."""
    if head.spec.mask not in CAUSAL:
        raise HardsoftError(
            f"head {name} has mask {head.spec.mask.value!r}: it reads keys to the right of its "
            "query, which a stream has not read yet (--stream needs every mask future or "
            "strict-future)"
        )
    uniform, _ = head_plan(head)
    dv, dtype = v.shape[-1], v.dtype
    if uniform:
        return [UniformStream(head, n, dv, dtype)]
    out: list[HeadStream] = [ScanStream(head, n, q[:, :1].clone(), dv)]
    out.append(WindowStream(head, n, model.spec.position_features, model.W_pos))
    if not head.spec.weighting.is_unique_hard:
        out.append(ClassStream(head, n, k.shape[-1], dv, dtype))
    return out


class Stream:
    """A model run over one input of length ``n``, fed chunk by chunk (:meth:`feed`)."""

    def __init__(self, model: Transformer, n: int) -> None:
        if n < 1:
            raise HardsoftError("a streamed input needs length >= 1")
        self.model, self.n, self.pos = model, n, 0
        self.heads: dict[str, list[HeadStream] | None] = {}

    @property
    def paths(self) -> dict[str, str]:
        """The path each head streams by (the first of its surviving paths)."""
        return {name: c[0].path for name, c in self.heads.items() if c}

    def _head(self, name: str, head: Head, a_in: torch.Tensor) -> torch.Tensor:
        q, k, v = head.qkv(a_in)
        cands = self.heads.get(name)
        if cands is None:
            cands = _candidates(self.model, name, head, self.n, q, k, v)
        out, alive = None, []
        for cand in cands:
            mixed = cand.step(self.pos, a_in, q, k, v)
            if mixed is not None:
                alive.append(cand)
                out = mixed if out is None else out
        if out is None:
            tried = "; ".join(f"{c.path}: {c.reason}" if c.reason else c.path for c in cands)
            hint = ""
            if self.model.dtype != torch.float64:
                hint = f" (in {str(self.model.dtype)[6:]}: try --dtype float64)"
            raise HardsoftError(
                f"head {name} fits none of the streamed paths at positions "
                f"{self.pos + 1}..{self.pos + a_in.shape[1]} ({tried}): it needs the dense "
                f"path, which cannot stream{hint}"
            )
        self.heads[name] = alive
        return head.result(out)

    @torch.no_grad()
    def feed(self, ids: torch.Tensor) -> torch.Tensor:
        """The outputs ``[c, d_out]`` at the next ``c`` positions, given their token ids."""
        c = int(ids.shape[0])
        if self.pos + c > self.n:
            raise HardsoftError(f"the stream got more than the announced {self.n} positions")
        model = self.model
        x = model.embed(ids[None].to(model.device), offset=self.pos, n=self.n)
        for ell, block in enumerate(model.blocks):
            if block.heads:
                a_in = block.attn_input(x)
                x = x + sum(
                    self._head(f"blocks.{ell}.attn.{h}", head, a_in)
                    for h, head in enumerate(block.heads)
                )
            x = block.after_attention(x)
        self.pos += c
        return model.readout(x)[0]


# ---- input files ---------------------------------------------------------------------------


def file_length(path: Path) -> int:
    """The input length of a streamed input file: its size without one trailing newline."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(max(0, size - 2))
        tail = f.read()
    if tail.endswith(b"\r\n"):
        return size - 2
    return size - 1 if tail.endswith(b"\n") else size


def symbol_table(alphabet: tuple[str, ...]) -> np.ndarray:
    """Byte -> token id (−1: not a symbol); streamed files need one-byte (ASCII) symbols."""
    table = np.full(256, -1, dtype=np.int64)
    for i, a in enumerate(alphabet):
        raw = a.encode()
        if len(raw) != 1:
            raise HardsoftError(
                f"symbol {a!r} is not one byte: a streamed input file needs ASCII symbols"
            )
        table[raw[0]] = i
    return table


SPOOL_BLOCK = 1 << 20
"""Bytes read from a pipe at a time while it is copied to a temporary file."""


@contextlib.contextmanager
def seekable_input(
    path: Path, alphabet: tuple[str, ...], progress: Callable[[str], None] | None = None
) -> Iterator[Path]:
    """``path`` itself when it is a regular file; a pipe (``--input-file /dev/stdin``, a
    process substitution ``<(...)``) or another stream is first copied into a temporary file,
    which is removed after: the model's position features and τ(n) need the length n before
    the first position is computed, and a pipe says its length only at its end. The copy
    refuses a byte that is no symbol and a second line as soon as it reads them (so
    ``/dev/urandom`` or ``yes`` stop at once), says every 10 s how far it got, and stops
    before it fills the temporary folder's disk (80% of its free space)."""
    if path.is_file():
        yield path
        return
    fd, tmp = tempfile.mkstemp(prefix="hardsoft-stream-", suffix=".txt")
    try:
        limit = int(0.8 * shutil.disk_usage(Path(tmp).parent).free)
        with os.fdopen(fd, "wb") as out:
            _spool(path, out, limit, alphabet, progress)
        yield Path(tmp)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _spool(
    path: Path,
    out: Any,
    limit: int,
    alphabet: tuple[str, ...],
    progress: Callable[[str], None] | None,
) -> None:
    """Copy the stream ``path`` into ``out``, at most ``limit`` bytes (:func:`seekable_input`)."""
    table = symbol_table(alphabet)
    total, shown = 0, time.perf_counter()
    newline_at, newline = 0, 10  # the first line end seen: 1-based position (0: none), byte
    try:
        with open(path, "rb") as f:
            while block := f.read(SPOOL_BLOCK):
                raw = np.frombuffer(block, dtype=np.uint8)
                ends = (raw == 10) | (raw == 13)
                bad = np.flatnonzero((table[raw] < 0) & ~ends)
                if bad.size:
                    raise _not_a_symbol(path, raw[bad[0]], total + int(bad[0]) + 1, alphabet)
                if not newline_at and ends.any():
                    k = int(np.argmax(ends))
                    newline_at, newline = total + k + 1, int(raw[k])
                symbols = np.flatnonzero(~ends) + total + 1
                if newline_at and symbols.size and symbols[-1] > newline_at:  # a second line
                    raise _not_a_symbol(path, newline, newline_at, alphabet)
                out.write(block)
                total += len(block)
                if total > limit:
                    raise HardsoftError(
                        f"{str(path)!r}: the input read from it passed {total:,} bytes, 80% of "
                        "the free space of the temporary folder it is copied to (set TMPDIR "
                        "to a larger one)"
                    )
                if progress is not None and time.perf_counter() - shown >= 10:
                    shown = time.perf_counter()
                    progress(f"  read {total:,} bytes of {str(path)!r} so far")
    except OSError as exc:
        raise HardsoftError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None


def _not_a_symbol(
    path: Path, value: Any, position: int, alphabet: tuple[str, ...]
) -> HardsoftError:
    """The error for a byte of a streamed input that is not a symbol."""
    byte = bytes([int(value)])
    why = " (a streamed file holds one input)" if byte in b"\r\n" else ""
    return HardsoftError(
        f"{str(path)!r}: byte {byte!r} at position {position} is not a symbol of the model's "
        f"alphabet {''.join(alphabet)!r}{why}"
    )


def read_chunks(
    path: Path, alphabet: tuple[str, ...], chunk: int, name: Path | None = None
) -> tuple[int, Iterator]:
    """The length n of the input in ``path`` (one input, one line) and an iterator over its
    token ids in chunks of ``chunk``; a byte outside the alphabet is a one-line error naming
    ``name`` (default ``path``: the file the user gave, where ``path`` is its copy)."""
    shown = path if name is None else name
    n = file_length(path)
    if n == 0:  # one message for run and check, naming the file
        raise HardsoftError(f"{str(shown)!r} holds the empty input: nothing to stream")
    table = symbol_table(alphabet)

    def chunks() -> Iterator[np.ndarray]:
        with open(path, "rb") as f:
            for start in range(0, n, chunk):
                raw = np.fromfile(f, dtype=np.uint8, count=min(chunk, n - start))
                ids = table[raw]
                if bool((ids < 0).any()):
                    at = int(np.argmax(ids < 0))
                    raise _not_a_symbol(shown, raw[at], start + at + 1, alphabet)
                yield ids

    return n, chunks()


def check_stream(
    model: Transformer,
    formula: Any,
    path: Path,
    chunk: int = DEFAULT_CHUNK,
    name: Path | None = None,
) -> dict[str, Any]:
    """Stream ``model`` and the past-only ``formula``'s reference
    (:class:`hardsoft.logic.streaming.StreamEvaluator`) side by side over the one input in
    ``path``, chunk by chunk (memory O(chunk)), and compare at every position the model's
    declared readout (:func:`hardsoft.model.readout.acceptance_of`: by default output
    coordinate 0 > 1/2, as ``hardsoft check``) with the formula's value.

    Returns ``n``, ``checked_positions``, ``mismatched_positions``, ``max_abs_error``
    (coordinate readouts: the largest ``|y_i[index] − reference_i|``), ``first_mismatch``
    (``{"position", "expected", "got", "output"}`` or None), ``attention_paths``, ``chunk``,
    ``dtype`` and ``seconds``. ``path`` is a regular file (:func:`seekable_input` makes one
    of a pipe); ``name``: the file the user gave, for messages."""
    from hardsoft.logic.streaming import StreamEvaluator
    from hardsoft.model.readout import acceptance_of

    if chunk < 1:
        raise HardsoftError(f"--chunk must be >= 1, not {chunk}")
    readout = acceptance_of(model)
    n, chunks = read_chunks(path, model.spec.alphabet, chunk, name)
    reference = StreamEvaluator(formula, model.spec.alphabet, n)
    stream = Stream(model, n)
    started = time.perf_counter()
    wrong_total, max_err = 0, 0.0
    first: dict[str, Any] | None = None
    for ids in chunks:
        start = stream.pos
        rows = stream.feed(torch.from_numpy(ids))
        got = readout.accept(rows).cpu().numpy()
        want = reference.feed(ids)
        value = rows[:, readout.index].detach().to("cpu", torch.float64).numpy()
        if readout.kind == "coordinate":
            max_err = max(max_err, float(np.abs(value - want).max()))
        wrong = got != want
        wrong_total += int(wrong.sum())
        if first is None and bool(wrong.any()):
            k = int(np.argmax(wrong))
            first = {
                "position": start + k + 1,
                "expected": int(want[k]),
                "got": int(got[k]),
                "output": float(value[k]),
            }
    return {
        "n": n,
        "checked_positions": n,
        "mismatched_positions": wrong_total,
        "max_abs_error": max_err if readout.kind == "coordinate" else None,
        "first_mismatch": first,
        "readout": readout.describe().replace("y_n", "y_i"),
        "attention_paths": stream.paths,
        "chunk": chunk,
        "dtype": str(model.dtype).removeprefix("torch."),
        "seconds": round(time.perf_counter() - started, 3),
    }


class _PartFile:
    """A file written block by block under a temporary name beside ``path``, renamed onto it
    only when complete (:meth:`close` with ``ok``): an error leaves nothing behind."""

    def __init__(self, path: Path) -> None:
        from hardsoft.model.io import clean_stale_temps, temp_prefix
        from hardsoft.validate import output_file

        self.path = output_file(path, "-o")
        clean_stale_temps(self.path.parent)
        self.tmp = self.path.with_name(f"{temp_prefix(self.path)}part.tmp")
        self.rows = 0
        try:
            self.f = open(self.tmp, "wb")
        except OSError as exc:
            raise HardsoftError(f"cannot write {str(path)!r}: {exc.strerror}") from None

    def complete(self) -> bool:
        return True

    def close(self, ok: bool) -> None:
        self.f.close()
        if ok and self.complete():
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)


class NpyWriter(_PartFile):
    """A ``.npy`` file of shape ``[n, d]`` written row block by row block (the header first),
    atomically: it appears at ``path`` only when every row is in (:meth:`close`)."""

    def __init__(self, path: Path, n: int, d: int, dtype: torch.dtype) -> None:
        super().__init__(path)
        self.dtype = np.dtype(str(dtype).removeprefix("torch."))
        self.n = n
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False}
        np.lib.format.write_array_header_1_0(self.f, header | {"shape": (n, d)})

    def write(self, rows: torch.Tensor, start: int = 0) -> None:
        self.f.write(rows.detach().cpu().numpy().astype(self.dtype, copy=False).tobytes())
        self.rows += rows.shape[0]

    def complete(self) -> bool:
        return self.rows == self.n


class JsonlWriter(_PartFile):
    """JSON Lines, one line per position (``lines(start, rows)`` formats a block), written
    atomically like :class:`NpyWriter`."""

    def __init__(self, path: Path, lines: Any) -> None:
        super().__init__(path)
        self.lines = lines

    def write(self, rows: torch.Tensor, start: int) -> None:
        self.f.write(self.lines(start, rows).encode())
        self.rows += rows.shape[0]

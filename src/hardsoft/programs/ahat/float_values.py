"""Values of a compiled program at one length, with their rounding errors: the pieces of the
float-limit analysis (:mod:`hardsoft.programs.ahat.rounding`).

A :class:`Val` is a node's exact range, error bound, grid (exact values are multiples of
2^-g: integers, steps, a lookup's scores), its size as a dot product, and, for a multiple of
one position monomial or a function of the current symbol alone, that too. :func:`feature`
gives a position feature's (computed in the model's dtype), :func:`linear` a linear form's
(one dot product), :class:`OneInput` a feed-forward piece sum of one form.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.ahat import dsl


@dataclass(frozen=True)
class Fmt:
    """A float format: unit roundoff ``u``, significand bits ``p`` (integers below 2^p are
    exact) and its least positive (subnormal) number ``tiny``."""

    name: str
    u: float
    p: int
    tiny: float

    def gamma(self, m: int) -> float:
        """γ_m = m·u/(1 − m·u): the relative error bound of a sum of m rounded terms."""
        mu = m * self.u
        return mu / (1.0 - mu) if mu < 0.5 else math.inf


FORMATS = (Fmt("float64", 2.0**-53, 53, 2.0**-1074), Fmt("float32", 2.0**-24, 24, 2.0**-149))


class NoLimit(HardsoftError):
    """The program uses something the analysis has no bound for."""


@dataclass(frozen=True)
class Mono:
    """``c · i^a · n^b`` of the query or key position (a score term's size over a mask is
    then largest at a corner of the allowed region)."""

    c: float
    a: int
    b: int

    def scaled(self, k: float) -> Mono:
        return Mono(self.c * k, self.a, self.b)


@dataclass(frozen=True, eq=False)
class Val:
    """A node's value at length n: exact range ``[lo, hi]``, error bound ``err``, grid ``g``
    (exact values are multiples of 2^-g; None: no grid), ``absum`` (Σ|terms| of the dot
    product computing it) and, for a multiple of one position monomial, ``mono`` and its
    relative error ``rel``."""

    lo: float
    hi: float
    err: float = 0.0
    grid: int | None = 0
    absum: float = -1.0
    mono: Mono | None = None
    rel: float = 0.0
    by_symbol: np.ndarray | None = None
    """The exact value for each current symbol, where it depends on nothing else."""

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def size(self) -> float:
        return max(self.absum, self.mag)


EXACT_ONE = Val(1.0, 1.0, 0.0, 0, 1.0, Mono(1.0, 0, 0))


@functools.lru_cache(maxsize=4096)
def dyadic(c: float) -> int | None:
    """The least b >= 0 with c·2^b an integer below 2^53 (None: not dyadic)."""
    for b in range(64):
        x = c * 2.0**b
        if x.is_integer():
            return b if abs(x) < 2.0**53 else None
    return None


@functools.lru_cache(maxsize=4096)
def representable(c: float, fmt: Fmt) -> bool:
    """Whether the weight c is stored exactly in ``fmt``."""
    b = dyadic(c)
    if c == 0.0 or b is None:
        return c == 0.0
    return abs(c) * 2.0**b < 2.0**fmt.p


# ---- position features ---------------------------------------------------------------------

_MONOS = {
    "1": (0, 0),
    "i": (1, 0),
    "n": (0, 1),
    "i/n": (1, -1),
    "1/i": (-1, 0),
    "1/n": (0, -1),
    "i^2": (2, 0),
    "(i/n)^2": (2, -2),
}
_DIVIDED = {"i/n": 1, "1/i": 1, "1/n": 1, "(i/n)^2": 3}
"""Features computed with rounding: the number of rounded operations."""


def feature(name: str, n: int, fmt: Fmt) -> Val:
    """The value of position feature ``name`` at length n (its compute in the model's dtype,
    :mod:`hardsoft.model.features`)."""
    text = "".join(name.split())
    if "*" in text:
        parts = [feature(p, n, fmt) for p in text.split("*")]
        return _product(parts, fmt)
    s = math.isqrt(n - 1) + 1 if n > 1 else 1
    ranges = {
        "1": (1.0, 1.0),
        "i": (1.0, float(n)),
        "n": (float(n), float(n)),
        "i^2": (1.0, float(n) ** 2),
        "(-1)^i": (-1.0, 1.0),
        "[i=1]": (0.0, 1.0),
        "[i=n]": (0.0, 1.0),
        "i//s": (0.0, float(n // s)),
        "i%s": (0.0, float(s - 1)),
    }
    if text in ranges or text.startswith("[imod"):
        lo, hi = ranges.get(text, (0.0, 1.0))
        mono = Mono(1.0, *_MONOS[text]) if text in _MONOS else None
        if max(abs(lo), abs(hi), n) < 2.0**fmt.p:
            return Val(lo, hi, 0.0, 0, max(abs(lo), abs(hi)), mono)
        return _inexact(lo, hi, 2 * fmt.u, mono, 0)
    if text in _DIVIDED:
        a, b = _MONOS[text]
        lo, hi = sorted(((1.0 / n) ** abs(a or b), 1.0))
        rel = (_DIVIDED[text] + (2 if n >= 2.0**fmt.p else 0)) * fmt.u
        return _inexact(lo, hi, rel, Mono(1.0, a, b))
    raise NoLimit(f"position feature {name!r} has no rounding bound")


def _inexact(lo: float, hi: float, rel: float, mono: Mono | None, grid: int | None = None) -> Val:
    mag = max(abs(lo), abs(hi))
    return Val(lo, hi, rel * mag, grid, mag, mono, rel)


def _product(parts: list[Val], fmt: Fmt) -> Val:
    lo, hi = parts[0].lo, parts[0].hi
    for v in parts[1:]:
        cands = (lo * v.lo, lo * v.hi, hi * v.lo, hi * v.hi)
        lo, hi = min(cands), max(cands)
    monos = [v.mono for v in parts if v.mono is not None]
    mono = None
    if len(monos) == len(parts):
        mono = Mono(1.0, sum(m.a for m in monos), sum(m.b for m in monos))
    mag = max(abs(lo), abs(hi))
    if all(v.err == 0 and v.grid == 0 for v in parts) and mag < 2.0**fmt.p:
        return Val(lo, hi, 0.0, 0, mag, mono)
    rel = sum(v.rel if v.mono else v.err / max(v.mag, 1e-300) for v in parts)
    grid = 0 if all(v.grid == 0 for v in parts) else None
    return _inexact(lo, hi, rel + (len(parts) - 1) * fmt.u, mono, grid)


# ---- linear forms and feed-forward pieces --------------------------------------------------


@dataclass(frozen=True)
class Computed:
    """A dot product's value and the two parts of its error: carried from its inputs, and
    its own rounding."""

    val: Val
    carried: float
    rounding: float


def linear(
    terms: Sequence[tuple[float, Val]],
    const: float,
    fmt: Fmt,
    table: np.ndarray | None | bool = True,
) -> Computed:
    """``Σ c·x + const`` computed as one dot product (the constant as one more term).
    ``table``: its value per current symbol where known (it does not depend on n), or True
    to compute it.

    Where the exact result and every exact partial sum are representable (a grid below 2^p,
    exact weights) and the carried error is tiny (:func:`rounded_away`), rounding adds at most
    the carried error again: the error stays tiny (a softmax head's e^-90 off its value)."""
    lo = hi = const
    for c, v in terms:
        lo, hi = lo + min(c * v.lo, c * v.hi), hi + max(c * v.lo, c * v.hi)
    if table is True:
        table = by_symbol(terms, const)
    if isinstance(table, np.ndarray):
        lo, hi = float(table.min()), float(table.max())
    absum = sum(abs(c) * v.mag for c, v in terms) + abs(const)
    mono = _mono(terms, const)
    grids = [_grid_of(c, v) for c, v in terms] + [dyadic(const) if const else 0]
    grid = None if None in grids else max(g for g in grids if g is not None)
    weights = [c for c, _ in terms] + [const]
    on_grid = (
        grid is not None
        and all(representable(c, fmt) for c in weights)
        and absum * 2.0**grid < 2.0**fmt.p
    )
    carried = sum(abs(c) * v.err for c, v in terms)
    m = len(terms) + (1 if const else 0)
    rounding = fmt.gamma(m) * absum
    rounding += sum(abs(c) * v.mag * fmt.u for c, v in terms if not representable(c, fmt))
    rounding += 0.0 if representable(const, fmt) else abs(const) * fmt.u
    if on_grid and rounded_away(carried, grid, fmt):
        rounding = min(rounding, carried)
    err = carried + rounding
    rel = err / max(abs(lo), abs(hi), 1e-300) if mono is not None else 0.0
    return Computed(Val(lo, hi, err, grid, absum, mono, rel, _table(table)), carried, rounding)


def rounded_away(err: float, grid: int | None, fmt: Fmt) -> bool:
    """Whether sums of values each within their share of ``err`` of a grid are rounded back
    onto it: every exact partial sum P is a float; where P != 0, the computed one is within
    ``err`` of it, below a quarter of the float spacing at |P| >= 2^-g (so it rounds to P
    exactly); where P = 0 it stays within ``err`` (times 1 + u). So a sum or dot product of
    such values is off by at most 2·err."""
    return grid is not None and 2.0 * err < fmt.u * 2.0 ** (-grid) / 4.0


def _table(table: np.ndarray | None | bool) -> np.ndarray | None:
    return table if isinstance(table, np.ndarray) else None


def by_symbol(terms: Sequence[tuple[float, Val]], const: float) -> np.ndarray | None:
    """The form's exact value per current symbol, where every term has one."""
    tables = [(c, v.by_symbol) for c, v in terms if v.by_symbol is not None]
    if not terms or len(tables) < len(terms):
        return None
    out = np.full(len(tables[0][1]), const)
    for c, t in tables:
        out = out + c * t
    return out


def _grid_of(c: float, v: Val) -> int | None:
    b = dyadic(c)
    return None if b is None or v.grid is None else v.grid + b


def _mono(terms: Sequence[tuple[float, Val]], const: float) -> Mono | None:
    if not terms:
        return Mono(const, 0, 0) if const else None
    if len(terms) == 1 and not const and terms[0][1].mono is not None:
        c, v = terms[0]
        return v.mono.scaled(c)  # type: ignore[union-attr]
    return None


def relu(v: Val) -> Val:
    table = None if v.by_symbol is None else np.maximum(v.by_symbol, 0.0)
    return replace(v, lo=max(v.lo, 0.0), hi=max(v.hi, 0.0), mono=None, by_symbol=table)


@dataclass(frozen=True)
class OneInput:
    """A piece sum ``g(t) = Σ w_k ReLU(a_k t + b_k)`` of one form t."""

    w: tuple[float, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]

    def at(self, t: float) -> float:
        return sum(w * max(a * t + b, 0.0) for w, a, b in zip(self.w, self.a, self.b))

    def kinks(self, lo: float, hi: float) -> list[float]:
        ks = [-b / a for a, b in zip(self.a, self.b) if a != 0.0]
        return [lo, hi, *(k for k in ks if lo < k < hi)]

    def swing(self, t0: float, e: float) -> float:
        """max |g(t) − g(t0)| over |t − t0| <= e (a piecewise-linear g: at kinks and ends)."""
        return max(abs(self.at(t) - self.at(t0)) for t in self.kinks(t0 - e, t0 + e))

    def range(self, lo: float, hi: float) -> tuple[float, float]:
        values = [self.at(t) for t in self.kinks(lo, hi)]
        return min(values), max(values)


def one_input(pieces: Sequence[tuple[float, dsl.Linear]]) -> tuple[dsl.Linear, OneInput] | None:
    """The pieces as ``g(F)`` of one form F (every piece ``a·F + b``), or None."""
    ref = next((f for _, f in pieces if f.terms), None)
    if ref is None:
        return None
    (x0, c0), *_ = ref.terms.items()
    ws, as_, bs = [], [], []
    for w, f in pieces:
        a = f.terms.get(x0, 0.0) / c0
        if set(f.terms) - set(ref.terms) or any(
            not math.isclose(f.terms.get(x, 0.0), a * c, rel_tol=1e-12, abs_tol=0.0)
            for x, c in ref.terms.items()
        ):
            return None
        ws.append(w)
        as_.append(a)
        bs.append(f.const)
    return dsl.Linear(dict(ref.terms), 0.0), OneInput(tuple(ws), tuple(as_), tuple(bs))


SNAP_POINTS = 256
"""Up to this many grid points in its input's range, a one-input piece sum is checked for
flat pieces around every exact input."""

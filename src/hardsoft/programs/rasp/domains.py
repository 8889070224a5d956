"""What values an SOp can take, at every length: the analysis that decides the encodings.

* :class:`Finite` — a fixed finite set (tokens, Maps of finite SOps, categorical Aggregates):
  one-hot, one exact 0/1 coordinate per value, the same at every length;
* :class:`Ints` — integers whose range grows with n (``indices`` in ``[0, n − 1]``, ``length``,
  counts, their affine maps): one coordinate holding the integer, never one-hot;
* :class:`Reals` — numbers that are neither (means): one coordinate.

Bounds are affine in n (:class:`Bound`, ``a·n + b``), so a bounded compile (``--max-len N``)
can list an unbounded SOp's values at n <= N exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

NUMBER = (int, float, bool)


def is_number(v: Any) -> bool:
    return isinstance(v, NUMBER)


def key(v: Any) -> Any:
    """A dictionary key that keeps 1, 1.0 and True apart."""
    return (type(v), v)


def distinct(values: Iterable[Any]) -> tuple[Any, ...]:
    """The values without repeats (1, 1.0 and True kept apart), None dropped, in first-seen
    order, floats checked finite (NaN is not a value: it is not equal to itself)."""
    seen: set[Any] = set()
    out = []
    for v in values:
        if v is None:
            continue
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"the value {v!r} cannot be compiled (it is not a finite number)")
        try:
            k = key(v)
            hash(k)
        except TypeError:
            raise ValueError(f"the value {v!r} is not hashable, so it cannot be one-hot") from None
        if k not in seen:
            seen.add(k)
            out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class Bound:
    """``a·n + b``."""

    a: float
    b: float

    def at(self, n: int) -> float:
        return self.a * n + self.b

    def __add__(self, other: Bound) -> Bound:
        return Bound(self.a + other.a, self.b + other.b)

    def scaled(self, c: float) -> Bound:
        return Bound(self.a * c, self.b * c)

    def text(self) -> str:
        if self.a == 0:
            return f"{self.b:g}"
        lead = "n" if self.a == 1 else f"{self.a:g}*n"
        return lead if self.b == 0 else f"{lead} {'+' if self.b > 0 else '-'} {abs(self.b):g}"


@dataclass(frozen=True)
class Finite:
    values: tuple[Any, ...]
    nullable: bool = False

    @property
    def numeric(self) -> bool:
        return all(is_number(v) for v in self.values)

    @property
    def boolean(self) -> bool:
        return bool(self.values) and all(isinstance(v, bool) for v in self.values)

    def code(self, v: Any) -> int:
        k = key(v)
        for c, w in enumerate(self.values):
            if key(w) == k:
                return c
        raise KeyError(v)

    def spacing(self) -> float:
        """The smallest distance between two numeric values (1 if there is one value)."""
        xs = sorted(float(v) for v in self.values)
        gaps = [b - a for a, b in zip(xs, xs[1:]) if b > a]
        return min(gaps, default=1.0)

    def interval(self) -> tuple[float, float]:
        xs = [float(v) for v in self.values] or [0.0]
        return min(xs), max(xs)

    def describe(self) -> str:
        shown = ", ".join(repr(v) for v in self.values[:8])
        more = ", ..." if len(self.values) > 8 else ""
        return f"{{{shown}{more}}}" + (" or None" if self.nullable else "")


@dataclass(frozen=True)
class Ints:
    lo: Bound
    hi: Bound
    nullable: bool = False

    def values_up_to(self, max_len: int) -> range:
        """Every value it can take at some n <= max_len."""
        lo = min(self.lo.at(n) for n in (1, max_len))
        hi = max(self.hi.at(n) for n in (1, max_len))
        return range(math.floor(lo), math.ceil(hi) + 1)

    def within(self, lo: Bound, hi: Bound) -> bool:
        """Whether ``lo <= value <= hi`` at every n >= 1 (affine bounds: checked at n = 1 and
        on the slopes)."""
        return (
            self.lo.a >= lo.a
            and self.lo.at(1) >= lo.at(1)
            and self.hi.a <= hi.a
            and self.hi.at(1) <= hi.at(1)
        )

    def describe(self) -> str:
        return f"integers in [{self.lo.text()}, {self.hi.text()}]" + (
            " or None" if self.nullable else ""
        )


@dataclass(frozen=True)
class Reals:
    lo: float | None = None
    hi: float | None = None
    nullable: bool = False

    def describe(self) -> str:
        if self.lo is None or self.hi is None:
            return "real numbers"
        return f"real numbers in [{self.lo:g}, {self.hi:g}]"


@dataclass(frozen=True)
class Tuples:
    """Tuples whose components are SOps of their own (some unbounded): a tuple is carried as
    its components, never as one value (:class:`~.ops.Pack`)."""

    parts: tuple[Any, ...]  # the components' domains
    nullable: bool = False

    def describe(self) -> str:
        inner = ", ".join(p.describe() for p in self.parts)
        return f"tuples of ({inner})" + (" or None" if self.nullable else "")


Domain = Finite | Ints | Reals | Tuples


def ints_of_finite(d: Finite) -> Ints | None:
    """A finite set of integers as an :class:`Ints` with constant bounds (None otherwise)."""
    if not d.values or not all(isinstance(v, (int, bool)) for v in d.values):
        return None
    lo, hi = d.interval()
    return Ints(Bound(0, lo), Bound(0, hi), d.nullable)


def affine_bounds(terms: list[tuple[float, Ints]], const: float) -> tuple[Bound, Bound]:
    """Interval arithmetic on affine bounds: ``Σ c_k x_k + const``."""
    lo, hi = Bound(0, const), Bound(0, const)
    for c, d in terms:
        if c >= 0:
            lo, hi = lo + d.lo.scaled(c), hi + d.hi.scaled(c)
        else:
            lo, hi = lo + d.hi.scaled(c), hi + d.lo.scaled(c)
    return lo, hi


def interval(d: Domain) -> tuple[float | None, float | None]:
    if isinstance(d, Finite):
        if not d.values or not d.numeric:
            return None, None
        return d.interval()
    if isinstance(d, Reals):
        return d.lo, d.hi
    return None, None


def dyadic_scale(values: list[Fraction], limit: int = 1 << 20) -> int | None:
    """The least power of two that makes every value an integer (None above ``limit``)."""
    scale = 1
    for v in values:
        den = v.denominator
        if den & (den - 1):
            return None
        scale = max(scale, den)
    return scale if scale <= limit else None

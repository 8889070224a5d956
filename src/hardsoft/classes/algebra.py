"""Symbolic values of counting models: Laurent polynomials over ``i``, ``n`` and counts, and
vectors of them (the residual of a class whose coordinates grow with the input).

Variables (strings, so monomials sort and hash cheaply):

* ``i`` (the position, ``1 <= i <= n``) and ``n`` (the length);
* ``c<k>``: a count ``#<[φ]`` (positions ``j <= i``) or ``#>[φ]`` (``j >= i``), registered in
  :class:`Vars` with its predicate;
* ``v<k>``: ``1 / L`` for a linear form ``L`` that is positive wherever the value is used (a
  mask window's size, ``n - i + 1``, or the number of its positions in an attention tier).

A :class:`Poly` maps monomials (sorted ``(variable, exponent)`` pairs) to exact rationals; a
:class:`SymVec` maps monomials to float64 rows of the residual stream, so the model's own linear
maps (``Head.query``, ``Block.ffn_in``...) apply to its coefficient matrix unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

Mono = tuple[tuple[str, int], ...]
ONE: Mono = ()
POSITIVE = ("i", "n")
"""Variables that are at least 1 at every position (a count may be 0)."""


def mono_mul(a: Mono, b: Mono) -> Mono:
    """The product of two monomials."""
    if not a:
        return b
    if not b:
        return a
    exps = dict(a)
    for var, e in b:
        exps[var] = exps.get(var, 0) + e
    return tuple(sorted((v, e) for v, e in exps.items() if e))


def mono_pow(m: Mono, var: str) -> int:
    """The exponent of ``var`` in ``m``."""
    for v, e in m:
        if v == var:
            return e
    return 0


def mono_without(m: Mono, var: str) -> Mono:
    return tuple((v, e) for v, e in m if v != var)


def degree(m: Mono) -> int:
    return sum(e for _, e in m)


class Poly:
    """A Laurent polynomial with exact rational coefficients (immutable by convention)."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Mono, Fraction] | None = None) -> None:
        self.terms: dict[Mono, Fraction] = {m: c for m, c in (terms or {}).items() if c}

    @staticmethod
    def const(c: Fraction | int | float) -> Poly:
        return Poly({ONE: Fraction(c)})

    @staticmethod
    def var(name: str, exp: int = 1) -> Poly:
        return Poly({((name, exp),): Fraction(1)})

    def __add__(self, other: Poly) -> Poly:
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, Fraction(0)) + c
        return Poly(out)

    def __neg__(self) -> Poly:
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly | Fraction | int) -> Poly:
        if not isinstance(other, Poly):
            return Poly({m: c * other for m, c in self.terms.items()})
        out: dict[Mono, Fraction] = {}
        for a, x in self.terms.items():
            for b, y in other.terms.items():
                m = mono_mul(a, b)
                out[m] = out.get(m, Fraction(0)) + x * y
        return Poly(out)

    def power(self, k: int) -> Poly:
        out = Poly.const(1)
        for _ in range(k):
            out = out * self
        return out

    def rename(self, var: str, to: str | None) -> Poly:
        """``var`` replaced by the variable ``to`` (None: by 1)."""
        out = Poly()
        for m, c in self.terms.items():
            e = mono_pow(m, var)
            rest = Poly({mono_without(m, var): c})
            out = out + (rest * Poly.var(to, e) if e and to is not None else rest)
        return out

    def is_const(self) -> bool:
        return all(m == ONE for m in self.terms)

    def value(self) -> Fraction:
        """The constant term (the value, for a constant polynomial)."""
        return self.terms.get(ONE, Fraction(0))

    def variables(self) -> set[str]:
        return {v for m in self.terms for v, _ in m}

    def single(self) -> tuple[Mono, Fraction] | None:
        """``(monomial, coefficient)`` if the polynomial is one term."""
        if len(self.terms) != 1:
            return None
        return next(iter(self.terms.items()))

    def key(self) -> tuple:
        return tuple(sorted(self.terms.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        parts = [f"{c}*{'*'.join(f'{v}^{e}' for v, e in m) or '1'}" for m, c in self.terms.items()]
        return " + ".join(parts) or "0"


def rows_to_poly(rows: dict[Mono, float]) -> Poly:
    """A polynomial from float coefficients (converted exactly)."""
    return Poly({m: Fraction(float(c)) for m, c in rows.items() if c != 0.0})


@dataclass
class SymVec:
    """A residual vector ``Σ_m m · rows[m]`` (``rows[m]``: float64 ``[d]``)."""

    rows: dict[Mono, np.ndarray]
    width: int

    @staticmethod
    def constant(vec: np.ndarray) -> SymVec:
        return SymVec({ONE: np.asarray(vec, dtype=np.float64) + 0.0}, len(vec))

    @staticmethod
    def zero(width: int) -> SymVec:
        return SymVec({}, width)

    def clean(self) -> SymVec:
        rows = {m: r + 0.0 for m, r in self.rows.items() if np.any(r != 0.0)}
        return SymVec(rows, self.width)

    def monos(self) -> list[Mono]:
        return sorted(self.rows)

    def matrix(self) -> tuple[list[Mono], np.ndarray]:
        monos = self.monos()
        if not monos:
            return [], np.zeros((0, self.width))
        return monos, np.stack([self.rows[m] for m in monos])

    def apply(self, linear: Callable[[torch.Tensor], torch.Tensor], width: int) -> SymVec:
        """The image under a linear map without bias (applied to the coefficient rows)."""
        monos, mat = self.matrix()
        if not monos:
            return SymVec.zero(width)
        with torch.no_grad():
            out = linear(torch.from_numpy(mat)).numpy()
        return SymVec(dict(zip(monos, out)), width).clean()

    def add_const(self, vec: np.ndarray) -> SymVec:
        rows = dict(self.rows)
        rows[ONE] = rows.get(ONE, np.zeros(self.width)) + vec
        return SymVec(rows, self.width).clean()

    def __add__(self, other: SymVec) -> SymVec:
        rows = dict(self.rows)
        for m, r in other.rows.items():
            rows[m] = rows[m] + r if m in rows else r
        return SymVec(rows, self.width).clean()

    def times(self, p: Poly) -> SymVec:
        """The vector times a scalar polynomial."""
        rows: dict[Mono, np.ndarray] = {}
        for m, r in self.rows.items():
            for pm, c in p.terms.items():
                mm = mono_mul(m, pm)
                rows[mm] = rows.get(mm, np.zeros(self.width)) + float(c) * r
        return SymVec(rows, self.width).clean()

    def component(self, k: int) -> Poly:
        return rows_to_poly({m: r[k] for m, r in self.rows.items()})

    def components(self) -> list[Poly]:
        return [self.component(k) for k in range(self.width)]

    def variables(self) -> set[str]:
        return {v for m in self.rows for v, _ in m}

    def is_constant(self) -> bool:
        return all(m == ONE for m in self.rows)

    def const_part(self) -> np.ndarray:
        return self.rows.get(ONE, np.zeros(self.width))

    def key(self) -> bytes:
        return b"|".join(repr(m).encode() + b":" + self.rows[m].tobytes() for m in self.monos())

    def substitute(self, var: str, by: Callable[[int], Poly]) -> SymVec:
        """Replace ``var^e`` by the polynomial ``by(e)`` in every monomial."""
        out = SymVec.zero(self.width)
        for m, r in self.rows.items():
            e = mono_pow(m, var)
            rest = SymVec({mono_without(m, var): r}, self.width)
            out = out + (rest.times(by(e)) if e else rest)
        return out


def score_poly(
    q: SymVec, k: SymVec, scores: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
) -> Poly:
    """``q · k`` as a polynomial, the pairwise products taken by the head's own ``scores``."""
    qm, qmat = q.matrix()
    km, kmat = k.matrix()
    if not qm or not km:
        return Poly()
    with torch.no_grad():
        s = scores(torch.from_numpy(qmat), torch.from_numpy(kmat)).numpy()
    out: dict[Mono, Fraction] = {}
    for a, ma in enumerate(qm):
        for b, mb in enumerate(km):
            if s[a, b] != 0.0:
                m = mono_mul(ma, mb)
                out[m] = out.get(m, Fraction(0)) + Fraction(float(s[a, b]))
    return Poly(out)


# ---------------------------------------------------------------------------- linear forms


Linear = tuple[tuple[tuple[str, int], ...], int]
"""An integer linear form ``(((variable, coefficient), ...), constant)``."""


def integer_linear(p: Poly) -> Linear | None:
    """``p`` as an integer linear form scaled by a positive rational, or None if ``p`` has a
    monomial that is not a single variable or 1 (the caller has cleared denominators)."""
    coefs: dict[str, Fraction] = {}
    const = Fraction(0)
    for m, c in p.terms.items():
        if m == ONE:
            const = c
        elif len(m) == 1 and m[0][1] == 1:
            coefs[m[0][0]] = c
        else:
            return None
    den = math.lcm(*(c.denominator for c in [*coefs.values(), const]))
    ints = {v: int(c * den) for v, c in coefs.items()}
    return tuple(sorted(ints.items())), int(const * den)


def positive_multiplier(p: Poly, bases: dict[str, Poly]) -> Poly:
    """``p`` times a positive factor so that no variable has a negative exponent and ``i``,
    ``n`` have no common positive power: inverses ``v<k>`` (``1/bases[v]``) are multiplied out,
    then negative powers of any variable (positive wherever it has one) cleared."""
    for var in sorted(p.variables()):
        if var in bases:
            top = max(mono_pow(m, var) for m in p.terms)
            if top <= 0:
                continue
            out = Poly()
            for m, c in p.terms.items():
                out = out + Poly({mono_without(m, var): c}) * bases[var].power(
                    top - mono_pow(m, var)
                )
            p = out
    for var in sorted(p.variables()):
        low = min(mono_pow(m, var) for m in p.terms)
        if low < 0 or (low > 0 and var in POSITIVE):
            p = p * Poly.var(var, -low)
    return p

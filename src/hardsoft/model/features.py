"""Position features: named, composable building blocks for ``PE(i, n)``.

A feature maps a length ``n`` to a matrix ``[n, dim]`` of raw values at positions
``i = 1..n`` (1-based, as in both papers). The model projects the concatenated raw features to
the residual stream with the learned matrix ``W_pos``. Every feature knows whether it is
*bounded* (stays in a fixed interval for every n), the assumption of Hahn's Lemma 5.

Names (see :func:`parse_feature`)::

    1  i  n  i/n  1/i  1/n  (-1)^i  i^2  (i/n)^2  [i=1]  [i=n]  [i mod m = r]
    i//s  i%s  (the quotient and remainder of i by s = ⌈√n⌉: i = s·(i//s) + i%s)
    learned:L  (a learned table for n <= L: the one-hot of i, projected by W_pos)
    sinusoidal:D  (Vaswani et al.'s sin/cos features of dimension D)
    a*b  (the product of scalar features, e.g. n*i or n*i^2)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import torch

from hardsoft.errors import HardsoftError

ScalarFn = Callable[[torch.Tensor, int], torch.Tensor]
Poly = tuple[float, float, float]
PolyFn = Callable[[int], "Poly | None"]
Cases = tuple[tuple[float, str], ...]
"""A feature's finitely many values, each with the formula (hardsoft's logic syntax) that holds
exactly at the positions where the feature takes that value."""
AtFn = Callable[[torch.Tensor, int, torch.dtype], torch.Tensor]
Terms = tuple[tuple[float, tuple[int, int], str], ...]
"""A feature as ``coefficient · i^a · n^b`` on the positions where a formula holds: one
``(coefficient, (a, b), formula)`` per case (``1/n*(-1)^i`` is ``-1/n`` on odd and ``1/n`` on
even positions). ``hardsoft decompile`` reads it for counting models."""


@dataclass(frozen=True)
class PositionFeature:
    """One named position feature: ``compute(n)`` gives ``[n, dim]`` values at i = 1..n.

    ``polynomial(n)``, where known, gives ``(c0, c1, c2)`` with ``f(i, n) = c0 + c1·i + c2·i²``
    for every i (the fast attention paths use it to find the keys a query can attend to).

    ``cases``, where the feature takes finitely many values at every length (``1``, ``[i=1]``,
    ``[i=n]``, ``(-1)^i``, ``[i mod m = r]`` and their products), lists each value with the
    formula selecting its positions (``first``, ``!last``, ``MOD(2, 1)(i)``); None for
    unbounded or n-dependent features. ``hardsoft decompile`` reads it."""

    name: str
    dim: int
    bounded: bool
    _fn: Callable[[int, torch.dtype, torch.device], torch.Tensor]
    _poly: PolyFn | None = None
    cases: Cases | None = None
    _at: AtFn | None = None
    terms: Terms | None = None
    """The feature as monomials ``c · i^a · n^b`` per case (see :data:`Terms`); None where it
    is not one (``i//s``, learned, sinusoidal). Finite features have ``a = b = 0``."""

    def at(
        self, positions: torch.Tensor, n: int, dtype: torch.dtype = torch.float64
    ) -> torch.Tensor:
        """The values ``[len(positions), dim]`` at the 1-based ``positions`` of a length-n
        input, equal to the rows of :meth:`compute` there (streaming reads a chunk of positions
        without the other n)."""
        if self._at is not None:
            return self._at(positions.flatten(), n, dtype).reshape(-1, self.dim)
        return self.compute(n, dtype, positions.device)[positions.flatten() - 1]

    def compute(
        self, n: int, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu"
    ) -> torch.Tensor:
        out = self._fn(n, dtype, torch.device(device))
        assert out.shape == (n, self.dim), (self.name, out.shape)
        return out

    def polynomial(self, n: int) -> Poly | None:
        """``(c0, c1, c2)`` of the feature as a polynomial of degree <= 2 in i, or None."""
        return None if self._poly is None else self._poly(n)


def _scalar(
    name: str,
    bounded: bool,
    fn: ScalarFn,
    poly: PolyFn | None = None,
    cases: Cases | None = None,
    terms: Terms | None = None,
) -> PositionFeature:
    def compute(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        i = torch.arange(1, n + 1, dtype=dtype, device=device)
        return fn(i, n).to(dtype).reshape(n, 1)

    def at(positions: torch.Tensor, n: int, dtype: torch.dtype) -> torch.Tensor:
        return fn(positions.to(dtype), n).to(dtype).reshape(-1, 1)

    if terms is None and cases is not None:
        terms = tuple((v, (0, 0), text) for v, text in cases)
    return PositionFeature(name, 1, bounded, compute, poly, cases, at, terms)


_SCALARS: dict[str, tuple[bool, ScalarFn]] = {
    "1": (True, lambda i, n: torch.ones_like(i)),
    "i": (False, lambda i, n: i),
    "n": (False, lambda i, n: torch.full_like(i, float(n))),
    "i/n": (True, lambda i, n: i / n),
    "1/i": (True, lambda i, n: 1.0 / i),
    "1/n": (True, lambda i, n: torch.full_like(i, 1.0 / n)),
    "(-1)^i": (True, lambda i, n: 1.0 - 2.0 * torch.remainder(i, 2)),
    "i^2": (False, lambda i, n: i * i),
    "(i/n)^2": (True, lambda i, n: (i / n) ** 2),
    "[i=1]": (True, lambda i, n: (i == 1).to(i.dtype)),
    "[i=n]": (True, lambda i, n: (i == n).to(i.dtype)),
    "i//s": (False, lambda i, n: (i - torch.remainder(i, _sqrt_ceil(n))) / _sqrt_ceil(n)),
    "i%s": (False, lambda i, n: torch.remainder(i, _sqrt_ceil(n))),
}


def _sqrt_ceil(n: int) -> int:
    """s(n) = ⌈√n⌉, the base of the features ``i//s`` and ``i%s`` (exact integer arithmetic;
    the quotient is computed as (i − i%s)/s, an exact division of integers)."""
    return math.isqrt(n - 1) + 1 if n > 1 else 1


_CASES: dict[str, Cases] = {
    "1": ((1.0, "true"),),
    "(-1)^i": ((-1.0, "MOD(2, 1)(i)"), (1.0, "MOD(2, 0)(i)")),
    "[i=1]": ((1.0, "first"), (0.0, "!first")),
    "[i=n]": ((1.0, "last"), (0.0, "!last")),
}
"""The scalar features with finitely many values (see :attr:`PositionFeature.cases`)."""

_MONOMIALS: dict[str, tuple[int, int]] = {
    "i": (1, 0),
    "n": (0, 1),
    "i/n": (1, -1),
    "1/i": (-1, 0),
    "1/n": (0, -1),
    "i^2": (2, 0),
    "(i/n)^2": (2, -2),
}
"""The unbounded or n-dependent scalar features that are one monomial ``i^a · n^b``."""

_POLYS: dict[str, PolyFn] = {
    "1": lambda n: (1.0, 0.0, 0.0),
    "i": lambda n: (0.0, 1.0, 0.0),
    "n": lambda n: (float(n), 0.0, 0.0),
    "i/n": lambda n: (0.0, 1.0 / n, 0.0),
    "1/n": lambda n: (1.0 / n, 0.0, 0.0),
    "i^2": lambda n: (0.0, 0.0, 1.0),
    "(i/n)^2": lambda n: (0.0, 0.0, 1.0 / n**2),
}

_MOD_RE = re.compile(r"^\[imod(\d+)=(\d+)\]$")


def _canonical(name: str) -> str:
    """Whitespace-free spelling used for matching (``[i mod 3 = 1]`` -> ``[imod3=1]``)."""
    return "".join(name.split())


def _mod_feature(m: int, r: int) -> PositionFeature:
    if m < 1 or not 0 <= r < m:
        raise HardsoftError(f"position feature [i mod {m} = {r}] needs m >= 1 and 0 <= r < m")
    sel = f"MOD({m}, {r})(i)"
    cases = ((1.0, "true"),) if m == 1 else ((1.0, sel), (0.0, f"!{sel}"))
    return _scalar(
        f"[i mod {m} = {r}]",
        True,
        lambda i, n: (torch.remainder(i, m) == r).to(i.dtype),
        cases=cases,
    )


def _learned(max_len: int) -> PositionFeature:
    def compute(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        if n > max_len:
            raise HardsoftError(
                f"input length {n} exceeds the learned position table (learned:{max_len})"
            )
        return torch.eye(n, max_len, dtype=dtype, device=device)

    return PositionFeature(f"learned:{max_len}", max_len, True, compute)


def _sinusoidal(dim: int) -> PositionFeature:
    if dim < 2 or dim % 2:
        raise HardsoftError(f"sinusoidal position features need an even dimension >= 2, got {dim}")

    def at(positions: torch.Tensor, n: int, dtype: torch.dtype) -> torch.Tensor:
        i = positions.to(torch.float64)[:, None]
        device = positions.device
        freq = torch.exp(
            -math.log(10000.0) * torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim
        )
        out = torch.empty(len(i), dim, dtype=torch.float64, device=device)
        out[:, 0::2] = torch.sin(i * freq)
        out[:, 1::2] = torch.cos(i * freq)
        return out.to(dtype)

    def compute(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        return at(torch.arange(1, n + 1, device=device), n, dtype)

    return PositionFeature(f"sinusoidal:{dim}", dim, True, compute, None, _at=at)


def _poly_product(parts: list[PositionFeature]) -> PolyFn | None:
    """The product of polynomial features, while its degree stays <= 2."""
    if any(p._poly is None for p in parts):
        return None

    def poly(n: int) -> Poly | None:
        coef = [1.0]
        for p in parts:
            c = p.polynomial(n)
            assert c is not None
            out = [0.0] * (len(coef) + 2)
            for a, x in enumerate(coef):
                for b, y in enumerate(c):
                    out[a + b] += x * y
            coef = out
        if any(coef[3:]):
            return None
        return (coef[0], coef[1], coef[2])

    return poly


def _product(parts: list[PositionFeature], name: str) -> PositionFeature:
    if any(p.dim != 1 for p in parts):
        raise HardsoftError(f"position feature {name!r}: only scalar features can be multiplied")

    def compute(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        out = torch.ones(n, 1, dtype=dtype, device=device)
        for p in parts:
            out = out * p.compute(n, dtype, device)
        return out

    def at(positions: torch.Tensor, n: int, dtype: torch.dtype) -> torch.Tensor:
        out = torch.ones(len(positions), 1, dtype=dtype, device=positions.device)
        for p in parts:
            out = out * p.at(positions, n, dtype)
        return out

    bounded = all(p.bounded for p in parts)
    return PositionFeature(
        name,
        1,
        bounded,
        compute,
        _poly_product(parts),
        _case_product(parts),
        at,
        _term_product(parts),
    )


def _term_product(parts: list[PositionFeature]) -> Terms | None:
    """The monomial cases of a product: coefficients multiply, powers add, formulas conjoin."""
    out: Terms = ((1.0, (0, 0), "true"),)
    for p in parts:
        if p.terms is None:
            return None
        out = tuple(
            (v * w, (a + c, b + d), g if f == "true" else f"({f}) & ({g})")
            for v, (a, b), f in out
            for w, (c, d), g in p.terms
        )
    return out


def _case_product(parts: list[PositionFeature]) -> Cases | None:
    """The cases of a product of finite features: every combination, its value the product and
    its formula the conjunction (combinations that never occur are harmless)."""
    out: Cases = ((1.0, "true"),)
    for p in parts:
        if p.cases is None:
            return None
        out = tuple(
            (v * w, g if f == "true" else f"({f}) & ({g})") for v, f in out for w, g in p.cases
        )
    return out


def parse_feature(name: str) -> PositionFeature:
    """The feature called ``name`` (see the module docstring); a bad name is a HardsoftError."""
    text = _canonical(name)
    if "*" in text:
        parts = [parse_feature(p) for p in text.split("*")]
        return _product(parts, "*".join(p.name for p in parts))
    if text in _SCALARS:
        bounded, fn = _SCALARS[text]
        mono = _MONOMIALS.get(text)
        terms = None if mono is None else ((1.0, mono, "true"),)
        return _scalar(text, bounded, fn, _POLYS.get(text), _CASES.get(text), terms)
    m = _MOD_RE.match(text)
    if m:
        return _mod_feature(int(m.group(1)), int(m.group(2)))
    for prefix, make in (("learned:", _learned), ("sinusoidal:", _sinusoidal)):
        if text.startswith(prefix):
            try:
                size = int(text[len(prefix) :])
            except ValueError:
                raise HardsoftError(
                    f"bad position feature {name!r}: expected {prefix}<int>"
                ) from None
            if size < 1:
                raise HardsoftError(f"bad position feature {name!r}: size must be positive")
            return make(size)
    known = ", ".join([*_SCALARS, "[i mod m = r]", "learned:L", "sinusoidal:D", "a*b"])
    raise HardsoftError(f"unknown position feature {name!r} (known: {known})")


def feature_names() -> list[str]:
    """The scalar feature names, for help texts."""
    return [*_SCALARS, "[i mod m = r]", "learned:L", "sinusoidal:D", "a*b"]


def feature_matrix(
    names: tuple[str, ...] | list[str],
    n: int,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """The concatenated raw features ``[n, P]`` of ``names`` at length ``n``."""
    if not names:
        return torch.zeros(n, 0, dtype=dtype, device=device)
    return torch.cat([parse_feature(nm).compute(n, dtype, device) for nm in names], dim=1)


def feature_rows(
    names: tuple[str, ...] | list[str],
    positions: torch.Tensor,
    n: int,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """The rows of :func:`feature_matrix` at the 1-based ``positions`` (int64) of a length-n
    input, ``[len(positions), P]``, without computing the other rows."""
    if not names:
        return torch.zeros(len(positions), 0, dtype=dtype, device=positions.device)
    return torch.cat([parse_feature(nm).at(positions, n, dtype) for nm in names], dim=1)

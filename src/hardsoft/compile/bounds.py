"""Proven attention-error bounds of the soft gadgets, as objects with ``at(n)`` and ``sup()``.

Every soft head's output is an *approximate Boolean* (Yang, Strobl, Chiang & Angluin (TACL
2026) §3.4): within ``ε`` of the exact 0/1 value, with ``ε`` below the rounding margin 1/3, so
the next feed-forward rounds it exactly. Each head of a compiled model carries one
:class:`Bound`; the certificate states its formula (``text``), its value at the requested
length and its supremum over all lengths. Derivations are in docs/compiler.md:

* :class:`ShiftBound` (``Y X S U P F`` by one head): scaled score ``λ n P_j ± λ j/2``;
  other ``P``-positions decay geometrically by ``e^{−λ/2}`` per step (Yang et al.
  (arXiv:2412.09925v1) Lemma 8), non-``P`` positions are at least ``λ(n+1)/2`` (strict
  masks: ``λ n/2 + λ``) below::

      ε(n) = q/(1 − q) + (n − 1) e^{−λ(n+1)/2 − δ},   q = e^{−λ/2},  δ = λ/2 (strict) or 0

* :class:`ParityBound` (``Y``/``X`` with non-strict masks, the ``(−1)^i`` construction of
  Thm. 12): scaled score ``λ M (−1)^j ± λ j`` with ``M >= n`` (or the number of allowed
  positions): positions of the wanted parity decay by ``e^{−2λ}`` per step, the others are at
  least ``λ(2n − 1)`` below::

      ε(n) = q/(1 − q) + ((n + 1)/2) e^{−λ(2n − 1)},   q = e^{−2λ}   (n >= 2; 0 at n = 1)

* :class:`SignBound` (``[t >= 0]``): scaled scores ``± a`` on even / odd positions with
  ``a >= g λ``: ``ε = 2 e^{−2 g λ}``; :class:`LinearSignBound` for the n-independent key
  ``λ j (−1)^j`` (scores grow along the row): ``ε = 1/(e^{λ g/2} − 1)``;
* :class:`LookupBound` (table lookup of a count): mass off ``j = C`` at most
  ``2 Σ_{d>=1} e^{−λ d²}`` and the retrieved ``j/n`` within ``(2/n) Σ d e^{−λ d²}`` (Yang et
  al. (arXiv:2412.09925v1) Lemma 7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ROUNDING_MARGIN = 1.0 / 3.0
"""An approximate Boolean is within this of 0 or 1 (Yang et al. (arXiv:2412.09925v1) §3.4)."""

TARGET_EPS = 0.05
"""Each soft head is designed to stay within this error (well inside the rounding margin)."""

SHIFT_LAMBDA = 8.0
PARITY_LAMBDA = 2.0
SIGN_LAMBDA = 4.0
LINEAR_SIGN_LAMBDA = 16.0

_SUP_RANGE = range(1, 400)
"""Every bound below is largest at small n and then decreases monotonically (the far terms
fall exponentially), so the supremum is attained in this range."""


@dataclass(frozen=True)
class Bound:
    """A proven bound on a head's output error as a function of the length ``n``."""

    @property
    def text(self) -> str:
        """The bound's formula, as the certificate prints it."""
        return "0"

    def at(self, n: int) -> float:
        """The bound at length ``n``."""
        return 0.0

    def sup(self) -> float:
        """The bound's supremum over all lengths."""
        return max(self.at(n) for n in _SUP_RANGE)

    @property
    def exact(self) -> bool:
        return self.sup() == 0.0


@dataclass(frozen=True)
class Exact(Bound):
    """No error: hard attention, or uniform attention (softmax of equal scores is uniform)."""

    why: str = "exact"

    @property
    def text(self) -> str:
        return self.why


@dataclass(frozen=True)
class ShiftBound(Bound):
    lam: float
    strict: bool = True

    @property
    def text(self) -> str:
        extra = " - lambda/2" if self.strict else ""
        return (
            f"q/(1-q) + (n-1)*exp(-lambda*(n+1)/2{extra}), q = exp(-lambda/2), "
            f"lambda = {self.lam:g}"
        )

    def at(self, n: int) -> float:
        q = math.exp(-self.lam / 2)
        far = -self.lam * (n + 1) / 2 - (self.lam / 2 if self.strict else 0.0)
        return q / (1 - q) + (n - 1) * math.exp(far)


@dataclass(frozen=True)
class ParityBound(Bound):
    lam: float

    @property
    def text(self) -> str:
        return (
            "q/(1-q) + ((n+1)/2)*exp(-lambda*(2n-1)), q = exp(-2*lambda), "
            f"lambda = {self.lam:g} (n >= 2; n = 1 has no witness and is exact)"
        )

    def at(self, n: int) -> float:
        if n < 2:
            return 0.0
        q = math.exp(-2 * self.lam)
        return q / (1 - q) + (n + 1) / 2 * math.exp(-self.lam * (2 * n - 1))


@dataclass(frozen=True)
class SignBound(Bound):
    g: float
    lam: float

    @property
    def text(self) -> str:
        return f"2*exp(-2*g*lambda), g = {self.g:g}, lambda = {self.lam:g}"

    def at(self, n: int) -> float:
        return 2.0 * math.exp(-2.0 * self.g * self.lam)


@dataclass(frozen=True)
class LinearSignBound(Bound):
    g: float
    lam: float

    @property
    def text(self) -> str:
        return f"1/(exp(lambda*g/2) - 1), g = {self.g:g}, lambda = {self.lam:g}"

    def at(self, n: int) -> float:
        return 1.0 / math.expm1(self.lam * self.g / 2)


@dataclass(frozen=True)
class LookupBound(Bound):
    lam: float

    @property
    def text(self) -> str:
        return (
            "residues: 2*sum_d exp(-lambda*d^2); value j/n: (2/n)*sum_d d*exp(-lambda*d^2), "
            f"lambda = {self.lam:g}"
        )

    def at(self, n: int) -> float:
        return retrieval_residue_bound(self.lam)

    def sup(self) -> float:
        return retrieval_residue_bound(self.lam)


UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24}
"""u of each float format: a rounded operation's relative error is at most u."""


@dataclass(frozen=True)
class FloatLimit:
    """The largest n at which a head still meets its bound in a float format of unit
    roundoff u, from a first-order rounding model (derivations in docs/compiler.md):

    * ``linear``: scores of magnitude O(n) with a fixed gap (shift, parity heads): the
      rounding error ``4u·max|s|`` must stay under a quarter of the gap, ``n <= 1/(c u)``;
    * ``square``: values read from uniform counts, ``C/N`` with relative error up to ``N u``
      (summing C terms), feed a lookup (gap ``λ n/N`` against errors
      ``~λ n C u (2N + 12C)/N``): ``c n² u <= 1``, ``n <= (c u)^{-1/2}``;
    * a sign test of counts is ``linear`` (see :func:`sign_float`).
    """

    kind: str  # "linear" or "square"
    c: float

    def max_n(self, u: float) -> int:
        if self.kind == "linear":
            return int(1.0 / (self.c * u))
        return int(math.sqrt(1.0 / (self.c * u)))

    @property
    def text(self) -> str:
        if self.kind == "linear":
            return f"n <= 1/({self.c:g}*u)"
        return f"n <= ({self.c:g}*u)^(-1/2)"


SHIFT_FLOAT = FloatLimit("linear", 48.0)
"""Shift: |s| <= 1.5 λ n, gap λ/2 between candidate witnesses: 4u·1.5λn <= λ/8."""
PARITY_FLOAT = FloatLimit("linear", 16.0)
"""Parity: |s| <= 2 λ n, gap 2λ: 4u·2λn <= λ/2."""
LOOKUP_FLOAT = FloatLimit("square", 56.0)
"""Lookup: (2 C N u + 12 C² u) <= 1/4 of the gap for C <= N <= n: 14 n² u <= 1/4."""


def sign_float(coef_sum: float, terms: int = 2) -> FloatLimit:
    """Sign test of ``x = Σ c_k C_k/N − 1/(2N)`` (``terms`` terms in all; margin
    ``|x| >= 1/(2N)``), each ``C_k/N`` read from a uniform counting head. Its fast path sums
    the 0/1 values exactly (integers below 2^p, so n <= 1/u) and divides once, so each term is
    off by at most ``(u/2)·|c_k|`` (``C_k <= N``), and the ``terms − 1`` additions add at most
    ``u Σ|c|`` each: error <= ``(terms − 1/2)·u·Σ|c|``, below the margin (so the sign is
    right) while ``n <= 1/((2·terms − 1)·Σ|c|·u)``.

    This replaced the first-order model ``Σ|c| N u <= 1/(4N)`` (C/N summed as C rounded terms
    1/N, as the dense path does), which the float-horizon experiment measured to be over
    8000x conservative for MAJORITY in float32 (derived 1448; exact at 1.68·10^7, first failing
    at 1.85·10^7, where the count 2^24 + 1 is no longer a float32 integer)."""
    return FloatLimit("linear", (2.0 * max(terms, 1) - 1.0) * max(coef_sum, 1.0))


def shift_bound(lam: float, n: int) -> float:
    """``ε_shift(n)`` for the strict-mask shift gadget with score multiplier ``λ``."""
    return ShiftBound(lam).at(n)


def shift_bound_sup(lam: float) -> float:
    """``sup_n ε_shift(n)`` of the strict-mask shift gadget."""
    return ShiftBound(lam).sup()


def sign_bound(g: float, lam: float) -> float:
    """``ε_sign = 2 e^{−2 g λ}``: the error of a sign head whose scaled scores are ``± a``
    with ``a >= g λ``."""
    return SignBound(g, lam).at(1)


def retrieval_residue_bound(lam: float) -> float:
    """``ε_res = 2 Σ_{d>=1} e^{−λ d²}``: attention mass off the retrieved position."""
    return 2.0 * sum(math.exp(-lam * d * d) for d in range(1, 60))


def retrieval_value_bound(lam: float) -> float:
    """``ε_val = 2 Σ_{d>=1} d e^{−λ d²}``: error of the retrieved ``j/n``, in units of 1/n."""
    return 2.0 * sum(d * math.exp(-lam * d * d) for d in range(1, 60))


def choose_retrieval_lambda(coef_sum: int) -> float:
    """The smallest ``λ`` (in steps of 1/2 from 4) with ``ε_res <= 0.05`` and
    ``coef_sum · ε_val <= 0.2`` (so a retrieved linear combination is within 0.2/n)."""
    lam = 4.0
    while (
        retrieval_residue_bound(lam) > TARGET_EPS
        or max(coef_sum, 1) * retrieval_value_bound(lam) > 0.2
    ):
        lam += 0.5
    return lam


def fmt_lambda(lam: float) -> str:
    """``λ`` as a short literal for a τ(n) expression."""
    return str(int(lam)) if float(lam).is_integer() else repr(lam)

"""What the lowering (:mod:`.lower`) keeps per SOp: :class:`Low` (its domain and the
representations built so far), :class:`Scaled` (a count carried as count/n), :class:`Ratio`
(a mean's exact integer numerator) and :class:`Note` (a line of the certificate); and what the
aggregates' lowering (:mod:`.aggregate`) asks of the lowering (:class:`Lowerer`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from hardsoft.programs.ahat.dsl import Linear
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp.domains import Domain, Finite, Ints
from hardsoft.programs.rasp.gadgets import Onehot
from hardsoft.programs.rasp.selectors import SelectorAnalysis

_DEFAULT_NAME = re.compile(r"^(map|sequence_map|linear_sequence_map)(_\d+)?(\.\d+)*$")


@dataclass
class Scaled:
    """A count carried as ``count / D`` (D = n or i): exact where no tieless head precedes
    it, and cheaper than the integer (no lookup head)."""

    form: Linear
    unit: str  # "n" or "i"


@dataclass
class Low:
    """One SOp (or an intermediate of a composed Map), lowered: its domain and whichever
    representations exist so far. The views of :class:`Lowering` fill the others on demand."""

    name: str
    domain: Domain
    onehot: Onehot | None = None
    number: Linear | None = None
    none: Linear | None = None
    scaled: Scaled | None = None
    recover: Callable[[], Linear] | None = None  # builds the exact integer (a count)
    ratio: Ratio | None = None
    values_at: Callable[[int], tuple[Any, ...]] | None = None  # its values at n <= N
    formula: str | None = None  # how it is computed, where that is a formula (an affine map)
    index_affine: tuple[int, int] | None = None  # (a, b): the value is a·(i − 1) + b
    parts: list[Low] | None = None  # a tuple carried as its components

    def describe(self, extra: str = "") -> str:
        """The SOp and its values, for reasons: ``keys = digit + 0.1*indices (real numbers)``."""
        what = f"{self.name} = {self.formula}" if self.formula else self.name
        return f"{what} ({self.domain.describe()}{extra})"

    @property
    def term(self) -> str:
        """How it appears inside another formula: its name, or its formula if it has only a
        default name (``map``, ``sequence_map_2``)."""
        if self.formula and _DEFAULT_NAME.match(self.name):
            return f"({self.formula})" if " " in self.formula else self.formula
        return self.name


def enumerate_values(x: Low, max_len: int) -> tuple[Any, ...] | None:
    """Every value ``x`` takes at some n <= max_len, if that is known (None otherwise)."""
    d = x.domain
    if isinstance(d, Finite):
        return d.values
    if x.values_at is not None:
        return x.values_at(max_len)
    if isinstance(d, Ints):
        return tuple(d.values_up_to(max_len))
    return None


@dataclass
class Ratio:
    """A mean as ``(Σ coef · #{j in mask : x_j = v} + const · D) / D`` with D the number of
    positions the mask allows and ``default`` where it allows none: the exact integer
    numerator behind a comparison of the mean."""

    mask: str
    terms: dict[tuple[int, int], Fraction]  # (id of the Low of x, value code) -> coefficient
    sources: dict[int, Low]
    const: Fraction
    default: Any

    def affine(self, a: Fraction, b: Fraction) -> Ratio:
        terms = {k: a * c for k, c in self.terms.items() if a * c != 0}
        default = None if self.default is None else a * Fraction(self.default) + b
        return Ratio(self.mask, terms, self.sources, a * self.const + b, default)

    def plus(self, other: Ratio) -> Ratio | None:
        if other.mask != self.mask:
            return None
        terms = dict(self.terms)
        for k, c in other.terms.items():
            terms[k] = terms.get(k, Fraction(0)) + c
        default = None
        if self.default is not None and other.default is not None:
            default = Fraction(self.default) + Fraction(other.default)
        return Ratio(
            self.mask,
            {k: c for k, c in terms.items() if c},
            {**self.sources, **other.sources},
            self.const + other.const,
            default,
        )


@dataclass
class Note:
    statement: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"statement": self.statement, "text": self.text}


class Lowerer(Protocol):
    """What :class:`~.aggregate.Selections` reads and writes of the lowering it belongs to
    (:class:`~.lower.Lowering`, which creates it): the two modules share this, not each
    other."""

    max_len: int | None
    causal: bool
    domain_notes: list[Note]
    tied: list[str]
    selectors: SelectorAnalysis
    counts: dict[tuple[Any, ...], tuple[Linear, Linear]]

    def name(self, expr: R.RASPExpr) -> str: ...

    def gadget(self, who: str, text: str) -> None: ...

    def who(self, sop: R.RASPExpr) -> str: ...

    def low(self, sop: R.SOp) -> Low: ...

    def finite(self, x: Low, user: str) -> Finite: ...

    def onehot(self, x: Low, user: str) -> Onehot: ...

    def number(self, x: Low) -> Linear: ...

    def integer(self, x: Low, user: str) -> Linear: ...

"""Structured element-wise operations: what ``x + 1``, ``x < 3`` or ``a & b`` on SOps mean.

Tracr builds ``Map(lambda x: x + other, sop)`` for ``sop + other``: the compiler sees an opaque
function. Here every Python operator on an SOp still builds a :class:`~.api.Map` (or
:class:`~.api.SequenceMap`) with exactly Tracr's function, and also attaches one of these
descriptions as ``.op``, so the compiler can lower it without calling it: an affine map of
indices, length and counts stays an affine map at every length, a comparison of a count with a
constant becomes an exact step.

The Map keeps Tracr's own function (``lambda x: x + other``), which :func:`~.api.evaluate`
calls; the op is its description for numbers, callable with the same result on numbers
(``tests/test_rasp_api.py`` checks that they agree). The compiler reads only the op, and only
where the values are numbers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Relation(str, Enum):
    """A comparison ``x OP y`` (Python's operators)."""

    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    EQ = "=="
    NEQ = "!="

    def holds(self, x: Any, y: Any) -> bool:
        return bool(_RELATIONS[self](x, y))

    @property
    def flipped(self) -> Relation:
        """The relation with its arguments swapped: ``x < y`` iff ``y > x``."""
        return _FLIPPED[self]


_RELATIONS: dict[Relation, Callable[[Any, Any], Any]] = {
    Relation.LT: operator.lt,
    Relation.LEQ: operator.le,
    Relation.GT: operator.gt,
    Relation.GEQ: operator.ge,
    Relation.EQ: operator.eq,
    Relation.NEQ: operator.ne,
}
_FLIPPED = {
    Relation.LT: Relation.GT,
    Relation.LEQ: Relation.GEQ,
    Relation.GT: Relation.LT,
    Relation.GEQ: Relation.LEQ,
    Relation.EQ: Relation.EQ,
    Relation.NEQ: Relation.NEQ,
}


class ElementOp:
    """A described element-wise function of one (Map) or two (SequenceMap) values."""

    arity: int = 1

    def __call__(self, *args: Any) -> Any:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def describe(self, *names: str) -> str:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class Affine(ElementOp):
    """``Σ coefs[k]·x_k / divisor + const`` on numbers (``x + c``, ``c - x``, ``x * c``,
    ``x / c``, ``x + y``, ``x - y``, ``LinearSequenceMap``). ``divisor`` keeps ``x / c`` as
    Python computes it (a true division, not a multiplication by 1/c)."""

    coefs: tuple[Any, ...]
    const: Any = 0
    divisor: Any = None

    @property
    def arity(self) -> int:  # type: ignore[override]
        return len(self.coefs)

    def __call__(self, *args: Any) -> Any:
        total: Any = 0
        for c, x in zip(self.coefs, args):
            total = total + c * x
        if self.divisor is not None:
            total = total / self.divisor
        return total + self.const

    def real(self) -> tuple[tuple[float, ...], float]:
        """The coefficients and constant as floats (the division folded in)."""
        d = 1 if self.divisor is None else self.divisor
        return tuple(float(c) / d for c in self.coefs), float(self.const)

    @property
    def integral(self) -> bool:
        """Integer coefficients and constant, no division: integers map to integers."""
        return self.divisor is None and all(isinstance(c, int) for c in (*self.coefs, self.const))

    def describe(self, *names: str) -> str:
        parts = [nm if c == 1 else f"{c}*{nm}" for c, nm in zip(self.coefs, names)]
        text = " + ".join(parts)
        if self.divisor is not None:
            text = f"{text if ' ' not in text else f'({text})'} / {self.divisor}"
        if not self.const:
            return text
        sign = "-" if self.const < 0 else "+"
        return f"{text} {sign} {abs(self.const)}"


@dataclass(frozen=True)
class Compare(ElementOp):
    """``x OP const`` (Map) or ``x OP y`` (SequenceMap, ``const`` unused)."""

    relation: Relation
    const: Any = None
    binary: bool = False

    @property
    def arity(self) -> int:  # type: ignore[override]
        return 2 if self.binary else 1

    def __call__(self, *args: Any) -> Any:
        if self.binary:
            return _RELATIONS[self.relation](args[0], args[1])
        return _RELATIONS[self.relation](args[0], self.const)

    def describe(self, *names: str) -> str:
        rhs = names[1] if self.binary else repr(self.const)
        return f"{names[0]} {self.relation.value} {rhs}"


class LogicKind(str, Enum):
    NOT = "not"
    AND = "and"
    OR = "or"


@dataclass(frozen=True)
class Logic(ElementOp):
    """Python's ``not x``, ``x and y``, ``x or y`` (which return an operand, not a bool), with
    a constant right operand (``const``, Map) or a second SOp (``binary``)."""

    kind: LogicKind
    const: Any = None
    binary: bool = False
    reverse: bool = False

    @property
    def arity(self) -> int:  # type: ignore[override]
        return 2 if self.binary else 1

    def __call__(self, *args: Any) -> Any:
        if self.kind is LogicKind.NOT:
            return not args[0]
        x, y = (args[0], args[1]) if self.binary else (args[0], self.const)
        if self.reverse:
            x, y = y, x
        return (x and y) if self.kind is LogicKind.AND else (x or y)

    def describe(self, *names: str) -> str:
        if self.kind is LogicKind.NOT:
            return f"not {names[0]}"
        x, y = names[0], names[1] if self.binary else repr(self.const)
        if self.reverse:
            x, y = y, x
        return f"{x} {self.kind.value} {y}"


@dataclass(frozen=True)
class Product(ElementOp):
    """``x * y`` of two SOps."""

    arity = 2

    def __call__(self, *args: Any) -> Any:
        return args[0] * args[1]

    def describe(self, *names: str) -> str:
        return f"{names[0]} * {names[1]}"


@dataclass(frozen=True)
class Quotient(ElementOp):
    """``x / y`` of two SOps."""

    arity = 2

    def __call__(self, *args: Any) -> Any:
        return args[0] / args[1]

    def describe(self, *names: str) -> str:
        return f"{names[0]} / {names[1]}"


@dataclass(frozen=True)
class Modulo(ElementOp):
    """``x % m`` for a positive integer ``m`` (Python's remainder: in [0, m))."""

    modulus: int

    def __call__(self, *args: Any) -> Any:
        return args[0] % self.modulus

    def describe(self, *names: str) -> str:
        return f"{names[0]} % {self.modulus}"


@dataclass(frozen=True)
class FloorDiv(ElementOp):
    """``x // m`` for a positive integer ``m`` (Python's floor division)."""

    modulus: int

    def __call__(self, *args: Any) -> Any:
        return args[0] // self.modulus

    def describe(self, *names: str) -> str:
        return f"{names[0]} // {self.modulus}"


@dataclass(frozen=True)
class Pack(ElementOp):
    """``(x, y)``, or with ``flatten`` Tracr's ``make_nary_sequencemap`` step ``(*x, y) if
    isinstance(x, tuple) else (x, y)``: a tuple of the arguments."""

    flatten: bool = False
    arity = 2

    def __call__(self, *args: Any) -> Any:
        x, y = args
        return (*x, y) if self.flatten and isinstance(x, tuple) else (x, y)

    def describe(self, *names: str) -> str:
        return f"({'*' if self.flatten else ''}{names[0]}, {names[1]})"


@dataclass(frozen=True)
class Unpack(ElementOp):
    """``f(*args)`` of a tuple, ``f`` read as ``inner`` (``lambda args: f(*args)``)."""

    inner: ElementOp
    size: int

    def __call__(self, *args: Any) -> Any:
        return self.inner(*args[0])

    def describe(self, *names: str) -> str:
        return self.inner.describe(*(f"{names[0]}[{k}]" for k in range(self.size)))


@dataclass(frozen=True)
class Compose(ElementOp):
    """``outer(inner(x))``: what Tracr's Map simplification makes of a Map of a Map."""

    inner: Callable[[Any], Any]
    outer: Callable[[Any], Any]

    def __call__(self, *args: Any) -> Any:
        return self.outer(self.inner(args[0]))

    def steps(self) -> list[Callable[[Any], Any]]:
        """The functions applied, innermost first (nested compositions flattened)."""
        out: list[Callable[[Any], Any]] = []
        for f in (self.inner, self.outer):
            out.extend(f.steps() if isinstance(f, Compose) else [f])
        return out

    def describe(self, *names: str) -> str:
        text = names[0]
        for f in self.steps():
            text = f.describe(text) if isinstance(f, ElementOp) else f"f({text})"
        return text

"""The syntax tree of the temporal logic LTL[C,+] (Yang, Strobl, Chiang & Angluin
(arXiv:2412.09925v1) §4): formula and counting-term node classes.

Every node is a frozen, hashable dataclass with structural equality, so equal subtrees built
separately compare and hash equal; the compiler relies on that to share common subformulas.
Hashes are cached on first use, so hashing a large shared DAG is linear, not exponential.

Positions are 1-based as in the seeds: a word ``w`` has positions ``1..n``. Structural queries
are in :mod:`hardsoft.logic.structure`, the printer in :mod:`hardsoft.logic.printer`; all three
are importable from :mod:`hardsoft.logic.syntax` and :mod:`hardsoft.logic`. The module is
long but holds one job: one small class per operator of the grammar.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from hardsoft.errors import HardsoftError

__all__ = [
    "Node",
    "Formula",
    "Term",
    "Sym",
    "Const",
    "First",
    "Last",
    "Not",
    "And",
    "Or",
    "Implies",
    "Prev",
    "Next",
    "Since",
    "Until",
    "Past",
    "Future",
    "Somewhere",
    "Compare",
    "Mod",
    "CountPast",
    "CountFuture",
    "IntConst",
    "Position",
    "Length",
    "Add",
    "Sub",
    "Scale",
    "COMPARE_OPS",
    "KEYWORDS",
]

COMPARE_OPS: tuple[str, ...] = ("<", "<=", "=", "!=", ">=", ">")
"""Comparison operators between terms, as written in the concrete syntax."""

KEYWORDS: frozenset[str] = frozenset(
    {"Y", "X", "S", "U", "P", "F", "E", "MOD", "true", "false", "first", "last", "i", "n"}
)
"""Reserved words of the concrete syntax; symbols are always quoted, so ``'Y'`` is a symbol."""


_C = TypeVar("_C", bound=type)
_FIELDS: dict[type, tuple[str, ...]] = {}
"""Field names of every node class (filled by :func:`_node`)."""


def _node(cls: _C) -> _C:
    """Give a frozen dataclass a (structural) hash that is computed once and cached, and an
    iterative equality. Used as ``@_node`` over ``@dataclass(frozen=True)``, so type checkers
    see the dataclass fields."""
    names = tuple(f.name for f in fields(cls))
    tag = cls.__name__

    def __hash__(self: Any) -> int:  # noqa: N807 - installed as a dunder
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((tag, *(getattr(self, name) for name in names)))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __eq__(self: Any, other: object) -> bool:  # noqa: N807 - installed as a dunder
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        # Iterative structural comparison (deep formulas would overflow a recursive one);
        # cached hashes reject most unequal pairs at once.
        stack = [(self, other)]
        while stack:
            x, y = stack.pop()
            if x is y:
                continue
            if type(x) is not type(y) or hash(x) != hash(y):
                return False
            for name in _FIELDS[type(x)]:
                u, v = getattr(x, name), getattr(y, name)
                if isinstance(u, Node) and isinstance(v, Node):
                    stack.append((u, v))
                elif type(u) is not type(v) or u != v:
                    return False
        return True

    init: Callable[..., None] = cls.__dict__["__init__"]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        init(self, *args, **kwargs)
        hash(self)  # children are hashed already, so this is O(1) and never recursive

    _FIELDS[cls] = names
    # setattr: replacing a class's dunders once is what this decorator is for
    setattr(__init__, "__signature__", inspect.signature(init))  # noqa: B010
    __init__.__doc__ = init.__doc__
    setattr(cls, "__hash__", __hash__)  # noqa: B010
    setattr(cls, "__eq__", __eq__)  # noqa: B010
    setattr(cls, "__init__", __init__)  # noqa: B010
    return cls


class Node:
    """Base of formulas and terms. Subclasses are frozen dataclasses (see :func:`_node`)."""

    def __str__(self) -> str:
        # The printer imports the node classes, so it is imported here, on first use: the one
        # import inside this package that runs back (logic.nodes -> logic.printer, same layer).
        from hardsoft.logic.printer import to_text

        return to_text(self)


class Formula(Node):
    """A formula: true or false at each position of a word.

    ``&``, ``|`` and ``~`` build :class:`And`, :class:`Or` and :class:`Not` for convenience;
    ``==`` is structural equality (never a logical connective).
    """

    def __and__(self, other: Formula) -> Formula:
        return And(self, other)

    def __or__(self, other: Formula) -> Formula:
        return Or(self, other)

    def __invert__(self) -> Formula:
        return Not(self)


class Term(Node):
    """A counting term: an integer at each position of a word.

    ``+``, ``-`` (binary and unary) and ``int * term`` build :class:`Add`, :class:`Sub` and
    :class:`Scale`; plain ``int`` operands become :class:`IntConst`.
    """

    def __add__(self, other: Term | int) -> Term:
        return Add(self, _as_term(other))

    def __radd__(self, other: int) -> Term:
        return Add(_as_term(other), self)

    def __sub__(self, other: Term | int) -> Term:
        return Sub(self, _as_term(other))

    def __rsub__(self, other: int) -> Term:
        return Sub(_as_term(other), self)

    def __rmul__(self, k: int) -> Term:
        return Scale(_check_int(k, "a scale factor"), self)

    def __mul__(self, k: int) -> Term:
        return Scale(_check_int(k, "a scale factor"), self)

    def __neg__(self) -> Term:
        return Scale(-1, self)


def _check_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HardsoftError(f"{what} must be an integer, got {value!r}")
    return value


def _as_term(value: Term | int) -> Term:
    if isinstance(value, Term):
        return value
    return IntConst(_check_int(value, "a term"))


def _check_formula(value: Any, cls: str) -> None:
    if not isinstance(value, Formula):
        raise HardsoftError(f"{cls} expects a formula, got {value!r}")


def _check_term(value: Any, cls: str) -> None:
    if not isinstance(value, Term):
        raise HardsoftError(f"{cls} expects a term, got {value!r}")


# ---------------------------------------------------------------- formulas: atoms


@_node
@dataclass(frozen=True)
class Sym(Formula):
    """``'a'``: the symbol at position ``i`` is ``a`` (Q_a in the seeds)."""

    symbol: str

    def __post_init__(self) -> None:
        if not isinstance(self.symbol, str) or len(self.symbol) != 1:
            raise HardsoftError(f"a symbol must be a single character, got {self.symbol!r}")


@_node
@dataclass(frozen=True)
class Const(Formula):
    """``true`` / ``false``."""

    value: bool

    def __post_init__(self) -> None:
        if not isinstance(self.value, bool):
            raise HardsoftError(f"Const expects a bool, got {self.value!r}")


@_node
@dataclass(frozen=True)
class First(Formula):
    """``first``: ``i = 1``."""


@_node
@dataclass(frozen=True)
class Last(Formula):
    """``last``: ``i = n``."""


# ---------------------------------------------------------------- formulas: Boolean


@_node
@dataclass(frozen=True)
class Not(Formula):
    """``!φ``."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "Not")


@_node
@dataclass(frozen=True)
class And(Formula):
    """``φ & ψ``."""

    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_formula(self.left, "And")
        _check_formula(self.right, "And")


@_node
@dataclass(frozen=True)
class Or(Formula):
    """``φ | ψ``."""

    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_formula(self.left, "Or")
        _check_formula(self.right, "Or")


@_node
@dataclass(frozen=True)
class Implies(Formula):
    """``φ -> ψ`` (``!φ | ψ``)."""

    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_formula(self.left, "Implies")
        _check_formula(self.right, "Implies")


# ---------------------------------------------------------------- formulas: temporal


@_node
@dataclass(frozen=True)
class Prev(Formula):
    """``Y φ`` (yesterday / previous): ``i > 1`` and ``φ`` at ``i - 1``."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "Prev")


@_node
@dataclass(frozen=True)
class Next(Formula):
    """``X φ`` (next): ``i < n`` and ``φ`` at ``i + 1``."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "Next")


@_node
@dataclass(frozen=True)
class Since(Formula):
    """``φ S ψ`` (strict since): some ``j < i`` has ``ψ`` and every ``j < k < i`` has ``φ``."""

    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_formula(self.left, "Since")
        _check_formula(self.right, "Since")


@_node
@dataclass(frozen=True)
class Until(Formula):
    """``φ U ψ`` (strict until): some ``j > i`` has ``ψ`` and every ``i < k < j`` has ``φ``."""

    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_formula(self.left, "Until")
        _check_formula(self.right, "Until")


@_node
@dataclass(frozen=True)
class Past(Formula):
    """``P φ``: ``φ`` holds at some ``j < i`` (``true S φ``)."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "Past")


@_node
@dataclass(frozen=True)
class Future(Formula):
    """``F φ``: ``φ`` holds at some ``j > i`` (``true U φ``)."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "Future")


@_node
@dataclass(frozen=True)
class Somewhere(Formula):
    """``E φ``: ``φ`` holds at some position of the word (``P φ | φ | F φ``)."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "Somewhere")


# ---------------------------------------------------------------- formulas: counting


@_node
@dataclass(frozen=True)
class Compare(Formula):
    """``t1 op t2`` for ``op`` in :data:`COMPARE_OPS`."""

    op: str
    left: Term
    right: Term

    def __post_init__(self) -> None:
        if self.op not in COMPARE_OPS:
            raise HardsoftError(f"unknown comparison {self.op!r}; expected one of {COMPARE_OPS}")
        _check_term(self.left, "Compare")
        _check_term(self.right, "Compare")


@_node
@dataclass(frozen=True)
class Mod(Formula):
    """``MOD(m, r)(t)``: ``t mod m = r``, the remainder taken in ``0..m-1`` (also for ``t < 0``)."""

    modulus: int
    residue: int
    term: Term

    def __post_init__(self) -> None:
        _check_int(self.modulus, "MOD's modulus")
        _check_int(self.residue, "MOD's residue")
        if self.modulus < 1:
            raise HardsoftError(f"MOD's modulus must be >= 1, got {self.modulus}")
        if not 0 <= self.residue < self.modulus:
            raise HardsoftError(
                f"MOD's residue must be in 0..{self.modulus - 1}, got {self.residue}"
            )
        _check_term(self.term, "Mod")


# ---------------------------------------------------------------- terms


@_node
@dataclass(frozen=True)
class CountPast(Term):
    """``#<[φ]``: the number of positions ``j <= i`` where ``φ`` holds."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "CountPast")


@_node
@dataclass(frozen=True)
class CountFuture(Term):
    """``#>[φ]``: the number of positions ``j >= i`` where ``φ`` holds."""

    arg: Formula

    def __post_init__(self) -> None:
        _check_formula(self.arg, "CountFuture")


@_node
@dataclass(frozen=True)
class IntConst(Term):
    """An integer literal."""

    value: int

    def __post_init__(self) -> None:
        _check_int(self.value, "IntConst")


@_node
@dataclass(frozen=True)
class Position(Term):
    """``i``: the current position (1-based)."""


@_node
@dataclass(frozen=True)
class Length(Term):
    """``n``: the length of the word (the same at every position; not past-only)."""


@_node
@dataclass(frozen=True)
class Add(Term):
    """``t1 + t2``."""

    left: Term
    right: Term

    def __post_init__(self) -> None:
        _check_term(self.left, "Add")
        _check_term(self.right, "Add")


@_node
@dataclass(frozen=True)
class Sub(Term):
    """``t1 - t2``."""

    left: Term
    right: Term

    def __post_init__(self) -> None:
        _check_term(self.left, "Sub")
        _check_term(self.right, "Sub")


@_node
@dataclass(frozen=True)
class Scale(Term):
    """``k * t`` for an integer literal ``k`` (``-t`` is ``Scale(-1, t)``)."""

    factor: int
    arg: Term

    def __post_init__(self) -> None:
        _check_int(self.factor, "Scale's factor")
        _check_term(self.arg, "Scale")

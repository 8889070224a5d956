"""The C-RASP syntax tree and its printer.

Expressions are frozen dataclasses (structural equality, hashable). Two types: Boolean
expressions and counts; which one an expression has is decided by the checker
(:mod:`hardsoft.programs.crasp.checker`), since a variable may name either.

Precedence, loosest first: ``c1 if b else c2`` (right-associative), ``||``, ``&&``,
comparisons (not associative), ``+ -`` (left-associative), ``K * c``, then the prefix
operators ``! # #[PRED]`` and atoms.

The printer writes few parentheses, but text that the coli-saar/c-rasp interpreter reads the
same way: its grammar binds ``!`` looser than ``&&`` and ``||`` (``!a && b`` is
``!(a && b)`` there), ``+`` tighter than ``-`` (``a - b + c`` is ``a - (b + c)``) and
``K *`` looser than both (``2 * a + b`` is ``2 * (a + b)``). So ``!x`` under ``&&``/``||``,
a ``+``/``-`` under another and ``K * c`` under ``+``/``-`` are parenthesized.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from hardsoft.programs.quoting import needs_quotes, quoted

__all__ = [
    "alphabet_comment",
    "Arith",
    "BoolLit",
    "Compare",
    "Count",
    "Expr",
    "Extreme",
    "IfElse",
    "Import",
    "Int",
    "Logic",
    "Not",
    "Scale",
    "Statement",
    "Sym",
    "Type",
    "Var",
    "COMPARE_OPS",
    "KEYWORDS",
    "to_text",
]

COMPARE_OPS: tuple[str, ...] = ("==", "!=", "<", ">", "<=", ">=")
KEYWORDS = frozenset({"true", "false", "if", "else", "min", "max"})


class Type(str, Enum):
    """The two value types of C-RASP."""

    BOOL = "Boolean"
    COUNT = "count"


class Expr:
    """Base class of expressions."""

    def __str__(self) -> str:
        return to_text(self)


@dataclass(frozen=True)
class Sym(Expr):
    """``"a"``: the symbol at the position is ``a``."""

    symbol: str


@dataclass(frozen=True)
class BoolLit(Expr):
    value: bool


@dataclass(frozen=True)
class Var(Expr):
    """A statement's name, or an imported unary predicate's."""

    name: str


@dataclass(frozen=True)
class Not(Expr):
    operand: Expr


@dataclass(frozen=True)
class Logic(Expr):
    """``&&`` or ``||``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Compare(Expr):
    """A comparison of two counts: ``== != < > <= >=``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Count(Expr):
    """``# b``: the number of positions j ≤ i where ``b`` holds; ``#[PRED] b`` also requires
    the binary predicate PRED(i, j)."""

    operand: Expr
    guard: str | None = None


@dataclass(frozen=True)
class Int(Expr):
    value: int


@dataclass(frozen=True)
class Arith(Expr):
    """``+`` or ``-`` of counts."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Scale(Expr):
    """``K * c`` for an integer literal K."""

    factor: int
    operand: Expr


@dataclass(frozen=True)
class Extreme(Expr):
    """``min(a, b)`` or ``max(a, b)``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IfElse(Expr):
    """``c1 if b else c2``."""

    then: Expr
    cond: Expr
    other: Expr


@dataclass(frozen=True)
class Statement:
    """``NAME = expr`` on line ``line`` (1-based)."""

    name: str
    expr: Expr
    line: int = 0


@dataclass(frozen=True)
class Import:
    """``#import NAME`` on line ``line``."""

    name: str
    line: int = 0


# ------------------------------------------------------------------ printing

IF, OR, AND, CMP, SUM, PRODUCT, UNARY, ATOM = range(8)
"""Precedence levels, loosest first."""


def _level(e: Expr) -> int:
    if isinstance(e, IfElse):
        return IF
    if isinstance(e, Logic):
        return OR if e.op == "||" else AND
    if isinstance(e, Compare):
        return CMP
    if isinstance(e, Arith):
        return SUM
    if isinstance(e, Scale):
        return PRODUCT
    if isinstance(e, (Not, Count)):
        return UNARY
    return ATOM


def _at(e: Expr, level: int) -> str:
    text = to_text(e)
    return f"({text})" if _level(e) < level else text


def _under(e: Expr, level: int, portable: type | tuple[type, ...]) -> str:
    """``e`` as an operand at ``level``, parenthesized also where it is a ``portable`` node
    (read differently by the coli-saar grammar without parentheses)."""
    return f"({to_text(e)})" if isinstance(e, portable) else _at(e, level)


def alphabet_comment(alphabet: Sequence[str]) -> str:
    """The ``// alphabet:`` line that reads back as ``alphabet`` (quoted where it must be)."""
    text = "".join(alphabet)
    return f"// alphabet: {quoted(text) if needs_quotes(text) else text}"


def to_text(e: Expr) -> str:
    """``e`` in the concrete syntax, with as few parentheses as the grammar allows (so
    parsing the text gives ``e`` back)."""
    if isinstance(e, Sym):
        return quoted(e.symbol)
    if isinstance(e, BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Int):
        return str(e.value)
    if isinstance(e, Not):
        return f"!{_at(e.operand, UNARY)}"
    if isinstance(e, Count):
        guard = f"[{e.guard}]" if e.guard else ""
        return f"#{guard} {_at(e.operand, UNARY)}" if guard else f"#{_at(e.operand, UNARY)}"
    if isinstance(e, Logic):
        lvl = OR if e.op == "||" else AND
        return f"{_under(e.left, lvl, Not)} {e.op} {_under(e.right, lvl + 1, Not)}"
    if isinstance(e, Compare):
        return f"{_at(e.left, SUM)} {e.op} {_at(e.right, SUM)}"
    if isinstance(e, Arith):
        both = (Arith, Scale)
        return f"{_under(e.left, SUM, both)} {e.op} {_under(e.right, PRODUCT, both)}"
    if isinstance(e, Scale):
        return f"{e.factor} * {_at(e.operand, PRODUCT)}"
    if isinstance(e, Extreme):
        return f"{e.op}({to_text(e.left)}, {to_text(e.right)})"
    if isinstance(e, IfElse):
        return f"{_at(e.then, OR)} if {_at(e.cond, OR)} else {_at(e.other, IF)}"
    raise TypeError(f"not a C-RASP expression: {e!r}")


def children(e: Expr) -> tuple[Expr, ...]:
    """The direct subexpressions of ``e``."""
    if isinstance(e, (Not, Count)):
        return (e.operand,)
    if isinstance(e, Scale):
        return (e.operand,)
    if isinstance(e, (Logic, Compare, Arith, Extreme)):
        return (e.left, e.right)
    if isinstance(e, IfElse):
        return (e.then, e.cond, e.other)
    return ()


def walk(e: Expr) -> list[Expr]:
    """Every subexpression of ``e`` (``e`` first, then depth-first)."""
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(reversed(children(x)))
    return out

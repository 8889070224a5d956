"""Abstract syntax of the temporal logic LTL[C,+] (Yang, Strobl, Chiang & Angluin (TACL 2026) §4):
formulas, counting terms, and structural queries (subformulas, size, depth, operators,
fragments, pretty-printing).

Every node is a frozen, hashable dataclass with structural equality, so equal subtrees built
separately compare and hash equal; the compiler relies on that to share common subformulas.
Hashes are cached on first use, so hashing a large shared DAG is linear, not exponential.

Positions are 1-based as in the seeds: a word ``w`` has positions ``1..n``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from hardsoft.errors import HardsoftError
from hardsoft.logic.dag import topological

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
    "FUTURE_OPERATORS",
    "KEYWORDS",
    "Fragment",
    "children",
    "subnodes",
    "subformulas",
    "symbols",
    "size",
    "depth",
    "temporal_depth",
    "operators",
    "operator",
    "is_past_only",
    "fragment",
    "to_text",
    "quote_symbol",
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


# ---------------------------------------------------------------- structure


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes (formulas and terms) of ``node``, left to right."""
    return tuple(
        value
        for value in (getattr(node, name) for name in _FIELDS[type(node)])
        if isinstance(value, Node)
    )


def subnodes(node: Node) -> list[Node]:
    """All distinct sub-nodes of ``node`` (formulas and terms, ``node`` included) in dependency
    order: every node comes after all of its children. Equal subtrees appear once."""
    return topological([node], children)


def subformulas(node: Node) -> list[Formula]:
    """The distinct subformulas of ``node`` (children before parents); terms are left out."""
    return [n for n in subnodes(node) if isinstance(n, Formula)]


def symbols(node: Node) -> frozenset[str]:
    """The alphabet symbols mentioned by ``node``."""
    return frozenset(n.symbol for n in subnodes(node) if isinstance(n, Sym))


def size(node: Node) -> int:
    """The number of nodes of the syntax tree, counting repeated subtrees every time."""
    memo: dict[Node, int] = {}
    for n in subnodes(node):
        memo[n] = 1 + sum(memo[c] for c in children(n))
    return memo[node]


def depth(node: Node) -> int:
    """The height of the syntax tree: atoms and literals have depth 0."""
    memo: dict[Node, int] = {}
    for n in subnodes(node):
        kids = children(n)
        memo[n] = 1 + max(memo[c] for c in kids) if kids else 0
    return memo[node]


_ATTENTION = (Prev, Next, Since, Until, Past, Future, Somewhere, CountPast, CountFuture)


def temporal_depth(node: Node) -> int:
    """The nesting depth of operators that look at other positions (``Y X S U P F E #< #>``):
    the number of attention stages a layer-by-layer construction needs (``first``/``last``
    and ``n``, which look at the whole word, are not counted)."""
    memo: dict[Node, int] = {}
    for n in subnodes(node):
        below = max((memo[c] for c in children(n)), default=0)
        memo[n] = below + (1 if isinstance(n, _ATTENTION) else 0)
    return memo[node]


_OPERATOR_NAMES: dict[type, str] = {
    Sym: "sym",
    Const: "const",
    First: "first",
    Last: "last",
    Not: "!",
    And: "&",
    Or: "|",
    Implies: "->",
    Prev: "Y",
    Next: "X",
    Since: "S",
    Until: "U",
    Past: "P",
    Future: "F",
    Somewhere: "E",
    Mod: "MOD",
    CountPast: "#<",
    CountFuture: "#>",
    IntConst: "int",
    Position: "i",
    Length: "n",
    Add: "+",
    Sub: "-",
    Scale: "*",
}


def operator(node: Node) -> str:
    """The operator name of one node: its concrete-syntax token (``"Y"``, ``"#<"``, ``"<="``),
    or ``"sym"``, ``"const"``, ``"int"`` for symbols, ``true``/``false`` and integer literals."""
    if isinstance(node, Compare):
        return node.op
    return _OPERATOR_NAMES[type(node)]


def operators(node: Node) -> frozenset[str]:
    """The set of operator names (see :func:`operator`) used anywhere in ``node``."""
    return frozenset(operator(n) for n in subnodes(node))


# ---------------------------------------------------------------- fragments

FUTURE_OPERATORS: frozenset[str] = frozenset({"X", "U", "F", "E", "last", "#>", "n"})
"""The operators that look to the right of the current position (or at the whole word's
length): a formula without them is past-only, computable with future masks (causal). The one
place this set is written; the random generator and the compiler derive from it."""
_LOCAL_OPS = frozenset({"Y", "X", "first", "last"})
_SINCE_OPS = frozenset({"S", "U", "P", "F", "E"})
_COUNT_OPS = frozenset({"#<", "#>", "MOD", "i", "n", "int", "+", "-", "*", *COMPARE_OPS})


@dataclass(frozen=True)
class Fragment:
    """The smallest of the fragments of Yang et al. (2026) §4 containing a formula.

    ``base`` is one of ``TL[Y,X]``, ``TL[S,U]``, ``LTL``, ``TL[C,+]``, ``LTL[C,+]``;
    ``past_only`` says no operator looks to the right (``X U F E last #> n``), so a
    future-masked (causal) transformer can compute the formula; ``name`` is the past variant's
    name when ``past_only`` (``TL[Y]``, ``TL[S]``, ``past LTL``, ``past TL[C,+]``,
    ``past LTL[C,+]``) and ``base`` otherwise.
    """

    base: str
    past_only: bool

    @property
    def name(self) -> str:
        if not self.past_only:
            return self.base
        return {"TL[Y,X]": "TL[Y]", "TL[S,U]": "TL[S]"}.get(self.base, f"past {self.base}")

    def __str__(self) -> str:
        return self.name


def is_past_only(node: Node) -> bool:
    """True iff no operator in ``node`` looks at positions to the right of ``i`` (or at ``n``):
    the value at ``i`` depends only on ``w_1..w_i``."""
    return not (operators(node) & FUTURE_OPERATORS)


def fragment(node: Node) -> Fragment:
    """Classify ``node`` into the smallest fragment of the seed containing it (syntactically).

    ``first``/``last`` count as TL[Y,X] operators (``!Y true``, ``!X true``); a formula with no
    temporal or counting operator is placed in TL[Y,X] (TL[Y] if past-only), the cheapest to
    compile. Counting with any of ``Y X S U P F E`` is LTL[C,+]; ``Y``/``X`` together with
    ``S U P F E`` is LTL.
    """
    ops = operators(node)
    local = bool(ops & _LOCAL_OPS)
    since = bool(ops & _SINCE_OPS)
    count = bool(ops & _COUNT_OPS)
    if count:
        temporal = bool(ops & (_SINCE_OPS | {"Y", "X"}))
        base = "LTL[C,+]" if temporal else "TL[C,+]"
    elif local and since:
        base = "LTL"
    elif since:
        base = "TL[S,U]"
    else:
        base = "TL[Y,X]"
    return Fragment(base=base, past_only=not (ops & FUTURE_OPERATORS))


# ---------------------------------------------------------------- pretty-printing

# Precedence levels (higher binds tighter), matching the grammar in parser.py.
_P_IMPLIES, _P_OR, _P_AND, _P_CMP, _P_SINCE, _P_UNARY = 1, 2, 3, 4, 5, 6
_T_SUM, _T_PRODUCT, _T_ATOM = 1, 2, 3

_UNARY_TOKENS = {Not: "!", Prev: "Y ", Next: "X ", Past: "P ", Future: "F ", Somewhere: "E "}


def quote_symbol(symbol: str) -> str:
    """The concrete syntax of a symbol: ``'a'``, with ``'`` and ``\\`` escaped by a backslash."""
    if symbol in ("'", "\\"):
        return f"'\\{symbol}'"
    return f"'{symbol}'"


def to_text(node: Node) -> str:
    """Print ``node`` in the concrete syntax with as few parentheses as the grammar allows;
    the output parses back (:func:`hardsoft.logic.parse`) to an equal node."""
    memo: dict[Node, tuple[str, int]] = {}
    for sub in subnodes(node):  # children first, so no recursion on deep formulas
        if isinstance(sub, Formula):
            memo[sub] = _formula_text(sub, memo)
        else:
            assert isinstance(sub, Term)
            memo[sub] = _term_text(sub, memo)
    return memo[node][0]


def _wrap(text_prec: tuple[str, int], needed: int) -> str:
    text, prec = text_prec
    return text if prec >= needed else f"({text})"


def _formula_text(f: Formula, memo: dict[Node, tuple[str, int]]) -> tuple[str, int]:
    if isinstance(f, Sym):
        return quote_symbol(f.symbol), _P_UNARY
    if isinstance(f, Const):
        return ("true" if f.value else "false"), _P_UNARY
    if isinstance(f, First):
        return "first", _P_UNARY
    if isinstance(f, Last):
        return "last", _P_UNARY
    if isinstance(f, Mod):
        return f"MOD({f.modulus}, {f.residue})({memo[f.term][0]})", _P_UNARY
    if isinstance(f, (Not, Prev, Next, Past, Future, Somewhere)):
        return _UNARY_TOKENS[type(f)] + _wrap(memo[f.arg], _P_UNARY), _P_UNARY
    if isinstance(f, (Since, Until)):  # right-associative
        token = " S " if isinstance(f, Since) else " U "
        left = _wrap(memo[f.left], _P_UNARY)
        right = _wrap(memo[f.right], _P_SINCE)
        return left + token + right, _P_SINCE
    if isinstance(f, Compare):
        return f"{memo[f.left][0]} {f.op} {memo[f.right][0]}", _P_CMP
    if isinstance(f, And):  # left-associative
        left = _wrap(memo[f.left], _P_AND)
        return f"{left} & {_wrap(memo[f.right], _P_CMP)}", _P_AND
    if isinstance(f, Or):
        left = _wrap(memo[f.left], _P_OR)
        return f"{left} | {_wrap(memo[f.right], _P_AND)}", _P_OR
    if isinstance(f, Implies):  # right-associative
        left = _wrap(memo[f.left], _P_OR)
        return f"{left} -> {_wrap(memo[f.right], _P_IMPLIES)}", _P_IMPLIES
    raise TypeError(f"not a formula node: {f!r}")


def _term_text(t: Term, memo: dict[Node, tuple[str, int]]) -> tuple[str, int]:
    if isinstance(t, IntConst):
        return str(t.value), _T_ATOM
    if isinstance(t, Position):
        return "i", _T_ATOM
    if isinstance(t, Length):
        return "n", _T_ATOM
    if isinstance(t, CountPast):
        return f"#<[{memo[t.arg][0]}]", _T_ATOM
    if isinstance(t, CountFuture):
        return f"#>[{memo[t.arg][0]}]", _T_ATOM
    if isinstance(t, Scale):  # right-recursive: k * (product)
        return f"{t.factor} * {_wrap(memo[t.arg], _T_PRODUCT)}", _T_PRODUCT
    if isinstance(t, (Add, Sub)):  # left-associative
        token = " + " if isinstance(t, Add) else " - "
        left = _wrap(memo[t.left], _T_SUM)
        return left + token + _wrap(memo[t.right], _T_PRODUCT), _T_SUM
    raise TypeError(f"not a term node: {t!r}")

"""The printer of LTL[C,+]: a syntax tree back to the concrete syntax that
:func:`hardsoft.logic.parse` reads, with as few parentheses as the grammar allows."""

from __future__ import annotations

from hardsoft.logic.nodes import (
    Add,
    And,
    Compare,
    Const,
    CountFuture,
    CountPast,
    First,
    Formula,
    Future,
    Implies,
    IntConst,
    Last,
    Length,
    Mod,
    Next,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Scale,
    Since,
    Somewhere,
    Sub,
    Sym,
    Term,
    Until,
)
from hardsoft.logic.structure import subnodes

__all__ = [
    "to_text",
    "shared_text",
    "quote_symbol",
]

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


SHARED_TEXT_NODES = 5_000
"""A formula whose syntax tree has more nodes than this is printed with shared definitions."""


def shared_text(node: Node, max_tree: int = SHARED_TEXT_NODES) -> str:
    """:func:`to_text` when the syntax tree has at most ``max_tree`` nodes; otherwise the DAG
    with its shared subformulas named, ``let $1 = …; $2 = … in …`` (each node printed once,
    so the text grows with the number of distinct subformulas, not with the tree, which a
    formula built with sharing can make exponentially larger). Not parseable by ``parse``."""
    from hardsoft.logic.structure import children, size

    if size(node) <= max_tree:
        return to_text(node)
    order = subnodes(node)
    parents: dict[Node, int] = {}
    for sub in order:
        for c in children(sub):
            parents[c] = parents.get(c, 0) + 1
    memo: dict[Node, tuple[str, int]] = {}
    lines: list[str] = []
    for sub in order:
        if isinstance(sub, Formula):
            text = _formula_text(sub, memo)
        else:
            assert isinstance(sub, Term)
            text = _term_text(sub, memo)
        if parents.get(sub, 0) >= 2 and children(sub) and sub is not node:
            name = f"${len(lines) + 1}"
            lines.append(f"{name} = {text[0]}")
            text = (name, _P_UNARY if isinstance(sub, Formula) else _T_ATOM)
        memo[sub] = text
    return "let " + "; ".join(lines) + " in " + memo[node][0]


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

"""Random formulas and terms over an alphabet, for property tests (parser round trips,
evaluator cross-checks, compiler-vs-evaluator checks).

Every operator of the logic can appear; ``operators`` restricts the choice to a fragment (names
as in :func:`hardsoft.logic.syntax.operator`, e.g. ``PAST_OPERATORS`` for causal targets).
"""

from __future__ import annotations

import random as _random
from collections.abc import Iterable

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import (
    COMPARE_OPS,
    FUTURE_OPERATORS,
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

__all__ = [
    "ALL_OPERATORS",
    "PAST_OPERATORS",
    "FRAGMENT_OPERATORS",
    "random_formula",
    "random_term",
]

_LEAVES = ("sym", "const", "first", "last")
_UNARY = {"!": Not, "Y": Prev, "X": Next, "P": Past, "F": Future, "E": Somewhere}
_BINARY = {"&": And, "|": Or, "->": Implies, "S": Since, "U": Until}
_TERM_LEAVES = ("int", "i", "n")
_COUNTS = {"#<": CountPast, "#>": CountFuture}
_ARITH = ("+", "-", "*")

ALL_OPERATORS: frozenset[str] = frozenset(
    {*_LEAVES, *_UNARY, *_BINARY, *COMPARE_OPS, "MOD", *_TERM_LEAVES, *_COUNTS, *_ARITH}
)
"""Every operator name the generator (and :func:`~hardsoft.logic.syntax.operators`) knows."""

PAST_OPERATORS: frozenset[str] = ALL_OPERATORS - FUTURE_OPERATORS
"""Operators whose value at ``i`` depends only on ``w_1..w_i`` (for causal targets)."""

_BOOL = frozenset({"sym", "const", "!", "&", "|", "->"})
_COUNTING = frozenset({*COMPARE_OPS, "MOD", "int", "i", "#<", "#>", "+", "-", "*"})
FRAGMENT_OPERATORS: dict[str, frozenset[str]] = {
    "TL[Y]": _BOOL | {"Y", "first"},
    "TL[Y,X]": _BOOL | {"Y", "X", "first", "last"},
    "TL[S]": _BOOL | {"S", "P"},
    "TL[S,U]": _BOOL | {"S", "U", "P", "F", "E"},
    "past LTL": _BOOL | {"Y", "first", "S", "P"},
    "LTL": _BOOL | {"Y", "X", "first", "last", "S", "U", "P", "F", "E"},
    "past TL[C,+]": _BOOL | (_COUNTING - {"#>"}),
    "TL[C,+]": _BOOL | _COUNTING | {"n"},
    "past LTL[C,+]": PAST_OPERATORS,
    "LTL[C,+]": ALL_OPERATORS,
}
"""Operator sets generating exactly the formulas of each named fragment (see
:class:`~hardsoft.logic.syntax.Fragment`)."""


def _rng(rng: _random.Random | np.random.Generator | int | None) -> _random.Random:
    if isinstance(rng, _random.Random):
        return rng
    if isinstance(rng, np.random.Generator):
        return _random.Random(int(rng.integers(0, 2**63 - 1)))
    return _random.Random(rng)


def _ops(operators: Iterable[str] | None) -> frozenset[str]:
    ops = ALL_OPERATORS if operators is None else frozenset(operators)
    unknown = ops - ALL_OPERATORS
    if unknown:
        raise HardsoftError(
            f"unknown operator(s) {sorted(unknown)}; known: {sorted(ALL_OPERATORS)}"
        )
    return ops


def random_formula(
    rng: _random.Random | np.random.Generator | int | None,
    alphabet: Iterable[str],
    depth: int = 3,
    operators: Iterable[str] | None = None,
    *,
    max_int: int = 3,
) -> Formula:
    """A random formula of syntax-tree depth at most ``depth`` over ``alphabet``, using only
    ``operators`` (default: all). Symbols are always available as leaves; integer literals and
    scale factors are drawn from ``-max_int..max_int`` and moduli from ``1..max_int+1``."""
    alpha = list(dict.fromkeys(alphabet))
    if not alpha:
        raise HardsoftError("random_formula needs a non-empty alphabet")
    if depth < 0:
        raise HardsoftError(f"depth must be >= 0, got {depth}")
    return _formula(_rng(rng), alpha, depth, _ops(operators), max_int)


def random_term(
    rng: _random.Random | np.random.Generator | int | None,
    alphabet: Iterable[str],
    depth: int = 3,
    operators: Iterable[str] | None = None,
    *,
    max_int: int = 3,
) -> Term:
    """A random counting term of depth at most ``depth`` (see :func:`random_formula`)."""
    alpha = list(dict.fromkeys(alphabet))
    if not alpha:
        raise HardsoftError("random_term needs a non-empty alphabet")
    ops = _ops(operators) | {"int"}
    return _term(_rng(rng), alpha, max(depth, 0), ops, max_int)


def _formula(
    r: _random.Random, alpha: list[str], depth: int, ops: frozenset[str], k: int
) -> Formula:
    leaves = [op for op in _LEAVES if op in ops] or ["sym"]
    choices: list[str] = []
    if depth > 0:
        choices += [op for op in _UNARY if op in ops]
        choices += [op for op in _BINARY if op in ops]
        term_ok = bool(ops & {*_TERM_LEAVES, *_COUNTS})
        if term_ok:
            choices += [op for op in COMPARE_OPS if op in ops]
            if "MOD" in ops:
                choices.append("MOD")
    if not choices or r.random() < 0.25:
        leaf = r.choice(leaves)
        if leaf == "sym":
            return Sym(r.choice(alpha))
        if leaf == "const":
            return Const(r.random() < 0.5)
        return First() if leaf == "first" else Last()
    op = r.choice(choices)
    if op in _UNARY:
        return _UNARY[op](_formula(r, alpha, depth - 1, ops, k))
    if op in _BINARY:
        return _BINARY[op](
            _formula(r, alpha, depth - 1, ops, k), _formula(r, alpha, depth - 1, ops, k)
        )
    if op == "MOD":
        m = r.randint(1, k + 1)
        return Mod(m, r.randrange(m), _term(r, alpha, depth - 1, ops, k))
    return Compare(op, _term(r, alpha, depth - 1, ops, k), _term(r, alpha, depth - 1, ops, k))


def _term(r: _random.Random, alpha: list[str], depth: int, ops: frozenset[str], k: int) -> Term:
    leaves = [op for op in _TERM_LEAVES if op in ops]
    choices: list[str] = []
    if depth > 0:
        choices += [op for op in _COUNTS if op in ops]
        choices += [op for op in _ARITH if op in ops]
    if not leaves and not choices:
        leaves = ["int"]
    if not choices or (leaves and r.random() < 0.3):
        leaf = r.choice(leaves)
        if leaf == "int":
            return IntConst(r.randint(-k, k))
        return Position() if leaf == "i" else Length()
    op = r.choice(choices)
    if op in _COUNTS:
        return _COUNTS[op](_formula(r, alpha, depth - 1, ops, k))
    if op == "*":
        return Scale(r.randint(-k, k), _term(r, alpha, depth - 1, ops, k))
    cls = Add if op == "+" else Sub
    return cls(_term(r, alpha, depth - 1, ops, k), _term(r, alpha, depth - 1, ops, k))

"""The B-RASP interpreter: the program's semantics, literally, on one word.

It shares nothing with the compiler (no IR, no classes of queries, no heads): each statement
becomes a Boolean vector over the positions, in dependency order. An attention statement at
position i evaluates its SCORE at every j (atoms ``X(i)`` read at i, ``X(j)`` at j), keeps
the j its MASK allows, takes the leftmost (rightmost) of them, and evaluates VALUE there
(``X(i)`` at i, ``X(j)`` at that j); with no such j, DEFAULT at i. The one shortcut is
memoisation: positions whose i-side atoms of the SCORE have the same values get the same row
of scores, so a row is evaluated once per distinct combination and the leftmost (rightmost)
allowed j is found by binary search in it. That keeps long words (n = 10⁶) in reach; the
tests compare it with a three-loop transcription of the definition and, where node is
installed, with the simulator's own JavaScript (benchmarks/brasp_presets.py).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.brasp.syntax import (
    And,
    Atom,
    Attend,
    BMask,
    Const,
    Declare,
    Define,
    Expr,
    Not,
    Or,
    Program,
    Statement,
    Tie,
    Var,
    atoms,
    uses,
)
from hardsoft.programs.source import require_symbols

Env = Mapping[str, np.ndarray | bool]
"""The values an expression reads: a vector (or one Boolean) per statement name."""


def evaluate(e: Expr, at_i: Env, at_j: Env) -> np.ndarray | bool:
    """The value of ``e`` with ``X(i)`` read from ``at_i`` and ``X(j)`` from ``at_j``
    (numpy broadcasting: scalars and vectors mix)."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Atom):
        return (at_i if e.var is Var.I else at_j)[e.name]
    if isinstance(e, Not):
        return np.logical_not(evaluate(e.arg, at_i, at_j))
    if isinstance(e, And):
        return np.logical_and(evaluate(e.left, at_i, at_j), evaluate(e.right, at_i, at_j))
    assert isinstance(e, Or)
    return np.logical_or(evaluate(e.left, at_i, at_j), evaluate(e.right, at_i, at_j))


def _vector(x: np.ndarray | bool, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=bool), (n,)).copy()


def window(mask: BMask, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The allowed j of each position i (0-based) as inclusive bounds ``lo[i] .. hi[i]``
    (empty where ``lo > hi``)."""
    i = np.arange(n)
    zero, last = np.zeros(n, dtype=np.int64), np.full(n, n - 1)
    return {
        BMask.BEFORE: (zero, i - 1),
        BMask.UPTO: (zero, i),
        BMask.AFTER: (i + 1, last),
        BMask.FROM: (i, last),
        BMask.ALL: (zero, last),
    }[mask]


def attend(s: Attend, values: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """An attention statement's vector (see the module docstring)."""
    lo, hi = window(s.mask, n)
    i_names = list(dict.fromkeys(a.name for a in atoms(s.score) if a.var is Var.I))
    if i_names:
        keys = np.stack([values[nm] for nm in i_names], axis=1)
        combos, group = np.unique(keys, axis=0, return_inverse=True)
        group = group.reshape(-1)
    else:
        combos, group = np.zeros((1, 0), dtype=bool), np.zeros(n, dtype=np.int64)
    chosen = np.full(n, -1, dtype=np.int64)
    for g, combo in enumerate(combos):
        rows = np.flatnonzero(group == g)
        row_env: dict[str, np.ndarray | bool] = {nm: bool(v) for nm, v in zip(i_names, combo)}
        qualifying = np.flatnonzero(_vector(evaluate(s.score, row_env, values), n))
        if not len(qualifying):
            continue
        if s.tie is Tie.LEFTMOST:
            k = np.searchsorted(qualifying, lo[rows], side="left")
            ok = k < len(qualifying)
            j = np.where(ok, qualifying[np.minimum(k, len(qualifying) - 1)], -1)
            ok &= (j <= hi[rows]) & (j >= 0)
        else:
            k = np.searchsorted(qualifying, hi[rows], side="right") - 1
            ok = k >= 0
            j = np.where(ok, qualifying[np.maximum(k, 0)], -1)
            ok &= j >= lo[rows]
        chosen[rows[ok]] = j[ok]
    out = _vector(evaluate(s.default, values, {}), n)
    found = np.flatnonzero(chosen >= 0)
    if len(found):
        at_i: dict[str, np.ndarray] = {nm: v[found] for nm, v in values.items()}
        at_j: dict[str, np.ndarray] = {nm: v[chosen[found]] for nm, v in values.items()}
        out[found] = _vector(evaluate(s.value, at_i, at_j), len(found))
    return out


def statement_vector(
    s: Statement, values: Mapping[str, np.ndarray], tokens: np.ndarray, alphabet: tuple[str, ...]
) -> np.ndarray:
    """One statement's vector, given the vectors of the statements it uses."""
    n = len(tokens)
    if isinstance(s, Declare):
        return tokens == alphabet.index(s.symbol)
    if isinstance(s, Define):
        return _vector(evaluate(s.expr, values, {}), n)
    assert isinstance(s, Attend)
    return attend(s, values, n)


def order(program: Program) -> list[Statement]:
    """The statements in an order where each comes after those it uses (the program order
    when it already is one)."""
    done: set[str] = set()
    out: list[Statement] = []
    pending = list(program.statements)
    while pending:
        rest = []
        for s in pending:
            if all(a.name in done for a in uses(s)):
                out.append(s)
                done.add(s.name)
            else:
                rest.append(s)
        if len(rest) == len(pending):  # pragma: no cover - the parser refuses cycles
            raise HardsoftError(f"statement {rest[0].name!r} depends on itself")
        pending = rest
    return out


def tokens_of(word: str, alphabet: tuple[str, ...]) -> np.ndarray:
    """The word as symbol indices; a symbol outside the alphabet is a one-line error, the
    compiled model's (:func:`~hardsoft.programs.source.require_symbols`)."""
    require_symbols(word, alphabet)
    index = {a: k for k, a in enumerate(alphabet)}
    return np.fromiter((index[c] for c in word), dtype=np.int64, count=len(word))


def run_vectors(program: Program, word: str | np.ndarray) -> dict[str, np.ndarray]:
    """Every statement's Boolean vector on ``word`` (a string or symbol indices), in
    program order."""
    tokens = tokens_of(word, program.alphabet) if isinstance(word, str) else np.asarray(word)
    values: dict[str, np.ndarray] = {}
    for s in order(program):
        values[s.name] = statement_vector(s, values, tokens, program.alphabet)
    return {name: values[name] for name in program.names}

"""A bounded search for a past-LTL formula of a star-free row (``atlas add-row``): the formula
whose value at position i is the membership of the prefix of length i, found by bottom-up
enumeration (smallest first) with observational equivalence on all words up to a length.

Operators: symbols, ``true``, ``!``, ``&``, ``|``, ``Y``, ``P``, ``S`` and, counted as one
node each, "once" ``f | P f`` and "historically" ``f & !P !f``. :func:`simplify` then
writes the result readably (``!!f`` as ``f``, ``!'a'`` as ``'b'`` over two symbols). The search is a
heuristic: it computes candidate values with its own small numpy operators and may find nothing
(the formula may be larger than the bound). What it finds is then *verified*
with the logic evaluator (:func:`hardsoft.logic.evaluate`) on every word up to the length,
compiled (:func:`hardsoft.compile.compile_formula`, hard target, strict masks) and checked
exactly against the row's DFA (:func:`hardsoft.check.check_language`) at longer lengths: the
evidence is that check, not the search.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hardsoft.languages.regular import DFA
from hardsoft.logic.syntax import And, Const, Formula, Not, Or, Past, Prev, Since, Sym

MAX_SIZE = 10
MAX_FORMULAS = 40_000
"""The search's memory budget: distinct candidate formulas kept (each keeps its values)."""
MAX_CANDIDATES = 200_000
"""The search's time budget: candidate formulas evaluated, kept or not (a pair of large
formulas often gives a value already seen). Both budgets count, never a clock, so a row gets
the same answer on an idle and on a busy machine; the two cost at most about 5 s on one core
(`(ab)*` over ``ab`` is found after about 87,000)."""
MAX_WORDS = 100_000
"""Most words of one length the exhaustive check after the search enumerates: k^L grows fast,
and a 300-symbol alphabet at L = 4 would be 8·10^9 words."""
MAX_CELLS = 4096
"""Most positions (words × length) the search evaluates each candidate on: it keeps every
candidate's values, up to :data:`MAX_FORMULAS` of them (the default lengths for 2, 3 and 4
symbols need at most 1,215)."""


def affordable_length(k: int, wanted: int, cells: bool = False) -> int:
    """The largest length L <= ``wanted`` (at least 1) with at most :data:`MAX_WORDS` words
    k^L (``cells``: at most :data:`MAX_CELLS` positions k^L·L)."""

    def cost(n: int) -> int:
        return k**n * n if cells else k**n

    length = 1
    while length < wanted and cost(length + 1) <= (MAX_CELLS if cells else MAX_WORDS):
        length += 1
    return length


@dataclass
class _Words:
    codes: np.ndarray  # [B, L] every word of length L
    target: np.ndarray  # [B, L] membership of each prefix


def _words(dfa: DFA, length: int) -> _Words:
    k = len(dfa.alphabet)
    codes = np.array(list(itertools.product(range(k), repeat=length)), dtype=np.int64)
    delta = np.array(dfa.delta, dtype=np.int64)
    accept = np.zeros(dfa.n_states, dtype=bool)
    accept[list(dfa.accepting)] = True
    state = np.zeros(len(codes), dtype=np.int64)
    target = np.zeros(codes.shape, dtype=bool)
    for i in range(length):
        state = delta[state, codes[:, i]]
        target[:, i] = accept[state]
    return _Words(codes, target)


def _strict_last(mask: np.ndarray) -> np.ndarray:
    n = mask.shape[1]
    idx = np.where(mask, np.arange(n)[None, :], -1)
    inclusive = np.maximum.accumulate(idx, axis=1)
    out = np.full(mask.shape, -1, dtype=np.int64)
    out[:, 1:] = inclusive[:, :-1]
    return out


def _prev(a: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    out[:, 1:] = a[:, :-1]
    return out


def _past(a: np.ndarray) -> np.ndarray:
    return _strict_last(a) >= 0


def _since(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    last_b = _strict_last(b)
    return (last_b >= 0) & (_strict_last(~a) <= last_b)


def search(dfa: DFA, length: int | None = None) -> tuple[Formula | None, dict[str, Any]]:
    """The smallest past formula (up to :data:`MAX_SIZE` nodes, within the budgets) agreeing
    with the DFA on every non-empty word up to ``length``; None if none was found. Then
    ``stats["none_up_to"]`` is the largest size enumerated completely: past operators read
    only earlier positions, so formulas equal on these words stay equal in every context,
    and no formula of at most that many nodes (of these operators) defines the language."""
    k = len(dfa.alphabet)
    length = affordable_length(k, length or (7 if k == 2 else 5 if k == 3 else 4), cells=True)
    if length < 2:  # every word of length 2 is past the budget: nothing worth searching on
        return None, {
            "length": length,
            "formulas": 0,
            "max_size": MAX_SIZE,
            "stopped": f"alphabet of {k} symbols: too large for the search",
        }
    words = _words(dfa, length)
    seen: dict[bytes, Formula] = {}
    by_size: dict[int, list[tuple[Formula, np.ndarray]]] = {s: [] for s in range(1, MAX_SIZE + 1)}
    stats: dict[str, Any] = {"length": length, "formulas": 0, "max_size": MAX_SIZE, "stopped": ""}
    tried, at_size = [0], [1]

    def add(f: Formula, v: np.ndarray, size: int) -> bool:
        tried[0] += 1
        at_size[0] = size
        if len(seen) >= MAX_FORMULAS or tried[0] > MAX_CANDIDATES:
            raise _OutOfBudget
        key = v.tobytes()
        if key in seen:
            return False
        seen[key] = f
        by_size[size].append((f, v))
        return bool(np.array_equal(v, words.target))

    atoms: list[tuple[Formula, np.ndarray]] = [
        (Sym(a), words.codes == i) for i, a in enumerate(dfa.alphabet)
    ]
    atoms.append((Const(True), np.ones(words.codes.shape, dtype=bool)))
    try:
        found = _enumerate(atoms, by_size, add)
    except _OutOfBudget:
        found = None
        stats["stopped"] = (
            f"budget of {MAX_FORMULAS} formulas kept"
            if len(seen) >= MAX_FORMULAS
            else f"budget of {MAX_CANDIDATES} candidates tried"
        )
        stats["none_up_to"] = at_size[0] - 1
    else:
        stats["stopped"] = "" if found is not None else "size"
        if found is None:
            stats["none_up_to"] = MAX_SIZE
    return found, {**stats, "formulas": len(seen), "candidates": tried[0]}


def outcome(stats: dict[str, Any]) -> str:
    """One line saying what a search that found no formula showed (``add-row`` prints it and
    the row's cell stores it)."""
    stop = stats.get("stopped") or ""
    if "none_up_to" not in stats:
        return f"the formula search did not run ({stop})"
    text = (
        f"no past formula of at most {stats['none_up_to']} nodes defines it (every one was "
        f"enumerated, on the words up to length {stats['length']})"
    )
    if stop != "size":
        text += (
            f"; the search stopped at its {stop} within size {stats['none_up_to'] + 1} "
            f"({stats.get('candidates', 0)} candidates tried)"
        )
    return text


class _OutOfBudget(Exception):
    """Raised by the search when a budget is spent."""


def _enumerate(
    atoms: list[tuple[Formula, np.ndarray]],
    by_size: dict[int, list[tuple[Formula, np.ndarray]]],
    add: Callable[[Formula, np.ndarray, int], bool],
) -> Formula | None:
    """Bottom-up, smallest first: every formula of each size from those below it; the first
    whose values are the target (``add`` returns True) is returned."""
    for f, v in atoms:
        if add(f, v, 1):
            return f
    for size in range(2, MAX_SIZE + 1):
        for f, v in list(by_size[size - 1]):
            once = v | _past(v)  # O f (now or before), H f = !O !f (always so far)
            hist = ~(~v | _past(~v))
            unary: tuple[tuple[Formula, np.ndarray], ...] = (
                (Not(f), ~v),
                (Prev(f), _prev(v)),
                (Past(f), _past(v)),
                (Or(f, Past(f)), once),
                (And(f, Not(Past(Not(f)))), hist),
            )
            for g, w in unary:
                if add(g, w, size):
                    return g
        for left in range(1, size - 1):
            right = size - 1 - left
            for (f, v), (g, w) in itertools.product(by_size[left], by_size[right]):
                cands: list[tuple[Formula, np.ndarray]] = [(Since(f, g), _since(v, w))]
                if left <= right:
                    cands += [(And(f, g), v & w), (Or(f, g), v | w)]
                for h, x in cands:
                    if add(h, x, size):
                        return h
    return None


def simplify(formula: Formula, alphabet: tuple[str, ...] | str) -> Formula:
    """An equivalent, more readable formula: double negations dropped, constants folded, and
    over a two-symbol alphabet ``!'a'`` written as the other symbol. Callers verify the
    result with the logic evaluator (as they verify the search's own)."""
    symbols = tuple(alphabet)

    def walk(f: Formula) -> Formula:
        if isinstance(f, Not):
            arg = walk(f.arg)
            if isinstance(arg, Not):
                return arg.arg
            if isinstance(arg, Const):
                return Const(not arg.value)
            if isinstance(arg, Sym) and len(symbols) == 2:
                return Sym(symbols[1 - symbols.index(arg.symbol)])
            return Not(arg)
        if isinstance(f, (And, Or)):
            left, right = walk(f.left), walk(f.right)
            unit = isinstance(f, And)  # true is And's unit, false is Or's
            for a, b in ((left, right), (right, left)):
                if isinstance(a, Const):
                    return b if a.value == unit else a
            return type(f)(left, right)
        if isinstance(f, (Prev, Past)):
            return type(f)(walk(f.arg))
        if isinstance(f, Since):
            return Since(walk(f.left), walk(f.right))
        return f

    return walk(formula)

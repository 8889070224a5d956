"""Exact shrinking of a decompiled past-time formula, step by step, each step decided.

The BDD simplification knows only the facts it has recorded about its atoms; some facts need
the words themselves. A hardened recognizer of ``1*`` decompiles to
``'1' & (!P '0' & (MOD(2, 0)(i) & P ('1' & MOD(2, 1)(i)) | ...))``: at an even position with
no earlier ``0``, position 1 is odd and holds ``1``, so the disjunction is always true there,
and the formula is ``'1' & !P '0'``. No fact about the atoms says so.

For past-time formulas, equivalence at every position of every word is decidable by a finite
automaton (:func:`hardsoft.logic.equivalence.equivalent`). This module tries, greedily and
largest subformula first, to replace a subformula (every occurrence of it) by ``true``,
``false`` or one of its own subformulas; a replacement is kept only when the automaton proves
the new formula equal to the current one. Every kept step is a proof, so the result is exact;
which steps are found is a heuristic (bounded by a state cap and a deadline).
"""

from __future__ import annotations

import time
from dataclasses import fields, replace

from hardsoft.classes import budget
from hardsoft.errors import HardsoftError
from hardsoft.logic.equivalence import equivalent
from hardsoft.logic.syntax import (
    And,
    Const,
    First,
    Formula,
    Node,
    Not,
    Or,
    Past,
    Prev,
    Since,
    children,
    size,
    subnodes,
)

MAX_NODES = 400
"""Formulas larger than this are left as they are (each step is one automaton search)."""
MAX_STATES = 20_000
"""The state cap of each automaton search; a search beyond it keeps the subformula."""
SECONDS = 5.0
"""Shrinking stops after this long (the formula so far is exact)."""


def shrink(formula: Formula, alphabet: tuple[str, ...], seconds: float = SECONDS) -> Formula:
    """A formula equal to past-time ``formula`` at every position of every word, as short as
    the greedy steps find; ``formula`` itself when it is not past-time or too large."""
    if size(formula) > MAX_NODES or not _decidable(formula, alphabet):
        return formula
    deadline = time.perf_counter() + seconds
    current = formula
    tried: set[tuple[Node, Node]] = set()
    progress = True
    while progress and time.perf_counter() < deadline:
        progress = False
        for node in sorted(_formulas(current), key=size, reverse=True):
            for repl in _replacements(node):
                if (node, repl) in tried:
                    continue
                tried.add((node, repl))
                budget.check()
                candidate = _substitute(current, node, repl)
                if _equal(candidate, current, alphabet):
                    current = candidate
                    progress = True
                    break
            if progress or time.perf_counter() >= deadline:
                break
    return current


def _decidable(formula: Formula, alphabet: tuple[str, ...]) -> bool:
    try:
        equivalent(formula, formula, alphabet, max_states=MAX_STATES)
    except HardsoftError:
        return False
    return True


def _equal(f: Formula, g: Formula, alphabet: tuple[str, ...]) -> bool:
    try:
        return equivalent(f, g, alphabet, max_states=MAX_STATES).equal
    except HardsoftError:  # over the state cap: not shown, so not taken
        return False


def _formulas(formula: Formula) -> list[Formula]:
    return [n for n in subnodes(formula) if isinstance(n, Formula) and not isinstance(n, Const)]


def _replacements(node: Formula) -> list[Formula]:
    """``true``, ``false``, the node's children, and for ``φ S ψ`` also ``P ψ`` and ``Y ψ``;
    each shorter than ``node``."""
    options: list[Formula] = [Const(True), Const(False)]
    options += [c for c in children(node) if isinstance(c, Formula)]
    if isinstance(node, Since):
        options += [Past(node.right), Prev(node.right)]
    return [r for r in options if size(r) < size(node)]


def _substitute(formula: Formula, old: Formula, new: Formula) -> Formula:
    """``formula`` with every occurrence of ``old`` replaced by ``new``."""
    memo: dict[Node, Node] = {old: new}
    for node in subnodes(formula):
        if node in memo:
            continue
        changes = {}
        for f in fields(node):  # type: ignore[arg-type]
            value = getattr(node, f.name)
            if isinstance(value, Node) and memo[value] is not value:
                changes[f.name] = memo[value]
        memo[node] = _fold(replace(node, **changes)) if changes else node  # type: ignore[type-var]
    out = memo[formula]
    assert isinstance(out, Formula)
    return out


def _fold(node: Node) -> Node:
    """Constants folded out of ``!``, ``&``, ``|``, ``Y``, ``P`` and ``S`` (``P true`` is
    ``!first``); ``!!φ`` is ``φ``."""
    if isinstance(node, Not) and isinstance(node.arg, Const):
        return Const(not node.arg.value)
    if isinstance(node, Not) and isinstance(node.arg, Not):
        return node.arg.arg
    if isinstance(node, (Prev, Past)) and isinstance(node.arg, Const):
        return Not(First()) if node.arg.value else Const(False)
    if isinstance(node, Since) and node.right == Const(False):
        return Const(False)
    if isinstance(node, (And, Or)):
        absorbing = isinstance(node, Or)  # true absorbs |, false absorbs &
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(side, Const):
                return Const(absorbing) if side.value == absorbing else other
    return node

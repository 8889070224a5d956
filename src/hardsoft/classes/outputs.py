"""An output of a finite class table as a formula, at the size of real models.

An output is true on a set of final classes. The plain way to write it is one BDD, the
disjunction of those classes' predicates, minimised as a whole (:meth:`Predicates.render`).
That is the shortest formula when the BDD is small (compiled models give back their source
formula this way), but on a random 2-layer model over ``abc`` the disjunction of 229 class
predicates mentions 98 atoms, its BDD has 30,000 nodes, and building it, its care set and its
cover takes minutes.

The structure the propagation gives is smaller: a final class is a query class ``c`` of the
last block together with one outcome per head, and the query classes partition the positions.
So an output is ``⋁_c (class_c ∧ g_c)``, with ``g_c`` the disjunction of the head outcomes
that make it true at a query of class ``c``: a function of a few temporal atoms, simplified
where class ``c`` holds. Query classes with the same ``g`` are grouped (their union is
simplified on the layer's domain), and the side with the shorter formula is printed: the
output, or the negation of its complement. Exact, as the monolithic form is; only the shape
of the formula differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hardsoft.classes import budget
from hardsoft.classes.boolean import Function, Predicates
from hardsoft.logic.syntax import And, Const, Formula, Not, Or, size

if TYPE_CHECKING:
    from hardsoft.classes.propagation import ClassTable, LayerClasses

WHOLE_NODES = 400
"""The disjunction of an output's classes is minimised as one BDD while it stays within this
many nodes (and :data:`WHOLE_ATOMS` atoms); beyond, it is written per query class."""
WHOLE_ATOMS = 40


@dataclass(frozen=True)
class Written:
    """An output's formula, its size as first written (temporal atoms as named when
    created), and how it was written: ``"whole"`` or ``"per query class"``."""

    formula: Formula
    size_before: int | None
    """None where the output is large enough that its unions of classes were written in
    pieces: the first form would be a second rendering as costly as the first."""
    method: str


def write_output(table: ClassTable, bits: np.ndarray) -> Written:
    """The formula of the output that is true on the final classes where ``bits`` is."""
    p = table.preds
    p.keep_order()
    final = table.layers[-1]
    chosen = [final.predicates[k] for k in np.flatnonzero(bits)]
    whole = _bounded_or(p, chosen)
    if whole is not None or final.parts is None or len(table.layers) < 2:
        if whole is None:
            whole = _or(p, chosen)
        return Written(p.render(whole), size(p.formula(whole)), "whole")
    return _per_query_class(table, bits)


def _or(p: Predicates, us: list[Function]) -> Function:
    out = p.false
    for u in us:
        out = out | u
    return out


def _bounded_or(p: Predicates, us: list[Function]) -> Function | None:
    """The disjunction of ``us``, or None once it passes the size bounds."""
    out = p.false
    for u in us:
        budget.check()
        out = out | u
        if len(out) > WHOLE_NODES or len(p.bdd.support(out)) > WHOLE_ATOMS:
            return None
    return out


def _per_query_class(table: ClassTable, bits: np.ndarray) -> Written:
    """``⋁ (union of query classes ∧ g)`` over the groups of query classes sharing ``g``;
    the same for the complement, negated, where that is shorter."""
    p = table.preds
    final, before = table.layers[-1], table.layers[-2]
    assert final.parts is not None
    yes: dict[int, Function] = {}
    no: dict[int, Function] = {}
    for k, part in enumerate(final.parts):
        side = yes if bits[k] else no
        budget.check()
        for c, outcome in part:
            side[c] = side.get(c, p.false) | outcome
    sides = [_terms(p, before, mine, other) for mine, other in ((yes, no), (no, yes))]
    large = any(p.in_pieces(u) for terms in sides for u, _ in terms)
    p.refine = not large  # refining the covers of a large output took most of its time
    try:
        return _render_sides(p, sides)
    finally:
        p.refine = True


def _render_sides(p: Predicates, sides: list[list[tuple[Function, Function]]]) -> Written:
    """The shorter of the two sides written out (the second negated)."""
    memo: dict[object, Formula] = {}
    atoms: dict[str, Formula] = {}
    best: Formula | None = None
    first: int | None = None
    pieces_before = p.pieces_written
    for negate, terms in enumerate(sides):
        formula = _or_all(
            [_and(p.render_with(u, memo, atoms), p.render_with(g, memo, atoms)) for u, g in terms]
        )
        if negate:
            formula = Const(True) if formula == Const(False) else Not(formula)
        if best is None or size(formula) < size(best):
            best = formula
            large = p.pieces_written > pieces_before
            first = None if large else _first_size(p, terms) + negate
    assert best is not None
    return Written(best, first, "per query class")


def _first_size(p: Predicates, terms: list[tuple[Function, Function]]) -> int:
    return sum(size(_and(p.formula(u), p.formula(g))) for u, g in terms)


def _terms(
    p: Predicates, before: LayerClasses, mine: dict[int, Function], other: dict[int, Function]
) -> list[tuple[Function, Function]]:
    """(union of query classes, g) per group of query classes whose ``g`` (the outcomes on
    this side, simplified where the query class holds) is the same."""
    groups: dict[Function, list[int]] = {}
    for c in range(len(before)):
        budget.check()
        if c not in mine:
            continue
        ctx: Function = before.predicates[c]
        g: Function = mine[c]
        rest: Function = other[c] if c in other else p.false
        g = p.simplify(g, ctx & (g | rest))
        if p.is_false(ctx & g):
            continue
        groups.setdefault(g, []).append(c)
    return [(before.union(p, members), g) for g, members in groups.items()]


def _and(a: Formula, b: Formula) -> Formula:
    if a == Const(False) or b == Const(False):
        return Const(False)
    if a == Const(True):
        return b
    if b == Const(True):
        return a
    return And(a, b)


def _or_all(parts: list[Formula]) -> Formula:
    parts = [f for f in parts if f != Const(False)]
    if any(f == Const(True) for f in parts):
        return Const(True)
    if not parts:
        return Const(False)
    out = parts[0]
    for f in parts[1:]:
        out = Or(out, f)
    return out

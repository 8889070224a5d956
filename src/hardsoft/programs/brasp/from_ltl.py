"""LTL formulas written as B-RASP: the notation ``hardsoft decompile --as brasp`` prints.

Every temporal operator is one B-RASP attention (Yang, Chiang & Angluin 2024 show that
B-RASP and LTL[Y, X, S, U] define the same languages; these are the translations of that
direction, strict masks throughout):

=========  ==========================================================
``Y φ``    ``rightmost [j<i, 1] φ(j) : 0``
``X φ``    ``leftmost [i<j, 1] φ(j) : 0``
``φ S ψ``  ``rightmost [j<i, ψ(j) | !φ(j)] ψ(j) : 0``
``φ U ψ``  ``leftmost [i<j, ψ(j) | !φ(j)] ψ(j) : 0``
``P φ``    ``rightmost [j<i, φ(j)] 1 : 0`` (``F``: ``leftmost [i<j, ...]``)
``E φ``    ``rightmost [1, φ(j)] 1 : 0``
``first``  ``leftmost [j<i, 1] 0 : 1`` (``last``: ``[i<j, 1]``)
=========  ==========================================================

Boolean structure stays inside the expressions (``ψ(j) | !φ(j)`` is written out over the
atoms it is made of); a Boolean subformula used in more than one place gets its own named
definition, and so does every output. Counting terms, comparisons and ``MOD`` are not B-RASP
(its languages are the star-free ones): they are refused naming the output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.logic import syntax as L
from hardsoft.logic.structure import children, operator, subnodes
from hardsoft.programs.brasp.parser import parse_program
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
    declaration_name,
    statement_text,
)

_TEMPORAL = (L.Prev, L.Next, L.Since, L.Until, L.Past, L.Future, L.Somewhere, L.First, L.Last)
_BOOLEAN = (L.Not, L.And, L.Or, L.Implies)
_NAMES = {
    L.Prev: "prev",
    L.Next: "next",
    L.Since: "since",
    L.Until: "until",
    L.Past: "past",
    L.Future: "future",
    L.Somewhere: "some",
    L.First: "first",
    L.Last: "last",
}


def _name(text: str) -> str:
    """A B-RASP statement name from an output name (letters, digits, ``_``, ``?``)."""
    name = re.sub(r"[^A-Za-z0-9_?]", "_", text) or "out"
    return name if re.match(r"[A-Za-z_]", name) else "o_" + name


class _Writer:
    """Names the shared and temporal subformulas and writes their statements."""

    def __init__(self, alphabet: Sequence[str]) -> None:
        self.alphabet = list(alphabet)
        self.names: dict[L.Formula, str] = {}
        self.used = {declaration_name(a) for a in alphabet}
        self.statements: list[Statement] = [Declare(declaration_name(a), 0, a) for a in alphabet]

    def fresh(self, base: str) -> str:
        k = 1
        while f"{base}{k}" in self.used:
            k += 1
        self.used.add(f"{base}{k}")
        return f"{base}{k}"

    def expr(self, f: L.Formula, var: Var) -> Expr:
        """``f`` as an expression at ``var``: named subformulas are atoms."""
        if f in self.names:
            return Atom(self.names[f], var)
        if isinstance(f, L.Sym):
            return Atom(declaration_name(f.symbol), var)
        if isinstance(f, L.Const):
            return Const(f.value)
        if isinstance(f, L.Not):
            return Not(self.expr(f.arg, var))
        if isinstance(f, L.And):
            return And(self.expr(f.left, var), self.expr(f.right, var))
        if isinstance(f, L.Or):
            return Or(self.expr(f.left, var), self.expr(f.right, var))
        if isinstance(f, L.Implies):
            return Or(Not(self.expr(f.left, var)), self.expr(f.right, var))
        raise AssertionError(f"{type(f).__name__} should have been named")  # pragma: no cover

    def attention(self, f: L.Formula) -> tuple[Tie, BMask, Expr, Expr, Expr]:
        """The attention (tie, mask, score, value, default) of a temporal operator."""
        j = Var.J
        zero, one = Const(False), Const(True)
        if isinstance(f, (L.Prev, L.Next)):
            before = isinstance(f, L.Prev)
            return (
                Tie.RIGHTMOST if before else Tie.LEFTMOST,
                BMask.BEFORE if before else BMask.AFTER,
                one,
                self.expr(f.arg, j),
                zero,
            )
        if isinstance(f, (L.Since, L.Until)):
            before = isinstance(f, L.Since)
            psi = self.expr(f.right, j)
            return (
                Tie.RIGHTMOST if before else Tie.LEFTMOST,
                BMask.BEFORE if before else BMask.AFTER,
                Or(psi, Not(self.expr(f.left, j))),
                psi,
                zero,
            )
        if isinstance(f, (L.Past, L.Future)):
            before = isinstance(f, L.Past)
            return (
                Tie.RIGHTMOST if before else Tie.LEFTMOST,
                BMask.BEFORE if before else BMask.AFTER,
                self.expr(f.arg, j),
                one,
                zero,
            )
        if isinstance(f, L.Somewhere):
            return Tie.RIGHTMOST, BMask.ALL, self.expr(f.arg, j), one, zero
        assert isinstance(f, (L.First, L.Last))
        before = isinstance(f, L.First)
        mask = BMask.BEFORE if before else BMask.AFTER
        return Tie.LEFTMOST, mask, one, zero, one

    def define(self, f: L.Formula, name: str) -> None:
        """Add the statement that defines ``f`` as ``name``."""
        if isinstance(f, _TEMPORAL):
            tie, mask, score, value, default = self.attention(f)
            self.statements.append(Attend(name, 0, tie, mask, score, value, default))
        else:
            self.statements.append(Define(name, 0, self.expr(f, Var.I)))
        self.names[f] = name


def _check(name: str, f: L.Formula) -> None:
    for sub in subnodes(f):
        if isinstance(sub, L.Formula) and not isinstance(
            sub, (*_TEMPORAL, *_BOOLEAN, L.Sym, L.Const)
        ):
            raise HardsoftError(
                f"output {name!r} uses {operator(sub)!r}, which B-RASP cannot express (it has "
                "no counting or position arithmetic: its languages are the star-free ones)"
            )


def ltl_to_brasp(outputs: Sequence[tuple[str, L.Formula]], alphabet: Sequence[str]) -> Program:
    """A B-RASP program whose statements include one per output (``(name, formula)``), the
    first output last (the program's value); see the module docstring."""
    if not outputs:
        raise HardsoftError("no outputs to write as B-RASP")
    for name, f in outputs:
        _check(name, f)
    w = _Writer(alphabet)
    roots = [f for _, f in outputs]
    parents: dict[L.Formula, set[L.Formula]] = {}
    order: list[L.Formula] = []
    for root in roots:
        for sub in subnodes(root):
            if not isinstance(sub, L.Formula):
                continue  # no terms: _check refused counting
            if sub not in parents:
                parents[sub] = set()
                order.append(sub)
            for child in children(sub):
                if isinstance(child, L.Formula):
                    parents.setdefault(child, set()).add(sub)
    shared = {f for f, ps in parents.items() if len(ps) > 1 or (ps and f in roots)}
    for f in order:
        if isinstance(f, (L.Sym, L.Const)) or (f in roots and not parents[f]):
            continue  # atoms are inlined; an output used nowhere else is named last
        if isinstance(f, _TEMPORAL):
            w.define(f, w.fresh(_NAMES[type(f)]))
        elif f in shared:
            w.define(f, w.fresh("b"))
    reordered = [*outputs[1:], outputs[0]]
    for name, f in reordered:
        out = _name(name)
        if out in w.used:
            out = w.fresh(out + "_")
        w.used.add(out)
        if f in w.names:  # a named subformula (or another output): refer to it
            w.statements.append(Define(out, 0, Atom(w.names[f], Var.I)))
        else:
            w.define(f, out)
    text = "".join(statement_text(s) + "\n" for s in w.statements)
    return parse_program(text, tuple(alphabet))


def decompiled_program(outputs: Sequence[Any], alphabet: Sequence[str]) -> str:
    """The B-RASP text of a decompile result's outputs (objects with ``name`` and
    ``formula``)."""
    return ltl_to_brasp([(o.name, o.formula) for o in outputs], alphabet).text()

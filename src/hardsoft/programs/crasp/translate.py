"""C-RASP → LTL[C,+]: one past-only formula per Boolean statement, for the logic compiler.

C-RASP's ``# b`` counts the positions j ≤ i where ``b`` holds; so does the logic's
``#<[φ]`` (docs/logic.md: ``|{ j ≤ i : φ at j }|``, position i included), so ``# b`` is
``#<[b]``. The rest is desugared exactly:

* a count expression becomes a list of **cases** ``(guard, linear term)``: the guards are
  formulas that partition the positions and the term is the expression's value where its guard
  holds. ``min(a, b)`` is ``a`` where ``a <= b`` and ``b`` elsewhere, ``max`` alike,
  ``c1 if b else c2`` is ``c1`` where ``b`` holds and ``c2`` elsewhere; ``+ -`` and ``K *``
  combine the cases of their operands;
* a comparison of two counts is the disjunction, over pairs of cases, of both guards and the
  comparison of the terms; comparisons of constants are folded to ``true``/``false``;
* a guarded count ``#[ψ] b`` is a sum of indicators ``[Y^d b]``, one per offset d of ψ
  (``pred``: d = 1, ``predK``: d = K, ``prevK``: d = 1..K). A comparison with at most
  :data:`SPLIT_MAX` indicators is split on their values (so ``#[pred] "a" >= 1`` becomes
  ``Y 'a'``); with more, each indicator is the count difference ``#<[φ] − #<[Y φ]``;
* unary predicates are ``MOD`` of the position: C-RASP's 0-based ``i mod M = R`` is the
  logic's 1-based ``MOD(M, (R + 1) mod M)(i)``;
* ``# true`` is the position ``i``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from hardsoft.errors import HardsoftError
from hardsoft.logic import syntax as L
from hardsoft.programs.crasp.checker import Checked
from hardsoft.programs.crasp.predicates import BinaryPredicate, UnaryPredicate
from hardsoft.programs.crasp.syntax import (
    Arith,
    BoolLit,
    Compare,
    Count,
    Expr,
    Extreme,
    IfElse,
    Int,
    Logic,
    Not,
    Scale,
    Statement,
    Sym,
    Type,
    Var,
)

__all__ = ["MAX_CASES", "SPLIT_MAX", "translate"]

MAX_CASES = 256
"""Most cases one count expression may desugar into (nested min/max/if-else multiply)."""
SPLIT_MAX = 3
"""Most indicators a comparison is split on (2^k branches) before using count differences."""

TRUE: L.Formula = L.Const(True)
FALSE: L.Formula = L.Const(False)
_LOGIC_OP = {"==": "=", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}

Key = tuple[str, L.Formula]
"""A term atom: ``("count", φ)`` is ``#<[φ]``, ``("ind", φ)`` is 1 where φ holds, else 0."""
Lin = tuple[dict[Key, int], int]
Case = tuple[L.Formula, Lin]


# ------------------------------------------------------------------ Boolean smart constructors


def not_(a: L.Formula) -> L.Formula:
    if isinstance(a, L.Const):
        return L.Const(not a.value)
    if isinstance(a, L.Not):
        return a.arg
    return L.Not(a)


def and_(a: L.Formula, b: L.Formula) -> L.Formula:
    if a == FALSE or b == FALSE:
        return FALSE
    if a == TRUE:
        return b
    if b == TRUE or a == b:
        return a
    return L.And(a, b)


def or_(a: L.Formula, b: L.Formula) -> L.Formula:
    if a == TRUE or b == TRUE:
        return TRUE
    if a == FALSE:
        return b
    if b == FALSE or a == b:
        return a
    return L.Or(a, b)


def any_of(parts: Iterable[L.Formula]) -> L.Formula:
    out = FALSE
    for p in parts:
        out = or_(out, p)
    return out


def prev(f: L.Formula, d: int) -> L.Formula:
    for _ in range(d):
        f = L.Prev(f)
    return f


def _shifts(f: L.Formula, offsets: tuple[int, ...]) -> list[L.Formula]:
    """``Y^d f`` for every d of ``offsets`` (in increasing order), sharing one chain of
    ``Y``: O(max d) nodes, where building each alone took O(Σ d) (``prev10000``: 5·10^7
    nodes, 3.3 GB)."""
    out, f_d, d = [], f, 0
    for target in sorted(offsets):
        while d < target:
            f_d, d = L.Prev(f_d), d + 1
        out.append(f_d)
    return out


# ------------------------------------------------------------------ linear terms


def _add(a: Lin, b: Lin, sign: int = 1) -> Lin:
    coef = dict(a[0])
    for k, c in b[0].items():
        coef[k] = coef.get(k, 0) + sign * c
        if coef[k] == 0:
            del coef[k]
    return coef, a[1] + sign * b[1]


def _scale(a: Lin, k: int) -> Lin:
    if k == 0:
        return {}, 0
    return {key: k * c for key, c in a[0].items()}, k * a[1]


def _atom(key: Key) -> L.Term:
    kind, f = key
    assert kind == "count"
    return L.Position() if f == TRUE else L.CountPast(f)


def _side(parts: list[tuple[Key, int]], const: int) -> L.Term:
    term: L.Term | None = None
    for key, c in parts:
        t = _atom(key) if c == 1 else L.Scale(c, _atom(key))
        term = t if term is None else L.Add(term, t)
    if const or term is None:
        k = L.IntConst(const)
        term = k if term is None else L.Add(term, k)
    return term


def _compare_counts(lin: Lin, op: str) -> L.Formula:
    """``lin op 0`` for a term of counts only, written with positive coefficients on both
    sides (``#<['('] < #<[')']``, not ``#<['('] - #<[')'] < 0``); constants fold."""
    coef, const = lin
    if not coef:
        return L.Const(_fold(const, op))
    order = sorted(coef, key=lambda k: L.to_text(k[1]))
    left = [(k, coef[k]) for k in order if coef[k] > 0]
    right = [(k, -coef[k]) for k in order if coef[k] < 0]
    return L.Compare(_LOGIC_OP[op], _side(left, max(const, 0)), _side(right, max(-const, 0)))


def _fold(value: int, op: str) -> bool:
    return {
        "==": value == 0,
        "!=": value != 0,
        "<": value < 0,
        ">": value > 0,
        "<=": value <= 0,
        ">=": value >= 0,
    }[op]


def compare_lin(lin: Lin, op: str) -> L.Formula:
    """``lin op 0``: split on at most :data:`SPLIT_MAX` indicators, else rewrite them as
    count differences."""
    coef, const = lin
    inds = [k for k in coef if k[0] == "ind"]
    rest = {k: c for k, c in coef.items() if k[0] != "ind"}
    if len(inds) > SPLIT_MAX:
        counts: Lin = (rest, const)
        for k in inds:
            f = k[1]
            diff: Lin = ({("count", f): 1, ("count", L.Prev(f)): -1}, 0)
            counts = _add(counts, _scale(diff, coef[k]))
        return _compare_counts(counts, op)
    out = FALSE
    for bits in itertools.product((True, False), repeat=len(inds)):
        guard = TRUE
        extra = 0
        for k, on in zip(inds, bits):
            guard = and_(guard, k[1] if on else not_(k[1]))
            extra += coef[k] if on else 0
        out = or_(out, and_(guard, _compare_counts((rest, const + extra), op)))
    return out


# ------------------------------------------------------------------ the translation


class _Translator:
    def __init__(self, program: Checked) -> None:
        self.program = program
        self.formulas: dict[str, L.Formula] = {}
        self.counts: dict[str, list[Case]] = {}
        self.stmt: Statement | None = None

    def fail(self, message: str) -> HardsoftError:
        assert self.stmt is not None
        return HardsoftError(f"statement {self.stmt.name} (line {self.stmt.line}): {message}")

    def boolean(self, e: Expr) -> L.Formula:
        if isinstance(e, Sym):
            return L.Sym(e.symbol)
        if isinstance(e, BoolLit):
            return L.Const(e.value)
        if isinstance(e, Var):
            if e.name in self.formulas:
                return self.formulas[e.name]
            pred = self.program.predicates[e.name]
            assert isinstance(pred, UnaryPredicate)
            return L.Mod(pred.modulus, (pred.residue + 1) % pred.modulus, L.Position())
        if isinstance(e, Not):
            return not_(self.boolean(e.operand))
        if isinstance(e, Logic):
            a, b = self.boolean(e.left), self.boolean(e.right)
            return and_(a, b) if e.op == "&&" else or_(a, b)
        if isinstance(e, Compare):
            return any_of(
                and_(and_(ga, gb), compare_lin(_add(la, lb, -1), e.op))
                for (ga, la), (gb, lb) in itertools.product(self.cases(e.left), self.cases(e.right))
            )
        raise TypeError(f"not a Boolean expression: {e!r}")

    def cases(self, e: Expr) -> list[Case]:
        out = self._cases(e)
        out = [(g, lin) for g, lin in out if g != FALSE]
        if len(out) > MAX_CASES:
            raise self.fail(
                f"its min/max/if-else desugar into {len(out)} cases (more than {MAX_CASES}); "
                "write fewer nested min, max and if-else"
            )
        return out

    def _cases(self, e: Expr) -> list[Case]:
        if isinstance(e, Int):
            return [(TRUE, ({}, e.value))]
        if isinstance(e, Var):
            return self.counts[e.name]
        if isinstance(e, Count):
            b = self.boolean(e.operand)
            if e.guard is None:
                return [(TRUE, ({("count", b): 1}, 0))]
            pred = self.program.predicates[e.guard]
            assert isinstance(pred, BinaryPredicate)
            return [(TRUE, ({("ind", f): 1 for f in _shifts(b, pred.offsets)}, 0))]
        if isinstance(e, Arith):
            sign = 1 if e.op == "+" else -1
            return [
                (and_(ga, gb), _add(la, lb, sign))
                for (ga, la), (gb, lb) in itertools.product(self.cases(e.left), self.cases(e.right))
            ]
        if isinstance(e, Scale):
            return [(g, _scale(lin, e.factor)) for g, lin in self.cases(e.operand)]
        if isinstance(e, Extreme):
            out = []
            for (ga, la), (gb, lb) in itertools.product(self.cases(e.left), self.cases(e.right)):
                a_first = compare_lin(_add(la, lb, -1), "<=" if e.op == "min" else ">=")
                both = and_(ga, gb)
                out.append((and_(both, a_first), la))
                out.append((and_(both, not_(a_first)), lb))
            return out
        if isinstance(e, IfElse):
            cond = self.boolean(e.cond)
            return [(and_(g, cond), lin) for g, lin in self.cases(e.then)] + [
                (and_(g, not_(cond)), lin) for g, lin in self.cases(e.other)
            ]
        raise TypeError(f"not a count expression: {e!r}")

    def statement(self, s: Statement) -> None:
        self.stmt = s
        if self.program.types[s.name] is Type.BOOL:
            self.formulas[s.name] = self.boolean(s.expr)
        else:
            self.counts[s.name] = self.cases(s.expr)


def translate(program: Checked) -> dict[str, L.Formula]:
    """The past-only LTL[C,+] formula of every Boolean statement (count statements are
    inlined where they are used), in program order."""
    t = _Translator(program)
    for s in program.statements:
        t.statement(s)
    return t.formulas

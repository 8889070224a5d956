"""Linear count comparisons as BDD atoms, for decompiling counting models.

:class:`Vars` names the counts and inverses that symbolic values (:mod:`.algebra`) use and
turns a sign condition ``P > 0`` (``>=``, ``=``) on such a value into a predicate: the positive
denominators are multiplied out (:func:`~.algebra.positive_multiplier`), the result must be an
integer linear form ``Σ a_v v + c`` over ``i``, ``n`` and counts (else the model is refused),
and it becomes one canonical atom ``L >= k`` (``L`` primitive, first coefficient positive) of
the logic's syntax, e.g. ``#<['1'] > #<['0']``. A small linear program over the facts every
word satisfies (``1 <= i <= n``, ``0 <= #<[φ] <= i``, ``0 <= #>[φ] <= n - i + 1``, and the
implications and disjointness of the counted predicates) decides atoms that are constant, at
every position or at the query's known position (``first``: i = 1, ``last``: i = n).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce
from itertools import product
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from hardsoft.classes.algebra import Poly, integer_linear, positive_multiplier
from hardsoft.classes.boolean import Function, Predicates
from hardsoft.classes.integer import Decider, IntegerProgram, linear_range
from hardsoft.errors import HardsoftError
from hardsoft.logic.linear import comparison as linear_comparison
from hardsoft.logic.linear import linear_term
from hardsoft.logic.syntax import (
    CountFuture,
    CountPast,
    First,
    Formula,
    Last,
    Length,
    Mod,
    Position,
    Term,
)

PRE, SUF = "pre", "suf"
Literal = tuple[str, tuple[tuple[str, int], ...], Any]
"""An atom as integer data: ``("geq", L, k)`` or ``("mod", L, (m, r))``."""
NUMERIC_LIMIT = 2**24
"""Linear and integer programs are trusted only on atoms whose integer coefficients are at most
this large (the solvers work in floating point with tolerances near 1e-9); larger atoms are
neither folded nor related (weights that are not short binary fractions give such atoms)."""


@dataclass(frozen=True)
class CountVar:
    """``#<[φ]`` (``pre``: positions j <= i) or ``#>[φ]`` (``suf``: j >= i)."""

    kind: str
    pred: Function
    formula: Formula

    def term(self) -> Term:
        return CountPast(self.formula) if self.kind == PRE else CountFuture(self.formula)


@dataclass(frozen=True)
class Where:
    """What is known of the query position: whether i = 1 (``first``) and whether i = n
    (``last``); None where unknown."""

    first: bool | None = None
    last: bool | None = None

    @staticmethod
    def of(preds: Predicates, pred: Function) -> Where:
        """What ``pred`` implies about ``first`` and ``last``."""

        def known(atom: Formula) -> bool | None:
            u = preds.atom(atom)
            if preds.implies(pred, u):
                return True
            return False if preds.implies(pred, ~u) else None

        return Where(known(First()), known(Last()))


class Vars:
    """The counts and inverses of one decompilation, and the comparison atoms over them."""

    def __init__(self, preds: Predicates) -> None:
        self.preds = preds
        self.counts: dict[str, CountVar] = {}
        self._count_names: dict[tuple[str, Function], str] = {}
        self.bases: dict[str, Poly] = {}
        self._base_names: dict[tuple, str] = {}
        self._thresholds: dict[tuple, list[int]] = {}
        self._decided: dict[tuple, tuple[float | None, float | None]] = {}
        self._residues: dict[tuple, dict[int, Formula]] = {}
        self.decider = Decider(solve_milp)
        """Exact integer feasibility with a memo (:mod:`.integer`)."""
        self.linear: dict[Formula, Literal] = {}
        """Each comparison atom ``L >= k`` as ``("geq", L, k)`` and each ``MOD(m, r)(L)`` as
        ``("mod", L, (m, r))`` (``L``: integer coefficients of variables)."""

    # ------------------------------------------------------------------ variables
    def count(self, kind: str, pred: Function) -> Poly:
        """The count of positions satisfying ``pred`` in the prefix (``pre``) or suffix."""
        p = self.preds
        if p.is_false(pred):
            return Poly()
        if p.is_false(~pred):
            return Poly.var("i") if kind == PRE else window_size_suffix()
        edge = First() if kind == PRE else Last()
        if p.equal(pred, p.atom(edge)):
            return Poly.const(1)
        key = (kind, pred)
        name = self._count_names.get(key)
        if name is None:
            name = f"c{len(self.counts)}"
            self._count_names[key] = name
            self.counts[name] = CountVar(kind, pred, p.render(pred))
        return Poly.var(name)

    def inverse(self, base: Poly) -> Poly:
        """``1 / base`` for a ``base`` positive wherever the result is used."""
        if base.is_const():
            return Poly.const(1 / base.value())
        single = base.single()
        if single is not None and single[1] == 1 and len(single[0]) == 1 and single[0][0][1] == 1:
            return Poly.var(single[0][0][0], -1)
        key = base.key()
        name = self._base_names.get(key)
        if name is None:
            name = f"v{len(self.bases)}"
            self._base_names[key] = name
            self.bases[name] = base
        return Poly.var(name)

    def expand_inverses(self, poly: Poly) -> Poly:
        """``poly`` with every negative power of an inverse ``v = 1/L`` written as ``L^k``
        (``(n - i + 1)·v`` has ``v^-1`` factors after a division by ``v``)."""
        out = Poly()
        for m, c in poly.terms.items():
            term = Poly.const(c)
            for var, e in m:
                if var in self.bases and e < 0:
                    term = term * self.bases[var].power(-e)
                else:
                    term = term * Poly.var(var, e)
            out = out + term
        return out

    def term(self, var: str) -> Term:
        if var == "i":
            return Position()
        if var == "n":
            return Length()
        return self.counts[var].term()

    # ------------------------------------------------------------------ comparisons
    def linear_form(self, poly: Poly, where: Where, site: str = "") -> tuple[Any, int] | Fraction:
        """``poly`` times a positive factor, as an integer linear form ``(coefs, c)`` meaning
        ``Σ a_v v + c`` (with ``i = 1`` / ``i = n`` substituted where ``where`` knows them),
        or its constant value; a one-line HardsoftError if it is not linear."""
        if poly.is_const():
            return poly.value()
        poly = positive_multiplier(poly, self.bases)
        if where.first:  # i = 1 (and n = 1 if also last)
            poly = poly.rename("i", None)
            poly = poly.rename("n", None) if where.last else poly
        elif where.last:  # i = n
            poly = poly.rename("i", "n")
        if poly.is_const():
            return poly.value()
        lin = integer_linear(positive_multiplier(poly, self.bases))
        if lin is None:
            text = repr(poly)
            raise HardsoftError(
                f"{site + ': ' if site else ''}a comparison that is not linear in the counts "
                f"({text if len(text) < 80 else text[:77] + '...'} > 0): only linear "
                "comparisons of counts are decompiled"
            )
        return lin if lin[0] else Fraction(lin[1])

    def can_equal(self, poly: Poly, where: Where) -> bool | None:
        """Whether ``poly = 0`` at some integer point allowed by ``where`` (None: the numbers
        are too large to ask the solver)."""
        form = self.linear_form(poly, where)
        if isinstance(form, Fraction):
            return form == 0
        coefs, c = form
        if not small_enough(coefs, c):
            return None
        return self.feasible([(("geq", coefs, -c), True), (("geq", coefs, -c + 1), False)], where)

    def compare(self, poly: Poly, op: str, where: Where = Where(), site: str = "") -> Function:
        """The predicate ``poly op 0`` (op ``>``, ``>=`` or ``=``), valid under ``where``;
        ``site`` names the model part in a refusal."""
        form = self.linear_form(poly, where, site)
        if isinstance(form, Fraction):
            holds = form > 0 if op == ">" else form >= 0 if op == ">=" else form == 0
            return self.preds.true if holds else self.preds.false
        coefs, c = form
        if op == ">":
            return self.geq(coefs, -c + 1, where)
        if op == ">=":
            return self.geq(coefs, -c, where)
        return self.geq(coefs, -c, where) & ~self.geq(coefs, -c + 1, where)

    def geq(self, coefs: tuple[tuple[str, int], ...], k: int, where: Where) -> Function:
        """The predicate ``Σ a_v v >= k`` for integers ``a_v`` (not all 0) and ``k``."""
        g = math.gcd(*(a for _, a in coefs))
        coefs = tuple((v, a // g) for v, a in coefs)
        k = -((-k) // g)  # ceil(k / g)
        if coefs[0][1] < 0:
            return ~self.geq(tuple((v, -a) for v, a in coefs), -k + 1, where)
        decided = self.decide(coefs, k, where)
        if decided is not None:
            return self.preds.true if decided else self.preds.false
        if coefs == (("i", 1),) and k == 2:  # i >= 2
            return ~self.preds.atom(First())
        if coefs == (("i", 1), ("n", -1)) and k == 0:  # i >= n
            return self.preds.atom(Last())
        if coefs == (("n", 1),) and k == 2:  # n >= 2
            return ~(self.preds.atom(First()) & self.preds.atom(Last()))
        return self._atom(coefs, k)

    def _atom(self, coefs: tuple[tuple[str, int], ...], k: int) -> Function:
        p = self.preds
        formula = comparison(coefs, k, self.term)
        known = formula in p.var_of
        u = p.atom(formula)
        if all(v == "n" for v, _ in coefs):
            p.mark_global(formula)
        if not known:
            self.linear[formula] = ("geq", coefs, k)
            others = self._thresholds.setdefault(coefs, [])
            for k2 in others:
                u2 = p.atom(comparison(coefs, k2, self.term))
                p.assume(~u | u2 if k > k2 else ~u2 | u)
            others.append(k)
        return u

    def mod(self, m: int, r: int, pos: Poly) -> Function:
        """The predicate ``pos mod m = r`` for an integer linear ``pos``."""
        if pos.is_const():
            return self.preds.true if int(pos.value()) % m == r else self.preds.false
        lin = integer_linear(pos)
        assert lin is not None and all(c.denominator == 1 for c in pos.terms.values())
        coefs, c = lin
        coefs = tuple((v, a % m) for v, a in coefs if a % m)
        r = (r - c) % m
        if not coefs:
            return self.preds.true if r == 0 else self.preds.false
        formula = Mod(m, r, linear_term([(self.term(v), a) for v, a in coefs], 0))
        known = formula in self.preds.var_of
        u = self.preds.atom(formula)
        if all(v == "n" for v, _ in coefs):
            self.preds.mark_global(formula)
        if not known:
            self.linear[formula] = ("mod", coefs, (m, r))
            family = self._residues.setdefault((coefs, m), {})
            for other in family.values():  # one residue at a time
                self.preds.assume(~u | ~self.preds.atom(other))
            family[r] = formula
            self._position_facts(coefs, m, r, u)
            if len(family) == m:
                self.preds.assume(
                    reduce(lambda a, f: a | self.preds.atom(f), family.values(), self.preds.false)
                )
        return u

    def _position_facts(
        self, coefs: tuple[tuple[str, int], ...], m: int, r: int, u: Function
    ) -> None:
        """``MOD(m, r)(n)`` is ``MOD(m, r)(i)`` at the last position, and true iff r = 1 mod m
        when n = 1."""
        p = self.preds
        if coefs != (("n", 1),):
            return
        first, last = p.atom(First()), p.atom(Last())
        p.assume(~(first & last) | (u if r == 1 % m else ~u))
        at_i = Mod(m, r, Position())
        if at_i in p.var_of:
            v = p.atom(at_i)
            p.assume(~last | (u & v) | (~u & ~v))

    # ------------------------------------------------------------------ bounds
    def decide(self, coefs: tuple[tuple[str, int], ...], k: int, where: Where) -> bool | None:
        """True/False if ``Σ a_v v >= k`` holds at every/no position allowed by ``where``
        (by the linear program of the module docstring), else None."""
        if not small_enough(coefs, k):
            return None
        key = (coefs, where)
        if key not in self._decided:
            self._decided[key] = self._range(coefs, where)
        low, high = self._decided[key]
        if low is not None and math.ceil(low - 1e-7) >= k:
            return True
        if high is not None and math.floor(high + 1e-7) < k:
            return False
        return None

    def _range(
        self, coefs: tuple[tuple[str, int], ...], where: Where
    ) -> tuple[float | None, float | None]:
        """The least and greatest value of ``Σ a_v v`` over the polytope's real points:
        exactly by :func:`~.integer.linear_range`, by HiGHS where that gives up."""
        names = _names(coefs)
        prog = self.program([], where, names)
        objective = _ints(_row(names, dict(coefs)))
        exact = linear_range(prog, objective)
        if exact is not None:
            low, high = exact
            return (None if low is None else float(low), None if high is None else float(high))
        a_ub, b_ub, bounds = self._polytope(names, where)
        with quiet_solver():
            lo = linprog(objective, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
            hi = linprog(-np.array(objective), A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
        return (
            float(lo.fun) if lo.status == 0 else None,
            float(-hi.fun) if hi.status == 0 else None,
        )

    def _polytope(
        self, names: list[str], where: Where
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float | None]]]:
        """``A x <= b`` and bounds over ``names`` (``i``, ``n``, then counts) that every
        position allowed by ``where`` satisfies."""
        rows: list[np.ndarray] = []
        rhs: list[float] = []

        def le(terms: dict[str, float], b: float) -> None:
            rows.append(_row(names, terms))
            rhs.append(b)

        le({"i": 1.0, "n": -1.0}, 0.0 if where.last is not False else -1.0)  # i <= n (i < n)
        if where.last:
            le({"n": 1.0, "i": -1.0}, 0.0)
        cvars = names[2:]
        for v in cvars:
            if self.counts[v].kind == PRE:
                le({v: 1.0, "i": -1.0}, 0.0)
            else:
                le({v: 1.0, "i": 1.0, "n": -1.0}, 1.0)
        self._relations(cvars, le)
        first = (1.0, 1.0) if where.first else (2.0, None) if where.first is False else (1.0, None)
        bounds: list[tuple[float, float | None]] = [first]
        bounds += [(1.0, None)] + [(0.0, None)] * len(cvars)
        return np.stack(rows), np.array(rhs), bounds

    def _relations(self, cvars: list[str], le: Callable[[dict[str, float], float], None]) -> None:
        """Implications and disjointness between counted predicates of one direction."""
        p = self.preds
        for x, a in enumerate(cvars):
            for b in cvars[x + 1 :]:
                ca, cb = self.counts[a], self.counts[b]
                if ca.kind != cb.kind:
                    continue
                w = {"i": 1.0} if ca.kind == PRE else {"n": 1.0, "i": -1.0}
                wc = 0.0 if ca.kind == PRE else 1.0
                if p.implies(ca.pred, cb.pred):
                    le({a: 1.0, b: -1.0}, 0.0)
                elif p.implies(cb.pred, ca.pred):
                    le({b: 1.0, a: -1.0}, 0.0)
                if p.is_false(ca.pred & cb.pred):
                    le({a: 1.0, b: 1.0, **{v: -c for v, c in w.items()}}, wc)
                if p.is_false(~ca.pred & ~cb.pred):
                    le({a: -1.0, b: -1.0, **w}, -wc)

    def literal_of(self, u: Function) -> tuple[Literal, bool] | None:
        """``(literal, value)`` if ``u`` is one comparison or MOD atom or its negation."""
        support = self.preds.bdd.support(u)
        if len(support) != 1:
            return None
        (var,) = support
        atom = self.preds.atom_of[var]
        if atom not in self.linear:
            return None
        return self.linear[atom], u == self.preds.bdd.var(var)

    def feasible(self, literals: list[tuple[Literal, bool]], where: Where) -> bool:
        """Whether some integer point of the polytope may satisfy every literal (see
        :meth:`_feasible`; True where the numbers are too large to trust the solver)."""
        trusted = all(
            small_enough(coefs, k if kind == "geq" else 0) for (kind, coefs, k), _ in literals
        )
        return self._feasible(literals, where) if literals and trusted else True

    def _feasible(self, literals: list[tuple[Literal, bool]], where: Where) -> bool:
        """Whether some integer point of the polytope satisfies every literal (``L >= k`` or
        ``L mod m = r``, true or false), decided exactly by :mod:`.integer` (a memo, small
        witnesses and Fourier–Motzkin refutations first, HiGHS for the rest)."""
        return self.decider(self.program(literals, where))

    def program(
        self, literals: list[tuple[Literal, bool]], where: Where, names: list[str] | None = None
    ) -> IntegerProgram:
        """The polytope under ``where`` and ``literals`` as integer data (over ``names``:
        ``i``, ``n`` and the counts; by default those of the literals)."""
        if names is None:
            names = _names(tuple(kv for (_, coefs, _), _ in literals for kv in coefs))
        a_ub, b_ub, bounds = self._polytope(names, where)
        rows = [(_ints(r), int(b)) for r, b in zip(a_ub, b_ub)]
        mods = []
        for (kind, coefs, k), value in literals:
            row = _ints(_row(names, dict(coefs)))
            if kind == "geq":  # L >= k is -L <= -k; its negation L <= k - 1
                rows.append((tuple(-a for a in row), -k) if value else (row, k - 1))
            else:
                mods.append((row, k[0], k[1], value))
        return IntegerProgram(
            tuple(rows),
            tuple(int(lo) for lo, _ in bounds),
            tuple(None if hi is None else int(hi) for _, hi in bounds),
            tuple(mods),
        )


MILP_SECONDS = 2.0
MILP_NODES = 20_000
"""HiGHS's limits per program. Reaching one counts as feasible (the combination is kept: the
formula stays exact, only less folded). Without them one feasible program with large
coefficients kept HiGHS busy for minutes, where ``--budget`` cannot interrupt it."""


def solve_milp(prog: IntegerProgram) -> bool:
    """``prog`` decided by HiGHS (``scipy.optimize.milp``): one quotient variable per MOD
    literal, one program per residue a false MOD literal allows."""
    mods = prog.mods
    width = prog.width + len(mods)
    lower = np.array([lo for lo in prog.lower] + [-np.inf] * len(mods), dtype=float)
    upper = np.array([np.inf if hi is None else hi for hi in prog.upper] + [np.inf] * len(mods))
    a_ub = np.array([list(a) + [0] * len(mods) for a, _ in prog.rows], dtype=float)
    b_ub = np.array([b for _, b in prog.rows], dtype=float)
    eq_rows = np.zeros((len(mods), width))
    alternatives: list[list[int]] = []
    for q, (a, m, r, holds) in enumerate(mods):
        eq_rows[q, : prog.width] = a
        eq_rows[q, prog.width + q] = -m  # L - m·q is the remainder
        alternatives.append([r] if holds else [x for x in range(m) if x != r])
    for choice in product(*alternatives):
        constraints = [LinearConstraint(a_ub, -np.inf, b_ub)]
        if mods:
            e = np.array(choice, dtype=float)
            constraints.append(LinearConstraint(eq_rows, e, e))
        with quiet_solver():
            res = milp(
                np.zeros(width),
                constraints=constraints,
                integrality=np.ones(width),
                bounds=Bounds(lower, upper),
                options={"disp": False, "time_limit": MILP_SECONDS, "node_limit": MILP_NODES},
            )
        if res.status != 2:  # 2: infeasible (limits reached count as feasible)
            return True
    return False


def _ints(row: np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in row)


@contextmanager
def quiet_solver() -> Iterator[None]:
    """Silence HiGHS, which can print from C++ straight to the process's stdout
    (``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();``) whatever
    its display option: file descriptor 1 points at /dev/null during the call."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real stdout (captured): nothing leaks
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def small_enough(coefs: tuple[tuple[str, int], ...], k: int) -> bool:
    """Whether the solvers may be trusted on ``Σ a_v v >= k`` (:data:`NUMERIC_LIMIT`)."""
    return max([abs(k), *(abs(a) for _, a in coefs)]) <= NUMERIC_LIMIT


def _names(coefs: tuple[tuple[str, int], ...]) -> list[str]:
    return ["i", "n"] + sorted({v for v, _ in coefs} - {"i", "n"})


def _row(names: list[str], terms: dict[str, float] | dict[str, int]) -> np.ndarray:
    row = np.zeros(len(names))
    for v, a in terms.items():
        row[names.index(v)] += a
    return row


def window_size_suffix() -> Poly:
    """``n - i + 1``: the number of positions j >= i."""
    return Poly.var("n") - Poly.var("i") + Poly.const(1)


def comparison(
    coefs: tuple[tuple[str, int], ...], k: int, term_of: Callable[[str], Term]
) -> Formula:
    """``Σ a_v v >= k`` in the logic's syntax (positive terms on the left)."""
    return linear_comparison(">=", [(term_of(v), a) for v, a in coefs], -k)


__all__ = ["CountVar", "Literal", "PRE", "SUF", "Vars", "Where", "comparison"]

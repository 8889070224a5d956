"""Position predicates as BDDs over atoms, and back to short formulas.

A predicate is a Boolean function of *atoms*: formulas of hardsoft's logic whose value at a
position is known (a symbol ``'a'``, ``first``, ``last``, ``MOD(m, r)(i)``, or a temporal
formula ``Y φ``, ``φ S ψ``, ``P φ``... over lower predicates). Atoms are hash-consed (one BDD
variable per distinct formula), so equal subformulas are shared.

Facts hold at every position of every word: the *base* facts (exactly one symbol; the
position atoms that can occur together) and facts about temporal atoms (``P φ → ¬first``;
``Y φ ∧ Y ψ → false`` when φ ∧ ψ is never true; ``P φ → P ψ`` when φ implies ψ...).
Predicates are compared and minimised modulo the facts whose atoms the predicate mentions
(``care(u)``; any set of true facts is sound, fewer only simplify less).

:meth:`Predicates.formula` turns a BDD into a formula: an irredundant sum of products
(Minato–Morreale ISOP) with ``¬care`` as don't-care, factored by common literals, or the
negation of the complement's cover where that is smaller.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from hardsoft.classes import budget, espresso
from hardsoft.logic.linear import as_linear, comparison
from hardsoft.logic.syntax import (
    And,
    Compare,
    Const,
    First,
    Formula,
    Future,
    Last,
    Mod,
    Next,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Since,
    Somewhere,
    Until,
    size,
)

PIECES_NODES = 50
"""Unions of classes whose BDD has more nodes than this are written in pieces (query
classes of the layer before and outcomes, :meth:`Predicates._pieces`), not as one cover."""

REFINE_LIMIT = 48
"""Covers of more cubes than this are left as the ISOP gives them (refining them costs more
than it helps the reader: such formulas are long anyway)."""


def _backend() -> Any:
    """CUDD (C) where dd was built with it, else dd's pure-Python BDD: the same API."""
    try:
        return importlib.import_module("dd.cudd")
    except ImportError:  # pragma: no cover - depends on how dd was installed
        return importlib.import_module("dd.autoref")


BDD = _backend().BDD
Function: TypeAlias = Any
"""A BDD node of :class:`Predicates` (dd's ``Function``)."""

Cube = tuple[tuple[str, bool], ...]

_UNARY = {"Y": Prev, "X": Next, "P": Past, "F": Future, "E": Somewhere}
_BINARY = {"S": Since, "U": Until}


class Predicates:
    """A BDD manager whose variables are hash-consed atom formulas (see the module doc)."""

    def __init__(self) -> None:
        self.bdd = BDD()
        self.var_of: dict[Formula, str] = {}
        self.atom_of: dict[str, Formula] = _Names(self)
        """Variable -> its atom formula; a temporal atom is named on first use (naming it
        renders its arguments, which only the printed formulas need)."""
        self._temporal_var: dict[tuple[Any, ...], str] = {}
        """(operator, argument BDDs) -> variable: temporal atoms are hash-consed by the
        identity of their arguments' BDDs, without rendering them."""
        self._op_memo: dict[tuple[Any, ...], Function] = {}
        self.base: Function = self.bdd.true
        self._base_vars: set[str] = set()
        self._facts_by_var: dict[str, list[tuple[frozenset[str], Function]]] = {}
        """Facts by their newest non-base atom (the last declared): care(S) reads only the
        facts of S's atoms, not all of them."""
        self._fact_count = 0
        self._care_memo: dict[frozenset[str], Function] = {}
        # insertion-ordered (dicts, sorted iteration below): the order of BDD operations, and
        # so CUDD's reordering and the covers, must not depend on the string hash seed
        self._memo_keys: dict[str, dict[frozenset[str], None]] = {}
        """Atom -> the memoised care keys that contain it: a new fact updates only the keys
        that hold all its atoms, instead of clearing the memo."""
        self._order: dict[str, int] = {}
        self._sizes: dict[str, int] = {}
        self.defs: dict[str, tuple[str, tuple[Function, ...]]] = {}
        """Temporal atom variable -> (operator, argument predicates)."""
        self._unary_of: dict[str, tuple[str, str, Function]] = {}
        """Unary temporal atom variable -> (family: YP, XF or E; operator; argument)."""
        self._related: set[tuple[str, str]] = set()
        self.unions: dict[Function, ClassUnion] = {}
        self.pieces_written = 0
        self._expanding: set[Function] = set()
        self.refine = True
        """Whether printed covers are refined (:meth:`_cover`); the writer of a large output
        turns it off (most of its time went into refining thousands of covers)."""
        """How many unions of classes were written in pieces (:meth:`_pieces`)."""
        """Predicates known to be unions of classes of one partition of the positions:
        relations between temporal atoms over them follow from their class sets, without a
        care set (:meth:`_relate`)."""
        self._formula_memo: dict[Any, Formula] = {}
        self._isop_memo: dict[tuple[Any, Any], tuple[list[Cube], Function]] = {}
        self._cube_memo: dict[Cube, Function] = {}
        self.global_vars: set[str] = set()
        """Atoms whose value is the same at every position of a word (``MOD(2, 0)(n)``,
        ``n > 4``): temporal operators are split on them (``X (last & G)`` is
        ``G & X last``)."""

    def keep_order(self) -> None:
        """Stop reordering the BDD variables: the order found while the classes were built
        suits the outputs written from them, and once the manager holds millions of nodes
        each automatic reordering (CUDD's sifting over every atom) costs seconds, most of
        the time of writing a deep model's output (measured: 172 of 190 s)."""
        if hasattr(self.bdd, "configure"):
            self.bdd.configure(reordering=False)

    # ------------------------------------------------------------------ atoms and facts
    @property
    def true(self) -> Function:
        return self.bdd.true

    @property
    def false(self) -> Function:
        return self.bdd.false

    def atom(self, formula: Formula) -> Function:
        """The BDD variable of ``formula`` (declared on first use)."""
        name = self.var_of.get(formula)
        if name is None:
            name = self._declare()
            self.var_of[formula] = name
            self.atom_of[name] = formula
        return self.bdd.var(name)

    def _declare(self) -> str:
        name = f"a{len(self._order)}"
        self.bdd.declare(name)
        self._order[name] = len(self._order)
        return name

    def _temporal_atom(self, op: str, args: tuple[Function, ...]) -> tuple[Function, bool]:
        """The variable of the temporal atom ``op args`` and whether it is new."""
        key = (op, *args)
        name = self._temporal_var.get(key)
        if name is not None:
            return self.bdd.var(name), False
        name = self._declare()
        self._temporal_var[key] = name
        self.defs[name] = (op, args)
        return self.bdd.var(name), True

    def name_atom(self, var: str) -> Formula:
        """The formula of a temporal atom, its arguments rendered with the facts known now."""
        op, args = self.defs[var]
        parts = [self.formula(a) for a in args]
        formula = _UNARY[op](parts[0]) if op in _UNARY else _BINARY[op](parts[0], parts[1])
        self.var_of.setdefault(formula, var)
        return formula

    def assume(self, fact: Function, base: bool = False) -> None:
        """Record ``fact`` as true at every position of every word (``base``: a fact about
        symbols and position atoms, always used)."""
        if base:
            self.base = self.base & fact
            self._base_vars |= set(self.bdd.support(fact))
            self._clear_care()
            return
        atoms = frozenset(self.bdd.support(fact)) - self._base_vars
        if not atoms:  # a fact about base atoms only: part of every care set
            self.base = self.base & fact
            self._clear_care()
            return
        newest = max(atoms, key=self._order.__getitem__)
        self._facts_by_var.setdefault(newest, []).append((atoms, fact))
        self._fact_count += 1
        rarest = min(self._sorted(atoms), key=lambda v: len(self._memo_keys.get(v, ())))
        for key in self._memo_keys.get(rarest, ()):
            if atoms <= key:
                self._care_memo[key] = self._care_memo[key] & fact

    def _sorted(self, variables: Iterable[str]) -> list[str]:
        """``variables`` in the order they were declared (not the hash order of a set)."""
        return sorted(variables, key=self._order.__getitem__)

    def _clear_care(self) -> None:
        self._care_memo.clear()
        self._memo_keys.clear()

    def mark_base(self) -> None:
        """Every atom declared so far (symbols, position atoms) is a base atom: the facts
        about them are used for every predicate."""
        self._base_vars |= set(self.atom_of)
        facts = [f for group in self._facts_by_var.values() for _, f in group]
        self._facts_by_var.clear()
        self._clear_care()
        for fact in facts:  # re-indexed without the atoms that are now base atoms
            self.assume(fact)

    def care(self, *us: Function) -> Function:
        """The conjunction of the facts about the atoms of ``us`` (and the base facts)."""
        support: set[str] = set()
        for u in us:
            support |= self.bdd.support(u)
        key = frozenset(support - self._base_vars)
        hit = self._care_memo.get(key)
        if hit is None:
            budget.check()
            self._relate_within(key)
            hit = self.base
            for var in self._sorted(key):
                for atoms, fact in self._facts_by_var.get(var, ()):
                    if atoms <= key:
                        budget.check()  # the conjunction of many facts can grow large
                        hit = hit & fact
            self._care_memo[key] = hit
            for var in key:
                self._memo_keys.setdefault(var, {})[key] = None
        return hit

    def is_false(self, u: Function) -> bool:
        """Whether ``u`` holds at no position of any word (modulo the facts)."""
        return (u & self.care(u)) == self.bdd.false

    def implies(self, u: Function, v: Function) -> bool:
        return self.is_false(u & ~v)

    def equal(self, u: Function, v: Function) -> bool:
        return self.is_false(u & ~v) and self.is_false(v & ~u)

    def constant(self, u: Function) -> bool | None:
        """True/False if ``u`` is constant modulo ``care``, else None."""
        if self.is_false(u):
            return False
        if self.is_false(~u):
            return True
        return None

    # ------------------------------------------------------------------ temporal atoms
    def mark_global(self, formula: Formula) -> None:
        """Declare the atom ``formula`` the same at every position (see :attr:`global_vars`)."""
        self.atom(formula)
        self.global_vars.add(self.var_of[formula])

    def _global_in(self, *args: Function) -> str | None:
        for arg in args:
            for var in self._sorted(self.bdd.support(arg)):
                if var in self.global_vars:
                    return str(var)
        return None

    def unary(self, op: str, arg: Function, varies: bool = False) -> Function:
        """``op arg`` for op in Y X P F E, with constant folding and its facts recorded.
        ``varies``: the caller knows that ``arg`` holds at some position and fails at some
        other (a union of some classes of a layer whose classes all occur), so it is not
        tested for a constant (the care set of a large argument is costly)."""
        key = (op, arg)
        hit = self._op_memo.get(key)
        if hit is None:
            hit = self._op_memo[key] = self._unary(op, arg, varies)
        return hit

    def _unary(self, op: str, arg: Function, varies: bool = False) -> Function:
        g = self._global_in(arg)
        if g is not None:  # op (G & a | !G & b) = G & op a | !G & op b
            x = self.bdd.var(g)
            on, off = self.bdd.let({g: True}, arg), self.bdd.let({g: False}, arg)
            return (x & self.unary(op, on)) | (~x & self.unary(op, off))
        value = None if varies else self.constant(arg)
        if value is False:
            return self.false
        if value is True:
            if op == "E":
                return self.true
            return ~self.atom(First()) if op in "YP" else ~self.atom(Last())
        if op in "YX":
            absorbed = self._absorb(op, arg)
            if absorbed is not None:
                return absorbed
        if op in "EPF":
            folded = self._position_fold(op, arg)
            if folded is not None:
                return folded
        u, fresh = self._temporal_atom(op, (arg,))
        if fresh:
            self._facts(op, arg, u, str(u.var))
        return u

    def position_value(self, u: Function, i: int, first: bool, last: bool) -> bool:
        """The value of a predicate over position atoms at a position i (used for its
        residues) that is or is not the first and the last."""
        values = {}
        for var in self.bdd.support(u):
            a = self.atom_of[var]
            if isinstance(a, First):
                values[var] = first
            elif isinstance(a, Last):
                values[var] = last
            else:
                assert isinstance(a, Mod)
                values[var] = i % a.modulus == a.residue
        return bool(self.bdd.let(values, u) == self.bdd.true)

    def _position_fold(self, op: str, arg: Function) -> Function | None:
        """``E``, ``P`` or ``F`` of an ``arg`` over position atoms alone, as position atoms,
        when it is constant away from one end: ``E arg`` a function of whether n = 1,
        ``P arg`` false at ``first`` and constant after, ``F arg`` false at ``last`` and
        constant before. ``arg`` is periodic in i with period p away from the ends, so the
        value depends on residues and on window lengths up to p + 1: lengths up to 2p + 3
        show every case."""
        atoms = [self.atom_of[v] for v in self.bdd.support(arg)]
        if not atoms or not all(_is_position_atom(a) for a in atoms):
            return None
        period = math.lcm(*(a.modulus for a in atoms if isinstance(a, Mod)))
        lengths = range(2, 2 * period + 4)

        def at(j: int, n: int) -> bool:
            return self.position_value(arg, j, j == 1, j == n)

        if op == "E":
            seen = {any(at(j, n) for j in range(1, n + 1)) for n in lengths}
            edge, at_edge = self.atom(First()) & self.atom(Last()), at(1, 1)
        elif op == "P":
            seen = {any(at(j, n) for j in range(1, i)) for n in lengths for i in range(2, n + 1)}
            edge, at_edge = self.atom(First()), False
        else:
            seen = {
                any(at(j, n) for j in range(i + 1, n + 1)) for n in lengths for i in range(1, n)
            }
            edge, at_edge = self.atom(Last()), False
        if len(seen) != 1:
            return None
        rest = self.true if seen.pop() else self.false
        return (edge & (self.true if at_edge else self.false)) | (~edge & rest)

    def _absorb(self, op: str, arg: Function) -> Function | None:
        """``Y`` of a non-strict past operator is the strict one: ``Y (x | P x) = P x`` and
        ``Y (y | x & (x S y)) = x S y`` (and ``X`` with ``F``, ``U``)."""
        eventually, since = ("P", "S") if op == "Y" else ("F", "U")
        for var in self._sorted(self.bdd.support(arg)):
            d = self.defs.get(var)
            if d is None:
                continue
            v = self.bdd.var(var)
            if d[0] == eventually:
                inner = d[1][0] | v
            elif d[0] == since:
                inner = d[1][1] | (d[1][0] & v)
            else:
                continue
            if self.equal(arg, inner):
                return v
            if self.equal(arg, ~inner):  # Y !(x | P x) = !P x & !first
                return ~v & ~self.atom(First() if op == "Y" else Last())
        return None

    def binary(self, op: str, left: Function, right: Function, varies: bool = False) -> Function:
        """``left S right`` or ``left U right`` (strict), with constant folding. ``varies``:
        the caller knows that neither side is constant and that ``!left`` does not imply
        ``right`` (no folding tests; see :meth:`unary`)."""
        key = (op, left, right)
        hit = self._op_memo.get(key)
        if hit is None:
            hit = self._op_memo[key] = self._binary(op, left, right, varies)
        return hit

    def _binary(self, op: str, left: Function, right: Function, varies: bool = False) -> Function:
        g = self._global_in(left, right)
        if g is not None:
            x = self.bdd.var(g)
            on = self.binary(op, self.bdd.let({g: True}, left), self.bdd.let({g: True}, right))
            off = self.binary(op, self.bdd.let({g: False}, left), self.bdd.let({g: False}, right))
            return (x & on) | (~x & off)
        if varies:
            if len(self.bdd.support(left) | self.bdd.support(right)) <= 40:
                left = self.simplify(left, ~right)  # small: as below
            return self._since_atom(op, left, right, varies)
        r = self.constant(right)
        if r is False:
            return self.false
        lv = self.constant(left)
        if lv is False:
            return self.unary("Y" if op == "S" else "X", right)
        if lv is True:
            return self.unary("P" if op == "S" else "F", right)
        if self.implies(~left, right):  # the nearest non-left position satisfies right if any
            return self.unary("P" if op == "S" else "F", right)
        left = self.simplify(left, ~right)  # φ S ψ reads φ only where ψ fails
        return self._since_atom(op, left, right)

    def _since_atom(
        self, op: str, left: Function, right: Function, varies: bool = False
    ) -> Function:
        u, fresh = self._temporal_atom(op, (left, right))
        if fresh:
            self.assume(~u | ~self.atom(First() if op == "S" else Last()))
            eventually = self.unary("P" if op == "S" else "F", right, varies)
            self.assume(~u | eventually)
        return u

    def _facts(self, op: str, arg: Function, u: Function, var: str) -> None:
        """Facts about a new temporal atom ``u = op arg`` on its own; the facts relating it
        to other atoms are derived when a predicate mentions both (:meth:`_relate_within`)."""
        self._parity_facts(op, arg, u)
        if op in "YP":
            self.assume(~u | ~self.atom(First()))
        elif op in "XF":
            self.assume(~u | ~self.atom(Last()))
        family = {"Y": "YP", "P": "YP", "X": "XF", "F": "XF", "E": "E"}[op]
        self._unary_of[var] = (family, op, arg)

    def _relate_within(self, key: frozenset[str]) -> None:
        """Derive the facts relating each pair of unary temporal atoms of ``key`` (once per
        pair): only pairs that some predicate mentions together are ever related, so the work
        grows with the predicates asked about, not with the square of all atoms."""
        unary = sorted((v for v in key if v in self._unary_of), key=self._order.__getitem__)
        for k, w in enumerate(unary):
            for v in unary[:k]:
                if (v, w) not in self._related:
                    self._related.add((v, w))
                    self._relate(v, w)

    def _relate(self, older: str, newer: str) -> None:
        """The facts between two unary temporal atoms of one family (``Y φ ∧ Y ψ → false``
        when φ ∧ ψ is never true; ``P φ → P ψ`` when φ implies ψ; ...)."""
        family, op, arg = self._unary_of[newer]
        other_family, other_op, other_arg = self._unary_of[older]
        if family != other_family:
            return
        u, v = self.bdd.var(newer), self.bdd.var(older)
        edge = {"YP": self.atom(First()), "XF": self.atom(Last()), "E": self.false}[family]
        pair = _class_sets(self.unions.get(arg), self.unions.get(other_arg))
        cover = disjoint = sub = sup = None
        if pair is not None:
            a, b = pair.a, pair.b
            cover, disjoint, sub, sup = len(a | b) == pair.size, not a & b, a <= b, b <= a
        exact = pair is not None and pair.exact
        if op == other_op and self._never(cover, exact, lambda: ~arg & ~other_arg):
            self.assume(u | v | edge)  # one of them is always true
        if op == other_op and op in "YX" and self._never(disjoint, exact, lambda: arg & other_arg):
            self.assume(~u | ~v)
        if _weaker(op, other_op) and self._never(sub, exact, lambda: arg & ~other_arg):
            self.assume(~u | v)
        if _weaker(other_op, op) and self._never(sup, exact, lambda: other_arg & ~arg):
            self.assume(~v | u)

    def _never(self, by_sets: bool | None, exact: bool, u: Callable[[], Function]) -> bool:
        """Whether ``u()`` holds at no position: proved by class sets (``by_sets``), refuted
        by them where every class occurs (``exact``), else decided with the care set."""
        if by_sets:
            return True
        if by_sets is False and exact:
            return False
        return self.is_false(u())

    def _parity_facts(self, op: str, arg: Function, u: Function) -> None:
        """``op`` applied to a parity: the neighbours have the other parity (``Y MOD(2, 0)(i)``
        is ``MOD(2, 1)(i) & !first``; ``P MOD(2, 0)(i)`` holds at every odd i > 1)."""
        par = _parity_atoms(self)
        if par is None:
            return
        for r in (0, 1):
            if not self.equal(arg, par[r]):
                continue
            edge = self.atom(First()) if op in "YP" else self.atom(Last())
            if op in "YX":
                w = par[1 - r] & ~edge
                self.assume((u & w) | (~u & ~w))
            elif op in "PF":
                self.assume(~(par[1 - r] & ~edge) | u)

    # ------------------------------------------------------------------ back to formulas
    def formula(self, u: Function) -> Formula:
        """A short formula equal to ``u`` on every position (modulo the facts known now).
        Temporal atoms print as they were named when created (the atom's identity)."""
        return self._render(u, self._formula_memo, None)

    def render(self, u: Function) -> Formula:
        """Like :meth:`formula`, but every temporal atom's arguments re-simplified with all
        facts known now (facts learnt after an atom was created simplify it too)."""
        memo: dict[Any, Formula] = {}
        atoms: dict[str, Formula] = {}
        return self._render(u, memo, atoms)

    def render_with(
        self, u: Function, memo: dict[Any, Formula], atoms: dict[str, Formula]
    ) -> Formula:
        """:meth:`render` sharing ``memo`` and ``atoms`` across calls (the parts of one
        output print their shared atoms the same way)."""
        return self._render(u, memo, atoms)

    def _render(
        self, u: Function, memo: dict[Any, Formula], atoms: dict[str, Formula] | None
    ) -> Formula:
        hit = memo.get(u)
        if hit is not None:
            return hit
        pieces = self._pieces(u) if u not in self._expanding else None
        if pieces is not None:
            self._expanding.add(u)  # a piece may be the same BDD (a union of the layer before)
            whole = _disjoin(
                _conjoin([self._render(a, memo, atoms), self._render(b, memo, atoms)])
                for a, b in pieces
            )
            self._expanding.discard(u)
            self.pieces_written += 1
            memo[u] = whole
            return whole
        value = self.constant(u)
        if value is not None:
            out: Formula = Const(value)
        else:
            care = self.care(u)
            pos = self._cover(u & care, u | ~care, care, self.refine)
            neg = self._cover(~u & care, ~u | ~care, care, self.refine)
            f_pos = self._factor(pos, memo, atoms)
            f_neg = _negate(self._factor(neg, memo, atoms))
            out = f_pos if size(f_pos) <= size(f_neg) else f_neg
        memo[u] = out
        return out

    def in_pieces(self, u: Function) -> bool:
        """Whether ``u`` is a large union of classes, printed in pieces (:meth:`_pieces`)."""
        x = self.unions.get(u)
        return (
            x is not None
            and x.partition.pieces is not None
            and len(u) > PIECES_NODES
            and 0 < len(x.members) < x.partition.size
        )

    def _pieces(self, u: Function) -> list[tuple[Function, Function]] | None:
        """A large union of classes as the pieces its partition gives (else None): the cover
        of the whole union is the costliest BDD work of a deep model's output (millions of
        nodes for 157 classes of a 3-layer model), the pieces are small."""
        if not self.in_pieces(u):
            return None
        x = self.unions[u]
        assert x.partition.pieces is not None
        return x.partition.pieces(self, x.members)

    def _atom_text(
        self, var: str, memo: dict[Any, Formula], atoms: dict[str, Formula] | None
    ) -> Formula:
        if atoms is None or var not in self.defs:
            return self.atom_of[var]
        hit = atoms.get(var)
        if hit is None:
            op, args = self.defs[var]
            parts = [self._render(a, memo, atoms) for a in args]
            hit = _UNARY[op](parts[0]) if op in _UNARY else _BINARY[op](parts[0], parts[1])
            atoms[var] = hit
        return hit

    def simplify(self, u: Function, domain: Function, refine: bool = True) -> Function:
        """A predicate equal to ``u`` wherever ``domain`` holds (``domain`` must hold at every
        position, e.g. the disjunction of a layer's classes), as short a cover as found.
        ``refine=False`` keeps the ISOP's cubes, only made prime: the don't-cares still drop
        the atoms the domain makes irrelevant, at a fraction of the cost (for intermediate
        predicates, which are re-rendered with every fact when printed)."""
        value = self.constant(u & domain)
        if value is False:
            return self.false
        if self.is_false(~u & domain):
            return self.true
        care = self.care(u) & domain
        cubes = self._cover(u & care, u | ~care, care, refine)
        out = self.false
        for cube in cubes:
            out = out | self._cube(cube)
        return out

    def _cover(
        self, lower: Function, upper: Function, care: Function, refine: bool = True
    ) -> list[Cube]:
        """An ISOP cover of [lower, upper], each cube then shortened where a literal of
        another atom lets others go (``¬'b' ∧ ¬'c'`` is ``'a'`` over the alphabet abc), and
        cubes covered by the others dropped (without ``refine``: each cube only made prime)."""
        cubes = self._isop(lower, upper)[0]
        if len(cubes) > REFINE_LIMIT:
            return cubes
        if not refine:
            return list(dict.fromkeys(self._expand(c, upper) for c in cubes))
        support = set(self.bdd.support(lower))
        support |= {self.var_of[a] for a in (First(), Last()) if a in self.var_of}
        extra = [(v, True) for v in sorted(support)] + [(v, False) for v in sorted(support)]
        if len(cubes) * len(extra) > 4000:
            extra = []
        better = list(cubes)
        suffix = [self.false] * (len(cubes) + 1)  # the original cubes after idx
        for idx in range(len(cubes) - 1, -1, -1):
            suffix[idx] = suffix[idx + 1] | self._cube(cubes[idx])
        prefix = self.false  # the improved cubes before idx
        for idx, cube in enumerate(cubes):
            budget.check()
            best = self._expand(cube, upper)
            # what this cube must go on covering: its part of lower the others miss
            duty = self._cube(cube) & lower & ~(prefix | suffix[idx + 1]) if extra else None
            for lit in extra:
                if any(v == lit[0] for v, _ in best):
                    continue
                trial = self._expand((lit, *best), upper)
                if self._cost(trial) < self._cost(best) and (
                    (duty & ~self._cube(trial)) == self.false
                ):
                    best = trial
            better[idx] = best
            prefix = prefix | self._cube(best)
        kept = list(dict.fromkeys(better))
        for cube in list(kept):
            others = self.false
            for c in kept:
                if c is not cube:
                    others = others | self._cube(c)
            if (lower & ~others) == self.false:
                kept.remove(cube)
        ops = espresso.Cover(self.bdd, self._cube, self._cost, self._atom_size)
        return espresso.improve(kept, lower, upper, ops)

    def _atom_size(self, var: str) -> int:
        """The printed size of an atom; for a temporal atom not named yet, an estimate that
        needs no rendering (one node, plus its arguments' atoms once each)."""
        hit = self._sizes.get(var)
        if hit is None:
            if var in self.defs and var not in self.atom_of:
                _, args = self.defs[var]
                hit = 1 + sum(self._atom_size(v) for a in args for v in self.bdd.support(a))
            else:
                hit = size(self.atom_of[var])
            self._sizes[var] = hit
        return hit

    def _cost(self, cube: Cube) -> tuple[int, int]:
        """The printed size of a cube (its atoms' sizes, one per negation), then its length:
        ``'a' & first`` beats ``'a' & !P ('b' | !first)``, ``'a'`` beats ``!'c'`` given 'b'."""
        nodes = sum(self._atom_size(v) + (0 if value else 1) for v, value in cube)
        return nodes, len(cube)

    def _cube(self, cube: Cube) -> Function:
        hit = self._cube_memo.get(cube)
        if hit is None:
            hit = self.true
            for var, value in cube:
                hit = hit & (self.bdd.var(var) if value else ~self.bdd.var(var))
            self._cube_memo[cube] = hit
        return hit

    def _expand(self, cube: Cube, upper: Function) -> Cube:
        """Drop literals from ``cube`` (last first) while it stays inside ``upper``."""
        budget.check()
        lits = list(cube)
        for lit in reversed(list(lits)):
            trial = [x for x in lits if x != lit]
            if (self._cube(tuple(trial)) & ~upper) == self.false:
                lits = trial
        return tuple(lits)

    def _isop(self, lower: Function, upper: Function) -> tuple[list[Cube], Function]:
        """Minato–Morreale: an irredundant cover c with lower <= c <= upper."""
        budget.check()
        if lower == self.bdd.false:
            return [], self.bdd.false
        if upper == self.bdd.true:
            return [()], self.bdd.true
        key = (lower, upper)
        hit = self._isop_memo.get(key)
        if hit is not None:
            return hit
        x = self._top(lower, upper)
        l0, l1 = self._cof(lower, x, False), self._cof(lower, x, True)
        u0, u1 = self._cof(upper, x, False), self._cof(upper, x, True)
        c0, f0 = self._isop(l0 & ~u1, u0)
        c1, f1 = self._isop(l1 & ~u0, u1)
        rest_lower = (l0 & ~f0) | (l1 & ~f1)
        cs, fs = self._isop(rest_lower, u0 & u1)
        var = self.bdd.var(x)
        cover = [((x, False), *c) for c in c0] + [((x, True), *c) for c in c1] + cs
        result = (cover, (~var & f0) | (var & f1) | fs)
        self._isop_memo[key] = result
        return result

    def _top(self, a: Function, b: Function) -> str:
        levels = [(self.bdd.level_of_var(f.var), f.var) for f in (a, b) if f.var is not None]
        return min(levels)[1]

    def _cof(self, u: Function, var: str, value: bool) -> Function:
        return self.bdd.let({var: value}, u)

    def _factor(
        self,
        cubes: list[Cube],
        memo: dict[Any, Formula],
        atoms: dict[str, Formula] | None,
    ) -> Formula:
        """Sum of products, factored greedily by the literal shared by most cubes."""
        if not cubes:
            return Const(False)
        if any(not c for c in cubes):
            return Const(True)
        counts: dict[tuple[str, bool], int] = {}
        for c in cubes:
            for lit in c:
                counts[lit] = counts.get(lit, 0) + 1
        lit, count = max(counts.items(), key=lambda kv: (kv[1], kv[0][1], kv[0][0]))
        if count == 1 or len(cubes) == 1:
            return _disjoin(
                [_conjoin([self._literal(x, memo, atoms) for x in sorted(c)]) for c in cubes]
            )
        inner = [tuple(x for x in c if x != lit) for c in cubes if lit in c]
        rest = [c for c in cubes if lit not in c]
        head = _conjoin([self._literal(lit, memo, atoms), self._factor(inner, memo, atoms)])
        return _disjoin([head, self._factor(rest, memo, atoms)]) if rest else head

    def _literal(
        self, lit: tuple[str, bool], memo: dict[Any, Formula], atoms: dict[str, Formula] | None
    ) -> Formula:
        atom = self._atom_text(lit[0], memo, atoms)
        return atom if lit[1] else _negate(atom)


class _Names(dict):
    """``Predicates.atom_of``: temporal atoms are named when first read."""

    def __init__(self, preds: Predicates) -> None:
        super().__init__()
        self._preds = preds

    def __missing__(self, var: str) -> Formula:
        formula = self[var] = self._preds.name_atom(var)
        return formula


def _is_position_atom(a: Formula) -> bool:
    """``first``, ``last`` or ``MOD(m, r)(i)``."""
    return isinstance(a, (First, Last)) or (isinstance(a, Mod) and a.term == Position())


def _parity_atoms(p: Predicates) -> dict[int, Function] | None:
    atoms = {r: Mod(2, r, Position()) for r in (0, 1)}
    if not all(a in p.var_of for a in atoms.values()):
        return None
    return {r: p.atom(a) for r, a in atoms.items()}


def _flatten_or(items: list[Formula]) -> list[Formula]:
    out: list[Formula] = []
    stack = list(reversed(items))
    while stack:
        f = stack.pop()
        if isinstance(f, Or):
            stack.extend([f.right, f.left])
        else:
            out.append(f)
    return out


@dataclass(eq=False)
class Partition:
    """The positions split into ``size`` disjoint classes, every one occurring when
    ``occurring``. ``parent``: a coarser partition this one refines, class k lying inside its
    class ``parent_of[k]`` (a layer's classes refine those of the layer before when no class
    merges positions of two query classes)."""

    size: int
    occurring: bool
    parent: Partition | None = None
    parent_of: tuple[int, ...] = ()
    pieces: Callable[[Predicates, frozenset[int]], list[tuple[Function, Function]]] | None = None
    """A union of classes as (context, outcome) pairs whose disjunction of conjunctions it
    is, each over fewer atoms than the union (:meth:`Predicates._render` writes large unions
    so)."""
    _up: dict[int, tuple[Partition, list[int]]] = field(default_factory=dict, repr=False)

    def lift(self, members: frozenset[int], coarse: Partition) -> frozenset[int] | None:
        """The classes of this partition inside the union of the classes ``members`` of the
        coarser ``coarse`` (None if ``coarse`` is not one it refines)."""
        hit = self._up.get(id(coarse))
        if hit is None:
            node, ancestor = self, list(range(self.size))
            while node is not coarse:
                if node.parent is None:
                    return None
                ancestor = [node.parent_of[a] for a in ancestor]
                node = node.parent
            hit = self._up[id(coarse)] = (coarse, ancestor)  # the partition keeps its id alive
        return frozenset(k for k, a in enumerate(hit[1]) if a in members)


@dataclass(frozen=True)
class ClassUnion:
    """A predicate equal, at every position, to the union of the classes ``members`` of
    ``partition``."""

    partition: Partition
    members: frozenset[int]


@dataclass(frozen=True)
class _UnionPair:
    """Two unions as class sets of one partition (``exact``: every class of it occurs)."""

    a: frozenset[int]
    b: frozenset[int]
    size: int
    exact: bool


def _class_sets(x: ClassUnion | None, y: ClassUnion | None) -> _UnionPair | None:
    """Two unions as sets of the finer of their partitions, or None. The classes are disjoint
    and cover every position, so ``x & y`` is empty when the sets are disjoint, ``x`` implies
    ``y`` when its set is a subset, ... (and only then, when every class occurs)."""
    if x is None or y is None:
        return None
    for fine, coarse in ((x, y), (y, x)):
        lifted = fine.partition.lift(coarse.members, coarse.partition)
        if lifted is not None:
            a, b = (fine.members, lifted) if fine is x else (lifted, fine.members)
            return _UnionPair(a, b, fine.partition.size, fine.partition.occurring)
    return None


def _weaker(op: str, other: str) -> bool:
    """Whether ``op φ`` implies ``other ψ`` whenever φ implies ψ."""
    return op == other or (op, other) in {("Y", "P"), ("X", "F")}


_FLIP = {">=": ">", ">": ">=", "<=": "<", "<": "<="}
"""``!(a op b)`` is ``b FLIP[op] a`` (integer terms)."""


def _negate(f: Formula) -> Formula:
    if isinstance(f, Const):
        return Const(not f.value)
    if isinstance(f, Not):
        return f.arg
    if isinstance(f, Compare) and f.op in _FLIP:
        return Compare(_FLIP[f.op], f.right, f.left)
    if isinstance(f, Compare) and f.op in ("=", "!="):
        return Compare("!=" if f.op == "=" else "=", f.left, f.right)
    return Not(f)


def _pair_compares(items: list[Formula], conjunction: bool) -> list[Formula]:
    """In a conjunction, ``L >= k`` and ``L <= k`` become ``L = k``; in a disjunction,
    ``L > k`` and ``L < k`` become ``L != k`` (integer linear terms)."""
    out = list(items)
    forms = {f: as_linear(f) for f in items if isinstance(f, Compare)}
    for f, a in forms.items():
        for g, b in forms.items():
            if a is None or b is None or f not in out or g not in out or f is g:
                continue
            if b[0] != {t: -c for t, c in a[0].items()}:
                continue
            parts = list(a[0].items())
            if conjunction and a[1] + b[1] == 0:  # L + k >= 0 and -L - k >= 0
                merged = comparison("=", parts, a[1])
            elif not conjunction and a[1] + b[1] == -2:  # all but L + k + 1 = 0
                merged = comparison("!=", parts, a[1] + 1)
            else:
                continue
            out = [h for h in out if h not in (f, g)] + [merged]
    return out


def _conjoin(parts: Iterable[Formula]) -> Formula:
    items = _pair_compares([p for p in parts if p != Const(True)], conjunction=True)
    if any(p == Const(False) for p in items):
        return Const(False)
    if not items:
        return Const(True)
    out = items[0]
    for p in items[1:]:
        out = And(out, p)
    return out


def _somewhere(items: list[Formula]) -> list[Formula]:
    """``x | P x | F x`` is ``E x`` (among the disjuncts ``items``)."""
    for item in list(items):
        if isinstance(item, Past) and item.arg in items and Future(item.arg) in items:
            x = item.arg
            items = [i for i in items if i not in (x, item, Future(x))] + [Somewhere(x)]
    return items


def _disjoin(parts: Iterable[Formula]) -> Formula:
    items = _somewhere(_flatten_or([p for p in parts if p != Const(False)]))
    items = _pair_compares(items, conjunction=False)
    if any(p == Const(True) for p in items):
        return Const(True)
    if not items:
        return Const(False)
    out = items[0]
    for p in items[1:]:
        out = Or(out, p)
    return out


__all__ = ["Predicates", "Last", "First"]

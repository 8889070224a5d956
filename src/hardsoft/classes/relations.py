"""Facts between count comparisons, found by integer programs (for decompiling counting
models): combinations of truth values of the comparison and MOD atoms that no integer point
allows become BDD facts, so the simplification drops atoms implied by others ("an odd count
is positive"; "at n = 1, ``2 * #<['a'] > n`` is ``#<['a'] > 0``")."""

from __future__ import annotations

from hardsoft.classes.boolean import Function
from hardsoft.classes.conditions import Literal, Vars, Where, small_enough
from hardsoft.logic.syntax import First, Formula, Last, Mod, Position

RELATE_BUDGET = 400
"""About this many integer programs at most per :func:`relate` (facts only shorten the
formulas; compiled models need a few dozen)."""
RELATE_LIMIT = 16
"""Groups of more atoms than this are not related (the walk may visit 2^size assignments)."""


def relate(vars_: Vars, roots: list[Function], limit: int = RELATE_LIMIT) -> int:
    """Record as facts the truth-value combinations of the comparison and MOD atoms that
    no integer point of the polytope allows (at any position, and for each known value of
    ``first`` and ``last``), so the BDDs can drop atoms implied by others.

    A depth-first walk assigns the atoms of one group (atoms sharing counts) one at a
    time and solves an integer program per partial assignment; an infeasible one becomes
    the fact "not this cube", and its subtree is skipped. Groups of more than ``limit``
    atoms are left alone. Returns the number of facts added."""
    p = vars_.preds
    added = 0
    walk = _Walk(vars_, RELATE_BUDGET)
    first, last = p.atom(First()), p.atom(Last())
    flag = {True: (first, last), False: (~first, ~last)}
    edges = [(Where(), p.true)]
    for f, l in (
        (True, None),
        (None, True),
        (True, True),
        (True, False),
        (False, True),
        (False, False),
    ):
        edge = (flag[f][0] if f is not None else p.true) & (flag[l][1] if l is not None else p.true)
        edges.append((Where(f, l), edge))
    for group in _groups(vars_, _used(vars_, roots)):
        if len(group) > limit:
            continue
        for where, edge in edges:
            added += walk.run(group, where, edge, [])
    return added


def _used(vars_: Vars, roots: list[Function]) -> set[Formula]:
    """The atoms that ``roots`` depend on, also inside their temporal atoms."""
    p = vars_.preds
    seen: set[str] = set()
    todo = [var for u in roots for var in p.bdd.support(u)]
    while todo:
        var = todo.pop()
        if var in seen:
            continue
        seen.add(var)
        for arg in p.defs.get(var, ("", ()))[1]:
            todo.extend(p.bdd.support(arg))
    return {p.atom_of[var] for var in seen}


def _groups(vars_: Vars, used: set[Formula]) -> list[list[Formula]]:
    """The atoms in ``used``, grouped by the counts they share (connected components);
    atoms over ``i`` and ``n`` alone (``MOD(2, 0)(i)``, ``MOD(2, 1)(n)``, ``i + 1 >= n``)
    join every group, after its own atoms."""
    for atom in used:  # the position residues take part as MOD literals of i
        if isinstance(atom, Mod) and atom.term == Position() and atom not in vars_.linear:
            vars_.linear[atom] = ("mod", (("i", 1),), (atom.modulus, atom.residue))
    linear = vars_.linear
    atoms = [
        a
        for a in linear
        if a in used and small_enough(linear[a][1], linear[a][2] if linear[a][0] == "geq" else 0)
    ]
    counts = {a: {var for var, _ in linear[a][1]} - {"i", "n"} for a in atoms}
    shared = [a for a in atoms if not counts[a]]
    counted = [a for a in atoms if counts[a]]
    parent = list(range(len(counted)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x in range(len(counted)):
        for y in range(x):
            if counts[counted[x]] & counts[counted[y]]:
                parent[find(x)] = find(y)
    groups: dict[int, list[Formula]] = {}
    for x, a in enumerate(counted):
        groups.setdefault(find(x), []).append(a)
    if not groups:
        return [shared] if shared else []
    return [group + shared for group in groups.values()]


class _Walk:
    """The depth-first walk of :func:`relate` over truth values, with its budget of integer
    programs."""

    def __init__(self, vars_: Vars, budget: int) -> None:
        self.vars = vars_
        self.budget = budget

    def run(
        self,
        group: list[Formula],
        where: Where,
        edge: Function,
        literals: list[tuple[Literal, bool]],
    ) -> int:
        """Facts added below the partial assignment ``literals`` (the i-th literal is the
        i-th atom of ``group``)."""
        self.budget -= 1
        if self.budget < 0:
            return 0
        if literals and not self.vars.feasible(literals, where):
            self.assume_core(group, literals, where, edge)
            return 1
        if len(literals) == len(group):
            return 0
        lit = self.vars.linear[group[len(literals)]]
        return sum(
            self.run(group, where, edge, [*literals, (lit, value)]) for value in (True, False)
        )

    def assume_core(
        self,
        group: list[Formula],
        literals: list[tuple[Literal, bool]],
        where: Where,
        edge: Function,
    ) -> None:
        """Assume "not" of a minimal infeasible part of ``literals``: facts are used only for
        predicates over their atoms, so a short fact helps more."""
        keep = list(range(len(literals)))
        for x in reversed(range(len(literals) - 1)):  # the last literal made it infeasible
            self.budget -= 1
            if self.budget < 0:  # a longer fact is still a fact
                break
            trial = [y for y in keep if y != x]
            if not self.vars.feasible([literals[y] for y in trial], where):
                keep = trial
        p = self.vars.preds
        cube = edge
        for y in keep:
            u = p.atom(group[y])
            cube = cube & (u if literals[y][1] else ~u)
        p.assume(~cube)

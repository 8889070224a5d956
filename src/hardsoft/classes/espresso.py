"""Espresso-style improvement of a two-level cover over a BDD care set.

:meth:`Predicates._cover <hardsoft.classes.boolean.Predicates._cover>` starts from the
Minato–Morreale ISOP, makes each cube prime (EXPAND) and drops cubes the others cover
(IRREDUNDANT). The ISOP's cubes follow the BDD's variable order, so a prime it reaches can be
a poor one. Espresso (Brayton et al. 1984) leaves such local minima by iterating

- **REDUCE**: shrink each cube to the smallest cube containing what only it covers (the
  supercube of its part of the on-set that the other cubes miss),
- **EXPAND**: grow it again into a prime, now dropping the most expensive literals first,
- **IRREDUNDANT**: drop cubes the others cover, the most expensive first,

and keeping the result while the cover's printed size falls. Each step is polynomial in the
cubes and atoms (BDD operations), not exponential like an exact minimum. Every cover it
returns lies between ``lower`` and ``upper`` (checked), so it is exact by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hardsoft.classes import budget

Cube = tuple[tuple[str, bool], ...]
ROUNDS = 4
"""At most this many reduce-expand-irredundant rounds per cover."""


class Cover:
    """The BDD operations one round needs, from the predicates that own the BDD."""

    def __init__(
        self,
        bdd: Any,
        cube: Callable[[Cube], Any],
        cost: Callable[[Cube], tuple[int, int]],
        atom_size: Callable[[str], int],
    ) -> None:
        self.bdd = bdd
        self.cube = cube
        self.cost = cost
        self.atom_size = atom_size

    def union(self, cubes: Sequence[Cube], skip: int | None = None) -> Any:
        out = self.bdd.false
        for k, c in enumerate(cubes):
            if k != skip:
                out = out | self.cube(c)
        return out

    def total(self, cubes: Sequence[Cube]) -> int:
        """The printed size of the cover as a sum of products (before factoring)."""
        ands = sum(max(len(c) - 1, 0) for c in cubes)
        return sum(self.cost(c)[0] for c in cubes) + ands + max(len(cubes) - 1, 0)


def improve(cubes: list[Cube], lower: Any, upper: Any, ops: Cover) -> list[Cube]:
    """A cover of ``[lower, upper]`` no larger (printed size) than ``cubes``, by rounds of
    reduce, expand and irredundant while they help."""
    best, best_cost = list(cubes), ops.total(cubes)
    if len(best) < 2:
        return best
    for _ in range(ROUNDS):
        budget.check()
        trial = _irredundant(
            [_expand(c, upper, ops) for c in _reduce(best, lower, ops)], lower, ops
        )
        cost = ops.total(trial)
        if cost >= best_cost or not _valid(trial, lower, upper, ops):
            break
        best, best_cost = trial, cost
    return best


def _valid(cubes: Sequence[Cube], lower: Any, upper: Any, ops: Cover) -> bool:
    cover = ops.union(cubes)
    return (lower & ~cover) == ops.bdd.false and (cover & ~upper) == ops.bdd.false


def _reduce(cubes: list[Cube], lower: Any, ops: Cover) -> list[Cube]:
    """Each cube, in turn, replaced by the supercube of the part of ``lower`` only it covers
    (given the cubes before it already reduced); a cube covering nothing alone is dropped."""
    out = list(cubes)
    keep = [True] * len(out)
    for k, c in enumerate(out):
        others = ops.union([x for j, x in enumerate(out) if keep[j] and j != k])
        duty = ops.cube(c) & lower & ~others
        if duty == ops.bdd.false:
            keep[k] = False
            continue
        out[k] = _supercube(duty, c, ops)
    return [c for c, kept in zip(out, keep) if kept]


def _supercube(u: Any, within: Cube, ops: Cover) -> Cube:
    """The smallest cube containing ``u``: the literals ``u`` implies (a subset-superset of
    ``within``'s literals, since ``u`` lies inside ``within``)."""
    lits = []
    for var in sorted(ops.bdd.support(u)):
        v = ops.bdd.var(var)
        if (u & ~v) == ops.bdd.false:
            lits.append((var, True))
        elif (u & v) == ops.bdd.false:
            lits.append((var, False))
    return tuple(sorted(lits))


def _expand(cube: Cube, upper: Any, ops: Cover) -> Cube:
    """Drop literals, the most expensive first, while the cube stays inside ``upper``."""
    lits = list(cube)
    for lit in sorted(cube, key=lambda x: (-ops.atom_size(x[0]) - (0 if x[1] else 1), x)):
        trial = tuple(x for x in lits if x != lit)
        if (ops.cube(trial) & ~upper) == ops.bdd.false:
            lits = list(trial)
    return tuple(lits)


def _irredundant(cubes: list[Cube], lower: Any, ops: Cover) -> list[Cube]:
    """Drop cubes the others cover (on ``lower``), the most expensive first."""
    kept = list(dict.fromkeys(cubes))
    for cube in sorted(kept, key=lambda c: (-ops.cost(c)[0], c)):
        rest = [c for c in kept if c != cube]
        if (lower & ~ops.union(rest)) == ops.bdd.false:
            kept = rest
    return kept

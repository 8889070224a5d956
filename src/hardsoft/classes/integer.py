"""Small integer programs of the counting decompiler, decided exactly and mostly without a solver.

The counting decompiler (:mod:`.conditions`, :mod:`.relations`) asks thousands of times per
model whether some integer point satisfies ``A x <= b`` (rows over ``i``, ``n`` and a few
counts), bounds, and ``L mod m = r`` / ``!=`` literals. Each answer must be exact: it prunes
classes and becomes a fact of the formulas. :class:`IntegerProgram` holds one such problem in
integers and :class:`Decider` answers it in this order, every step exact:

1. **Memo.** The same problem (the same integer data) has the same answer.
2. **Witness.** A small integer point (``n`` up to a few, counts up to ``n``) that satisfies
   every row, bound and MOD literal, checked in integer arithmetic, proves feasibility.
3. **Fourier–Motzkin.** For each choice of residues the MOD literals allow, eliminating the
   variables one at a time from the rows (nonnegative combinations, each divided by the gcd
   of its coefficients with the right side rounded down: a cut every integer point
   satisfies) down to a contradiction ``0 <= -1`` proves that no integer point exists.
   Given up when the rows grow past a cap.
4. **A larger witness** (``n`` up to about 12 with two counts).
5. **The solver.** What is left goes to HiGHS (``scipy.optimize.milp``), as before.

Steps 2 to 4 only ever answer where the answer is proven, so the result is the solver's
(tests/test_classes_integer.py compares them on random problems).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import product
from typing import ClassVar

import numpy as np

WITNESS_POINTS = 20_000
"""At most about this many small points are tried as witnesses per problem."""
SMALL_TOP = 4
"""Witnesses are first looked for with ``n <= SMALL_TOP`` (most feasible programs have one)."""
FM_ROWS = 400
"""Fourier–Motzkin gives up (the solver decides) once this many rows are in play."""
RESIDUE_CHOICES = 64
"""At most this many choices of residues for the MOD literals are refuted one by one."""
DIVE_LPS = 32
"""At most this many linear programs per rounding dive of :func:`lattice_witness`."""
MEMO_SIZE = 200_000
"""The shared memo is emptied when it reaches this many programs."""

Row = tuple[tuple[int, ...], int]
"""``(a, b)``: the inequality ``a · x <= b`` in integers."""


@dataclass(frozen=True)
class IntegerProgram:
    """Is there an integer ``x`` with ``rows``, ``lower <= x <= upper`` (None: unbounded)
    and every ``mods`` literal ``(a, m, r, holds)``: ``a · x mod m == r`` if ``holds`` else
    ``!= r``? Variables ``x[0]`` and ``x[1]`` are ``i`` and ``n`` (``1 <= i <= n`` among the
    rows), the others counts with ``0 <= c <= n``."""

    rows: tuple[Row, ...]
    lower: tuple[int | None, ...]
    upper: tuple[int | None, ...]
    mods: tuple[tuple[tuple[int, ...], int, int, bool], ...] = ()

    @property
    def width(self) -> int:
        return len(self.lower)


class Decider:
    """Exact decisions of :class:`IntegerProgram` s, counting how each was decided
    (``memo``, ``witness``, ``refuted``, ``solver``). The memo is shared by every decider
    (an answer depends on the program's data alone) and bounded by :data:`MEMO_SIZE`."""

    _memo: ClassVar[dict[IntegerProgram, bool]] = {}

    def __init__(self, solve: Callable[[IntegerProgram], bool]) -> None:
        self._solve = solve
        self.counts = {"memo": 0, "witness": 0, "refuted": 0, "solver": 0}

    def __call__(self, prog: IntegerProgram) -> bool:
        known = self._memo.get(prog)
        if known is not None:
            self.counts["memo"] += 1
            return known
        answer = self._decide(prog)
        if len(self._memo) >= MEMO_SIZE:
            self._memo.clear()
        self._memo[prog] = answer
        return answer

    def _decide(self, prog: IntegerProgram) -> bool:
        if witness(prog, SMALL_TOP) is not None:  # most feasible programs have tiny points
            self.counts["witness"] += 1
            return True
        if refuted(prog):
            self.counts["refuted"] += 1
            return False
        if witness(prog) is not None or lattice_witness(prog) is not None:
            self.counts["witness"] += 1
            return True
        self.counts["solver"] += 1
        return self._solve(prog)


# ---------------------------------------------------------------------------- witnesses


def witness(prog: IntegerProgram, top: int | None = None) -> np.ndarray | None:
    """A small integer point satisfying ``prog`` (checked exactly), or None if none of the
    tried points does: ``1 <= i <= n <= top`` and every count in ``0..n``, with ``top`` the
    largest that keeps about :data:`WITNESS_POINTS` points unless given."""
    if top is None:
        k, top = prog.width - 2, 1
        while top < 64 and (top + 1) * (top + 2) // 2 * (top + 2) ** k <= WITNESS_POINTS:
            top += 1
    grid = _grid(prog.width, prog.lower, prog.upper, top)
    if grid is None:
        return None
    a = np.array([a for a, _ in prog.rows], dtype=np.int64).reshape(-1, prog.width)
    b = np.array([b for _, b in prog.rows], dtype=np.int64)
    ok = (grid @ a.T <= b).all(axis=1)
    for coefs, m, r, holds in prog.mods:
        rem = (grid @ np.array(coefs, dtype=np.int64)) % m
        ok &= (rem == r) if holds else (rem != r)
    hits = np.flatnonzero(ok)
    return grid[hits[0]] if len(hits) else None


@lru_cache(maxsize=32)  # at most about 1.3 MB each
def _grid(
    width: int, lower: tuple[int | None, ...], upper: tuple[int | None, ...], top: int
) -> np.ndarray | None:
    """Every point with ``1 <= i <= n <= top`` and counts in ``0..n``, within the bounds."""
    axes = []
    for v in range(width):
        lo, hi = (1, top) if v < 2 else (0, top)
        low, high = lower[v], upper[v]
        lo = lo if low is None else max(lo, low)
        hi = hi if high is None else min(hi, high)
        if lo > hi:
            return None
        axes.append(np.arange(lo, hi + 1, dtype=np.int64))
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, width)
    grid = grid[(grid[:, 0] <= grid[:, 1]) & (grid[:, 2:] <= grid[:, 1:2]).all(axis=1)]
    grid.flags.writeable = False
    return grid if len(grid) else None


def lattice_witness(prog: IntegerProgram) -> np.ndarray | None:
    """A witness of ``prog`` found where its equalities (a row and its negation, and each
    true MOD literal ``L = m q + r``) leave only large points (``c0 + c1 = i`` and
    ``31467 (i - 1) = 306404 c0`` has none below i = 306405, where HiGHS's branch and bound
    took a minute): the equalities' integer solutions ``x = x0 + U y`` (Hermite column
    reduction), a point of the linear relaxation in ``y``, and every integer ``y`` in a box
    around it, each checked exactly in ``x``. None if none is found (or no integer solution
    of the equalities exists: then the refutation and the solver decide)."""
    w = prog.width
    equalities, mods = _equalities(prog)
    if not equalities:
        return None
    width = w + len(mods)
    solved = _solve_equalities(equalities, width)
    if solved is None:
        return None
    x0, basis = solved
    a, b = _all_rows(prog, width)
    a_y, b_y = a @ basis, b - a @ x0

    def exact(y: np.ndarray) -> np.ndarray | None:
        x = x0 + basis @ y
        if not (a @ x <= b).all():
            return None
        for coefs, m, r, holds in prog.mods:
            if ((int(np.dot(coefs, x[:w])) % m) == r) != holds:
                return None
        return x[:w]

    return _dive(a_y, b_y, {}, exact, [DIVE_LPS])


def _dive(
    a: np.ndarray,
    b: np.ndarray,
    fixed: dict[int, int],
    exact: Callable[[np.ndarray], np.ndarray | None],
    budget: list[int],
) -> np.ndarray | None:
    """Round a point of the relaxation ``a y <= b`` one coordinate at a time (floor or
    ceiling, re-solving with the rounded ones fixed), the coarsest direction first; the
    integer point reached is checked by ``exact``."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    point = _relaxed_point(a, b, fixed)
    if point is None:
        return None
    free = [k for k in range(a.shape[1]) if k not in fixed]
    if not free:
        return exact(np.array([fixed[k] for k in range(a.shape[1])], dtype=np.int64))
    k = max(free, key=lambda k: (np.abs(a[:, k]).sum(), -k))  # the coarsest direction
    lo = math.floor(point[k] + 1e-9)
    for value in sorted({lo, lo + 1}, key=lambda v: abs(v - point[k])):
        found = _dive(a, b, {**fixed, k: value}, exact, budget)
        if found is not None:
            return found
    return None


def _equalities(prog: IntegerProgram) -> tuple[list[Row], list[int]]:
    """The equalities ``a·x = b`` of ``prog`` (over its variables and one quotient per true
    MOD literal, in that order) and the indices of those MOD literals."""
    mods = [k for k, (*_, holds) in enumerate(prog.mods) if holds]
    width = prog.width + len(mods)
    pad = (0,) * len(mods)
    rows = {_normal(a, b) for a, b in prog.rows}
    out = [  # one of each pair a·x <= b, -a·x <= -b
        (a + pad, b) for a, b in rows if (_neg(a), -b) in rows and a > _neg(a)
    ]
    for q, k in enumerate(mods):
        coefs, m, r, _ = prog.mods[k]
        out.append((coefs + tuple(-m if j == q else 0 for j in range(len(mods))), r))
    assert all(len(a) == width for a, _ in out)
    return out, mods


def _neg(a: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-x for x in a)


def _all_rows(prog: IntegerProgram, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``prog``'s rows and bounds as ``A x <= b`` over ``width`` variables."""
    a = [list(r) + [0] * (width - prog.width) for r, _ in prog.rows]
    b = [rhs for _, rhs in prog.rows]
    for v in range(prog.width):
        if prog.lower[v] is not None:
            a.append([-int(j == v) for j in range(width)])
            b.append(-prog.lower[v])  # type: ignore[operator]
        if prog.upper[v] is not None:
            a.append([int(j == v) for j in range(width)])
            b.append(prog.upper[v])  # type: ignore[arg-type]
    return np.array(a, dtype=np.int64).reshape(-1, width), np.array(b, dtype=np.int64)


def _solve_equalities(rows: list[Row], width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Every integer solution of the equalities as ``x0 + U y`` (``y`` any integers), by
    unimodular column operations (extended gcd); None if there is none."""
    x0 = np.zeros(width, dtype=object)
    basis = np.identity(width, dtype=object).astype(object)
    for a, b in rows:
        row = [sum(a[j] * basis[j, k] for j in range(width)) for k in range(basis.shape[1])]
        rhs = b - sum(a[j] * x0[j] for j in range(width))
        cols = basis.shape[1]
        while sum(1 for v in row if v) > 1:  # gcd by column operations
            k = min((k for k in range(cols) if row[k]), key=lambda k: abs(row[k]))
            for j in range(cols):
                if j != k and row[j]:
                    q = row[j] // row[k]
                    row[j] -= q * row[k]
                    basis[:, j] -= q * basis[:, k]
        nonzero = [k for k in range(cols) if row[k]]
        if not nonzero:
            if rhs != 0:
                return None
            continue
        (k,) = nonzero
        if rhs % row[k]:
            return None
        x0 = x0 + basis[:, k] * (rhs // row[k])
        basis = np.delete(basis, k, axis=1)
    if max((abs(int(v)) for v in [*x0, *basis.ravel()]), default=0) > 2**40:
        return None
    return x0.astype(np.int64), basis.astype(np.int64).reshape(width, -1)


def _relaxed_point(a: np.ndarray, b: np.ndarray, fixed: dict[int, int]) -> np.ndarray | None:
    """A point of ``a y <= b`` over the reals with ``fixed`` coordinates (HiGHS's linear
    programming), or None."""
    from scipy.optimize import linprog

    if a.shape[1] == 0:
        return np.zeros(0)
    bounds = [(fixed[k], fixed[k]) if k in fixed else (None, None) for k in range(a.shape[1])]
    res = linprog(np.zeros(a.shape[1]), A_ub=a, b_ub=b, bounds=bounds, method="highs")
    return res.x if res.status == 0 else None


# ---------------------------------------------------------------------------- refutation


def refuted(prog: IntegerProgram, cap: int = FM_ROWS) -> bool:
    """True if no integer point satisfies ``prog``, proven by Fourier–Motzkin: the MOD
    literals on one linear form leave a set of residues, and for each choice of residues
    (at most :data:`RESIDUE_CHOICES`) the rows, bounds and equalities ``L - m q = r`` derive
    ``0 <= b < 0`` with integer rounding. False if that is not shown (no proof either way)."""
    allowed: dict[tuple[tuple[int, ...], int], set[int]] = {}
    for coefs, m, r, holds in prog.mods:
        residues = allowed.setdefault((coefs, m), set(range(m)))
        residues &= {r} if holds else set(range(m)) - {r}
    choices = list(allowed.items())
    if math.prod(len(rs) for _, rs in choices) > RESIDUE_CHOICES:
        return False
    for pick in product(*(sorted(rs) for _, rs in choices)):
        equalities = [(coefs, m, r) for ((coefs, m), _), r in zip(choices, pick)]
        if not _fm_refutes(prog, equalities, cap):
            return False
    return True  # every choice refuted (or no residue left for some form)


def _fm_refutes(
    prog: IntegerProgram, equalities: list[tuple[tuple[int, ...], int, int]], cap: int
) -> bool:
    """Fourier–Motzkin on ``prog``'s rows and bounds with ``a·x - m q = r`` for each
    equality (a fresh integer ``q`` each): True if it derives a contradiction."""
    width = prog.width + len(equalities)
    unit = [tuple(int(v == j) for v in range(width)) for j in range(width)]
    pad = (0,) * len(equalities)
    items = [(a + pad, b) for a, b in prog.rows]
    for v in range(prog.width):
        lo, hi = prog.lower[v], prog.upper[v]
        if lo is not None:
            items.append((tuple(-x for x in unit[v]), -lo))
        if hi is not None:
            items.append((unit[v], hi))
    for q, (coefs, m, r) in enumerate(equalities):
        row = coefs + tuple(-m if j == q else 0 for j in range(len(equalities)))
        items += [(row, r), (tuple(-x for x in row), -r)]
    rows = _tightest({_normal(a, b) for a, b in items})
    for v in range(width):
        if any(not any(a) and b < 0 for a, b in rows):
            return True
        rows = {(a, b) for a, b in rows if any(a)}
        if len(rows) > cap:
            return False
        rows = _eliminate(rows, v)
    return any(not any(a) and b < 0 for a, b in rows)


# ---------------------------------------------------------------------------- linear ranges


def linear_range(
    prog: IntegerProgram, objective: tuple[int, ...], cap: int = FM_ROWS
) -> tuple[Fraction | None, Fraction | None] | None:
    """The least and greatest value of ``objective · x`` over the real points of ``prog``'s
    rows and bounds (its MOD literals are ignored), exactly, as Fractions (None: unbounded
    on that side; both None: no real point), by Fourier–Motzkin without rounding (a new
    variable ``z = objective · x``, every other variable eliminated). None if the rows
    grow past ``cap`` (then a linear programming solver decides)."""
    w = prog.width
    a, b = _all_rows(prog, w)
    items = [(tuple(int(v) for v in row) + (0,), int(rhs)) for row, rhs in zip(a, b)]
    items += [(tuple(objective) + (-1,), 0), (tuple(-c for c in objective) + (1,), 0)]
    rows = _tightest({_scaled(r, rhs) for r, rhs in items})
    for v in range(w):
        if any(not any(r) and rhs < 0 for r, rhs in rows):
            return None, None
        rows = {(r, rhs) for r, rhs in rows if any(r)}
        if len(rows) > cap:
            return None
        rows = _eliminate(rows, v, rounding=False)
    if any(not any(r) and rhs < 0 for r, rhs in rows):
        return None, None
    ups = [Fraction(rhs, r[w]) for r, rhs in rows if r[w] > 0]
    downs = [Fraction(rhs, r[w]) for r, rhs in rows if r[w] < 0]
    low, high = max(downs, default=None), min(ups, default=None)
    if low is not None and high is not None and low > high:
        return None, None
    return low, high


def _scaled(a: tuple[int, ...], b: int) -> Row:
    """``a·x <= b`` divided by the gcd of all its numbers (the same real points)."""
    g = math.gcd(*a, b)
    return (tuple(x // g for x in a), b // g) if g else (a, b)


def _normal(a: tuple[int, ...], b: int) -> Row:
    """``a·x <= b`` divided by the gcd of ``a``, the right side rounded down (valid for
    integer ``x``)."""
    g = math.gcd(*a)
    return (tuple(x // g for x in a), b // g) if g else (a, b)


def _eliminate(rows: set[Row], v: int, rounding: bool = True) -> set[Row]:
    """The rows without variable ``v``: those not using it, and every positive combination of
    an upper and a lower bound on it (normalised: with integer rounding, or for the same
    real points without)."""
    normal = _normal if rounding else _scaled
    keep = {(a, b) for a, b in rows if a[v] == 0}
    ups = [(a, b) for a, b in rows if a[v] > 0]
    downs = [(a, b) for a, b in rows if a[v] < 0]
    for (a, b), (c, d) in product(ups, downs):
        s, t = -c[v], a[v]
        keep.add(normal(tuple(s * x + t * y for x, y in zip(a, c)), s * b + t * d))
    return _tightest(keep)


def _tightest(rows: set[Row]) -> set[Row]:
    """One row per coefficient vector, the one with the smallest right side."""
    best: dict[tuple[int, ...], int] = {}
    for a, b in rows:
        if a not in best or b < best[a]:
            best[a] = b
    return {(a, b) for a, b in best.items()}


__all__ = ["Decider", "IntegerProgram", "lattice_witness", "linear_range", "refuted", "witness"]

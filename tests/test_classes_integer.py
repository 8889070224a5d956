"""The exact shortcuts of the counting decompiler's integer programs (classes/integer.py):
every answer they give agrees with HiGHS (scipy's ``milp``) on random programs, and each
shortcut is exercised."""

from __future__ import annotations

import numpy as np
import pytest

from hardsoft.classes.conditions import solve_milp
from hardsoft.classes.integer import (
    Decider,
    IntegerProgram,
    lattice_witness,
    linear_range,
    refuted,
    witness,
)


def _satisfies(prog: IntegerProgram, x: np.ndarray) -> bool:
    """``x`` checked against every row, bound and MOD literal in Python integers."""
    xs = [int(v) for v in x]
    for a, b in prog.rows:
        if sum(c * v for c, v in zip(a, xs)) > b:
            return False
    for v, (lo, hi) in enumerate(zip(prog.lower, prog.upper)):
        if (lo is not None and xs[v] < lo) or (hi is not None and xs[v] > hi):
            return False
    for a, m, r, holds in prog.mods:
        if (sum(c * v for c, v in zip(a, xs)) % m == r) != holds:
            return False
    return True


def random_program(rng: np.random.Generator) -> IntegerProgram:
    """A program shaped like the decompiler's: ``1 <= i <= n``, prefix counts ``c <= i``,
    then random rows (some of them equalities) and MOD literals with small numbers."""
    k = int(rng.integers(0, 3))
    width = 2 + k
    unit = [tuple(int(v == j) for v in range(width)) for j in range(width)]

    def minus(*rows: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a - b for a, b in zip(*rows))

    rows = [(minus(unit[0], unit[1]), 0)] + [(minus(unit[2 + c], unit[0]), 0) for c in range(k)]
    for _ in range(int(rng.integers(1, 4))):
        a = tuple(int(x) for x in rng.integers(-3, 4, size=width))
        b = int(rng.integers(-6, 7))
        rows.append((a, b))
        if rng.random() < 0.25:
            rows.append((tuple(-x for x in a), -b))  # an equality
    mods = []
    for _ in range(int(rng.integers(0, 3))):
        a = tuple(int(x) for x in rng.integers(0, 3, size=width))
        m = int(rng.integers(2, 4))
        mods.append((a, m, int(rng.integers(0, m)), bool(rng.random() < 0.5)))
    first = int(rng.integers(0, 3))
    lower = ((1, 2, 1)[first], 1) + (0,) * k
    upper = ((None, None, 1)[first], None) + (None,) * k
    return IntegerProgram(tuple(rows), lower, upper, tuple(mods))


def test_shortcuts_agree_with_the_solver_on_random_programs() -> None:
    rng = np.random.default_rng(7)
    seen = {"witness": 0, "refuted": 0}
    for _ in range(150):
        prog = random_program(rng)
        truth = solve_milp(prog)
        point = witness(prog)
        if point is not None:
            seen["witness"] += 1
            assert truth and _satisfies(prog, point), prog
        if refuted(prog):
            seen["refuted"] += 1
            assert not truth, prog
        found = lattice_witness(prog)
        if found is not None:
            assert truth and _satisfies(prog, found), prog
        decider = Decider(solve_milp)
        decider._memo.clear()
        assert decider(prog) == truth, prog
    assert seen["witness"] > 25 and seen["refuted"] > 25  # both shortcuts do work here


def test_lattice_witness_finds_a_large_point() -> None:
    """``c0 + c1 = i`` and ``31467 (i - 1) = 306404 c0`` (with i >= 2): its least point has
    i = 306405, beyond any small witness (HiGHS took a minute on it, from a random counting
    model's readout)."""
    prog = IntegerProgram(
        rows=(
            ((1, -1, 0, 0), 0),
            ((-1, 0, 1, 0), 0),
            ((-1, 0, 0, 1), 0),
            ((-1, 0, 1, 1), 0),
            ((1, 0, -1, -1), 0),
            ((-153856, 0, -121081, 185323), 31467),
            ((153856, 0, 121081, -185323), -31467),
        ),
        lower=(2, 1, 0, 0),
        upper=(None, None, None, None),
    )
    assert witness(prog) is None
    point = lattice_witness(prog)
    assert point is not None and _satisfies(prog, point)
    assert int(point[0]) >= 306405


@pytest.mark.parametrize("holds", [True, False])
def test_residues_refute(holds: bool) -> None:
    """``i`` even, odd (or neither of them): no integer point; ``2 c = 2 i + 1``: none."""
    parity = IntegerProgram(
        rows=(((1, -1), 0),),
        lower=(1, 1),
        upper=(None, None),
        mods=(((1, 0), 2, 0, holds), ((1, 0), 2, 1, holds)),
    )
    assert refuted(parity) and not solve_milp(parity)
    odd = IntegerProgram(
        rows=(((1, -1, 0), 0), ((-2, 0, 2), 1), ((2, 0, -2), -1)),
        lower=(1, 1, 0),
        upper=(None, None, None),
    )
    assert refuted(odd) and not solve_milp(odd)


def test_memo_answers_a_repeated_program() -> None:
    calls: list[IntegerProgram] = []

    def solver(prog: IntegerProgram) -> bool:
        calls.append(prog)
        return solve_milp(prog)

    decider = Decider(solver)
    decider._memo.clear()
    prog = IntegerProgram(rows=(((1, -1), 0), ((0, 1), 3)), lower=(1, 1), upper=(None, None))
    assert decider(prog) and decider(prog)
    assert decider.counts["memo"] == 1 and decider.counts["witness"] == 1 and not calls


def test_linear_range_agrees_with_linear_programming() -> None:
    """The exact range of a linear form (Fourier–Motzkin) against HiGHS's linprog."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(80):
        prog = random_program(rng)
        objective = tuple(int(x) for x in rng.integers(-3, 4, size=prog.width))
        exact = linear_range(prog, objective)
        if exact is None:
            continue
        a = [list(r) for r, _ in prog.rows]
        b = [rhs for _, rhs in prog.rows]
        bounds = list(zip(prog.lower, prog.upper))
        lo = linprog(objective, A_ub=a, b_ub=b, bounds=bounds, method="highs")
        hi = linprog([-c for c in objective], A_ub=a, b_ub=b, bounds=bounds, method="highs")
        want = (lo.fun if lo.status == 0 else None, -hi.fun if hi.status == 0 else None)
        for got, ref in zip(exact, want):
            assert (got is None) == (ref is None), (prog, objective, exact, want)
            if got is not None:
                assert abs(float(got) - ref) < 1e-6, (prog, objective, exact, want)
        checked += 1
    assert checked > 60


def test_a_program_highs_cannot_finish_is_kept_as_feasible() -> None:
    """An attack found this feasible program (x = (1, 32, 0, 1, 0, 20, 0, 8)) that the cheap
    steps leave open and HiGHS did not finish in minutes, past any --budget: the solver's
    limits end it, and reaching them counts as feasible (the sound answer)."""
    rows = (
        ((1, -1, 0, 0, 0, 0, 0, 0), 0), ((-1, 0, 1, 0, 0, 0, 0, 0), 0),
        ((1, -1, 0, 1, 0, 0, 0, 0), 1), ((-1, 0, 0, 0, 1, 0, 0, 0), 0),
        ((1, -1, 0, 0, 0, 1, 0, 0), 1), ((-1, 0, 0, 0, 0, 0, 1, 0), 0),
        ((1, -1, 0, 0, 0, 0, 0, 1), 1), ((-1, 0, 1, 0, 1, 0, 0, 0), 0),
        ((-1, 0, 1, 0, 0, 0, 1, 0), 0), ((1, -1, 0, 1, 0, 1, 0, 0), 1),
        ((1, -1, 0, 1, 0, 0, 0, 1), 1), ((-1, 0, 0, 0, 1, 0, 1, 0), 0),
        ((1, -1, 0, 0, 0, 1, 0, 1), 1),
        ((0, 256, 2579, 2579, -1552, -1552, 2604, 2604), 563),
        ((0, -256, -2579, -2579, 1552, 1552, -2604, -2604), -563),
    )  # fmt: skip
    prog = IntegerProgram(rows=rows, lower=(1, 1, 0, 0, 0, 0, 0, 0), upper=(None,) * 8)
    point = (1, 32, 0, 1, 0, 20, 0, 8)
    assert all(sum(a * x for a, x in zip(row, point)) <= b for row, b in rows)
    assert not refuted(prog)
    assert solve_milp(prog)

"""Random B-RASP programs, for tests that compare the interpreter, the compiled models and
the decompiled programs (as :func:`hardsoft.logic.random_formula` does for formulas).

Every statement reads only earlier ones; attention statements draw their tie and mask
uniformly, and their score and value mix atoms at i and at j, so query classes (scores that
depend on i), values that read i and defaults other than 0 all occur.
"""

from __future__ import annotations

import numpy as np

from hardsoft.programs.brasp.parser import check
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
)


def _expr(rng: np.random.Generator, names: list[str], vars_: list[Var], depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.3:
        if rng.random() < 0.08:
            return Const(bool(rng.integers(2)))
        return Atom(str(rng.choice(names)), vars_[int(rng.integers(len(vars_)))])
    kind = int(rng.integers(3))
    if kind == 0:
        return Not(_expr(rng, names, vars_, depth - 1))
    left, right = _expr(rng, names, vars_, depth - 1), _expr(rng, names, vars_, depth - 1)
    return And(left, right) if kind == 1 else Or(left, right)


def random_program(
    seed: int, alphabet: str = "ab", statements: int = 5, depth: int = 2, p_attend: float = 0.6
) -> Program:
    """A random checked program: the declarations of ``alphabet``, then ``statements``
    definitions (a fraction ``p_attend`` of them attention statements) of depth ``depth``."""
    rng = np.random.default_rng(seed)
    out: list[Statement] = [Declare(declaration_name(a), k + 1, a) for k, a in enumerate(alphabet)]
    names = [s.name for s in out]
    for k in range(statements):
        name = f"s{k}"
        line = len(out) + 1
        if rng.random() < p_attend:
            tie = Tie.LEFTMOST if rng.random() < 0.5 else Tie.RIGHTMOST
            mask = list(BMask)[int(rng.integers(len(BMask)))]
            both = [Var.I, Var.J, Var.J]
            score = _expr(rng, names, both, depth)
            value = _expr(rng, names, both, depth)
            default = _expr(rng, names, [Var.I], 1) if rng.random() < 0.4 else Const(False)
            out.append(Attend(name, line, tie, mask, score, value, default))
        else:
            out.append(Define(name, line, _expr(rng, names, [Var.I], depth)))
        names.append(name)
    return check(out, tuple(alphabet))

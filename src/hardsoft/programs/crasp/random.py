"""Random well-typed C-RASP programs, for property tests (interpreter against the translation,
the compiled models and the decompiled programs), like :mod:`hardsoft.logic.random` for
formulas.

Every operator of the grammar can appear: symbols, ``true``/``false``, ``! && ||``, the six
comparisons, ``#`` and ``#[PRED]`` with the built-in predicates, integers, ``+ -``, ``K *``,
``min``, ``max`` and ``c1 if b else c2``, and references to earlier statements of either
type. The last statement is Boolean.
"""

from __future__ import annotations

import numpy as np

from hardsoft.programs.crasp.syntax import (
    COMPARE_OPS,
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
    Sym,
    Var,
    to_text,
)

__all__ = ["IMPORTS", "random_program", "random_program_text"]

IMPORTS = ("pred", "pred2", "prev2", "pos_even", "pos_mod_3_1")
"""The predicates random programs import (both arities, both binary families)."""
_BINARY = ("pred", "pred2", "prev2")
_UNARY = ("pos_even", "pos_mod_3_1")


class _Gen:
    def __init__(self, rng: np.random.Generator, alphabet: str, guards: bool) -> None:
        self.rng, self.alphabet, self.guards = rng, alphabet, guards
        self.bools: list[str] = []
        self.counts: list[str] = []

    def pick(self, options: list) -> object:
        return options[int(self.rng.integers(len(options)))]

    def boolean(self, depth: int) -> Expr:
        r = self.rng.random()
        if depth <= 0 or r < 0.25:
            leaves: list[Expr] = [Sym(a) for a in self.alphabet]
            leaves += [Var(n) for n in self.bools]
            if self.guards:
                leaves += [Var(p) for p in _UNARY]
            if self.rng.random() < 0.05:
                return BoolLit(bool(self.rng.random() < 0.5))
            return self.pick(leaves)  # type: ignore[return-value]
        if r < 0.4:
            return Not(self.boolean(depth - 1))
        if r < 0.65:
            op = "&&" if self.rng.random() < 0.5 else "||"
            return Logic(op, self.boolean(depth - 1), self.boolean(depth - 1))
        op = str(self.pick(list(COMPARE_OPS)))
        return Compare(op, self.count(depth - 1), self.count(depth - 1))

    def count(self, depth: int) -> Expr:
        r = self.rng.random()
        if depth <= 0 or r < 0.3:
            if self.counts and self.rng.random() < 0.4:
                return Var(str(self.pick(self.counts)))
            if self.rng.random() < 0.3:
                return Int(int(self.rng.integers(0, 4)))
            return self.counted(depth)
        if r < 0.5:
            return self.counted(depth)
        if r < 0.7:
            op = "+" if self.rng.random() < 0.5 else "-"
            return Arith(op, self.count(depth - 1), self.count(depth - 1))
        if r < 0.8:
            return Scale(int(self.rng.integers(2, 4)), self.count(depth - 1))
        if r < 0.9:
            op = "min" if self.rng.random() < 0.5 else "max"
            return Extreme(op, self.count(depth - 1), self.count(depth - 1))
        return IfElse(self.count(depth - 1), self.boolean(depth - 1), self.count(depth - 1))

    def counted(self, depth: int) -> Expr:
        guard = None
        if self.guards and self.rng.random() < 0.3:
            guard = str(self.pick(list(_BINARY)))
        return Count(self.boolean(max(depth - 1, 0)), guard)


def random_program(
    rng: np.random.Generator,
    *,
    alphabet: str = "ab",
    statements: int = 4,
    depth: int = 3,
    guards: bool = True,
) -> list[tuple[str, Expr]]:
    """``statements`` named expressions (``s1``, ``s2``, ...; the last Boolean), each of
    depth at most ``depth``; ``guards``: use the imported predicates of :data:`IMPORTS`."""
    g = _Gen(rng, alphabet, guards)
    out: list[tuple[str, Expr]] = []
    for k in range(1, statements + 1):
        name = f"s{k}"
        if k < statements and rng.random() < 0.4:
            out.append((name, g.count(depth)))
            g.counts.append(name)
        else:
            out.append((name, g.boolean(depth)))
            g.bools.append(name)
    return out


def random_program_text(rng: np.random.Generator, **options: object) -> str:
    """A random program as the text of a ``.cr`` file (imports and an alphabet comment)."""
    alphabet = str(options.get("alphabet", "ab"))
    stmts = random_program(rng, **options)  # type: ignore[arg-type]
    lines = [f"// alphabet: {alphabet}"]
    if options.get("guards", True):
        lines += [f"#import {p}" for p in IMPORTS]
    lines += [f"{name} = {to_text(e)}" for name, e in stmts]
    return "\n".join(lines) + "\n"

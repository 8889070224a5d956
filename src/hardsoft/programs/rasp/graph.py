"""The expressions of a RASP program in order, with names that identify them across loads.

Statement names are the SOps' names (``.named()``, or Tracr's default ``map``,
``aggregate``, ...), made unique in program order by a suffix (``map``, ``map_2``): they must
not depend on ``unique_id``, which differs each time a file is loaded, because a compiled
model's outputs name the statements that ``check --program`` reads back.
"""

from __future__ import annotations

from hardsoft.errors import HardsoftError
from hardsoft.programs.rasp import api as R

MAX_DEPTH = 250
"""How long a chain of operations a RASP program may have: the interpreter and the lowering
walk the program recursively, a few calls per operation, and Python's stack holds about
1000 (a chain of 450 ``&`` was a RecursionError). Measured over the graph, so an SOp used
twice is counted once."""


def topological(program: R.SOp) -> list[R.RASPExpr]:
    """Every expression ``program`` depends on (SOps and selectors), children first, each
    once, in a deterministic order (depth first, children in order)."""
    order: list[R.RASPExpr] = []
    seen: set[int] = set()
    stack: list[tuple[R.RASPExpr, bool]] = [(program, False)]
    while stack:
        expr, done = stack.pop()
        if done:
            order.append(expr)
            continue
        if expr.unique_id in seen:
            continue
        seen.add(expr.unique_id)
        stack.append((expr, True))
        for child in reversed(list(expr.children)):
            if child.unique_id not in seen:
                stack.append((child, False))
    return order


def check_depth(program: R.SOp, where: str) -> int:
    """The length of the program's longest chain of operations (its ``topological`` order,
    no recursion); longer than :data:`MAX_DEPTH` is a one-line error naming the limit."""
    depth: dict[int, int] = {}
    for expr in topological(program):
        depth[expr.unique_id] = 1 + max((depth[c.unique_id] for c in expr.children), default=0)
    deepest = depth[program.unique_id]
    if deepest > MAX_DEPTH:
        raise HardsoftError(
            f"{where} is {deepest} operations deep, more than {MAX_DEPTH} (the depth limit of "
            "RASP programs: the interpreter and the compiler walk a program recursively)"
        )
    return deepest


def statements(program: R.SOp) -> list[tuple[str, R.SOp]]:
    """The program's SOps in order (the output last) with their unique statement names."""
    sops = [e for e in topological(program) if isinstance(e, R.SOp)]
    used: dict[str, int] = {}
    out = []
    for s in sops:
        base = s.name
        used[base] = used.get(base, 0) + 1
        out.append((base if used[base] == 1 else f"{base}_{used[base]}", s))
    names = [nm for nm, _ in out]
    if len(set(names)) != len(names):  # a user's name equal to a generated one ("map_2")
        out = [(f"{nm}#{k}" if names.count(nm) > 1 else nm, s) for k, (nm, s) in enumerate(out)]
    return out

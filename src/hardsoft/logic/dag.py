"""Children-first traversal of a DAG, shared by the logic AST and the compiler's IR."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def topological(roots: Iterable[T], children: Callable[[T], Iterable[T]]) -> list[T]:
    """The distinct nodes reachable from ``roots``, each after all of its children (children
    in their given order, roots in theirs). Iterative, so deep DAGs do not hit the recursion
    limit, and linear in the number of distinct nodes and edges."""
    order: list[T] = []
    seen: set[T] = set()
    stack: list[tuple[T, bool]] = [(root, False) for root in reversed(list(roots))]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            if current not in seen:
                seen.add(current)
                order.append(current)
            continue
        if current in seen:
            continue
        stack.append((current, True))
        for child in reversed(list(children(current))):
            if child not in seen:
                stack.append((child, False))
    return order

"""The Lovász Local Lemma made constructive: the Moser–Tardos resampling algorithm.

Generic over independent random variables and "bad" events, each event determined by a set of
variables. Moser and Tardos (2010): sample every variable; while some bad event occurs, pick one
and resample its variables. If the asymmetric LLL condition holds with weights ``x_A``, i.e.
``P(A) <= x_A * Π_{B ~ A} (1 - x_B)``, the expected number of resamplings is at most
``Σ_A x_A / (1 - x_A)``. Used by Stage 3 of the Depth Reduction Lemma (supplement S1, Lemma 23).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Event:
    """A bad event: the variables it depends on and a test on the full assignment."""

    variables: tuple[int, ...]
    occurs: Callable[[Sequence[Any]], bool]
    name: str = ""


@dataclass
class MTResult:
    """Outcome: the final assignment, whether it avoids every event, the number of
    resamplings (in total and per event index)."""

    assignment: list[Any]
    converged: bool
    resamplings: int
    per_event: dict[int, int] = field(default_factory=dict)


def moser_tardos(
    num_vars: int,
    sample: Callable[[np.random.Generator, int], Any],
    events: Sequence[Event],
    rng: np.random.Generator,
    *,
    max_resamplings: int = 100_000,
) -> MTResult:
    """Find an assignment avoiding all ``events`` by resampling (sequential Moser–Tardos).

    The occurring event with the smallest index is resampled first (any rule is allowed by the
    algorithm's analysis). Stops after ``max_resamplings`` with ``converged=False``.

    Events are tested lazily: a resampling only marks the events sharing a variable with the
    resampled one as stale, and stale events are tested in index order until the smallest
    occurring one is found. An event untouched since its last test keeps its outcome (its
    variables did not change), so every step picks the same event, and draws the same random
    numbers, as testing every touched event at once would.
    """
    assign = [sample(rng, v) for v in range(num_vars)]
    by_var: list[list[int]] = [[] for _ in range(num_vars)]
    for e, ev in enumerate(events):
        for v in ev.variables:
            by_var[v].append(e)
    stale = _Stale(len(events))
    count = 0
    per: dict[int, int] = {}
    touches: dict[int, list[int]] = {}
    while (b := stale.first_occurring(events, assign)) is not None:
        if count >= max_resamplings:
            return MTResult(assign, False, count, per)
        for v in events[b].variables:
            assign[v] = sample(rng, v)
        count += 1
        per[b] = per.get(b, 0) + 1
        if b not in touches:  # b and the events sharing a variable with it, built once
            touches[b] = sorted({b}.union(*(by_var[v] for v in events[b].variables)))
        stale.mark(touches[b])
    return MTResult(assign, True, count, per)


class _Stale:
    """Which events occur, as far as known: a min-heap of the events that occur or are stale
    (not tested since one of their variables changed); every other event does not occur."""

    def __init__(self, m: int) -> None:
        self.state = [_STALE] * m
        self.heap = list(range(m))  # sorted, hence a heap

    def mark(self, touched: list[int]) -> None:
        state, heap, push = self.state, self.heap, heapq.heappush
        for t in touched:
            if state[t] == _CLEAR:
                push(heap, t)
            state[t] = _STALE

    def first_occurring(self, events: Sequence[Event], assign: list[Any]) -> int | None:
        """The smallest index of an occurring event (testing stale ones in order), or None."""
        heap, state = self.heap, self.state
        while heap:
            t = heap[0]
            if state[t] == _STALE:
                state[t] = _OCCURS if events[t].occurs(assign) else _CLEAR
            if state[t] == _OCCURS:
                return t
            heapq.heappop(heap)
        return None


_CLEAR, _STALE, _OCCURS = 0, 1, 2


def dependency_graph(events: Sequence[Event]) -> list[set[int]]:
    """Neighbours of each event: the other events sharing a variable with it."""
    by_var: dict[int, list[int]] = {}
    for e, ev in enumerate(events):
        for v in ev.variables:
            by_var.setdefault(v, []).append(e)
    nbrs: list[set[int]] = [set() for _ in events]
    for es in by_var.values():
        for e in es:
            nbrs[e].update(es)
    for e in range(len(events)):
        nbrs[e].discard(e)
    return nbrs


def asymmetric_lll_holds(
    probs: Sequence[float], neighbours: Sequence[set[int]], x: Sequence[float]
) -> bool:
    """Whether ``P(A) <= x_A Π_{B ~ A} (1 - x_B)`` for every event A (in log space)."""
    for a, p in enumerate(probs):
        if p <= 0:
            continue
        if not 0 < x[a] < 1:
            return False
        rhs = math.log(x[a]) + sum(math.log1p(-x[b]) for b in neighbours[a])
        if math.log(p) > rhs + 1e-12:
            return False
    return True


def symmetric_lll_holds(p: float, d: int) -> bool:
    """The symmetric condition ``e p (d + 1) <= 1`` (each event has at most d neighbours)."""
    return math.e * p * (d + 1) <= 1


def mt_expected_bound(x: Sequence[float]) -> float:
    """Moser–Tardos bound on the expected number of resamplings, ``Σ x_A / (1 - x_A)``."""
    total = 0.0
    for xa in x:
        if xa >= 1:
            return math.inf
        total += xa / (1 - xa)
    return total

"""A time budget for the class propagation and what follows it (``decompile --budget``).

The work of an exact decompilation is hard to foresee (BDD sizes, the facts a predicate
needs), so the long loops call :func:`check`, which ends the run with one line naming the
stage once the budget is spent. Without a budget, :func:`check` only records nothing and
returns at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from hardsoft.errors import HardsoftError


@dataclass
class _Budget:
    seconds: float
    start: float
    stage: str = "starting"


_CURRENT: ContextVar[_Budget | None] = ContextVar("hardsoft_budget", default=None)


class BudgetExceeded(HardsoftError):
    """The time budget ran out; the message names the stage."""


@contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Run the body under a budget of ``seconds`` (None: no limit)."""
    if seconds is None:
        yield
        return
    token = _CURRENT.set(_Budget(float(seconds), time.perf_counter()))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def stage(name: str) -> None:
    """Name the stage now running (for the message), then :func:`check`."""
    current = _CURRENT.get()
    if current is not None:
        current.stage = name
        check()


def check() -> None:
    """Raise :class:`BudgetExceeded` naming the stage if the budget is spent."""
    current = _CURRENT.get()
    if current is None:
        return
    elapsed = time.perf_counter() - current.start
    if elapsed > current.seconds:
        raise BudgetExceeded(
            f"stopped after {elapsed:.1f} s, over --budget {current.seconds:g} s, during "
            f"{current.stage}"
        )

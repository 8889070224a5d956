"""Run the ``hardsoft`` command in-process (fast: torch is imported once) and capture what a
user would see: the exit code, stdout and stderr.

``HARDSOFT_DEBUG=1`` is set while a command runs, so an exception that no check anticipated
propagates out of :func:`run_cli` with its traceback (the test fails and shows where) instead
of becoming the one-line "internal error" a user gets. An optional time budget interrupts a
command that runs longer (a valid but long request): the result then has ``rc = None``.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass

import scipy.optimize  # noqa: F401
import scipy.stats  # noqa: F401
import torch

from hardsoft.cli import main

# scipy is imported lazily by some commands (slope fits, the decompiler's integer programs). A
# time budget that interrupts its first import leaves scipy.ndimage half-imported in
# sys.modules for the rest of the worker (a NameError in every later test): import it up front.

DEFAULT_MAX_MEMORY = "4G"
"""The tests share a machine: no command they run may plan to use more than this."""


class BudgetExceeded(BaseException):
    """Raised by the timer inside a command that ran past its budget (a BaseException, so no
    ``except Exception`` in hardsoft swallows it)."""


@dataclass
class Result:
    rc: int | None  # None: interrupted by the time budget
    out: str
    err: str


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _budget(seconds: float | None) -> Iterator[None]:
    if not seconds:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise BudgetExceeded

    previous = signal.signal(signal.SIGALRM, expire)
    # keep firing every 0.2 s after the budget: an exception raised while the interpreter runs
    # a __del__ or a garbage-collection callback is swallowed ("Exception ignored"), so one
    # alarm is not enough to stop a long command reliably
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(
    *args: str, budget: float | None = None, max_memory: str | None = None, debug: bool = True
) -> Result:
    """``hardsoft ARGS...`` in this process. ``max_memory`` sets HARDSOFT_MAX_MEMORY (default
    :data:`DEFAULT_MAX_MEMORY`), so a valid but large request is refused by the estimates
    instead of allocated."""
    out, err = io.StringIO(), io.StringIO()
    env = {"HARDSOFT_DEBUG": "1"} if debug else {"HARDSOFT_DEBUG": ""}
    env["HARDSOFT_MAX_MEMORY"] = max_memory or DEFAULT_MAX_MEMORY
    rc: int | None
    grad = torch.is_grad_enabled()
    with _env(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with _budget(budget):
                main(list(args))
            rc = 0
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BudgetExceeded:
            rc = None
        finally:
            # The budget's timer can fire inside torch.no_grad()'s own switch, between turning
            # gradients off and the `with` taking hold: its exit never runs, and every later
            # test in the worker trains without gradients (9 failures in one CI run).
            torch.set_grad_enabled(grad)
    return Result(rc, out.getvalue(), err.getvalue())

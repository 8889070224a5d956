"""Where independent jobs run: in this process (``local``) or as tasks on Ray (``ray``).

An :class:`Executor` maps a picklable, module-level function over a list of argument tuples
and yields ``(index, outcome)`` pairs as jobs finish, in completion order. An outcome is
``("ok", value)`` or ``("error", "Type: message")``: one failed job never loses the others.

Ray is an optional extra (``pip install 'hardsoft[sweep]'``). :func:`ray_session` starts a
local Ray on demand (small object store, no dashboard, ``num_cpus`` CPUs, workers at the
caller's priority), connects to a cluster with ``address``, or reuses a Ray already initialised
in this process (a test module's session, or a Ray worker running nested jobs) and leaves it
running.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hardsoft.errors import HardsoftError

EXECUTORS = ("local", "ray")
Outcome = tuple[str, Any]

# The smallest object store Ray accepts is 75 MiB; jobs return small dicts.
_OBJECT_STORE_BYTES = 96 * 1024 * 1024


def _describe(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)  # a RayTaskError wraps the task's own exception
    if isinstance(cause, BaseException):
        exc = cause
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise HardsoftError(
            "--executor ray needs Ray, which is not installed: pip install 'hardsoft[sweep]'"
        ) from None
    return ray


def _check_address(address: str) -> None:
    """Fail fast (one line) on an address with no Ray behind it, before Ray retries for a
    minute. ``auto`` and ``ray://`` client addresses are left to Ray."""
    if address == "auto" or address.startswith("ray://"):
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise HardsoftError(
            f"--address must be HOST:PORT, 'auto' or ray://HOST:PORT, got {address!r}"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except OSError as exc:
        raise HardsoftError(f"no Ray cluster at --address {address!r} ({exc})") from None


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[Any]:
    """A connected ``ray`` module for the duration of the block (see the module docstring)."""
    ray = import_ray()
    if address:
        _check_address(address)
    if ray.is_initialized():
        yield ray
        return
    if address:
        kwargs: dict[str, Any] = {"address": address}
    else:
        kwargs = {
            "num_cpus": num_cpus or os.cpu_count() or 1,
            "include_dashboard": False,
            "object_store_memory": _OBJECT_STORE_BYTES,
        }
        # Ray runs its workers at nice 15, so on a shared machine a grid ran several times
        # slower than the same runs in-process; keep the priority of the command that started
        # it (set RAY_worker_niceness yourself to override).
        os.environ.setdefault("RAY_worker_niceness", "0")
    try:
        ray.init(log_to_driver=False, configure_logging=False, **kwargs)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        where = f"at {address!r}" if address else "locally"
        raise HardsoftError(f"cannot start or reach Ray {where}: {_describe(exc)}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


class LocalExecutor:
    """Runs the jobs one after another in this process (no Ray needed)."""

    name = "local"

    def map(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> Iterator[tuple[int, Outcome]]:
        for k, args in enumerate(jobs):
            try:
                yield k, ("ok", fn(*args))
            except Exception as exc:  # one broken job must not lose the others
                yield k, ("error", _describe(exc))


class RayExecutor:
    """Runs every job as a Ray task of ``cpus_per_job`` CPUs; a local Ray is started on demand
    (``num_cpus`` CPUs, default all) unless ``address`` names a cluster."""

    name = "ray"

    def __init__(
        self, address: str | None = None, num_cpus: int | None = None, cpus_per_job: float = 1
    ) -> None:
        import_ray()  # a clear error now, not when the first job is submitted
        self.address, self.num_cpus, self.cpus_per_job = address, num_cpus, cpus_per_job

    def map(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> Iterator[tuple[int, Outcome]]:
        if not jobs:
            return
        with ray_session(self.address, self.num_cpus) as ray:
            remote = ray.remote(num_cpus=self.cpus_per_job, max_retries=0)(_threaded(fn))
            pending = {remote.remote(*args): k for k, args in enumerate(jobs)}
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    k = pending.pop(ref)
                    try:
                        yield k, ("ok", ray.get(ref))
                    except Exception as exc:
                        yield k, ("error", _describe(exc))


def _threaded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run with one torch thread per CPU of the task (oversubscribed CPUs slow torch
    down 10-100x)."""

    def job(*args: Any) -> Any:
        import torch

        torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
        return fn(*args)

    job.__name__ = getattr(fn, "__name__", "job")
    job.__qualname__ = job.__name__
    return job


def make_executor(
    name: str, address: str | None = None, num_cpus: int | None = None
) -> LocalExecutor | RayExecutor:
    """The executor called ``name`` (``local`` or ``ray``); ``address`` needs ``ray``."""
    key = str(name).strip().lower()
    if key not in EXECUTORS:
        raise HardsoftError(f"unknown executor {name!r} (one of {', '.join(EXECUTORS)})")
    if key == "local":
        if address:
            raise HardsoftError("--address needs --executor ray")
        if num_cpus is not None:
            raise HardsoftError("--cpus needs --executor ray")
        return LocalExecutor()
    if num_cpus is not None and num_cpus < 1:
        raise HardsoftError(f"--cpus must be >= 1, got {num_cpus}")
    return RayExecutor(address=address, num_cpus=num_cpus)

"""Process-wide runtime settings: how many CPU threads torch uses.

torch starts one intra-op thread per core, and OpenMP threads that wait for each other at the
end of every parallel operation. On a machine where other jobs run, one of them is often
descheduled, and every operation waits for it: with one other CPU-bound job on a 2-core
machine, torch's default made ``hardsoft`` commands 2-10x slower in wall time and up to 6x
in CPU time than one thread (benchmarks/results/threads.md; the issue that asked for this
measured 10-50x). The CLI calls :func:`configure_threads` once at start-up: ``HARDSOFT_THREADS``
or ``OMP_NUM_THREADS``, when set, decides (a user's explicit setting wins); otherwise **one
intra-op thread** (:data:`DEFAULT_THREADS`). Library users keep torch's setting unless they
call it themselves.

The CLI also sets ``OMP_WAIT_POLICY=PASSIVE`` before torch loads (unless ``OMP_WAIT_POLICY``
or ``GOMP_SPINCOUNT`` is set), so that a user who asks for several threads gets threads that
sleep at a barrier instead of spinning against the other jobs (:func:`prepare_environment`).

Large tensors: the CLI also sets ``THP_MEM_ALLOC_ENABLE=1`` (unless already set) before torch
loads, so torch asks the kernel for transparent huge pages for allocations of 2 MB and more.
At n = 10⁶ a residual stream is ~300 MB, and every fresh tensor of that size otherwise costs
~75,000 page faults: a fresh elementwise add took 0.36 s instead of 0.08 s
(benchmarks/results/long_inputs.md). It has no effect where the kernel's THP mode is "never".
"""

from __future__ import annotations

import os

from hardsoft.errors import HardsoftError

DEFAULT_THREADS = 1
"""torch intra-op threads of the ``hardsoft`` command when the environment sets none."""


def prepare_environment() -> None:
    """Settings that must be in the environment before torch (and its OpenMP runtime) loads:
    transparent huge pages for large tensors, and OpenMP threads that sleep at a barrier.
    An explicit setting in the environment wins."""
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """The thread count :func:`configure_threads` picks (see the module docstring)."""
    for var in ("HARDSOFT_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value:
            try:
                count = int(value)
            except ValueError:
                raise HardsoftError(f"{var}={value!r} is not a whole number") from None
            if count < 1:
                raise HardsoftError(f"{var} must be >= 1, got {count}")
            return count
    return DEFAULT_THREADS


def configure_threads() -> int:
    """Set torch's intra-op threads to :func:`default_threads`; returns the count."""
    import torch

    count = default_threads()
    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
    return count

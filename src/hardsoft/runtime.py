"""Process-wide runtime settings: how many CPU threads torch uses.

torch starts one intra-op thread per physical core it sees, which can exceed the cores this
process may run on (a container's CPU affinity) and ignores that a small shared machine is
busy. The CLI calls :func:`configure_threads` once at start-up: ``OMP_NUM_THREADS`` (or
``HARDSOFT_THREADS``), when set, decides; otherwise the number of cores this process may use,
and never more than torch's own default. Library users keep torch's setting unless they call
it themselves.

Large tensors: the CLI also sets ``THP_MEM_ALLOC_ENABLE=1`` (unless already set) before torch
loads, so torch asks the kernel for transparent huge pages for allocations of 2 MB and more.
At n = 10⁶ a residual stream is ~300 MB, and every fresh tensor of that size otherwise costs
~75,000 page faults: a fresh elementwise add took 0.36 s instead of 0.08 s
(benchmarks/results/long_inputs.md). It has no effect where the kernel's THP mode is "never".
"""

from __future__ import annotations

import os

import torch

from hardsoft.errors import HardsoftError


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
    return max(1, min(available_cores(), torch.get_num_threads()))


def configure_threads() -> int:
    """Set torch's intra-op threads to :func:`default_threads`; returns the count."""
    count = default_threads()
    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
    return count

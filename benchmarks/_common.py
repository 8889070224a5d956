"""Shared helpers for the benchmark scripts: environment facts and timing."""

from __future__ import annotations

import datetime as dt
import os
import platform
import time
from collections.abc import Callable

import torch


def environment(device: str) -> dict:
    info = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "device": device,
    }
    if device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def best_time(fn: Callable[[], object], device: str, repeats: int, warmup: int = 1) -> float:
    """The best wall time of ``repeats`` runs (after ``warmup``), in seconds."""
    for _ in range(warmup):
        fn()
    sync(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync(device)
        best = min(best, time.perf_counter() - start)
    return best

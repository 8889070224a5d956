"""Torch's intra-op threads against one thread, per kind of work, as the machine is and with
one more CPU-bound job beside it: which default keeps the ``hardsoft`` command from collapsing
when a small machine is shared.

Every kind of work is one ``hardsoft`` command (or the test files given), run as a subprocess
under each setting; its wall time and CPU time (user + system, children included) are
recorded. Settings (the environment of the subprocess):

``1 thread``            HARDSOFT_THREADS=1
``N threads, spin``     HARDSOFT_THREADS=N, GOMP_SPINCOUNT=300000: libgomp's default wait (a
                        thread spins ~300k iterations at every barrier before it sleeps); torch's
                        own default on an N-core machine
``N threads, passive``  HARDSOFT_THREADS=N, OMP_WAIT_POLICY=PASSIVE (threads sleep at once)

(N = the cores this process may use.) "busy" rows start ``python -c "while 1: pass"`` first and
stop it after the row. The rows of one kind run back to back, interleaved by setting, so a
change in the machine's other load hits every setting alike. A run past --timeout is stopped
and recorded as "> timeout".

    python benchmarks/threads.py --write results/threads.md [--kinds small,long,...]
        [--timeout 240] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import environment

HARDSOFT = str(Path(sys.executable).with_name("hardsoft"))
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"]


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def settings() -> dict[str, dict[str, str]]:
    n = str(cores())
    return {
        "1 thread": {"HARDSOFT_THREADS": "1"},
        f"{n} threads, spin": {"HARDSOFT_THREADS": n, "GOMP_SPINCOUNT": "300000"},
        f"{n} threads, passive": {"HARDSOFT_THREADS": n, "OMP_WAIT_POLICY": "PASSIVE"},
    }


def prepare(d: Path) -> None:
    """Models and inputs every kind needs (built once, with one thread)."""
    env = {**os.environ, "HARDSOFT_THREADS": "1"}
    parity = ["compile", "MOD(2,1)(#<['1'])", "-a", "01", "-t", "soft-temperature"]
    uhat = ["random-model", "--weighting", "leftmost", "--mask", "strict-future",
            "--features", "1", "--layers", "2", "--seed", "1"]  # fmt: skip
    for args in ([*parity, "-o", str(d / "parity.safetensors")],
                 [*uhat, "-o", str(d / "uhat.safetensors")]):  # fmt: skip
        subprocess.run([HARDSOFT, *args], check=True, env=env, capture_output=True)
    rng = np.random.default_rng(0)
    for n in (10**5, 10**6):
        (d / f"w{n}.txt").write_bytes((rng.integers(0, 2, n, dtype=np.uint8) + 48).tobytes())


def kinds(d: Path, tests: list[str]) -> dict[str, list[str]]:
    p = str(d / "parity.safetensors")
    return {
        "small": [HARDSOFT, "check", p, "-f", "MOD(2,1)(#<['1'])", "--exhaustive-max-n", "10",
                  "--random-n", "100,1000", "--samples", "40"],
        "long": [HARDSOFT, "run", p, "--input-file", str(d / "w1000000.txt"),
                 "-o", str(d / "long.npy")],
        "stream": [HARDSOFT, "run", p, "--stream", "--input-file", str(d / "w1000000.txt"),
                   "-o", str(d / "stream.npy")],
        "train": [HARDSOFT, "train", "--language", "parity", "--steps", "150", "--max-n", "40",
                  "--no-resume", "-o", str(d / "run")],
        "decompile": [HARDSOFT, "decompile", str(d / "uhat.safetensors")],
        "tests": [*PYTEST, *tests],
    }  # fmt: skip


def timed(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[float | None, float]:
    """Wall seconds (None past the timeout) and CPU seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=timeout)
        wall: float | None = time.perf_counter() - start
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-500:]}")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        wall = None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kinds", default="small,long,stream,train,decompile,tests")
    ap.add_argument("--tests", default="tests/test_stream.py,tests/test_check_stream.py")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--loads", default="as is,busy")
    ap.add_argument("--write", default=None)
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    tests = [str(root / t) for t in args.tests.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        prepare(d)
        work = kinds(d, tests)
        for load in args.loads.split(","):
            hog = None
            if load == "busy":
                hog = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
            try:
                for kind in args.kinds.split(","):
                    for _ in range(args.repeats):
                        for name, extra in settings().items():
                            env = {k: v for k, v in os.environ.items()
                                   if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY",
                                                "GOMP_SPINCOUNT", "HARDSOFT_THREADS")}  # fmt: skip
                            env.update(extra)
                            la = os.getloadavg()[0]
                            wall, cpu = timed(work[kind], env, args.timeout)
                            rows.append((kind, load, name, wall, cpu, la))
                            shown = "> timeout" if wall is None else f"{wall:.1f}"
                            print(f"{kind:9} {load:6} {name:22} wall {shown:>9} s  cpu {cpu:7.1f} s"
                                  f"  load {la:.2f}", flush=True)  # fmt: skip
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
    if args.write:
        write(Path(args.write), rows, args)


def write(path: Path, rows: list, args: argparse.Namespace) -> None:
    env = environment("cpu")
    lines = [
        "# Threads: torch's intra-op threads against one, per kind of work, as is and busy",
        "",
        f"`python benchmarks/threads.py --kinds {args.kinds} --timeout {args.timeout:g}"
        f" --repeats {args.repeats}`",
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items() if k != "torch_threads"),
        "",
        "| work | load | setting | wall s | CPU s | 1-min load average before |",
        "|---|---|---|---:|---:|---:|",
    ]
    for kind, load, name, wall, cpu, la in rows:
        shown = f"> {args.timeout:g}" if wall is None else f"{wall:.1f}"
        lines.append(f"| {kind} | {load} | {name} | {shown} | {cpu:.1f} | {la:.2f} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

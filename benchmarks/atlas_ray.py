"""`hardsoft atlas --executor ray` beside the in-process build, on the same cells: each run in
a fresh process and a fresh folder (every cell's evidence run), in alternation (local, ray,
local, ray, ...) so a change of the machine's load falls on both; then the Ray build resumed:
with every cell stored (no task runs), after deleting a few cells' evidence (only those run
again), and after a fresh Ray build interrupted by Ctrl-C (SIGINT) part way (the cells stored
before the interruption are reused). Wall time is the number that matters for an executor; the
driver process's CPU time is recorded too (a Ray worker's CPU is not the driver's, so it is not
comparable).

    python benchmarks/atlas_ray.py --only "tomita2+...,*" --out benchmarks/results/atlas_ray.md
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import environment

NEW_ROWS = (
    "tomita2+tomita3+tomita4+tomita5+tomita6+tomita7+even-pairs+repeat-01+cycle-navigation+"
    "modular-arithmetic+dyck2-depth2+dyck2-depth3+a5-identity"
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(folder: Path, only: str, executor: str, cpus: int | None) -> tuple[float, float, dict]:
    cmd = [sys.executable, "-m", "hardsoft.cli", "atlas", "--quick", "--only", only]
    cmd += ["--out", str(folder), "--executor", executor, "--json"]
    if cpus is not None and executor == "ray":
        cmd += ["--cpus", str(cpus)]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    started, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    return seconds, cpu, json.loads(done.stdout)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted(folder: Path, only: str, after: float, cpus: int | None) -> tuple[int, float, int]:
    """A Ray build stopped by SIGINT after ``after`` seconds: how many cells it had stored,
    how long it took to exit, and its exit status."""
    cmd = [sys.executable, "-m", "hardsoft.cli", "atlas", "--quick", "--only", only]
    cmd += ["--out", str(folder), "--executor", "ray", "--json"]
    cmd += ["--cpus", str(cpus)] if cpus is not None else []
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        preexec_fn=_default_sigint,  # a background job ignores SIGINT, and so would its child
    )
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    started = time.perf_counter()
    code = proc.wait(timeout=600)
    kept = len(list(folder.glob("cells/*/*/evidence.json")))
    return kept, time.perf_counter() - started, code


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _said(table: dict) -> list[tuple]:
    return [(c["row"], c["column"], c["status"], c["verdict"]) for c in table["cells"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=f"{NEW_ROWS},*", help="The cells (hardsoft atlas --only).")
    ap.add_argument("--repeat", type=int, default=2, help="Alternating pairs of runs.")
    ap.add_argument("--cpus", type=int, default=None, help="CPUs of the local Ray.")
    ap.add_argument(
        "--interrupt-after", type=float, default=45.0, help="Seconds before the Ctrl-C."
    )
    ap.add_argument("--out", type=Path, default=None, help="Also write the Markdown here.")
    args = ap.parse_args()
    rows, loads = [], [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):
            for executor in ("local", "ray"):
                folder = Path(tmp) / f"{executor}-{k}"
                wall, cpu, table = _run(folder, args.only, executor, args.cpus)
                rows.append((executor, k, wall, cpu, table, folder))
                loads.append(_load())
        ray_folder = rows[-1][5]
        resumed = [("ray, every cell stored", *_run(ray_folder, args.only, "ray", args.cpus))]
        stored = sorted(ray_folder.glob("cells/*/*/evidence.json"))
        lost = random.Random(0).sample(stored, min(3, len(stored)))
        for path in lost:
            path.unlink()
        resumed.append(
            (f"ray, {len(lost)} cells deleted", *_run(ray_folder, args.only, "ray", args.cpus))
        )
        cut = Path(tmp) / "interrupted"
        kept, exit_s, code = _interrupted(cut, args.only, args.interrupt_after, args.cpus)
        name = f"ray, after Ctrl-C at {args.interrupt_after:.0f} s ({kept} cells stored)"
        resumed.append((name, *_run(cut, args.only, "ray", args.cpus)))
        loads.append(_load())
    first = rows[0][4]
    complete = [r[4] for r in rows if not r[4]["no_evidence"]]
    same = all(_said(t) == _said(complete[0]) for t in complete)
    failed = [
        f"- run {k + 1} ({ex}): no evidence in {len(t['no_evidence'])} cells ("
        + "; ".join(sorted({f"{c['error']}"[:160] for c in t["cells"] if c.get("error")}))
        + "), run again by the next build"
        for ex, k, _, _, t, _ in rows
        if t["no_evidence"]
    ]
    env = environment("cpu")
    env["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "1")
    env["ray_cpus"] = str(args.cpus or os.cpu_count())
    env["load_average"] = " -> ".join(loads)
    local = [r[2] for r in rows if r[0] == "local"]
    ray = [r[2] for r in rows if r[0] == "ray"]
    lines = [
        "# atlas: `--executor ray` beside the in-process build",
        "",
        "```",
        *(f"{k}: {v}" for k, v in env.items()),
        f"only: {args.only}",
        "```",
        "",
        f"{first['cells_total']} cells; every complete run (every cell with its evidence) "
        f"gives the same status and verdict in every cell: {same}.",
        *([""] + failed if failed else []),
        "",
        "| run | executor | wall s | driver CPU s | cells run | reused |",
        "|---|---|---|---|---|---|",
        *(
            f"| {k + 1} | {ex} | {wall:.1f} | {cpu:.1f} | "
            f"{sum(not c['reused'] for c in t['cells'])} | {sum(c['reused'] for c in t['cells'])} |"
            for ex, k, wall, cpu, t, _ in rows
        ),
        *(
            f"| resume | {name} | {wall:.1f} | {cpu:.1f} | "
            f"{sum(not c['reused'] for c in t['cells'])} | {sum(c['reused'] for c in t['cells'])} |"
            for name, wall, cpu, t in resumed
        ),
        "",
        f"Mean wall from scratch: in-process {sum(local) / len(local):.1f} s, Ray "
        f"{sum(ray) / len(ray):.1f} s (ratio Ray / in-process "
        f"{sum(ray) / sum(local):.2f}). The interrupted build exited {exit_s:.1f} s after "
        f"Ctrl-C (status {code}) with {kept} cells stored.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

"""The atlas's build time: ``hardsoft atlas --quick`` from scratch (every cell's evidence run)
and again with every cell stored (reused), in fresh processes, with the slowest cells. Wall
time and the child's CPU time (user + system) are both recorded: on a shared machine the CPU
time is the steadier number. The child runs with ``OMP_NUM_THREADS=1`` unless the caller set it.

    python benchmarks/atlas.py --out benchmarks/results/atlas.md
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import environment


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(folder: Path, quick: bool) -> tuple[float, float, dict]:
    mode = "--quick" if quick else "--full"
    cmd = [sys.executable, "-m", "hardsoft.cli", "atlas", mode, "--out", str(folder), "--json"]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    started, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    return seconds, cpu, json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="Time --full instead of --quick.")
    ap.add_argument("--out", type=Path, default=None, help="Also write the Markdown here.")
    args = ap.parse_args()
    quick = not args.full
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        first, first_cpu, table = _run(Path(tmp), quick)
        second, second_cpu, again = _run(Path(tmp), quick)
    slow = sorted(table["cells"], key=lambda c: -c.get("seconds", 0))[:8]
    env = environment("cpu")
    env["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "1")
    env["load_average"] = (
        f"{load_before} before, " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " after"
    )
    kinds = table.get("kinds") or {"(evidence run here)": table["cells_with_evidence"]}
    lines = [
        f"# atlas: `hardsoft atlas --{'quick' if quick else 'full'}` build time",
        "",
        "```",
        *(f"{k}: {v}" for k, v in env.items()),
        "```",
        "",
        f"{table['cells_total']} cells: "
        + ", ".join(f"{n} {k}" for k, n in kinds.items())
        + f"; {len(table['disagreements'])} disagree.",
        "",
        "| run | wall s (process) | CPU s (process) | build s (reported) | reused |",
        "|---|---|---|---|---|",
        f"| from scratch | {first:.1f} | {first_cpu:.1f} | {table['seconds']} | 0 |",
        f"| stored | {second:.1f} | {second_cpu:.1f} | {again['seconds']} | "
        f"{sum(bool(c.get('reused')) for c in again['cells'])} |",
        "",
        "Slowest cells from scratch (wall seconds):",
        "",
        "| cell | status | evidence | seconds |",
        "|---|---|---|---|",
        *(
            f"| {c['row']} × {c['column']} | {c['status']} | {c.get('evidence_kind', '')} | "
            f"{c['seconds']} |"
            for c in slow
        ),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

"""Time and peak memory of the restriction engine (``hardsoft restrict``) against n.

A seeded 2-layer, 2-head rightmost-hard random model (d_model 16), target PARITY, at
n = 256, 1024, 4096 (``--lengths``). Each length runs in a fresh subprocess so that its peak
resident memory (ru_maxrss, minus the process's size before the engine starts) is its own.
Growth is reported as the exponent log(t2/t1)/log(n2/n1) between consecutive lengths.

    .venv/bin/python benchmarks/restrict_scaling.py [--lengths 256,1024,4096] [--out FILE]

The analysis is numpy/torch on the CPU; ``--device cuda`` only moves the model that runs the
witness check.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch

from _common import environment


def worker(n: int, device: str, seed: int) -> dict:
    from hardsoft.limits.restrict import restrict
    from hardsoft.model import random_model

    model = random_model(
        weighting="rightmost", layers=2, heads=2, d_model=16, seed=seed, dtype=torch.float64
    ).to(device)
    restrict(model, 32, "parity-even", seed=seed)  # warm-up: first-call overheads
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    r = restrict(model, n, "parity-even", seed=seed)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "n": n,
        "seconds": seconds,
        "peak_rss_mib": peak / 1024,
        "engine_rss_mib": (peak - base) / 1024,
        "free_fraction": r.restriction.free_fraction,
        "c": len(r.dependency_set),
        "verified": bool(r.witness and r.witness.verified),
        "layer_seconds": [round(lg.seconds, 2) for lg in r.layers],
        "layer_c": [lg.c_out for lg in r.layers],
        "stage2_rounds": [lg.stage2_rounds for lg in r.layers],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="256,1024,4096")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch default)")
    ap.add_argument("--out", type=Path, default=None, help="Also write the Markdown here.")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.device, args.seed)))
        return
    rows = []
    for n in [int(x) for x in args.lengths.split(",")]:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--worker",
                str(n),
                "--device",
                args.device,
                "--seed",
                str(args.seed),
                "--threads",
                str(args.threads),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    env = environment(args.device)
    env["load_average"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# restrict_scaling: the restriction engine's time and memory against n",
        "",
        "2-layer, 2-head rightmost-hard random model (d_model 16, seed "
        f"{args.seed}), target parity-even, default parameters (C = 0.5, automatic k). "
        "Each n runs in a fresh process after a warm-up at n = 32; RSS is the growth of the "
        "peak resident size during the run.",
        "",
        "```",
        *(f"{k}: {v}" for k, v in env.items()),
        "```",
        "",
        "| n | seconds | growth exponent (time) | engine RSS MiB | growth exponent (memory) "
        "| free fraction | c | verified | seconds per layer | stage-2 rounds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows):
        if i:
            p = rows[i - 1]
            lg = math.log(r["n"] / p["n"])
            gt = f"{math.log(r['seconds'] / p['seconds']) / lg:.2f}"
            gm = f"{math.log(max(r['engine_rss_mib'], 1) / max(p['engine_rss_mib'], 1)) / lg:.2f}"
        else:
            gt = gm = "-"
        lines.append(
            f"| {r['n']} | {r['seconds']:.1f} | {gt} | {r['engine_rss_mib']:.0f} | {gm} | "
            f"{r['free_fraction']:.3f} | {r['c']} | {r['verified']} | {r['layer_seconds']} | "
            f"{r['stage2_rounds']} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

"""The limits engines at long n on CPU: the restriction engine at n = 16384 and Lemma 5
sensitivity up to n = 65536.

Restriction (a 2-layer, 2-head rightmost random model, target parity-even, as in
restrict_scaling.py): each n runs in a fresh process, with torch's huge-page allocation off
and on (``THP_MEM_ALLOC_ENABLE``, which the ``hardsoft`` command turns on), side by side.

Sensitivity (seeded random softmax models, L = 1 and 2 layers, 2 heads, d_model 16, weight
scale 1): the full mode (every variant by whole forward passes) against the long-n mode
(first-layer rows updated for the one changed key, last layer at the rows measured;
``long_n``) at the same n, then the long-n mode alone up to 65536, and the log-log slope of the
largest change at the last position.

    python benchmarks/limits_long.py --write results/limits_long.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

from hardsoft.limits.sensitivity import measure_sensitivity
from hardsoft.model import random_model

from _common import environment

FEATURES = ("1", "i/n", "(-1)^i", "[i=1]", "[i=n]")
RESTRICT_CHILD = """
import json, resource, sys, time, torch
from hardsoft.model import random_model
from hardsoft.limits.restrict import restrict
n = int(sys.argv[1])
m = random_model(weighting="rightmost", layers=2, heads=2, d_model=16, seed=0, dtype=torch.float64)
restrict(m, 32, "parity-even")
t = time.perf_counter()
r = restrict(m, n, "parity-even")
seconds = time.perf_counter() - t
print(json.dumps({
    "seconds": seconds,
    "verified": bool(r.witness and r.witness.verified),
    "free_fraction": r.restriction.free_fraction,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
}))
"""


def restrict_row(n: int, thp: str) -> dict:
    env = dict(os.environ, THP_MEM_ALLOC_ENABLE=thp)
    load = os.getloadavg()[0]
    out = subprocess.run(
        [sys.executable, "-c", RESTRICT_CHILD, str(n)], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return {"n": n, "thp": thp, "load": load, **json.loads(out.stdout.strip().splitlines()[-1])}


def sensitivity_row(layers: int, n: int, mode: str, samples: int, flips: int) -> dict:
    model = random_model(
        layers=layers,
        heads=2,
        d_model=16,
        position_features=FEATURES,
        weight_scale=1.0,
        seed=layers,
        dtype=torch.float64,
    )
    load = os.getloadavg()[0]
    start = time.perf_counter()
    rep = measure_sensitivity(
        model, [n], samples=samples, flips=flips, long_n=2 if mode == "long" else 10**9
    )
    return {
        "layers": layers,
        "n": n,
        "mode": mode,
        "seconds": time.perf_counter() - start,
        "last_max": rep.series("last_max")[0],
        "bound": rep.bound_series()[0],
        "violations": len(rep.violations),
        "load": load,
    }


def report(restrict_rows: list[dict], sens_rows: list[dict], slopes: dict) -> str:
    env = " | ".join(f"{k}: {v}" for k, v in environment("cpu").items())
    lines = [
        "# The limits engines at long n (CPU)",
        "",
        f"`python benchmarks/limits_long.py {' '.join(sys.argv[1:])}`",
        "",
        env,
        "",
        "## Restriction engine (2 layers, 2 rightmost heads, parity-even; fresh process per row)",
        "",
        "| n | huge pages | seconds | verified witness | free fraction | peak RSS MB | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in restrict_rows:
        lines.append(
            f"| {r['n']} | {'on' if r['thp'] == '1' else 'off'} | {r['seconds']:.1f} | "
            f"{r['verified']} | {r['free_fraction']:.3f} | {r['rss_mb']} | {r['load']:.1f} |"
        )
    lines += [
        "",
        "## Sensitivity (random softmax models, 2 heads, d_model 16, weight scale 1)",
        "",
        "| layers | n | mode | seconds | largest change at the last position | corrected bound "
        "| violations | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in sens_rows:
        lines.append(
            f"| {r['layers']} | {r['n']} | {r['mode']} | {r['seconds']:.1f} | "
            f"{r['last_max']:.4g} | {r['bound']:.4g} | {r['violations']} | {r['load']:.1f} |"
        )
    lines += ["", "Log-log slope of the largest change at the last position (long-n mode):", ""]
    lines += [f"* L = {k}: {v}" for k, v in slopes.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restrict-lengths", default="4096,16384")
    ap.add_argument("--compare-lengths", default="4096,8192", help="full and long-n mode")
    ap.add_argument("--long-lengths", default="1024,4096,16384,65536", help="long-n mode")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--flips", type=int, default=8)
    ap.add_argument("--write", default="")
    args = ap.parse_args()
    restrict_rows = []
    for n in [int(x) for x in args.restrict_lengths.split(",") if x]:
        for thp in ("0", "1"):
            restrict_rows.append(restrict_row(n, thp))
            print(restrict_rows[-1], flush=True)
    sens_rows, slopes = [], {}
    for layers in (1, 2):
        for n in [int(x) for x in args.compare_lengths.split(",") if x]:
            for mode in ("full", "long"):
                sens_rows.append(sensitivity_row(layers, n, mode, args.samples, args.flips))
                print(sens_rows[-1], flush=True)
        lengths = [int(x) for x in args.long_lengths.split(",") if x]
        model = random_model(
            layers=layers, heads=2, d_model=16, position_features=FEATURES, seed=layers,
            dtype=torch.float64,
        )  # fmt: skip
        start = time.perf_counter()
        rep = measure_sensitivity(model, lengths, samples=args.samples, flips=args.flips, long_n=2)
        fit = rep.slope("last_max")
        slopes[layers] = (
            f"{fit.slope:.3f} (95% CI {fit.ci[0]:.3f} to {fit.ci[1]:.3f}) over n = {lengths}, "
            f"values {[f'{v:.3g}' for v in rep.series('last_max')]}, "
            f"{len(rep.violations)} bound violations, {time.perf_counter() - start:.0f} s"
            if fit
            else "not fitted"
        )
        print(layers, slopes[layers], flush=True)
    text = report(restrict_rows, sens_rows, slopes)
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()

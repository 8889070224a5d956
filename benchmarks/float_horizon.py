"""The float horizon, full mode: the float-horizon experiment's searches (float32 for every
model and word family, float64 for compiled PARITY streamed from twice its derived limit),
written as a table with the machine, date and load.

    python benchmarks/float_horizon.py --write results/float_horizon.md
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from hardsoft.experiments import float_horizon as fh

from _common import environment


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--float32-max-n", type=int, default=1 << 26)
    ap.add_argument("--float64-factor", type=float, default=2.0)
    ap.add_argument("--float64-max-n", type=int, default=1 << 27)
    ap.add_argument("--write", default=None)
    args = ap.parse_args()
    env = environment("cpu")
    before, start = os.getloadavg(), time.perf_counter()
    rows = fh.float32_rows(args.seed, args.float32_max_n, quick=False)
    for r in rows:
        print(r, flush=True)
    rows64 = fh.float64_parity_rows(args.seed, args.float64_factor, args.float64_max_n)
    for r in rows64:
        print(r, flush=True)
    rows += rows64
    after = os.getloadavg()
    lines = [
        "# Float horizon: first failing n by bisection, beside the derived float_limits",
        "",
        "`python benchmarks/float_horizon.py --write results/float_horizon.md`",
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()),
        "",
        f"load average before {before[0]:.2f}, after {after[0]:.2f} (2 cores shared with other "
        f"jobs); total {time.perf_counter() - start:.0f} s",
        "",
        "| " + " | ".join(fh.TABLE_COLUMNS) + " |",
        "|" + "---|" * len(fh.TABLE_COLUMNS),
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in fh.table_rows(rows)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(__file__).with_name("results").joinpath(Path(args.write).name).write_text(text)


if __name__ == "__main__":
    main()

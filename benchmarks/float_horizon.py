"""The float horizon, full mode: the float-horizon experiment's searches (float32 for every
model and word family, float64 for compiled PARITY streamed from twice its derived limit),
written as a table with the machine, date and load.

    python benchmarks/float_horizon.py --write results/float_horizon.md
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

from hardsoft.experiments import float_horizon as fh

from _common import environment


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--float32-max-n", type=int, default=1 << 26)
    ap.add_argument("--float64-factor", type=float, default=2.0)
    ap.add_argument("--float64-max-n", type=int, default=1 << 27)
    ap.add_argument("--float64-words", default=",".join(fh.WORDS))
    ap.add_argument(
        "--parts",
        default="float32,float64",
        help="Which searches to rerun; the "
        "others are read from results/float_horizon.json (the last run's rows).",
    )
    ap.add_argument("--write", default=None)
    args = ap.parse_args()
    env = environment("cpu")
    before, start = os.getloadavg(), time.perf_counter()
    saved = Path(__file__).with_name("results") / "float_horizon.json"
    old = json.loads(saved.read_text()) if saved.exists() else {}
    parts: dict[str, list] = {}
    for part in ("float32", "float64"):
        if part not in args.parts.split(","):
            parts[part] = old.get(part, [])
            continue
        if part == "float32":
            parts[part] = fh.float32_rows(args.seed, args.float32_max_n, quick=False)
        else:
            words = tuple(args.float64_words.split(","))
            kept = [r for r in old.get(part, []) if r["word"] not in words]
            parts[part] = kept + fh.float64_parity_rows(
                args.seed, args.float64_factor, args.float64_max_n, words
            )
        for r in parts[part]:
            print(r, flush=True)
    rows = parts["float32"] + parts["float64"]
    after = os.getloadavg()
    lines = [
        "# Float horizon: first failing n by bisection, beside the derived float_limits",
        "",
        "`python benchmarks/float_horizon.py --write results/float_horizon.md`",
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()),
        "",
        f"searches rerun: {args.parts}; load average before {before[0]:.2f}, after "
        f"{after[0]:.2f} (2 cores shared with other jobs); total "
        f"{time.perf_counter() - start:.0f} s (float64 rows: see their own seconds)",
        "",
        "| " + " | ".join(fh.TABLE_COLUMNS) + " |",
        "|" + "---|" * len(fh.TABLE_COLUMNS),
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in fh.table_rows(rows)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        results = Path(__file__).with_name("results")
        results.joinpath(Path(args.write).name).write_text(text)
        saved.write_text(json.dumps(parts, indent=1) + "\n")
        fh._figure(SimpleNamespace(figure_path=results.joinpath), rows)  # float_horizon.png


if __name__ == "__main__":
    main()

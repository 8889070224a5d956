"""Benchmark of the compiler: compile time and size for every shipped formula and target, and
the longest input checked exactly (float64, against the logic evaluator) within a time budget.

    python benchmarks/compile_check.py                      # CPU: table + longest n in 60 s
    python benchmarks/compile_check.py --device cuda --n 1000000 --budget 600
    python benchmarks/compile_check.py --pairs parity-mod:soft-temperature --n 100000

``--n`` checks exactly those lengths (comma-separated) instead of doubling from 1000 until the
budget of one (formula, target) pair is spent. Writes Markdown to stdout (and to --out).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

import numpy as np
import torch

from hardsoft.compile import TARGETS, compile_formula
from hardsoft.logic import FORMULAS, evaluate

DEFAULT_PAIRS = [
    "parity-mod:soft-temperature",
    "parity-mod:soft-pe",
    "majority:soft-temperature",
    "parity-count:soft-temperature",
    "parity-count:hard",
    "ngram-abc:soft-temperature",
    "dyck1:soft-pe",
]


def machine() -> str:
    uname = " ".join(platform.uname())
    try:
        cpus = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        cpus = str(os.cpu_count())
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return (
        f"{uname}; nproc {cpus}; python {sys.version.split()[0]}; torch {torch.__version__}; "
        f"gpu {gpu}; {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    )


def compile_table() -> list[str]:
    lines = [
        "| formula | target | compile ms (median of 3) | layers | heads | width | parameters |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in FORMULAS.items():
        for target in TARGETS:
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                model = compile_formula(entry.text, entry.alphabet, target)
                times.append(1000 * (time.perf_counter() - t0))
            c = model.meta["certificate"]
            lines.append(
                f"| {name} | {target} | {statistics.median(times):.1f} | {c['layers']} | "
                f"{c['heads_total']} | {c['residual_width']} | {c['parameters']} |"
            )
    return lines


def check_once(model, formula, alphabet: str, n: int, seed: int, device: str, chunk: int | None):
    """One random word of length n: (exact?, max |output − reference|, seconds)."""
    ids = np.random.default_rng(seed + n).integers(0, len(alphabet), size=(1, n))
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model(torch.from_numpy(ids).to(device), chunk_size=chunk).outputs[0, :, 0]
    out = out.double().cpu().numpy()
    seconds = time.perf_counter() - t0
    ref = evaluate(formula, ids, list(alphabet))[0].astype(np.float64)
    err = float(np.abs(out - ref).max())
    return err < 1e-9, err, seconds


def longest_table(pairs, budget: float, lengths, device: str, chunk, seed: int) -> list[str]:
    lines = [
        "| formula | target | n | exact | max abs error | forward seconds |",
        "|---|---|---|---|---|---|",
    ]
    for pair in pairs:
        name, target = pair.split(":")
        entry = FORMULAS[name]
        model = compile_formula(entry.text, entry.alphabet, target).to(device)
        spent, best = 0.0, None
        todo = list(lengths) if lengths else None
        n = 1000
        while True:
            if todo is not None:
                if not todo:
                    break
                n = todo.pop(0)
            ok, err, sec = check_once(model, entry.formula, entry.alphabet, n, seed, device, chunk)
            spent += sec
            lines.append(f"| {name} | {target} | {n} | {ok} | {err:.2e} | {sec:.2f} |")
            print(lines[-1], file=sys.stderr, flush=True)
            if ok:
                best = n
            if todo is None:
                if not ok or spent + 4.5 * sec > budget:  # the next doubling costs ~4x
                    break
                n *= 2
        if todo is None:
            lines.append(
                f"| {name} | {target} | **longest exact within {budget:g} s: {best}** | | | |"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--budget", type=float, default=60.0, help="Seconds per (formula, target).")
    ap.add_argument("--n", default="", help="Comma-separated lengths to check (no doubling).")
    ap.add_argument("--pairs", default=",".join(DEFAULT_PAIRS), help="name:target,...")
    ap.add_argument("--chunk-size", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-compile-table", action="store_true")
    ap.add_argument("--out", default="", help="Also write the Markdown here.")
    args = ap.parse_args()
    lengths = [int(x) for x in args.n.split(",") if x.strip()]
    pairs = [p for p in args.pairs.split(",") if p.strip()]
    doc = ["# compile_check", "", f"Machine: {machine()}", ""]
    if not args.skip_compile_table:
        doc += ["## Compile time and size (shipped formulas)", "", *compile_table(), ""]
    doc += [
        f"## Exact checks in float64 on {args.device} (one random word per n, vs the evaluator)",
        "",
        *longest_table(pairs, args.budget, lengths, args.device, args.chunk_size, args.seed),
        "",
    ]
    text = "\n".join(doc)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()

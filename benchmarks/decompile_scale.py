"""Benchmark of ``hardsoft decompile`` on random unique-hard models of real size (issue rows:
``random-model --weighting rightmost --mask strict-future --d-model 16 --features 1 --seed 5``,
and a grid up to 3 layers x 4 heads over alphabets of 2-4 symbols), before and after, side by
side: each row runs this checkout and, with ``--baseline SRC`` (the ``src/`` folder of an
older checkout, e.g. from ``git archive``), that one, in fresh subprocesses under a time limit.

    python benchmarks/decompile_scale.py [--baseline /tmp/old/src] [--limit 60] [--out FILE]

Each run reports the decompilation (class propagation and the formulas, ``verify_n=0``), the
built-in check (every word to n = 8, 200 random words to n = 1000) timed separately, the
classes per layer and the formula size. Writes Markdown to stdout (and to --out).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import environment

ISSUE = [(2, 2, "01"), (2, 4, "01"), (3, 2, "01"), (2, 2, "abc"), (3, 3, "abc")]
GRID = [(layers, heads, alphabet) for alphabet in ("01", "abc", "abcd")
        for layers, heads in ((1, 4), (2, 2), (3, 2), (2, 4), (3, 4))]  # fmt: skip

_RUN = r"""
import json, sys, time
from hardsoft.model import random_model
from hardsoft.decompile import decompile
from hardsoft.logic.syntax import size
layers, heads, alphabet, seed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
m = random_model(weighting="rightmost", mask="strict-future", layers=layers, heads=heads,
                 d_model=16, alphabet=alphabet, position_features=("1",), seed=seed)
try:
    t = time.perf_counter(); d = decompile(m, verify_n=0, random_words=0)
    dec = time.perf_counter() - t
    t = time.perf_counter(); v = decompile(m); full = time.perf_counter() - t
    print(json.dumps({"decompile": dec, "check": full - dec, "classes": d.classes,
                      "size": size(d.formulas[0]), "mismatches": v.verified["mismatches"]}))
except Exception as exc:  # a refusal: one line
    print(json.dumps({"refused": str(exc).splitlines()[0][:90]}))
"""


def _measure(src: str, layers: int, heads: int, alphabet: str, seed: int, limit: float) -> str:
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    args = [sys.executable, "-c", _RUN, str(layers), str(heads), alphabet, str(seed)]
    try:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"> {limit:g} s (stopped)"
    if done.returncode != 0 or not done.stdout.strip():
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:80]
    r = json.loads(done.stdout.strip().splitlines()[-1])
    if "refused" in r:
        return f"refused: {r['refused']}"
    return (
        f"{r['decompile']:.2f} s + check {r['check']:.2f} s; classes {r['classes']}; "
        f"size {r['size']}; {r['mismatches']} mismatches"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=None, help="src/ of the checkout to compare")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--rows", choices=("all", "issue"), default="all")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    cols = ["model (layers x heads, alphabet)", "this checkout"]
    if args.baseline:
        cols.append("baseline")
    lines = [
        "# Decompile at scale: random unique-hard models, before and after",
        "",
        "`python benchmarks/decompile_scale.py"
        + (" --baseline SRC" if args.baseline else "")
        + f" --limit {args.limit:g} --rows {args.rows}`",
        "",
        "| " + " | ".join(f"{k}: {v}" for k, v in environment("cpu").items()) + " |",
        f"load average at the start: {os.getloadavg()[0]:.1f}",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    print("\n".join(lines), flush=True)
    rows = [("issue", *r) for r in ISSUE]
    if args.rows == "all":
        rows += [("grid", *r) for r in GRID if r not in ISSUE]
    for _, layers, heads, alphabet in rows:
        cells = [f"{layers} x {heads}, {alphabet}"]
        cells.append(_measure(here, layers, heads, alphabet, args.seed, args.limit))
        if args.baseline:
            cells.append(_measure(args.baseline, layers, heads, alphabet, args.seed, args.limit))
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines.append(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

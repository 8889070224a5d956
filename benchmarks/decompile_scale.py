"""Benchmark of ``hardsoft decompile`` on random unique-hard models of real size (issue rows:
``random-model --weighting rightmost --mask strict-future --d-model 16 --features 1 --seed 5``,
a grid over every mask, both tie rules and several seeds for the issue's three target rows,
and a grid up to 3 layers x 4 heads over alphabets of 2-4 symbols), before and after, side by
side: each row runs this checkout and, with ``--baseline SRC`` (the ``src/`` folder of an
older checkout, e.g. from ``git archive``), that one, in fresh subprocesses.

    python benchmarks/decompile_scale.py [--rows issue|masks|grid|budget] [--baseline SRC]
                                         [--limit 60] [--seeds 0,1,2,5] [--out FILE]

Each run is one ``decompile(model, budget=--limit)`` with its built-in check (every word to
n = 8, 200 random words to n = 1000), in a process that has already imported torch: the
decompilation (class propagation and the formulas) and the check are timed apart
(``Decompiled.timings``). A refusal by the up-front estimate is timed the same way (the time
to the refusal, without the imports). A run stopped by its budget reports when it stopped
(``--rows budget`` runs a slow model, 3 x 3 over abc, under budgets of 0.5-20 s to measure
the overshoot; ``--rows large`` the larger models beside it: 3 x 3 over abc at seeds 0-2,
3 x 4 over abc, 3 x 2 over abcd).
Writes Markdown to stdout (and to --out).
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
TARGETS = [(3, 2, "01"), (2, 2, "abc"), (2, 4, "01")]
MASKS = ("future", "strict-future", "past", "strict-past", "none")
WEIGHTINGS = ("rightmost", "leftmost")
GRID = [(layers, heads, alphabet) for alphabet in ("01", "abc", "abcd")
        for layers, heads in ((1, 4), (2, 2), (3, 2), (2, 4), (3, 4))]  # fmt: skip
BUDGETS = (0.5, 2.0, 5.0, 20.0)
LARGE = [(3, 3, "abc", 0), (3, 3, "abc", 1), (3, 3, "abc", 2), (3, 4, "abc", 5), (3, 2, "abcd", 5)]

_RUN = r"""
import json, sys, time
from hardsoft.model import random_model
from hardsoft.decompile import decompile
from hardsoft.logic.syntax import size
for layers, heads, alphabet, mask, weighting, seed, limit in json.loads(sys.argv[1]):
    m = random_model(weighting=weighting, mask=mask, layers=layers, heads=heads, d_model=16,
                     alphabet=alphabet, position_features=("1",), seed=seed)
    t = time.perf_counter()
    try:
        d = decompile(m, budget=limit)
        r = {"decompile": d.timings["propagate"], "check": d.timings["check"],
             "classes": d.classes, "size": size(d.formulas[0]),
             "mismatches": d.verified["mismatches"]}
    except Exception as exc:  # a refusal or the budget: one line
        r = {"error": str(exc).splitlines()[0], "after": time.perf_counter() - t}
    print(json.dumps(r), flush=True)
"""


def _measure(src: str, configs: list[tuple], limit: float) -> list[str]:
    """One subprocess for ``configs`` (each run under the budget ``limit``); a cell each."""
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    payload = json.dumps([[*c, limit] for c in configs])
    backstop = 60 + 3 * limit * len(configs)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _RUN, payload], env=env, capture_output=True, text=True,
            timeout=backstop,
        )  # fmt: skip
        out = done.stdout
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
    cells = [_cell(json.loads(line)) for line in out.splitlines() if line.startswith("{")]
    return cells + [f"killed after {backstop:g} s (no answer)"] * (len(configs) - len(cells))


def _cell(r: dict) -> str:
    if "error" in r:
        return f"{r['error'][:110]} ({r['after']:.2f} s)"
    total = r["decompile"] + r["check"]
    return (
        f"{r['decompile']:.2f} s + check {r['check']:.2f} s = {total:.2f} s; "
        f"classes {r['classes']}; size {r['size']}; {r['mismatches']} mismatches"
    )


Config = tuple[int, int, str, str, str, int]
"""(layers, heads, alphabet, mask, weighting, seed) of one random model."""


def _label(c: Config, kind: str) -> str:
    layers, heads, alphabet, mask, weighting, seed = c
    if kind in ("issue", "grid"):
        return f"{layers} x {heads}, {alphabet}"
    return f"{layers} x {heads}, {alphabet}, {mask}, {weighting}, seed {seed}"


def _groups(kind: str, seeds: list[int], seed: int) -> list[list[Config]]:
    """The runs, in groups that share one process (and its imports)."""
    if kind == "issue":
        return [[(l, h, a, "strict-future", "rightmost", seed)] for l, h, a in ISSUE]
    if kind == "grid":
        return [[(l, h, a, "strict-future", "rightmost", seed)] for l, h, a in GRID]
    if kind == "large":
        return [[(l, h, a, "strict-future", "rightmost", s)] for l, h, a, s in LARGE]
    if kind == "budget":
        return [[(3, 3, "abc", "strict-future", "rightmost", seed)] for _ in BUDGETS]
    return [
        [(l, h, a, mask, w, s) for w in WEIGHTINGS for s in seeds]
        for l, h, a in TARGETS
        for mask in MASKS
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=None, help="src/ of the checkout to compare")
    parser.add_argument("--limit", type=float, default=60.0, help="budget (s) per run")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--seeds", default="0,1,2,5", help="seeds of the masks grid")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--rows", choices=("issue", "masks", "grid", "budget", "large"), default="issue"
    )
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    cols = ["model (layers x heads, alphabet)", "this checkout"]
    if args.baseline:
        cols.append("baseline")
    lines = [
        "`python benchmarks/decompile_scale.py"
        + (" --baseline SRC" if args.baseline else "")
        + f" --limit {args.limit:g} --rows {args.rows}"
        + (f" --seeds {args.seeds}" if args.rows == "masks" else "")
        + "`",
        "",
        "| " + " | ".join(f"{k}: {v}" for k, v in environment("cpu").items()) + " |",
        f"load average at the start: {os.getloadavg()[0]:.1f}",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    print("\n".join(lines), flush=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    for k, configs in enumerate(_groups(args.rows, seeds, args.seed)):
        limit = BUDGETS[k] if args.rows == "budget" else args.limit
        columns = [_measure(here, configs, limit)]
        if args.baseline:
            columns.append(_measure(args.baseline, configs, limit))
        for j, config in enumerate(configs):
            label = _label(config, args.rows)
            if args.rows == "budget":
                label += f", budget {limit:g} s"
            lines.append("| " + " | ".join([label, *(col[j] for col in columns)]) + " |")
            print(lines[-1], flush=True)
    lines.append(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

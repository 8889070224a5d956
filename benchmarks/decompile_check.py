"""Benchmark of the counting decompiler's integer programs and of ``decompile``'s built-in
check, side by side with an older checkout (issue #30 item 2; issue #32's ``make reproduce``).

    python benchmarks/decompile_check.py [--baseline /tmp/old/src] [--out FILE]

1. ``hardsoft reproduce --only decompile-roundtrip`` (quick) in a fresh folder, for this
   checkout and (``--baseline SRC``: the ``src/`` of an older checkout, e.g. from
   ``git archive``) that one, both at once in fresh processes (so a shared machine loads
   both alike): wall time, CPU time (user + system of the process), and whether the stored
   results are the same (metrics and every table cell but the seconds).
2. The built-in check on the issue's random models (``random_model(weighting="rightmost",
   mask="strict-future", d_model=16, features ("1",), seed=5)``), this checkout only: the
   decompilation (``verify_n=0``), then the check split into the model's forward pass on
   every word to n = 8, on the 200 random words up to n = 1000, and the logic evaluator.
Writes Markdown to stdout (and to --out).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import environment

MODELS = [(2, 2, "01"), (2, 4, "01"), (2, 2, "abc")]

_CHECK = r"""
import json, sys, time
import numpy as np
from hardsoft.model import random_model
from hardsoft.decompile import decompile
from hardsoft.decompile.decompiler import exhaustive_words, model_bits, random_words_upto
from hardsoft.logic.semantics import evaluate
layers, heads, alphabet = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
m = random_model(weighting="rightmost", mask="strict-future", layers=layers, heads=heads,
                 d_model=16, alphabet=alphabet, position_features=("1",), seed=5)
t = time.perf_counter(); d = decompile(m, verify_n=0, random_words=0)
out = {"decompile": time.perf_counter() - t}
short, _ = exhaustive_words(m.spec.alphabet, 8)
rand = random_words_upto(m.spec.alphabet, 200, 1000, 0)
for name, words in (("forward_short", short), ("forward_random", rand)):
    t = time.perf_counter(); model_bits(m, words, 1); out[name] = time.perf_counter() - t
t = time.perf_counter()
by_len = {}
for w in short + rand:
    by_len.setdefault(len(w), []).append(w)
for group in by_len.values():
    evaluate(d.formulas[0], group, m.spec.alphabet)
out["evaluator"] = time.perf_counter() - t
t = time.perf_counter(); v = decompile(m); out["check"] = time.perf_counter() - t - out["decompile"]
out["mismatches"] = v.verified["mismatches"]
out["positions"] = v.verified["positions"]
print(json.dumps(out))
"""


def _reproduce(src: str, folder: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    code = (
        "import resource, sys, time; from hardsoft.cli import main; t = time.perf_counter()\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "r = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print('TIMES', time.perf_counter() - t, r.ru_utime + r.ru_stime, file=sys.stderr)"
    )
    args = [sys.executable, "-c", code, "reproduce", "--only", "decompile-roundtrip"]
    args += ["-o", str(folder), "--force"]
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _record(folder: Path) -> dict:
    with sqlite3.connect(folder / "results.sqlite") as db:
        return json.loads(db.execute("select record from results").fetchone()[0])


def _differences(a: dict, b: dict) -> list[str]:
    """The metrics and table cells (but the seconds) where two records differ."""
    out = [f"metric {k}: {a['metrics'][k]} / {b['metrics'].get(k)}"
           for k in a["metrics"] if a["metrics"][k] != b["metrics"].get(k)]  # fmt: skip
    for ta, tb in zip(a["tables"], b["tables"]):
        cols = ta["columns"]
        for ra, rb in zip(ta["rows"], tb["rows"]):
            cells = [(c, x, y) for c, x, y in zip(cols, ra, rb) if x != y and c != "seconds"]
            if cells:
                out.append(f"row {ra[:3]}: " + ", ".join(f"{c} {x} / {y}" for c, x, y in cells))
        if len(ta["rows"]) != len(tb["rows"]):
            out.append(f"table {ta['title'][:40]}: row counts differ")
    return out


def roundtrip(here: str, baseline: str | None) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"this checkout": here} | ({"baseline": baseline} if baseline else {})
        procs = {k: _reproduce(src, Path(tmp) / k.replace(" ", "_")) for k, src in runs.items()}
        times = {}
        for k, proc in procs.items():
            _, err = proc.communicate()
            line = [x for x in err.decode().splitlines() if x.startswith("TIMES")][-1]
            times[k] = [float(x) for x in line.split()[1:]]
        records = {k: _record(Path(tmp) / k.replace(" ", "_")) for k in runs}
    lines = ["| decompile-roundtrip (quick) | wall | CPU (user + system) |", "|---|---|---|"]
    lines += [f"| {k} | {w:.1f} s | {c:.1f} s |" for k, (w, c) in times.items()]
    if baseline:
        diffs = _differences(records["baseline"], records["this checkout"])
        lines += ["", f"Stored results, baseline / this checkout: {len(diffs)} differences"]
        lines += [f"- {d}" for d in diffs]
    m = records["this checkout"]["metrics"]
    lines += [
        "",
        f"This checkout: {m['counting_models_ok']} of {m['counting_models']} counting models "
        f"agree; mismatches {m['model_mismatches']} (round trip), {m['random_mismatches']} "
        f"(random), {m['counting_mismatches']} (counting).",
    ]
    return lines


def checks(here: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=here, OMP_NUM_THREADS="1")
    lines = [
        "| model | decompile | check | forward, words to n = 8 | forward, 200 random to 1000 "
        "| evaluator | positions | mismatches |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for layers, heads, alphabet in MODELS:
        args = [sys.executable, "-c", _CHECK, str(layers), str(heads), alphabet]
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        lines.append(
            f"| {layers} x {heads}, {alphabet} | {r['decompile']:.2f} s | {r['check']:.2f} s "
            f"| {r['forward_short']:.2f} s | {r['forward_random']:.2f} s "
            f"| {r['evaluator']:.2f} s | {r['positions']:,} | {r['mismatches']} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=None, help="src/ of the checkout to compare")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    env = environment("cpu")
    start = time.perf_counter()
    lines = [
        "# Decompile: the counting decompiler's integer programs, and the built-in check",
        "",
        "`python benchmarks/decompile_check.py" + (" --baseline SRC`" if args.baseline else "`"),
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()),
        f"load average at the start: {os.getloadavg()[0]:.1f}",
        "",
        *roundtrip(here, args.baseline),
        "",
        *checks(here),
        "",
        f"load average at the end: {os.getloadavg()[0]:.1f}; "
        f"{time.perf_counter() - start:.0f} s in all",
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

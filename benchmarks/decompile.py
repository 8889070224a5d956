"""Benchmark of ``hardsoft decompile``: time, classes per layer and formula size for compiled
formulas (both mask modes), random unique-hard models of 1–3 layers, the named counting formulas
compiled with ``--target hard`` (both mask modes) and random counting models (average-hard heads,
unbounded position features). The method column says which decompiler ran (finite / counting).

    python benchmarks/decompile.py [--out benchmarks/results/decompile.md]

The time is the class propagation plus rendering the formulas (``verify_n=0``, no random
words); the verification is timed separately on all words up to n = 8 and 200 random words
up to n = 1000. Writes Markdown to stdout (and to --out).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from hardsoft.compile import compile_formula
from hardsoft.decompile import decompile
from hardsoft.experiments.decompile_roundtrip import random_counting_model, random_decompile_model
from hardsoft.logic import FORMULAS as NAMED
from hardsoft.logic.syntax import size

from _common import environment

FORMULAS = [
    ("'a' S 'b'", "abc"),
    ("E ('a' & X ('b' & X 'c'))", "abc"),
    ("('a' | X 'b') S ('c' & Y 'a')", "abc"),
    ("'a' & (X 'b' | Y 'c')", "abc"),
]
RANDOM = [  # (weighting, mask, layers); heads as in the experiment: 2 per layer, 1 from 3 layers
    ("leftmost", "future", 1),
    ("rightmost", "strict-future", 1),
    ("leftmost", "none", 2),
    ("rightmost", "strict-past", 2),
    ("rightmost", "future", 3),
    ("leftmost", "strict-future", 3),
]
COUNTING = ["majority", "parity-mod", "parity-count", "anbn", "dyck1"]  # named, in hardsoft.logic
COUNTING_MASKS = ["future", "past", "none"]  # random counting models, seed 31 each


def _row(label: str, model) -> str:
    start = time.perf_counter()
    d = decompile(model, verify_n=0, random_words=0)
    t_dec = time.perf_counter() - start
    start = time.perf_counter()
    v = decompile(model, verify_n=8, random_words=200)
    t_all = time.perf_counter() - start
    cell = label.replace("|", "\\|")  # a | inside a Markdown table cell
    out = d.outputs[0]
    shrunk = f"{out.size_written} → {size(d.formulas[0])}" if out.size_written else "-"
    shrink_s = (out.shrink or {}).get("seconds", 0.0)
    return (
        f"| {cell} | {d.to_dict()['method']} | {d.classes} | {size(d.formulas[0])} | "
        f"{shrunk} | {t_dec:.2f} ({shrink_s:.2f}) | "
        f"{t_all - t_dec:.2f} | {v.verified['mismatches']} / {v.verified['positions']:,} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    lines = [
        "# Decompile: time, classes and formula size",
        "",
        "`python benchmarks/decompile.py`",
        "",
        "| " + " | ".join(f"{k}: {v}" for k, v in environment("cpu").items()) + " |",
        f"load average: {os.getloadavg()[0]:.1f}",
        "",
        "| model | method | classes per layer | formula size | shrinking (proved) "
        "| decompile s (of which shrinking) | verification s (approx.) | mismatches / positions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for text, alphabet in FORMULAS:
        for masks in ("strict", "nonstrict"):
            model = compile_formula(text, alphabet=alphabet, target="hard", masks=masks)
            lines.append(_row(f"compiled `{text}` ({masks})", model))
            print(lines[-1], flush=True)
    for weighting, mask, layers in RANDOM:
        model = random_decompile_model(weighting, mask, layers, seed=31)
        heads = len(model.spec.layers[0].heads)
        lines.append(_row(f"random {weighting} {mask}, {layers} layers x {heads} heads", model))
        print(lines[-1], flush=True)
    for name in COUNTING:
        entry = NAMED[name]
        for masks in ("strict", "nonstrict"):
            model = compile_formula(entry.text, alphabet=entry.alphabet, target="hard", masks=masks)
            lines.append(_row(f"compiled {name} `{entry.text}` ({masks})", model))
            print(lines[-1], flush=True)
    for mask in COUNTING_MASKS:
        model = random_counting_model(mask, seed=31)
        layers, heads = len(model.spec.layers), len(model.spec.layers[0].heads)
        lines.append(_row(f"random counting {mask}, {layers} layer x {heads} heads", model))
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

"""Dyck-1 at length: Yang & Chiang's C-RASP program (the shipped ``@dyck1``) compiled to
``soft-temperature``, run at n = 10^6 on random balanced and near-balanced words, beside the
model of the named formula ``dyck1`` (``hardsoft formulas list``) on the same words.

Every position's rounded output is compared with the C-RASP interpreter (for the program's
model) or the logic evaluator (for the formula's model), and with the DYCK-1 prefix oracle
(``hardsoft.languages``). Words: a random balanced string (n/2 pairs, rotated by the cycle
lemma: one member prefix), a concatenation of random balanced blocks (about two thousand
member prefixes), and near misses made from the latter by one edit: one symbol flipped (the counts
end unequal), and a ``(`` at height 0 swapped with the next ``)`` (equal counts, a prefix
dips below zero). Times are one
forward pass each with the fast attention paths (docs/model.md, "Fast paths"), float64, CPU.

    python benchmarks/crasp_dyck_long.py --write benchmarks/results/crasp_dyck_long.md
"""

from __future__ import annotations

import os

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # as the hardsoft command does

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from hardsoft.compile import compile_formula
from hardsoft.experiments.long_inputs import word_ids
from hardsoft.languages import get_language
from hardsoft.logic import evaluate, get_formula
from hardsoft.programs.compiled import model_sizes
from hardsoft.programs.source import load_program

from _common import environment


def blocks(n: int, rng: np.random.Generator) -> np.ndarray:
    """A balanced word of balanced blocks of random lengths 2..2000, so that thousands of its
    prefixes are members (a single rotated block has one)."""
    parts, left = [], n
    while left:
        m = min(left, 2 * int(rng.integers(1, 1001)))
        parts.append(word_ids(m, rng, balanced=True)[0])
        left -= m
    return np.concatenate(parts)[None]


def words(n: int, seed: int) -> list[tuple[str, np.ndarray]]:
    """Balanced (one block; many blocks), one flipped symbol, and a ``(`` at height 0 swapped
    with the next ``)`` (equal counts, every later prefix out), both in the many-block word:
    each ``[1, n]``."""
    rng = np.random.default_rng(seed)
    out = [("balanced, one block", word_ids(n, rng, balanced=True))]
    base = blocks(n, rng)
    out.append(("balanced, blocks", base))
    flipped = base.copy()
    at = int(rng.integers(n // 4, 3 * n // 4))
    flipped[0, at] = 1 - flipped[0, at]
    out.append((f"one symbol flipped (position {at + 1})", flipped))
    swapped = base.copy()
    height = np.concatenate([[0], np.cumsum(1 - 2 * base[0])])[:-1]
    zeros = np.flatnonzero(height == 0)  # block boundaries: base[j] is "(" at height 0
    j = int(zeros[len(zeros) // 2])
    k = j + int(np.argmax(base[0, j:] == 1))  # the next ")"
    swapped[0, j], swapped[0, k] = 1, 0
    out.append((f"( at height 0 swapped with the next ) (positions {j + 1}, {k + 1})", swapped))
    return out


def forward(model, ids: np.ndarray) -> tuple[float, float, np.ndarray, list[str]]:
    """Wall and CPU seconds of one forward pass, the rounded output, the heads' paths."""
    tokens = torch.from_numpy(ids)
    with torch.no_grad():
        start, cpu = time.perf_counter(), time.process_time()
        out = model(tokens)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, out.outputs[0, :, 0].numpy() > 0.5, sorted(set(out.paths.values()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()
    n = args.n
    program = load_program("@dyck1")
    named = get_formula("dyck1")
    start = time.perf_counter()
    crasp = program.compile("soft-temperature", max_len=n)
    crasp_compile = time.perf_counter() - start
    start = time.perf_counter()
    formula = compile_formula(named.formula, named.alphabet, "soft-temperature", n=n)
    formula_compile = time.perf_counter() - start
    oracle = get_language("dyck1")
    models = {
        "C-RASP @dyck1 (Yang & Chiang 2024), causal": (crasp, crasp_compile),
        f"formula dyck1: {named.text}": (formula, formula_compile),
    }
    rows = []
    for label, ids in words(n, args.seed):
        text = "".join("()"[k] for k in ids[0])
        start = time.perf_counter()
        want_oracle = np.asarray(oracle.prefix_reference(text), bool)
        oracle_s = time.perf_counter() - start
        start = time.perf_counter()
        want_program = program.values(ids)[program.statements[-1]][0]
        interp_s = time.perf_counter() - start
        want_formula = evaluate(named.formula, ids, list(named.alphabet))[0]
        for name, (model, _) in models.items():
            seconds, cpu, got, paths = forward(model, ids)
            own = want_program if name.startswith("C-RASP") else want_formula
            rows.append(
                {
                    "model": name,
                    "word": label,
                    "members": int(want_oracle.sum()),
                    "seconds": seconds,
                    "cpu_seconds": cpu,
                    "vs_reference": int((got != own).sum()),
                    # the program's value at i is prefix membership (it is past-only); the
                    # formula's E looks at the whole word, so only its last position is
                    "vs_oracle": int((got != want_oracle).sum())
                    if own is want_program
                    else int(got[-1] != want_oracle[-1]),
                    "paths": paths,
                    "interpreter_s": interp_s,
                    "oracle_s": oracle_s,
                }
            )
            print(rows[-1], flush=True)
    env = environment("cpu")
    env["load"] = round(os.getloadavg()[0], 1)
    text = render(n, models, rows, env)
    if args.write:
        args.write.write_text(text)
    print(text)


def render(n: int, models: dict, rows: list[dict], env: dict) -> str:
    lines = [
        f"# Dyck-1 at n = {n:,}: the C-RASP program beside the dyck1 formula (soft-temperature)",
        "",
        "`python benchmarks/crasp_dyck_long.py --write benchmarks/results/crasp_dyck_long.md`",
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()),
        "",
        "The machine was shared with other work (load above): compare times within this run, "
        "and prefer the CPU seconds (this process's own), which the load distorts less than "
        "wall time.",
        "",
        "## The models",
        "",
        "| model | layers | heads | width | parameters | smallest τ(n) | τ at n | compile s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    from hardsoft.model import eval_tau

    for name, (model, seconds) in models.items():
        s = model_sizes(model)
        tau = model.meta["certificate"]["tau"]
        exprs = [t["expression"] for t in tau] if isinstance(tau, list) else [str(tau)]
        smallest = min(exprs, key=lambda t: float(eval_tau(t, n)))
        lines.append(
            f"| {name} | {s['layers']} | {s['heads']} | {s['width']} | {s['parameters']} | "
            f"{smallest} | {float(eval_tau(smallest, n)):.3g} | {seconds:.2f} |"
        )
    lines += [
        "",
        "## Every position of each word (mismatches: rounded output ≠ reference)",
        "",
        "| model | word | member prefixes | forward s (CPU s) | mismatches vs "
        "interpreter/evaluator | "
        "mismatches vs DYCK-1 oracle (program: every prefix; formula: the word) | "
        "attention paths |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model'].split(':')[0]} | {r['word']} | {r['members']:,} | "
            f"{r['seconds']:.2f} ({r['cpu_seconds']:.2f}) | {r['vs_reference']} | "
            f"{r['vs_oracle']} | "
            f"{', '.join(r['paths'])} |"
        )
    interp = [r["interpreter_s"] for r in rows]
    lines += [
        "",
        "The program is past-only, so its model's output at every position is the membership "
        "of that prefix; the formula's `E` looks at the whole word, so its output is DYCK-1 "
        "membership of the word at the last position only (earlier positions are compared "
        "with the logic evaluator).",
        "",
        f"The C-RASP interpreter took {min(interp):.2f}–{max(interp):.2f} s per word (numpy, "
        "every statement), the oracle's prefix reference "
        f"{min(r['oracle_s'] for r in rows):.2f}–{max(r['oracle_s'] for r in rows):.2f} s.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

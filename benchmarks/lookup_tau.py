"""How small must the temperature of a table-lookup head really be, and where do rounding
errors take over? (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Thm. 20's second step.)

Part 1 (τ slope). For soft-temperature models with lookup heads (MOD of a prefix count, MOD
of a suffix count, a comparison mixing #< with #>), multiply the τ(n) of the lookup heads
only by a factor s and find by bisection the largest s that keeps every output exact (float64,
against the logic evaluator, on random strings plus all-ones and alternating strings) at
n = 8 … 4096. The largest exact τ is s·τ_cert(n); its log-log slope against n is the order
the construction really needs.

Part 2 (float limits). The certificate's derived largest exact n in float32 for each model,
checked by running the float32 model there, and the first n (doubling) where float32 fails.
Part 3: the float64 limit of the lookup head, confirmed at the derived n on single query rows
(the full model is O(n²) there).

    python benchmarks/lookup_tau.py [--quick] [--out benchmarks/results/lookup_tau.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

import numpy as np
import torch

from hardsoft.compile import bounds as B
from hardsoft.compile import compile_formula
from hardsoft.logic import evaluate, parse
from hardsoft.model import eval_tau, feature_matrix
from hardsoft.model.attention import weights_from_scores

from _common import environment

FORMULAS = [
    ("MOD(2, 1)(#<['1'])", "MOD of a prefix count"),
    ("MOD(3, 1)(#>['1'])", "MOD of a suffix count"),
    ("#<['1'] > #>['0']", "#< compared with #>"),
]


def strings(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + n)
    ids = rng.integers(0, 2, size=(6, n))
    ids[0] = 1
    ids[1] = np.arange(n) % 2
    return ids


def exact(model, ids: np.ndarray, ref: np.ndarray) -> bool:
    with torch.no_grad():
        out = model(torch.from_numpy(ids), chunk_size=1024).outputs[..., 0]
    return bool(np.abs(out.double().numpy() - ref).max() < 1e-9)


def largest_lookup_factor(text: str, n: int, seed: int) -> tuple[float, str]:
    """The largest s (bisection on log2 s in [-8, 40]) with every lookup head's τ multiplied
    by s still exact at length n; and the certified lookup τ(n) expression."""
    formula = parse(text, alphabet="01")
    model = compile_formula(formula, "01", "soft-temperature")
    heads = model.meta["certificate"]["heads"]
    lookups = [(h["layer"], h["head"], h["tau"]) for h in heads if h["gadget"].startswith("lookup")]
    ids = strings(n, seed)
    ref = evaluate(formula, ids, ["0", "1"]).astype(np.float64)

    def ok(log_s: float) -> bool:
        for layer, head, tau in lookups:
            h = model.blocks[layer].heads[head]
            h.spec = dataclasses.replace(h.spec, tau=f"({tau})*{2.0**log_s!r}")
        return exact(model, ids, ref)

    lo, hi = -8.0, 40.0
    if not ok(lo):
        return float("nan"), lookups[0][2]
    if ok(hi):
        return 2.0**hi, lookups[0][2]
    for _ in range(14):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return 2.0**lo, lookups[0][2]


def slope(ns: list[int], values: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(values), 1)[0])


def part_tau(ns: list[int], seed: int) -> list[str]:
    lines = [
        "## Part 1: largest exact temperature of the lookup heads (float64)",
        "",
        "| formula | n | certified lookup τ(n) | s max | largest exact τ = s·τ_cert |",
        "|---|---|---|---|---|",
    ]
    summary = []
    for text, what in FORMULAS:
        taus = []
        for n in ns:
            s, expr = largest_lookup_factor(text, n, seed)
            cert = eval_tau(expr, n)
            taus.append(s * cert)
            lines.append(f"| `{text}` | {n} | {expr} = {cert:.3g} | {s:.3g} | {s * cert:.3g} |")
            print(lines[-1], file=sys.stderr, flush=True)
        summary.append(
            f"- {what} (`{text}`): log-log slope of the largest exact τ "
            f"{slope(ns, taus):.2f} (n = {ns[0]} … {ns[-1]}); certified {expr}"
        )
    return [*lines, "", *summary, ""]


def float32_exact(model, formula, n: int, seed: int) -> bool:
    ids = strings(n, seed)
    return exact(model, ids, evaluate(formula, ids, ["0", "1"]).astype(np.float64))


def part_float32(max_n: int, seed: int) -> list[str]:
    lines = [
        "## Part 2: float32 — derived limit vs measured",
        "",
        "| formula | target | derived float32 limit | exact at the limit | largest exact n "
        "(doubling from 64) | first failing n |",
        "|---|---|---|---|---|---|",
    ]
    for text, _ in [*FORMULAS, ("#<['1'] > #<['0']", "sign only")]:
        for target in ("hard", "soft-temperature"):
            formula = parse(text, alphabet="01")
            model = compile_formula(formula, "01", target)
            limit = model.meta["certificate"]["float_limits"]["float32"]
            model = model.to(torch.float32)
            at_limit = float32_exact(model, formula, min(limit, max_n), seed) if limit else True
            good, bad, n = None, None, 64
            while n <= max_n:
                if float32_exact(model, formula, n, seed):
                    good = n
                else:
                    bad = n
                    break
                n *= 2
            lines.append(
                f"| `{text}` | {target} | {limit} | {at_limit} (n = {min(limit, max_n)}) | "
                f"{good} | {bad or f'> {max_n}'} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    return [*lines, ""]


def part_float64_rows(n: int | None = None) -> list[str]:
    """The lookup head's scores in float64 at the derived limit, one query row at a time, for
    the hardest rows (N = n: the gap is λ), with C/N summed the way a uniform head sums it."""
    lam = B.choose_retrieval_lambda(1)
    derived = B.LOOKUP_FLOAT.max_n(B.UNIT_ROUNDOFF["float64"])
    n = n or derived
    feats = feature_matrix(["i/n*1/n", "(i/n)^2", "i/n"], n)
    j_n2, j2, j_n = feats.T
    scale = 1.0 / eval_tau(f"1/({lam}*n**3)", n)
    rows = []
    for c in (1, n // 3, n // 2 + 1, n - 1):
        big_n = n
        weights = torch.full((big_n,), 1.0 / big_n, dtype=torch.float64)
        values = torch.zeros(big_n, dtype=torch.float64)
        values[:c] = 1.0
        frac = float(weights @ values)  # C/N as a uniform head computes it
        scores = (2 * frac * j_n2 - (1.0 / big_n) * j2) * scale
        w = weights_from_scores(scores[None, :], None, "softmax")[0]
        mass = float(w[c - 1])
        rows.append(f"| {n} | {c} | {frac * big_n - c:.3g} | {1 - mass:.3g} |")
    return [
        "## Part 3: float64 lookup head at its derived limit (single query rows, N = n)",
        "",
        f"Rows at n = {n}; derived float64 limit {derived} (`{B.LOOKUP_FLOAT.text}`, "
        f"u = 2^-53); proven mass off "
        f"j = C at λ = {lam:g}: {B.retrieval_residue_bound(lam):.3g}.",
        "",
        "| n | C | C/N·N − C (float64) | mass off j = C |",
        "|---|---|---|---|",
        *rows,
        "",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="n up to 512, float32 up to 2048")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows-n", type=int, default=None, help="n for part 3 (default: limit)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    ns = [2**k for k in range(3, 10 if args.quick else 13)]
    env = environment("cpu")
    load = os.getloadavg()
    lines = [
        "# lookup_tau",
        "",
        f"Machine: {env['machine']}; {env['cpu_count']} CPUs; python {env['python']}; "
        f"torch {env['torch']} ({env['torch_threads']} thread); {env['date']}; load average "
        f"at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "",
        *part_tau(ns, args.seed),
        *part_float32(2048 if args.quick else 8192, args.seed),
        *part_float64_rows(args.rows_n),
        f"Total {time.perf_counter() - started:.0f} s; load average at end "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()

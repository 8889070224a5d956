"""Time to check the DYCK-2 program at long n: the AHAT and its softmax simulation (certified
τ(n), float64, chunked attention) on balanced strings (half members, half one-edit near
misses), each compared position by position with the language oracle. Prints a Markdown
report (and writes it with --write).

    python benchmarks/check_dyck.py                      # CPU, n = 1000, 5000
    python benchmarks/check_dyck.py --device cuda --lengths 5000,100000 --count 2
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from hardsoft.languages import get_language
from hardsoft.model.spec import eval_tau
from hardsoft.programs.ahat.build import build
from hardsoft.programs.ahat.interpret import interpret_many

from _common import environment, sync


def run_model(model, words: list[str], chunk: int, device: str) -> tuple[list[np.ndarray], float]:
    outs = []
    sync(device)
    start = time.perf_counter()
    with torch.no_grad():
        for w in words:
            y = model(model.encode([w]), chunk_size=chunk).outputs[0, :, 0]
            outs.append(y.double().cpu().numpy())
    sync(device)
    return outs, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lengths", default="1000,5000")
    ap.add_argument("--count", type=int, default=2, help="strings per length (half members)")
    ap.add_argument("--chunk", type=int, default=1024, help="attention block size")
    ap.add_argument("--interpreter-max-n", type=int, default=5000)
    ap.add_argument("--write", default="", help="write the Markdown report to this file")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    device = args.device
    b = build("dyck", 2, "soft-temperature")
    hard = b.compiled.model.to(device)
    soft = b.model.to(device)
    lang = get_language("dyck2")
    rng = np.random.default_rng(0)
    rows = []
    for n in lengths:
        words, labels = lang.sample_balanced(n, args.count, rng)
        t0 = time.perf_counter()
        refs = [lang.prefix_reference(w) for w in words]
        t_oracle = time.perf_counter() - t0
        hard_out, t_hard = run_model(hard, words, args.chunk, device)
        soft_out, t_soft = run_model(soft, words, args.chunk, device)
        mism_h = sum(not np.array_equal(h, r) for h, r in zip(hard_out, refs))
        mism_s = sum(not np.array_equal(np.rint(s), r) for s, r in zip(soft_out, refs))
        err = max(float(np.abs(s - h).max()) for s, h in zip(soft_out, hard_out))
        t_int, mism_i = float("nan"), None
        if n <= args.interpreter_max_n:
            t0 = time.perf_counter()
            interp = interpret_many(b.compiled.program, words)
            t_int = time.perf_counter() - t0
            mism_i = sum(not np.array_equal(a[:, 0], r) for a, r in zip(interp, refs))
        rows.append(
            {
                "n": n,
                "strings": len(words),
                "members": int(np.sum(labels)),
                "tau": eval_tau(b.certificate["tau"], n),
                "hard_s_per_string": t_hard / len(words),
                "soft_s_per_string": t_soft / len(words),
                "interpreter_s_per_string": t_int / len(words),
                "oracle_s_per_string": t_oracle / len(words),
                "mismatches_hard": mism_h,
                "mismatches_soft": mism_s,
                "mismatches_interpreter": mism_i,
                "max_soft_minus_hard": err,
            }
        )
        print(rows[-1], flush=True)
    env = environment(device)
    spec = hard.spec
    lines = [
        "# Checking the DYCK-2 AHAT program and its softmax simulation",
        "",
        f"`python benchmarks/check_dyck.py --device {device} --lengths {args.lengths} "
        f"--count {args.count} --chunk {args.chunk}`",
        "",
        f"Model: {len(spec.layers)} layers, {sum(len(x.heads) for x in spec.layers)} heads, "
        f"width {spec.d_model}, float64; soft target τ(n) = `{b.certificate['tau']}`.",
        "",
        "| " + " | ".join(f"{k}: {v}" for k, v in env.items()) + " |",
        "",
        "| n | strings (members) | τ(n) | AHAT s/string | softmax s/string | interpreter "
        "s/string | oracle s/string | mismatches hard / soft / interp | max abs(soft − hard) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['strings']} ({r['members']}) | {r['tau']:.3g} | "
            f"{r['hard_s_per_string']:.3g} | {r['soft_s_per_string']:.3g} | "
            f"{r['interpreter_s_per_string']:.3g} | {r['oracle_s_per_string']:.3g} | "
            f"{r['mismatches_hard']} / {r['mismatches_soft']} / {r['mismatches_interpreter']} | "
            f"{r['max_soft_minus_hard']:.3g} |"
        )
    report = "\n".join(lines) + "\n"
    print(report)
    if args.write:
        Path(args.write).write_text(report)


if __name__ == "__main__":
    main()

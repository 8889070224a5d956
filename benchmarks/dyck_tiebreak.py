"""Is DYCK's same-depth tie-break still exact in float64 at long n? The current construction
(depth split as d + 1 = s·q + r) against the previous one (score −(d_i − d_j)²).

The worst case for the tie-break is a deep run of many keys at one depth: the string
``(``^a ``()``^b ``)``^a (n = 2a + 2b, a = b = n/4) puts 2b keys at depth a + 1. For sampled
``)`` of the middle run, the true match is the position just before it and the runner-up the
one before that, so the exact score gap is the tie-break step TIEBREAK/n (times 1/τ; 3/(4n)
since issue 41, 1/(2n) when the results below were recorded). The script
runs the softmax model (fast paths) up to the same-depth head, computes full score rows for
the sampled queries in float64 exactly as the dense path does (``(q·k)·scale``; also
``(q·scale)·k``, the order of fused kernels), and reports whether the argmax is the true match
and the float gap relative to the exact gap. Prints Markdown (``--write FILE`` to save).

    python benchmarks/dyck_tiebreak.py --lengths 10000,100000,1000000 --rows 64
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch

from hardsoft.model.fastpath import fast_paths
from hardsoft.programs.ahat import library
from hardsoft.programs.ahat.compile import TIEBREAK, compile_program
from hardsoft.programs.ahat.dsl import Linear, Position, attend, lookup_int, relu, step
from hardsoft.programs.ahat.soften import certificate, soften

from _common import environment


def previous_dyck(k: int):
    """The construction before the depth split: score 2 d_i d_j − d_i² − d_j²."""
    pairs = library.BRACKETS[:k]
    lefts = [library.Token(p[0]) for p in pairs]
    rights = [library.Token(p[1]) for p in pairs]
    left, right = library._sum(lefts), library._sum(rights)
    height = 2.0 * library.count(left, label="lcount") - Position("i")
    depth = relu(height + right, label="depth")
    sq = lookup_int(depth, [Position("i^2")], label="depth_sq").value(0) - 1.0 + step(depth, 1)
    near = attend(
        [2.0 * depth, -1.0 * sq, 1.0],
        [depth, Linear({}, 1.0), -1.0 * sq],
        [*lefts, depth],
        mask="strict-future",
        tie="rightmost",
        label="same_depth",
    )
    prog = library.dyck(k)
    prog.outputs = [near.value(k).lin() + 0.0 * library.Token("(")]
    return prog


def worst_word(n: int) -> str:
    a = n // 4
    b = (n - 2 * a) // 2
    return "(" * a + "()" * b + ")" * a


ORDERS = ("(q·k)·s", "(q·s)·k", "reversed")


def score_rows(model, layer: int, head: int, word: str, rows: np.ndarray):
    """The head's float64 scores for the query rows (0-based), keys j < i, in three orders of
    evaluation: ``(q·k)·scale`` (the dense path), ``(q·scale)·k`` (fused kernels) and
    ``(q·k)·scale`` with the head dimensions summed in reverse order (another accumulation
    order, as a different BLAS kernel or GPU may use)."""
    with torch.no_grad(), fast_paths("auto"):
        x = model.embed(model.encode([word]))
        for block in model.blocks[:layer]:
            x = block(x)
    h = model.blocks[layer].heads[head]
    q, k = (x @ h.W_Q).detach()[0], (x @ h.W_K).detach()[0]
    scale = h.score_scale(len(word))
    for i in rows:
        flipped = (k[:i].flip(-1) @ q[i].flip(-1)) * scale
        yield i, ((k[:i] @ q[i]) * scale, k[:i] @ (q[i] * scale), flipped), scale


def analyse(which: str, n: int, rows: int) -> dict:
    prog = library.dyck(2) if which == "current" else previous_dyck(2)

    compiled = compile_program(prog)
    model = soften(compiled.model, certificate(compiled.model, prog.gap)["tau"])
    info = next(h for h in compiled.heads if h.label == "same_depth")
    word = worst_word(n)
    a = n // 4
    mid = np.arange(a + 3, n - a, 2)  # the ")" of the middle run after its first pair
    pick = mid[np.linspace(0, len(mid) - 1, rows).astype(int)]
    start = time.perf_counter()
    wrong = dict.fromkeys(ORDERS, 0)
    ratios: dict[str, list[float]] = {o: [] for o in ORDERS}
    for i, rows_, scale in score_rows(model, info.layer, info.head, word, pick):
        exact_gap = scale * TIEBREAK / n
        for order, s in zip(ORDERS, rows_):
            top2 = torch.topk(s, 2)
            wrong[order] += int(top2.indices[0]) != i - 1
            ratios[order].append(float(top2.values[0] - top2.values[1]) / exact_gap)
    return {
        "construction": which,
        "n": n,
        "rows": len(pick),
        "orders": {o: (wrong[o], min(ratios[o]), max(ratios[o])) for o in ORDERS},
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="10000,100000,1000000")
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--write", default="")
    args = ap.parse_args()
    results = []
    for n in [int(x) for x in args.lengths.split(",")]:
        for which in ("previous", "current"):
            results.append(analyse(which, n, args.rows))
            print(results[-1], flush=True)
    lines = [
        "# DYCK-2: float64 exactness of the same-depth tie-break",
        "",
        f"`python benchmarks/dyck_tiebreak.py --lengths {args.lengths} --rows {args.rows}`",
        "",
        " | ".join(f"{k}: {v}" for k, v in environment("cpu").items())
        + f" | load average: {os.getloadavg()[0]:.1f}",
        "",
        "| construction | n | order | query rows | wrong argmax | float gap / exact gap "
        "(min, max) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        for order, (bad, lo, hi) in r["orders"].items():
            lines.append(
                f"| {r['construction']} | {r['n']} | {order} | {r['rows']} | {bad} | "
                f"{lo:.6g}, {hi:.6g} |"
            )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()

"""Unique-hard attention: the block step of the streamed path, side by side.

``previous``: the step the model used before 2026-11-23 (scores, row max, equality mask,
masked index min/max: four passes over the ``[B, q, block]`` scores). ``torch.max``:
:func:`hardsoft.model.attention.hard_block_pick` (torch.max returns the first maximal index in
one pass; for rightmost the keys are scored in reverse order). Both run in the same process, at
the block level and in whole model forwards (the model's block step is swapped in place), and
their outputs are compared for identity.

    python benchmarks/hard_pick.py [--device cuda] [--lengths 1024,4096,16384]
"""

from __future__ import annotations

import argparse
import json

import torch

import hardsoft.model.attention as attention
from hardsoft.model import random_model

from _common import best_time, environment

NEW_STEP = attention.hard_block_pick


def previous_step(q, k, score_scale, allowed, weighting) -> tuple[torch.Tensor, torch.Tensor]:
    """The earlier block step: scores, row max, equality mask, masked index reduction."""
    scores = (q @ k.transpose(-1, -2)) * score_scale
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    row_max = scores.amax(dim=-1)
    hit = scores == row_max[..., None]
    n_k = scores.shape[-1]
    idx = torch.arange(n_k, device=scores.device)
    if weighting == "leftmost":
        return row_max, torch.where(hit, idx, n_k).amin(-1)
    return row_max, torch.where(hit, idx, -1).amax(-1)


def block_rows(device: str, repeats: int) -> list[dict]:
    rows = []
    g = torch.Generator().manual_seed(0)
    for batch, size in [(1, 512), (4, 512), (8, 1024)]:
        q = torch.randint(-2, 3, (batch, size, 16), generator=g).double().to(device)
        k = torch.randint(-2, 3, (batch, size, 16), generator=g).double().to(device)
        for weighting in ("leftmost", "rightmost"):
            args = (q, k, 0.25, None, weighting)
            same = all(torch.equal(a, b) for a, b in zip(previous_step(*args), NEW_STEP(*args)))
            t_old = best_time(lambda args=args: previous_step(*args), device, repeats)
            t_new = best_time(lambda args=args: NEW_STEP(*args), device, repeats)
            rows.append(
                {
                    "block": f"{batch}x{size}x{size}",
                    "weighting": weighting,
                    "previous_ms": 1e3 * t_old,
                    "torch_max_ms": 1e3 * t_new,
                    "speedup": t_old / t_new,
                    "identical": same,
                }
            )
    return rows


def model_rows(lengths: list[int], device: str, repeats: int) -> list[dict]:
    rows = []
    for weighting, mask in (("leftmost", "none"), ("rightmost", "future")):
        model = random_model(
            weighting=weighting, mask=mask, layers=2, heads=2, d_model=16, seed=0
        ).to(device=device, dtype=torch.float64)
        for n in lengths:
            tokens = torch.randint(0, 2, (2, n), generator=torch.Generator().manual_seed(n))
            tokens = tokens.to(device)
            outs, times = {}, {}
            for name, step in (("previous", previous_step), ("torch_max", NEW_STEP)):
                attention.hard_block_pick = step
                try:
                    with torch.no_grad():
                        outs[name] = model(tokens).outputs
                        times[name] = best_time(
                            lambda m=model, t=tokens: m(t), device, repeats, warmup=0
                        )
                finally:
                    attention.hard_block_pick = NEW_STEP
            rows.append(
                {
                    "model": f"2 layers x 2 {weighting} heads, mask {mask}",
                    "n": n,
                    "batch": 2,
                    "previous_s": times["previous"],
                    "torch_max_s": times["torch_max"],
                    "speedup": times["previous"] / times["torch_max"],
                    "identical": bool(torch.equal(outs["previous"], outs["torch_max"])),
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lengths", default="1024,4096,16384")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    result = {
        "environment": environment(args.device),
        "blocks": block_rows(args.device, max(5, args.repeats)),
        "models": model_rows(lengths, args.device, args.repeats),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(json.dumps(result["environment"]))
    print("| q x k block | weighting | previous ms | torch.max ms | speedup | identical |")
    print("|---|---|---|---|---|---|")
    for r in result["blocks"]:
        print(
            f"| {r['block']} | {r['weighting']} | {r['previous_ms']:.2f} | "
            f"{r['torch_max_ms']:.2f} | {r['speedup']:.1f}x | {r['identical']} |"
        )
    print()
    print("| model | n | previous s | torch.max s | speedup | identical outputs |")
    print("|---|---|---|---|---|---|")
    for r in result["models"]:
        print(
            f"| {r['model']} | {r['n']} | {r['previous_s']:.3f} | {r['torch_max_s']:.3f} | "
            f"{r['speedup']:.2f}x | {r['identical']} |"
        )


if __name__ == "__main__":
    main()

"""Forward pass of a 4-layer, d=64, 4-head softmax model at n = 4096 (batch 8): hardsoft's
Transformer against a plain PyTorch baseline written the obvious way (materialised scores,
torch.softmax), measured side by side in one run, same weights, same dtype.

    python benchmarks/model_forward.py [--device cuda] [--n 4096] [--batch 8] [--dtype float32]
"""

from __future__ import annotations

import argparse
import json

import torch

from hardsoft.model import feature_matrix, random_model

from _common import best_time, environment


def naive_forward(model, tokens: torch.Tensor) -> torch.Tensor:
    """The obvious implementation: scores = q k^T, mask, softmax, weighted sum."""
    n = tokens.shape[1]
    x = (
        model.W_E[tokens]
        + feature_matrix(model.spec.position_features, n, model.dtype, model.device) @ model.W_pos
    )
    causal = torch.ones(n, n, dtype=torch.bool, device=model.device).tril()
    for block in model.blocks:
        att = 0
        for head in block.heads:
            q, k, v = x @ head.W_Q, x @ head.W_K, x @ head.W_V
            s = (q @ k.transpose(-1, -2)) * head.score_scale(n)
            s = s.masked_fill(~causal, float("-inf"))
            att = att + torch.softmax(s, dim=-1) @ v @ head.W_O
        h = x + att
        x = h + torch.relu(h @ block.W_in + block.b_in) @ block.W_out + block.b_out
    return x @ model.W_U + model.b_U


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    model = random_model(
        weighting="softmax", mask="future", layers=4, heads=4, d_model=64, seed=0, dtype=dtype
    ).to(args.device)
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 2, (args.batch, args.n), generator=g).to(args.device)
    results = {"env": environment(args.device), "config": vars(args)}
    with torch.no_grad():
        ours = model(tokens).outputs
        ref = naive_forward(model, tokens)
        results["max_abs_diff"] = float((ours - ref).abs().max())
        results["hardsoft_s"] = best_time(lambda: model(tokens), args.device, args.repeats)
        results["naive_s"] = best_time(
            lambda: naive_forward(model, tokens), args.device, args.repeats
        )
        results["hardsoft_chunked_1024_s"] = best_time(
            lambda: model(tokens, chunk_size=1024), args.device, args.repeats
        )
    results["speedup_vs_naive"] = results["naive_s"] / results["hardsoft_s"]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

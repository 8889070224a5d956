"""Training throughput (tokens per second) of ``hardsoft.learn.train`` for the transformer and
the LSTM, against a plain PyTorch training loop written the obvious way for the same model
(random token batches already on the device, hard-label ``F.cross_entropy``, AdamW), measured
side by side in one run.

hardsoft's loop also draws every batch exactly from Hahn's process (conditioned sampler) and
builds the exact next-symbol targets, sets the learning-rate schedule and clips gradients; the
ratio is the price of that.

    python benchmarks/train_throughput.py [--device cuda] [--n 40] [--batch 64] [--steps 60]
        [--d-model 64] [--layers 2] [--language parity] [--rounds 3] [--out results.json]

Each round times the plain loop, then hardsoft's; the rounds alternate and the best
tokens/s of each is kept, so the machine's other load (it is shared) hits both alike.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import torch
import torch.nn.functional as F

from hardsoft.learn import ArchConfig, TrainConfig, build_model, get_process, logits, train

from _common import environment, sync


def plain_loop(model, n_symbols: int, d_out: int, args, steps: int) -> float:
    """Tokens per second of the obvious loop on the same architecture."""
    g = torch.Generator().manual_seed(0)
    xs = torch.randint(0, n_symbols, (steps, args.batch, args.n), generator=g).to(args.device)
    ys = torch.randint(0, d_out, (steps, args.batch, args.n), generator=g).to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()

    def step(k: int) -> None:
        out = logits(model, xs[k])
        loss = F.cross_entropy(out.reshape(-1, d_out), ys[k].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for k in range(min(3, steps)):  # warm-up
        step(k)
    sync(args.device)
    start = time.perf_counter()
    for k in range(steps):
        step(k)
    sync(args.device)
    return steps * args.batch * args.n / (time.perf_counter() - start)


def hardsoft_loop(arch: ArchConfig, args, steps: int) -> float:
    cfg = TrainConfig(
        language=args.language,
        arch=arch,
        min_n=args.n,
        max_n=args.n,
        steps=steps + 3,
        batch_size=args.batch,
        warmup=1,
        checkpoint_every=10**9,
    )
    with tempfile.TemporaryDirectory() as tmp:
        train(cfg, tmp, device=args.device, show_progress=False, stop_after=3)  # warm-up
        sync(args.device)
        start = time.perf_counter()
        train(cfg, tmp, device=args.device, show_progress=False)
        sync(args.device)
        elapsed = time.perf_counter() - start
    return steps * args.batch * args.n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--language", default="parity", choices=["parity", "dyck2"])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    ap.add_argument("--rounds", type=int, default=3, help="alternated rounds; best of each")
    ap.add_argument("--archs", default="transformer,lstm")
    ap.add_argument("--out", default=None, help="Also write the JSON result here.")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    proc = get_process(args.language)
    results = {"env": environment(args.device), "config": vars(args), "rows": []}
    for name in args.archs.split(","):
        arch = ArchConfig(
            arch=name,
            layers=args.layers if name == "transformer" else 1,
            heads=args.heads,
            d_model=args.d_model,
        )
        plains, ourss = [], []
        for _ in range(args.rounds):  # alternated, best of each: load spikes hit both alike
            model = build_model(arch, proc.alphabet, seed=0).to(args.device)
            plains.append(
                plain_loop(model, len(proc.alphabet), len(proc.symbols), args, args.steps)
            )
            ourss.append(hardsoft_loop(arch, args, args.steps))
        plain, ours = max(plains), max(ourss)
        results["rows"].append(
            {
                "arch": name,
                "parameters": sum(p.numel() for p in model.parameters()),
                "hardsoft_tokens_per_s": ours,
                "plain_tokens_per_s": plain,
                "rounds": {"hardsoft": ourss, "plain": plains},
                "ratio_hardsoft_over_plain": ours / plain,
            }
        )
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

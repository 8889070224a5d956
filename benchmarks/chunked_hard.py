"""Chunked hard-attention forward at long n, with peak memory: a 2-layer, 2-head rightmost-hard
model (future mask) in float64. Each configuration runs in a fresh subprocess so its peak
resident memory (CPU) or peak allocated memory (CUDA) is its own.

    python benchmarks/chunked_hard.py [--device cuda] [--lengths 4096,16384,65536] [--chunk 1024]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch

from hardsoft.model import random_model

from _common import environment, sync


def one(n: int, chunk: int | None, device: str, batch: int) -> dict:
    model = random_model(
        weighting="rightmost",
        mask="future",
        layers=2,
        heads=2,
        d_model=16,
        seed=0,
        dtype=torch.float64,
    ).to(device)
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 2, (batch, n), generator=g).to(device)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with torch.no_grad():
        start = time.perf_counter()
        out = model(tokens, chunk_size=chunk).outputs
        sync(device)
        elapsed = time.perf_counter() - start
    res = {
        "n": n,
        "chunk": chunk,
        "batch": batch,
        "seconds": elapsed,
        "checksum": float(out.double().sum()),
    }
    if device.startswith("cuda"):
        res["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    res["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    res["rss_growth_mib"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base_rss) / 1024
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lengths", default="4096,16384,65536")
    ap.add_argument("--chunk", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument(
        "--unchunked-max",
        type=int,
        default=16384,
        help="also run without chunking up to this n (O(n^2) memory)",
    )
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        n, chunk = (int(x) for x in args.child.split(":"))
        print(json.dumps(one(n, chunk or None, args.device, args.batch)))
        return
    rows = []
    for n in (int(x) for x in args.lengths.split(",")):
        for chunk in [args.chunk, 0] if n <= args.unchunked_max else [args.chunk]:
            cmd = [
                sys.executable,
                __file__,
                "--device",
                args.device,
                "--batch",
                str(args.batch),
                "--child",
                f"{n}:{chunk}",
            ]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                rows.append({"n": n, "chunk": chunk or None, "error": out.stderr.strip()[-300:]})
            else:
                rows.append(json.loads(out.stdout))
            print(json.dumps(rows[-1]), flush=True)
    same = {}
    for r in rows:
        if "checksum" in r:
            same.setdefault(r["n"], []).append(r["checksum"])
    print(
        json.dumps(
            {
                "env": environment(args.device),
                "rows": rows,
                "chunked_equals_full": {n: max(v) - min(v) for n, v in same.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

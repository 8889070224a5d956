"""Long inputs on CPU: compiled formulas (and the DYCK-2 program) with the fast attention paths,
against the dense reference path and a plain PyTorch loop, measured side by side in one run.

Part 1 (model forward, one string per length, float64): for each model and n, the time of the
fast paths (``auto`` policy), of the dense reference path (``--dense-max-n``) and of a plain
dense float64 PyTorch loop over as many masked softmax heads as the model has (query blocks of
2048 against all keys; up to ``--plain-max-n``, or ``--plain-long-max-n`` for the
``--plain-long`` models), with the ratios, and the mismatches of the fast path (and the dense
one) against the logic evaluator at every position. DYCK-1 runs on random balanced strings,
the other formulas on uniform random strings.

Part 2 (``hardsoft run`` end to end, ``--cli-lengths``): wall time of the CLI on one random
string (input file → JSON), every position checked against the evaluator; and the DYCK-2
program (``--dyck2-n``) on a depth-n/2 string and a random balanced one, against the oracle.

    python benchmarks/long_inputs.py --write results/long_inputs.md
"""

from __future__ import annotations

import os

# as the hardsoft command does (hardsoft.runtime): huge pages for large tensors, set before
# torch loads, so the three paths are timed under the CLI's allocator setting
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from hardsoft.check import formula_reference
from hardsoft.compile import compile_formula
from hardsoft.experiments.long_inputs import word_ids
from hardsoft.logic import parse
from hardsoft.model import save_model
from hardsoft.model.fastpath import dense_reference, fast_paths

from _common import environment

FORMULAS = {
    "parity (MOD)": ("MOD(2,1)(#<['1'])", "01"),
    "parity (counting)": ("!E(#<[Y '1'] = #>['1'])", "01"),
    "majority": ("#<['1'] > #<['0']", "01"),
    "dyck1": ("!E (#<['('] < #<[')']) & #<['('] = #<[')']", "()"),
}
HARDSOFT = str(Path(sys.executable).with_name("hardsoft"))


def load() -> float:
    return os.getloadavg()[0]


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def plain_loop(n: int, heads: int, d: int = 2, block: int = 2048) -> None:
    """``heads`` masked (j <= i) softmax heads of width d, dense float64, in query blocks."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(n, d, generator=g, dtype=torch.float64) for _ in range(3))
    j = torch.arange(n)
    for _ in range(heads):
        out = torch.empty(n, d, dtype=torch.float64)
        for s in range(0, n, block):
            e = min(n, s + block)
            scores = (q[s:e] @ k.T).masked_fill(j[None, :] > torch.arange(s, e)[:, None], -1e300)
            out[s:e] = torch.softmax(scores, -1) @ v


def forward_row(name: str, model, n: int, args) -> dict:
    formula, alphabet = FORMULAS[name]
    ids = word_ids(n, np.random.default_rng(n), balanced=name == "dyck1")
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)(ids)
    tokens = torch.from_numpy(ids)
    heads = sum(len(b.heads) for b in model.blocks)
    row: dict = {"model": name, "n": n, "heads": heads, "load": load()}
    with torch.no_grad():
        row["fast s"], out = timed(lambda: model(tokens))
        row["paths"] = sorted(set(out.paths.values()))
        row["fast mismatches"] = int(((out.outputs[0, :, 0].numpy() > 0.5) != ref[0]).sum())
        if n <= args.dense_max_n:
            with dense_reference():
                row["dense s"], dense = timed(lambda: model(tokens))
            row["dense mismatches"] = int(((dense.outputs[0, :, 0].numpy() > 0.5) != ref[0]).sum())
    if n <= args.plain_max_n or (name in args.plain_long and n <= args.plain_long_max_n):
        row["plain s"], _ = timed(lambda: plain_loop(n, heads))
    return row


def cli_row(name: str, path: Path, n: int, tmp: Path) -> dict:
    formula, alphabet = FORMULAS[name]
    ids = word_ids(n, np.random.default_rng(n + 1), balanced=name == "dyck1")
    word = "".join(alphabet[c] for c in ids[0])
    (tmp / "in.txt").write_text(word + "\n")
    before, cpu = load(), child_cpu()
    wall, res = timed(
        lambda: subprocess.run(
            [HARDSOFT, "run", str(path), "--input-file", str(tmp / "in.txt"), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
    )
    outputs = np.array(json.loads(res.stdout)["results"][0]["outputs"])[:, 0]
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)(ids)[0]
    bad = int(((outputs > 0.5) != ref).sum())
    cpu = child_cpu() - cpu
    return {
        "model": name,
        "n": n,
        "wall s": wall,
        "cpu s": cpu,
        "mismatches": bad,
        "load": (before, load()),
    }


def dyck2_rows(n: int, tmp: Path) -> list[dict]:
    from hardsoft.languages import get_language

    path = tmp / "dyck2.safetensors"
    subprocess.run(
        [HARDSOFT, "program", "dyck", "--k", "2", "--target", "soft-temperature", "-o", str(path)],
        check=True,
        capture_output=True,
    )
    lang = get_language("dyck2")
    rng = np.random.default_rng(0)
    pairs = [("()", "[]")[int(b)] for b in rng.integers(0, 2, n // 2)]
    deep = "".join(p[0] for p in pairs) + "".join(p[1] for p in reversed(pairs))
    mixed = lang.sample_balanced(n, 1, rng)[0][0]
    (tmp / "d2.txt").write_text(deep + "\n" + mixed + "\n")
    before, cpu = load(), child_cpu()
    wall, res = timed(
        lambda: subprocess.run(
            [HARDSOFT, "run", str(path), "--input-file", str(tmp / "d2.txt"), "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
    )
    results = json.loads(res.stdout)["results"]
    rows = []
    for label, word, r in zip(("depth n/2", "random balanced"), (deep, mixed), results):
        out = np.rint(np.array(r["outputs"])[:, 0])
        bad = int((out != np.asarray(lang.prefix_reference(word))).sum())
        rows.append({"string": label, "n": n, "mismatches": bad})
    cpu = child_cpu() - cpu
    return [
        {"wall s (both strings)": wall, "cpu s": cpu, "load": (before, load()), "strings": rows}
    ]


def fmt(x) -> str:
    return "" if x is None else (f"{x:.3g}" if isinstance(x, float) else str(x))


def report(args, forward: list[dict], cli: list[dict], dyck: list[dict]) -> str:
    env = " | ".join(f"{k}: {v}" for k, v in environment("cpu").items())
    lines = [
        "# Long inputs on CPU: fast attention paths vs the dense path vs a plain loop",
        "",
        f"`python benchmarks/long_inputs.py {' '.join(sys.argv[1:])}`",
        "",
        env,
        "",
        "## Model forward, one string per length (float64, 0 mismatches = exact at every position)",
        "",
        "| model | n | heads | fast s | dense s | plain loop s | dense / fast | plain / fast | "
        "mismatches fast (dense) | paths | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in forward:
        dense, plain = r.get("dense s"), r.get("plain s")
        lines.append(
            f"| {r['model']} | {r['n']} | {r['heads']} | {fmt(r['fast s'])} | {fmt(dense)} | "
            f"{fmt(plain)} | {fmt(dense / r['fast s'] if dense else None)} | "
            f"{fmt(plain / r['fast s'] if plain else None)} | {r['fast mismatches']}"
            f"{'' if dense is None else ' (' + str(r['dense mismatches']) + ')'} | "
            f"{', '.join(r['paths'])} | {r['load']:.1f} |"
        )
    lines += ["", "## `hardsoft run` end to end (input file → JSON)", ""]
    lines += [
        "| model | n | wall s | CPU s (user + sys) | mismatches | load before, after |",
        "|---|---|---|---|---|---|",
    ]
    for r in cli:
        lines.append(
            f"| {r['model']} | {r['n']} | {r['wall s']:.1f} | {r['cpu s']:.1f} | "
            f"{r['mismatches']} | {r['load'][0]:.1f}, {r['load'][1]:.1f} |"
        )
    for d in dyck:
        lines += [
            "",
            f"DYCK-2 program, `hardsoft run` on two strings: {d['wall s (both strings)']:.1f} s"
            f" wall, {d['cpu s']:.1f} s CPU (load {d['load'][0]:.1f}, {d['load'][1]:.1f})",
            "",
        ]
        lines += ["| string | n | mismatches |", "|---|---|---|"]
        lines += [f"| {s['string']} | {s['n']} | {s['mismatches']} |" for s in d["strings"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="4096,16384,65536,100000,1000000")
    ap.add_argument("--models", default=",".join(FORMULAS))
    ap.add_argument("--dense-max-n", type=int, default=16384)
    ap.add_argument("--plain-max-n", type=int, default=16384)
    ap.add_argument("--plain-long", default="parity (MOD)", help="models with a longer plain loop")
    ap.add_argument("--plain-long-max-n", type=int, default=100000)
    ap.add_argument("--cli-lengths", default="100000,1000000")
    ap.add_argument("--dyck2-n", type=int, default=100000, help="0: skip")
    ap.add_argument("--write", default="")
    args = ap.parse_args()
    args.plain_long = [m for m in args.plain_long.split(",") if m]
    names = [m for m in args.models.split(",") if m]
    lengths = [int(x) for x in args.lengths.split(",") if x]
    forward, cli, dyck = [], [], []
    with tempfile.TemporaryDirectory() as tmpdir, fast_paths("auto"):
        tmp = Path(tmpdir)
        for name in names:
            formula, alphabet = FORMULAS[name]
            model = compile_formula(formula, alphabet, target="soft-temperature")
            save_model(model, tmp / "m.safetensors")
            for n in lengths:
                forward.append(forward_row(name, model, n, args))
                print(forward[-1], flush=True)
            for n in [int(x) for x in args.cli_lengths.split(",") if x]:
                cli.append(cli_row(name, tmp / "m.safetensors", n, tmp))
                print(cli[-1], flush=True)
        if args.dyck2_n:
            dyck = dyck2_rows(args.dyck2_n, tmp)
            print(dyck[-1], flush=True)
    text = report(args, forward, cli, dyck)
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()

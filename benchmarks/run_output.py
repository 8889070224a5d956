"""``hardsoft run`` of compiled PARITY on one input of n = 10^7: the outputs printed as JSON by a
baseline version of hardsoft (the one before ``run -o`` and the vectorised JSON), by this one,
and written by this one to ``-o OUT.npy`` (and by other versions, ``--other NAME=SRC``), side
by side in one run.

Each command runs as a subprocess under ``/usr/bin/time -v`` (wall time, CPU time, peak memory)
with one torch thread; stdout goes to a file. Every output is checked: the .npy and this
version's JSON against the parity of the prefix count at every position, and the two JSON
texts against each other (byte for byte).

    git archive BASE src | tar -x -C /tmp/base        # the baseline's source, e.g. BASE = main
    python benchmarks/run_output.py --baseline-src /tmp/base/src --n 10000000 \\
        --write results/run_output.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import environment

PARITY = "MOD(2,1)(#<['1'])"


def timed(cmd: list[str], env: dict[str, str], stdout: Path) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one command."""
    start = time.perf_counter()
    with open(stdout, "wb") as out:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd], env=env, stdout=out, stderr=subprocess.PIPE
        )
    wall = time.perf_counter() - start
    err = proc.stderr.decode()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err[-800:]}")
    facts = {}
    for line in err.splitlines():
        key, _, value = line.strip().partition(": ")
        facts[key] = value
    cpu = float(facts["User time (seconds)"]) + float(facts["System time (seconds)"])
    rss = int(facts["Maximum resident set size (kbytes)"]) / 1024
    return {"wall": wall, "cpu": cpu, "rss": rss}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--baseline-src", required=True, help="the baseline's src/ folder")
    ap.add_argument(
        "--other",
        action="append",
        default=[],
        metavar="NAME=SRC",
        help="also time `run -o OUT.npy` of another version's src/ folder (repeatable)",
    )
    ap.add_argument("--target", default="soft-temperature", help="compile target (or hard)")
    ap.add_argument("--write", default=None)
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parent.parent / "src")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OMP_NUM_THREADS")}
    env.update(HARDSOFT_THREADS="1", OMP_NUM_THREADS="1")
    cli = [sys.executable, "-m", "hardsoft.cli"]
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        model, word = d / "parity.safetensors", d / "w.txt"
        subprocess.run([*cli, "compile", PARITY, "-a", "01", "-t", args.target, "-o",
                        str(model)], env=env | {"PYTHONPATH": here}, check=True,
                       capture_output=True)  # fmt: skip
        bits = np.random.default_rng(0).integers(0, 2, args.n, dtype=np.uint8)
        word.write_bytes((bits + 48).tobytes() + b"\n")
        truth = np.cumsum(bits) % 2 == 1
        run = [*cli, "run", str(model), "--input-file", str(word)]
        plan = {
            "baseline run --json": (args.baseline_src, [*run, "--json"], d / "base.json"),
            "run --json": (here, [*run, "--json"], d / "new.json"),
        }
        others = dict(o.split("=", 1) for o in args.other)
        for k, (name, src) in enumerate(others.items()):
            out_k = str(d / f"other{k}.npy")
            plan[f"{name} run -o OUT.npy"] = (src, [*run, "-o", out_k], d / f"other{k}.txt")
        plan["run -o OUT.npy"] = (here, [*run, "-o", str(d / "out.npy")], d / "npy.txt")
        for name, (src, cmd, out) in plan.items():
            rows[name] = timed(cmd, env | {"PYTHONPATH": src}, out)
            print(name, rows[name], flush=True)
        arr = np.load(d / "out.npy")
        exact_npy = bool(np.array_equal(arr[:, 0] > 0.5, truth))
        exact_others = {
            name: bool(np.array_equal(np.load(d / f"other{k}.npy")[:, 0] > 0.5, truth))
            for k, name in enumerate(others)
        }
        same_text = (d / "base.json").read_bytes().split(b', "attention_paths"')[0] == (
            d / "new.json"
        ).read_bytes().split(b', "attention_paths"')[0]
        new = json.loads((d / "new.json").read_text())["results"][0]["outputs"]
        exact_json = bool(np.array_equal(np.asarray(new)[:, 0] > 0.5, truth))
        same_values = bool(np.array_equal(np.asarray(new), arr))
    checks = {
        "npy exact at every position": exact_npy,
        "JSON exact at every position": exact_json,
        "npy equals the JSON's values": same_values,
        "JSON text equals the baseline's (results)": same_text,
        **{f"{name} npy exact at every position": ok for name, ok in exact_others.items()},
    }
    print(checks)
    if args.write:
        write(Path(args.write), args, rows, checks)


def write(path: Path, args: argparse.Namespace, rows: dict, checks: dict) -> None:
    base = rows["baseline run --json"]["wall"]
    base_cpu = rows["baseline run --json"]["cpu"]
    lines = [
        f"# `hardsoft run` at n = {args.n:,}: JSON (baseline and now) and `-o OUT.npy`",
        "",
        f"`python benchmarks/run_output.py --baseline-src BASE/src --n {args.n} "
        f"--target {args.target}" + "".join(f" --other {o}" for o in args.other) + "`",
        "",
        " | ".join(f"{k}: {v}" for k, v in environment("cpu").items()),
        f"1-min load average at the end: {os.getloadavg()[0]:.2f}",
        "",
        "| command | wall s | CPU s | peak RSS MiB | baseline wall / this wall | "
        "baseline CPU / this CPU |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['rss']:.0f} | "
            f"{base / r['wall']:.2f} | {base_cpu / r['cpu']:.2f} |"
        )
    lines += ["", "Checks: " + "; ".join(f"{k}: {v}" for k, v in checks.items()), ""]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()

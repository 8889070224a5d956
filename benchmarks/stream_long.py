"""``hardsoft run MODEL --stream`` on one random word of n = 10^8 (and smaller n), against the
floor: a plain numpy pass that reads the same file in the same chunks and takes its prefix sums.

Models: compiled PARITY (``MOD(2,1)(#<['1'])``) and MAJORITY (``#<['1'] > #<['0']``),
soft-temperature, float64. For each n: the word is written to a file (seeded, '0'/'1' bytes);
the floor is timed; then
``/usr/bin/time -v hardsoft run MODEL.safetensors --stream --input-file F -o OUT.npy --json``
runs, its wall time and peak memory (maximum resident set size) are recorded, and every
position of OUT.npy (read with ``numpy.load(mmap_mode="r")``) is checked against the formula's
value from the prefix count (mismatches and the first wrong position). For PARITY at the
``--compare-n`` length the streamed outputs are also compared with the non-streaming run's
(``hardsoft run --input-file F --json``), position by position.

    python benchmarks/stream_long.py --lengths 1000000,100000000 --write results/stream_long.md

``--busy`` runs one other CPU-bound job (``python -c "while 1: pass"``) during each streamed
run, as a user on a shared machine would have (issue #32: PARITY at 4·10^7 within 10 min).
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

HARDSOFT = str(Path(sys.executable).with_name("hardsoft"))
MODELS = {  # formula, and its value from the prefix count of 1s and the 1-based position
    "PARITY": ("MOD(2,1)(#<['1'])", lambda ones, i: ones % 2 == 1),
    "MAJORITY": ("#<['1'] > #<['0']", lambda ones, i: ones > i - ones),
}
CHUNK = 1 << 16


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def write_word(path: Path, n: int, seed: int) -> None:
    """A uniform random word over {0, 1} of length n, written in blocks (memory O(block))."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        for s in range(0, n, 1 << 22):
            f.write((rng.integers(0, 2, min(1 << 22, n - s), dtype=np.uint8) + 48).tobytes())
        f.write(b"\n")


def floor(path: Path, n: int, chunk: int) -> tuple[float, int]:
    """The plain numpy pass: read the file in chunks, map bytes to 0/1, prefix sums."""
    start, carry = time.perf_counter(), 0
    with open(path, "rb") as f:
        for s in range(0, n, chunk):
            ids = np.fromfile(f, dtype=np.uint8, count=min(chunk, n - s)).astype(np.int64) - 48
            sums = np.cumsum(ids) + carry
            carry = int(sums[-1])
    return time.perf_counter() - start, carry


def mismatches(path: Path, out: Path, n: int, rule) -> tuple[int, int | None]:
    """Positions of OUT.npy whose rounded output differs from ``rule`` of the prefix count,
    and the first of them (1-based; None: none)."""
    arr = np.load(out, mmap_mode="r")
    assert arr.shape == (n, 1), arr.shape
    bad, carry, first = 0, 0, None
    with open(path, "rb") as f:
        for s in range(0, n, 1 << 22):
            e = min(n, s + (1 << 22))
            ids = np.fromfile(f, dtype=np.uint8, count=e - s).astype(np.int64) - 48
            sums = np.cumsum(ids) + carry
            carry = int(sums[-1])
            wrong = (arr[s:e, 0] > 0.5) != rule(sums, np.arange(s + 1, e + 1))
            bad += int(wrong.sum())
            if first is None and bool(wrong.any()):
                first = s + int(np.argmax(wrong)) + 1
    return bad, first


def time_v(cmd: list[str], busy: bool = False) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS (KiB), stdout and CPU seconds (user + system) of
    ``/usr/bin/time -v CMD``; with ``busy``, one CPU-bound job runs alongside."""
    hog = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if busy else None
    try:
        start = time.perf_counter()
        res = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
    facts = dict(line.strip().partition(": ")[::2] for line in res.stderr.splitlines())
    rss = int(facts["Maximum resident set size (kbytes)"])
    cpu = float(facts["User time (seconds)"]) + float(facts["System time (seconds)"])
    return wall, rss, res.stdout, cpu


def compare_whole(model: Path, word: Path, out: Path) -> dict:
    """The streamed outputs against the non-streaming run's, position by position."""
    res = subprocess.run(
        [HARDSOFT, "run", str(model), "--input-file", str(word), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    whole = np.array(json.loads(res.stdout)["results"][0]["outputs"])
    streamed = np.load(out, mmap_mode="r")
    return {
        "positions": len(whole),
        "bitwise equal": int((whole == streamed).all(1).sum()),
        "max abs diff": float(np.abs(whole - streamed).max()),
    }


def one_length(name: str, model: Path, rule, n: int, tmp: Path, args) -> tuple[dict, Path, Path]:
    word, out = tmp / f"w{n}.txt", tmp / f"o{n}.npy"
    write_word(word, n, args.seed)
    before = load()
    floor_s, _ = floor(word, n, args.chunk)
    cmd = [HARDSOFT, "run", str(model), "--stream", "--input-file", str(word)]
    cmd += ["--chunk", str(args.chunk), "-o", str(out), "--json"]
    wall, rss, stdout, cpu = time_v(cmd, args.busy)
    summary = json.loads(stdout)
    bad, first = mismatches(word, out, n, rule)
    row = {
        "model": name,
        "n": n,
        "floor s": floor_s,
        "stream wall s": wall,
        "stream / floor": wall / floor_s,
        "stream CPU s": cpu,
        "engine s": summary["seconds"],
        "engine / floor": summary["seconds"] / floor_s,
        "peak RSS MiB": rss / 1024,
        "mismatches": bad,
        "first wrong position": first or "-",
        "paths": ", ".join(sorted(set(summary["attention_paths"].values()))),
        "load before, after": f"{before} | {load()}",
    }
    print(row, flush=True)
    return row, out, word


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="1000000,100000000")
    ap.add_argument("--models", default="PARITY,MAJORITY")
    ap.add_argument("--compare-n", type=int, default=1_000_000)
    ap.add_argument("--chunk", type=int, default=CHUNK)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tmp", default=None, help="Folder for the word and output files.")
    ap.add_argument("--write", default=None)
    ap.add_argument("--busy", action="store_true", help="One other CPU-bound job alongside.")
    args = ap.parse_args()
    env = environment("cpu")
    rows, compared = [], None
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp_name:
        tmp = Path(tmp_name)
        for name in args.models.split(","):
            formula, rule = MODELS[name]
            model = tmp / f"{name}.safetensors"
            subprocess.run(
                [
                    HARDSOFT,
                    "compile",
                    formula,
                    "-a",
                    "01",
                    "-t",
                    "soft-temperature",
                    "-o",
                    str(model),
                ],
                check=True,
                capture_output=True,
            )
            for n in (int(x) for x in args.lengths.split(",")):
                row, out, word = one_length(name, model, rule, n, tmp, args)
                rows.append(row)
                if n == args.compare_n and name == "PARITY":
                    compared = compare_whole(model, word, out)
                    print(compared, flush=True)
                word.unlink()
                out.unlink()
    text = render(env, rows, compared, args)
    print(text)
    if args.write:
        Path(__file__).with_name("results").joinpath(Path(args.write).name).write_text(text)


def render(env: dict, rows: list[dict], compared: dict | None, args) -> str:
    head = " | ".join(f"{k}: {v}" for k, v in env.items())
    cols = list(rows[0])
    lines = [
        "# Streaming runs to n = 10^8 against a plain numpy pass (the floor)",
        "",
        f"`python benchmarks/stream_long.py --lengths {args.lengths} --models {args.models} "
        f"--chunk {args.chunk}{' --busy' if args.busy else ''}`",
        "",
        head,
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for r in rows:
        cells = [f"{v:.3g}" if isinstance(v, float) else str(v) for v in r.values()]
        lines.append("| " + " | ".join(cells) + " |")
    if compared:
        lines += [
            "",
            f"At n = {args.compare_n:,}, streamed vs non-streaming `hardsoft run` (JSON): "
            f"{compared['bitwise equal']:,} of {compared['positions']:,} positions bitwise "
            f"equal, max abs diff {compared['max abs diff']:.3g}.",
        ]
    lines += [
        "",
        '"stream wall s" is the whole command (start-up, model load, reading, writing the',
        '.npy); "engine s" the streamed forward pass alone (the command\'s own summary).',
        "Peak RSS is /usr/bin/time -v's maximum resident set size of the command.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

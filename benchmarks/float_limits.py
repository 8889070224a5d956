"""Derived float limits (hardsoft.programs.ahat.rounding) against measurement, float32.

For every shipped RASP program (Tracr's library, @tracr_lib) and the §6 tieless programs:
the certificate's float64 and float32 limits and what binds them; then, in float32, the model
checked right at its derived limit (the hard words of that length and random words, against
the interpreter or the language's oracle), and past it by doubling n up to a cap: the first n
where a hard or random word is wrong. Derived limits are sound but conservative bounds; the
"measured / derived" column says by how much.

    python -m benchmarks.float_limits [--cap 8192] [--only NAME ...] \
        > benchmarks/results/float_limits.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import torch

from benchmarks._common import environment
from hardsoft.check import check_language
from hardsoft.languages.hard_words import hard_words
from hardsoft.programs.ahat.build import build
from hardsoft.programs.check_source import check_program
from hardsoft.programs.source import example_programs, load_program

TIELESS = [("dyck1", "dyck", 1), ("dyck2", "dyck", 2), ("flipflop", "flipflop", None)]
TARGETS = ("average-hard", "soft-temperature")


def rasp_check(prog: Any, model: Any, n: int, words: int) -> int:
    """Mismatching words among the first ``words`` hard words and 2 random words at n."""
    hard = hard_words(prog.alphabet, n)[:words]
    report = check_program(model, prog, exhaustive_max_n=0, random_n=[n], samples=2, words=hard)
    return int(report["mismatches"])


def language_check(reference: str, model: Any, n: int, words: int) -> int:
    report = check_language(model, reference, exhaustive_max_n=0, random_n=[n], samples=2)
    extra = check_language(model, reference, exhaustive_max_n=0, random_n=[], hard_n=[n])
    return int(report["mismatches"]) + int(extra["mismatches"])


def measure(check: Any, limit: int, cap: int) -> tuple[str, str]:
    """(right at the limit?, first failing n by doubling from the limit up to ``cap``)."""
    if limit < 1:
        return "no limit certified", "—"
    if limit > cap:  # too long to check with the reference: checked at the cap instead
        return ("yes" if check(cap) == 0 else "**no**") + f" (at {cap:,}, below it)", "—"
    at = "yes" if check(limit) == 0 else "**no**"
    n = limit * 2
    while n <= cap:
        if check(n):
            return at, f"{n:,} ({n / limit:.1f}x)"
        n *= 2
    return at, f"none up to {cap:,}"


def row(name: str, target: str, cert: dict, check: Any, cap: int) -> str:
    fl = cert["float_limits"]
    started = time.perf_counter()
    at, first = measure(check, fl["float32"], cap)
    seconds = time.perf_counter() - started
    why = fl["binding"]["float32"].split(": ", 1)[-1]
    return (
        f"| {name} | {target} | {fl['float64']:,} | {fl['float32']:,} | {why} | {at} | {first} "
        f"| {seconds:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cap", type=int, default=8192)
    parser.add_argument("--words", type=int, default=4, help="hard words per length")
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    print("# Float limits: derived against measured (float32)\n")
    print(f"`python -m benchmarks.float_limits --cap {args.cap}`; {environment('cpu')}; "
          f"load average {os.getloadavg()[0]:.1f} at the start.\n")  # fmt: skip
    print("| program | target | derived float64 | derived float32 | what binds past it "
          "(float32) | right at the derived limit | first failing n (hard + random words) "
          "| seconds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for e in example_programs():
        if not e.name.startswith("@tracr_lib:") or (args.only and e.name not in args.only):
            continue
        prog = load_program(e.path)
        target = "soft-temperature"
        try:
            model = prog.compile(target)
        except Exception:  # the two tied-average programs are average-hard only
            target = "average-hard"
            model = prog.compile(target)
        f32 = model.to(torch.float32)
        check = lambda n, p=prog, m=f32: rasp_check(p, m, n, args.words)  # noqa: E731
        print(row(e.name, target, model.meta["certificate"], check, args.cap), flush=True)
    for ref, name, k in TIELESS:
        if args.only and ref not in args.only:
            continue
        for target in TARGETS:
            b = build(name, k, target)
            f32 = b.model.to(torch.float32)
            check = lambda n, r=ref, m=f32: language_check(r, m, n, args.words)  # noqa: E731
            print(row(ref, target, b.certificate, check, 4 * args.cap), flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end.", file=sys.stdout)


if __name__ == "__main__":
    main()

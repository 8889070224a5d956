"""The soft-ln models (layer norm with ε = 0, τ = 1; docs/compiler.md "The soft-ln target")
against their certificates.

Part 1 (float64). Every shipped C-RASP program compiled with ``--target soft-ln`` and PARITY
by Chiang & Cholak's construction, run at n = 10^5 (three words) and 10^6 (one word), every
position compared with the program's own interpreter (PARITY: the last position with the
count of 1s).

Part 2 (float32). The first n (doubling from 1, then bisection to 1/32 of n, up to 2^18) at
which the float32 model is wrong on a word family (uniform random, alternating, a run of one
symbol), against the certificate's derived float32 limit.

Part 3 (ε > 0). With ε = 1e-5: the first n at which the margin at the last position falls
below 1/4 (bisection on alternating words), against the certificate's bracket; and for a
count of comparisons (``#<[#<['a'] > #<['b']] > #<[#<['b'] > #<['a']]``) the first n of
``a^k b^(3k-1)`` with a wrong answer, against the certificate's proven n.

    python benchmarks/softln.py [--quick] [--out benchmarks/results/softln.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import time
from collections.abc import Callable

import numpy as np
import torch

from hardsoft.atlas.layernorm import with_eps
from hardsoft.compile import compile_formula
from hardsoft.compile.parity_ln import parity_layernorm
from hardsoft.model.transformer import Transformer
from hardsoft.programs.source import example_programs, load_program

from _common import environment

NESTED = "#<[#<['a'] > #<['b']] > #<[#<['b'] > #<['a']]"


@dataclasses.dataclass
class Case:
    name: str
    model: Transformer
    alphabet: str
    reference: Callable[[str], np.ndarray]  # per position; PARITY: the last position only
    last_only: bool = False


def cases() -> list[Case]:
    out = []
    for e in example_programs():
        if e.file.notation.value != "crasp" or e.name == "@contains_ab":
            continue
        prog = load_program(e.path)
        model = prog.compile("soft-ln")
        last = prog.statements[-1]

        def ref(w: str, prog=prog, last=last) -> np.ndarray:
            return np.asarray(prog.run(w).values[last], dtype=bool)

        out.append(Case(e.name, model, "".join(prog.alphabet), ref))
    out.append(
        Case("PARITY (Chiang & Cholak)", parity_layernorm(), "01",
             lambda w: np.array([w.count("1") % 2 == 0]), True)
    )  # fmt: skip
    return out


def family(kind: str, alphabet: str, n: int, seed: int = 0) -> str:
    if kind == "random":
        rng = np.random.default_rng(seed + n)
        return "".join(rng.choice(list(alphabet), n))
    if kind == "alternating":
        return (alphabet[:2] * n)[:n]
    return alphabet[0] * n


def right(case: Case, model: Transformer, word: str) -> bool:
    with torch.no_grad():
        got = model.run_words([word])[0][:, 0] > 0.5
    ref = case.reference(word)
    return bool(got[-1] == ref[-1]) if case.last_only else bool(np.array_equal(got, ref))


def part_float64(cs: list[Case], quick: bool) -> list[str]:
    lines = ["## Part 1: float64 at n = 10^5 and 10^6", "",
             "| model | layers | heads | width | derived float64 limit | n | words | right | s |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in cs:
        limit = c.model.meta["certificate"]["float_limits"]["float64"]
        spec = c.model.spec
        for n, kinds in ((10**5, ("random", "alternating", "run")), (10**6, ("random",))):
            if quick and n > 10**5:
                continue
            t = time.perf_counter()
            ok = all(right(c, c.model, family(k, c.alphabet, n)) for k in kinds)
            heads = sum(len(layer.heads) for layer in spec.layers)
            lines.append(
                f"| {c.name} | {len(spec.layers)} | {heads} | {spec.d_model} | {limit:,} | {n:,} "
                f"| {len(kinds)} | {ok} | {time.perf_counter() - t:.1f} |"
            )
    return lines + [""]


def _right_at(case: Case, model: Transformer, kind: str, n: int) -> bool:
    return right(case, model, family(kind, case.alphabet, n))


def _wide(model: Transformer, alphabet: str, n: int) -> bool:
    return margin(model, family("alternating", alphabet, n)) >= 0.25


def first_failure(ok: Callable[[int], bool], cap: int) -> tuple[int, int] | None:
    """(last right, first wrong) within 1/32, or None if right up to ``cap``."""
    n = 1
    while n <= cap and ok(n):
        n *= 2
    if n > cap:
        return None
    if n == 1:
        return 0, 1
    lo, hi = n // 2, n
    while hi - lo > max(1, lo // 32):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo, hi


def part_float32(cs: list[Case], cap: int) -> list[str]:
    lines = ["## Part 2: float32, the first failing n against the derived limit", "",
             "| model | derived float32 limit | random | alternating | run | measured / derived |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for c in cs:
        m32 = c.model.to(torch.float32)
        limit = c.model.meta["certificate"]["float_limits"]["float32"]
        cells, firsts = [], []
        for kind in ("random", "alternating", "run"):
            found = first_failure(functools.partial(_right_at, c, m32, kind), cap)
            cells.append(f"right to {cap:,}" if found is None else f"({found[0]:,}, {found[1]:,}]")
            firsts.append(cap if found is None else found[1])
        ratio = min(firsts) / limit
        lines.append(f"| {c.name} | {limit:,} | {' | '.join(cells)} | ≥ {ratio:.3g} |")
        c.model.to(torch.float64)
    return lines + [""]


def margin(model: Transformer, word: str) -> float:
    with torch.no_grad():
        return float(abs(model.run_words([word])[0][-1, 0] - 0.5))


def part_eps(cs: list[Case]) -> list[str]:
    lines = ["## Part 3: ε = 1e-5", "",
             "| model | certificate: margin ≥ 1/4 up to n | below 1/4 from n | measured: first n "
             "with margin < 1/4 (alternating) |", "|---|---|---|---|"]  # fmt: skip
    for c in cs:
        at = next(r for r in c.model.meta["certificate"]["layer_norm"]["eps_effect"]["at"]
                  if r["eps"] == 1e-5)  # fmt: skip
        m = with_eps(c.model, 1e-5)
        found = first_failure(functools.partial(_wide, m, c.alphabet), 2**16)
        shown = "≥ 1/4 to 65,536" if found is None else f"({found[0]:,}, {found[1]:,}]"
        lo, hi = at["margin_at_least_quarter_up_to_n"], at["margin_below_quarter_from_n"]
        lines.append(f"| {c.name} | {lo if lo is not None else 'every n'} | "
                     f"{hi if hi is not None else '—'} | {shown} |")  # fmt: skip
    model = compile_formula(NESTED, "ab", target="soft-ln")
    at = next(r for r in model.meta["certificate"]["layer_norm"]["eps_effect"]["at"]
              if r["eps"] == 1e-5)  # fmt: skip
    from hardsoft.logic import evaluate, parse

    phi = parse(NESTED, alphabet=("a", "b"))
    m = with_eps(model, 1e-5)
    wrong = None
    for k in range(1, 200):
        w = "a" * k + "b" * (3 * k - 1)
        got = m.run_words([w])[0][:, 0] > 0.5
        if not np.array_equal(got, evaluate(phi, [w], ["a", "b"])[0] > 0):
            wrong = len(w)
            break
    lines += ["", f"Count of comparisons `{NESTED}` at ε = 1e-5: every comparison proven right up "
              f"to n = {at['exact_up_to_n']}; the first wrong answer on a^k b^(3k-1) at "
              f"n = {wrong} (ε = 0: right on all of them).", ""]  # fmt: skip
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    env = environment("cpu")
    load = os.getloadavg()
    cs = cases()
    lines = [
        "# softln",
        "",
        f"Machine: {env['machine']}; {env['cpu_count']} CPUs; python {env['python']}; "
        f"torch {env['torch']} ({env['torch_threads']} thread); {env['date']}; load average "
        f"at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "",
        *part_float64(cs, args.quick),
        *part_float32(cs, 2**14 if args.quick else 2**18),
        *part_eps(cs),
        f"Total {time.perf_counter() - started:.0f} s; load average at end "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()

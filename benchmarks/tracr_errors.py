"""Where Tracr itself is wrong or refuses, at its default ``mlp_exactness`` and at 1000: small
programs compiled by Tracr (``compile_rasp_to_model``, max_seq_len N) and checked against
Tracr's own ``rasp.evaluate`` at every length 1..N (every word for short lengths, random words
above). Runs in Tracr's Python only (jax, dm-haiku; no hardsoft)::

    /tmp/tracr-venv/bin/python benchmarks/tracr_errors.py --tracr /path/to/tracr \\
        -o benchmarks/results/tracr_errors.md

Each case says what it exercises: numerical MLPs after a mean, selectors combined with ``&``,
``rasp.length``, a mean of values other than 0 and 1. A case that raises says so with the
exception's first line.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

N = 8


def cases(rasp: Any, lib: Any) -> dict[str, tuple[str, Any, list[Any]]]:
    """name -> (what it exercises, program, vocab)."""
    frac = lib.make_frac_prevs(rasp.tokens == "a")
    mean3 = rasp.numerical(rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
        rasp.numerical(rasp.Map(lambda x: {"a": 0, "b": 1, "c": 2}[x], rasp.tokens)),
        default=0,
    ))  # fmt: skip
    eq = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    leq = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return {
        "square of a mean": (
            "numerical Map x² after a numerical mean (frac_prevs)",
            rasp.numerical(rasp.Map(lambda x: x * x, frac)),
            list("ab"),
        ),
        "mean > 1/3": (
            "categorical Map of a numerical mean (a threshold)",
            rasp.categorical(rasp.Map(lambda x: x > 1 / 3, frac)),
            list("ab"),
        ),
        "label of a mean": (
            "categorical Map of a mean to labels (low / high)",
            rasp.categorical(rasp.Map(lambda x: "high" if x > 0.5 else "low", frac)),
            list("ab"),
        ),
        "selector &": (
            "SelectorWidth of two Selects combined with &",
            rasp.numerical(rasp.SelectorWidth(eq & leq)),
            list("ab"),
        ),
        "rasp.length": (
            "the primitive rasp.length (not lib.make_length)",
            rasp.numerical(rasp.Map(lambda x: x, rasp.length)),
            list("ab"),
        ),
        "mean of 0, 1, 2": (
            "a numerical mean of values other than 0 and 1",
            mean3,
            list("abc"),
        ),
    }


def check(rasp: Any, compiling: Any, program: Any, vocab: list[Any], exactness: int,
          rng: random.Random) -> dict[str, Any]:  # fmt: skip
    start = time.process_time()
    try:
        model = compiling.compile_rasp_to_model(
            program, set(vocab), N, compiler_bos="BOS", mlp_exactness=exactness
        )
    except Exception as exc:  # Tracr refuses or crashes: recorded, not guessed
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        return {"error": f"{type(exc).__name__}: {first}"}
    cpu = time.process_time() - start
    words = right = 0
    max_err = 0.0
    wrong_from = None
    for n in range(1, N + 1):
        all_words = list(itertools.product(vocab, repeat=n))
        batch = all_words if len(all_words) <= 64 else [rng.choices(vocab, k=n) for _ in range(64)]
        for w, got in zip(batch, _apply(model, batch)):
            want = rasp.evaluate(program, list(w))
            ok = True
            for g, v in zip(got, want):
                if v is None:
                    continue
                if isinstance(v, (int, float)) and isinstance(g, (int, float)):
                    err = abs(float(g) - float(v))
                    max_err = max(max_err, err)
                    ok &= err < 0.01
                else:
                    ok &= g == v
            words += 1
            right += ok
            if not ok and wrong_from is None:
                wrong_from = n
    return {"compile_cpu_s": round(cpu, 2), "words": words, "right": right,
            "wrong_from": wrong_from, "max_err": max_err}  # fmt: skip


def _apply(model: Any, words: list[Any]) -> list[list[Any]]:
    """The decoded outputs of words of one length, in one forward pass."""
    import jax.numpy as jnp

    batch = jnp.array([model.input_encoder.encode(["BOS", *w]) for w in words])
    out = model.forward(model.params, batch).unembedded_output.tolist()
    dec = model.output_encoder.decode if model.output_encoder else (lambda row: row)
    return [list(dec(row))[1:] for row in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracr", required=True)
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    sys.path.insert(0, args.tracr)
    import jax
    from tracr.compiler import compiling, lib
    from tracr.rasp import rasp

    rng = random.Random(0)
    lines = [
        "# Where Tracr is wrong or refuses",
        "",
        f"Produced by `benchmarks/tracr_errors.py` on "
        f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')} (load average "
        f"{os.getloadavg()[0]:.1f}), {platform.platform()}, jax {jax.__version__}, Tracr "
        f"{os.popen(f'git -C {args.tracr} rev-parse --short HEAD').read().strip()}. Each "
        f"program compiled by Tracr for max_seq_len N = {N} and checked against Tracr's own "
        "`rasp.evaluate` on every word of every length 1..N (64 random words where a length "
        "has more); a numerical output counts as right within 0.01.",
        "",
        "| case | what it exercises | `mlp_exactness=100` (default) | `mlp_exactness=1000` |",
        "|---|---|---|---|",
    ]
    for name, (what, _, vocab) in cases(rasp, lib).items():
        cells = []
        for exactness in (100, 1000):
            program = cases(rasp, lib)[name][1]  # built afresh: Tracr annotates it in place
            r = check(rasp, compiling, program, vocab, exactness, rng)
            if "error" in r:
                cells.append(f"compile error: {r['error']}")
            else:
                text = f"{r['right']}/{r['words']} words right"
                if r["wrong_from"]:
                    text += f" (wrong from n = {r['wrong_from']})"
                if r["max_err"]:
                    text += f"; max error {r['max_err']:.2g}"
                cells.append(text + f"; compile {r['compile_cpu_s']:g} CPU s")
            print(name, exactness, cells[-1], flush=True)
        lines.append(f"| {name} | {what} | " + " | ".join(cells) + " |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()

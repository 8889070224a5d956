"""Tracr's library side by side: hardsoft (one model for every length) vs Tracr (one model per
max_seq_len).

Per function of Tracr's ``lib``:

* ours (``src/hardsoft/programs/examples/tracr_lib.py``, soft-temperature): the status
  (length-general / bounded / refused, with the reason), the parameters (the same model for
  every n) and the exactness at n = 10, 100 and 10^4 (every output at every position against
  ``rasp.evaluate``; bounded programs only up to their bound);
* Tracr's own function (from a checkout, run with its own Python: jax and dm-haiku), compiled
  with ``compile_rasp_to_model`` at its defaults for max_seq_len 10, 40 and 100: parameters,
  compile time, and exactness on words of the maximum length and of random shorter lengths,
  against Tracr's own ``rasp.evaluate``. A numerical output counts as right within 0.01 (Tracr's
  numerical MLPs approximate; the largest error is reported too); positions where the program's
  value is None are not compared (Tracr has no None).

Usage (outside CI; Tracr is not a dependency)::

    python3 -m venv /tmp/tracr-venv
    /tmp/tracr-venv/bin/pip install jax jaxlib dm-haiku chex networkx einops numpy absl-py
    python benchmarks/tracr_lib.py --tracr /path/to/tracr-checkout \\
        --tracr-python /tmp/tracr-venv/bin/python -o benchmarks/results/tracr_lib.md

The script runs the Tracr part in a subprocess per (program, max_seq_len) with ``--timeout``
seconds each, so that a compile that does not finish is recorded as such.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# lib function -> (our instance in tracr_lib.py, Tracr's builder (N = max_seq_len), vocab)
PROGRAMS: dict[str, tuple[str, str, list[Any]]] = {
    "make_length": ("length", "lib.make_length()", list("abc")),
    "make_reverse": ("reverse", "lib.make_reverse(rasp.tokens)", list("abc")),
    "make_hist": ("hist", "lib.make_hist()", list("abc")),
    "make_sort_unique": (
        "sort_unique",
        "lib.make_sort_unique(rasp.tokens, rasp.tokens)",
        list("abcdefghijklmnopqrstuvwxyz"),
    ),
    "make_sort": (
        "sort",
        "lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=N, min_key=1)",
        [0, 1, 2, 3],
    ),  # fmt: skip
    "make_sort_freq": ("sort_freq", "lib.make_sort_freq(max_seq_len=N)", list("abc")),
    "make_frac_prevs": ("frac_prevs", "lib.make_frac_prevs(rasp.tokens == 'x')", list("xy")),
    "make_pair_balance": (
        "pair_balance",
        "lib.make_pair_balance(rasp.tokens, '(', ')')",
        list("()x"),
    ),
    "make_shuffle_dyck": ("shuffle_dyck", "lib.make_shuffle_dyck(['()'])", list("()")),
    "make_shuffle_dyck2": ("shuffle_dyck2", "lib.make_shuffle_dyck2()", list("(){}")),
    "shift_by": ("shifted", "lib.shift_by(2, rasp.tokens)", list("abc")),
    "detect_pattern": ("pattern", "lib.detect_pattern(rasp.tokens, 'abc')", list("abc")),
    "make_count": ("count", "lib.make_count(rasp.tokens, 'a')", list("abc")),
    "make_count_less_freq": ("count_less_freq", "lib.make_count_less_freq(2)", list("abc")),
    "make_nary_sequencemap": (
        "majority3",
        "lib.make_nary_sequencemap(lambda a, b, c: int(a) + int(b) + int(c) >= 2, rasp.tokens, "
        "lib.shift_by(1, rasp.tokens), lib.shift_by(2, rasp.tokens))",
        list("01"),
    ),
}
DISTINCT_KEYS = {"make_sort_unique"}
"""Defined only on words whose keys are distinct: checked on permutations (n <= |vocab|)."""
BRACKETS = {"make_shuffle_dyck": ["()"], "make_shuffle_dyck2": ["()", "{}"]}


def words_for(name: str, vocab: list[Any], n: int, count: int, rng: random.Random) -> list[list]:
    """``count`` words of length n: random, half balanced for the Dyck programs, permutations
    for the programs that need distinct keys."""
    if name in DISTINCT_KEYS:
        n = min(n, len(vocab))
        return [rng.sample(vocab, n) for _ in range(count)]
    words = [[rng.choice(vocab) for _ in range(n)] for _ in range(count)]
    if name in BRACKETS and n % 2 == 0:
        for k in range(0, count, 2):
            words[k] = balanced(BRACKETS[name], n, rng)
    return words


def balanced(pairs: list[str], n: int, rng: random.Random) -> list[str]:
    """A random shuffle-Dyck member: each bracket type balanced, interleaved."""
    out: list[str] = []
    opened = {p: 0 for p in pairs}
    while len(out) < n:
        left = n - len(out)
        must_close = sum(opened.values())
        choices = [p[1] for p in pairs if opened[p] > 0]
        if must_close < left:
            choices += [p[0] for p in pairs]
        ch = rng.choice(choices)
        p = next(p for p in pairs if ch in p)
        opened[p] += 1 if ch == p[0] else -1
        out.append(ch)
    return out


# ---- the Tracr worker (runs in Tracr's Python: no hardsoft, no torch) ----------------------


def tracr_worker(args: argparse.Namespace) -> None:
    sys.path.insert(0, args.tracr)
    import numpy as np
    from tracr.compiler import compiling, lib  # type: ignore[import-not-found]
    from tracr.rasp import rasp  # type: ignore[import-not-found]

    name, n = args.program, args.max_seq_len
    _, builder, vocab = PROGRAMS[name]
    program = eval(builder, {"lib": lib, "rasp": rasp, "N": n})  # noqa: S307 - our own table
    start = time.perf_counter()
    model = compiling.compile_rasp_to_model(program, set(vocab), n, compiler_bos="BOS")
    compile_s = time.perf_counter() - start
    params = sum(int(np.prod(v.shape)) for layer in model.params.values() for v in layer.values())
    rng = random.Random(n)
    checks = {}
    # two input shapes (each new length makes jax trace the model again)
    checks["n = max"] = _tracr_check(model, program, words_for(name, vocab, n, args.samples, rng))
    half = words_for(name, vocab, max(1, n // 2), args.samples, rng)
    checks["n = max/2"] = _tracr_check(model, program, half)
    print(json.dumps({"parameters": params, "compile_s": compile_s, "checks": checks}))


def _tracr_check(model: Any, program: Any, words: list[list]) -> dict[str, Any]:
    right_words = positions = right = skipped = 0
    max_err = 0.0
    for w in words:
        try:
            ref = program(w)
        except Exception:  # Tracr's evaluate is undefined on this word
            skipped += 1
            continue
        out = model.apply(["BOS", *w]).decoded[1:]
        ok_word = True
        for got, want in zip(out, ref):
            if want is None:
                continue
            positions += 1
            if isinstance(want, (int, float)) and isinstance(got, (int, float)):  # bools too
                err = abs(float(got) - float(want))
                max_err = max(max_err, err)
                ok = err < 0.01
            else:
                ok = got == want
            right += ok
            ok_word &= ok
        right_words += ok_word
    return {
        "words": len(words) - skipped,
        "right_words": right_words,
        "positions": positions,
        "right_positions": right,
        "max_numeric_error": max_err,
    }


# ---- ours -------------------------------------------------------------------------------------


def ours(name: str, lengths: list[int], samples: int) -> dict[str, Any]:
    from hardsoft.programs.check_source import check_program
    from hardsoft.programs.rasp.load import library_path, load

    instance = PROGRAMS[name][0]
    program = load(library_path(), name=instance)
    start = time.perf_counter()
    model = program.compile("soft-temperature")
    compile_s = time.perf_counter() - start
    cert = model.meta["certificate"]
    bound = model.meta["program"]["max_len"]
    exact: dict[str, Any] = {}
    rng = random.Random(0)
    for n in lengths:
        if bound is not None and n > bound:
            exact[str(n)] = f"— (bounded: n <= {bound})"
            continue
        if name in DISTINCT_KEYS and n > len(program.alphabet):
            exact[str(n)] = f"— (distinct keys: n <= {len(program.alphabet)})"
            continue
        count = samples if n < 5000 else 1
        words = ["".join(w) for w in words_for(name, list(program.alphabet), n, count, rng)]
        start = time.perf_counter()
        report = check_program(model, program, exhaustive_max_n=0, random_n=(), words=words)
        exact[str(n)] = {
            "words": report["checked_strings"],
            "mismatches": report["mismatches"],
            "undefined": report["undefined_strings"],
            "seconds": round(time.perf_counter() - start, 2),
        }
    return {
        "status": "length-general" if cert["length_general"] else f"bounded (n <= {bound})",
        "reason": "; ".join(f"{b['statement']}: {b['text']}" for b in cert["bounded_because"]),
        "parameters": model.parameter_count(),
        "layers": len(model.spec.layers),
        "compile_s": round(compile_s, 2),
        "exact": exact,
    }


def run_tracr(args: argparse.Namespace, name: str, n: int) -> dict[str, Any]:
    cmd = [args.tracr_python, __file__, "--worker", "--program", name, "--max-seq-len", str(n),
           "--tracr", args.tracr, "--samples", str(args.samples)]  # fmt: skip
    start = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {args.timeout} s"}
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:200], "seconds": round(time.perf_counter() - start, 1)}
    return json.loads(res.stdout.strip().splitlines()[-1])


def _exact_text(e: Any) -> str:
    if isinstance(e, str):
        return e
    if not e["words"]:
        return "— (undefined)"
    return "exact" if e["mismatches"] == 0 else f"{e['mismatches']}/{e['words']} words wrong"


def _tracr_text(t: dict[str, Any]) -> tuple[str, str]:
    if "error" in t:
        return "—", t["error"]
    at_max, below = t["checks"]["n = max"], t["checks"]["n = max/2"]
    parts = []
    for label, c in (("n = N", at_max), ("n = N/2", below)):
        parts.append(f"{label}: {c['right_words']}/{c['words']} words right")
    if max(at_max["max_numeric_error"], below["max_numeric_error"]) > 0:
        err = max(at_max["max_numeric_error"], below["max_numeric_error"])
        parts.append(f"max numeric error {err:.2g}")
    return f"{t['parameters']:,}", "; ".join(parts)


def markdown(results: dict[str, Any], env: dict[str, Any], args: argparse.Namespace) -> str:
    lens = args.lengths
    tl = args.max_seq_lens
    lines = [
        "# Tracr's library: hardsoft (one model for every n) vs Tracr (one per max_seq_len)",
        "",
        'Produced by `python benchmarks/tracr_lib.py` (docs/rasp.md, "Side by side"). '
        f"{env['date']}, {env['machine']}, {env['cpu_count']} CPUs (shared with other jobs), "
        f"Python {env['python']}, torch {env['torch']}; Tracr {env.get('tracr', '?')} with "
        f"jax {env.get('jax', '?')}.",
        "",
        "Ours: `--target soft-temperature`, exactness = every output at every position equal to "
        f"`rasp.evaluate` on {args.samples} random words per length (1 at n = 10^4). Tracr: "
        "`compile_rasp_to_model` at its defaults, exactness against Tracr's own evaluator on "
        f"{args.samples} random words of length N and {args.samples} of length N/2 "
        "(numerical outputs right within 0.01; None positions skipped).",
        "",
        "| program | ours: status | ours: parameters (every n) | "
        + " | ".join(f"ours: n = {n}" for n in lens)
        + " | "
        + " | ".join(f"Tracr N = {n}: parameters" for n in tl)
        + " | "
        + " | ".join(f"Tracr N = {n}: exact" for n in tl)
        + " |",
        "|" + "---|" * (3 + len(lens) + 2 * len(tl)),
    ]
    for name, r in results.items():
        o = r["ours"]
        cells = [f"`{name}`", o["status"], f"{o['parameters']:,}"]
        cells += [_exact_text(o["exact"][str(n)]) for n in lens]
        tracr = [_tracr_text(r["tracr"].get(str(n), {"error": "not run"})) for n in tl]
        cells += [p for p, _ in tracr] + [e for _, e in tracr]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Why the bounded programs are bounded (their certificates):", ""]
    for name, r in results.items():
        if r["ours"]["reason"]:
            lines.append(f"- `{name}`: {r['ours']['reason']}")
    lines += ["", "Raw results: `benchmarks/results/tracr_lib.json`.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracr", help="a checkout of github.com/google-deepmind/tracr")
    ap.add_argument("--tracr-python", help="a Python with jax, dm-haiku, chex, networkx")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--program")
    ap.add_argument("--max-seq-len", type=int)
    ap.add_argument("--max-seq-lens", default="10,40,100")
    ap.add_argument("--lengths", default="10,100,10000")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--only", default="", help="comma-separated lib functions")
    ap.add_argument("--tracr-version", default="", help="what to call the Tracr checkout")
    ap.add_argument("--ours-only", action="store_true")
    ap.add_argument("-o", "--out", default=str(ROOT / "benchmarks/results/tracr_lib.md"))
    args = ap.parse_args()
    if args.worker:
        tracr_worker(args)
        return
    args.max_seq_lens = [int(x) for x in args.max_seq_lens.split(",")]
    args.lengths = [int(x) for x in args.lengths.split(",")]
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import environment

    env = environment("cpu")
    if not args.ours_only:
        probe = subprocess.run(
            [args.tracr_python, "-c", "import jax; print(jax.__version__)"],
            capture_output=True, text=True,
        )  # fmt: skip
        env["jax"] = probe.stdout.strip()
        env["tracr"] = args.tracr_version or subprocess.run(
            ["git", "-C", args.tracr, "rev-parse", "--short", "HEAD"], capture_output=True,
            text=True,
        ).stdout.strip() or "checkout"  # fmt: skip
    json_path = Path(args.out).with_suffix(".json")
    results: dict[str, Any] = {}
    if json_path.exists():
        results = json.loads(json_path.read_text()).get("results", {})
    names = [n for n in PROGRAMS if not args.only or n in args.only.split(",")]
    for name in names:
        entry = results.setdefault(name, {"tracr": {}})
        entry["ours"] = ours(name, args.lengths, args.samples)
        print(name, "ours:", entry["ours"]["status"], entry["ours"]["exact"], flush=True)
    json_path.write_text(json.dumps({"env": env, "results": results}, indent=1))
    if not args.ours_only:
        for n in args.max_seq_lens:  # all programs at one N before the next: partial runs balance
            for name in names:
                done = results[name]["tracr"].get(str(n))
                if done is not None and "error" not in done:
                    continue  # resume: measured already
                results[name]["tracr"][str(n)] = run_tracr(args, name, n)
                print(name, "tracr", n, results[name]["tracr"][str(n)], flush=True)
                json_path.write_text(json.dumps({"env": env, "results": results}, indent=1))
    Path(args.out).write_text(markdown(results, env, args))
    print("wrote", args.out)


if __name__ == "__main__":
    main()

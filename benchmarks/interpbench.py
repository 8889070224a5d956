"""InterpBench's Tracr cases through hardsoft.rasp: each classified (length-general / bounded /
refused, with the reason), compiled, and checked against ``rasp.evaluate``.

InterpBench (Gupta et al. 2024) ships RASP programs written for Tracr as
``circuits_benchmark/benchmark/cases/case_*.py`` (a ``get_program()``, ``get_vocab()`` and
``get_max_seq_len()`` per case; max_seq_len counts Tracr's BOS, so the program's inputs have
length up to max_seq_len − 1). This script loads every case from a checkout with the
``tracr.rasp`` import aliased to ``hardsoft.rasp`` (the rest of InterpBench's machinery — IIT,
TransformerLens — is replaced by a stub base class: only the programs are used), and:

* compiles it for ``soft-temperature`` without a bound: **length-general** if that succeeds;
  with ``max_len`` = the case's maximum input length if the program needs a bound:
  **bounded**; otherwise **refused** (the one-line reason); a program averaging over the
  positions a table selects (ties) is compiled for ``average-hard`` instead and marked so;
* checks every output at every position against ``rasp.evaluate`` on the case's vocabulary:
  all words while there are few, random words at every length up to the maximum, and, for
  length-general programs, random words at 10× the maximum length.

The corpus is not copied into this repository: give the checkout's path.

    python benchmarks/interpbench.py /path/to/InterpBench -o benchmarks/results/interpbench.md
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import subprocess
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def install_aliases(checkout: Path) -> None:
    """``tracr.rasp.rasp`` is hardsoft.rasp; InterpBench's heavy modules are stubs."""
    from hardsoft import rasp

    tracr = types.ModuleType("tracr")
    tracr_rasp = types.ModuleType("tracr.rasp")
    tracr_rasp.rasp = rasp  # type: ignore[attr-defined]
    tracr.rasp = tracr_rasp  # type: ignore[attr-defined]
    sys.modules.update({"tracr": tracr, "tracr.rasp": tracr_rasp, "tracr.rasp.rasp": rasp})

    case_mod = types.ModuleType("circuits_benchmark.benchmark.tracr_benchmark_case")

    class TracrBenchmarkCase:
        """InterpBench's base class, reduced to what the programs use."""

        def get_max_seq_len(self) -> int:
            return 10

        def get_min_seq_len(self) -> int:
            return 4

        def supports_causal_masking(self) -> bool:
            return True

        def is_trivial(self) -> bool:
            return False

    case_mod.TracrBenchmarkCase = TracrBenchmarkCase  # type: ignore[attr-defined]
    hooked = types.ModuleType("circuits_benchmark.transformers.hooked_tracr_transformer")
    hooked.HookedTracrTransformerBatchInput = list  # type: ignore[attr-defined]
    transformers = types.ModuleType("circuits_benchmark.transformers")
    transformers.__path__ = []  # type: ignore[attr-defined]
    sys.modules.update(
        {
            "circuits_benchmark.benchmark.tracr_benchmark_case": case_mod,
            "circuits_benchmark.transformers": transformers,
            "circuits_benchmark.transformers.hooked_tracr_transformer": hooked,
        }
    )
    sys.path.insert(0, str(checkout))


def load_case(path: Path) -> tuple[Any, Any, list[Any], int]:
    """(program, case, vocab, max input length) of one case file."""
    base = sys.modules["circuits_benchmark.benchmark.tracr_benchmark_case"].TracrBenchmarkCase
    module = importlib.import_module(f"circuits_benchmark.benchmark.cases.{path.stem}")
    classes = [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, base)
               and c is not base]  # fmt: skip
    if not classes:
        raise LookupError("no Tracr case class (not a RASP program)")
    case = classes[0]()
    return case.get_program(), case, sorted_vocab(case.get_vocab()), case.get_max_seq_len() - 1


def sorted_vocab(vocab: Any) -> list[Any]:
    values = list(vocab)
    try:
        return sorted(values)
    except TypeError:
        return values


def classify(program: Any, vocab: list[Any], max_n: int) -> tuple[str, str, Any, str]:
    """(status, reason, model, target)."""
    from hardsoft import rasp
    from hardsoft.errors import HardsoftError

    for target in ("soft-temperature", "average-hard"):
        try:
            return "length-general", "", rasp.compile(program, vocab, target=target), target
        except rasp.NeedsMaxLen as exc:
            try:
                model = rasp.compile(program, vocab, target=target, max_len=max_n)
                return "bounded", str(exc).split(": hardsoft has no gadget")[0], model, target
            except HardsoftError as exc2:
                if "soft-temperature" in str(exc2) and target == "soft-temperature":
                    continue
                return "refused", str(exc2), None, target
        except HardsoftError as exc:
            if "soft-temperature" in str(exc) and target == "soft-temperature":
                continue
            return "refused", str(exc), None, target
    return "refused", "no target compiles it", None, ""


def check(program: Any, vocab: list[Any], model: Any, lengths: list[int], samples: int,
          seed: int) -> dict[str, Any]:  # fmt: skip
    from hardsoft.programs.check_source import check_program
    from hardsoft.programs.rasp import RaspProgram
    from hardsoft.programs.rasp.compile import symbols_for

    values, symbols = symbols_for(vocab)
    prog = RaspProgram(program, "case", values, symbols)
    rng = random.Random(seed)
    words = [
        "".join(rng.choice(symbols) for _ in range(n)) for n in lengths for _ in range(samples)
    ]
    small = max(n for n in range(1, 4) if len(vocab) ** n <= 2000 or n == 1)
    return check_program(model, prog, exhaustive_max_n=small, random_n=(), words=words, seed=seed)


def run_case(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    if "TracrBenchmarkCase" not in path.read_text():
        return {"status": "not a Tracr case", "reason": "no TracrBenchmarkCase (InterpBench's "
                "IOI task, a TransformerLens model rather than a RASP program)"}  # fmt: skip
    try:
        program, _case, vocab, max_n = load_case(path)
    except Exception as exc:  # the case file itself (its imports, its program)
        return {"status": "not loaded", "reason": f"{type(exc).__name__}: {exc}"[:200]}
    row: dict[str, Any] = {"vocab_size": len(vocab), "max_n": max_n}
    try:
        status, reason, model, target = classify(program, vocab, max_n)
    except Exception as exc:  # a bug of ours: recorded, never hidden
        tb = traceback.format_exc().strip().splitlines()[-1]
        return {**row, "status": "error", "reason": f"{type(exc).__name__}: {tb}"[:300]}
    row.update(status=status, reason=reason, target=target)
    if model is not None:
        row.update(
            layers=len(model.spec.layers),
            heads=sum(len(layer.heads) for layer in model.spec.layers),
            parameters=model.parameter_count(),
        )
        lengths = list(range(1, max_n + 1))
        up_to = check(program, vocab, model, lengths, args.samples, 0)
        row["check"] = _summary(up_to)
        if status == "length-general":
            row["check_10x"] = _summary(check(program, vocab, model, [10 * max_n], 4, 1))
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    return {
        k: report[k]
        for k in ("checked_strings", "checked_positions", "undefined_strings", "mismatches",
                  "max_n", "first_mismatch")
    }  # fmt: skip


def markdown(results: dict[str, Any], env: dict[str, Any], checkout: str) -> str:
    counts: dict[str, int] = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    compiled = [r for r in results.values() if "check" in r]
    wrong = [k for k, r in results.items() if r.get("check", {}).get("mismatches")
             or r.get("check_10x", {}).get("mismatches")]  # fmt: skip
    lines = [
        "# InterpBench's Tracr programs through hardsoft.rasp",
        "",
        f"Produced by `python benchmarks/interpbench.py` on a checkout of InterpBench ({checkout})"
        f", on hardsoft commit {env.get('hardsoft', '?')}. {env['date']} (load average "
        f"{env.get('load_average', '?')}), {env['machine']}, {env['cpu_count']} CPUs (shared with "
        f"other jobs), Python {env['python']}, torch {env['torch']}.",
        "",
        "Each case's program is loaded with `tracr.rasp` aliased to `hardsoft.rasp`, compiled "
        "for `soft-temperature` (or `average-hard` where noted), and checked against "
        "`rasp.evaluate` on its vocabulary: all words to length 3 (while a length has at most "
        "2000), random words at every length "
        "up to the case's maximum input length (max_seq_len − 1, Tracr's BOS excluded) and, for "
        "length-general programs, random words at 10× that length.",
        "",
        "**Counts:** "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        + f" (of {len(results)} case files); {len(compiled)} compiled models checked, "
        f"{len(wrong)} disagreeing with rasp.evaluate"
        + (f" ({', '.join(wrong)})" if wrong else "")
        + ".",
        "",
        "| case | status | target | layers | heads | parameters | max n | positions checked "
        "(≤ max n) | 10× max n | mismatches | reason |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in sorted(results.items(), key=lambda kv: _case_key(kv[0])):
        c, c10 = r.get("check", {}), r.get("check_10x", {})
        mism = (c.get("mismatches") or 0) + (c10.get("mismatches") or 0)
        ten = f"{c10['checked_positions']} positions" if c10 else "—"
        reason = r.get("reason", "").replace("|", "\\|")
        lines.append(
            f"| {name} | {r['status']} | {r.get('target', '')} | {r.get('layers', '')} | "
            f"{r.get('heads', '')} | {r.get('parameters', '')} | {r.get('max_n', '')} | "
            f"{c.get('checked_positions', '')} | {ten} | {mism if c else ''} | {reason[:220]} |"
        )
    lines += ["", "Raw results: `benchmarks/results/interpbench.json`.", ""]
    return "\n".join(lines)


def git_commit(path: Path) -> str:
    """The short commit of a git checkout ("?" where it is none)."""
    run = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)  # fmt: skip
    return run.stdout.strip() or "?"


def _case_key(name: str) -> tuple[int, str]:
    tail = name.removeprefix("case_")
    return (int(tail), "") if tail.isdigit() else (10**6, tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout", help="a checkout of InterpBench (FlyingPumba/InterpBench)")
    ap.add_argument("--samples", type=int, default=4, help="random words per length")
    ap.add_argument("--only", default="", help="comma-separated case names (case_3,...)")
    ap.add_argument("-o", "--out", default=str(ROOT / "benchmarks/results/interpbench.md"))
    args = ap.parse_args()
    checkout = Path(args.checkout).resolve()
    cases = sorted((checkout / "circuits_benchmark/benchmark/cases").glob("case_*.py"))
    if not cases:
        sys.exit(f"error: no circuits_benchmark/benchmark/cases/case_*.py under {checkout}")
    install_aliases(checkout)
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import environment

    results: dict[str, Any] = {}
    load = round(os.getloadavg()[0], 1)  # at the start: the run itself adds one
    for path in cases:
        if args.only and path.stem not in args.only.split(","):
            continue
        results[path.stem] = run_case(path, args)
        r = results[path.stem]
        print(path.stem, r["status"], r.get("reason", "")[:100], r.get("check", {}).get(
            "mismatches"), r.get("seconds"), flush=True)  # fmt: skip
    env = environment("cpu")
    env.update(load_average=load, hardsoft=git_commit(ROOT))
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"env": env, "results": results}, indent=1,
                                                   default=str))  # fmt: skip
    corpus = f"FlyingPumba/InterpBench at commit {git_commit(checkout)}"
    out.write_text(markdown(results, env, corpus))
    print("wrote", out)


if __name__ == "__main__":
    main()

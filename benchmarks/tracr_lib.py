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

The script runs the Tracr part in a subprocess per (program, max_seq_len), stopped after
``--timeout`` seconds or above ``--memory-gb``, so that a compile that does not finish is
recorded as such (never guessed); a program that did not finish at a smaller N is not run at a
larger one (``--run-after-unfinished`` runs it). Rows are kept in the JSON beside ``-o``, keyed
by program and N, each with when it was measured (date, load, wall time): a later run measures
only the missing rows, ``--reuse OLD.json`` takes the rows of an earlier run (marked as such,
with that run's date and machine), ``--rerun PROGRAM:N,...`` measures rows again (the earlier
attempt is kept), ``--note PROGRAM:N=TEXT`` says why, ``--stop-at TIME`` starts no row after
TIME, ``--ours-only``/``--tracr-only`` measure one side (the two may run at once), and
``--table-only`` writes the table from the JSON. The recorded run (2026-11-26)::

    python benchmarks/tracr_lib.py --tracr-only --reuse first-run/tracr_lib.json \
        --rerun make_frac_prevs:10,make_reverse:10 --samples 4 --timeout 600 --memory-gb 6 ...
    python benchmarks/tracr_lib.py --ours-only --samples 4
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile
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
    """One Tracr row, in a subprocess: stopped after ``--timeout`` seconds or above
    ``--memory-gb`` of resident memory, and recorded as such (never guessed)."""
    cmd = [args.tracr_python, __file__, "--worker", "--program", name, "--max-seq-len", str(n),
           "--tracr", args.tracr, "--samples", str(args.samples)]  # fmt: skip
    measured = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load_average": round(os.getloadavg()[0], 1),
        "run": "this run",
    }
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        peak = 0.0
        stopped = None
        while proc.poll() is None:
            time.sleep(1.0)
            peak = max(peak, _rss_gb(proc.pid))
            if time.perf_counter() - start > args.timeout:
                stopped = f"did not finish in {args.timeout} s"
            elif peak > args.memory_gb:
                stopped = f"stopped above {args.memory_gb:g} GB of memory"
            if stopped:
                proc.kill()
                proc.wait()
                break
        measured["seconds"] = round(time.perf_counter() - start, 1)
        measured["peak_rss_gb"] = round(peak, 2)
        if stopped:
            return {"error": stopped, "measured": measured}
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:200], "measured": measured}
    return {**json.loads(stdout.strip().splitlines()[-1]), "measured": measured}


def _rss_gb(pid: int) -> float:
    """Resident memory of a process in GB (Linux /proc; 0 where unreadable)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0


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
    text = (
        f"{at_max['right_words']}/{at_max['words']} words right at n = N, "
        f"{below['right_words']}/{below['words']} at n = N/2"
    )
    err = max(at_max["max_numeric_error"], below["max_numeric_error"])
    if err > 0:
        text += f"; max numeric error {err:.2g}"
    return f"{t['parameters']:,}", text


def markdown(data: dict[str, Any], args: argparse.Namespace) -> str:
    """The side-by-side table, and when each Tracr row was measured."""
    results, env, tenv = data["results"], data.get("env", {}), data.get("tracr_env", {})
    lens, tl = args.lengths, args.max_seq_lens
    lines = [
        "# Tracr's library: hardsoft (one model for every n) vs Tracr (one per max_seq_len)",
        "",
        "Produced by `python benchmarks/tracr_lib.py` (docs/rasp.md, \"Tracr's library, side by "
        'side"). Ours: measured '
        f"{env.get('date', '?')} (load average {env.get('load_average', '?')}), "
        f"{env.get('machine', '?')}, {env.get('cpu_count', '?')} CPUs shared with other jobs, "
        f"Python {env.get('python', '?')}, torch {env.get('torch', '?')}. Tracr "
        f"{tenv.get('tracr', '?')} with jax {tenv.get('jax', '?')} in its own venv, on the same "
        "machine; each Tracr row's date and load are listed below the table.",
        "",
        "Ours: our program from `src/hardsoft/programs/examples/tracr_lib.py`, `--target "
        "soft-temperature`, one model for every n; exact = every output at every position equal "
        f"to `rasp.evaluate` on {args.samples} random words per length (1 at n = 10^4). Tracr: its "
        "own `lib` function, `compile_rasp_to_model` at its defaults for each max_seq_len N "
        "(a subprocess per row, stopped after the row's time or memory limit); exact = the "
        "decoded output equal to Tracr's own `rasp.evaluate` on random words of length N and of "
        "length N/2 (numerical outputs right within 0.01; None positions skipped). A row that "
        "did not finish says so; a program that did not finish at a smaller N is not run at a "
        "larger one. `make_sort_unique` is defined only where its keys are distinct: its words "
        "(ours and Tracr's) are permutations of min(n, 26) of its 26 letters.",
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
    for name in PROGRAMS:
        r = results.get(name)
        if r is None or "ours" not in r:
            continue
        o = r["ours"]
        cells = [f"`{name}`", o["status"], f"{o['parameters']:,}"]
        cells += [_exact_text(o["exact"].get(str(n), "not run")) for n in lens]
        tracr = [_tracr_text(r.get("tracr", {}).get(str(n), {"error": "not run"})) for n in tl]
        cells += [p for p, _ in tracr] + [e for _, e in tracr]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Why the bounded programs are bounded (their certificates):", ""]
    for name in PROGRAMS:
        if name in results and results[name].get("ours", {}).get("reason"):
            lines.append(f"- `{name}`: {results[name]['ours']['reason']}")
    lines += ["", "When each Tracr row was measured (UTC; wall seconds of the row's subprocess; "
              "the 1-minute load average when it started, on 2 cores):", "",
              "| program | " + " | ".join(f"N = {n}" for n in tl) + " |",
              "|" + "---|" * (1 + len(tl))]  # fmt: skip
    for name in PROGRAMS:
        rows = results.get(name, {}).get("tracr", {})
        lines.append(f"| `{name}` | " + " | ".join(_when(rows.get(str(n))) for n in tl) + " |")
    for run in _reused_runs(results):
        lines += ["", f"(†) {run}; the load was not recorded then (the machine was "
                  "shared with other jobs throughout)."]  # fmt: skip
    lines += ["", "Raw results (with earlier attempts of re-measured rows): "
              "`benchmarks/results/tracr_lib.json`.", ""]  # fmt: skip
    return "\n".join(lines)


def _when(row: dict[str, Any] | None) -> str:
    if row is None or row.get("skipped"):
        return "not run"
    m = row.get("measured", {})
    if m.get("run", "this run") != "this run":  # reused from an earlier run
        text = "earlier run (†)"
    else:
        text = m.get("date", "?").replace("T", " ").replace("+00:00", "")
        text += f", load {m.get('load_average')}, {m.get('seconds', 0):g} s"
    for e in row.get("earlier", []):
        text += f"; earlier: {_tracr_text(e)[1]} ({_when(e)})"
    if row.get("note"):
        text += f"; {row['note']}"
    return text


def _reused_runs(results: dict[str, Any]) -> list[str]:
    runs = {
        f"{row['measured']['run']}, {row['measured']['date']}"
        for r in results.values()
        for row in [*r.get("tracr", {}).values()]
        if row.get("measured", {}).get("run", "this run") != "this run"
    }
    return sorted(runs)


# ---- the results file: rows keyed by program and N, each with when and how it was measured ---


def _update(json_path: Path, change: Any) -> dict[str, Any]:
    """Read the results file, apply ``change`` to it, write it back atomically, under a lock
    (the ours and Tracr parts may run as two processes)."""
    lock = Path(tempfile.gettempdir()) / f"{json_path.resolve().as_posix().replace('/', '_')}.lock"
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        data = json.loads(json_path.read_text()) if json_path.exists() else {}
        data.setdefault("results", {})
        change(data)
        tmp = json_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, json_path)
    return data


def _reuse(data: dict[str, Any], old_path: Path) -> None:
    """Copy the Tracr rows of an earlier run's results (absent here) with that run's date and
    machine: reused rows say where they come from."""
    old = json.loads(old_path.read_text())
    env = old.get("env", {})
    for name, entry in old.get("results", {}).items():
        for n, row in entry.get("tracr", {}).items():
            rows = data["results"].setdefault(name, {}).setdefault("tracr", {})
            if n in rows or row.get("skipped"):
                continue
            row = dict(row)
            row.setdefault("measured", {
                "date": f"during the run started {env.get('date', '?')}",
                "load_average": None,
                "run": f"reused from {old_path.name} ({env.get('cpu_count', '?')} CPUs, "
                       f"{env.get('machine', '?')}, jax {env.get('jax', '?')}, "
                       f"Tracr {env.get('tracr', '?')})",
            })  # fmt: skip
            rows[n] = row
    data.setdefault("tracr_env", {k: env[k] for k in ("jax", "tracr") if k in env})


def _annotate(data: dict[str, Any], note: str) -> None:
    key, _, text = note.partition("=")
    name, _, n = key.partition(":")
    data["results"][name]["tracr"][n]["note"] = text


def _unfinished(row: dict[str, Any] | None) -> bool:
    return bool(
        row
        and "error" in row
        and not row.get("skipped")
        and (row["error"].startswith("did not finish") or row["error"].startswith("stopped above"))
    )


def _todo(rows: dict[str, Any], n: int, args: argparse.Namespace, key: str) -> str | None:
    """Why (program, N) is not measured now (None: measure it)."""
    row = rows.get(str(n))
    if key in args.rerun:
        return None
    if row is not None and not row.get("skipped"):
        if not (_unfinished(row) and args.retry_unfinished):
            return "kept"
    smaller = [int(k) for k, r in rows.items() if int(k) < n and not r.get("skipped")]
    if smaller and _unfinished(rows[str(max(smaller))]) and not args.run_after_unfinished:
        m = max(smaller)
        return f"not run: N = {m} {rows[str(m)]['error']}"
    if args.stop_at and dt.datetime.now(dt.timezone.utc) >= args.stop_at:
        return "stop"
    return None


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
    ap.add_argument("--timeout", type=int, default=600, help="seconds per Tracr row")
    ap.add_argument("--memory-gb", type=float, default=8.0, help="memory per Tracr row")
    ap.add_argument("--only", default="", help="comma-separated lib functions, in this order")
    ap.add_argument("--tracr-version", default="", help="what to call the Tracr checkout")
    ap.add_argument("--ours-only", action="store_true", help="measure ours, keep Tracr's rows")
    ap.add_argument("--tracr-only", action="store_true", help="measure Tracr, keep ours")
    ap.add_argument("--table-only", action="store_true", help="write the table from the JSON")
    ap.add_argument("--reuse", type=Path, help="an earlier run's JSON: reuse its Tracr rows")
    ap.add_argument("--rerun", default="", help="Tracr rows to measure again: PROGRAM:N,...")
    ap.add_argument(
        "--retry-unfinished", action="store_true", help="measure again rows that did not finish"
    )
    ap.add_argument(
        "--run-after-unfinished",
        action="store_true",
        help="run a program at N although it did not finish at a smaller N",
    )
    ap.add_argument(
        "--note",
        action="append",
        default=[],
        help="PROGRAM:N=TEXT: a note on a Tracr row (why it was re-measured)",
    )
    ap.add_argument("--stop-at", help="UTC time (ISO): start no Tracr row after it")
    ap.add_argument("-o", "--out", default=str(ROOT / "benchmarks/results/tracr_lib.md"))
    args = ap.parse_args()
    if args.worker:
        tracr_worker(args)
        return
    args.max_seq_lens = [int(x) for x in args.max_seq_lens.split(",")]
    args.lengths = [int(x) for x in args.lengths.split(",")]
    args.rerun = {x.strip() for x in args.rerun.split(",") if x.strip()}
    if args.stop_at:
        args.stop_at = dt.datetime.fromisoformat(args.stop_at).replace(tzinfo=dt.timezone.utc)
    json_path = Path(args.out).with_suffix(".json")
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    if args.reuse:
        _update(json_path, lambda d: _reuse(d, args.reuse))
    for note in args.note:
        _update(json_path, lambda d, note=note: _annotate(d, note))
    if not (args.tracr_only or args.table_only):
        _measure_ours(json_path, names, args)
    if not (args.ours_only or args.table_only):
        _measure_tracr(json_path, names, args)
    data = _update(json_path, lambda d: None)
    Path(args.out).write_text(markdown(data, args))
    print("wrote", args.out)


def _measure_ours(json_path: Path, names: list[str], args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import environment

    env = environment("cpu")
    env["load_average"] = round(os.getloadavg()[0], 1)
    for name in names:
        ours_row = ours(name, args.lengths, args.samples)
        print(name, "ours:", ours_row["status"], ours_row["exact"], flush=True)

        def put(d: dict[str, Any], name: str = name, row: dict[str, Any] = ours_row) -> None:
            d["results"].setdefault(name, {}).setdefault("tracr", {})
            d["results"][name]["ours"] = row
            d["env"] = env

        _update(json_path, put)


def _measure_tracr(json_path: Path, names: list[str], args: argparse.Namespace) -> None:
    probe = subprocess.run(
        [args.tracr_python, "-c", "import jax; print(jax.__version__)"],
        capture_output=True, text=True,
    )  # fmt: skip
    tracr_env = {
        "jax": probe.stdout.strip(),
        "tracr": args.tracr_version or subprocess.run(
            ["git", "-C", args.tracr, "rev-parse", "--short", "HEAD"], capture_output=True,
            text=True,
        ).stdout.strip() or "checkout",
    }  # fmt: skip
    for n in args.max_seq_lens:  # all programs at one N before the next: partial runs balance
        for name in names:
            data = _update(json_path, lambda d: d.setdefault("tracr_env", tracr_env))
            rows = data["results"].setdefault(name, {}).get("tracr", {})
            why = _todo(rows, n, args, f"{name}:{n}")
            if why == "kept":
                continue
            if why == "stop":
                return
            if why is not None:
                row: dict[str, Any] = {"error": why, "skipped": True}
            else:
                row = run_tracr(args, name, n)
                if str(n) in rows and not rows[str(n)].get("skipped"):
                    earlier = rows[str(n)]
                    row["earlier"] = [*earlier.pop("earlier", []), earlier]
            print(name, "tracr", n, row, flush=True)

            def put(d: dict[str, Any], name: str = name, n: int = n, row: Any = row) -> None:
                d["results"].setdefault(name, {}).setdefault("tracr", {})[str(n)] = row

            _update(json_path, put)


if __name__ == "__main__":
    main()

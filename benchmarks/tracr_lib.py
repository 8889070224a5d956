"""Tracr's library side by side: hardsoft (one model for every length) vs Tracr (one model per
max_seq_len), on Tracr's own ``lib.py``.

Three columns per function of Tracr's ``lib`` (one instance each, :data:`BUILDERS`):

* **ours, Tracr's lib**: Tracr's ``lib.py`` read from a checkout with only its import line
  changed (``from tracr.rasp import rasp`` -> ``from hardsoft import rasp``; nothing is copied
  into hardsoft), compiled for ``soft-temperature`` without a bound where that compiles (else
  with ``--max-len 10``, saying why); checked at every position against our ``rasp.evaluate``
  (n = 10, 100 and 10^4, random and constant words) and against **Tracr's own**
  ``rasp.evaluate`` (n = 10 and 100, run in Tracr's Python);
* **ours, our lib**: our rewrite of the function (``src/hardsoft/programs/examples/
  tracr_lib.py``), the same checks against our ``rasp.evaluate``;
* **Tracr**: the same instance compiled by Tracr (``compile_rasp_to_model``) for max_seq_len
  N = 10, 20, 40, at its defaults and at ``mlp_exactness=1000``; checked against Tracr's own
  ``rasp.evaluate`` at every length 1..N, on constant words (each vocabulary value repeated)
  and random words, in Tracr's Python (jax, dm-haiku). A numerical output counts as right
  within 0.01 (the largest error is reported); positions whose value is None are skipped
  (Tracr has no None).

Times are CPU seconds of the compiling process (``time.process_time``: the machine is shared,
wall time would measure the other jobs). Usage (outside CI; Tracr is not a dependency)::

    python3 -m venv /tmp/tracr-venv
    /tmp/tracr-venv/bin/pip install jax jaxlib dm-haiku chex networkx einops numpy absl-py
    python benchmarks/tracr_lib.py --tracr /path/to/tracr-checkout \\
        --tracr-python /tmp/tracr-venv/bin/python

Each Tracr row runs in its own process, stopped after ``--timeout`` CPU-independent wall
seconds or above ``--memory-gb`` (recorded as such, never guessed). Rows are kept in the JSON
beside ``-o``: a later run measures only the missing ones (``--rerun`` measures again);
``--ours-only`` / ``--tracr-only`` measure one side, ``--table-only`` rewrites the table.
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import fcntl
import json
import os
import random
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMPORT = "from tracr.rasp import rasp"
SETTINGS = {"default": 100, "exact1000": 1000}
"""Tracr's ``mlp_exactness``: its default, and 1000."""

# lib function -> (Tracr's lib instance (lib, rasp, N = max_seq_len), vocab, our lib's instance)
# The lambdas are real code (not strings) so that hardsoft can read them from this file.
BUILDERS: dict[str, tuple[Callable[[Any, Any, int], Any], list[Any], str]] = {
    "make_length": (lambda lib, rasp, N: lib.make_length(), list("abc"), "length"),
    "make_reverse": (lambda lib, rasp, N: lib.make_reverse(rasp.tokens), list("abc"), "reverse"),
    "make_hist": (lambda lib, rasp, N: lib.make_hist(), list("abc"), "hist"),
    "make_sort_unique": (  # the keys of Tracr's own test case sort_unique_2
        lambda lib, rasp, N: lib.make_sort_unique(rasp.tokens, 1 - rasp.indices),
        list("abc"),
        "sort_unique",
    ),
    "make_sort": (
        lambda lib, rasp, N: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=N, min_key=1),
        [0, 1, 2, 3],
        "sort",
    ),
    "make_sort_freq": (
        lambda lib, rasp, N: lib.make_sort_freq(max_seq_len=N),
        list("abc"),
        "sort_freq",
    ),  # fmt: skip
    "make_frac_prevs": (
        lambda lib, rasp, N: lib.make_frac_prevs(rasp.tokens == "x"),
        list("xy"),
        "frac_prevs",
    ),
    "make_pair_balance": (
        lambda lib, rasp, N: lib.make_pair_balance(rasp.tokens, "(", ")"),
        list("()x"),
        "pair_balance",
    ),
    "make_shuffle_dyck": (
        lambda lib, rasp, N: lib.make_shuffle_dyck(["()"]),
        list("()"),
        "shuffle_dyck",
    ),  # fmt: skip
    "make_shuffle_dyck2": (
        lambda lib, rasp, N: lib.make_shuffle_dyck2(),
        list("(){}"),
        "shuffle_dyck2",
    ),  # fmt: skip
    "shift_by": (lambda lib, rasp, N: lib.shift_by(2, rasp.tokens), list("abc"), "shifted"),
    "detect_pattern": (
        lambda lib, rasp, N: lib.detect_pattern(rasp.tokens, "abc"),
        list("abc"),
        "pattern",
    ),
    "make_count": (lambda lib, rasp, N: lib.make_count(rasp.tokens, "a"), list("abc"), "count"),
    "make_count_less_freq": (
        lambda lib, rasp, N: lib.make_count_less_freq(2),
        list("abc"),
        "count_less_freq",
    ),
    "make_nary_sequencemap": (  # Tracr's own test case make_nary_sequencemap_1
        lambda lib, rasp, N: lib.make_nary_sequencemap(
            lambda x, y, z: x + y - z, rasp.tokens, rasp.tokens, rasp.indices
        ),
        [1, 2, 3],
        "majority3",
    ),
}
BRACKETS = {"make_shuffle_dyck": ["()"], "make_shuffle_dyck2": ["()", "{}"]}
DISTINCT_KEYS = {"sort_unique"}
"""Our lib's sort_unique sorts by its tokens: defined only where they are distinct."""


def words_for(name: str, vocab: list[Any], n: int, count: int, rng: random.Random) -> list[list]:
    """The constant words of length n (one per value, at most 4) and ``count`` random ones
    (half balanced for the Dyck programs at even n)."""
    const = [[v] * n for v in vocab[:4]]
    rand = [[rng.choice(vocab) for _ in range(n)] for _ in range(count)]
    if name in BRACKETS and n % 2 == 0:
        for k in range(0, count, 2):
            rand[k] = balanced(BRACKETS[name], n, rng)
    return const + rand


def balanced(pairs: list[str], n: int, rng: random.Random) -> list[str]:
    """A random shuffle-Dyck member: each bracket type balanced, interleaved."""
    out: list[str] = []
    opened = {p: 0 for p in pairs}
    while len(out) < n:
        must_close = sum(opened.values())
        choices = [p[1] for p in pairs if opened[p] > 0]
        if must_close < n - len(out):
            choices += [p[0] for p in pairs]
        ch = rng.choice(choices)
        p = next(p for p in pairs if ch in p)
        opened[p] += 1 if ch == p[0] else -1
        out.append(ch)
    return out


def load_lib(tracr: str, rasp_import: str) -> Any:
    """Tracr's ``lib.py`` with only its import line replaced by ``rasp_import``, run from a
    temporary file (so that its lambdas have a source file to be read from)."""
    src = (Path(tracr) / "tracr/compiler/lib.py").read_text()
    if src.count(IMPORT) != 1:
        raise SystemExit(f"error: {tracr}/tracr/compiler/lib.py has no line {IMPORT!r}")
    tmp = Path(tempfile.mkdtemp(prefix="tracr-lib-")) / "lib.py"
    atexit.register(shutil.rmtree, tmp.parent, True)  # read until then: lambdas' source
    tmp.write_text(src.replace(IMPORT, rasp_import))
    ns = runpy.run_path(str(tmp), run_name="tracr_lib_changed_import")
    return argparse.Namespace(**{k: v for k, v in ns.items() if not k.startswith("__")})


# ---- the Tracr worker (runs in Tracr's Python: no hardsoft, no torch) ----------------------


def tracr_worker(args: argparse.Namespace) -> None:
    sys.path.insert(0, args.tracr)
    from tracr.compiler import compiling, lib  # type: ignore[import-not-found]
    from tracr.rasp import rasp  # type: ignore[import-not-found]

    build, vocab, _ = BUILDERS[args.program]
    program = build(lib, rasp, args.max_seq_len)
    if args.evaluate:  # Tracr's own evaluate on given words
        words = json.loads(Path(args.evaluate).read_text())
        print(json.dumps([_tracr_eval(rasp, program, w) for w in words]))
        return
    start = time.process_time()
    model = compiling.compile_rasp_to_model(
        program, set(vocab), args.max_seq_len, compiler_bos="BOS",
        mlp_exactness=SETTINGS[args.setting],
    )  # fmt: skip
    compile_cpu = time.process_time() - start
    if args.jax_cache:  # after the timed compile: it stays a cold compile in a fresh process
        _reuse_compiled_ops(args.jax_cache)
    params = sum(int(v.size) for layer in model.params.values() for v in layer.values())
    rng = random.Random(args.max_seq_len)
    checks = {"constant": _tally(), "random": _tally()}
    for n in checked_lengths(args.max_seq_len):
        words = words_for(args.program, vocab, n, args.samples, rng)
        outs = _tracr_apply(model, words)
        for k, (w, out) in enumerate(zip(words, outs)):
            kind = "constant" if k < min(4, len(vocab)) else "random"
            _score(checks[kind], _tracr_eval(rasp, program, w), out, n)
    print(json.dumps({"parameters": params, "compile_cpu_s": round(compile_cpu, 2),
                      "checks": checks, "lengths": checked_lengths(args.max_seq_len)}))  # fmt: skip


def _reuse_compiled_ops(path: str) -> None:
    """Let the checks' eager forward passes reuse the XLA executables that earlier rows compiled
    for the same shapes (jax's persistent cache: the same executables, so the same outputs;
    each length otherwise compiles every operation again, most of a row's CPU time)."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    compilation_cache.set_cache_dir(path)
    compilation_cache.reset_cache()  # read again on the next compile: the directory is new


def checked_lengths(n: int) -> list[int]:
    """The lengths a Tracr row is checked at: every length 1..N for N <= 10; above, 1, 2, 3,
    N/2 and the last five (N - 4..N), where the errors at the largest counts show (every
    length of a jax eager forward pass compiles each operation again for its shape: on the
    shared machine every length cost minutes)."""
    if n <= 10:
        return list(range(1, n + 1))
    return sorted({1, 2, 3, n // 2, *range(n - 4, n + 1)})


def _tracr_eval(rasp: Any, program: Any, word: list) -> Any:
    try:
        return rasp.evaluate(program, word)
    except Exception:  # Tracr's evaluate is undefined on this word
        return None


def _tracr_apply(model: Any, words: list[list]) -> list[list]:
    """The decoded outputs of a batch of words of one length (one forward pass)."""
    import jax.numpy as jnp

    enc = model.input_encoder
    batch = jnp.array([enc.encode(["BOS", *w]) for w in words])
    out = model.forward(model.params, batch).unembedded_output
    decoded = []
    for row in out.tolist():
        vals = model.output_encoder.decode(row) if model.output_encoder else row
        decoded.append(list(vals)[1:])
    return decoded


def _tally() -> dict[str, Any]:
    return {"words": 0, "right_words": 0, "wrong_lengths": [], "max_numeric_error": 0.0}


def _score(t: dict[str, Any], ref: Any, out: list, n: int) -> None:
    if ref is None:
        return
    ok_word = True
    for got, want in zip(out, ref):
        if want is None:
            continue
        if isinstance(want, (int, float)) and isinstance(got, (int, float)):  # bools too
            err = abs(float(got) - float(want))
            t["max_numeric_error"] = max(t["max_numeric_error"], err)
            ok = err < 0.01
        else:
            ok = got == want
        ok_word &= bool(ok)
    t["words"] += 1
    t["right_words"] += ok_word
    if not ok_word and n not in t["wrong_lengths"]:
        t["wrong_lengths"].append(n)


def run_tracr(args: argparse.Namespace, name: str, n: int, setting: str) -> dict[str, Any]:
    """One Tracr row, in a subprocess: stopped after ``--timeout`` seconds or above
    ``--memory-gb`` of resident memory, and recorded as such."""
    cmd = [args.tracr_python, __file__, "--worker", "--program", name, "--max-seq-len", str(n),
           "--setting", setting, "--tracr", args.tracr, "--samples", str(args.samples)]  # fmt: skip
    if args.jax_cache:
        cmd += ["--jax-cache", args.jax_cache]
    measured = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load_average": round(os.getloadavg()[0], 1),
        "checks_reuse_compiled_ops": bool(args.jax_cache),
    }
    code, stdout, err, extra = _subprocess(cmd, args.timeout, args.memory_gb)
    measured.update(extra)
    if err:
        return {"error": err, "measured": measured}
    return {**json.loads(stdout.strip().splitlines()[-1]), "measured": measured}


def _subprocess(cmd: list[str], timeout: float, memory_gb: float) -> tuple[int, str, str, dict]:
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        peak, stopped = 0.0, ""
        while proc.poll() is None:
            time.sleep(0.5)
            peak = max(peak, _rss_gb(proc.pid))
            if time.perf_counter() - start > timeout:
                stopped = f"did not finish in {timeout:g} s (wall)"
            elif peak > memory_gb:
                stopped = f"stopped above {memory_gb:g} GB of memory"
            if stopped:
                proc.kill()
                proc.wait()
                break
        extra = {"wall_s": round(time.perf_counter() - start, 1), "peak_rss_gb": round(peak, 2)}
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if stopped:
        return -1, "", stopped, extra
    if proc.returncode != 0:
        return proc.returncode, "", (stderr.strip().splitlines() or ["?"])[-1][:300], extra
    return 0, stdout, "", extra


def _rss_gb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0


# ---- ours -------------------------------------------------------------------------------------


def ours(name: str, source: str, args: argparse.Namespace) -> dict[str, Any]:
    """Our compile of Tracr's lib (only the import changed) or of our lib, and its checks."""
    from hardsoft import rasp
    from hardsoft.programs.rasp.load import RaspProgram, library_path, load

    build, vocab, instance = BUILDERS[name]
    if source == "tracr":
        lib = load_lib(args.tracr, "from hardsoft import rasp")
        values, symbols = rasp.compile_rasp.__globals__["symbols_for"](vocab)
        program = RaspProgram(build(lib, rasp, 10), name, values, symbols, source="lib.py")
    else:
        program = load(library_path(), name=instance)
    row: dict[str, Any] = {}
    start = time.process_time()
    try:
        model = program.compile("soft-temperature")
    except rasp.NeedsMaxLen as exc:
        row["refused_without_bound"] = str(exc)
        model = program.compile("soft-temperature", max_len=10)
    row["compile_cpu_s"] = round(time.process_time() - start, 2)
    cert = model.meta["certificate"]
    bound = model.meta["program"]["max_len"]
    row.update(
        status="length-general" if cert["length_general"] else f"bounded (n <= {bound})",
        reason="; ".join(f"{b['statement']}: {b['text']}" for b in cert["bounded_because"]),
        parameters=model.parameter_count(),
        features=list(model.spec.position_features),
        heads=sum(len(layer.heads) for layer in model.spec.layers),
        layers=len(model.spec.layers),
        exact=_check_ours(model, program, name, instance, bound, args),
    )
    if source == "tracr" and args.tracr_python:
        row["vs_tracr_evaluate"] = _check_vs_tracr(model, program, name, bound, args)
    return row


def _check_ours(model: Any, program: Any, name: str, instance: str, bound: int | None,
                args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    from hardsoft.programs.check_source import check_program

    rng = random.Random(0)
    exact: dict[str, Any] = {}
    for n in args.lengths:
        if bound is not None and n > bound:
            exact[str(n)] = f"— (bounded: n <= {bound})"
            continue
        alphabet = list(program.alphabet)
        if instance in DISTINCT_KEYS and program.source != "lib.py":
            if n > len(alphabet):
                exact[str(n)] = f"— (distinct keys: n <= {len(alphabet)})"
                continue
            words = [rng.sample(alphabet, n) for _ in range(args.samples)]
        else:
            words = words_for(name, alphabet, n, args.samples if n < 5000 else 1, rng)
        start = time.process_time()
        report = check_program(model, program, exhaustive_max_n=0, random_n=(),
                               words=["".join(w) for w in words])  # fmt: skip
        exact[str(n)] = {
            "words": report["checked_strings"],
            "mismatches": report["mismatches"],
            "undefined": report["undefined_strings"],
            "first_mismatch": report["first_mismatch"],
            "cpu_s": round(time.process_time() - start, 2),
        }
    return exact


def _check_vs_tracr(model: Any, program: Any, name: str, bound: int | None,
                    args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    """Our model against Tracr's own ``rasp.evaluate`` (run in Tracr's Python)."""
    from hardsoft.programs.check_source import check_program

    rng = random.Random(1)
    out: dict[str, Any] = {}
    for n in (10, 100):
        if bound is not None and n > bound:
            continue
        words = words_for(name, list(program.vocab), n, args.samples, rng)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump(words, fh)
        cmd = [args.tracr_python, __file__, "--worker", "--program", name, "--max-seq-len",
               "10", "--tracr", args.tracr, "--evaluate", fh.name]  # fmt: skip
        code, stdout, err, _ = _subprocess(cmd, args.timeout, args.memory_gb)
        os.unlink(fh.name)
        if err:
            out[str(n)] = {"error": err}
            continue
        refs = json.loads(stdout.strip().splitlines()[-1])
        tracr_runs = {
            "".join(program.alphabet[program.vocab.index(v)] for v in w): ref
            for w, ref in zip(words, refs)
        }
        against = _against_tracr(program, tracr_runs)
        report = check_program(model, against, exhaustive_max_n=0, random_n=(),
                               words=list(tracr_runs))  # fmt: skip
        out[str(n)] = {"words": report["checked_strings"], "mismatches": report["mismatches"],
                       "undefined": report["undefined_strings"]}  # fmt: skip
    return out


def _against_tracr(program: Any, refs: dict[str, Any]) -> Any:
    """``program`` with Tracr's own ``rasp.evaluate`` (of its output) as reference values
    (hardsoft is imported here: the Tracr worker runs without it)."""
    from hardsoft.errors import HardsoftError
    from hardsoft.programs.rasp.load import RaspProgram
    from hardsoft.programs.source import ProgramRun

    class AgainstTracr(RaspProgram):
        def run(self, word: str) -> ProgramRun:
            if refs[word] is None:
                raise HardsoftError("Tracr's evaluate is undefined here")
            return ProgramRun(word, {self.statements[-1]: refs[word]}, False)

    return AgainstTracr(
        program.sop, program.name, program.vocab, program.alphabet, source=program.source
    )


# ---- the results file and the table -----------------------------------------------------------


def _update(json_path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read the results file, apply ``change``, write it back atomically, under a lock."""
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


def _exact_text(e: Any) -> str:
    if isinstance(e, str):
        return e
    if not e["words"]:
        return "— (undefined)"
    return "exact" if e["mismatches"] == 0 else f"{e['mismatches']}/{e['words']} words wrong"


def _ours_cell(o: dict[str, Any] | None) -> list[str]:
    if o is None:
        return ["not run"] * 3
    measured = sorted(o["exact"], key=int)  # the lengths this row was checked at
    exact = ", ".join(f"n = {n}: {_exact_text(o['exact'][n])}" for n in measured)
    vs = o.get("vs_tracr_evaluate")
    if vs:
        exact += "; vs Tracr's evaluate: " + ", ".join(
            f"n = {n} " + ("exact" if v.get("mismatches") == 0 else str(v)) for n, v in vs.items()
        )
    return [o["status"], f"{o['parameters']:,}", exact]


def _tracr_cell(t: dict[str, Any] | None, n: int = 10) -> str:
    if t is None:
        return "not run"
    if "error" in t:
        return t["error"]
    c, r = t["checks"]["constant"], t["checks"]["random"]
    text = (f"{t['parameters']:,} p., {t['compile_cpu_s']:g} s; const {c['right_words']}/"
            f"{c['words']}, random {r['right_words']}/{r['words']}")  # fmt: skip
    wrong = sorted(set(c["wrong_lengths"]) | set(r["wrong_lengths"]))
    if wrong:
        text += f" (wrong from n = {wrong[0]})"
    if "lengths" not in t and n > 10:
        text += "; every length 1..N"
    err = max(c["max_numeric_error"], r["max_numeric_error"])
    if err > 0:
        text += f"; max err {err:.2g}"
    return text


def markdown(data: dict[str, Any], args: argparse.Namespace) -> str:
    """The side-by-side tables (ours; Tracr per setting) and how they were measured."""
    res, env, tenv = data["results"], data.get("env", {}), data.get("tracr_env", {})
    tl = args.max_seq_lens
    lines = [
        "# Tracr's library: hardsoft (one model for every n) vs Tracr (one per max_seq_len)",
        "",
        "Produced by `python benchmarks/tracr_lib.py` (docs/rasp.md, \"Tracr's library, side by "
        f'side"). Ours: measured {env.get("date", "?")} (load average '
        f"{env.get('load_average', '?')}), {env.get('machine', '?')}, {env.get('cpu_count', '?')}"
        f" CPUs shared with other jobs, Python {env.get('python', '?')}, torch "
        f"{env.get('torch', '?')}. Tracr commit {tenv.get('tracr', '?')} with jax "
        f"{tenv.get('jax', '?')} and dm-haiku {tenv.get('haiku', '?')} in its own venv on the same "
        "machine (each row's date and load in the JSON). Times are CPU seconds of the compiling "
        "process, not wall time.",
        "",
        "## Ours",
        "",
        "Tracr's lib: Tracr's own `lib.py` with only the import line changed to `from hardsoft "
        "import rasp` (instances in `BUILDERS`; `make_sort_unique` with keys `1 - indices` and "
        "`make_nary_sequencemap` with `x + y - z` of tokens, tokens and indices are Tracr's own "
        "test cases). Our lib: `src/hardsoft/programs/examples/tracr_lib.py`. Both compiled "
        "for `soft-temperature` (without a bound where that compiles, else `--max-len 10`) and "
        "checked at every position against our `rasp.evaluate` on the constant words and "
        f"{args.samples} random words per length (1 at n = 10^4); Tracr's lib also against "
        "Tracr's own `rasp.evaluate` at n = 10 and 100. `detect_pattern` was checked to "
        "n = 1000: our `rasp.evaluate` calls its lambda predicates (Tracr's `shift_by`) once "
        "per pair of positions, n^2 times.",
        "",
        "| program | Tracr's lib: status | parameters | checked | our lib: status | parameters "
        "| checked |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in BUILDERS:
        r = res.get(name, {})
        cells = [f"`{name}`", *_ours_cell(r.get("ours_tracr_lib"))]
        cells += _ours_cell(r.get("ours_our_lib"))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Why the bounded ones are bounded (the refusal without a bound, else the "
              "certificate):", ""]  # fmt: skip
    for name in BUILDERS:
        for col in ("ours_tracr_lib", "ours_our_lib"):
            o = res.get(name, {}).get(col) or {}
            if o.get("reason"):
                why = o.get("refused_without_bound") or o["reason"]
                which = "Tracr's lib" if col == "ours_tracr_lib" else "our lib"
                lines.append(f"- `{name}` ({which}): {why}")
    for setting, exactness in SETTINGS.items():
        lines += [
            "",
            f"## Tracr, `mlp_exactness={exactness}`"
            + (" (its default)" if setting == "default" else ""),
            "",
            "Per max_seq_len N: parameters (p.), compile CPU seconds, and the words right "
            "against Tracr's own `rasp.evaluate` (constant words: each vocabulary value "
            f"repeated, at most 4 per length; {args.samples} random words per length) at every "
            "length 1..N for N = 10; for N = 20 and 40 at n = 1, 2, 3, N/2 and N - 4..N, "
            'except rows marked "every length 1..N" (the first rows measured).',
            "",
            "| program | " + " | ".join(f"N = {n}" for n in tl) + " |",
            "|" + "---|" * (1 + len(tl)),
        ]
        for name in BUILDERS:
            rows = res.get(name, {}).get("tracr", {}).get(setting, {})
            lines.append(
                f"| `{name}` | " + " | ".join(_tracr_cell(rows.get(str(n)), n) for n in tl) + " |"
            )
        lines += ["", *_summary(res, setting, tl)]
    lines += [
        "",
        "Compile CPU seconds of a Tracr row include jax's start-up in the row's fresh process "
        "(about 4 s here; a second compile in one process takes a fraction of a second, "
        "benchmarks/results/tracr_errors.md). Raw results: `benchmarks/results/tracr_lib.json`.",
        "",
    ]
    return "\n".join(lines)


def _summary(res: dict[str, Any], setting: str, tl: list[int]) -> list[str]:
    """Per N: how many programs were right on every checked word, and which were not."""
    out = []
    for n in tl:
        right, wrong, missing = [], [], []
        for name in BUILDERS:
            row = res.get(name, {}).get("tracr", {}).get(setting, {}).get(str(n))
            if row is None or "error" in row:
                missing.append(name)
                continue
            checks = row["checks"].values()
            ok = all(c["right_words"] == c["words"] for c in checks)
            (right if ok else wrong).append(name)
        measured = len(right) + len(wrong)
        text = f"- N = {n}: {len(right)} of {measured} measured right on every checked word"
        if wrong:
            text += f"; wrong: {', '.join(f'`{w}`' for w in wrong)}"
        if missing:
            text += f"; not measured: {len(missing)}"
        out.append(text + ".")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tracr", help="a checkout of github.com/google-deepmind/tracr")
    ap.add_argument("--tracr-python", help="a Python with jax, dm-haiku, chex, networkx")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--evaluate", help=argparse.SUPPRESS)
    ap.add_argument("--program")
    ap.add_argument("--setting", default="default", choices=list(SETTINGS))
    ap.add_argument("--max-seq-len", type=int)
    ap.add_argument("--max-seq-lens", default="10,20,40")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--lengths", default="10,100,10000")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=900, help="wall seconds per Tracr row")
    ap.add_argument("--memory-gb", type=float, default=8.0, help="memory per Tracr row")
    ap.add_argument("--only", default="", help="comma-separated lib functions")
    ap.add_argument("--jax-cache", help="a directory where Tracr rows share jax's compiled "
                    "operations for their checks (not for the timed compile)")  # fmt: skip
    ap.add_argument("--ours-only", action="store_true")
    ap.add_argument("--tracr-only", action="store_true")
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--rerun", action="store_true", help="measure rows again")
    ap.add_argument("-o", "--out", default=str(ROOT / "benchmarks/results/tracr_lib.md"))
    args = ap.parse_args()
    if args.worker:
        tracr_worker(args)
        return
    args.max_seq_lens = [int(x) for x in args.max_seq_lens.split(",")]
    args.lengths = [int(x) for x in args.lengths.split(",")]
    json_path = Path(args.out).with_suffix(".json")
    names = [n for n in args.only.split(",") if n] or list(BUILDERS)
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
        for col, source in (("ours_tracr_lib", "tracr"), ("ours_our_lib", "ours")):
            if source == "tracr" and not args.tracr:
                continue
            row = ours(name, source, args)
            print(name, col, row["status"], row["exact"], row.get("vs_tracr_evaluate"),
                  flush=True)  # fmt: skip

            def put(d: dict[str, Any], name: str = name, col: str = col, row: Any = row) -> None:
                d["results"].setdefault(name, {})[col] = row
                d["env"] = env

            _update(json_path, put)


def _measure_tracr(json_path: Path, names: list[str], args: argparse.Namespace) -> None:
    probe = subprocess.run(
        [args.tracr_python, "-c", "import jax, haiku; print(jax.__version__, haiku.__version__)"],
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    commit = subprocess.run(["git", "-C", args.tracr, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    tenv = {"jax": probe[0] if probe else "?", "haiku": probe[1] if len(probe) > 1 else "?",
            "tracr": commit or args.tracr}  # fmt: skip
    for n in args.max_seq_lens:  # every program at one N before the next
        for setting in args.settings.split(","):
            for name in names:
                data = _update(json_path, lambda d: d.setdefault("tracr_env", tenv))
                rows = data["results"].get(name, {}).get("tracr", {}).get(setting, {})
                if str(n) in rows and not args.rerun:
                    continue
                row = run_tracr(args, name, n, setting)
                print(name, setting, n, _tracr_cell(row), flush=True)

                def put(d: dict[str, Any], name: str = name, s: str = setting, n: int = n,
                        row: Any = row) -> None:  # fmt: skip
                    d["results"].setdefault(name, {}).setdefault("tracr", {}).setdefault(s, {})
                    d["results"][name]["tracr"][s][str(n)] = row

                _update(json_path, put)


if __name__ == "__main__":
    main()

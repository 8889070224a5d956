"""The full ``decompile-trained`` experiment end to end, timed, with its per-model table
(issue #30, "Trained models"), side by side with an older checkout.

    python benchmarks/decompile_trained.py [--baseline SRC] [--out FILE] [--keep DIR]
    python benchmarks/decompile_trained.py --reuse DIR [--out FILE]

Runs ``hardsoft reproduce --full --only decompile-trained --force`` in a fresh folder for this
checkout and (``--baseline SRC``: the ``src/`` of an older checkout, e.g. from ``git
archive``) that one, both at once in fresh processes with one thread each (so a shared
machine loads both alike; training included: nothing is reused). Records wall and CPU time,
the load average sampled every 10 s while they run, and, per trained recognizer: classes per
layer, decompile seconds (the proved shrinking's share), formula size as first written →
after the BDD simplification → after the proved shrinking, the task's formula size and the
ratio, whether the formula was proved equal to the task at every length, and the shrinking's
counted work (automaton searches + rewrites refuted on kept words). Writes Markdown to stdout
(and to --out). ``--reuse DIR`` writes the tables from the run folders kept by ``--keep DIR``
without running anything (wall time then from each record's ``duration_s``, no CPU time).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from _common import environment

_RUN = (
    "import resource, sys, time; from hardsoft.cli import main; t = time.perf_counter()\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print('TIMES', time.perf_counter() - t, r.ru_utime + r.ru_stime, file=sys.stderr)"
)


def _reproduce(src: str, folder: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    args = [sys.executable, "-c", _RUN, "reproduce", "--full", "--only", "decompile-trained"]
    args += ["-o", str(folder), "--force"]
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _record(folder: Path) -> dict:
    with sqlite3.connect(folder / "results.sqlite") as db:
        return json.loads(db.execute("select record from results").fetchone()[0])


class _Load:
    """The 1-minute load average, sampled every ``every`` seconds until stopped."""

    def __init__(self, every: float = 10.0) -> None:
        self.samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> str:
        self._stop.set()
        self._thread.join()
        s = self.samples
        return f"min {min(s):.1f}, mean {sum(s) / len(s):.1f}, max {max(s):.1f} ({len(s)} samples)"


def _ratio(d: dict) -> str:
    return f"{d['size'] / d['task_size']:.2f}" if "size" in d else "-"


def _work(d: dict) -> str:
    s = d.get("shrink") or {}
    if not s:
        return "-"
    refuted = f" + {s['refuted']}" if "refuted" in s else ""
    bound = " (bound)" if s.get("exhausted") else ""
    return f"{s['work']:,}{bound}; {s['checks']}{refuted}"


def _proved(d: dict) -> str:
    eq = d.get("equal_at_every_length")
    if eq:
        return "yes"
    if d.get("counterexample"):
        return f"no (`{d['counterexample']}`)"
    return "undecided"


def table(record: dict, baseline: dict | None) -> list[str]:
    cols = ["task", "seed", "classes per layer", "decompile s (shrink s)",
            "size: first → simplified → shrunk", "task's size", "ratio", "proved equal",
            "shrink work; searches + refuted on words"]  # fmt: skip
    if baseline is not None:
        cols += ["baseline: shrunk (ratio)", "baseline shrink work; searches"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    base_cells = {(c["language"], c["seed"]): c for c in (baseline or {}).get("cells", [])}
    for c in record["cells"]:
        d = c["decompile"]
        shrink_s = (d.get("shrink") or {}).get("seconds")
        row = [
            c["language"],
            str(c["seed"]),
            " ".join(map(str, d.get("classes", []))) or d["status"],
            f"{d['seconds']:.2f} ({shrink_s:.2f})" if "seconds" in d else "-",
            f"{d.get('size_before', '-')} → {d.get('size_before_shrinking', '-')} → "
            f"{d.get('size', '-')}",
            str(d.get("task_size", "-")),
            _ratio(d),
            _proved(d),
            _work(d),
        ]
        if baseline is not None:
            b = base_cells.get((c["language"], c["seed"]), {}).get("decompile", {})
            row += [f"{b.get('size', '-')} ({_ratio(b)})", _work(b)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def shrinking(record: dict) -> str:
    """The proved shrinking over all models: seconds and counted work."""
    done = [c["decompile"].get("shrink") or {} for c in record["cells"]]
    seconds = sum(d.get("seconds", 0.0) for d in done)
    work = sum(d.get("work", 0) for d in done)
    return f"shrinking {seconds:.1f} s, {work:,} units of counted work in all"


def within(record: dict) -> str:
    cells = record["cells"]
    proved = [c["decompile"] for c in cells if c["decompile"].get("equal_at_every_length")]
    ratios = [d["size"] / d["task_size"] for d in proved]
    decompiled = sum(c["decompile"]["status"] == "decompiled" for c in record["cells"])
    return (
        f"{decompiled}/{len(record['cells'])} decompiled; {len(proved)} proved equal to their "
        f"task at every length, {sum(r <= 4 for r in ratios)} of them within 4× of the task's "
        f"formula (largest ratio {max(ratios, default=0):.2f})"
    )


def _run_both(
    baseline: str | None, keep: Path | None
) -> tuple[dict[str, tuple[float, float | None]], dict[str, dict], str]:
    """Both runs at once: (wall, CPU) seconds and the stored record of each, and the load."""
    here = str(Path(__file__).resolve().parents[1] / "src")
    runs = {"this checkout": here} | ({"baseline": baseline} if baseline else {})
    tmp = Path(tempfile.mkdtemp(prefix="decompile-trained-"))
    load = _Load()
    procs = {k: _reproduce(src, tmp / k.replace(" ", "_")) for k, src in runs.items()}
    times: dict[str, tuple[float, float | None]] = {}
    records = {}
    for k, proc in procs.items():
        _, err = proc.communicate()
        line = [x for x in err.decode().splitlines() if x.startswith("TIMES")]
        if not line:
            raise SystemExit(f"error: the {k} run failed:\n{err.decode()[-2000:]}")
        wall, cpu = (float(x) for x in line[-1].split()[1:])
        times[k] = (wall, cpu)
        records[k] = _record(tmp / k.replace(" ", "_"))
    loads = load.stop()
    if keep:
        shutil.copytree(tmp, keep, dirs_exist_ok=True)
    shutil.rmtree(tmp)
    return times, records, loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=None, help="src/ of the checkout to compare")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="keep the run folders here")
    parser.add_argument("--reuse", type=Path, default=None, help="tables from kept folders")
    parser.add_argument("--baseline-commit", default="?", help="named when its src has no git")
    args = parser.parse_args()
    env = environment("cpu")
    if args.reuse:
        records = {
            k: _record(args.reuse / k.replace(" ", "_"))
            for k in ("this checkout", "baseline")
            if (args.reuse / k.replace(" ", "_") / "results.sqlite").exists()
        }
        times = {k: (r["duration_s"], None) for k, r in records.items()}
        loads = "not sampled (tables written from kept run folders)"
    else:
        times, records, loads = _run_both(args.baseline, args.keep)
    mine = records["this checkout"]
    base = records.get("baseline")
    lines = [
        "# decompile-trained, full plan, end to end",
        "",
        "`python benchmarks/decompile_trained.py" + (" --baseline SRC`" if args.baseline else "`"),
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()),
        f"load average (1 min) while running: {loads}",
        "",
        "| run | commit | experiment version | wall | CPU (user + system) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {k} | {records[k].get('git_commit') or args.baseline_commit} "
        f"| v{records[k].get('version')} "
        f"| {w / 60:.1f} min | {'-' if c is None else f'{c / 60:.1f} min'} |"
        for k, (w, c) in times.items()
    ]
    lines += ["", f"This checkout: {within(mine['metrics'])}; {shrinking(mine['metrics'])}."]
    if base is not None:
        lines += [f"Baseline: {within(base['metrics'])}; {shrinking(base['metrics'])}."]
    lines += ["", "Summary (the experiment's own): " + mine["summary"], ""]
    lines += table(mine["metrics"], None if base is None else base["metrics"])
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

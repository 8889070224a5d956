"""The C-RASP statement checker on long programs: linear now, quadratic before issue 41.

A chain of N statements ``x0 = "a"``, ``xk = !x(k-1)`` is parsed once, then checked by the
current checker and, side by side in the same run, by the checker of an earlier commit (read
from git: ``--before REV``), which copied the dict of the later statements for every
statement (44,000 statements took 97 s). Prints Markdown (``--write FILE`` to save).

    python benchmarks/crasp_checker.py --lengths 5000,10000,20000,44000 --before 26cdd78
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hardsoft.programs.crasp.checker import check_program
from hardsoft.programs.crasp.parser import parse_program

from _common import environment

ROOT = Path(__file__).resolve().parents[1]
CHECKER = "src/hardsoft/programs/crasp/checker.py"


def chain(n: int) -> str:
    return 'x0 = "a"\n' + "".join(f"x{k} = !x{k - 1}\n" for k in range(1, n))


def checker_at(rev: str):  # type: ignore[no-untyped-def]
    """``check_program`` of the checker module at git revision ``rev``."""
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{CHECKER}"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "checker_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("checker_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["checker_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.check_program


def seconds(check, items) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    check(items, alphabet=None, where="chain")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="5000,10000,20000,44000")
    ap.add_argument("--before", default=None, help="a git revision with the earlier checker")
    ap.add_argument("--before-max", type=int, default=20000, help="longest chain for it")
    ap.add_argument("--write", default=None)
    args = ap.parse_args()
    before = checker_at(args.before) if args.before else None
    rows = []
    for n in (int(x) for x in args.lengths.split(",")):
        items = parse_program(chain(n))
        now = seconds(check_program, items)
        old = seconds(before, items) if before is not None and n <= args.before_max else None
        rows.append((n, now, old))
        print(n, now, old, file=sys.stderr, flush=True)
    env = environment("cpu")
    env["load average"] = f"{os.getloadavg()[0]:.1f}"
    lines = [
        "# C-RASP statement checker: a chain of N statements",
        "",
        f"`python benchmarks/crasp_checker.py --lengths {args.lengths}"
        + (f" --before {args.before}`" if args.before else "`"),
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()),
        "",
        "| N | this checker (s) | per 1,000 statements (ms) | before (s) | before / this |",
        "|---|---|---|---|---|",
    ]
    for n, now, old in rows:
        ratio = f"{old / now:,.0f}x" if old is not None else "-"
        shown = f"{old:.2f}" if old is not None else "-"
        lines.append(f"| {n:,} | {now:.3f} | {1000 * now * 1000 / n:.2f} | {shown} | {ratio} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()

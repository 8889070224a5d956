"""The atlas's build time: ``hardsoft atlas --quick`` from scratch (every cell's evidence run)
and again with every cell stored (reused), in fresh processes, with the slowest cells.

    python benchmarks/atlas.py --out benchmarks/results/atlas.md
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

from _common import environment


def _run(folder: Path, quick: bool) -> tuple[float, dict]:
    mode = "--quick" if quick else "--full"
    cmd = [sys.executable, "-m", "hardsoft.cli", "atlas", mode, "--out", str(folder), "--json"]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    return seconds, json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="Time --full instead of --quick.")
    ap.add_argument("--out", type=Path, default=None, help="Also write the Markdown here.")
    args = ap.parse_args()
    quick = not args.full
    with tempfile.TemporaryDirectory() as tmp:
        first, table = _run(Path(tmp), quick)
        second, again = _run(Path(tmp), quick)
    slow = sorted(table["cells"], key=lambda c: -c.get("seconds", 0))[:8]
    env = environment("cpu")
    env["load_average"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"# atlas: `hardsoft atlas --{'quick' if quick else 'full'}` build time",
        "",
        "```",
        *(f"{k}: {v}" for k, v in env.items()),
        "```",
        "",
        "| run | wall s (process) | build s (reported) | cells | with evidence | reused |",
        "|---|---|---|---|---|---|",
        f"| from scratch | {first:.1f} | {table['seconds']} | {table['cells_total']} | "
        f"{table['cells_with_evidence']} | 0 |",
        f"| stored | {second:.1f} | {again['seconds']} | {again['cells_total']} | "
        f"{again['cells_with_evidence']} | {sum(bool(c.get('reused')) for c in again['cells'])} |",
        "",
        "Slowest cells from scratch:",
        "",
        "| cell | status | seconds |",
        "|---|---|---|",
        *(f"| {c['row']} × {c['column']} | {c['status']} | {c['seconds']} |" for c in slow),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

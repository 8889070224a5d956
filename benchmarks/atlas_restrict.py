"""The quick atlas's restriction illustrations, every candidate model: the restriction engine's
whole result (restriction, per-layer logs, dependency set, acceptance table, output rows,
witness; timings left out) for each of the 16 quick models of each cell, and the CPU seconds
per cell. Run it once per version (``PYTHONPATH`` at an export of the other tree) and
``--compare`` the two dumps: the evidence is unchanged when they are equal.

    python benchmarks/atlas_restrict.py --dump A.json [--cells dyck1,uhat-strict ...]
    python benchmarks/atlas_restrict.py --compare A.json B.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

CELLS = (
    "parity,uhat-strict parity,uhat-pe majority,uhat-strict majority,uhat-pe dyck1,uhat-strict "
    "dyck1,uhat-pe dyck2,uhat-strict dyck2,uhat-pe dyck3,uhat-strict dyck3,uhat-pe"
).split()


def dump(cells: list[str]) -> tuple[dict, dict[str, float]]:
    import torch

    from hardsoft.atlas import illustrate
    from hardsoft.atlas.evidence import Budget, row_language
    from hardsoft.atlas.table import column, row
    from hardsoft.limits.restrict import restrict

    torch.set_num_threads(1)
    out, cpu = {}, {}
    for cell in cells:
        r, c = (f(x) for f, x in zip((row, column), cell.split(","), strict=True))
        lang = row_language(r)
        target = r.language if lang.restriction_target else None
        t0 = time.process_time()
        for seed, shape, mask in illustrate._candidates(c, Budget(quick=True)):
            model, cmd = illustrate._random_hard(r, c, seed, shape, mask)
            res = restrict(model, r.restriction_n, target, seed=seed)
            d = res.to_dict()
            d.pop("seconds")
            for log in d["layers"]:
                log.pop("seconds")
            d["accept_table"] = res.analysis.accept_table.tolist()
            d["output_values"] = res.analysis.output_values.tolist()
            out[f"{cell},{cmd}"] = d
        cpu[cell] = time.process_time() - t0
        print(f"{cell}: {cpu[cell]:.2f} s CPU", flush=True)
    return out, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dump", type=Path, help="Write the results here (JSON).")
    ap.add_argument("--cells", nargs="*", default=CELLS, help="ROW,COLUMN ... (default: all)")
    ap.add_argument("--compare", type=Path, nargs=2, help="Two dumps: equal or not.")
    args = ap.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text())["results"] for p in args.compare)
        diff = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        print(f"{len(a)} and {len(b)} candidates; {len(diff)} differ")
        for k in diff[:10]:
            print("  differs:", k)
        sys.exit(1 if diff else 0)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    results, cpu = dump(args.cells)
    print(f"total {sum(cpu.values()):.2f} s CPU (load before {load})")
    if args.dump:
        args.dump.write_text(
            json.dumps({"cpu": cpu, "results": results}, sort_keys=True, default=str)
        )


if __name__ == "__main__":
    main()

"""Regular languages compiled into transformers: sizes and times per language, and where the
construction grows (random automata by monoid size).

Per language: the syntactic monoid's size, the class, the induction (levels, depth), the
formula (distinct nodes as translated and after shrinking), the model (layers, heads, width,
parameters) and the seconds of the whole pipeline (translation, the exact formula check, the
compiler, the model's check against the DFA), or the refusal and the seconds it took.

    .venv/bin/python benchmarks/regular.py [--random 3] [--seed 0] [--target hard]
        [--out benchmarks/results/regular.md]

Timings under load are recorded with the load average; compare rows of one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hardsoft.errors import HardsoftError  # noqa: E402
from hardsoft.languages.regular import DFA, dfa_from_file, dfa_from_regex  # noqa: E402
from hardsoft.regular.compile import compile_regular  # noqa: E402
from hardsoft.regular.monoid import transition_monoid  # noqa: E402

from _common import environment  # noqa: E402


def _dfa(table: dict[str, dict[str, str]], accept: list[str], alphabet: str) -> DFA:
    """A DFA written here (start "0"), minimised by pyformlang like any DFA file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dfa.json"
        spec = {"alphabet": alphabet, "start": "0", "accept": accept, "transitions": table}
        path.write_text(json.dumps(spec))
        return dfa_from_file(path)


def _counter(mod: int, weights: dict[str, int], accept: int = 0, alphabet: str = "01") -> DFA:
    """Σ weights[a]·#a ≡ accept (mod ``mod``)."""
    table = {str(q): {a: str((q + w) % mod) for a, w in weights.items()} for q in range(mod)}
    return _dfa(table, [str(accept)], alphabet)


def _parity_pair() -> DFA:
    """Tomita 5: an even number of 0s and an even number of 1s (Z2 × Z2)."""
    table = {f"{x}{y}": {"0": f"{1 - x}{y}", "1": f"{x}{1 - y}"} for x in (0, 1) for y in (0, 1)}
    table["0"] = table.pop("00")
    for row in table.values():
        for a, q in row.items():
            row[a] = "0" if q == "00" else q
    return _dfa(table, ["0"], "01")


def languages() -> list[tuple[str, DFA]]:
    """The named languages of the table (Tomita-like ones written here)."""
    rx = dfa_from_regex
    return [
        ("parity (even 1s)", rx("0*(10*10*)*", "01")),
        ("(aa)*", rx("(aa)*", "ab")),
        ("(ab|ba)*", rx("(ab|ba)*", "ab")),
        ("(aab)*", rx("(aab)*", "ab")),
        ("Σ*abΣ*", rx(".*ab.*", "ab")),
        ("Dyck-1, depth ≤ 2", rx("(a(ab)*b)*", "ab")),
        ("Dyck-1, depth ≤ 3", rx("(a(a(ab)*b)*b)*", "ab")),
        ("Dyck-2 (ab, cd), depth ≤ 2", rx("(a(ab|cd)*b|c(ab|cd)*d)*", "abcd")),
        ("Tomita 1: 1*", rx("1*", "01")),
        ("Tomita 2: (10)*", rx("(10)*", "01")),
        ("Tomita 4: no 000", rx("(1|01|001)*(0|00)?", "01")),
        ("Tomita 5: even 0s, even 1s", _parity_pair()),
        ("Tomita 6: #0 − #1 ≡ 0 mod 3", _counter(3, {"0": 1, "1": 2})),
        ("Tomita 7: 0*1*0*1*", rx("0*1*0*1*", "01")),
    ]


def random_dfa(rng: np.random.Generator, n: int, k: int) -> DFA:
    alphabet = "abc"[:k]
    table = {str(q): {a: str(int(rng.integers(n))) for a in alphabet} for q in range(n)}
    accept = [str(q) for q in range(n) if rng.random() < 0.5] or ["0"]
    return _dfa(table, accept, alphabet)


BINS = ((1, 25), (26, 50), (51, 100), (101, 150), (151, 200))


def random_languages(per_bin: int, seed: int) -> list[tuple[str, DFA]]:
    """``per_bin`` random minimal DFAs (2–7 states, 2–3 letters, not non-solvable is NOT
    filtered: the refusals count too) for each monoid-size bin."""
    rng = np.random.default_rng(seed)
    found: dict[tuple[int, int], list[DFA]] = {b: [] for b in BINS}
    for _ in range(20_000):
        if all(len(v) >= per_bin for v in found.values()):
            break
        dfa = random_dfa(rng, int(rng.integers(2, 8)), int(rng.integers(2, 4)))
        try:
            size = len(transition_monoid(dfa, 200))
        except HardsoftError:
            continue
        for lo, hi in BINS:
            if lo <= size <= hi and len(found[(lo, hi)]) < per_bin:
                found[(lo, hi)].append(dfa)
    return [
        (f"random {lo}–{hi} #{j + 1}", d)
        for (lo, hi), ds in found.items()
        for j, d in enumerate(ds)
    ]


def measure(name: str, dfa: DFA, target: str) -> dict:
    started, cpu = time.perf_counter(), time.process_time()
    try:
        result = compile_regular(dfa, target)
    except HardsoftError as exc:
        return {
            "language": name,
            "refused": str(exc),
            "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - cpu,
        }
    rec = result.record
    row = {
        "language": name,
        "states": rec["minimal_dfa_states"],
        "monoid": rec["monoid_size"],
        "class": rec["class"],
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
    }
    if result.refused:
        row["refused"] = f"non-solvable: {rec['groups'][0]['name'] if rec['groups'] else '?'}"
        return row
    cert = rec["certificate"]
    sizes = rec["formula_size"]
    row.update(
        levels=rec["translation"]["levels"],
        depth=rec["translation"]["depth"],
        dag_before=sizes["dag_before"],
        dag_after=sizes["dag_after"],
        tree_after=sizes["tree_after"],
        layers=cert["layers"],
        heads=cert["heads_total"],
        width=cert["residual_width"],
        parameters=cert["parameters"],
        mismatches=rec["model_check"]["mismatches"],
        stages={
            "translation": rec["translation"]["seconds"],
            "shrink": rec["shrink"]["seconds"],
            "formula_check": rec["formula_check"]["seconds"],
            "compile": cert["compile_seconds"],
            "model_check": rec["model_check"]["seconds"],
        },
    )
    return row


def _secs(r: dict) -> str:
    """Wall seconds and, in parentheses, this process's CPU seconds (less load-dependent)."""
    return f"{r['seconds']:.1f} ({r['cpu_seconds']:.1f})"


def markdown(rows: list[dict], env: dict, target: str) -> str:
    head = (
        "| language | monoid | class | levels / depth | formula nodes (built → kept) | "
        "tree | layers | heads | width | parameters | mismatches | seconds (CPU) |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        r = {**r, "language": r["language"].replace("|", "\\|")}  # a table cell
        if "refused" in r:
            lines.append(
                f"| {r['language']} | {r.get('monoid', '—')} | {r.get('class', '—')} | "
                f"refused: {r['refused']} | | | | | | | | {_secs(r)} |"
            )
            continue
        lines.append(
            f"| {r['language']} | {r['monoid']} | {r['class']} | {r['levels']} / {r['depth']} | "
            f"{r['dag_before']} → {r['dag_after']} | {r['tree_after']} | {r['layers']} | "
            f"{r['heads']} | {r['width']} | {r['parameters']:,} | {r['mismatches']} | "
            f"{_secs(r)} |"
        )
    return (
        f"# Regular languages compiled (`--target {target}`)\n\n"
        f"`benchmarks/regular.py`, {env['date']}, {env['machine']}, {env['cpu_count']} cores, "
        f"Python {env['python']}, torch {env['torch']} ({env['torch_threads']} thread(s)); "
        f"load average before / after: {env['load_before']} / {env['load_after']}.\n\n"
        "Seconds: the whole pipeline (monoid, class, translation, the formula's exact check "
        "at every length and on words, shrinking, compiling, the model's check against the "
        "DFA), or the time to the refusal: wall seconds, and this process's CPU seconds in "
        "parentheses (the machine is shared; CPU time depends less on the load).\n\n"
        + "\n".join(lines)
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--random", type=int, default=3, help="random automata per size bin")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", default="hard")
    parser.add_argument("--out", default="benchmarks/results/regular.md")
    parser.add_argument("--only-random", action="store_true")
    args = parser.parse_args()
    env = environment("cpu")
    env["load_before"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    todo = [] if args.only_random else languages()
    todo += random_languages(args.random, args.seed)
    rows = []
    for name, dfa in todo:
        rows.append(measure(name, dfa, args.target))
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    env["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    Path(args.out).write_text(markdown(rows, env, args.target))
    Path(args.out).with_suffix(".json").write_text(json.dumps({"env": env, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

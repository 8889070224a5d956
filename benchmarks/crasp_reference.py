"""hardsoft's C-RASP front end against the coli-saar/c-rasp interpreter, on that repository's
own six example programs (an outside check, not CI).

For every example: both interpreters run every word up to length 7 (6 over three symbols) and
100 random words of lengths 1..40, and every statement's value at every position is compared
(not only acceptance). hardsoft then compiles the program (hard and soft-temperature) and
checks each model against its interpreter on the same lengths. For ``aa_star_h25.cr`` the
two parsers read ``!pos_even && A`` differently (coli-saar: ``!(pos_even && A)``); the script
shows which words each accepts and runs coli-saar's interpreter on the parenthesized
``(!pos_even) && A`` too. For ``copy4.cr`` and ``increment.cr``, written for words of length 8,
it counts the accepted words per length.

coli-saar's interpreter needs ANTLR's runtime; give a Python that has it::

    python3 -m venv /tmp/crasp-ref-venv
    /tmp/crasp-ref-venv/bin/pip install antlr4-python3-runtime
    python benchmarks/crasp_reference.py CHECKOUT --python /tmp/crasp-ref-venv/bin/python \\
        --write benchmarks/results/crasp_reference.md

CHECKOUT is a checkout of github.com/coli-saar/c-rasp (read at run time, never copied).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hardsoft.check import check_model
from hardsoft.programs.compiled import model_sizes
from hardsoft.programs.crasp import from_text
from hardsoft.programs.reference import program_reference

from _common import environment

EXAMPLES = {
    "dyck1_yc24.cr": "()",
    "count3_yc24.cr": "abc",
    "aa_star_h25.cr": "ab",
    "contains_ab_h25.cr": "ab",
    "copy4.cr": "abc",
    "increment.cr": "01",
}

# Runs inside the other Python: loads one program with coli-saar's parser and prints every
# statement's values on every word (one JSON object per line of stdin).
DRIVER = r"""
import json, os, sys
sys.path.insert(0, os.getcwd())
from parser import parse_file
from tracing import Trace

class Collect(Trace):
    def accept_tokens(self, tokens): self.values = {}
    def accept(self, variable, value): self.values[variable] = list(value)
    def accept_result(self, result): self.result = result

program = parse_file(sys.argv[1])
for line in sys.stdin:
    word = json.loads(line)
    trace = Collect()
    result = program.execute(list(word), tracing=trace)
    print(json.dumps({"word": word, "values": trace.values, "result": bool(result)}))
"""


def words_for(alphabet: str, rng: np.random.Generator) -> list[str]:
    top = 7 if len(alphabet) <= 2 else 6
    words = ["".join(w) for n in range(1, top + 1) for w in itertools.product(alphabet, repeat=n)]
    lengths = rng.integers(1, 41, size=100)
    words += ["".join(rng.choice(list(alphabet), size=int(n))) for n in lengths]
    return words


def reference_run(python: str, checkout: Path, program: Path, words: list[str]) -> list[dict]:
    """coli-saar's interpreter on ``words`` (one process per program: its parser keeps the
    imports in a class attribute, shared between files)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(DRIVER)
    proc = subprocess.run(
        [python, f.name, str(program.resolve())],
        input="".join(json.dumps(w) + "\n" for w in words),
        capture_output=True,
        text=True,
        cwd=checkout,
        check=True,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def same(a: list, b: list) -> bool:
    """Equal values of equal types (True and 1 are different answers here)."""
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))


def compare(name: str, text: str, alphabet: str, theirs: list[dict]) -> dict:
    ours = from_text(text, alphabet=alphabet, name=name)
    bad_words, bad_statements = [], set()
    for t in theirs:
        run = ours.run(t["word"])
        for stmt, values in t["values"].items():
            if not same(run.values[stmt], values):
                bad_statements.add(stmt)
                if len(bad_words) < 5 and t["word"] not in bad_words:
                    bad_words.append(t["word"])
    accept_diff = [t["word"] for t in theirs if ours.run(t["word"]).accept != t["result"]]
    return {
        "statements": list(ours.statements),
        "words": len(theirs),
        "positions": sum(len(t["word"]) for t in theirs),
        "differing_statements": sorted(bad_statements),
        "first_differing_words": bad_words,
        "acceptance_differs_on": len(accept_diff),
        "acceptance_examples": accept_diff[:6],
    }


def compile_and_check(text: str, alphabet: str, name: str) -> list[dict]:
    prog = from_text(text, alphabet=alphabet, name=name)
    rows = []
    for target in ("hard", "soft-temperature"):
        start = time.perf_counter()
        model = prog.compile(target)
        reference, numeric, _ = program_reference(model, prog)
        rep = check_model(
            model,
            reference,
            readout="outputs",
            numeric=numeric,
            exhaustive_max_n=7 if len(alphabet) <= 2 else 6,
            random_n=[40],
            samples=100,
        )
        rows.append(
            {
                "target": target,
                **model_sizes(model),
                "positions": rep["checked_positions"],
                "mismatches": rep["mismatches"],
                "seconds": round(time.perf_counter() - start, 2),
            }
        )
    return rows


def accepted_words(text: str, alphabet: str, n: int) -> list[str]:
    """Every word of length n the program accepts (hardsoft's interpreter, batched)."""
    from hardsoft.check import all_strings

    prog = from_text(text, alphabet=alphabet)
    ids = all_strings(len(alphabet), n)
    last = prog.values(ids)[prog.statements[-1]][:, -1]
    return ["".join(alphabet[k] for k in row) for row in ids[last]]


def intended(file: str) -> set[str]:
    """The language each file's comment describes, at length 8: COPY4 (u u for u in Σ^4)
    and {br(x) br(x+1) | 0 <= x <= 14} (br: reversed 4-bit binary)."""
    if file == "copy4.cr":
        return {"".join(u) * 2 for u in itertools.product("abc", repeat=4)}

    def br(x: int) -> str:
        return format(x, "04b")[::-1]

    return {br(x) + br(x + 1) for x in range(15)}


def short_words(file: str, alphabet: str) -> dict:
    """Accepted words per length (to 10), and at length 8 against the intended language."""
    counts = {n: len(accepted_words(TEXTS[file], alphabet, n)) for n in range(1, 11)}
    at8 = set(accepted_words(TEXTS[file], alphabet, 8))
    want = intended(file)
    return {
        "accepted_by_length": counts,
        "at_8_missing": sorted(want - at8),
        "at_8_extra": sorted(at8 - want),
        "at_10_examples": accepted_words(TEXTS[file], alphabet, 10)[:3],
    }


TEXTS: dict[str, str] = {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", type=Path, help="a checkout of coli-saar/c-rasp")
    ap.add_argument("--python", default=sys.executable, help="a Python with antlr4 runtime")
    ap.add_argument("--write", type=Path, help="write the Markdown results here")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    commit = subprocess.run(
        ["git", "-C", str(args.checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    results = {}
    for file, alphabet in EXAMPLES.items():
        path = args.checkout / "examples" / file
        text = TEXTS[file] = path.read_text()
        words = words_for(alphabet, rng)
        theirs = reference_run(args.python, args.checkout, path, words)
        entry = {
            "alphabet": alphabet,
            "agreement": compare(file, text, alphabet, theirs),
            "compiled": compile_and_check(text, alphabet, file),
        }
        if file == "aa_star_h25.cr":
            fixed = text.replace("D = !pos_even && A", "D = (!pos_even) && A")
            with tempfile.NamedTemporaryFile("w", suffix=".cr", delete=False) as f:
                f.write(fixed)
            entry["parenthesized"] = compare(
                file,
                fixed,
                alphabet,
                reference_run(args.python, args.checkout, Path(f.name), words),
            )
            short = sorted({t["word"] for t in theirs if len(t["word"]) <= 4},
                           key=lambda w: (len(w), w))  # fmt: skip
            ours = from_text(text, alphabet=alphabet)
            by_word = {t["word"]: t["result"] for t in theirs}
            entry["accepted_short"] = {
                "hardsoft": [w for w in short if ours.run(w).accept],
                "coli-saar": [w for w in short if by_word[w]],
            }
        if file in ("copy4.cr", "increment.cr"):
            entry.update(short_words(file, alphabet))
        results[file] = entry
        print(file, json.dumps(entry["agreement"]), file=sys.stderr)
    env = environment("cpu")
    if args.write:
        args.write.write_text(render(results, env, commit))
    print(json.dumps({"env": env, "commit": commit, "results": results}, indent=1))


def render(results: dict, env: dict, commit: str) -> str:
    lines = [
        "# C-RASP: hardsoft against the coli-saar/c-rasp interpreter",
        "",
        "`python benchmarks/crasp_reference.py CHECKOUT --python /tmp/crasp-ref-venv/bin/python "
        "--write benchmarks/results/crasp_reference.md`",
        "",
        " | ".join(f"{k}: {v}" for k, v in env.items()) + f" | coli-saar/c-rasp: {commit[:12]}",
        "",
        "Every statement's value at every position, on every word up to length 7 (6 over three "
        "symbols) and 100 random words of lengths 1..40, by both interpreters; then each "
        "program compiled by hardsoft and every model checked against hardsoft's interpreter "
        "on the same lengths (the shared machine was busy; times are not comparable).",
        "",
        "| program | alphabet | words | positions | statements that differ | acceptance differs "
        "on | hard: layers/heads/params, mismatches | soft-temperature: layers/heads/params, "
        "mismatches |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for file, e in results.items():
        a = e["agreement"]
        cells = []
        for row in e["compiled"]:
            cells.append(
                f"{row['layers']}/{row['heads']}/{row['parameters']}, {row['mismatches']} in "
                f"{row['positions']:,} positions"
            )
        lines.append(
            f"| {file} | `{e['alphabet']}` | {a['words']} | {a['positions']:,} | "
            f"{', '.join(a['differing_statements']) or 'none'} | {a['acceptance_differs_on']} "
            f"words | {cells[0]} | {cells[1]} |"
        )
    aa = results.get("aa_star_h25.cr")
    if aa:
        p, agree = aa["parenthesized"], aa["agreement"]
        short = aa["accepted_short"]
        lines += [
            "",
            "## `aa_star_h25.cr`: precedence",
            "",
            "The file's last line is `D = !pos_even && A`. hardsoft reads it as "
            "`(!pos_even) && A` (`!` binds tightest), the intended (aa)*; coli-saar's ANTLR "
            "grammar lists `NOT bool_expr` after `&&` and `||`, so it reads "
            "`!(pos_even && A)`, which holds wherever `A` (only a's so far) fails.",
            "",
            f"- words of length ≤ 4 accepted by hardsoft: {', '.join(short['hardsoft']) or 'none'}",
            f"- accepted by coli-saar: {', '.join(short['coli-saar'])}",
            f"- statement `D` differs on {agree['acceptance_differs_on']} of {agree['words']} "
            f"words (first: {', '.join(agree['first_differing_words'])})",
            f"- with the line written `D = (!pos_even) && A`, the two interpreters agree on every "
            f"statement: differing statements {', '.join(p['differing_statements']) or 'none'}, "
            f"acceptance differs on {p['acceptance_differs_on']} words",
        ]  # fmt: skip
    for file in ("copy4.cr", "increment.cr"):
        e = results.get(file)
        if e:
            counts = ", ".join(f"{n}: {c}" for n, c in e["accepted_by_length"].items())
            lines += [
                "",
                f"## `{file}`: written for words of length 8",
                "",
                f"Accepted words per length (hardsoft's interpreter; coli-saar's agrees on "
                f"every word compared above): {counts}.",
                "",
                f"- at length 8, missing from the intended language: "
                f"{', '.join(e['at_8_missing']) or 'none'}; accepted beyond it: "
                f"{', '.join(e['at_8_extra']) or 'none'}",
                f"- at length 10 it accepts words outside the intended language, e.g. "
                f"{', '.join(e['at_10_examples']) or 'none'}",
            ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

"""``hardsoft language list|sample|member|dfa``: the formal languages, tasks and Hahn's
processes, and the DFA of a regular language as a DFA file."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import typer

from hardsoft import memory
from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    err_console,
    float_option,
    int_option,
    output_file_option,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError
from hardsoft.languages import (
    Language,
    get_language,
    get_process,
    is_process,
    language_names,
    process_names,
)

language_app = typer.Typer(
    help="Formal languages, per-position tasks and Hahn's §6 processes.",
    no_args_is_help=True,
)
app.add_typer(language_app, name="language")


@language_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """List the languages, tasks and processes (dyck<k> and khop<k> take any k >= 1)."""
    rows = []
    for name in language_names():
        lang = get_language(name)
        rows.append(
            {
                "name": name,
                "kind": lang.kind,
                "alphabet": "".join(lang.alphabet),
                "description": lang.description,
            }
        )
    for name in process_names():
        proc = get_process(name)
        rows.append(
            {
                "name": name,
                "kind": proc.kind,
                "alphabet": "".join(proc.alphabet),
                "description": f"{proc.description} (needs --p, {proc.p_range})",
            }
        )
    if as_json:
        print_json({"languages": rows})
        return
    for r in rows:
        console.print(
            f"{r['name']:<15} {r['kind']:<9} {r['alphabet']:<7} {r['description']}",
            soft_wrap=True,
            markup=False,
        )


@language_app.command("sample")
def sample_cmd(
    name: str = typer.Argument(..., metavar="NAME", help="A language, task or process name."),
    n: int = int_option(..., "--n", lo=0, help="String length (prefix length for a process)."),
    count: int = int_option(10, "--count", lo=0, help="How many strings."),
    p: float = float_option(None, "--p", help="Process parameter (processes only)."),
    half_members: bool = typer.Option(
        False,
        "--half-members",
        help="Half members, half near-miss non-members (languages only; not Dyck balance).",
    ),
    balanced: bool = typer.Option(
        False, "--balanced", hidden=True, help="Deprecated name of --half-members."
    ),
    uniform_negatives: bool = typer.Option(
        False,
        "--uniform-negatives",
        help="With --half-members: uniform non-members, not near misses.",
    ),
    min_length: int = int_option(
        None,
        "--min-length",
        lo=0,
        help="Process: condition on |X| >= this (default n; n+1 = strictly longer than n).",
    ),
    seed: int = seed_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Sample strings of length N: uniform (default), half members and half non-members
    (--half-members), or from a process.

    For a process (parity-process, dyck2-process) the strings are exact draws of the first N
    symbols of a string X conditioned on |X| >= N (or --min-length)."""
    # the words as Python strings and as int64 token rows, plus per-position targets/labels
    memory.require(count * (n + 64) * 24, f"sampling {count} strings of length {n}")
    deprecated, balanced = balanced, balanced or half_members
    rng = np.random.default_rng(seed)
    if is_process(name):
        if p is None:
            raise HardsoftError(f"{name} needs --p")
        if balanced:
            raise HardsoftError(f"{name} is a process: --half-members does not apply")
        _sample_process(name, p, n, count, min_length, seed, rng, as_json)
        return
    if p is not None:
        raise HardsoftError(f"--p applies to processes only ({', '.join(process_names())})")
    lang = get_language(name)
    if lang.kind == "task":
        if balanced:
            raise HardsoftError(
                f"{lang.name} is a task with per-position outputs: no --half-members"
            )
        _sample_task(lang, n, count, seed, rng, as_json)
        return
    if balanced:
        words, labels = lang.sample_balanced(n, count, rng, hard=not uniform_negatives)
    else:
        words = lang.sample_uniform(n, count, rng)
        labels = lang.members(words)
    if as_json:
        print_json(
            {
                "name": lang.name,
                "kind": "language",
                "n": n,
                "seed": seed,
                "half_members": balanced,
                "words": words,
                "labels": [bool(x) for x in labels],
            }
        )
    else:
        console.print("string\tmember", markup=False, highlight=False)
        for w, lab in zip(words, labels):
            console.print(f"{w}\t{int(lab)}", markup=False, highlight=False)
    if deprecated:  # after the output: an error stays the one line it must be
        err_console.print("note: --balanced is deprecated; it means --half-members")


def _sample_process(
    name: str,
    p: float,
    n: int,
    count: int,
    min_length: int | None,
    seed: int,
    rng: np.random.Generator,
    as_json: bool,
) -> None:
    """Exact draws of X_{1:n} given |X| >= min_length, with their log-probabilities (n <= 2000)."""
    proc = get_process(name, p)
    m = n if min_length is None else max(min_length, n)
    # the exact sampler keeps about sqrt(m) checkpoints of a length-m DP vector
    memory.require(8 * (math.isqrt(m) + 2) * (m + 2), f"the exact DP for length {m}")
    words = proc.sample_prefixes(n, count, rng, min_length=min_length)
    m = n if min_length is None else min_length
    logs = [proc.log_prefix_probability(w, m) for w in words] if n <= 2000 else None
    payload: dict[str, Any] = {
        "name": proc.name,
        "kind": "process",
        "p": proc.p,
        "n": n,
        "min_length": m,
        "seed": seed,
        "words": words,
    }
    if logs is not None:
        payload["log_probs"] = logs
    if as_json:
        print_json(payload)
        return
    for i, w in enumerate(words):
        extra = f"\tlogP={logs[i]:.4f}" if logs is not None else ""
        console.print(f"{w}{extra}", markup=False, highlight=False)


def _sample_task(
    lang: Language, n: int, count: int, seed: int, rng: np.random.Generator, as_json: bool
) -> None:
    """Uniform words of a task with their per-position targets."""
    words = lang.sample_uniform(n, count, rng)
    targets = [lang.prefix_reference(w).tolist() for w in words]
    if as_json:
        print_json(
            {
                "name": lang.name,
                "kind": "task",
                "n": n,
                "seed": seed,
                "words": words,
                "targets": targets,
            }
        )
        return
    console.print("string\ttarget per position", markup=False, highlight=False)
    for w, t in zip(words, targets):
        console.print(f"{w}\t{t}", markup=False, highlight=False)


@language_app.command("member")
def member_cmd(
    name: str = typer.Argument(..., metavar="NAME", help="A language name."),
    word: str = typer.Option(..., "--input", "-i", help="The string to test (may be empty)."),
    as_json: bool = typer.Option(False, "--json", help='Print {"member": bool}.'),
) -> None:
    """Is the --input string in language NAME? (JSON: exactly {"member": bool}.)"""
    if is_process(name):
        raise HardsoftError(f"{name} is a process, not a language: use e.g. parity-even or dyck2")
    lang = get_language(name)
    result = lang.member(word)
    if as_json:
        print_json({"member": bool(result)})
    else:
        console.print("member" if result else "not a member")


@language_app.command("dfa")
def dfa_cmd(
    name: str = typer.Argument(..., metavar="NAME", help="A regular language's name."),
    out: Path = output_file_option(
        "-o", "--out", required=False, help="Write the DFA file here (else print it)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The minimal DFA of a regular language, as a DFA file (the JSON of `atlas add-row
    --dfa`, docs/atlas.md): a second definition of the language beside its oracle, tested to
    agree with it. Languages that declare none (not regular, or tasks) are refused."""
    from hardsoft.model.io import atomic_write

    if is_process(name):
        raise HardsoftError(f"{name} is a process, not a language: use e.g. parity-even or dyck2")
    lang = get_language(name)
    dfa = lang.automaton()
    if dfa is None:
        raise HardsoftError(
            f"{lang.name} declares no DFA (not regular, or a task); languages with one: "
            + ", ".join(n for n in language_names() if get_language(n).automaton() is not None)
        )
    data = dfa.to_json()
    if out is not None:
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        atomic_write(Path(out), lambda tmp: Path(tmp).write_text(text), "-o")
    summary = {"name": lang.name, "states": dfa.n_states, "file": None if out is None else str(out)}
    if as_json:
        print_json({**summary, "dfa": data})
    elif out is not None:
        console.print(f"{lang.name}: minimal DFA, {dfa.n_states} states -> {out}")
    else:
        print(json.dumps(data, indent=1, ensure_ascii=False))

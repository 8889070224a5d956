"""``hardsoft agree`` (how often two models' declared readouts agree, by length) and the
``--trace`` / ``--plot`` additions of ``hardsoft run``: looking inside a model from the command
line (see :mod:`hardsoft.model.inspect`)."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from hardsoft import memory, validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    err_console,
    int_option,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError


def add_trace(
    model: Any, results: list[dict[str, Any]], trace: bool, plot: Path | None, quiet: bool
) -> None:
    """Per result: ``attention`` (with ``trace``), and a heat map per input (with ``plot``)."""
    from hardsoft.model.inspect import attention_summary, plot_attention

    words = [r["input"] for r in results]
    if any(not w for w in words):
        raise HardsoftError("--trace and --plot need non-empty inputs")
    if trace:
        for r in results:
            r["attention"] = attention_summary(model, r["input"])
    if plot is not None:  # every file name is checked before the first is written
        paths = [
            validate.output_file(
                plot if k == 0 else plot.with_name(f"{plot.stem}-{k + 1}{plot.suffix}"), "--plot"
            )
            for k in range(len(results))
        ]
        for r, path in zip(results, paths):
            r["plot"] = str(plot_attention(model, r["input"], path))
            if not quiet:
                err_console.print(f"wrote {path}", markup=False)


def _words(source: Any, alphabet: tuple[str, ...], n: int, count: int, seed: int) -> list[str]:
    """``count`` words of length ``n``: the language's sampler (members, perturbed members and
    random non-members, as the recognizer objective trains on) or uniform random words."""
    from hardsoft.learn.recognize import sample_strings

    rng = np.random.default_rng([seed, n])
    if source is None:
        codes = rng.integers(0, len(alphabet), size=(count, n))
        return ["".join(alphabet[c] for c in row) for row in codes]
    return sample_strings(source, n, count, rng)[0]


def _source(language: str | None, random_words: bool, model: Any) -> Any:
    """The language whose sampler gives the words (None: random words). Default: the language
    the first model was trained on, where it records one; random words otherwise."""
    from hardsoft.languages import get_language, get_process, is_process

    if language is not None and random_words:
        raise HardsoftError("give --language or --random, not both")
    if random_words:
        return None
    if language is None:
        config = (getattr(model, "meta", None) or {}).get("config") or {}
        language = config.get("language") if isinstance(config, dict) else None
        if not isinstance(language, str):
            return None
        if is_process(language):  # a process-trained model: the language its process stops in
            language = get_process(language).stops_in or language
    lang = get_language(language)
    if lang.kind != "language":
        raise HardsoftError(f"{lang.name} is a per-position task: use --random")
    extra = set(lang.alphabet) - set(model.spec.alphabet)
    if extra:
        raise HardsoftError(
            f"{lang.name} uses symbols the models do not read: {''.join(sorted(extra))!r}"
        )
    return lang


@app.command("agree")
def agree_cmd(
    a_path: Path = path_argument("A", "A .safetensors model file."),
    b_path: Path = path_argument("B", "Another model over the same alphabet (e.g. A hardened)."),
    lengths: str = typer.Option("8,64,512", "--lengths", help="Input lengths n."),
    language: str = typer.Option(
        None, "--language", help="Words from this language's sampler (default: A's language)."
    ),
    random_words: bool = typer.Option(False, "--random", help="Uniformly random words."),
    count: int = int_option(64, "--count", lo=1, help="Words per length."),
    seed: int = seed_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Per length, the fraction of positions and of strings where A and B agree: their declared
    acceptance readouts at every prefix position, and every output coordinate rounded by the
    readout (y > threshold; for an EOS readout softmax(y) > threshold). Words come from the
    language's sampler (about half members) or are uniformly random.

    A progress bar on stderr counts the words both models have read, when stderr is a
    terminal and without `--json`."""
    from hardsoft.cli.sensitivity_cmds import parse_lengths
    from hardsoft.model import load_model
    from hardsoft.model.inspect import agreement, check_same_alphabet

    a, b = load_model(a_path), load_model(b_path)
    check_same_alphabet(a, b)
    ns = parse_lengths(lengths, lo=1)
    for n in ns:  # the words and one forward pass per model, before anything is drawn
        for m in (a, b):
            need = count * n * 64 + memory.forward_bytes(m.spec, 1, n, m.W_E.element_size())
            memory.require(need, f"comparing the models on {count} words of length {n:,}")
    source = _source(language, random_words, a)
    rows = []
    shown = not as_json and err_console.is_terminal
    progress = Progress(
        TextColumn("agree n={task.fields[n]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("words"),
        TimeRemainingColumn(),
        console=err_console,
        disable=not shown,
        transient=True,
    )
    # not started when hidden: rich 13.0 (the floor) writes a newline to stderr when even a
    # disabled transient display stops
    with progress if shown else contextlib.nullcontext():
        task = progress.add_task("agree", total=count * len(ns), n=ns[0])
        for n in ns:
            progress.update(task, n=n)
            words = _words(source, tuple(a.spec.alphabet), n, count, seed)
            step = functools.partial(progress.advance, task)
            rows.append(agreement(a, b, words, progress=step).to_dict())
    result = {
        "a": str(a_path),
        "b": str(b_path),
        "words": "random" if source is None else f"language {source.name}",
        "rows": rows,
    }
    if as_json:
        print_json(result)
        return
    table = Table(title=f"agreement of {a_path.name} and {b_path.name} on {result['words']} words")
    for col in ("n", "strings", "accept: positions", "strings", "outputs: positions", "strings"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r["n"]),
            str(r["strings"]),
            f"{r['accept_positions']:.4f}",
            f"{r['accept_strings']:.4f}",
            "-" if r["outputs_positions"] is None else f"{r['outputs_positions']:.4f}",
            "-" if r["outputs_strings"] is None else f"{r['outputs_strings']:.4f}",
        )
    console.print(table)

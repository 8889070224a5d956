"""``hardsoft run`` and ``hardsoft random-model``: run a saved model, make a seeded random one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    chunk_arg,
    chunk_size_option,
    console,
    device_option,
    float_option,
    input_file_option,
    int_option,
    load_model,
    output_file_option,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.cli.run_options import (
    apply_dtype,
    dtype_option,
    run_streamed,
    stream_chunk,
    stream_chunk_option,
)
from hardsoft.errors import HardsoftError
from hardsoft.model import MASKS, WEIGHTINGS, Transformer, random_model, save_model
from hardsoft.model.readout import acceptance_of


def read_inputs(inputs: list[str] | None, input_file: Path | None) -> list[tuple[str, str]]:
    """Inputs from ``--input`` options and/or a UTF-8 file with one input per line (blank
    lines skipped), each with where it came from (``--input 2``, ``FILE line 7``) for errors.
    An empty ``--input`` is refused: the model has no position to read (no last position, so
    no acceptance either), as ``--stream`` refuses an empty file and ``--trace`` an empty
    input."""
    words = [(w, f"--input {k}") for k, w in enumerate(inputs or [], 1)]
    for w, where in words:
        if not w:
            raise HardsoftError(
                f"the empty word has no position to read ({where}): the model's outputs and "
                "acceptance are per position; give at least one symbol"
            )
    if input_file is not None:
        text = validate.read_text(input_file, "--input-file")
        for k, line in enumerate(text.splitlines(), 1):
            if line.strip():
                words.append((line.strip(), f"{str(input_file)!r} line {k}"))
    if not words:
        raise HardsoftError("no input: give --input STR or --input-file FILE")
    return words


def check_symbols(words: list[tuple[str, str]], alphabet: tuple[str, ...]) -> None:
    """Every symbol of every input is in ``alphabet``; the error names the input's origin
    (its line in the input file) and the position."""
    allowed = set(alphabet)
    for w, where in words:
        if set(w) <= allowed:  # one pass in C; the loop below only finds the position
            continue
        for i, a in enumerate(w):
            if a not in allowed:
                raise HardsoftError(
                    f"{where}: symbol {a!r} at position {i + 1} is not in the model's "
                    f"alphabet {''.join(alphabet)!r}"
                )


def symbols_read(out, names: list[str]) -> list[str | None]:
    """Per position, the name of the one output that is 1 (> 1/2), or None."""
    on = out > 0.5
    return [names[int(row.argmax())] if int(row.sum()) == 1 else None for row in on]


def _format_value(v: float) -> str:
    return f"{v:.6g}" if v != int(v) else str(int(v))


def _print_result(r: dict) -> None:
    """One input as a table: a row per output, a column per position."""
    cells = [[_format_value(v) for v in row] for row in r["outputs"]]
    syms = [str(x or "?") for x in r.get("symbols", [])]
    width = max(
        [len(c) for row in cells for c in row] + [len(x) for x in syms] + [len(str(len(cells)))]
    )
    label = max(len(nm) for nm in r["output_names"]) + 1
    label = max(label, len("position"))
    console.print(f"input {r['input']!r}: accept={r['accept']}", markup=False)
    console.print(
        f"  {'position':<{label}} " + " ".join(f"{k:>{width}}" for k in range(1, len(cells) + 1)),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"  {'input':<{label}} " + " ".join(f"{ch:>{width}}" for ch in r["input"]),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for k, name in enumerate(r["output_names"]):
        row = " ".join(f"{row[k]:>{width}}" for row in cells)
        console.print(f"  {name:<{label}} {row}", markup=False, highlight=False, soft_wrap=True)
    if "symbols" in r:
        shown = " ".join(f"{x:>{width}}" for x in syms)
        console.print(f"  {'symbol':<{label}} {shown}", markup=False, highlight=False)


def _check_run_options(stream: bool, trace: bool, plot: Path | None, out: Path | None) -> None:
    """Options that only one mode of ``run`` reads are refused in the other, rather than
    silently ignored (a user asking for a trace or a file must get it or be told); ``-o``
    writes what its suffix says, and nothing under a name that says something else."""
    if stream and (trace or plot is not None):
        raise HardsoftError("--trace and --plot do not apply with --stream (use --input)")
    if out is None:
        return
    suffix = out.suffix.lower()
    if stream and suffix not in (".npy", ".jsonl"):
        raise HardsoftError(
            f"-o {str(out)!r}: with --stream, -o writes a .npy array or .jsonl JSON Lines; "
            "name the file so"
        )
    if not stream and suffix != ".npy":
        raise HardsoftError(f"-o {str(out)!r}: run -o writes a .npy array; name the file .npy")
    if trace or plot is not None:
        raise HardsoftError("--trace and --plot print per input; -o writes only the outputs")
    validate.output_file(out, "-o")  # before the run, not after it


def _write_outputs(path: Path, outputs: list[np.ndarray]) -> tuple[int, ...]:
    """The per-position outputs as one ``.npy`` array, atomically: ``[n, d_out]`` for one
    input, ``[B, n, d_out]`` for several inputs of one length; returns the shape."""
    from hardsoft.model.io import atomic_write

    if len({len(o) for o in outputs}) > 1:
        raise HardsoftError(
            "-o writes one array: give inputs of one length (or one input), or use --json"
        )
    arr = outputs[0] if len(outputs) == 1 else np.stack(outputs)

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            np.save(f, arr)

    atomic_write(path, write, "-o")
    return tuple(arr.shape)


def _slow_head_reporter(model: Any, pending: dict[str, str | None]) -> Any:
    """Say on stderr, once per head, why a head of a long input runs the all-pairs path, and
    how far it got every 10 s (a float32 run at n = 10⁶ once ran 21 min in silence). A
    ``pending["warning"]`` (the float limit) is said first, not after minutes, and cleared."""
    import time

    from hardsoft.cli.common import err_console
    from hardsoft.model.fastpath import head_names

    names = head_names(model)
    told: set[int] = set()
    last = [time.monotonic()]

    def report(head: Any, why: str, done: int, n: int) -> None:
        if n < SLOW_NOTE_N:
            return
        if id(head) not in told:
            told.add(id(head))
            if pending.get("warning"):
                err_console.print(f"warning: {pending.pop('warning')}", soft_wrap=True)
            err_console.print(
                f"note: head {names.get(id(head), '?')} runs the all-pairs (chunked) path, "
                f"time O(n^2) at n = {n:,}: no fast path applies ({why})",
                soft_wrap=True,
            )
        if time.monotonic() - last[0] >= 10 or done == n:
            last[0] = time.monotonic()
            err_console.print(f"  {names.get(id(head), '?')}: {done:,}/{n:,} query positions")

    return report


SLOW_NOTE_N = 8192
"""From this length on, a head on the all-pairs path is reported (time O(n²))."""


@app.command("run")
def run_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model file."),
    inputs: list[str] = typer.Option(None, "--input", "-i", help="An input string (repeatable)."),
    input_file: Path = input_file_option(),
    chunk_size: int = chunk_size_option(),
    device: str = device_option(),
    dense: bool = typer.Option(
        False, "--dense", help="Dense reference attention in every head (no fast paths)."
    ),
    trace: bool = typer.Option(
        False, "--trace", help="Per head and position: the most attended position and its weight."
    ),
    plot: Path = output_file_option(
        "--plot",
        required=False,
        suffix=".png",
        help="Write a heat map per head of each input's attention (PNG).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    stream: bool = typer.Option(
        False, "--stream", help="Read one long input from --input-file in chunks (docs/model.md)."
    ),
    chunk: int | None = stream_chunk_option(),
    npy_out: Path = typer.Option(
        None,
        "-o",
        "--out",
        help="Write the per-position outputs to OUT.npy (one input, or inputs of one length: "
        "[n, d_out] or [B, n, d_out]); with --stream also OUT.jsonl (JSON Lines).",
    ),
    dtype: str = dtype_option(),
) -> None:
    """Run MODEL on each input: every output at every position, and acceptance (the model's
    declared readout of the last position; by default output coordinate 0 > 1/2).

    `--json`: `{"results": [{"input", "output_names", "outputs", "accept"}], "attention_paths"}`,
    where `outputs` has one list per position with one value per output, in the order of
    `output_names` (the model's names; unnamed outputs are called out0, out1, ...), also for a
    model with one output. A model whose outputs are named by symbols (and `none`), such as the
    logic route's induction heads, also gets `symbols`: per position the name of the one output
    that is 1, or null when not exactly one is. `attention_paths`: per input length, the
    attention path each head took — heads with structure run a fast path with the same outputs
    (docs/model.md, "Fast paths"); `--dense` runs the dense reference in every head.

    `-o OUT.npy`: the outputs as a numpy array instead of printed (no text to format or parse);
    the summary (`--json`: `{"inputs": [{"n", "accept"}], "output", "shape", ...}`) is printed.

    A compiled model run past its certificate's float limit for the dtype (`float_limits`,
    e.g. n <= 547 for compiled PARITY in float32; a compiled program's, derived per model;
    every float32 run where it is 0), or past the length a bounded model was compiled for
    (`--max-len`), warns on stderr (after the run, or before a long all-pairs run's first
    progress line; with `--stream`, after the first chunk); `--json` has `precision`
    (`dtype`, `certified_max_n`, `length_bound`, `beyond_limit`, `warning`). A head
    of a long input that no fast path fits says so on stderr, with why and its progress.

    `--stream`: one input of any length, read from --input-file in chunks of --chunk positions
    (n is the file's size without a trailing newline), memory O(chunk) for causal models:
    JSON Lines `{"position", "outputs"}` then `{"summary"}` on stdout, or `-o OUT.npy` /
    `-o OUT.jsonl`.


    `--trace` adds, per input, each head's attention (`attention`: per head the most attended
    position of every position, 1-based, and its weight); `--plot FILE.png` draws it as a heat
    map per head (FILE-2.png ... for further inputs)."""
    from hardsoft.model.precision import precision_report
    from hardsoft.model.readout import output_names

    _check_run_options(stream, trace, plot, npy_out)
    positions = stream_chunk(stream, chunk, dense, chunk_size)
    validate.protect_inputs(
        {"MODEL": model_path, "--input-file": input_file}, {"-o": npy_out, "--plot": plot}
    )
    model = apply_dtype(load_model(model_path, device=device), dtype)
    if stream:
        return run_streamed(model, inputs, input_file, positions, npy_out, as_json)
    sourced = read_inputs(inputs, input_file)
    check_symbols(sourced, model.spec.alphabet)
    words = [w for w, _ in sourced]
    names = list(output_names(model))
    precision = precision_report(model.meta, model.dtype, max(len(w) for w in words))
    outputs, paths, seconds = _run_all(model, words, chunk_arg(chunk_size), dense, precision)
    readout = acceptance_of(model)
    accepts = [bool(readout.accept(torch.as_tensor(o[-1], device="cpu"))) for o in outputs]
    if npy_out is not None:
        ran = {"seconds": seconds, "attention_paths": paths, "precision": precision}
        summary = _written(npy_out, words, outputs, accepts, names, ran)
        return _print_written(summary, accepts, as_json)
    results = _results(model, words, outputs, accepts, names)
    if trace or plot is not None:
        from hardsoft.cli.inspect_cmds import add_trace

        add_trace(model, results, trace, plot, as_json)
    if as_json:
        print_json({"results": results, "attention_paths": paths, "precision": precision})
        return
    _print_results(model, results, trace)


def _run_all(
    model: Transformer, words: list[str], chunk: int | str | None, dense: bool, precision: dict
) -> tuple[list, dict[str, dict[str, str]], float]:
    """Every word's outputs (grouped by length), each length's attention paths, the seconds
    taken; the precision warning is said before a long run (its first progress line) or
    after it, so that a refused request stays one line."""
    import time

    from hardsoft.cli.common import err_console
    from hardsoft.model.fastpath import fast_paths, head_paths, report_slow_heads

    outputs: list = [None] * len(words)
    paths: dict[str, dict[str, str]] = {}
    started = time.perf_counter()
    pending = {"warning": precision["warning"]}  # said before a long run, else after it
    with (
        fast_paths("off" if dense else "auto"),
        report_slow_heads(_slow_head_reporter(model, pending)),
    ):
        for n in sorted({len(w) for w in words}):
            idx = [i for i, w in enumerate(words) if len(w) == n]
            for i, out in zip(idx, model.run_words([words[i] for i in idx], chunk_size=chunk)):
                outputs[i] = out
            paths[str(n)] = head_paths(model)
    seconds = round(time.perf_counter() - started, 3)
    if pending.get("warning"):  # after the run: a refused request stays one line
        err_console.print(f"warning: {pending['warning']}", soft_wrap=True)
    return outputs, paths, seconds


def _written(
    npy_out: Path, words: list[str], outputs: list, accepts: list[bool], names: list[str], ran: dict
) -> dict[str, Any]:
    """``run -o OUT.npy``: write the outputs; the summary printed instead of them (``ran``:
    the run's seconds, attention paths and precision)."""
    return {
        "inputs": [{"n": len(w), "accept": a} for w, a in zip(words, accepts)],
        "output_names": names,
        "output": str(npy_out),
        "shape": list(_write_outputs(npy_out, outputs)),
        "dtype": str(outputs[0].dtype),
        **ran,
    }


def _print_written(summary: dict, accepts: list[bool], as_json: bool) -> None:
    """``run -o OUT.npy``: the summary, as JSON or one line."""
    if as_json:
        print_json(summary)
        return
    console.print(
        f"wrote {summary['output']}: shape {tuple(summary['shape'])} "
        f"({', '.join(summary['output_names'])}), {summary['dtype']}, in {summary['seconds']} s; "
        "accept=" + ",".join(str(a) for a in accepts),
        markup=False,
        soft_wrap=True,
    )


def _results(
    model: Transformer, words: list[str], outputs: list, accepts: list[bool], names: list[str]
) -> list[dict[str, Any]]:
    """Per word, what ``run --json`` prints: the outputs, acceptance, and for models that have
    them the symbols read and a compiled program's decoded values."""
    from hardsoft.check import is_symbol_valued
    from hardsoft.cli.source_cmds import decoded

    results: list[dict[str, Any]] = []
    for w, out, accept in zip(words, outputs, accepts):
        results.append({"input": w, "output_names": names, "outputs": out, "accept": accept})
        if is_symbol_valued(names, model.spec.alphabet):
            results[-1]["symbols"] = symbols_read(out, names)
        values_read = decoded(model, out)  # a compiled program: its outputs read as values
        if values_read is not None:
            results[-1]["decoded"] = values_read
    return results


def _print_results(model: Transformer, results: list[dict[str, Any]], trace: bool) -> None:
    """``run``'s text output: each result, decoded values, and the attention summary."""
    for r in results:
        _print_result(r)
        if "decoded" in r:
            from hardsoft.cli.source_cmds import print_decoded

            print_decoded(model, r["decoded"])
        if trace:
            from hardsoft.model.inspect import format_summary

            for line in format_summary(r["attention"]):
                console.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command("random-model")
def random_model_cmd(
    out: Path = output_file_option(help="Where to write the .safetensors file."),
    weighting: str = typer.Option("softmax", help=f"One of {', '.join(WEIGHTINGS)}."),
    mask: str = typer.Option("none", help=f"One of {', '.join(MASKS)}."),
    layers: int = int_option(2, "--layers", lo=0),
    heads: int = int_option(2, "--heads", lo=0),
    d_model: int = int_option(16, "--d-model", lo=1),
    d_ff: int = int_option(None, "--d-ff", lo=0, help="Default 2*d_model."),
    alphabet: str = typer.Option("01", help="The symbols, as one string (no repeats)."),
    tau: str = typer.Option(
        None, help="Softmax temperature as an expression in n (finite and positive for all n)."
    ),
    features: str = typer.Option(
        "1,i/n,(-1)^i,[i=1],[i=n]", help="Comma-separated position features."
    ),
    layer_norm: str = typer.Option("none", "--layer-norm", help="none, pre or post."),
    weight_scale: float = float_option(
        1.0, "--weight-scale", lo=0.0, help="Standard deviation scale (finite, >= 0)."
    ),
    seed: int = seed_option(),
    float64: bool = typer.Option(True, "--float64/--float32"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write a seeded random model (for tests and for the limits engines)."""
    model = random_model(
        alphabet=tuple(alphabet),
        layers=layers,
        heads=heads,
        d_model=d_model,
        d_ff=d_ff,
        weighting=weighting,
        mask=mask,
        tau=tau,
        position_features=tuple(f.strip() for f in features.split(",") if f.strip()),
        layer_norm=layer_norm,
        weight_scale=weight_scale,
        seed=seed,
        dtype=torch.float64 if float64 else torch.float32,
    )
    save_model(model, out)
    info = {
        "path": str(out),
        "name": model.spec.name,
        "parameters": model.parameter_count(),
        "bounded_positions": model.spec.bounded_positions,
        "spec": model.spec.to_dict(),
    }
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {out} ({info['name']}, {info['parameters']} parameters)")

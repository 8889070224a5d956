"""Options shared by ``run``, ``check`` and ``compile``: ``--dtype`` (the float format the model
computes in), ``run --stream`` and ``check --stream`` (one long input read in chunks:
:mod:`hardsoft.stream`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
import typer

from hardsoft.cli.common import console, expand_named, formula_options, print_json
from hardsoft.errors import HardsoftError

DTYPES = {"float32": torch.float32, "float64": torch.float64}
PROGRESS_EVERY = 10.0
"""Seconds between progress lines (stderr) of a streamed run that writes a file."""


def dtype_option() -> Any:
    """``--dtype float32|float64``: cast the model's weights (and so its computation)."""
    return typer.Option(
        None,
        "--dtype",
        help="Compute in float32 or float64 (default: the model's own). Compiled models are "
        "exact up to the certificate's float_limits for that format (docs/compiler.md).",
    )


def stream_chunk_option() -> Any:
    """``--chunk N``: positions per chunk, with ``--stream`` only."""
    from hardsoft.cli.common import int_option

    return int_option(
        None, "--chunk", lo=1, help="Positions per chunk with --stream (default 65,536)."
    )


def stream_chunk(stream: bool, chunk: int | None, dense: bool, chunk_size: int | None) -> int:
    """The positions per chunk of a streamed run; options that only the other mode reads are
    refused, not silently ignored: ``--dense`` (the dense reference cannot stream),
    ``--chunk-size`` (the attention block size of a whole-input run) with ``--stream``, and
    ``--chunk`` without it."""
    from hardsoft.stream import DEFAULT_CHUNK

    if not stream:
        if chunk is not None:
            raise HardsoftError("--chunk sets the chunks of --stream; without --stream use "
                                "--chunk-size (the attention block size)")  # fmt: skip
        return DEFAULT_CHUNK
    if dense:
        raise HardsoftError("--dense runs the dense reference attention, which does not "
                            "stream; drop --dense or --stream")  # fmt: skip
    if chunk_size is not None:
        raise HardsoftError("--chunk-size is the attention block size of a whole-input run; "
                            "with --stream the chunks are --chunk positions")  # fmt: skip
    return DEFAULT_CHUNK if chunk is None else chunk


def apply_dtype(model: Any, dtype: str | None) -> Any:
    """``model`` cast to ``dtype`` (None: unchanged); a bad name is a one-line error."""
    if dtype is None:
        return model
    if dtype not in DTYPES:
        raise HardsoftError(f"--dtype must be float32 or float64, not {dtype!r}")
    return model.to(DTYPES[dtype])


def _jsonl(start: int, rows: torch.Tensor) -> str:
    """One JSON line per position: ``{"position": i, "outputs": [...]}`` (1-based i)."""
    values = rows.detach().cpu().tolist()
    return "".join(
        f'{{"position": {start + k + 1}, "outputs": {json.dumps(v)}}}\n'
        for k, v in enumerate(values)
    )


def run_streamed(
    model: Any,
    inputs: list[str] | None,
    input_file: Path | None,
    chunk: int,
    out: Path | None,
    as_json: bool,
) -> None:
    """``hardsoft run --stream``: outputs per position as JSON Lines on stdout (then a
    ``{"summary": ...}`` line), or into ``out`` (``.npy``, or ``.jsonl``: the same lines) with
    a summary printed. Past the model's certified float limit it warns first (stderr); on a
    long input it shows its progress (stderr, every 10 s). A pipe (``/dev/stdin``) is read
    too (:func:`hardsoft.stream.seekable_input`)."""
    from hardsoft.cli.common import err_console
    from hardsoft.stream import seekable_input

    if inputs or input_file is None:
        raise HardsoftError("--stream reads one input from --input-file (not --input)")
    if chunk < 1:
        raise HardsoftError(f"--chunk must be >= 1, not {chunk}")
    with seekable_input(input_file, model.spec.alphabet, err_console.print) as path:
        _run_stream(model, path, input_file, chunk, out, as_json)


def _run_stream(
    model: Any, path: Path, input_file: Path, chunk: int, out: Path | None, as_json: bool
) -> None:
    """The body of :func:`run_streamed` on the regular file ``path``."""
    from hardsoft.cli.common import err_console
    from hardsoft.model.precision import precision_report
    from hardsoft.model.readout import acceptance_of
    from hardsoft.stream import JsonlWriter, NpyWriter, Stream, read_chunks

    n, chunks = read_chunks(path, model.spec.alphabet, chunk, input_file)
    precision = precision_report(model.meta, model.dtype, n)
    stream = Stream(model, n)
    writer: Any = None
    if out is not None and out.suffix.lower() == ".jsonl":
        writer = JsonlWriter(out, _jsonl)
    elif out is not None:
        writer = NpyWriter(out, n, model.spec.d_out, model.dtype)
    started, last, ok = time.perf_counter(), None, False
    shown = started
    try:
        for ids in chunks:
            start = stream.pos
            rows = stream.feed(torch.from_numpy(ids))
            if writer is not None:
                writer.write(rows, start)
            else:
                sys.stdout.write(_jsonl(start, rows))
            if last is None and precision["warning"]:  # once the first chunk streamed
                err_console.print(f"warning: {precision['warning']}", soft_wrap=True)
            last = rows[-1]
            if out is not None and time.perf_counter() - shown >= PROGRESS_EVERY:
                shown = time.perf_counter()
                err_console.print(
                    f"  {stream.pos:,}/{n:,} positions ({100 * stream.pos / n:.0f} %), "
                    f"{shown - started:.0f} s"
                )
        ok = True
    finally:
        if writer is not None:
            writer.close(ok)
    assert last is not None
    summary = {
        "n": n,
        "accept": bool(acceptance_of(model).accept(last)),
        "attention_paths": stream.paths,
        "chunk": chunk,
        "dtype": str(model.dtype).removeprefix("torch."),
        "seconds": round(time.perf_counter() - started, 3),
        "output": None if out is None else str(out),
        "precision": precision,
    }
    if out is None:
        sys.stdout.write(json.dumps({"summary": summary}) + "\n")
    elif as_json:
        print_json(summary)
    else:
        console.print(
            f"wrote {out}: {n} positions x {model.spec.d_out} outputs in {summary['seconds']} s; "
            f"accept={summary['accept']}; paths "
            + ", ".join(f"{k}={v}" for k, v in stream.paths.items()),
            markup=False,
            soft_wrap=True,
        )


def check_streamed(
    model: Any,
    model_path: Path,
    formulas: list[str] | None,
    language: str | None,
    input_file: Path | None,
    chunk: int,
    as_json: bool,
    stream: bool = True,
) -> None:
    """``hardsoft check --stream``: the model and a past-only formula streamed side by side
    over one input file (:func:`hardsoft.stream.check_stream`); exit 1 on a mismatch."""
    from hardsoft.cli.common import err_console
    from hardsoft.logic import parse
    from hardsoft.model.precision import precision_report
    from hardsoft.stream import check_stream, file_length, seekable_input

    if not stream:
        raise HardsoftError("check reads --input-file only with --stream")
    if input_file is None:
        raise HardsoftError("--stream reads one input from --input-file")
    if not formulas or language is not None:
        raise HardsoftError("--stream checks against one --formula (not --language)")
    given = expand_named(formula_options(formulas, tuple(model.spec.output_names)))
    if not isinstance(given, str):
        raise HardsoftError("--stream checks one formula against the model's readout")
    formula = parse(given, alphabet=model.spec.alphabet)
    with seekable_input(input_file, model.spec.alphabet, err_console.print) as path:
        precision = precision_report(model.meta, model.dtype, file_length(path))
        report = check_stream(model, formula, path, chunk, input_file)
    report["precision"] = precision
    if precision["warning"]:  # after the run: a refused request stays one line
        err_console.print(f"warning: {precision['warning']}", soft_wrap=True)
    report["reference"] = {"formula": given}
    report["model"] = str(model_path)
    if as_json:
        print_json(report)
    else:
        console.print(
            f"checked {report['checked_positions']} positions in {report['seconds']} s "
            f"(chunks of {chunk}): {report['mismatched_positions']} mismatching positions"
            + (
                ""
                if report["max_abs_error"] is None
                else f", max |output - reference| = {report['max_abs_error']:.3g}"
            ),
            markup=False,
            soft_wrap=True,
        )
        fm = report["first_mismatch"]
        if fm:
            console.print(
                f"first mismatch at position {fm['position']}: expected {fm['expected']}, "
                f"got {fm['got']} (output {fm['output']:.6g})",
                markup=False,
            )
    if report["mismatched_positions"]:
        raise typer.Exit(1)

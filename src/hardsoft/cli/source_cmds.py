"""RASP programs at the command line: ``hardsoft check MODEL --program FILE.py[:NAME]`` (a
RASP model may be exact only up to a bound, and a RASP value may be undefined: its own
reference, :mod:`hardsoft.programs.check_source`), and the decoded values ``hardsoft run``
prints for a compiled program (counts carried as count/n, say). ``program run`` and
``program compile`` of every notation are in :mod:`hardsoft.cli.program_cmds`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import typer

from hardsoft.cli.common import (
    console,
    err_console,
    past_limit_note,
    precision_line,
    print_json,
    refuse_empty_check,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.precision import precision_report
from hardsoft.model.transformer import Transformer


def _load(file: str, vocab: str | None) -> Any:
    from hardsoft.programs.source import load_program

    if not file:
        raise HardsoftError("give the program file: FILE.py[:NAME]")
    return load_program(Path(file), alphabet=vocab)


def check_source(
    model: Transformer,
    model_path: Path,
    file: str,
    *,
    vocab: str | None,
    exhaustive_max_n: int,
    random_n: list[int],
    samples: int,
    seed: int,
    as_json: bool,
) -> None:
    """``check MODEL --program FILE``: every output against the program's interpreter."""
    from hardsoft.check import hard_lengths
    from hardsoft.programs.check_source import check_program

    given = vocab
    if given is None:
        prog_meta = model.meta.get("program") or {}
        symbols = list((prog_meta.get("vocab") or {}).keys())
        values = list((prog_meta.get("vocab") or {}).values())
        given = "".join(symbols) if symbols == values else None
    program = _load(file, given)
    certified = precision_report(model.meta, model.dtype, 1)["certified_max_n"]
    report = check_program(
        model,
        program,
        exhaustive_max_n=exhaustive_max_n,
        random_n=random_n,
        hard_n=hard_lengths(random_n, certified),
        samples=samples,
        seed=seed,
        progress=None if as_json else (lambda msg: err_console.print(msg)),
    )
    report["model"] = str(model_path)
    report["reference"] = {"program": file}
    report["precision"] = precision_report(model.meta, model.dtype, max(report["max_n"], 1))
    refuse_empty_check(report, _nothing_checked(report))
    if report["precision"]["warning"]:
        err_console.print(f"warning: {report['precision']['warning']}", soft_wrap=True)
    if as_json:
        print_json(report)
    else:
        extra = (
            f", {report['undefined_strings']} where the program is undefined"
            if report["undefined_strings"]
            else ""
        )
        console.print(
            f"checked {report['checked_strings']} strings ({report['checked_positions']} "
            f"positions), lengths up to {report['max_n']}: {report['mismatches']} mismatching "
            f"strings{extra}, max |output - reference| = {report['max_abs_error']:.3g}",
            markup=False,
        )
        line = precision_line(report["precision"])
        if line:
            console.print(line, markup=False)
        if report["skipped_lengths"]:
            console.print(
                f"skipped lengths {report['skipped_lengths']}: the model is exact for n <= "
                f"{report['max_len']} only",
                markup=False,
            )
        fm = report["first_mismatch"]
        if fm:
            word = fm["word"] if len(fm["word"]) <= 80 else fm["word"][:77] + "..."
            console.print(
                f"first mismatch: {word!r} (n = {fm['n']}) at position {fm['position']}, "
                f"output {fm['output']}: expected {fm['expected']!r}, got {fm['got']!r} "
                f"(raw {fm['raw']:.6g})" + past_limit_note(fm["n"], report["precision"]),
                markup=False,
            )
    if report["mismatches"]:
        raise typer.Exit(1)


def _nothing_checked(report: dict[str, Any]) -> str:
    """Why a program check compared no position."""
    if report["undefined_strings"]:
        return f"the program is undefined on all {report['undefined_strings']} words"
    if report["max_len"] is not None:
        return (
            f"the model is exact only for n <= {report['max_len']} (its meta['program']"
            "['max_len']) and no word that short was asked for"
        )
    return "no length to check (--exhaustive-max-n 0 and no --random-n)"


def decoded(model: Transformer, out: np.ndarray) -> dict[str, list[Any]] | None:
    """A compiled program's outputs as values (counts carried as count/n decoded), by output
    name; None for other models."""
    from hardsoft.programs.readout import decode_one

    prog = model.meta.get("program")
    if not isinstance(prog, dict) or not isinstance(prog.get("outputs"), list):
        return None
    n = len(out)
    return {
        e["name"]: [decode_one(e, float(out[i, k]), i + 1, n) for i in range(n)]
        for k, e in enumerate(prog["outputs"])
    }


def print_decoded(model: Transformer, values: dict[str, list[Any]]) -> None:
    """The rows of outputs carried in another unit, decoded (``hist (count/n)``)."""
    prog = model.meta["program"]
    for e in prog["outputs"]:
        if e.get("unit"):
            row = " ".join(str(v) for v in values[e["name"]])
            console.print(
                f"  {e['name']} (decoded from {e['unit']}): {row}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

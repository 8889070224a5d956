"""Programs from files: ``hardsoft program compile FILE``, ``hardsoft program run FILE``,
``hardsoft check MODEL --program FILE`` and the decoded values ``hardsoft run`` prints for a
compiled program. ``FILE`` is ``FILE.py[:NAME]`` (RASP; loading runs the file), dispatched
on its suffix by :func:`hardsoft.programs.source.load_program`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import typer

from hardsoft.cli.common import console, err_console, print_json
from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer


def _load(file: str, vocab: str | None) -> Any:
    from hardsoft.programs.source import load_program

    if not file:
        raise HardsoftError("give the program file: FILE.py[:NAME]")
    return load_program(Path(file), alphabet=vocab)


def compile_source(
    file: str,
    *,
    vocab: str | None,
    target: str | None,
    max_len: int | None,
    output: Path | None,
    outputs: list[str] | None,
    masks: str | None,
    as_json: bool,
) -> None:
    """``program compile FILE.py[:NAME] --vocab V --target T [--max-len N] -o MODEL``."""
    from hardsoft.model.io import save_model

    program = _load(file, vocab)
    if output is None:
        raise HardsoftError("give the output file with -o FILE")
    model = program.compile(
        target or "soft-temperature", masks=masks or "strict", outputs=outputs, max_len=max_len
    )
    save_model(model, output)
    summary = compile_summary(model, file, output)
    if as_json:
        print_json(summary)
    else:
        print_compile_summary(summary)


def compile_summary(model: Transformer, file: str, output: Path) -> dict[str, Any]:
    cert = model.meta.get("certificate", {})
    prog = model.meta["program"]
    return {
        "program": prog["name"],
        "file": file,
        "notation": prog["notation"],
        "target": model.meta.get("target"),
        "output": str(output),
        "vocab": prog.get("vocab"),
        "output_names": list(model.spec.output_names),
        "outputs": prog["outputs"],
        "layers": len(model.spec.layers),
        "heads": sum(len(layer.heads) for layer in model.spec.layers),
        "width": model.spec.d_model,
        "parameters": model.parameter_count(),
        "length_general": cert.get("length_general"),
        "exact_for": cert.get("exact_for"),
        "bounded_because": cert.get("bounded_because", []),
        "certificate": cert,
    }


def _carried(entry: dict[str, Any]) -> str:
    enc = entry["encoding"]
    if enc == "onehot":
        return "1 where the value is " + repr(entry["value"])
    if enc == "bool":
        return "1 for true"
    unit = entry.get("unit")
    return f"a count carried as {unit}" if unit else f"the value (read: {entry['read']})"


def print_compile_summary(s: dict[str, Any]) -> None:
    c = s["certificate"]
    print_ = console.print
    print_(
        f"{s['file']} -> {s['output']} ({s['notation']}, {s['target']}): exact for "
        f"{s['exact_for']}; {s['layers']} layers, {s['heads']} heads, width {s['width']}, "
        f"{s['parameters']} parameters",
        markup=False,
        soft_wrap=True,
    )
    for b in s["bounded_because"]:
        print_(f"  bounded: {b['statement']} {b['text']}", markup=False, soft_wrap=True)
    for d in c.get("domain", []):
        print_(f"  domain: {d['statement']} {d['text']}", markup=False, soft_wrap=True)
    shown = s["outputs"][:12]
    print_("outputs:", markup=False)
    for e in shown:
        print_(f"  {e['name']}: {_carried(e)}", markup=False, soft_wrap=True)
    if len(s["outputs"]) > len(shown):
        print_(f"  ... ({len(s['outputs']) - len(shown)} more)", markup=False)
    if "tau" in c:
        how = (
            "(only uniform heads: softmax equals the average-hard model at every temperature)"
            if c["tau"] == "1"
            else f"(Yang et al. (2026) Theorem 26, ε = {c['eps']:.3g})"
        )
        print_(f"certificate: τ(n) = {c['tau']} {how}", markup=False, soft_wrap=True)
        for n, v in c.get("values", {}).items():
            print_(f"  n = {n:>5}: γ = {v['gamma']:.3g}, τ = {v['tau']:.3g}", markup=False)


def run_source(
    file: str,
    *,
    vocab: str | None,
    inputs: list[str] | None,
    input_file: Path | None,
    as_json: bool,
) -> None:
    """``program run FILE.py[:NAME] --input W``: every statement's values (the interpreter)."""
    from hardsoft.cli.model_cmds import read_inputs

    program = _load(file, vocab)
    results = []
    for word, _ in read_inputs(inputs, input_file):
        run = program.run(word)
        results.append({"input": word, "values": run.values, "accept": run.accept})
    values = getattr(program, "vocab", None)
    mapping = (
        {s: v for s, v in zip(program.alphabet, values)}
        if values is not None and tuple(values) != tuple(program.alphabet)
        else None
    )
    if as_json:
        print_json(
            {
                "program": program.name,
                "notation": program.notation.value,
                "statements": list(program.statements),
                **({"vocab": mapping} if mapping else {}),
                "results": results,
            }
        )
        return
    if mapping:
        shown = ", ".join(f"{s}={v!r}" for s, v in mapping.items())
        console.print(f"symbols: {shown}", markup=False, soft_wrap=True)
    for r in results:
        console.print(f"input {r['input']!r}: accept={r['accept']}", markup=False)
        width = max(len(nm) for nm in r["values"])
        for nm, vals in r["values"].items():
            row = " ".join(_show(v) for v in vals)
            console.print(f"  {nm:<{width}} {row}", markup=False, highlight=False, soft_wrap=True)


def _show(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


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
    from hardsoft.programs.check_source import check_program

    given = vocab
    if given is None:
        prog_meta = model.meta.get("program") or {}
        symbols = list((prog_meta.get("vocab") or {}).keys())
        values = list((prog_meta.get("vocab") or {}).values())
        given = "".join(symbols) if symbols == values else None
    program = _load(file, given)
    report = check_program(
        model,
        program,
        exhaustive_max_n=exhaustive_max_n,
        random_n=random_n,
        samples=samples,
        seed=seed,
        progress=None if as_json else (lambda msg: err_console.print(msg)),
    )
    report["model"] = str(model_path)
    report["reference"] = {"program": file}
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
        if report["skipped_lengths"]:
            console.print(
                f"skipped lengths {report['skipped_lengths']}: the model is exact for n <= "
                f"{report['max_len']} only",
                markup=False,
            )
        fm = report["first_mismatch"]
        if fm:
            console.print(
                f"first mismatch: {fm['word']!r} (n = {fm['n']}) at position {fm['position']}, "
                f"output {fm['output']}: expected {fm['expected']!r}, got {fm['got']!r} "
                f"(raw {fm['raw']:.6g})",
                markup=False,
            )
    if report["mismatches"]:
        raise typer.Exit(1)


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

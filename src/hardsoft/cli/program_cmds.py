"""``hardsoft program list`` and ``hardsoft program NAME [--k K] [--route R] --target T -o FILE``:
the §6 tasks of Yang, Strobl, Chiang & Angluin (TACL 2026) by two routes — ``tieless``
(average-hard programs converted to softmax by their Theorem 26) and ``logic`` (temporal-logic
formulas with named outputs, compiled by the logic compiler, cf. their Corollary 17).

``hardsoft program compile FILE`` and ``hardsoft program run FILE`` take a program file
(``FILE.py[:NAME]``, RASP): :mod:`hardsoft.cli.source_cmds`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    float_option,
    input_file_option,
    int_option,
    output_file_option,
    print_json,
)
from hardsoft.errors import HardsoftError


def _list(as_json: bool) -> None:
    from hardsoft.programs.library import PROGRAM_ROUTES, PROGRAMS

    rows: list[dict[str, Any]] = [
        {"name": nm, "description": desc, "k": list(ks), "routes": list(PROGRAM_ROUTES[nm])}
        for nm, (desc, _, ks) in PROGRAMS.items()
    ]
    if as_json:
        print_json({"programs": rows})
        return
    for r in rows:
        ks = f" (--k {'/'.join(map(str, r['k']))})" if r["k"] else ""
        routes = f" [routes: {', '.join(r['routes'])}]"
        console.print(
            f"{r['name']:<15} {r['description']}{ks}{routes}", markup=False, soft_wrap=True
        )


def _summary(built, target: str, output: Path) -> dict:
    """The JSON summary of a built program (both routes share the keys they both have)."""
    summary = {
        "program": built.name,
        "route": built.route,
        "target": target,
        "output": str(output),
        "alphabet": "".join(built.model.spec.alphabet),
        "output_names": list(built.model.spec.output_names),
        **built.sizes,
        "certificate": built.certificate,
    }
    if built.route == "tieless":
        b = built.built
        summary["uniform_tieless"] = b.report.uniform_tieless
        summary["gap"] = b.compiled.program.gap
        summary["gamma_measured"] = b.report.to_dict()["gamma_measured"]
    else:
        from hardsoft.programs.routes import compact_text

        summary["definition"] = built.certificate["definition"]
        summary["formulas"] = {nm: compact_text(str(f)) for nm, f in built.formulas.items()}
    return summary


def _print_summary(summary: dict) -> None:
    s, c = summary, summary["certificate"]
    how = (
        f"uniform-tieless, gap γ(n) = {s['gap']}"
        if s["route"] == "tieless"
        else f"outputs {', '.join(s['output_names'])}"
    )
    console.print(
        f"{s['program']} -> {s['output']} ({s['route']} route, {s['target']}): {s['layers']} "
        f"layers, {s['heads']} heads, width {s['width']}, {s['parameters']} parameters; {how}",
        markup=False,
        soft_wrap=True,
    )
    if "definition" in s:
        console.print(f"  {s['definition']}", markup=False, soft_wrap=True)
    if not c or not c.get("values"):
        return
    extra = f"  (ε = {c['eps']})" if "eps" in c else f"  ({c.get('tau_order', '')})"
    console.print(f"certificate: τ(n) = {c['tau']}{extra}", markup=False, soft_wrap=True)
    for n, v in c["values"].items():
        gamma = f"γ = {v['gamma']:.3g}, " if "gamma" in v else ""
        console.print(f"  n = {n:>5}: {gamma}τ = {v['tau']:.3g}", markup=False)


@app.command("program")
def program_cmd(
    name: str = typer.Argument(
        ...,
        help="'list', a program (induction-head, khop, flipflop, dyck), or 'compile' / 'run' "
        "followed by a program file FILE.py[:NAME].",
    ),
    file: str = typer.Argument(None, help="compile / run: the program file FILE.py[:NAME]."),
    k: int | None = int_option(
        None, "--k", lo=1, help="khop: the number of hops; dyck: the number of bracket types (1-3)."
    ),
    route: str = typer.Option(
        "tieless",
        "--route",
        help="tieless (AHAT program + Theorem 26) or logic (named LTL outputs, cf. Corollary 17).",
    ),
    target: str | None = typer.Option(
        None,
        "--target",
        help="tieless: average-hard (default) | soft-temperature; "
        "logic: hard (default) | soft-temperature | soft-pe.",
    ),
    output: Path | None = output_file_option(
        "-o", "--output", required=False, help="Write the model here."
    ),
    eps: float = float_option(
        0.25,
        "--eps",
        help="tieless: target output error (0 < eps < 1/2) of the bound.",
    ),
    n: int = int_option(1000, "--n", lo=1, help="logic: length at which bounds are evaluated."),
    masks: str | None = typer.Option(
        None,
        "--masks",
        help="logic: strict (default) or nonstrict (only the masks none, j <= i, j >= i).",
    ),
    vocab: str = typer.Option(
        None, "--vocab", help="compile / run: the vocabulary, a string of symbols."
    ),
    max_len: int = int_option(
        None,
        "--max-len",
        lo=1,
        help="compile: build a model exact for n <= N where the program needs a bound.",
    ),
    statements: list[str] = typer.Option(
        None, "--statement", help="compile: output this statement (repeatable; default the last)."
    ),
    inputs: list[str] = typer.Option(None, "--input", "-i", help="run: an input (repeatable)."),
    input_file: Path = input_file_option(help="run: a file with one input per line."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build a §6 task model by one of two routes (or list the programs with NAME = list).

    `program compile FILE.py[:NAME] --vocab SYMBOLS --target average-hard|hard|soft-temperature
    [--max-len N] -o MODEL` compiles a RASP program (NAME defaults to `program`; loading a .py
    file runs it) to one model, exact at every length or, with --max-len, for n <= N where the
    program needs a bound (docs/rasp.md). `program run FILE --input W` prints every statement's
    values (the interpreter, Tracr's semantics)."""
    if name in ("compile", "run"):
        return _source(
            name,
            file,
            vocab,
            target,
            max_len,
            output,
            statements,
            masks,
            inputs,
            input_file,
            as_json,
        )
    given = [
        opt
        for opt, v in (
            ("FILE", file),
            ("--vocab", vocab),
            ("--max-len", max_len),
            ("--statement", statements),
            ("--input", inputs),
            ("--input-file", input_file),
        )
        if v
    ]
    if given:
        raise HardsoftError(f"{given[0]} is for `program compile|run FILE`, not {name!r}")
    if name == "list":
        _list(as_json)
        return
    from hardsoft.model.io import save_model
    from hardsoft.programs.routes import ROUTE_TARGETS, ROUTES, build, check_route

    if route not in ROUTES:
        raise HardsoftError(f"unknown route {route!r} (one of {', '.join(ROUTES)})")
    target = target or ROUTE_TARGETS[route][0]
    check_route(name, route, target)
    if output is None:
        raise HardsoftError("give the output file with -o FILE")
    if n < 1:
        raise HardsoftError("--n must be >= 1")
    built = build(name, k, target, route=route, eps=eps, n=n, masks=masks)
    save_model(built.model, output)
    summary = _summary(built, target, output)
    if as_json:
        print_json(summary)
    else:
        _print_summary(summary)


def _source(
    action: str,
    file: str | None,
    vocab: str | None,
    target: str | None,
    max_len: int | None,
    output: Path | None,
    statements: list[str] | None,
    masks: str | None,
    inputs: list[str] | None,
    input_file: Path | None,
    as_json: bool,
) -> None:
    from hardsoft.cli.source_cmds import compile_source, run_source

    if not file:
        raise HardsoftError(f"give the program file: hardsoft program {action} FILE.py[:NAME]")
    if action == "compile":
        if inputs or input_file:
            raise HardsoftError("--input is for `program run`")
        compile_source(
            file,
            vocab=vocab,
            target=target,
            max_len=max_len,
            output=output,
            outputs=statements,
            masks=masks,
            as_json=as_json,
        )
        return
    extra = [
        opt
        for opt, v in (
            ("--target", target),
            ("--max-len", max_len),
            ("-o", output),
            ("--statement", statements),
            ("--masks", masks),
        )
        if v
    ]
    if extra:
        raise HardsoftError(f"{extra[0]} is for `program compile`, not `program run`")
    run_source(file, vocab=vocab, inputs=inputs, input_file=input_file, as_json=as_json)

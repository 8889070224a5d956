"""``hardsoft program``: programs, built in and in the papers' own notations.

- ``program list``: the built-in §6 tasks and the shipped example program files;
- ``program NAME [--k K] [--route R] --target T -o FILE``: the §6 tasks of Yang, Strobl,
  Chiang & Angluin (TACL 2026) by two routes — ``tieless`` (average-hard programs converted to
  softmax by their Theorem 26) and ``logic`` (temporal-logic formulas with named outputs,
  compiled by the logic compiler, cf. their Corollary 17);
- ``program run FILE --input W ...``: a program file (``.cr`` C-RASP, ``.brasp`` B-RASP,
  ``FILE.py:NAME`` RASP) by its notation's plain interpreter, with ``--trace OUT.html``;
- ``program compile FILE --target T -o MODEL``: the file compiled, with its certificate.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    float_option,
    int_option,
    output_file_option,
    print_json,
)
from hardsoft.errors import HardsoftError

BUILTIN = "builtin"
"""The hidden command that builds a §6 task: ``program NAME ...`` is routed to it."""


class _ProgramGroup(TyperGroup):
    """``program list|run|compile ...``; any other first word is a built-in task's name
    (``program dyck --k 2 ...``), handled by the hidden :data:`BUILTIN` command."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return BUILTIN, self.commands[BUILTIN], args
        return super().resolve_command(ctx, args)


program_app = typer.Typer(
    cls=_ProgramGroup,
    no_args_is_help=True,
    help="Programs: the built-in §6 tasks (`program list`; `program NAME [--k K] --target T "
    "-o FILE`) and programs in the papers' notations: `program run FILE --input W` (C-RASP "
    ".cr, B-RASP .brasp, RASP FILE.py:NAME; @NAME for a shipped example) and `program "
    "compile FILE --target T -o MODEL`. See docs/programs.md.",
)
app.add_typer(program_app, name="program")


def _list_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from hardsoft.programs.ahat.library import LAYERNORM_PROGRAMS, PROGRAM_ROUTES, PROGRAMS
    from hardsoft.programs.source import example_programs, load_program

    rows: list[dict[str, Any]] = [
        {"name": nm, "description": desc, "k": list(ks), "routes": list(PROGRAM_ROUTES[nm])}
        for nm, (desc, _, ks) in PROGRAMS.items()
    ]
    rows += [
        {"name": nm, "description": desc, "k": [], "routes": list(PROGRAM_ROUTES[nm])}
        for nm, desc in LAYERNORM_PROGRAMS.items()
    ]
    files: list[dict[str, Any]] = []
    for e in example_programs():  # a RASP file holds several programs: @FILE:NAME
        row: dict[str, Any] = {
            "name": e.name,
            "file": e.file.path.name,
            "notation": e.file.notation.value,
            "available": e.file.available,
        }
        if e.file.available:
            prog = load_program(e.path)
            row.update(alphabet="".join(prog.alphabet), statements=list(prog.statements))
        files.append(row)
    return rows, files


def _statements(k: int) -> str:
    return f"{k} statement{'s' if k != 1 else ''}"


@program_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """The built-in §6 tasks, and the shipped example program files (`@NAME` in `program
    run/compile` and `check --program`) with their notation."""
    from hardsoft.programs.source import Notation

    rows, files = _list_rows()
    if as_json:
        print_json({"programs": rows, "files": files})
        return
    for r in rows:
        ks = f" (--k {'/'.join(map(str, r['k']))})" if r["k"] else ""
        routes = f" [routes: {', '.join(r['routes'])}]"
        console.print(
            f"{r['name']:<15} {r['description']}{ks}{routes}", markup=False, soft_wrap=True
        )
    console.print("\nexample programs (program run/compile FILE, check --program FILE):")
    width = max([15, *(len(f["name"]) for f in files)])
    for f in files:
        notation = Notation(f["notation"]).display
        if not f["available"]:
            console.print(f"{f['name']:<{width}} {notation}: notation not available", markup=False)
            continue
        console.print(
            f"{f['name']:<{width}} {notation}, alphabet {f['alphabet']!r}, "
            f"{_statements(len(f['statements']))}, output {f['statements'][-1]}",
            markup=False,
            soft_wrap=True,
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
    elif built.formulas is not None:  # the logic route
        from hardsoft.programs.compiled import compact_text

        summary["definition"] = built.certificate["definition"]
        summary["formulas"] = {nm: compact_text(str(f)) for nm, f in built.formulas.items()}
    return summary


def _print_float_limits(cert: dict) -> None:
    """One line: up to where the certificate proves the model exact in each float format."""
    fl = cert.get("float_limits") if isinstance(cert, dict) else None
    if not isinstance(fl, dict):
        return
    parts = [
        f"{fmt} n <= {fl[fmt]:,}" if fl.get(fmt) else f"{fmt} no length"
        for fmt in ("float64", "float32")
        if fmt in fl and fl[fmt] is not None
    ]
    if parts:
        console.print(
            f"  float limits (rounding cannot change an output): {', '.join(parts)}",
            markup=False,
            soft_wrap=True,
        )


def _print_summary(summary: dict) -> None:
    s, c = summary, summary["certificate"]
    if s["route"] == "tieless":
        how = f"uniform-tieless, gap γ(n) = {s['gap']}"
    elif "layer_norm" in (c or {}):
        how = f"read at the last position; {c['theorem']}"
    else:
        how = f"outputs {', '.join(s['output_names'])}"
    console.print(
        f"{s['program']} -> {s['output']} ({s['route']} route, {s['target']}): {s['layers']} "
        f"layers, {s['heads']} heads, width {s['width']}, {s['parameters']} parameters; {how}",
        markup=False,
        soft_wrap=True,
    )
    if "definition" in s:
        console.print(f"  {s['definition']}", markup=False, soft_wrap=True)
    if c and "layer_norm" in c:
        from hardsoft.cli.compile_cmds import print_layer_norm

        print_layer_norm(c)
        _print_float_limits(c)
        return
    if c and c.get("values"):
        extra = f"  (ε = {c['eps']})" if "eps" in c else f"  ({c.get('tau_order', '')})"
        console.print(f"certificate: τ(n) = {c['tau']}{extra}", markup=False, soft_wrap=True)
        for n, v in c["values"].items():
            gamma = f"γ = {v['gamma']:.3g}, " if "gamma" in v else ""
            console.print(f"  n = {n:>5}: {gamma}τ = {v['tau']:.3g}", markup=False)
    _print_float_limits(c or {})


@program_app.command(BUILTIN, hidden=True)
def program_cmd(
    name: str = typer.Argument(
        ..., help="A built-in task: induction-head, khop, flipflop, dyck, parity."
    ),
    k: int | None = int_option(
        None, "--k", lo=1, help="khop: the number of hops; dyck: the number of bracket types (1-3)."
    ),
    route: str | None = typer.Option(
        None,
        "--route",
        help="tieless (AHAT program + Theorem 26; the default), logic (named LTL outputs, cf. "
        "Corollary 17) or layernorm (parity: Chiang & Cholak 2022; its only route).",
    ),
    target: str | None = typer.Option(
        None,
        "--target",
        help="tieless: average-hard (default) | soft-temperature; "
        "logic: hard (default) | soft-temperature | soft-pe; layernorm: soft-ln.",
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
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build a §6 task model by one of two routes (`program NAME ...`)."""
    from hardsoft.model.io import save_model
    from hardsoft.programs.ahat.library import PROGRAM_ROUTES
    from hardsoft.programs.ahat.routes import ROUTE_TARGETS, ROUTES, build, check_route

    route = route or PROGRAM_ROUTES.get(name, ROUTES)[0]
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


# ------------------------------------------------------------------ program files

FILE_HELP = (
    "A program file: .cr (C-RASP), .brasp (B-RASP) or FILE.py:NAME (RASP); @NAME is a "
    "shipped example (program list)."
)


def program_path(file: str) -> Path:
    """The file a program argument names (``@NAME`` resolved, ``:NAME`` dropped)."""
    from hardsoft.programs.source import program_file

    return program_file(file)


def _alphabet_option() -> Any:
    return typer.Option(
        None,
        "--alphabet",
        "-a",
        "--vocab",
        help="The symbols, as one string (--vocab: Tracr's name for it). Default: the "
        "program's own (a C-RASP file's '// alphabet:' comment, else the symbols it mentions; "
        "a RASP file's `vocab`).",
    )


@program_app.command("run")
def run_cmd(
    file: str = typer.Argument(..., metavar="FILE", help=FILE_HELP),
    inputs: list[str] = typer.Option(
        None, "--input", "-i", help="An input word (repeat the option for several)."
    ),
    alphabet: str = _alphabet_option(),
    trace: Path | None = output_file_option(
        "--trace",
        required=False,
        suffix=".html",
        help="Write the grid of statements × positions of every input as an HTML page.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run the program's plain interpreter (independent of the compiler) on every --input:
    every statement's value at every position, and accept = the last statement at the last
    position. `--json` prints {"results": [{"input", "accept", "values": {NAME: [...]}}]}."""
    from hardsoft.model.io import atomic_write
    from hardsoft.programs.source import load_program, require_symbols
    from hardsoft.programs.trace import trace_html, trace_text

    if not inputs:
        raise HardsoftError("give at least one --input WORD")
    validate.protect_inputs({"FILE": program_path(file)}, {"--trace": trace})
    program = load_program(file, alphabet=alphabet)
    for k, w in enumerate(inputs, 1):  # refused as `hardsoft run` refuses it for the model
        require_symbols(w, program.alphabet, f"--input {k}")
    runs = [program.run(w) for w in inputs]
    if trace is not None:
        page = trace_html(program, runs, source=str(file))
        atomic_write(trace, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    if as_json:
        out: dict[str, Any] = {
            "program": program.name,
            "notation": program.notation.value,
            "statements": list(program.statements),
            "results": [r.to_dict() for r in runs],
        }
        if trace is not None:
            out["trace"] = str(trace)
        print_json(out)
        return
    console.print(
        f"program: {program.name} ({program.notation.display}, {len(program.statements)} "
        f"statements, alphabet {''.join(program.alphabet)!r})",
        markup=False,
        soft_wrap=True,
    )
    for r in runs:
        console.print("", markup=False)
        for line in trace_text(program, r):
            console.print(line, markup=False, soft_wrap=True)
    if trace is not None:
        console.print(f"\ntrace: {trace}", markup=False)


def _compile_summary(program: Any, model: Any, target: str, masks: str, out: Path) -> dict:
    from hardsoft.programs.compiled import model_sizes

    meta = model.meta
    summary = {
        "program": program.name,
        "notation": program.notation.value,
        "target": target,
        "masks": masks,
        "output": str(out),
        "alphabet": "".join(model.spec.alphabet),
        "output_names": list(model.spec.output_names),
        "outputs": meta["program"]["outputs"],
        **model_sizes(model),
        "formulas": meta.get("formulas", {}),
        "certificate": meta.get("certificate"),
        "causal": bool(meta["program"].get("causal")),
    }
    cert = meta.get("certificate") or {}
    if "exact_for" in cert:  # RASP: length-general, or bounded with the reason
        summary["length_general"] = cert.get("length_general")
        summary["exact_for"] = cert["exact_for"]
        summary["bounded_because"] = cert.get("bounded_because", [])
    return summary


def _print_compiled(s: dict) -> None:
    console.print(
        f"{s['program']} ({s['notation']}) -> {s['output']} ({s['target']}, {s['masks']} "
        f"masks): {s['layers']} layers, {s['heads']} heads, width {s['width']}, "
        f"{s['parameters']} parameters",
        markup=False,
        soft_wrap=True,
    )
    if "exact_for" in s:
        console.print(f"  exact for {s['exact_for']}", markup=False, soft_wrap=True)
        for b in s["bounded_because"]:
            console.print(f"  bounded: {b['statement']} {b['text']}", markup=False, soft_wrap=True)
    for o in s["outputs"]:
        formula = s["formulas"].get(o["name"])
        shown = f" = {formula}" if formula else ""
        unit = f" (carried as {o['unit']}; `run` prints it decoded)" if o.get("unit") else ""
        console.print(f"  output {o['name']}{shown}{unit}", markup=False, soft_wrap=True)
    c = s["certificate"] or {}
    if c.get("theorem"):
        console.print(f"certificate: {c['theorem']}", markup=False, soft_wrap=True)
    _print_float_limits(c)
    if "layer_norm" in c:  # soft-ln: τ = 1, the margin and ε instead of a temperature
        from hardsoft.cli.compile_cmds import print_layer_norm

        print_layer_norm(c)
        return
    if isinstance(c.get("tau"), list):  # the compiler's certificate (B-RASP): τ per head group
        _print_head_taus(c)
    elif c.get("values"):
        how = c.get("tau_order") or (f"ε = {c['eps']}" if "eps" in c else "")
        order = f"  ({how})" if how else ""
        console.print(f"  τ(n) = {c['tau']}{order}", markup=False, soft_wrap=True)
        for n, v in c["values"].items():
            console.print(f"  n = {n:>5}: τ = {v['tau']:.3g}", markup=False)
    elif c:
        console.print("  hard attention: exact by construction (no temperature)", markup=False)


def _print_head_taus(c: dict) -> None:
    """τ(n) of each group of softmax heads, its values, and the proven error bound."""
    from hardsoft.model import eval_tau

    if not c["tau"]:
        what = c.get("tau_order") or "no temperature"
        exact = ", exact by construction" if c.get("exact_by_construction") else ""
        console.print(f"certificate: {what}{exact}", markup=False, soft_wrap=True)
    else:
        console.print(f"certificate: τ(n) by head ({c.get('tau_order', '')})", markup=False)
    for t in c["tau"]:
        values = ", ".join(
            f"τ({n}) = {float(eval_tau(t['expression'], n)):.3g}" for n in (10, 100, 1000, 5000)
        )
        heads = f"{t['heads']} head{'s' if t['heads'] != 1 else ''}"
        console.print(
            f"  τ(n) = {t['expression']} on {heads}: {values}", markup=False, soft_wrap=True
        )
    if "max_error_bound" in c and not c.get("exact_by_construction"):
        console.print(
            f"  proven error of every head's read at n = {c.get('n')}: at most "
            f"{c['max_error_bound']:.3g} (docs/programs.md: within 0.3 every statement is exact)",
            markup=False,
            soft_wrap=True,
        )


@program_app.command("compile")
def compile_cmd(
    file: str = typer.Argument(..., metavar="FILE", help=FILE_HELP),
    target: str | None = typer.Option(
        None,
        "--target",
        help="hard | soft-temperature (τ(n)) | soft-pe (τ = 1) for C-RASP and B-RASP (default "
        "hard), and soft-ln (layer norm with ε = 0, τ = 1) for C-RASP; average-hard | "
        "soft-temperature | hard for RASP (default soft-temperature).",
    ),
    masks: str = typer.Option(
        "strict", "--masks", help="strict (any mask) or nonstrict (only none, j <= i, j >= i)."
    ),
    outputs: list[str] = typer.Option(
        None,
        "--output",
        help="A statement to output (repeat for several; output k is the k-th). Default: the "
        "last statement.",
    ),
    alphabet: str = _alphabet_option(),
    max_len: int | None = int_option(
        None,
        "--max-len",
        lo=1,
        help="RASP: build a model exact for n <= N where the program needs a bound (the "
        "certificate names the operation); without it such a program is refused. C-RASP and "
        "B-RASP models work at every length: there, the n at which the certificate evaluates "
        "τ(n) and its error bounds (default 1000).",
    ),
    causal: bool = typer.Option(
        False,
        "--causal",
        help="RASP: Tracr's causal semantics (causal_eval: every selector ANDed with j <= i); "
        "every head attends only to j <= i.",
    ),
    out: Path = output_file_option("-o", required=True, help="Write the model here."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Compile a program file into a transformer, exact at every position of every input
    (the certificate says why); output 0 is the last statement unless --output names others.
    The model carries the certificate and meta["program"] (the source and how each output
    carries its statement), so `check MODEL --program FILE` compares it with the
    interpreter."""
    from hardsoft.model.io import save_model
    from hardsoft.programs.source import DEFAULT_TARGETS, load_program

    validate.protect_inputs({"FILE": program_path(file)}, {"-o": out})
    program = load_program(file, alphabet=alphabet)
    if causal:
        from hardsoft.programs.rasp.load import RaspProgram

        if not isinstance(program, RaspProgram):
            raise HardsoftError(f"--causal is for RASP programs, not {program.notation.value}")
        program = dataclasses.replace(program, causal=True)
    target = target or DEFAULT_TARGETS[program.notation]
    model = program.compile(target, masks=masks, outputs=outputs or None, max_len=max_len)
    save_model(model, out)
    summary = _compile_summary(program, model, target, masks, out)
    if as_json:
        print_json(summary)
    else:
        _print_compiled(summary)

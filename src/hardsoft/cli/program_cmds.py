"""``hardsoft program list`` and ``hardsoft program NAME [--k K] --target T -o FILE``: the
average-hard attention programs of Yang et al. (2026) §6, compiled to an AHAT or to its softmax
simulation with a certified temperature τ(n)."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft.cli import app
from hardsoft.cli.common import console, float_option, int_option, output_file_option, print_json
from hardsoft.errors import HardsoftError


@app.command("program")
def program_cmd(
    name: str = typer.Argument(
        ..., help="'list', or a program: induction-head, khop, flipflop, dyck."
    ),
    k: int | None = int_option(
        None, "--k", lo=1, help="khop: the number of hops; dyck: the number of bracket types (1-3)."
    ),
    target: str = typer.Option(
        "average-hard", "--target", help="average-hard (the AHAT) or soft-temperature."
    ),
    output: Path | None = output_file_option(
        "-o", "--output", required=False, help="Write the model here."
    ),
    eps: float = float_option(
        0.25,
        "--eps",
        lo=0.0,
        hi=0.5,
        lo_open=True,
        hi_open=True,
        help="Target output error (0 < eps < 1/2) of the bound.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build a shipped AHAT program (or list them with NAME = list)."""
    from hardsoft.programs.library import PROGRAMS

    if name == "list":
        rows = [
            {"name": nm, "description": desc, "k": list(ks)}
            for nm, (desc, _, ks) in PROGRAMS.items()
        ]
        if as_json:
            print_json({"programs": rows})
        else:
            for r in rows:
                ks = f" (--k {'/'.join(map(str, r['k']))})" if r["k"] else ""
                console.print(f"{r['name']:<15} {r['description']}{ks}", markup=False)
        return
    from hardsoft.model.io import save_model
    from hardsoft.programs.build import TARGETS, build

    if target not in TARGETS:
        raise HardsoftError(f"unknown target {target!r} (one of {', '.join(TARGETS)})")
    if output is None:
        raise HardsoftError("give the output file with -o FILE")
    built = build(name, k, target, eps=eps)
    save_model(built.model, output)
    spec = built.model.spec
    summary = {
        "program": built.compiled.program.name,
        "target": target,
        "output": str(output),
        "alphabet": "".join(spec.alphabet),
        "layers": len(spec.layers),
        "heads": sum(len(layer.heads) for layer in spec.layers),
        "width": spec.d_model,
        "uniform_tieless": built.report.uniform_tieless,
        "gap": built.compiled.program.gap,
        "gamma_measured": built.report.to_dict()["gamma_measured"],
        "certificate": built.certificate,
    }
    if as_json:
        print_json(summary)
        return
    console.print(
        f"{summary['program']} -> {output} ({target}): {summary['layers']} layers, "
        f"{summary['heads']} heads, width {summary['width']}; uniform-tieless, gap γ(n) = "
        f"{summary['gap']}",
        markup=False,
    )
    if built.certificate:
        c = built.certificate
        console.print(f"certificate: τ(n) = {c['tau']}  (ε = {c['eps']})", markup=False)
        for n, v in c["values"].items():
            console.print(f"  n = {n:>5}: γ = {v['gamma']:.3g}, τ = {v['tau']:.3g}", markup=False)

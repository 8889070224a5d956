"""``hardsoft compile``: compile a formula into a transformer and print its certificate."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import console, int_option, output_file_option, print_json
from hardsoft.errors import HardsoftError


def _resolve_formula(text: str, alphabet: str | None) -> tuple[str, str]:
    """A formula text and its alphabet: ``text`` itself, or a named formula (``@name`` or a
    plain library name) whose alphabet is the default."""
    from hardsoft.logic import FORMULAS

    name = text[1:] if text.startswith("@") else text
    if name in FORMULAS:
        entry = FORMULAS[name]
        return entry.text, "".join(validate.alphabet(alphabet or entry.alphabet, "--alphabet"))
    if text.startswith("@"):
        raise HardsoftError(f"unknown named formula {name!r} (known: {', '.join(FORMULAS)})")
    if not alphabet:
        raise HardsoftError("give the alphabet with --alphabet (e.g. --alphabet 01)")
    return text, "".join(validate.alphabet(alphabet, "--alphabet"))


def print_certificate(cert: dict) -> None:
    """A human-readable summary of a certificate."""
    console.print(f"formula    {cert['formula']}   ({cert['fragment']})")
    console.print(
        f"target     {cert['target']}{' (causal: future masks only)' if cert['causal'] else ''}"
        f"   masks: {', '.join(cert['masks']) or '-'}"
    )
    console.print(
        f"size       {cert['layers']} layers, {cert['heads_total']} heads, residual width "
        f"{cert['residual_width']}, {cert['parameters']} parameters "
        f"({cert['distinct_nodes']} distinct nodes, formula size {cert['formula_size']})"
    )
    feats = ", ".join(
        f"{f['name']}{'' if f['bounded'] else ' (unbounded)'}" for f in cert["position_features"]
    )
    console.print(f"features   {feats}")
    if cert["tau"]:
        for t in cert["tau"]:
            console.print(
                f"tau(n)     {t['expression']} = {t['value_at_n']:.3g} at n = {cert['n']} "
                f"({t['heads']} heads)"
            )
    console.print(f"order      {cert['tau_order']}")
    console.print(
        f"error      max proven head error {cert['max_error_bound']:.3g} "
        f"< rounding margin {cert['rounding_margin']:.3g}: {cert['bounds_below_margin']}"
    )


@app.command("compile")
def compile_cmd(
    formula: str = typer.Argument(
        ..., help="A formula, e.g. \"MOD(2, 1)(#<['1'])\", or a named formula such as parity-mod."
    ),
    alphabet: str = typer.Option(None, "--alphabet", "-a", help="The input alphabet, e.g. 01."),
    target: str = typer.Option("hard", "--target", "-t", help="hard | soft-temperature | soft-pe."),
    causal: bool = typer.Option(False, "--causal", help="Future masks only (past fragment)."),
    out: Path = output_file_option(required=False, help="Write the model (.safetensors)."),
    n: int = int_option(1000, "--n", lo=1, help="Length at which to evaluate tau(n) and bounds."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Compile FORMULA into a transformer whose output is the formula's value (exactly 0/1) at
    every position; print the certificate (features, tau(n), error bounds, size)."""
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    text, alpha = _resolve_formula(formula, alphabet)
    model = compile_formula(text, alpha, target=target, causal=causal, n=n)
    cert = model.meta["certificate"]
    if out is not None:
        save_model(model, out)
    if as_json:
        print_json({"certificate": cert, "output": str(out) if out is not None else None})
        return
    print_certificate(cert)
    if out is not None:
        console.print(f"wrote      {out}")

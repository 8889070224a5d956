"""``hardsoft compile``: compile a formula into a transformer and print its certificate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import console, int_option, output_file_option, print_json
from hardsoft.cli.run_options import apply_dtype, dtype_option
from hardsoft.errors import HardsoftError

if TYPE_CHECKING:
    from hardsoft.compile.compiler import FormulaInput


def _resolve_formula(
    text: str, alphabet: str | None, need_alphabet: bool = True
) -> tuple[str, str]:
    """A formula text and its alphabet: ``text`` itself, or a named formula ``@name`` whose
    alphabet is the default. A plain name is formula text, as ``eval`` and ``check`` read it
    (``first`` is the keyword, not the named formula ``@first``): compile-then-check of one
    text checks what was compiled."""
    from hardsoft.logic import FORMULAS, parse

    if text.startswith("@"):
        name = text[1:]
        if name not in FORMULAS:
            raise HardsoftError(f"unknown named formula {name!r} (known: {', '.join(FORMULAS)})")
        entry = FORMULAS[name]
        return entry.text, "".join(validate.alphabet(alphabet or entry.alphabet, "--alphabet"))
    if text in FORMULAS:
        try:
            parse(text)
        except HardsoftError:
            raise HardsoftError(
                f"{text!r} is not a formula; the named formula is written @{text}"
            ) from None
    if not alphabet and need_alphabet:
        raise HardsoftError("give the alphabet with --alphabet (e.g. --alphabet 01)")
    return text, "".join(validate.alphabet(alphabet, "--alphabet")) if alphabet else ""


def parse_outputs(specs: list[str], alphabet: str | None) -> tuple[list[tuple[str, str]], str]:
    """``--output NAME=FORMULA`` options as ``(name, formula text)`` pairs and the alphabet
    (a named formula's when ``--alphabet`` is not given and every output names the same one).
    An empty or repeated name is a one-line error (checked again by the compiler)."""
    pairs: list[tuple[str, str]] = []
    alphabets = set()
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep:
            raise HardsoftError(f"--output expects NAME=FORMULA, got {spec!r}")
        name = name.strip()
        if not name:
            raise HardsoftError(f"--output {spec!r}: the output name is empty")
        if any(name == other for other, _ in pairs):
            raise HardsoftError(f"--output: the output name {name!r} is given twice")
        text, alpha = _resolve_formula(text.strip(), alphabet, need_alphabet=False)
        if alpha:
            alphabets.add(alpha)
        pairs.append((name, text))
    if alphabet:
        return pairs, "".join(validate.alphabet(alphabet, "--alphabet"))
    if len(alphabets) != 1:
        raise HardsoftError("give the alphabet with --alphabet (e.g. --alphabet 01)")
    return pairs, alphabets.pop()


def print_certificate(cert: dict) -> None:
    """A human-readable summary of a certificate."""
    console.print(f"formula    {cert['formula']}   ({cert['fragment']})")
    if len(cert.get("outputs", [])) > 1 or (cert.get("outputs") and cert["outputs"][0]["name"]):
        for o in cert["outputs"]:
            console.print(f"output {o['output_coordinate']}   {o['name']} = {o['formula']}")
    console.print(
        f"target     {cert['target']}{' (causal: future masks only)' if cert['causal'] else ''}"
        f"   --masks {cert['masks_mode']}: {', '.join(cert['masks']) or '-'}"
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
    fl = cert["float_limits"]
    if fl["float64"] is not None:
        console.print(
            f"rounding   within the bounds up to n = {fl['float64']} in float64, "
            f"{fl['float32']} in float32 (binding: {', '.join(fl['binding_heads'])})"
        )
    independent = "yes" if cert["n_independent"] else "no"
    console.print(f"n-free     computation at position i independent of n: {independent}")
    for h in cert["heads"]:
        console.print(
            f"head {h['layer']}.{h['head']}   {h['gadget']:<22} {h['weighting']:<9} "
            f"{h['mask']:<13} {h['theorem']}"
        )
    if "layer_norm" in cert:
        print_layer_norm(cert)
        return
    console.print(
        f"error      max proven head error {cert['max_error_bound']:.3g} "
        f"< rounding margin {cert['rounding_margin']:.3g}: {cert['bounds_below_margin']}"
    )


def print_layer_norm(cert: dict) -> None:
    """The layer-norm part of a soft-ln certificate: margin, pre-norm scale, what ε does."""
    ln = cert["layer_norm"]
    console.print(f"layer norm {ln['placement']}, ε = {ln['eps']:g}", markup=False)
    console.print(f"margin     {ln['margin']['output']}", markup=False, soft_wrap=True)
    console.print(f"pre-norm   {ln['margin']['pre_norm']}", markup=False, soft_wrap=True)
    for row in ln["eps_effect"]["at"]:
        lo, hi = row["margin_at_least_quarter_up_to_n"], row["margin_below_quarter_from_n"]
        exact = row["exact_up_to_n"]
        margin = "every n" if lo is None else f"n <= {lo:,}"
        if hi is not None:
            margin += f" (below 1/4 from n = {hi:,})"
        proven = "every n" if exact is None else f"n <= {exact:,}"
        console.print(
            f"ε = {row['eps']:g}   margin >= 1/4 for {margin}; proven exact for {proven}",
            markup=False,
        )


@app.command("compile")
def compile_cmd(
    formula: str = typer.Argument(
        None,
        help="A formula, e.g. \"MOD(2, 1)(#<['1'])\", or a named formula such as @parity-mod "
        "(or give named outputs with --output instead).",
    ),
    output: list[str] = typer.Option(
        None,
        "--output",
        help="A named output NAME=FORMULA (repeatable, in order): output coordinate k is the "
        "k-th output's value.",
    ),
    alphabet: str = typer.Option(None, "--alphabet", "-a", help="The input alphabet, e.g. 01."),
    target: str = typer.Option(
        "hard",
        "--target",
        "-t",
        help="hard | soft-temperature | soft-pe | soft-ln (layer norm with ε = 0, τ = 1: the "
        "counting fragment, future masks; Yang & Chiang 2024).",
    ),
    causal: bool = typer.Option(False, "--causal", help="Future masks only (past fragment)."),
    masks: str = typer.Option(
        None,
        "--masks",
        help="strict (the default: any mask, strict-future j < i included) | nonstrict (only "
        "none, future j <= i and past j >= i, as in Yang et al. (2026) and GPT-style decoders).",
    ),
    out: Path = output_file_option(required=False, help="Write the model (.safetensors)."),
    n: int = int_option(1000, "--n", lo=1, help="Length at which to evaluate tau(n) and bounds."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    dtype: str = dtype_option(),
) -> None:
    """Compile FORMULA (or the named --output formulas) into a transformer whose output is the
    formula's value (exactly 0/1) at every position; print the certificate (features, tau(n),
    error bounds, size)."""
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    if (formula is None) == (not output):
        raise HardsoftError("give either FORMULA or one or more --output NAME=FORMULA")
    if output:
        pairs, alpha = parse_outputs(output, alphabet)
        source: FormulaInput = dict(pairs)
    else:
        source, alpha = _resolve_formula(formula, alphabet)
    options = {} if masks is None else {"masks": masks}
    model = compile_formula(source, alpha, target=target, causal=causal, n=n, **options)
    model = apply_dtype(model, dtype)
    cert = model.meta["certificate"]
    cert["dtype"] = str(model.dtype).removeprefix("torch.")
    if out is not None:
        save_model(model, out)
    if as_json:
        print_json({"certificate": cert, "output": str(out) if out is not None else None})
        return
    print_certificate(cert)
    if out is not None:
        console.print(f"wrote      {out}")

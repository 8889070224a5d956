"""``hardsoft compile``: compile a formula into a transformer and print its certificate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.certificates import print_certificate
from hardsoft.cli.common import (
    console,
    input_file_option,
    int_option,
    output_file_option,
    print_json,
)
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
    regex: str = typer.Option(
        None,
        "--regex",
        help="Compile a regular language given by this expression (| * + ? ( ) [ab], . or Σ "
        "for any symbol, x{m,n}) into a model whose output at i is the membership of the "
        "prefix of length i; the alphabet defaults to the symbols it mentions (docs/regular.md).",
    ),
    dfa: Path = input_file_option(
        "--dfa", help="Compile the regular language of this DFA file (JSON, docs/regular.md)."
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
    error bounds, size).

    --regex / --dfa: a regular language instead. Its syntactic monoid decides the class:
    star-free (past LTL; --target hard gives unique-hard heads with strict masks and no
    position features), solvable (past LTL with MOD of counts), or non-solvable (refused,
    exit 1: NC1-complete by Barrington 1989, no construction known). The formula is checked
    against the DFA at every length before it is compiled, the model after."""
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    if regex is not None or dfa is not None:
        from hardsoft.cli.regular_cmd import compile_regular_cmd

        if formula is not None or output or causal:
            raise HardsoftError(
                "--regex/--dfa compile a language: give no FORMULA, --output "
                "or --causal (the model is causal already)"
            )
        compile_regular_cmd(regex, dfa, alphabet, target, masks, out, n, as_json, dtype)
        return
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

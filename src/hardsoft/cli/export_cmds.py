"""``hardsoft export``: a model in another library's format (TransformerLens)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    int_option,
    output_dir_option,
    path_argument,
    print_json,
)
from hardsoft.errors import HardsoftError

TARGETS = ("transformer-lens",)


@app.command("export")
def export_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model."),
    to: str = typer.Option("transformer-lens", "--to", help="The format: transformer-lens."),
    n_ctx: int = int_option(
        ..., "--n-ctx", lo=1, help="Context length: the position table covers positions 1..N."
    ),
    out: Path = output_dir_option(help="Output folder (created if missing)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Write MODEL as TransformerLens's config.json and model.safetensors (a HookedTransformer
    state dict), then run both models on random inputs and report the largest difference.

    Tokens are alphabet indices, with no BOS token; `logits[..., k]` is output coordinate k.
    Position features and each head's 1/τ(n) are evaluated at N, so a model whose features or
    τ depend on n (such as i/n) is exact for inputs of length exactly N (a warning says so).
    Hard heads, strict or past masks, mixed mask directions and post layer norm cannot be
    expressed in TransformerLens and are an error naming the head. Needs the interop extra."""
    from hardsoft.cli.common import load_model
    from hardsoft.interop.files import save_transformer_lens

    if to not in TARGETS:
        raise HardsoftError(f"unknown export format {to!r} (one of {', '.join(TARGETS)})")
    if n_ctx < 1:
        raise HardsoftError(f"--n-ctx must be >= 1, got {n_ctx}")
    validate.protect_inputs({"MODEL": model_path})  # out is a folder: its files are checked
    model = load_model(model_path)
    summary = save_transformer_lens(model, n_ctx, out, source=str(model_path))
    summary["format"] = to
    if summary["length_dependent"]:
        reasons = "; ".join(summary["reasons"])
        print(f"warning: exact for inputs of length {n_ctx} only: {reasons}", file=sys.stderr)
    if as_json:
        print_json(summary)
        return
    check = summary["verification"]
    console.print(f"wrote {summary['files'][0]} and {summary['files'][1]}")
    console.print(
        f"exact for {summary['exact_lengths']}; checked on lengths {check['lengths']}: "
        f"max |logits - hardsoft outputs| = {check['max_abs_diff']:.3g}"
    )

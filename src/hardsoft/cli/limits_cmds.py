"""``hardsoft restrict``: Hahn's input restrictions and a verified witness for a concrete model."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    float_option,
    int_option,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError


@app.command("restrict")
def restrict_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model file."),
    n: int = int_option(..., "--n", lo=2, help="Input length (>= 2)."),
    language: str = typer.Option(
        ..., "--language", help="Target: parity-even, parity-odd or dyck<k> (dyck1, dyck2, ...)."
    ),
    C: float = float_option(
        0.5,
        "--C",
        lo=0.0,
        hi=1.0,
        lo_open=True,
        help="Target free fraction (of the positions free at the start), in (0, 1].",
    ),
    k: int = int_option(
        None, "--k", lo=0, help="Satisfaction parameter k of the lemma (default: auto)."
    ),
    seed: int = seed_option(),
    max_rows: int = int_option(
        1 << 14, "--max-rows", lo=1, help="Cap on the assignments enumerated per activation."
    ),
    flip_trials: int = int_option(
        0, "--flip-trials", lo=0, help="Also run this many random flips outside the set."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build a restriction under which the model's output depends on few positions (Depth
    Reduction Lemma), certify the dependency set, and verify a witness pair."""
    from hardsoft.cli.common import load_model
    from hardsoft.languages import get_language, restriction_targets
    from hardsoft.limits.depth_reduction import Params
    from hardsoft.limits.restrict import flip_test, restrict

    try:
        is_target = get_language(language).restriction_target
    except HardsoftError:
        is_target = False
    if not is_target:
        known = ", ".join(restriction_targets())
        raise HardsoftError(f"unknown target {language!r}; use one of {known} (or dyck<k>)")
    model = load_model(model_path)
    result = restrict(
        model, n, language, params=Params(C=C, k=k, seed=seed, max_rows=max_rows), seed=seed
    )
    out = result.to_dict()
    if flip_trials:
        out["flip_test"] = flip_test(model, result, trials=flip_trials, seed=seed)
    if as_json:
        print_json(out)
        return
    w = out["witness"]
    print(f"restriction    {out['restriction']}")
    console.print(
        f"free fraction  {out['free_fraction']:.4f}  "
        f"({out['free_fraction_of_initial']:.4f} of the initially free positions)"
    )
    console.print(f"dependency set {out['dependency_set']}  (c = {out['c']})")
    console.print("layer  k  c_in  c_out  free: stage1  stage2  stage3  fixes  resamplings/bound")
    for lg in out["layers"]:
        console.print(
            f"{lg['layer']:>5}  {lg['k']}  {lg['c_in']:>4}  {lg['c_out']:>5}  "
            f"{lg['free_after_stage1']:>12.4f}  {lg['free_after_stage2']:.4f}  "
            f"{lg['free_after_stage3']:.4f}  {lg['stage2_fixes']:>5}  "
            f"{lg['resamplings']}/{lg['mt_bound']:.3g}"
        )
    if w["x"] is not None:
        print(f"x   {w['x']}")
        print(f"x'  {w['x_prime']}  (changed at {w['changed']})")
        console.print(f"accept {w['accept']} / {w['accept_prime']}, in language {w['in_language']}")
    console.print(f"verified: {str(w['verified']).lower()}  ({w['reason']})", markup=False)
    if "flip_test" in out:
        console.print(f"flip test: {out['flip_test']}", markup=False)

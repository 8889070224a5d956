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


def _bound(value: float) -> str:
    """The Moser-Tardos expected-resamplings bound; none when some x_A >= 1 (infinite)."""
    return f"{value:.3g}" if value < 1e300 else "none"


def _resampling_note(lg: dict) -> str | None:
    """One line when Stage 3's Moser-Tardos resampling hit its cap or ran past the expected
    count, with what that means for the restriction."""
    held = {True: "holds", False: "does not hold", None: "was not checked"}[lg["lll_condition"]]
    bound = _bound(lg["mt_bound"])
    if not lg["mt_converged"]:
        return (
            f"layer {lg['layer']}: Moser-Tardos resampling hit its cap of {lg['resamplings']} "
            f"(expected at most {bound} when the LLL condition holds; here it {held}). Stage 3 was "
            "dropped and the remaining tuples were fixed greedily, so this layer is not the "
            "construction of the Depth Reduction Lemma's proof; the restriction and witness "
            "are still checked by running the model."
        )
    if lg["resamplings"] > max(1.0, lg["mt_bound"]) or (lg["resamplings"] and bound == "none"):
        expected = (
            f"past the expected {bound} (the bound assumes the LLL condition; here it {held})"
            if bound != "none"
            else "with no finite expected count (some event's x_A >= 1)"
        )
        return (
            f"layer {lg['layer']}: {lg['resamplings']} resamplings, {expected}. Resampling "
            "converged, so every constraint of the layer holds."
        )
    return None


@app.command("restrict")
def restrict_cmd(
    model_path: Path = path_argument("MODEL", "A .safetensors model file."),
    n: int = int_option(..., "--n", lo=2, help="Input length (>= 2)."),
    language: str | None = typer.Option(
        None,
        "--language",
        help="Target: parity-even, parity-odd or dyck<k> (dyck1, dyck2, ...); omitted: the "
        "restriction and its certified dependency set only, no witness.",
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
        is_target = language is None or get_language(language).restriction_target
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
            f"{lg['resamplings']}{'' if lg['mt_converged'] else ' (cap)'}/{_bound(lg['mt_bound'])}"
        )
    for lg in out["layers"]:
        note = _resampling_note(lg)
        if note:
            console.print(note, markup=False)
    console.print(f"answer constant over every completion: {str(out['output_constant']).lower()}")
    w = out["witness"]
    if w is None:
        console.print("no --language: no witness", markup=False)
    elif w["x"] is not None:
        print(f"x   {w['x']}")
        print(f"x'  {w['x_prime']}  (changed at {w['changed']})")
        console.print(f"accept {w['accept']} / {w['accept_prime']}, in language {w['in_language']}")
    if w is not None:
        console.print(f"verified: {str(w['verified']).lower()}  ({w['reason']})", markup=False)
    if "flip_test" in out:
        console.print(f"flip test: {out['flip_test']}", markup=False)

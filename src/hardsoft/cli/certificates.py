"""The human-readable certificate of a compiled model (``hardsoft compile``, ``compile --regex``,
``program``): heads, error bounds, and a soft-ln model's layer-norm margin."""

from __future__ import annotations

from hardsoft.cli.common import console


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

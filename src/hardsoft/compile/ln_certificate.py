"""The certificate of a ``soft-ln`` model (:mod:`hardsoft.compile.layernorm`): the keys every
compiled model's certificate has (outputs, features, heads, sizes, ``float_limits``), the
deviations from Yang & Chiang (COLM 2024), and ``layer_norm`` (margin, ε) from
:mod:`hardsoft.compile.ln_bounds`."""

from __future__ import annotations

from typing import Any

from hardsoft.compile import ln_bounds
from hardsoft.compile.certificate import n_independence
from hardsoft.compile.layernorm import FIRST, LNModel, count_pair, pair
from hardsoft.craft import LinearForm
from hardsoft.logic.syntax import Formula, fragment, size, to_text
from hardsoft.model.features import parse_feature

CITE = "Yang & Chiang (COLM 2024), main theorem"
DEVIATIONS = {
    "first position": (
        "hardsoft inputs have no BOS symbol: the bounded position feature [i = 1] marks the "
        "first position, and a uniform head's average of it is 1/i (their BOS gives 1/(i+1))"
    ),
    "comparisons": (
        "a comparison t >= 0 reads x = (t + 1/2)/i and one flat ramp writes [x > 0] at the "
        "scale 1/i (steps at ±1/(4i)); an equality t = 0 is one flat trapezoid; then post "
        "layer norm with eps = 0 (as we read their layer norm) rescales the position"
    ),
    "encoding": (
        "every Boolean is a pair (b, -b) of residual coordinates, b = ±one, so layer norm "
        "only rescales a position and every feed-forward is homogeneous (no biases)"
    ),
    "periodic predicates": (
        "MOD(m, r)(i) (C-RASP's pos_mod_M_R, Huang et al. 2025) is the bounded feature "
        "[i mod m = r]: not part of K_t[#]"
    ),
    "P": "P phi is written #<[phi] >= 2 | (!phi & #<[phi] >= 1): not in their compilation",
}


def _label(ln: LNModel) -> str:
    parts = ["no BOS symbol: [i = 1] gives 1/i", "comparisons by a flat ramp and post layer norm"]
    if any(f.startswith("[i mod") for f in ln.features):  # Huang et al.'s predicates
        parts.append("periodic position features")
    return f"own construction ({', '.join(parts)}; cf. {CITE})"


def _heads(ln: LNModel, label: str) -> list[dict[str, Any]]:
    heads = []
    for layer in ln.layers:
        if not layer.craft.heads:
            continue
        counted = [nm for nm, _ in layer.counts if nm != count_pair(layer.index, FIRST)[0]]
        heads.append(
            {
                "layer": layer.index - 1,
                "head": 0,
                "gadget": "count",
                "what": "uniform future-masked head: C/i of every counted Boolean, and 1/i",
                "counts": counted,
                "weighting": "softmax",
                "mask": "future",
                "tau": None,
                "tau_power": 0,
                "tau_at_n": None,
                "theorem": label,
                "error_bound": 0.0,
                "error_bound_at_n": 0.0,
            }
        )
    return heads


def ln_certificate(
    ln: LNModel,
    outputs: list[tuple[str, Formula]],
    alphabet: tuple[str, ...],
    masks: str,
    n: int,
    ir_size: int,
    seconds: float,
) -> dict[str, Any]:
    """The certificate dict of a compiled soft-ln model (see the module docstring)."""
    model = ln.model
    label = _label(ln)
    heads = _heads(ln, label)
    whole = outputs[0][1]
    for _, f in outputs[1:]:
        whole = whole & f
    named = bool(outputs[0][0])
    readouts: list[LinearForm] = [
        {pair(o.base)[1 if o.neg else 0]: 0.5 / ln.kappa} for o in ln.outputs
    ]
    shapes = ln_bounds.shapes(ln)
    periodic = any(f.startswith("[i mod") for f in ln.features)
    skip = {"periodic predicates"} if not periodic else set()
    if not ln.uses_past:
        skip.add("P")
    used = [k for k in DEVIATIONS if k not in skip]
    return {
        "formula": to_text(whole)
        if not named
        else "; ".join(f"{a}={to_text(f)}" for a, f in outputs),
        "outputs": [
            {
                "name": nm,
                "formula": to_text(f),
                "fragment": fragment(f).name,
                "output_coordinate": k,
                "readout": readouts[k],
                "output_bias": 0.5,
            }
            for k, (nm, f) in enumerate(outputs)
        ],  # fmt: skip
        "alphabet": "".join(alphabet),
        "target": "soft-ln",
        "masks_mode": masks,
        "causal": True,
        "fragment": fragment(whole).name,
        "theorem": label,
        "deviations": {k: DEVIATIONS[k] for k in used},
        "constructions": {
            "counts": "one uniform future-masked head per layer (tau = 1, scores 0: exact)",
            "comparisons": DEVIATIONS["comparisons"],
            "Boolean": "flat ReLU units on the pairs; a conjunction costs a layer",
        },
        "masks": ["future"] if heads else [],
        "weightings": ["softmax"] if heads else [],
        "position_features": [
            {"name": f, "bounded": parse_feature(f).bounded, "depends_on_n": False}
            for f in ln.features
        ],
        "bounded_position_features": True,
        **n_independence(ln.features, heads),
        "n": n,
        "tau": [],
        "tau_power": 0,
        "tau_order": "tau = 1 (only uniform heads)",
        "heads": heads,
        "max_error_bound": 0.0,
        "float_limits": ln_bounds.float_limits(shapes),
        "rounding_margin": 0.25,
        "bounds_below_margin": True,
        "exact_by_construction": False,
        "layer_norm": ln_bounds.layer_norm_section(ln),
        "layers": len(model.blocks),
        "heads_total": len(heads),
        "residual_width": model.spec.d_model,
        "parameters": model.parameter_count(),
        "ffn_width_max": max((layer.d_ff for layer in model.spec.layers), default=0),
        "distinct_nodes": ir_size,
        "formula_size": sum(size(f) for _, f in outputs),
        "readout": readouts[0],
        "compile_seconds": round(seconds, 4),
    }

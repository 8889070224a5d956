"""The certificate of a compiled model: what it uses and what is proven about it.

It lists the outputs (name, formula, output coordinate), the position features (and whether
each is bounded and whether it depends on n), every distinct τ(n) with its value at the
requested ``n``, each head's gadget, the theorem or proposition of Yang, Strobl, Chiang &
Angluin (arXiv:2412.09925v1) behind it and its proven attention-error bound, the rounding margin
those bounds must stay under, whether the model's computation involves n at all, and the size of the
model (layers, heads, residual width, parameters). It is a plain JSON-ready dict stored in
``model.meta["certificate"]`` and therefore in the saved file.
"""

from __future__ import annotations

from typing import Any

import torch

from hardsoft.compile import bounds as B
from hardsoft.compile.targets import MaskMode, Target
from hardsoft.craft import LinearForm
from hardsoft.logic.printer import shared_text
from hardsoft.logic.syntax import Formula, fragment, size
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import eval_tau
from hardsoft.model.transformer import Transformer

_ORDER_TEXT = {
    0: "tau = 1 (only uniform heads)",
    1: "Theta(1/n)",
    3: "Theta(1/n^3) (table lookup of counts with bounded position features)",
}


def tau_order(target: Target, powers: list[int]) -> str:
    """The asymptotic order of the smallest temperature used, from the heads' τ(n) powers."""
    if target is Target.HARD:
        return "hard attention (no temperature)"
    if target is Target.SOFT_PE:
        return "tau = 1 (unbounded position features scale the scores)"
    power = max(powers, default=0)
    return _ORDER_TEXT.get(power, f"Theta(1/n^{power})")


def depends_on_n(feature: str) -> bool:
    """Whether a position feature's value at position i changes with the length n (compared
    at the positions two lengths share)."""
    f = parse_feature(feature)
    short, long = f.compute(7, torch.float64), f.compute(11, torch.float64)
    return not torch.equal(short, long[:7])


def n_independence(features: list[str], heads: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the computation at position i involves n at all: no feature depends on n and
    no head has a temperature τ(n). Causal models that pass compute the same activations at
    positions 1..i for every extension of a prefix (Yang et al. (arXiv:2412.09925v1) Thm. 16)."""
    n_features = [f for f in features if depends_on_n(f)]
    n_heads = [f"{h['layer']}.{h['head']}" for h in heads if h.get("tau")]
    return {
        "n_independent": not n_features and not n_heads,
        "n_dependent_features": n_features,
        "heads_with_tau": n_heads,
    }


def float_limits(heads: list[dict[str, Any]]) -> dict[str, Any]:
    """The largest n at which every head still meets its bound in float64 / float32 (the
    minimum over heads; None: no head limits it), and the heads that bind."""
    limited = [h for h in heads if h.get("max_exact_n")]
    out: dict[str, Any] = {}
    for fmt in B.UNIT_ROUNDOFF:
        out[fmt] = min((h["max_exact_n"][fmt] for h in limited), default=None)
    out["binding_heads"] = [
        f"{h['layer']}.{h['head']} {h['gadget']}"
        for h in limited
        if h["max_exact_n"]["float64"] == out["float64"]
    ]
    out["derivation"] = (
        "first-order rounding model per head (docs/compiler.md): scores of size O(n) with a "
        "fixed gap give n <= 1/(c u); a sign test of counts C/N (each summed exactly and "
        "divided once by the uniform fast path) gives n <= 1/((2K-1) sum|c| u) for K terms; a "
        "lookup of "
        "C/N (relative error up to N u) gives n <= (c u)^(-1/2); u = 2^-53 (float64), "
        "2^-24 (float32)"
    )
    return out


CONSTRUCTIONS = {
    MaskMode.STRICT: {
        "first/last": "position features [i=1], [i=n]",
        "Y/X": "one head, strict mask (j < i / j > i), rightmost/leftmost position (Lemma 8)",
        "S/U/P/F": "one head, strict mask: the nearest position where psi or not phi holds",
        "E": "P phi | phi | F phi",
    },
    MaskMode.NONSTRICT: {
        "first/last": "Prop. 11's construction: uniform future/past head averaging (-1)^j",
        "Y/X": "Thm. 12's construction: two heads, nearest even and nearest odd position",
        "S/U/P/F": (
            "own construction (cf. Thm. 15): a non-strict shift head (j <= i) gives the "
            "non-strict since at every position; Y (X) of it is the strict since (until)"
        ),
        "E": "non-strict P phi | non-strict F phi (one layer)",
    },
}
"""How each mask mode builds the operators that differ between them (stated in the
certificate's ``constructions``; which result each head is, and whether it is the paper's
construction, is its ``theorem`` label from :mod:`hardsoft.compile.results`)."""


def build_certificate(
    *,
    model: Transformer,
    outputs: list[tuple[str, Formula, LinearForm]],
    alphabet: tuple[str, ...],
    target: Target,
    masks: MaskMode,
    causal: bool,
    head_info: list[dict],
    features: list[str],
    n: int,
    ir_size: int,
    seconds: float,
) -> dict[str, Any]:
    """Assemble the certificate dict (see the module docstring). ``outputs`` lists
    ``(name, formula, linear form of the residual read by W_U)`` per output coordinate (name
    ``""`` when the model has one unnamed output)."""
    formulas = [f for _, f, _ in outputs]
    whole = formulas[0]
    for f in formulas[1:]:
        whole = whole & f  # Boolean glue: the smallest fragment holding every output
    named = bool(outputs[0][0])
    return {
        "formula": (
            shared_text(formulas[0])
            if not named
            else "; ".join(f"{nm}={shared_text(f)}" for nm, f, _ in outputs)
        ),
        "outputs": [
            {
                "name": nm,
                "formula": shared_text(f),
                "fragment": fragment(f).name,
                "output_coordinate": k,
                "readout": dict(form),
            }
            for k, (nm, f, form) in enumerate(outputs)
        ],
        "alphabet": "".join(alphabet),
        "target": str(target),
        "masks_mode": str(masks),
        "causal": causal,
        "fragment": fragment(whole).name,
        **model_certificate(
            model=model,
            target=target,
            masks=masks,
            head_info=head_info,
            features=features,
            n=n,
            ir_size=ir_size,
        ),
        "formula_size": sum(size(f) for f in formulas),
        "readout": dict(outputs[0][2]),
        "compile_seconds": round(seconds, 4),
    }


def model_certificate(
    *,
    model: Transformer,
    target: Target,
    masks: MaskMode,
    head_info: list[dict],
    features: list[str],
    n: int,
    ir_size: int,
) -> dict[str, Any]:
    """The part of a certificate that is about the model, whatever its source (a formula or
    a program): masks, constructions, features, τ(n), every head with its bound, float
    limits and sizes."""
    heads = []
    for info in sorted(head_info, key=lambda h: (h["layer"], h["head"])):
        entry = {k: v for k, v in info.items() if not k.startswith("_")}
        entry["tau_at_n"] = eval_tau(info["tau"], n) if info.get("tau") else None
        entry["error_bound_at_n"] = info["_bound"].at(n)
        heads.append(entry)
    taus = sorted({h["tau"] for h in heads if h.get("tau")})
    soft = [h for h in heads if h["weighting"] == "softmax"]
    max_bound = max((h["error_bound"] for h in soft), default=0.0)
    return {
        "masks": sorted({h["mask"] for h in heads}),
        "constructions": CONSTRUCTIONS[masks],
        "weightings": sorted({h["weighting"] for h in heads}),
        "position_features": [
            {"name": f, "bounded": parse_feature(f).bounded, "depends_on_n": depends_on_n(f)}
            for f in features
        ],
        "bounded_position_features": all(parse_feature(f).bounded for f in features),
        **n_independence(features, heads),
        "n": n,
        "tau": [
            {
                "expression": t,
                "value_at_n": eval_tau(t, n),
                "heads": sum(1 for h in heads if h.get("tau") == t),
            }
            for t in taus
        ],
        "tau_power": max((h["tau_power"] for h in heads), default=0),
        "tau_order": tau_order(target, [h["tau_power"] for h in heads]),
        "heads": heads,
        "max_error_bound": max_bound,
        "float_limits": float_limits(heads),
        "rounding_margin": B.ROUNDING_MARGIN,
        "bounds_below_margin": max_bound < B.ROUNDING_MARGIN,
        "exact_by_construction": target is Target.HARD,
        "layers": len(model.blocks),
        "heads_total": len(heads),
        "residual_width": model.spec.d_model,
        "parameters": model.parameter_count(),
        "ffn_width_max": max((layer.d_ff for layer in model.spec.layers), default=0),
        "distinct_nodes": ir_size,
    }

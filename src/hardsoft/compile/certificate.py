"""The certificate of a compiled model: what it uses and what is proven about it.

It lists the position features (and whether each is bounded), every distinct τ(n) with its
value at the requested ``n``, each head's gadget and proven attention-error bound, the
rounding margin those bounds must stay under, and the size of the model (layers, heads,
residual width, parameters). It is a plain JSON-ready dict stored in
``model.meta["certificate"]`` and therefore in the saved file.
"""

from __future__ import annotations

from typing import Any

from hardsoft.compile import bounds as B
from hardsoft.logic.syntax import Formula, fragment, size, to_text
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import eval_tau
from hardsoft.model.transformer import Transformer


def head_bound_at(info: dict, n: int) -> float:
    """A head's proven error bound at length ``n`` (the shift bound depends on ``n``)."""
    fn = info.get("_bound_fn")
    if fn and fn[0] == "shift":
        return B.shift_bound(fn[1], n)
    return float(info.get("error_bound", 0.0))


def tau_order(target: str, taus: list[str]) -> str:
    """The asymptotic order of the smallest temperature used."""
    if target == "hard":
        return "hard attention (no temperature)"
    if target == "soft-pe":
        return "tau = 1 (unbounded position features scale the scores)"
    if any("n**3" in t for t in taus):
        return "Theta(1/n^3) (table lookup of counts with bounded position features)"
    if taus:
        return "Theta(1/n)"
    return "tau = 1 (only uniform heads)"


def build_certificate(
    *,
    model: Transformer,
    outputs: list[tuple[str, Formula, str]],
    alphabet: tuple[str, ...],
    target: str,
    causal: bool,
    head_info: list[dict],
    features: list[str],
    n: int,
    ir_size: int,
    seconds: float,
) -> dict[str, Any]:
    """Assemble the certificate dict (see the module docstring). ``outputs`` lists
    ``(name, formula, residual coordinate)`` per output coordinate (name ``""`` when the
    model has one unnamed output)."""
    heads = []
    for info in head_info:
        entry = {k: v for k, v in info.items() if not k.startswith("_")}
        entry["tau_at_n"] = eval_tau(info["tau"], n) if info.get("tau") else None
        entry["error_bound_at_n"] = head_bound_at(info, n)
        heads.append(entry)
    taus = sorted({h["tau"] for h in heads if h.get("tau")})
    soft = [h for h in heads if h["weighting"] == "softmax"]
    max_bound = max((h["error_bound"] for h in soft), default=0.0)
    formulas = [f for _, f, _ in outputs]
    whole = formulas[0]
    for f in formulas[1:]:
        whole = whole & f  # Boolean glue: the smallest fragment holding every output
    frag = fragment(whole)
    named = bool(outputs[0][0])
    return {
        "formula": (
            to_text(formulas[0])
            if not named
            else "; ".join(f"{nm}={to_text(f)}" for nm, f, _ in outputs)
        ),
        "outputs": [
            {
                "name": nm,
                "formula": to_text(f),
                "fragment": fragment(f).name,
                "output_coordinate": k,
                "residual_coordinate": coord,
            }
            for k, (nm, f, coord) in enumerate(outputs)
        ],
        "alphabet": "".join(alphabet),
        "target": target,
        "causal": causal,
        "fragment": frag.name,
        "masks": sorted({h["mask"] for h in heads}),
        "weightings": sorted({h["weighting"] for h in heads}),
        "position_features": [{"name": f, "bounded": parse_feature(f).bounded} for f in features],
        "bounded_position_features": all(parse_feature(f).bounded for f in features),
        "n": n,
        "tau": [
            {
                "expression": t,
                "value_at_n": eval_tau(t, n),
                "heads": sum(1 for h in heads if h.get("tau") == t),
            }
            for t in taus
        ],
        "tau_order": tau_order(target, taus),
        "heads": heads,
        "max_error_bound": max_bound,
        "rounding_margin": B.ROUNDING_MARGIN,
        "bounds_below_margin": max_bound < B.ROUNDING_MARGIN,
        "exact_by_construction": target == "hard",
        "layers": len(model.blocks),
        "heads_total": len(heads),
        "residual_width": model.spec.d_model,
        "parameters": model.parameter_count(),
        "ffn_width_max": max((layer.d_ff for layer in model.spec.layers), default=0),
        "distinct_nodes": ir_size,
        "formula_size": sum(size(f) for f in formulas),
        "output_coordinate": outputs[0][2],
        "compile_seconds": round(seconds, 4),
    }

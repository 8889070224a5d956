"""What every program compiled by the logic compiler shares, whatever its notation (C-RASP
files, :mod:`hardsoft.programs.crasp`; the §6 tasks' logic route,
:mod:`hardsoft.programs.ahat.routes`): the certificate in the shape of the tieless one, formula
texts shortened for metadata, and a model's sizes."""

from __future__ import annotations

from hardsoft.compile.results import model_label
from hardsoft.model.spec import eval_tau
from hardsoft.model.transformer import Transformer

CERT_NS = (10, 100, 1000, 5000)
COROLLARY = "Cor. 18"
"""The result the logic route relates to: the formulas are past-only and compiled with future
masks (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Corollary 18, the future-masked
form of Corollary 17). Whether the model is that construction is its label (``theorem``), from the
heads' labels (:func:`hardsoft.compile.results.model_label`)."""


def model_sizes(model: Transformer) -> dict[str, int]:
    """Layers, attention heads, residual width and parameters of ``model``."""
    spec = model.spec
    return {
        "layers": len(spec.layers),
        "heads": sum(len(layer.heads) for layer in spec.layers),
        "width": spec.d_model,
        "parameters": model.parameter_count(),
    }


def logic_certificate(
    compiled: dict, target: str, *, result: str = COROLLARY, route: str = "logic"
) -> dict:
    """The logic route's certificate: the compiler's certificate (features, every head's
    gadget and proven error bound, sizes, named outputs) plus the route, the theorem
    (``result`` of Yang et al. (2026), labelled from the heads), and ``tau``/``values`` in
    the tieless certificate's shape (the smallest τ of any head)."""
    taus = [t["expression"] for t in compiled["tau"]]
    values: dict[str, dict[str, float]] = {}
    smallest = None
    if target != "hard":
        for m in CERT_NS:
            at = [eval_tau(t, m) for t in taus] or [1.0]
            values[str(m)] = {"tau": min(at)}
        if taus:
            smallest = min(taus, key=lambda t: eval_tau(t, 1000))
        else:
            smallest = "1"
    cert = dict(compiled)
    cert["formula"] = compact_text(cert["formula"])
    cert["outputs"] = [{**o, "formula": compact_text(o["formula"])} for o in cert["outputs"]]
    cert.update(
        {
            "route": route,
            "theorem": model_label(result, [h["theorem"] for h in compiled["heads"]]),
            "tau": smallest,
            "tau_expressions": taus,
            "values": values,
            "exact": (
                "hard: exact by construction; soft: every head's proven error bound is below "
                "the rounding margin, and each layer rounds its heads' outputs to exact 0/1"
            ),
        }
    )
    return cert


FORMULA_TEXT_LIMIT = 2000
"""Formula texts longer than this are shortened in certificates and metadata: the k-hop
formulas' tree size grows like (2|Σ|)^k although the compiled DAG grows linearly in k."""


def compact_text(text: str, limit: int = FORMULA_TEXT_LIMIT) -> str:
    """``text``, or its first ``limit`` characters and a note of the full length."""
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]} ... [{len(text)} characters in all; the formulas are "
        "hardsoft.programs.ahat.logic_route.task_formulas(name, k)]"
    )


__all__ = [
    "CERT_NS",
    "COROLLARY",
    "FORMULA_TEXT_LIMIT",
    "compact_text",
    "logic_certificate",
    "model_sizes",
]

"""Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Theorem 16(a) is not built by the compiler;
this is the runnable check of the obstruction, under our reading of the statement (future masks,
bounded position features and a temperature that do not depend on n): a Lemma 5-style bound (Hahn
2020 §6) on the weight one key can get at position i. The table of constructions,
:data:`hardsoft.compile.results.NOT_BUILT`, points here."""

from __future__ import annotations

from typing import Any


def theorem16a_obstruction(model: Any, lengths: list[int]) -> list[dict[str, float]]:
    """The runnable check next to Theorem 16(a) (docs/compiler.md). For a softmax model whose
    temperatures are constants and whose position features are bounded: every score of head h
    lies in ``[-A_h, A_h]`` (``A_h = σ Aᵀ|W_Q W_Kᵀ|A`` from interval bounds on the residual,
    :func:`hardsoft.convert.bound.activation_bounds`), so at position i no key gets more than
    ``w(i) = e^(2A_h/τ_h) / (i − 1 + e^(2A_h/τ_h))`` of the weight. ``w(i) → 0`` like 1/i: one
    earlier symbol moves every head's output at position i by O(1/i) (Hahn 2020, Lemma 5),
    so ``P '1'`` is not computable with a fixed rounding threshold at large i. Returns, per
    length, the bound (largest over heads) and the largest weight measured on ``1 0^(i−1)``."""
    import math

    import torch

    from hardsoft.convert.bound import activation_bounds
    from hardsoft.model.spec import eval_tau

    acts = activation_bounds(model, max(lengths))
    out = []
    for i in lengths:
        bound = 0.0
        for ell, block in enumerate(model.blocks):
            A = acts[ell]
            for head in block.heads:
                tau = eval_tau(head.spec.tau or "1", i)
                sigma = 1.0 / math.sqrt(head.spec.d_head) if head.spec.scale else 1.0
                M = (head.W_Q @ head.W_K.T).detach().abs().to(torch.float64)
                a = sigma * float(A @ M @ A)
                r = math.exp(min(2.0 * a / tau, 700.0))
                bound = max(bound, r / (i - 1 + r))
        tr = model(model.encode(["1" + "0" * (i - 1)]), trace=True).trace
        seen = max(float(v[0, -1].detach().max()) for k, v in tr.items() if k.endswith(".pattern"))
        out.append({"i": i, "weight_bound": bound, "max_weight": seen})
    return out

"""Norms and activation bounds read off a model's weights, shared by the temperature bounds
(Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Theorem 26 in
:mod:`hardsoft.programs.ahat.soften`, and the general simulation in
:mod:`hardsoft.convert.bound`).

``col_norm(M)`` is the largest column sum of ``|M|``, so ``‖x M‖∞ <= col_norm(M) ‖x‖∞`` for a
row vector x; ``feature_degree`` and ``feature_sup`` bound the raw position features.
"""

from __future__ import annotations

from typing import Any

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.features import parse_feature

_DEGREE = {
    "1": 0, "i": 1, "n": 1, "i/n": 0, "1/i": 0, "1/n": 0, "(-1)^i": 0, "i^2": 2,
    "(i/n)^2": 0, "[i=1]": 0, "[i=n]": 0, "i//s": 1, "i%s": 1,
}  # fmt: skip

# |f(i, n)| <= i^a n^b for 1 <= i <= n: the exponents (a, b) of the monomial features; every
# other named feature (indicators, (-1)^i, learned one-hots, sin/cos) lies in [-1, 1].
_MONOMIAL = {
    "i": (1, 0), "n": (0, 1), "i^2": (2, 0), "i/n": (1, -1), "1/i": (-1, 0),
    "1/n": (0, -1), "(i/n)^2": (2, -2), "i//s": (1, 0), "i%s": (0, 1),
}  # fmt: skip


def feature_degree(name: str) -> int:
    """p such that |f(i, n)| <= n^p for 1 <= i <= n (bounded features have p = 0)."""
    text = "".join(name.split())
    if "*" in text:
        return sum(feature_degree(p) for p in text.split("*"))
    if text in _DEGREE:
        return _DEGREE[text]
    f = parse_feature(name)
    if f.bounded and not text.startswith("learned"):
        return 0
    raise HardsoftError(f"no activation bound known for position feature {name!r}")


def feature_sup(name: str, n_max: int) -> float:
    """``sup |f(i, n)|`` over ``1 <= i <= n <= n_max`` (products: the monomial exponents add)."""
    a, b = 0, 0
    for part in "".join(name.split()).split("*"):
        parse_feature(part)  # a bad name is a HardsoftError
        da, db = _MONOMIAL.get(part, (0, 0))
        a, b = a + da, b + db
    # i^a n^b on 1 <= i <= n <= N: with a >= 0 the largest i is n (then n^(a+b)), else i = 1
    e = a + b if a >= 0 else b
    return float(n_max) ** e if e > 0 else 1.0


def col_norm(m: torch.Tensor) -> float:
    """Largest column sum of |m| (0 for an empty matrix): ‖x m‖∞ <= col_norm(m) ‖x‖∞."""
    return float(m.detach().abs().sum(dim=0).max()) if m.numel() else 0.0


def max_abs(v: torch.Tensor) -> float:
    """Largest |entry| (0 for an empty tensor)."""
    return float(v.detach().abs().max()) if v.numel() else 0.0


def bilinear_norm(w_q: torch.Tensor, w_k: torch.Tensor) -> float:
    """``Σ |W_Q W_Kᵀ|``: |u W_Q W_Kᵀ vᵀ| <= this · ‖u‖∞ ‖v‖∞ (a head's score sensitivity)."""
    return float((w_q.detach() @ w_k.detach().T).abs().sum()) if w_q.numel() else 0.0


def blocks_of(model: Any) -> list[Any]:
    """The model's blocks as a plain list (each has ``heads``, ``W_in`` ... : see Block)."""
    return list(model.blocks)

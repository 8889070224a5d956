"""Proven attention-error bounds of the soft gadgets and the temperatures that meet them.

Every soft head's output is an *approximate Boolean* (Yang et al. (2026) §3.4): within ``ε`` of
the exact 0/1 value, with ``ε`` below the rounding margin 1/3, so the next feed-forward rounds it
exactly.
The bounds below are the ones the certificate states (derivations in docs/compiler.md):

* shift (``Y X S U P F``), scaled score ``λ n P_j ± λ j / 2``: the witness wins; other
  ``P``-positions decay geometrically by ``e^{−λ/2}`` per step and non-``P`` positions are
  suppressed by ``e^{−λ n/2 − λ}`` each::

      ε_shift(n) = q/(1 − q) + (n − 1) e^{−λ n/2 − λ},   q = e^{−λ/2}

* sign test (``[t >= 0]``), scaled score ``± a`` on even / odd positions with ``a >= g λ``
  (``g`` the proven lower bound on ``n·|x|``): ``ε_sign = 2 e^{−2 g λ}``;
* table lookup (retrieve the count ``C`` as a position), scaled score ``λ n (C² − (j − C)²)/N``
  with ``N <= n``: mass off ``j = C`` at most ``ε_res = 2 Σ_{d>=1} e^{−λ d²}`` (read as 0/1
  residues) and the retrieved ``j/n`` within ``ε_val/n``, ``ε_val = 2 Σ_{d>=1} d e^{−λ d²}``.
"""

from __future__ import annotations

import math

ROUNDING_MARGIN = 1.0 / 3.0
"""An approximate Boolean is within this of 0 or 1 (Yang et al. (2026) §3.4, Lemma 9)."""

TARGET_EPS = 0.05
"""Each soft head is designed to stay within this error (well inside the rounding margin)."""

SHIFT_LAMBDA = 8.0
SIGN_LAMBDA = 4.0


def shift_bound(lam: float, n: int) -> float:
    """``ε_shift(n)`` for the shift gadget with score multiplier ``λ`` at length ``n``."""
    q = math.exp(-lam / 2)
    return q / (1 - q) + (n - 1) * math.exp(-lam * n / 2 - lam)


def shift_bound_sup(lam: float) -> float:
    """``sup_n ε_shift(n)`` (the second term is largest at small n and then decreases)."""
    return max(shift_bound(lam, n) for n in range(1, 200))


def sign_bound(g: float, lam: float) -> float:
    """``ε_sign = 2 e^{−2 g λ}``: the error of a sign head whose scaled scores are ``± a``
    with ``a >= g λ``."""
    return 2.0 * math.exp(-2.0 * g * lam)


def retrieval_residue_bound(lam: float) -> float:
    """``ε_res = 2 Σ_{d>=1} e^{−λ d²}``: attention mass off the retrieved position."""
    return 2.0 * sum(math.exp(-lam * d * d) for d in range(1, 60))


def retrieval_value_bound(lam: float) -> float:
    """``ε_val = 2 Σ_{d>=1} d e^{−λ d²}``: error of the retrieved ``j/n``, in units of 1/n."""
    return 2.0 * sum(d * math.exp(-lam * d * d) for d in range(1, 60))


def choose_retrieval_lambda(coef_sum: int) -> float:
    """The smallest ``λ`` (in steps of 1/2 from 4) with ``ε_res <= 0.05`` and
    ``coef_sum · ε_val <= 0.2`` (so a retrieved linear combination is within 0.2/n)."""
    lam = 4.0
    while (
        retrieval_residue_bound(lam) > TARGET_EPS
        or max(coef_sum, 1) * retrieval_value_bound(lam) > 0.2
    ):
        lam += 0.5
    return lam


def fmt_lambda(lam: float) -> str:
    """``λ`` as a short literal for a τ(n) expression."""
    return str(int(lam)) if float(lam).is_integer() else repr(lam)

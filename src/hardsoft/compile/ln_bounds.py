"""What is proven about a soft-ln model (:mod:`hardsoft.compile.layernorm`): its margin as a
function of n, where float rounding stops it being exact, and what a layer norm with ε > 0
does to it.

Every quantity is read off the model's layer shapes: ``B`` Boolean pairs enter a layer, its
head writes ``K`` count pairs, ``B'`` pairs leave it, ``d`` is the residual width.

* **Scales** (ε = 0). After the first layer norm of a layer, ``one = 1/√q`` with
  ``q = (2B + 2 Σ_k (C_k/i)²)/d ∈ [2B/d, (2B + 2K)/d]``; a comparison layer writes its pairs at
  ``±F = ±one/i``, a conjunction layer at ``±one``. The second layer norm's input then has
  standard deviation ``σ = F·√(2B'/d) ∈ [a/i, b/i]`` with ``a = √(B'/(B + K))``,
  ``b = √(B'/B)`` (conjunction layers: ``σ ∈ [a, b]`` with K = 0): the smallest |pre-norm
  value| is ``F ≥ √(d/(2B + 2K))/i``, and the output after it is ``y = ½ ± ½``: margin ½.
* **ε > 0.** Layer norm divides by ``√(σ² + ε)``: the pairs leave at ``±κ·r``,
  ``r = (1 + ε/σ²)^(-1/2)``. A whole position is rescaled, which no homogeneous feed-forward
  notices; but the last layer's output is ``y = ½ ± r/2`` (the margin becomes r/2, below ¼ once
  ``σ² < ε/3``: for a comparison last layer between ``n = a√(3/ε)`` and ``b√(3/ε)``), and a
  count of Booleans from a comparison layer weighs position j by ``r_j``, off by up to
  ``e = 1/r_min − 1``; a comparison with coefficients ``W = Σ|c_k| + |c_0 + ½|`` stays right
  while ``e (4nW + 3) < 1`` (its flat steps tolerate an error of F/4).
* **Rounding.** A first-order forward-error bound from the model's own weights: each
  pre-activation of ``T`` terms is off by at most ``T u Σ|w|``, each output sum alike; a pair
  written at scale ``F = one/i`` is off relatively by ``i·E·u``. Counts of layer 1 are exact
  sums of 0/1 (one division); later counts add that relative error and ``n u`` for the prefix
  sum; a comparison stays right while its error is below ``1/(4n)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hardsoft.compile.bounds import UNIT_ROUNDOFF
from hardsoft.compile.layernorm import (
    LN_EPS,
    LNModel,
    comparison_term,
    equality_term,
)

LOG_N_MAX = 60
"""The searches stop at n = 2^60 (beyond any input): "every n" above it."""
EPS_SHOWN = (1e-12, 1e-8, 1e-5)
"""The ε values the certificate works out (1e-5 is hardsoft's default ``ln_eps``)."""


@dataclass(frozen=True)
class Compare:
    """One comparison of a layer: ``W`` (its coefficients), ``terms``, ``x_max`` (a bound on
    ``|x|`` in units of ``one``) and whether it is an equality."""

    w: float
    terms: int
    x_max: float
    equality: bool


@dataclass(frozen=True)
class Shape:
    """One layer as the bounds see it (see the module docstring)."""

    index: int
    compares: bool
    before: int
    counts: int
    after: int
    width: int
    error: float  # E: rounding of a written pair, in units of one, per unit roundoff
    comparisons: tuple[Compare, ...]

    @property
    def a(self) -> float:
        return math.sqrt(self.after / (self.before + self.counts))

    @property
    def b(self) -> float:
        return math.sqrt(self.after / self.before)


def _compare(x: Any) -> Compare:
    term = comparison_term(x)
    eq = equality_term(x) is not None
    coefs = sum(abs(k) for _, k in term.items())
    const = abs(term.const) if eq else abs(term.const + 0.5)
    return Compare(
        w=coefs + const,
        terms=len(term.counts) + 3,
        x_max=coefs + abs(term.pos) + abs(term.const) + 2.0,
        equality=eq,
    )


def write_error(neurons: list[Any], names: set[str]) -> float:
    """The first-order rounding bound (per u, in units of one) of every coordinate in
    ``names`` written by these neurons: inputs are at most 1 in units of one after the layer
    norm, so a pre-activation of T terms is off by ≤ T·Σ|w_in|, and the output sum of H terms
    (and the residual) by ≤ (H + 1)·Σ|w_out|·Σ|w_in| more."""
    worst = 0.0
    for name in names:
        own = 0.0
        total = 1.0  # the residual value itself (≤ 1)
        terms = 1
        for nrn in neurons:
            w = nrn.outputs.get(name, 0.0)
            if w == 0.0:
                continue
            size = sum(abs(v) for v in nrn.inputs.values())
            own += abs(w) * len(nrn.inputs) * size
            total += abs(w) * size
            terms += 1
        worst = max(worst, own + terms * total)
    return worst


def shapes(ln: LNModel) -> list[Shape]:
    """The layer shapes of a compiled soft-ln model."""
    from hardsoft.compile.layernorm import pair

    out = []
    d = ln.model.spec.d_model
    for layer in ln.layers:
        k = layer.index
        written = {nm for x in ln.plan.live[k] for nm in pair(x)}
        comps = tuple(_compare(x) for x in ln.plan.comparisons(k))
        out.append(
            Shape(
                index=k,
                compares=bool(comps),
                before=len(ln.plan.live[k - 1]),
                counts=len(layer.counts),
                after=len(ln.plan.live[k]),
                width=d,
                error=write_error(layer.craft.neurons, written),
                comparisons=comps,
            )
        )
    return out


# ------------------------------------------------------------------ scales and ε
@dataclass(frozen=True)
class Scales:
    """At position n of one layer: the second layer norm's input std ``sigma`` (lower,
    upper) and the factor ``r`` its pairs keep under ε (lower bound)."""

    sigma_lo: float
    sigma_hi: float
    r_min: float


def scales(shape_list: list[Shape], n: int, eps: float) -> list[Scales]:
    """Per layer, the bounds at position n (the worst of positions 1..n) for a given ε."""
    out = []
    beta_min = 1.0  # Boolean entries entering the layer: ±1 from the embedding
    for s in shape_list:
        q_max = (2 * s.before + 2 * s.counts) / s.width
        q_min = 2 * s.before / s.width
        # beta_min underflows to 0 deep in a stack at large n: nothing is kept, bound 0
        one_lo = 1.0 / math.sqrt(q_max + eps / beta_min**2) if beta_min**2 else 0.0
        one_hi = 1.0 / math.sqrt(q_min)
        div = n if s.compares else 1
        root = math.sqrt(2 * s.after / s.width)
        lo, hi = one_lo / div * root, one_hi / div * root
        r = lo / math.sqrt(lo * lo + eps) if eps else 1.0
        out.append(Scales(lo, hi, r))
        beta_min = math.sqrt(s.width / (2 * s.after)) * r
    return out


def margin_bounds(shape_list: list[Shape], n: int, eps: float) -> tuple[float, float]:
    """(lower, upper) bounds of the output margin |y − ½| at position n (½ without layers)."""
    if not shape_list:
        return 0.5, 0.5
    last = scales(shape_list, n, eps)[-1]
    hi = last.sigma_hi
    upper = 0.5 * (hi / math.sqrt(hi * hi + eps) if eps else 1.0)
    return 0.5 * last.r_min, upper


def eps_exact(shape_list: list[Shape], n: int, eps: float, u: float = 0.0) -> bool:
    """Whether every comparison is proven right at positions 1..n under ε (and rounding
    ``u``): the count error ``e`` must satisfy ``e (4nW + 3) < 1`` (module docstring)."""
    sc = scales(shape_list, n, eps)
    for k, s in enumerate(shape_list):
        if not s.compares:
            continue
        if k == 0:
            e_count = 2 * u  # exact integer sums of 0/1, one division
        else:
            prev = shape_list[k - 1]
            rho = (prev.error * (n if prev.compares else 1) + prev.width + 5) * u
            if not sc[k - 1].r_min:  # the previous layer norm kept nothing provable
                return False
            e_count = (1.0 / sc[k - 1].r_min - 1.0) + rho + (n + 2) * u
        for c in s.comparisons:
            err = c.w * e_count + (c.terms + 1) * u * c.x_max
            if 4 * n * err + 3 * e_count >= 1:
                return False
    last = shape_list[-1] if shape_list else None
    if last is not None and u:
        rho_out = (last.error * (n if last.compares else 1) + last.width + 5) * u
        if rho_out >= 1:
            return False
    return True


def largest_n(ok: Callable[[int], bool]) -> int | None:
    """The largest n ≥ 1 with ``ok(n)`` for a condition that fails from some n on (None:
    holds up to 2^60; 0: fails at n = 1)."""
    if ok(2**LOG_N_MAX):
        return None
    if not ok(1):
        return 0
    lo, hi = 1, 2**LOG_N_MAX
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _exact_in(shape_list: list[Shape], u: float, n: int) -> bool:
    return eps_exact(shape_list, n, 0.0, u)


def float_limits(shape_list: list[Shape]) -> dict[str, Any]:
    """The largest n proven exact in float64 / float32 (None: every n up to 2^60)."""
    out: dict[str, Any] = {}
    for fmt, u in UNIT_ROUNDOFF.items():
        limit = largest_n(functools.partial(_exact_in, shape_list, u))
        cap = 2 ** (53 if fmt == "float64" else 24)  # integer counts stay exact below 2^p
        out[fmt] = min(limit, cap) if limit is not None else cap
    binding = [
        f"layer {s.index} (comparison, after a comparison layer)"
        for k, s in enumerate(shape_list)
        if s.compares and k > 0 and shape_list[k - 1].compares
    ]
    out["binding_heads"] = binding or [
        f"layer {s.index} (comparison)" for s in shape_list if s.compares
    ]
    out["derivation"] = (
        "first-order forward error from the model's weights (docs/compiler.md, soft-ln): a "
        "pair written at scale 1/i is off relatively by i·E·u; a count of such pairs by that "
        "plus n·u (prefix sum); a comparison stays right while its error in x = (t + 1/2)/i "
        "is below 1/(4n); u = 2^-53 (float64), 2^-24 (float32); counts exact below 2^p"
    )
    return out


def eps_effect(shape_list: list[Shape], eps: float) -> dict[str, Any]:
    """What a layer norm with this ε does: the n from which the margin is below ¼ (between
    the two bounds), and the largest n at which every comparison is still proven right."""
    if not shape_list:  # no layer norm at all: the embedding is read directly
        return {
            "eps": eps,
            "margin_at_least_quarter_up_to_n": None,
            "margin_below_quarter_from_n": None,
            "exact_up_to_n": None,
        }
    below_lo = largest_n(lambda n: margin_bounds(shape_list, n, eps)[0] >= 0.25)
    above_hi = largest_n(lambda n: margin_bounds(shape_list, n, eps)[1] >= 0.25)
    exact = largest_n(lambda n: eps_exact(shape_list, n, eps))
    return {
        "eps": eps,
        "margin_at_least_quarter_up_to_n": below_lo,
        "margin_below_quarter_from_n": None if above_hi is None else above_hi + 1,
        "exact_up_to_n": exact,
    }


def margin_table(shape_list: list[Shape], ns: tuple[int, ...]) -> dict[str, Any]:
    """At each n (ε = 0): the smallest |pre-norm value| anywhere in the model (a lower bound:
    the pairs a comparison layer writes at ±one/n), the last layer norm's input std (bounds)
    and the output margin."""
    rows = {}
    for n in ns:
        if not shape_list:
            rows[str(n)] = {"pre_norm_min": 1.0, "last_sigma": [1.0, 1.0], "margin": 0.5}
            continue
        sc = scales(shape_list, n, 0.0)
        smallest = min(
            x.sigma_lo / math.sqrt(2 * s.after / s.width) for x, s in zip(sc, shape_list)
        )
        rows[str(n)] = {
            "pre_norm_min": smallest,
            "last_sigma": [sc[-1].sigma_lo, sc[-1].sigma_hi],
            "margin": margin_bounds(shape_list, n, 0.0)[0],
        }
    return rows


def layer_norm_section(ln: LNModel) -> dict[str, Any]:
    """The certificate's ``layer_norm`` entry: placement, ε, the margin as a function of n,
    and the effect of ε > 0."""
    sh = shapes(ln)
    last = sh[-1] if sh else None
    if last is None:
        scale = "no layer: the output reads the ±1 embedding"
    elif last.compares:
        scale = (
            f"the last layer norm's input has std between {last.a:.4g}/n and {last.b:.4g}/n "
            "(a comparison layer: pairs at ±one/n)"
        )
    else:
        scale = (
            f"the last layer norm's input has std between {last.a:.4g} and {last.b:.4g} (a "
            "conjunction layer: pairs at ±one); earlier comparison layers' inputs shrink like 1/i"
        )
    return {
        "placement": "post",
        "eps": LN_EPS,
        "margin": {
            "output": "y = 1/2 ± 1/2: exactly 0 or 1 at every position, a fixed margin 1/2",
            "pre_norm": scale,
            "values": margin_table(sh, (10, 100, 1000, 10**4, 10**5, 10**6)),
        },
        "eps_effect": {
            "statement": (
                "with eps > 0 layer norm divides by sqrt(sigma^2 + eps): the output becomes "
                "1/2 ± r/2, r = (1 + eps/sigma^2)^(-1/2), so the margin collapses once eps "
                "exceeds the squared pre-norm scale sigma^2 (~1/n^2 after a comparison); "
                "counts of Booleans weighted by r_j may also make a later comparison wrong"
            ),
            "at": [eps_effect(sh, e) for e in EPS_SHOWN],
        },
        "layers": [
            {
                "layer": s.index,
                "compares": s.compares,
                "pairs_in": s.before,
                "count_pairs": s.counts,
                "pairs_out": s.after,
                "a": s.a,
                "b": s.b,
            }
            for s in sh
        ],
    }

"""PARITY with layer norm (ε = 0), after Chiang & Cholak (ACL 2022): an unmasked two-layer
softmax transformer (τ = 1) with the bounded position features ``i/n``, ``(−1)^i`` and
``[i = n]``, exact at every length with a fixed margin, read at the last position.

Their construction (the exact PARITY solution and its layer-norm variant): the input is
doubled to ``(x, −x)`` so that layer norm only rescales; a uniform head computes ``k/n`` (the
number of 1s) and, from their CLS symbol, ``1/n``; a feed-forward writes the spike
``[i = k]/n`` from ``i/n``, ``k/n`` and ``1/n`` (three ReLUs); the second layer reads the
parity of the spike's position; a last feed-forward zeroes everything but the pair
``(z, −z)``, and layer norm with ε = 0 maps it to ``±√(d/2)``: the sign of a value of size
1/n² becomes a fixed ±1.

Here (own construction; cf. Chiang & Cholak 2022): hardsoft has no CLS symbol and counts
positions 1..n, so ``[i = n]`` marks the last position (its uniform average is ``1/n``) and
the spike sits at ``i = k + 1`` (``k = 0..n−1``) or, for ``k = n``, at ``i = n``; the
feed-forward multiplies it by the parity ``(−1)^k`` of its own position (gated by ``(−1)^i``),
and one uniform head averages it (their second layer uses two heads attending to the even
and the odd positions from the CLS symbol). The pre-norm value is
``z = (−1)^k c/n²`` with ``c`` between the bounds of :func:`margin`; ``y = ½ + ½·sign(z)``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from hardsoft.compile.bounds import UNIT_ROUNDOFF
from hardsoft.compile.ln_bounds import EPS_SHOWN, largest_n, write_error
from hardsoft.craft import (
    AttentionHead,
    CraftLayer,
    Embedding,
    LinearForm,
    Neuron,
    Residual,
    assemble,
)
from hardsoft.model.spec import LayerNormPlacement
from hardsoft.model.transformer import Transformer

FEATURES = ("1", "i/n", "(-1)^i", "[i=n]")
BOOLEANS = ("one", "tok:1", "even", "last")
"""The ±1 pairs of the embedding: the constant, the symbol 1, ``[i even]``, ``[i = n]``."""
GATE = 1.5
"""A failing gate subtracts ``2·GATE·one = 3·one``, more than any spike argument (≤ 2)."""
LABEL = (
    "own construction (no CLS symbol: [i = n] gives 1/n and the spike sits at i = k + 1; one "
    "uniform head reads its parity; cf. Chiang & Cholak (2022), exact PARITY with layer norm)"
)


def _pair(name: str) -> tuple[str, str]:
    return name, name + "~"


def _residual() -> Residual:
    res = Residual()
    for name in (*BOOLEANS, "pos", "k", "inv", "v", "z"):
        for nm in _pair(name):
            res.add(nm)
    return res


def _embedding() -> Embedding:
    def both(name: str, w: float) -> LinearForm:
        return {name: w, name + "~": -w}

    return Embedding(
        tokens={"0": both("tok:1", -1.0), "1": both("tok:1", 1.0)},
        features={
            "pos:1": {**both("one", 1.0), **both("last", -1.0)},
            "pos:i/n": both("pos", 1.0),
            "pos:(-1)^i": both("even", 1.0),
            "pos:[i=n]": both("last", 2.0),
        },
        output_bias=(0.5,),
        layer_norm=LayerNormPlacement.POST,
        ln_eps=0.0,
    )


def _counts() -> CraftLayer:
    """Layer 1's head: ``k/n`` (the 1s) and ``1/n`` (the last position), uniform, no mask."""
    output: dict[str, LinearForm] = {}
    for name, b in (("k", "tok:1"), ("inv", "last")):
        value = {b: 0.5, "one": 0.5}
        output[name], output[name + "~"] = value, {x: -w for x, w in value.items()}
    return CraftLayer(heads=[AttentionHead("softmax", "none", [], [], output)])


def _gated(arg: LinearForm, gates: list[tuple[str, float]], w: float) -> Neuron:
    """``w·ReLU(arg − GATE·Σ(one − s·g))``: ``arg`` where every gate ``s·g`` holds, else 0."""
    form = dict(arg)
    for gate, sign in gates:
        form[gate] = form.get(gate, 0.0) + GATE * sign
        form["one"] = form.get("one", 0.0) - GATE
    return Neuron({k: v for k, v in form.items() if v}, 0.0, {"v": w, "v~": -w})


def _spike(layer: CraftLayer) -> None:
    """``v = (−1)^(i−1)·[k = i − 1] + (−1)^i·[i = n]·[k = n]`` in units of ``1/n``."""

    def y(shift: float) -> LinearForm:  # (k − i + 1 + shift)/n
        return {"k": 1.0, "pos": -1.0, "inv": 1.0 + shift}

    for sign, parity in ((1.0, -1.0), (-1.0, 1.0)):  # odd i: +, even i: −
        for shift, w in ((1.0, 1.0), (0.0, -2.0), (-1.0, 1.0)):
            layer.neurons.append(_gated(y(shift), [("even", parity)], sign * w))
    for sign, parity in ((1.0, 1.0), (-1.0, -1.0)):  # at i = n: even +, odd −
        layer.neurons.append(_gated(y(0.0), [("last", 1.0), ("even", parity)], sign))


def _readout_layers() -> list[CraftLayer]:
    """Layer 2: a uniform head averages ``v`` into ``z``; the feed-forward cancels every
    other pair, so the last layer norm sees ``(z, −z)`` alone."""
    head = AttentionHead("softmax", "none", [], [], {"z": {"v": 1.0}, "z~": {"v": -1.0}})
    layer = CraftLayer(heads=[head])
    for name in (*BOOLEANS, "pos", "k", "inv", "v"):
        pos, neg = _pair(name)
        layer.neurons.append(Neuron({pos: 1.0}, 0.0, {pos: -1.0, neg: 1.0}))
        layer.neurons.append(Neuron({pos: -1.0}, 0.0, {pos: 1.0, neg: -1.0}))
    return [layer]


def parity_layernorm() -> Transformer:
    """The model (``parity-even``: accept iff the number of 1s is even), with its
    certificate in ``meta["certificate"]`` and the last-position readout declared."""
    residual = _residual()
    first = _counts()
    _spike(first)
    layers = [first, *_readout_layers()]
    kappa = math.sqrt(residual.dim / 2)
    model = assemble(
        alphabet=("0", "1"),
        position_features=FEATURES,
        residual=residual,
        layers=layers,
        outputs=[{"z": 0.5 / kappa}],
        name="PARITY with layer norm (Chiang & Cholak 2022)",
        embedding=_embedding(),
    )
    model.meta["acceptance"] = {
        "kind": "coordinate",
        "index": 0,
        "threshold": 0.5,
        "language": "parity-even",
        "positions": "last",
    }
    model.meta["kind"] = "parity-layernorm"
    model.meta["certificate"] = certificate(model, layers)
    return model


# ------------------------------------------------------------------ the certificate
@dataclass(frozen=True)
class Bounds:
    """``|z| ≥ c_lo/n²`` and ``≤ c_hi/n²`` before the last layer norm, at length n."""

    c_lo: float
    c_hi: float


def z_bounds(d: int, n: int, eps: float = 0.0) -> Bounds:
    """The scale factors of the three layer norms before z (module docstring): the first
    sees 4 pairs ±1 and 3 pairs of size ≤ 1, the next two one extra pair of size ≤ s/n and
    ≤ s/n² (every other entry unit-variance after a layer norm)."""
    s1_lo = 1.0 / math.sqrt((2 * 4 + 6) / d + eps)
    s1_hi = math.sqrt(d / 8)
    s2_lo = 1.0 / math.sqrt(1.0 + 2 * (s1_hi / n) ** 2 / d + eps)
    s3_lo = 1.0 / math.sqrt(1.0 + 2 * (s1_hi / n**2) ** 2 / d + eps)
    return Bounds(s1_lo * s2_lo * s3_lo, s1_hi)


def margin(d: int, n: int, eps: float) -> tuple[float, float]:
    """(lower, upper) bounds of the output margin at length n: ``½ r`` with
    ``r = (1 + ε d/(2 z²))^(-1/2)`` (1 at ε = 0)."""
    b = z_bounds(d, n, eps)
    if not eps:
        return 0.5, 0.5

    def half(c: float) -> float:
        z = c / n**2
        return 0.5 / math.sqrt(1.0 + eps * d / (2 * z * z))

    return half(b.c_lo), half(b.c_hi)


def _exact(d: int, noise: float, n: int) -> bool:
    return noise * n**2 < z_bounds(d, n).c_lo


def float_limits(d: int, error: float) -> dict[str, Any]:
    """Every non-spike position adds rounding ≤ ``E·u`` (in units of one) to the average the
    second layer takes; the signal is ``≥ c/n²``: exact while ``E u < c/n²``."""
    out: dict[str, Any] = {}
    for fmt, u in UNIT_ROUNDOFF.items():
        out[fmt] = largest_n(functools.partial(_exact, d, error * u))
    out["binding_heads"] = ["2.0 parity (the average of the spike against rounding)"]
    out["derivation"] = (
        "first-order forward error from the weights: the spike feed-forward is off by at "
        "most E·u (units of one) at every position, the head averages it against the "
        "signal c/n^2: exact while E·u·n^2 < c"
    )
    return out


def _margin_holds(d: int, eps: float, which: int, n: int) -> bool:
    return margin(d, n, eps)[which] >= 0.25


def certificate(model: Transformer, layers: list[CraftLayer]) -> dict[str, Any]:
    """The certificate: what the model is, its margin as a function of n, where float
    rounding stops it, and what ε > 0 does (the sign stays right, the margin collapses)."""
    d = model.spec.d_model
    error = write_error(layers[0].neurons, {"v"})
    heads = [
        {"layer": 0, "head": 0, "gadget": "count", "weighting": "softmax", "mask": "none",
         "theorem": LABEL, "error_bound": 0.0},
        {"layer": 1, "head": 0, "gadget": "parity", "weighting": "softmax", "mask": "none",
         "theorem": LABEL, "error_bound": 0.0},
    ]  # fmt: skip
    values = {}
    for n in (10, 100, 1000, 10**4, 10**5, 10**6):
        b = z_bounds(d, n)
        values[str(n)] = {"pre_norm_min": b.c_lo / n**2, "margin": 0.5}
    effects = []
    for eps in EPS_SHOWN:
        at_least = largest_n(functools.partial(_margin_holds, d, eps, 0))
        above = largest_n(functools.partial(_margin_holds, d, eps, 1))
        effects.append(
            {
                "eps": eps,
                "margin_at_least_quarter_up_to_n": at_least,
                "margin_below_quarter_from_n": None if above is None else above + 1,
                "exact_up_to_n": None,
            }
        )
    return {
        "formula": "PARITY (parity-even: an even number of 1s)",
        "target": "soft-ln",
        "theorem": LABEL,
        "route": "layernorm",
        "causal": False,
        "masks": ["none"],
        "weightings": ["softmax"],
        "position_features": [
            {"name": f, "bounded": True, "depends_on_n": f in ("i/n", "[i=n]")} for f in FEATURES
        ],
        "bounded_position_features": True,
        "tau": "1",
        "tau_order": "tau = 1 (only uniform heads)",
        "heads": heads,
        "layers": len(model.blocks),
        "heads_total": len(heads),
        "residual_width": d,
        "parameters": model.parameter_count(),
        "readout": "the last position only (an unmasked encoder decides the whole word)",
        "float_limits": float_limits(d, error),
        "layer_norm": {
            "placement": "post",
            "eps": 0.0,
            "margin": {
                "output": "y = 1/2 ± 1/2 at the last position: a fixed margin 1/2",
                "pre_norm": "the last layer norm sees only (z, -z), |z| >= c/n^2",
                "values": values,
            },
            "eps_effect": {
                "statement": (
                    "with eps > 0 the last layer norm gives ±sqrt(d/2)·r, r = (1 + eps·d/"
                    "(2 z^2))^(-1/2): the sign (the answer) stays right at every n, the margin "
                    "r/2 collapses once eps exceeds the squared pre-norm scale z^2 ~ 1/n^4"
                ),
                "at": effects,
            },
        },
    }

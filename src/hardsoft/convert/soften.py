"""Hard attention → softmax with temperature, for any hard-attention model.

Yang, Strobl, Chiang & Angluin (TACL 2026) show that temperature scaling lets softmax
transformers simulate general hard-attention transformers, with τ set by the minimum gap between
the maximal attention score and the others. :func:`soften` builds that softmax model for a
concrete hardsoft model and certifies it (docs/soften.md):

1. **gaps** (:mod:`hardsoft.convert.gaps`): certified from a grid or a compiler's declaration,
   measured exactly on given inputs (or on a stated sample), or given;
2. **tie-break**: every unique-hard head gets one more score dimension ``∓δ_h(n)·j/n``
   (leftmost: −, rightmost: +) with ``δ_h = γ_h/2``; the features it reads (``i/n`` for the key,
   ``1`` or ``(1/n)^p`` for the query) are new residual coordinates written by ``W_pos`` only, so
   nothing else changes (models with layer norm are refused: the new coordinates would change
   its statistics);
3. **temperature** ``τ_h(n) = θ γ'_h(n)`` per head, γ'_h the gap the head's softmax sees (after
   the tie-break), θ the largest value whose error bound (:mod:`hardsoft.convert.bound`) is at
   most ε; the head with the smallest gap has the smallest τ (the paper's "τ set by the
   minimum gap"), the others are not made colder than they need;
4. every hard head becomes a softmax head at its τ_h(n); all other weights are copied.

>>> import torch
>>> from hardsoft.model import random_model
>>> from hardsoft.convert import soften
>>> hard = random_model(weighting="leftmost", layers=1, seed=0, dtype=torch.float64)
>>> result = soften(hard, gap_inputs=["0110", "10", "111000"])
>>> result.gap_source, result.error_bound <= 0.25
('measured', True)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from hardsoft.convert import bound as B
from hardsoft.convert import coverage as C
from hardsoft.convert.gaps import (
    INF,
    HeadGap,
    certified_gaps,
    class_gaps,
    declared_hints,
    given_gaps,
    measured_gaps,
    sample_words,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import HeadSpec, LayerSpec, ModelSpec, Weighting, eval_tau
from hardsoft.model.transformer import Transformer

DEFAULT_EPS = 0.25
DEFAULT_N = 1000
DEFAULT_SAMPLES = 16
THEOREM = (
    "Yang, Strobl, Chiang & Angluin (TACL 2026): temperature scaling simulates general "
    "hard attention, tau set by the minimum attention gap"
)


@dataclass
class SoftenResult:
    """The softened model and its certificate (``to_dict`` is the CLI's JSON)."""

    model: Transformer
    tau: str
    taus: dict[tuple[int, int], str | None]
    theta: float
    gap: float
    gap_source: str
    error_bound: float
    eps: float
    n: int
    heads: list[HeadGap]
    constants: B.Constants
    inputs: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    float_margin: float = INF
    hard: Transformer | None = field(default=None, repr=False)
    fallback: tuple[float, int] = (1.0, 0)
    case: str = C.MEASURED

    def at_theta(self, theta: float) -> SoftenResult:
        """The same gaps and constants at another θ (a new model and its bound, which may
        exceed ``eps``): for experiments that sweep the temperature."""
        if self.hard is None or not (math.isfinite(theta) and theta > 0):
            raise HardsoftError(f"theta must be a positive number, got {theta}")
        return _realise(
            self.hard, self.heads, self.fallback, self.constants, theta, self.gap_source,
            self.inputs, [n for n in self.notes if "float64" not in n], self.eps, self.case,
        )  # fmt: skip

    def covers(self) -> str:
        """Which inputs ``error_bound`` holds on, in short (the JSON ``covers``)."""
        return C.COVERS[self.case]

    def coverage(self) -> str:
        """Which inputs ``error_bound`` holds on, in a sentence."""
        if self.case == C.NOTHING:
            return "every input (the model has no hard attention heads and is unchanged)"
        if self.case == C.MEASURED and self.inputs:
            return (
                f"the {self.inputs['words']} measured words only "
                f"({self.inputs.get('description', 'given words')})"
            )
        if self.case == C.GIVEN:
            return f"every input of length <= {self.n} whose gaps are at least the given gap"
        if self.inputs:  # exhaustive
            words = self.inputs["words"]
            return f"every input of length <= {self.n} (gaps measured on all {words} of them)"
        return f"every input of length <= {self.n}"

    def tau_at(self, n: int) -> float:
        return eval_tau(self.tau, n)

    def to_dict(self) -> dict[str, Any]:
        is_value = "n" not in self.tau
        return {
            "theorem": THEOREM,
            "tau": None if self.case == C.NOTHING else float(self.tau) if is_value else self.tau,
            "tau_at_n": self.tau_at(self.n),
            "theta": self.theta if math.isfinite(self.theta) else None,
            "gap": self.gap if self.gap != INF else None,
            "gap_source": self.gap_source,
            "case": self.case,
            "error_bound": self.error_bound,
            "eps": self.eps,
            "n": self.n,
            "covers": self.covers(),
            "coverage": self.coverage(),
            "inputs": self.inputs,
            "rounding": "with error_bound < 1/2, rounding 0/1 outputs recovers the hard model's",
            "float64_gap_margin": self.float_margin,
            "heads": [{**h.to_dict(), "tau": self.taus.get((h.layer, h.head))} for h in self.heads],
            "constants": self.constants.to_dict(),
            "notes": self.notes,
        }


def _check_options(model: Transformer, eps: float, gap: Any, gap_inputs: Any, n: Any) -> None:
    if not (0 < eps < 0.5):
        raise HardsoftError(
            f"--eps must be in (0, 1/2) so that rounding recovers exact outputs, got {eps:g}"
        )
    if gap is not None and gap_inputs is not None:
        raise HardsoftError("give --gap or --gap-inputs (inputs to measure it on), not both")
    if n is not None and n < 1:
        raise HardsoftError(f"--n must be >= 1, got {n}")
    if model.spec.layer_norm != "none":
        raise HardsoftError(
            f"the model has layer norm ({model.spec.layer_norm}); soften supports models "
            "without it (the tie-break coordinates would change its statistics, and the "
            "bound has no layer-norm term)"
        )


Gaps = tuple[list[HeadGap], str, int, "list[torch.Tensor] | None", "dict | None", list[str], str]


def _gaps(
    model: Transformer,
    gap: Any,
    gap_inputs: Sequence[str] | None,
    n: int | None,
    samples: int,
    seed: int,
) -> Gaps:
    """Heads' gaps, their source, N, measured activations, the inputs' description, notes and
    the coverage case (:mod:`hardsoft.convert.coverage`)."""
    notes: list[str] = []
    if gap_inputs is not None:
        words = [w for w in gap_inputs if w]
        longest = max((len(w) for w in words), default=0)
        if n is not None and n < longest:
            raise HardsoftError(f"the --gap-inputs words go up to length {longest} > --n {n}")
        lengths = sorted({len(w) for w in words})
        info: dict[str, Any] = {"kind": "words", "words": len(words), "lengths": lengths}
        info["description"] = f"{len(words)} given words (lengths {lengths[0]}..{longest})"
        m = measured_gaps(model, words, info)
        return m.heads, "measured", n or longest, m.activations, info, notes, C.MEASURED
    n_max = n or DEFAULT_N
    if gap is not None:
        return given_gaps(model, gap, n_max), "given", n_max, None, None, notes, C.GIVEN
    try:
        return certified_gaps(model, n_max), "certified", n_max, None, None, notes, C.GRID
    except HardsoftError as exc:
        reason = str(exc)
    try:
        m = class_gaps(model)
        notes.append(f"no grid certificate ({reason}); gaps certified by class propagation")
        return m.heads, "classes", n_max, m.activations, None, notes, C.ALL_WORDS
    except HardsoftError as exc:
        reason += f"; no class certificate ({exc})"
    every = C.exhaustive_words(tuple(model.spec.alphabet), n_max)
    if every is not None:
        words, info = every
        notes.append(f"no grid certificate ({reason}); gaps measured on every word up to n")
        m = measured_gaps(model, words, info)
        return m.heads, "exhaustive", n_max, m.activations, info, notes, C.ALL_WORDS
    notes.append(
        f"no certified gap ({reason}), and the {C.word_count(len(model.spec.alphabet), n_max)} "
        f"words up to n = {n_max} are too many to measure all (limit {C.EXHAUSTIVE_LIMIT}); "
        "measured on a stated sample instead"
    )
    words, info = sample_words(tuple(model.spec.alphabet), n_max, samples, seed)
    info["words"] = len(words)
    m = measured_gaps(model, words, info)
    return m.heads, "measured", n_max, m.activations, info, notes, C.MEASURED


def temperature_gap(heads: list[HeadGap]) -> tuple[float, int]:
    """``c/n**p``, a lower bound on every head's effective gap (``c = min c_h``, ``p = max
    p_h``), or (1, 0) when no head has one: the temperature gap of scored heads that never
    saw a key below their maximum."""
    finite = [h.effective_gap() for h in heads if h.effective_gap()[0] != INF and not _exact(h)]
    if not finite:
        return 1.0, 0
    return min(c for c, _ in finite), max(p for _, p in finite)


def _exact(h: HeadGap) -> bool:
    return h.uniform and not h.weighting.is_unique_hard


def soften(
    model: Transformer,
    *,
    n: int | None = None,
    gap: float | str | None = None,
    gap_inputs: Sequence[str] | None = None,
    eps: float = DEFAULT_EPS,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    theta: float | None = None,
) -> SoftenResult:
    """The softmax model that simulates the hard-attention ``model`` (module docstring).

    ``gap_inputs``: words to measure the gaps on (the bound then covers them); ``gap``: a gap
    (number or expression in n) for every scored head; neither: certified if possible, else
    measured on ``samples`` random words per length (seeded). ``n``: the largest length the
    bound covers (default: the longest input, or 1000). ``eps`` in (0, 1/2): the target
    bound on |softened − hard| over every output. ``theta``: use τ(n) = θ g(n) with this θ
    instead of the largest one meeting ``eps`` (for experiments; the bound may then exceed
    ``eps``).
    """
    if not any(h.spec.weighting.is_hard for b in model.blocks for h in b.heads):
        return unchanged(model, eps, n)
    _check_options(model, eps, gap, gap_inputs, n)
    heads, source, n_max, acts, info, notes, case = _gaps(model, gap, gap_inputs, n, samples, seed)
    fallback = temperature_gap(heads)
    booleans = declared_hints(model)[3] if acts is None else None
    k = B.constants(model, heads, fallback, n_max, acts, booleans)
    if theta is None:
        try:
            theta = B.solve_theta(k, eps)
        except ValueError:
            raise HardsoftError(
                f"no temperature brings the error bound below {eps:g} at n <= {n_max}"
            ) from None
    elif not (math.isfinite(theta) and theta > 0):
        raise HardsoftError(f"theta must be a positive number, got {theta}")
    return _realise(model, heads, fallback, k, theta, source, info, notes, eps, case)


def unchanged(model: Transformer, eps: float, n: int | None) -> SoftenResult:
    """A model with no hard heads: itself (a copy), with a note and no heads (pipelines
    soften whatever they are given)."""
    if not (0 < eps < 0.5):
        raise HardsoftError(f"--eps must be in (0, 1/2), got {eps:g}")
    soft = copy.deepcopy(model)
    n_max = n or DEFAULT_N
    note = "the model has no hard attention heads: written back unchanged"
    k = B.Constants(n_max, 0.0, 0.0, [], [])
    result = SoftenResult(
        soft, "1", {}, math.inf, INF, "none", 0.0, eps, n_max, [], k, None, [note], INF,
        model, (1.0, 0), C.NOTHING,
    )  # fmt: skip
    soft.meta["softened"] = {k_: v for k_, v in result.to_dict().items() if k_ != "constants"}
    return result


def _realise(
    hard: Transformer,
    heads: list[HeadGap],
    fallback: tuple[float, int],
    k: B.Constants,
    theta: float,
    source: str,
    info: dict | None,
    notes: list[str],
    eps: float,
    case: str,
) -> SoftenResult:
    """The softmax model at θ and its certificate."""
    notes = list(notes)
    n_max = k.n_max
    err, _ = B.error_bound(k, theta)
    margin = B.float_margin(k)
    if margin < 1e3:
        notes.append(
            f"the smallest gap is only {margin:.3g} times the float64 rounding of its scores: "
            "the float64 model may deviate from the exact-arithmetic bound"
        )
    taus = {
        (h.layer, h.head): None if _exact(h) else _tau_text(theta, *h.temperature_gap(fallback))
        for h in heads
    }
    smallest = min((t for t in taus.values() if t), key=lambda t: eval_tau(t, n_max), default="1")
    hard_gaps = [_reported_gap(h, n_max) for h in heads]
    soft = build_softened(hard, heads, taus)
    result = SoftenResult(
        model=soft,
        tau=smallest,
        taus=taus,
        theta=theta,
        gap=min((g for g in hard_gaps if g is not None), default=INF),
        gap_source=source,
        error_bound=err,
        eps=eps,
        n=n_max,
        heads=heads,
        constants=k,
        inputs=info,
        notes=notes,
        float_margin=margin,
        hard=hard,
        fallback=fallback,
        case=case,
    )
    soft.meta["softened"] = {k_: v for k_, v in result.to_dict().items() if k_ != "constants"}
    _replace_float_limits(soft, margin, n_max)
    return result


def _replace_float_limits(soft: Transformer, margin: float, n_max: int) -> None:
    """A softened compiled model keeps its certificate, but not the hard model's float limits
    (its heads are softmax now): float64 up to the covered n while every head's smallest gap
    holds at least two of its scores' float64 roundings (the soften's ``float_margin``), else
    none; float32 none (not derived)."""
    cert = soft.meta.get("certificate")
    if not isinstance(cert, dict) or "float_limits" not in cert:
        return
    ok = margin >= 2.0
    soft.meta["certificate"] = {
        **cert,
        "float_limits": {
            "float64": n_max if ok else 0,
            "float32": 0,
            "binding": {
                "float64": (
                    f"softened: its gaps hold {margin:.3g} float64 roundings of the scores up "
                    f"to n = {n_max:,}"
                    if ok
                    else f"softened: float_margin {margin:.3g} < 2"
                ),
                "float32": "softened: not derived in float32",
            },
            "binding_heads": [],
            "derivation": "hardsoft soften (docs/soften.md): float_margin, float64 only",
        },
    }


def _reported_gap(h: HeadGap, n: int) -> float | None:
    """The gap a head's softmax relies on at length n: its hard gap, or, when every row it saw
    is tied (no key below the maximum), the gap its tie-break leaves; None for heads with no
    scores."""
    if h.uniform and not h.weighting.is_unique_hard:
        return None
    if h.coef != INF:
        return h.coef / n**h.power
    c, p = h.effective_gap()
    return None if c == INF else c / n**p


def _tau_text(theta: float, c: float, p: int) -> str:
    return f"{theta * c!r}" if p == 0 else f"{theta * c!r}/n**{p}"


# ---------------------------------------------------------------------------- the model
def _tiebreak_features(heads: list[HeadGap]) -> list[str]:
    """The features the tie-breaks read: ``i/n`` (keys) and ``1`` or ``1/n*...*1/n``."""
    powers = sorted({h.tiebreak()[1] for h in heads if h.needs_tiebreak})
    if not powers:
        return []
    return ["i/n"] + ["1" if q == 0 else "*".join(["1/n"] * q) for q in powers]


def _soft_spec(model: Transformer, heads: list[HeadGap], taus: dict, extra: list[str]) -> ModelSpec:
    spec = model.spec
    by_key = {(h.layer, h.head): h for h in heads}
    canon = [parse_feature(f).name for f in spec.position_features]
    features = list(spec.position_features) + [f for f in extra if f not in canon]
    layers = []
    for ell, layer in enumerate(spec.layers):
        new_heads = []
        for h, hs in enumerate(layer.heads):
            g = by_key.get((ell, h))
            if g is None:
                new_heads.append(hs)
                continue
            tb = g.needs_tiebreak
            new_heads.append(
                HeadSpec(
                    weighting=Weighting.SOFTMAX,
                    mask=hs.mask,
                    tau=taus[(ell, h)],
                    d_head=hs.d_head + (1 if tb else 0),
                    d_value=hs.value_dim,
                    scale=hs.scale and not tb,
                )
            )
        layers.append(LayerSpec(heads=tuple(new_heads), d_ff=layer.d_ff))
    return ModelSpec(
        alphabet=spec.alphabet,
        d_model=spec.d_model + len(extra),
        layers=tuple(layers),
        position_features=tuple(features),
        layer_norm=spec.layer_norm,
        ln_eps=spec.ln_eps,
        d_out=spec.d_out,
        name=f"softened[{spec.name}]" if spec.name else "softened",
        extra=dict(spec.extra),
    )


def build_softened(model: Transformer, heads: list[HeadGap], taus: dict) -> Transformer:
    """The softmax model: same weights (zero-padded to the new coordinates), every hard head
    softmax at its temperature ``taus[(layer, head)]``, tie-break dimensions for unique-hard
    heads (module docstring)."""
    extra = _tiebreak_features(heads)
    spec = _soft_spec(model, heads, taus, extra)
    soft = Transformer(spec, dtype=model.dtype).to(model.device)
    d = model.spec.d_model
    new_sd = soft.state_dict()
    with torch.no_grad():
        for name, old in model.state_dict().items():
            new_sd[name].zero_()
            new_sd[name][tuple(slice(0, s) for s in old.shape)] = old
        coord = {f: d + k for k, f in enumerate(extra)}
        rows = [parse_feature(f).name for f in spec.position_features]
        for f, c in coord.items():
            new_sd["W_pos"][rows.index(parse_feature(f).name), c] = 1.0
        for h in heads:
            if h.needs_tiebreak:
                _add_tiebreak(model, new_sd, h, coord)
    soft.load_state_dict(new_sd)
    soft.meta = copy.deepcopy(model.meta)
    if isinstance(soft.meta.get("residual"), list):
        soft.meta["residual"] = soft.meta["residual"] + [f"tiebreak:{f}" for f in extra]
    return soft


def _add_tiebreak(model: Transformer, sd: dict, h: HeadGap, coord: dict[str, int]) -> None:
    """Fold the head's score scale into W_Q and write the tie-break dimension: query
    ``∓δ·(1/n)^p`` (leftmost −, rightmost +), key ``j/n``."""
    hs = model.spec.layers[h.layer].heads[h.head]
    pre = f"blocks.{h.layer}.heads.{h.head}"
    if hs.scale and hs.d_head:
        sd[f"{pre}.W_Q"][: model.spec.d_model, : hs.d_head] /= math.sqrt(hs.d_head)
    delta, power = h.tiebreak()
    sign = -1.0 if h.weighting == Weighting.LEFTMOST else 1.0
    qf = "1" if power == 0 else "*".join(["1/n"] * power)
    sd[f"{pre}.W_Q"][coord[qf], hs.d_head] = sign * delta
    sd[f"{pre}.W_K"][coord["i/n"], hs.d_head] = 1.0

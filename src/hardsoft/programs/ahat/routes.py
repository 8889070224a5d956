"""Two routes from a §6 task of Yang, Strobl, Chiang & Angluin (TACL 2026) to a transformer:

- ``tieless`` (the default): the average-hard program of ``programs/ahat/library.py``, checked
  uniform–tieless and converted to softmax with the certified τ(n) of their Theorem 26
  (τ = Θ(1/(n log n)), large constants inside the log). Targets ``average-hard`` and
  ``soft-temperature``.
- ``logic``: the task written as temporal-logic formulas with named outputs
  (:mod:`hardsoft.programs.ahat.logic_route`) and compiled by the logic compiler (causal: future
  masks only), cf. their Corollary 18 (the future-masked form of Corollary 17); the
  certificate's ``theorem`` says whether the model is that construction (with the default
  strict masks it is not: own constructions, cf. Cor. 18). Targets
  ``hard``, ``soft-temperature`` (τ = 1/(8n), Θ(1/n)) and ``soft-pe`` (τ = 1).

:func:`build` returns a :class:`RouteModel` with the model and a certificate of one shape for
both routes: ``certificate["values"][str(n)]["tau"]`` is the temperature at n.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import Formula
from hardsoft.model.spec import ModelSpec
from hardsoft.model.transformer import Transformer
from hardsoft.programs.ahat.library import PROGRAM_ROUTES
from hardsoft.programs.ahat.logic_route import LOGIC_TASKS, task_formulas, task_reference_name
from hardsoft.programs.ahat.soften import DEFAULT_EPS
from hardsoft.programs.compiled import compact_text, logic_certificate, model_sizes

ROUTES = ("tieless", "logic", "layernorm")
ROUTE_TARGETS = {
    "tieless": ("average-hard", "soft-temperature"),
    "logic": ("hard", "soft-temperature", "soft-pe"),
    "layernorm": ("soft-ln",),
}


@dataclass
class RouteModel:
    """A built task model. ``reference``: the ``hardsoft.languages`` name whose oracle it
    computes; ``formulas``: the named outputs (logic route); ``built``: the tieless build
    (program, tieless report) for the tieless route."""

    name: str
    route: str
    target: str
    model: Transformer
    certificate: dict | None
    reference: str
    formulas: dict[str, Formula] | None = None
    built: Any = None
    sizes: dict[str, int] = field(default_factory=dict)


def check_route(name: str, route: str, target: str) -> None:
    """One-line errors for an unknown route, a program without that route, or a target the
    route cannot build."""
    if route not in ROUTES:
        raise HardsoftError(f"unknown route {route!r} (one of {', '.join(ROUTES)})")
    routes = PROGRAM_ROUTES.get(name)
    if routes is not None and route not in routes:
        why = (
            "; Yang et al. (arXiv:2412.09925v1) §6 conjecture that DYCK-2 is not definable in LTL"
            if name == "dyck"
            else ""
        )
        raise HardsoftError(
            f"program {name} has no {route} route (it has: {', '.join(routes)}){why}"
        )
    targets = ROUTE_TARGETS[route]
    if target not in targets:
        others = [r for r in routes or ROUTES if r != route and target in ROUTE_TARGETS[r]]
        hint = f"; {target} is built by --route {others[0]}" if others else ""
        raise HardsoftError(
            f"--route {route} builds --target {' | '.join(targets)}, not {target!r}{hint}"
        )


def build(
    name: str,
    k: int | None = None,
    target: str = "average-hard",
    *,
    route: str = "tieless",
    eps: float = DEFAULT_EPS,
    n: int = 1000,
    masks: str | None = None,
    exhaustive_up_to: int = 5,
    sampled_lengths: tuple[int, ...] = (32, 128),
) -> RouteModel:
    """Build program ``name`` (``khop``/``dyck`` need ``k``) for ``target`` on ``route``.

    ``eps``, ``exhaustive_up_to`` and ``sampled_lengths`` are the tieless route's (the bound's
    output error and the uniform–tieless check); ``n`` and ``masks`` (``strict``, the
    compiler's default, or ``nonstrict``: only the masks none / j ≤ i / j ≥ i of the paper's
    constructions) are the logic route's.
    """
    check_route(name, route, target)
    if route == "layernorm":
        return build_layernorm(name)
    if route == "tieless" and masks is not None:
        raise HardsoftError(
            "--masks applies to --route logic (the tieless programs fix their masks)"
        )
    if route == "tieless":
        from hardsoft.programs.ahat.build import build as build_tieless

        b = build_tieless(
            name,
            k,
            target,
            eps=eps,
            exhaustive_up_to=exhaustive_up_to,
            sampled_lengths=sampled_lengths,
        )
        prog = b.compiled.program
        cert = b.certificate
        if cert is not None:
            cert["route"] = "tieless"  # the same dict as the model's meta["certificate"]
        b.model.meta["route"] = "tieless"
        return RouteModel(
            prog.name, route, target, b.model, cert, prog.reference, None, b, model_sizes(b.model)
        )
    return build_logic(name, k, target, n=n, masks=masks or "strict")


def build_layernorm(name: str) -> RouteModel:
    """The layer-norm route: PARITY by the construction of Chiang & Cholak (2022)
    (:mod:`hardsoft.compile.parity_ln`), unmasked, read at the last position."""
    from hardsoft.compile.parity_ln import parity_layernorm

    model = parity_layernorm()
    model.meta["route"] = "layernorm"
    cert = model.meta["certificate"]
    return RouteModel(
        name, "layernorm", "soft-ln", model, cert, "parity-even", None, None, model_sizes(model)
    )


def build_logic(
    name: str, k: int | None, target: str, *, n: int = 1000, masks: str = "strict"
) -> RouteModel:
    """The logic route: compile the task's named formulas (causal: future masks only)."""
    from hardsoft.compile import compile_formula

    check_route(name, "logic", target)
    formulas, alphabet = task_formulas(name, k)
    reference = task_reference_name(name, k)
    model = compile_formula(
        formulas, alphabet, target=target, causal=True, masks=masks, n=n, name=reference
    )
    cert = logic_certificate(model.meta["certificate"], target)
    cert["definition"] = LOGIC_TASKS[name][3]
    model.meta["certificate"] = cert
    if "formulas" in model.meta:
        model.meta["formulas"] = {nm: compact_text(t) for nm, t in model.meta["formulas"].items()}
    model.meta["route"] = "logic"
    model.meta["task"] = reference
    sizes = model_sizes(model)
    return RouteModel(reference, "logic", target, model, cert, reference, formulas, None, sizes)


def with_tau(model: Transformer, tau: str) -> Transformer:
    """The same model with every softmax head that has a temperature set to ``tau`` (heads at
    τ = 1, such as uniform counting heads, keep it)."""
    spec = model.spec
    layers = [
        dataclasses.replace(
            layer,
            heads=tuple(
                dataclasses.replace(h, tau=tau) if not h.is_hard and h.tau else h
                for h in layer.heads
            ),
        )
        for layer in spec.layers
    ]
    new_spec = ModelSpec.from_dict(
        {**spec.to_dict(), "layers": [dataclasses.asdict(x) for x in layers]}
    )
    out = Transformer(new_spec, dtype=model.dtype).to(model.device)
    out.load_state_dict(model.state_dict())
    return out


def largest_exact_tau_logic(
    model: Transformer,
    formulas: dict[str, Formula],
    words: list[str],
    lo: float,
    hi: float = 10.0,
    iters: int = 18,
) -> float:
    """Bisection (in log τ) for the largest constant τ in ``[lo, hi]`` at which the logic
    route's softmax model, rounded, still equals every output formula's value (the logic
    evaluator) at every position of ``words`` (equal lengths). Assumes exactness is monotone
    in τ; ``lo`` (the certified τ(n)) must be exact. The same search as
    :func:`hardsoft.programs.ahat.verify.largest_exact_tau` for the tieless route."""
    from hardsoft.logic import evaluate

    alphabet = list(model.spec.alphabet)
    names = model.spec.output_names
    want = np.stack([evaluate(formulas[nm], words, alphabet) for nm in names], axis=-1)

    def exact(tau: float) -> bool:
        out = np.stack(with_tau(model, repr(float(tau))).run_words(words))
        return bool(np.array_equal(np.rint(out), want))

    if not exact(lo):
        raise HardsoftError(f"the model is not exact at the lower end tau = {lo:.3g}")
    if exact(hi):
        return hi
    a, b = math.log(lo), math.log(hi)
    for _ in range(iters):
        mid = (a + b) / 2
        if exact(math.exp(mid)):
            a = mid
        else:
            b = mid
    return math.exp(a)


def tau_ratio(cert: dict | None, a: int = 1000, b: int = 5000) -> float:
    """``τ(b)/τ(a)`` from a certificate's ``values`` (NaN without temperatures): 1/5 means
    τ = Θ(1/n) between 1000 and 5000."""
    if not cert or str(a) not in cert.get("values", {}):
        return math.nan
    return cert["values"][str(b)]["tau"] / cert["values"][str(a)]["tau"]


__all__ = [
    "ROUTES",
    "ROUTE_TARGETS",
    "RouteModel",
    "build",
    "build_logic",
    "check_route",
    "largest_exact_tau_logic",
    "tau_ratio",
    "with_tau",
]

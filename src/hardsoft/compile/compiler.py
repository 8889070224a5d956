"""The compiler: formula → IR DAG → scheduled craft blocks → weights → certificate.

:func:`compile_formula` lowers the formula (or several named formulas) to the IR of
:mod:`hardsoft.compile.ir` (every distinct subformula once), checks the size limits of
:mod:`hardsoft.compile.limits`, lets the :class:`~hardsoft.compile.builder.Builder` turn each
IR node into a gadget (heads and neurons over named residual coordinates, scheduled at the
earliest layer its inputs allow), assembles the weights (:func:`hardsoft.craft.assemble`) and
attaches the certificate (:mod:`hardsoft.compile.certificate`).

Two independent choices shape the model (:mod:`hardsoft.compile.targets`): the *target*
(``hard``: unique/average-hard attention, exact; ``soft-temperature``: softmax with τ(n) and
bounded position features; ``soft-pe``: softmax with τ = 1 and unbounded position features)
and the *mask mode* (``strict``: any mask of the model; ``nonstrict``: only the masks
``none``, ``future`` (j ≤ i) and ``past`` (j ≥ i) of a GPT-style decoder, with the
constructions of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §4).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hardsoft import validate
from hardsoft.compile import limits
from hardsoft.compile.builder import Builder
from hardsoft.compile.certificate import build_certificate
from hardsoft.compile.ir import BNode, ir_nodes_all, lower_all
from hardsoft.compile.layernorm import build_ln_model
from hardsoft.compile.ln_certificate import ln_certificate
from hardsoft.compile.targets import TARGETS, MaskMode, Target
from hardsoft.craft import CraftLayer, LinearForm, assemble, standard_residual
from hardsoft.errors import HardsoftError
from hardsoft.logic import parse
from hardsoft.logic.printer import shared_text
from hardsoft.logic.syntax import Formula
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import validate_output_names
from hardsoft.model.transformer import Transformer

__all__ = ["TARGETS", "Built", "FormulaInput", "build_model", "compile_formula", "named_outputs"]

DEFAULT_MASKS = MaskMode.STRICT
"""The default mask mode (docs/compiler.md says why)."""


FormulaInput = Formula | str | Mapping[str, Formula | str] | Sequence[tuple[str, Any]]
"""One formula, or named outputs: a mapping (or a sequence of pairs) from name to formula."""


def named_outputs(formula: FormulaInput, alphabet: tuple[str, ...]) -> list[tuple[str, Formula]]:
    """The ``(name, formula)`` outputs of ``formula`` in order, parsed; a single formula is one
    unnamed output (name ``""``). Names must be non-empty and distinct (one-line errors)."""
    if isinstance(formula, (str, Formula)):
        items: list[tuple[str, Any]] = [("", formula)]
        named = False
    else:
        if isinstance(formula, Mapping):
            items = list(formula.items())
        else:
            try:
                items = [(name, f) for name, f in formula]
            except (TypeError, ValueError):
                raise HardsoftError(
                    "expected a formula or a mapping of output names to formulas"
                ) from None
        if not items:
            raise HardsoftError("no outputs: give at least one NAME=FORMULA")
        validate_output_names(tuple(name for name, _ in items))
        named = True
    out = []
    for name, f in items:
        if isinstance(f, str):
            f = parse(f, alphabet=alphabet)
        elif not isinstance(f, Formula):
            what = f"output {name!r}" if named else "the formula"
            raise HardsoftError(f"{what} is not a formula: {f!r}")
        out.append((name, f))
    return out


EXACT_FLOAT64 = 2**50
"""Largest term magnitude compiled: float64 holds integers exactly only below 2^53, and the
gadgets scale counts by 1/i; a constant of 2^52 already made compiled models wrong."""


def _require_float64_exact(formula: Formula, n: int) -> None:
    """Refuse a formula whose counting terms can exceed :data:`EXACT_FLOAT64` in magnitude at
    the certificate's length ``n`` (the evaluator computes them exactly; the weights could
    not), instead of emitting a model that disagrees with it."""
    from hardsoft.logic.semantics import magnitude_bound

    bound = magnitude_bound(formula, n)
    if bound > EXACT_FLOAT64:
        raise HardsoftError(
            f"the formula's terms reach about {float(bound):.3g} at n = {n}, beyond what float64 "
            f"weights represent exactly (2^50); use smaller constants"
        )


def compile_formula(
    formula: FormulaInput,
    alphabet: str | tuple[str, ...] | list[str],
    target: str = "hard",
    causal: bool = False,
    *,
    masks: str = DEFAULT_MASKS,
    n: int = 1000,
    name: str = "",
) -> Transformer:
    """Compile ``formula`` into a transformer whose output coordinate 0 is the formula's value
    (exactly 0 or 1) at every position of every input over ``alphabet``.

    ``formula`` may also be a mapping (or a sequence of pairs) from output names to formulas:
    then output coordinate k is output k's value, ``model.spec.output_names`` names them, and
    subformulas shared between outputs are compiled once.
    ``target``: ``hard`` | ``soft-temperature`` | ``soft-pe`` (see the module docstring).
    ``causal``: only future masks; formulas with ``X U F E last #> n`` are a HardsoftError.
    ``masks``: ``strict`` (any mask) or ``nonstrict`` (only ``none``, ``future`` j ≤ i and
    ``past`` j ≥ i, the masks of the paper and of GPT-style decoders; with ``causal`` on the
    ``hard`` and ``soft-pe`` targets the model does not depend on n at all: Yang et al.
    (arXiv:2412.09925v1) Thm. 16, see docs/compiler.md).
    ``n``: the length at which the certificate evaluates τ(n) and the error bounds.
    The certificate is ``model.meta["certificate"]`` (saved with the model).
    """
    started = time.perf_counter()
    alpha = validate.alphabet(alphabet)
    tgt = Target.parse(target, "target")
    mode = MaskMode.parse(masks, "mask mode (--masks)")
    outputs = named_outputs(formula, alpha)
    for _, f in outputs:
        _require_float64_exact(f, n)
    if tgt is Target.SOFT_LN:  # future masks only: the past fragment, always causal
        causal = True
    roots = lower_all([f for _, f in outputs], alpha, causal, mode is MaskMode.NONSTRICT)
    texts = [shared_text(f) for _, f in outputs]
    names = tuple(nm for nm, _ in outputs) if outputs[0][0] else ()
    shown = texts[0] if not names else "; ".join(f"{a}={t}" for a, t in zip(names, texts))
    flags = "".join([f", {tgt}", ", causal" if causal else "", f", {mode}"])[2:]
    if tgt is Target.SOFT_LN:
        ln = build_ln_model(roots, alpha, names, name or f"compiled[{flags}]: {shown}")
        ln.model.meta["certificate"] = ln_certificate(
            ln, outputs, alpha, str(mode), n, len(ir_nodes_all(roots)),
            time.perf_counter() - started,
        )  # fmt: skip
        _formula_meta(ln.model, names, texts)
        return ln.model
    built = build_model(
        roots, alpha, tgt, mode, causal, names, name or f"compiled[{flags}]: {shown}"
    )
    b, out_forms, model = built.builder, built.forms, built.model
    model.meta["certificate"] = build_certificate(
        model=model,
        outputs=[(nm, f, form) for (nm, f), form in zip(outputs, out_forms)],
        alphabet=alpha,
        target=tgt,
        masks=mode,
        causal=causal,
        head_info=b.head_info,
        features=list(b.features),
        n=n,
        ir_size=built.ir_size,
        seconds=time.perf_counter() - started,
    )
    _formula_meta(model, names, texts)
    model.meta["rounded"] = dict(b.rounded)
    return model


def _formula_meta(model: Transformer, names: tuple[str, ...], texts: list[str]) -> None:
    if names:
        model.meta["formulas"] = dict(zip(names, texts))
    else:
        model.meta["formula"] = texts[0]
    model.meta["kind"] = "compiled-formula"


@dataclass
class Built:
    """A model built from IR roots: the model, the builder (its heads' certificate entries,
    features and rounded coordinates), the linear form each output reads, the IR size."""

    model: Transformer
    builder: Builder
    forms: list[LinearForm]
    ir_size: int


def build_model(
    roots: list[BNode],
    alphabet: tuple[str, ...],
    target: Target,
    masks: MaskMode,
    causal: bool,
    names: tuple[str, ...],
    name: str,
) -> Built:
    """IR roots (one per output) → limits checked → gadgets → weights. Every front end (a
    formula, a program) lowers to the IR and ends here; the certificate is the caller's."""
    if not target.full_logic:
        raise HardsoftError(
            f"--target {target} compiles formulas and C-RASP programs (compile, or program "
            "compile of a .cr file); a B-RASP program selects by unique-hard attention, "
            "which it does not cover"
        )
    nodes = ir_nodes_all(roots)
    limits.check_ir(nodes)
    b = Builder(alphabet, target, masks, causal)
    b.prepare(nodes)
    for node in nodes:
        b.value(node)
    out_forms = [b.value(root).form for root in roots]
    model = _assemble(b, out_forms, names, name)
    return Built(model, b, out_forms, len(nodes))


def _assemble(
    b: Builder, out_forms: list[LinearForm], names: tuple[str, ...], name: str
) -> Transformer:
    """The weights of the builder's layers, after the parameter cap is checked on the craft
    description (nothing is allocated before)."""
    layers = [b.layers.get(k, CraftLayer()) for k in range(max(b.layers, default=-1) + 1)]
    features = list(b.features)
    residual = standard_residual(b.alphabet, features)
    for c in b.coords:
        residual.add(c)
    position_dim = sum(parse_feature(f).dim for f in features)
    planned = limits.parameter_count(
        len(b.alphabet), position_dim, residual.dim, layers, len(out_forms)
    )
    limits.check_parameters(planned)
    model = assemble(
        alphabet=b.alphabet,
        position_features=features,
        residual=residual,
        layers=layers,
        outputs=out_forms,
        output_names=names,
        name=name,
    )
    assert model.parameter_count() == planned, "limits.parameter_count is out of date"
    return model

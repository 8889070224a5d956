"""RASP as Tracr's users write it: ``from hardsoft import rasp`` instead of
``from tracr.rasp import rasp``, and the same program runs (``rasp.evaluate``) and compiles to
one transformer for every length (``rasp.compile``), with a certificate.

The names are Tracr's (``tokens``, ``indices``, ``length``, ``Map``, ``SequenceMap``,
``LinearSequenceMap``, ``Full``, ``ConstantSOp``, ``Select``, ``Comparison``, ``Aggregate``,
``SelectorWidth``, ``numerical``, ``categorical``, ``evaluate``, ``DefaultRASPEvaluator``,
``causal_eval``, ...); docs/rasp.md has the
differences (operators keep a description of what they compute, so the compiler sees affine
maps and comparisons rather than lambdas) and what compiles at every length.

This module is a facade over :mod:`hardsoft.programs.rasp`, its own tier above the engines
(docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hardsoft.model.transformer import Transformer
from hardsoft.programs.rasp import causal_eval
from hardsoft.programs.rasp.api import (
    DEFAULT_ANNOTATORS,
    Aggregate,
    Annotator,
    CombinedPredicate,
    Comparison,
    ConstantSelector,
    ConstantSOp,
    Encoding,
    FixedKey,
    FixedQuery,
    Full,
    IndicesType,
    LengthType,
    LinearSequenceMap,
    Map,
    NegatedPredicate,
    NumericValue,
    Predicate,
    RASPExpr,
    Select,
    Selector,
    SelectorAnd,
    SelectorNot,
    SelectorOr,
    SelectorValue,
    SelectorWidth,
    SequenceMap,
    SOp,
    TokensType,
    Value,
    annotate,
    categorical,
    default_encoding,
    default_name,
    get_encoding,
    indices,
    is_categorical,
    is_numerical,
    length,
    numerical,
    selector_and,
    selector_not,
    selector_or,
    sop_not,
    tokens,
)
from hardsoft.programs.rasp.compile import TARGETS, NeedsMaxLen, RaspCompiled, compile_rasp
from hardsoft.programs.rasp.evaluate import (
    AggregateError,
    DefaultRASPEvaluator,
    RaspError,
    RASPEvaluator,
    evaluate,
)
from hardsoft.programs.rasp.load import RaspProgram, load
from hardsoft.programs.rasp.tracr import from_tracr


def compile(  # noqa: A001 - the name Tracr's users expect next to evaluate
    program: SOp,
    vocab: Sequence[Any],
    *,
    target: str = "soft-temperature",
    max_len: int | None = None,
    outputs: Sequence[str] | None = None,
    name: str = "",
    causal: bool = False,
) -> Transformer:
    """One transformer computing ``program`` on words over ``vocab``: exact at every length,
    or (with ``max_len``) for n <= max_len where the program needs a bound. ``target``:
    ``average-hard``, ``hard`` or ``soft-temperature`` (softmax at Theorem 26's τ(n)). The
    certificate is ``model.meta["certificate"]``; ``model.meta["program"]["outputs"]`` says
    how each output is read. ``causal=True`` compiles Tracr's causal semantics (every selector
    ANDed with j <= i, as ``causal_eval.evaluate`` has it): every head attends only to j <= i.
    Raises :class:`NeedsMaxLen` (a ``HardsoftError``) naming the operation that has no exact
    gadget at every length."""
    return compile_rasp(
        program, vocab, target=target, max_len=max_len, outputs=outputs, name=name, causal=causal
    ).model


__all__ = [
    "DEFAULT_ANNOTATORS",
    "TARGETS",
    "Aggregate",
    "AggregateError",
    "Annotator",
    "CombinedPredicate",
    "Comparison",
    "ConstantSOp",
    "ConstantSelector",
    "DefaultRASPEvaluator",
    "Encoding",
    "FixedKey",
    "FixedQuery",
    "Full",
    "IndicesType",
    "LengthType",
    "LinearSequenceMap",
    "Map",
    "NeedsMaxLen",
    "NegatedPredicate",
    "NumericValue",
    "Predicate",
    "RASPEvaluator",
    "RASPExpr",
    "RaspCompiled",
    "RaspError",
    "RaspProgram",
    "SOp",
    "Select",
    "Selector",
    "SelectorAnd",
    "SelectorNot",
    "SelectorOr",
    "SelectorValue",
    "SelectorWidth",
    "SequenceMap",
    "TokensType",
    "Value",
    "annotate",
    "categorical",
    "causal_eval",
    "compile",
    "compile_rasp",
    "default_encoding",
    "default_name",
    "evaluate",
    "from_tracr",
    "get_encoding",
    "indices",
    "is_categorical",
    "is_numerical",
    "length",
    "load",
    "numerical",
    "selector_and",
    "selector_not",
    "selector_or",
    "sop_not",
    "tokens",
]

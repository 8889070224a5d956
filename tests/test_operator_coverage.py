"""Every operator of the logic is handled by every dispatcher: the parser, the printer, the
evaluator, the random generator, the IR lowering and the compiler (on every target and mask
mode). A new AST class fails the first test until it is added to EXAMPLES, and then every
other test exercises it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from hardsoft.compile import MASK_MODES, TARGETS, compile_formula
from hardsoft.compile import ir as IR
from hardsoft.compile.builder import EMIT
from hardsoft.logic import evaluate, evaluate_all, parse, random_formula
from hardsoft.logic import syntax as S
from hardsoft.logic.random import ALL_OPERATORS

a, b = S.Sym("a"), S.Sym("b")
ca = S.CountPast(a)

EXAMPLES: dict[type, S.Node] = {
    S.Sym: a,
    S.Const: S.Const(True),
    S.First: S.First(),
    S.Last: S.Last(),
    S.Not: S.Not(a),
    S.And: S.And(a, b),
    S.Or: S.Or(a, b),
    S.Implies: S.Implies(a, b),
    S.Prev: S.Prev(a),
    S.Next: S.Next(a),
    S.Since: S.Since(a, b),
    S.Until: S.Until(a, b),
    S.Past: S.Past(a),
    S.Future: S.Future(a),
    S.Somewhere: S.Somewhere(a),
    S.Compare: S.Compare("<=", ca, S.CountFuture(b)),
    S.Mod: S.Mod(3, 1, ca),
    S.CountPast: ca,
    S.CountFuture: S.CountFuture(b),
    S.IntConst: S.IntConst(2),
    S.Position: S.Position(),
    S.Length: S.Length(),
    S.Add: S.Add(ca, S.Position()),
    S.Sub: S.Sub(S.Length(), ca),
    S.Scale: S.Scale(-2, ca),
}


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def as_formula(node: S.Node) -> S.Formula:
    """The node itself, or a comparison that uses the term."""
    return node if isinstance(node, S.Formula) else S.Compare(">=", node, S.IntConst(1))


def test_examples_cover_every_ast_class() -> None:
    concrete = {c for c in _all_subclasses(S.Node) if c not in (S.Formula, S.Term)}
    assert concrete == set(EXAMPLES), concrete ^ set(EXAMPLES)


@pytest.mark.parametrize("cls", list(EXAMPLES), ids=lambda c: c.__name__)
def test_printer_parser_round_trip(cls: type) -> None:
    formula = as_formula(EXAMPLES[cls])
    assert parse(S.to_text(formula), alphabet="ab") == formula


@pytest.mark.parametrize("cls", list(EXAMPLES), ids=lambda c: c.__name__)
def test_evaluator(cls: type) -> None:
    node = EXAMPLES[cls]
    values = evaluate_all(node, ["abba", "baab"], "ab")
    assert values[node].shape == (2, 4)


def test_random_generator_produces_every_operator() -> None:
    assert {S.operator(node) for node in EXAMPLES.values()} | set(S.COMPARE_OPS) == set(
        ALL_OPERATORS
    ) | {"int"}
    seen: set[str] = set()
    for seed in range(300):
        seen |= S.operators(random_formula(seed, "ab", depth=4))
    assert seen >= set(ALL_OPERATORS)


def test_ir_lowers_every_ast_class_and_builder_emits_every_ir_class() -> None:
    assert set(IR._LOWER) == set(EXAMPLES)
    ir_classes = {c for c in _all_subclasses(IR.BNode)}
    assert ir_classes == set(EMIT)


@pytest.mark.parametrize("masks", MASK_MODES)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("cls", list(EXAMPLES), ids=lambda c: c.__name__)
def test_compiler(cls: type, target: str, masks: str) -> None:
    formula = as_formula(EXAMPLES[cls])
    model = compile_formula(formula, "ab", target, masks=masks)
    ids = np.array(list(itertools.product(range(2), repeat=5)), dtype=np.int64)
    with torch.no_grad():
        out = model(torch.from_numpy(ids)).outputs[..., 0].numpy()
    ref = evaluate(formula, ids, ["a", "b"]).astype(np.float64)
    assert np.abs(out - ref).max() < 1e-9

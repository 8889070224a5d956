"""Unions of classes decided on class sets (hardsoft.classes.boolean.Partition): a layer's
classes refine the layer before (checked against the model's own residual stream), and every
relation between two unions that the sets decide is the one the BDD with its facts decides."""

from __future__ import annotations

import itertools

import pytest
import torch

from hardsoft.classes.boolean import ClassUnion, Partition, _class_sets
from hardsoft.classes.propagation import ClassTable, propagate
from hardsoft.model import random_model


def _model(mask: str, seed: int, layers: int = 3):
    return random_model(
        weighting="rightmost", mask=mask, layers=layers, heads=2, d_model=16, alphabet="01",
        position_features=("1",), seed=seed,
    )  # fmt: skip


def _class_at(table: ClassTable, words: list[str]) -> list[list[int]]:
    """Per layer, the class of every position of ``words`` (all of one length), read from the
    model's residual stream."""
    m = table.model
    with torch.no_grad():
        out = m(m.encode(words), trace=True, chunk_size=None)
    assert out.trace is not None
    got = []
    for ell, layer in enumerate(table.layers):
        resid = out.trace[f"resid.{ell}"].reshape(-1, layer.vectors.shape[1]).numpy()
        dist = ((resid[:, None, :] - layer.vectors[None, :, :]) ** 2).sum(-1)
        got.append([int(k) for k in dist.argmin(axis=1)])
    return got


def test_lift_maps_a_union_to_the_classes_inside_it() -> None:
    coarse = Partition(2, True)
    mid = Partition(3, True, coarse, (0, 0, 1))
    fine = Partition(4, False, mid, (0, 1, 2, 2))
    assert fine.lift(frozenset({0}), coarse) == frozenset({0, 1})
    assert fine.lift(frozenset({1}), coarse) == frozenset({2, 3})
    assert fine.lift(frozenset({1, 2}), mid) == frozenset({1, 2, 3})
    assert coarse.lift(frozenset({0}), fine) is None  # not a refinement that way
    assert Partition(2, True).lift(frozenset({0}), coarse) is None  # unrelated
    pair = _class_sets(ClassUnion(coarse, frozenset({1})), ClassUnion(fine, frozenset({3})))
    assert pair is not None
    assert (pair.a, pair.b, pair.size, pair.exact) == (frozenset({2, 3}), frozenset({3}), 4, False)


@pytest.mark.parametrize("mask", ["strict-future", "future"])
@pytest.mark.parametrize("seed", [0, 5])
def test_each_class_lies_inside_its_parent_at_every_position(mask: str, seed: int) -> None:
    table = propagate(_model(mask, seed))
    refined = [ell for ell in range(1, len(table.layers)) if table.layers[ell].parent_of()]
    assert refined, "no layer refines the one before"
    for n in range(1, 8):
        words = ["".join(w) for w in itertools.product("01", repeat=n)]
        at = _class_at(table, words)
        for ell in refined:
            layer = table.layers[ell]
            parent_of = layer.parent_of()
            assert parent_of is not None and layer.before is table.layers[ell - 1]
            assert layer.partition().parent is layer.before.partition()
            assert all(parent_of[k] == c for k, c in zip(at[ell], at[ell - 1]))


@pytest.mark.parametrize("mask", ["strict-future", "strict-past"])
def test_relations_decided_on_sets_hold_at_every_position(mask: str) -> None:
    """The sets decide at least what the BDD with its facts proves, and what they decide
    holds at every position of every word to n = 7 (classes read from the model)."""
    table = propagate(_model(mask, 5))
    p = table.preds
    layer_of = {id(layer.partition()): ell for ell, layer in enumerate(table.layers)}
    at = [_class_at(table, ["".join(w) for w in itertools.product("01", repeat=n)])
          for n in range(1, 8)]  # fmt: skip

    def holds(x: ClassUnion) -> list[bool]:
        ell = layer_of[id(x.partition)]
        return [k in x.members for per_n in at for k in per_n[ell]]

    decided = 0
    for (u, x), (v, y) in itertools.product(list(p.unions.items()), repeat=2):
        pair = _class_sets(x, y)
        if pair is None:
            continue
        decided += 1
        if pair.exact:  # a proof by the BDD is never contradicted by the sets
            assert not p.is_false(u & ~v) or pair.a <= pair.b
            assert not p.is_false(u & v) or not pair.a & pair.b
        hx, hy = holds(x), holds(y)
        if pair.a <= pair.b:
            assert all(not i or j for i, j in zip(hx, hy))
        if not pair.a & pair.b:
            assert not any(i and j for i, j in zip(hx, hy))
        if len(pair.a | pair.b) == pair.size:
            assert all(i or j for i, j in zip(hx, hy))
    assert decided > 10

"""hardsoft.rasp: Tracr's API by the same names, operators that keep a description of what
they compute, and an evaluator with Tracr's semantics (checked against a literal reference
evaluator, and against Tracr itself where it is installed)."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardsoft import rasp
from hardsoft.programs.rasp import ops
from hardsoft.programs.rasp.graph import statements
from tests._rasp_random import Undefined, naive, random_program

NUMBERS = st.one_of(st.integers(-50, 50), st.floats(-50, 50, allow_nan=False))
NONZERO = NUMBERS.filter(bool)


def test_the_names_of_tracr_are_there() -> None:
    for name in (
        "tokens indices length Map SequenceMap LinearSequenceMap Full ConstantSOp Select "
        "Comparison Aggregate SelectorWidth SelectorAnd SelectorOr SelectorNot numerical "
        "categorical evaluate annotate get_encoding is_numerical is_categorical Encoding"
    ).split():
        assert hasattr(rasp, name), name
    assert {c.name for c in rasp.Comparison} == {"EQ", "LT", "LEQ", "GT", "GEQ", "NEQ", "TRUE",
                                                "FALSE"}  # fmt: skip


def test_operators_build_maps_with_descriptions() -> None:
    x = rasp.tokens + 1
    assert isinstance(x, rasp.Map) and isinstance(x.op, ops.Affine)
    c = rasp.indices < 3
    assert isinstance(c.op, ops.Compare) and c.op.relation is ops.Relation.LT and c.op.const == 3
    s = rasp.indices - rasp.length
    assert isinstance(s, rasp.SequenceMap) and s.op == ops.Affine((1, -1))
    both = (rasp.tokens == "a") & (rasp.tokens == "b")
    assert isinstance(both.op, ops.Logic) and both.op.binary
    lin = rasp.LinearSequenceMap(rasp.indices, rasp.length, 2, -1)
    assert lin.op == ops.Affine((2, -1))
    plain = rasp.Map(lambda v: v * 2, rasp.tokens)
    assert plain.op is None  # a user's lambda stays a function


@settings(max_examples=60, deadline=None)
@given(NUMBERS, NONZERO)
def test_each_description_computes_what_its_function_computes(x: float, c: float) -> None:
    """On numbers, ``op`` agrees with Tracr's lambda for every operator (the compiler reads
    the op, ``evaluate`` calls the function)."""
    sops = [rasp.tokens + c, c + rasp.tokens, rasp.tokens - c, c - rasp.tokens,
            rasp.tokens * c, c * rasp.tokens, rasp.tokens / c, rasp.tokens < c,
            rasp.tokens <= c, rasp.tokens > c, rasp.tokens >= c, rasp.tokens == c,
            rasp.tokens != c, ~rasp.tokens, rasp.tokens & c, rasp.tokens | c, c & rasp.tokens,
            c | rasp.tokens]  # fmt: skip
    for s in sops:
        assert s.op is not None
        want, got = s.f(x), s.op(x)
        assert got == want or (isinstance(want, float) and math.isclose(got, want)), s.op
    pairs = [rasp.tokens + rasp.indices, rasp.tokens - rasp.indices, rasp.tokens * rasp.indices,
             rasp.tokens < rasp.indices, rasp.tokens & rasp.indices]  # fmt: skip
    for s in pairs:
        assert s.op(x, c) == s.f(x, c)


def test_a_map_of_a_map_is_one_map_as_in_tracr() -> None:
    m = (rasp.indices + 1) == 2
    assert isinstance(m, rasp.Map) and m.inner is rasp.indices
    assert isinstance(m.op, ops.Compose)
    assert [type(s) for s in m.op.steps()] == [ops.Affine, ops.Compare]
    assert rasp.evaluate(m, "abc") == [False, True, False]


def test_evaluate_follows_tracr() -> None:
    frac = rasp.numerical(
        rasp.Aggregate(
            rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
            rasp.numerical(rasp.tokens == "x"),
            default=0,
        )  # fmt: skip
    )
    # one selected position gives its value itself (True), as Tracr's _mean does
    assert frac("xax") == [True, 0.5, 2 / 3]
    hist = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))
    assert hist("abac") == [2, 1, 2, 1]
    shifted = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices - 1, rasp.Comparison.EQ), rasp.tokens
    )
    assert shifted("abc") == [None, "a", "b"]
    assert (shifted == "a")("abc") == [None, True, False]  # None stays None through a Map
    assert rasp.evaluate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT), "ab") == [
        [False, False],
        [True, False],
    ]


def test_a_categorical_aggregate_of_different_values_is_an_error() -> None:
    everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
    pick = rasp.Aggregate(everything, rasp.tokens).named("pick")
    assert pick("aa") == ["a", "a"]  # one value at every selected position (Tracr: an error)
    with pytest.raises(rasp.AggregateError, match="pick averages several values"):
        pick("ab")
    nums = rasp.Aggregate(everything, rasp.Map(lambda v: 2, rasp.tokens))
    got = nums("ab")
    assert got == [2, 2] and type(got[0]) is int  # the value itself (Tracr: the mean 2.0)
    mean = rasp.numerical(rasp.Aggregate(everything, rasp.Map(lambda v: int(v), rasp.tokens)))
    assert mean("13") == [2.0, 2.0]


def test_errors_of_the_users_functions_name_the_expression() -> None:
    bad = rasp.Map(lambda v: int(v), rasp.tokens).named("to_int")
    with pytest.raises(rasp.RaspError, match="to_int raised ValueError"):
        bad("1a")
    none_keys = rasp.Select(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices - 1,
                            rasp.Comparison.EQ), rasp.tokens), rasp.tokens,
                            rasp.Comparison.EQ)  # fmt: skip
    with pytest.raises(rasp.RaspError, match="key is None"):
        rasp.SelectorWidth(none_keys)("ab")


@pytest.mark.parametrize("seed", range(40))
def test_evaluate_agrees_with_a_literal_reference(seed: int) -> None:
    """The vectorised evaluator = Tracr's evaluator written out plainly, on random programs
    and inputs (errors included)."""
    program, vocab = random_program(seed)
    rng = random.Random(seed)
    words = ["".join(w) for n in (1, 2, 3) for w in itertools.product(vocab, repeat=n)]
    words += ["".join(rng.choice(vocab) for _ in range(n)) for n in (9, 70, 70)]
    for w in words:
        try:
            want = naive(program, list(w))
        except Undefined:
            with pytest.raises(rasp.RaspError):
                rasp.evaluate(program, list(w))
            continue
        got = rasp.evaluate(program, list(w))
        assert len(got) == len(want)
        for a, b in zip(got, want):
            same = a == b or (isinstance(a, float) and isinstance(b, float)
                              and math.isclose(a, b, rel_tol=1e-12))  # fmt: skip
            assert same and type(a) is type(b) or same and {type(a), type(b)} <= {int, float}, (
                w,
                got,
                want,
            )


def test_selectors_combine_with_structured_predicates() -> None:
    lt = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    eq = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)
    either = lt | eq
    assert isinstance(either, rasp.Select)
    assert isinstance(either.predicate, rasp.CombinedPredicate)
    neither = ~either
    assert isinstance(neither.predicate, rasp.NegatedPredicate)
    n = 5
    got = rasp.evaluate(rasp.SelectorWidth(neither), "a" * n)
    assert got == [n - 1 - i for i in range(n)]
    mixed = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ) & lt
    assert isinstance(mixed, rasp.SelectorAnd)
    assert rasp.SelectorWidth(mixed)("abab") == [0, 0, 1, 1]


def test_statement_names_do_not_depend_on_ids() -> None:
    """Names come from .named() and Tracr's defaults, numbered in program order: loading the
    same program twice gives the same names (a compiled model's outputs refer to them)."""

    def build() -> rasp.SOp:
        a = rasp.tokens == "a"
        b = rasp.tokens == "b"
        return (a & b).named("both")

    first, second = statements(build()), statements(build())
    assert [n for n, _ in first] == [n for n, _ in second]
    assert [n for n, _ in first][-1] == "both"
    assert len({n for n, _ in first}) == len(first)

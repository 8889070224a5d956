"""The proved shrinking of decompiled formulas: deterministic (counted work, not the clock),
every step an equivalence, and the two-way automaton it uses for ``last`` and future
operators checked against the logic evaluator on every short word."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys

import numpy as np
import pytest

from hardsoft.decompile import shrink as shrink_mod
from hardsoft.decompile.shrink import shrink, shrink_counted
from hardsoft.logic import parse
from hardsoft.logic.equivalence import equivalent
from hardsoft.logic.random import FRAGMENT_OPERATORS, random_formula
from hardsoft.logic.semantics import evaluate
from hardsoft.logic.syntax import Formula, Mod, size
from hardsoft.logic.twoway import equivalent_everywhere

AB = ("a", "b")


def _same_everywhere(f: Formula, g: Formula, alphabet: tuple[str, ...], n: int) -> bool:
    """The evaluator's values of ``f`` and ``g`` agree at every position of every word <= n."""
    for k in range(1, n + 1):
        words = ["".join(t) for t in itertools.product(alphabet, repeat=k)]
        if not np.array_equal(evaluate(f, words, alphabet), evaluate(g, words, alphabet)):
            return False
    return True


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ("last S first", "Y first", True),  # the non-strict compilation of first leaves it
        ("F 'a'", "X 'a' | X F 'a'", True),
        ("'a' U 'b'", "X 'b' | X ('a' & 'a' U 'b')", True),
        ("E ('a' & X 'b')", "E ('b' & Y 'a')", True),
        ("F last", "!last", True),
        ("!X true", "last", True),
        ("MOD(2, 1)(n) & last", "MOD(2, 1)(i) & last", True),
        ("MOD(2, 0)(n) | MOD(2, 1)(n)", "true", True),
        ("X last", "!last & F last", False),
        ("F P 'a'", "P 'a' | 'a'", False),
        ("MOD(2, 1)(n)", "MOD(2, 1)(i)", False),
    ],
)
def test_twoway_decides_known_pairs(left: str, right: str, equal: bool) -> None:
    f, g = parse(left, AB), parse(right, AB)
    result = equivalent_everywhere(f, g, AB)
    assert result.equal is equal
    assert _same_everywhere(f, g, AB, 7) is equal
    if not equal:  # the counterexample is one: the evaluator tells them apart there
        word, at = result.counterexample, result.position
        assert word is not None and at is not None
        assert evaluate(f, [word], AB)[0][at - 1] != evaluate(g, [word], AB)[0][at - 1]


def test_twoway_agrees_with_the_evaluator_on_random_ltl() -> None:
    """Random LTL pairs (with past and future operators, first and last): an equality the
    automaton proves holds on every word to n = 7, and every counterexample it names is one.
    A formula against its shrunk self gives the equal cases."""
    rng = random.Random(3)
    ops = FRAGMENT_OPERATORS["LTL"]
    equal = 0
    for _ in range(60):
        f = random_formula(rng, AB, 3, ops)
        g = random_formula(rng, AB, 3, ops) if rng.random() < 0.5 else shrink(f, AB, work=50_000)
        result = equivalent_everywhere(f, g, AB)
        if result.equal:
            equal += 1
            assert _same_everywhere(f, g, AB, 7), (f, g)
        else:
            word, at = result.counterexample, result.position
            assert word is not None and at is not None
            assert evaluate(f, [word], AB)[0][at - 1] != evaluate(g, [word], AB)[0][at - 1]
    assert equal >= 20


@pytest.mark.parametrize("fragment", ["past LTL", "LTL"])
def test_every_shrink_is_an_equivalence(fragment: str) -> None:
    """Random formulas shrink to formulas the evaluator cannot tell apart from them (every
    position of every word to n = 7), never larger; some shrink."""
    rng = random.Random(11)
    ops = FRAGMENT_OPERATORS[fragment]
    shrunk = 0
    for _ in range(25):
        f = random_formula(rng, AB, 4, ops)
        g = shrink(f, AB, work=200_000)
        assert size(g) <= size(f)
        assert _same_everywhere(f, g, AB, 7), (f, g)
        shrunk += size(g) < size(f)
    assert shrunk >= 5


def test_shrink_folds_since_over_position_atoms() -> None:
    """``!P (last S first)``: ``last S first`` holds exactly at i = 2, so the formula is
    ``i <= 2``, which the position atoms name."""
    f = parse("!P (last S first)", AB)
    g = shrink(f, AB)
    assert size(g) <= 4 and _same_everywhere(f, g, AB, 7)
    assert shrink(parse("last S first", AB), AB) == parse("Y first", AB)


def test_shrink_does_not_read_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same formula shrinks to the same result under a clock that runs a thousand
    seconds per reading (a wall-clock bound gave 43 to 82 nodes for one model by load)."""
    f = parse(
        "'1' & (!P '0' & (MOD(2, 0)(i) & P ('1' & MOD(2, 1)(i)) "
        "| MOD(2, 1)(i) & P ('1' & MOD(2, 0)(i)) | first))",
        ("0", "1"),
    )
    calm = shrink_counted(f, ("0", "1"))
    clock = itertools.count(0.0, 1000.0)
    import time

    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    slow = shrink_counted(f, ("0", "1"))
    assert slow == calm and size(calm.formula) == 5
    assert calm.work > 0 and calm.steps > 0 and not calm.exhausted


def test_work_bound_stops_early_and_is_reported() -> None:
    f = parse("!P (last S first) & ('a' | !'a')", AB)
    little = shrink_counted(f, AB, work=1)
    assert little.exhausted and little.steps == 0 and little.formula == f
    more = shrink_counted(f, AB)
    assert not more.exhausted and size(more.formula) < size(f)
    assert shrink_mod.WORK > 0


_DECOMPILE = """
from hardsoft.compile import compile_formula
from hardsoft.decompile import decompile
m = compile_formula("'a' S ('b' & Y 'a')", alphabet="ab", target="hard", masks="nonstrict")
d = decompile(m, verify_n=0, random_words=0)
print(d.outputs[0].to_dict())
"""


@pytest.mark.slow  # two fresh processes importing torch: tens of seconds on a loaded machine
def test_decompile_does_not_depend_on_the_hash_seed() -> None:
    """Two processes with different string hash seeds write the same formula (BDD operations
    run in declaration order, not in the hash order of a set)."""
    outs = [
        subprocess.run(
            [sys.executable, "-c", _DECOMPILE],
            env={"PYTHONHASHSEED": seed, "OMP_NUM_THREADS": "1", "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    ]
    assert outs[0] == outs[1] and "formula" in outs[0]


def test_batch_values_match_the_evaluator_and_compute_only_new_nodes() -> None:
    """Kept values equal the evaluator's; a rewrite of a kept formula computes its new
    nodes only (the walk stops at kept subformulas)."""
    from hardsoft.logic.semantics import BatchValues
    from hardsoft.logic.syntax import subnodes

    rng = random.Random(5)
    words = ["".join(t) for t in itertools.product(AB, repeat=5)]
    for _ in range(20):
        f = random_formula(rng, AB, 4, FRAGMENT_OPERATORS["LTL"])
        batch = BatchValues(words, AB)
        assert np.array_equal(batch.value(f), evaluate(f, words, AB))
        assert batch.computed == len(subnodes(f))
    f = parse("P ('b' & Y 'a') | 'a' S 'b'", AB)
    batch = BatchValues(words, AB)
    batch.value(f)
    before = batch.computed
    g = parse("P ('b' & Y 'a') | 'b'", AB)  # one new node: the new root
    assert np.array_equal(batch.value(g), evaluate(g, words, AB))
    assert batch.computed - before == 1
    batch.keep_only(subnodes(g))
    assert np.array_equal(batch.value(f), evaluate(f, words, AB))


@pytest.mark.parametrize("fragment", ["past LTL", "LTL"])
def test_words_refute_only_what_the_automaton_would(
    fragment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refuting rewrites on the words earlier searches found is sound and changes no
    decision: with and without it, every formula shrinks by the same steps to the same
    formula; with it, most rewrites need no automaton and the counted work is smaller."""
    rng = random.Random(17)
    ops = FRAGMENT_OPERATORS[fragment]
    formulas = [random_formula(rng, AB, 4, ops) for _ in range(15)]
    one_star = (
        "'1' & (!P '0' & (MOD(2, 0)(i) & P ('1' & MOD(2, 1)(i)) "
        "| MOD(2, 1)(i) & P ('1' & MOD(2, 0)(i)) | first))"
    )
    formulas.append(parse(one_star, ("0", "1")))
    alphabets = [AB] * 15 + [("0", "1")]
    guided = [shrink_counted(f, a, work=10**9) for f, a in zip(formulas, alphabets)]
    monkeypatch.setattr(shrink_mod._Witnesses, "refutes", lambda self, f, g: (False, 0))
    plain = [shrink_counted(f, a, work=10**9) for f, a in zip(formulas, alphabets)]
    for g, p in zip(guided, plain):
        assert (g.formula, g.steps) == (p.formula, p.steps)
        assert g.checks + g.refuted == p.checks and p.refuted == 0
    assert sum(g.refuted for g in guided) > sum(g.checks for g in guided)
    assert sum(g.work for g in guided) < sum(p.work for p in plain)


_TRAINED = (  # a hardened 2-layer recognizer of contains-ab (decompile-trained, full plan)
    "'b' & (MOD(2, 1)(i) & (P ('a' & MOD(2, 1)(i)) | P ('a' & MOD(2, 0)(i))) | MOD(2, 0)(i)"
    " & (!P (MOD(2, 1)(i) & ('b' & (P ('a' & MOD(2, 1)(i)) | P ('a' & MOD(2, 0)(i)))) | 'a'"
    " & MOD(2, 0)(i) & !P ('a' & MOD(2, 1)(i))) & !P ('b' & MOD(2, 1)(i)) | P ('b' & MOD(2,"
    " 1)(i) & P ('a' & MOD(2, 1)(i)))) | !P (MOD(2, 1)(i) & ('b' & (P ('a' & MOD(2, 1)(i)) "
    "| P ('a' & MOD(2, 0)(i))))) & P ('a' & MOD(2, 0)(i) & !P ('a' & MOD(2, 1)(i))) & P "
    "('b' & MOD(2, 1)(i))) | 'a' & (MOD(2, 1)(i) & (P ('b' & MOD(2, 1)(i) & P ('a' & MOD(2,"
    " 1)(i))) | !P (MOD(2, 1)(i) & ('b' & (P ('a' & MOD(2, 1)(i)) | P ('a' & MOD(2, "
    "0)(i))))) & P ('b' & MOD(2, 0)(i) & !P ('b' & MOD(2, 1)(i)))) | !P (MOD(2, 1)(i) & "
    "('b' & (P ('a' & MOD(2, 1)(i)) | P ('a' & MOD(2, 0)(i))))) & P ('b' & MOD(2, 0)(i) & "
    "!P ('b' & MOD(2, 1)(i))) & P ('a' & MOD(2, 1)(i)) | P ('b' & MOD(2, 1)(i) & !P ('a' & "
    "MOD(2, 1)(i)) & P ('a' & MOD(2, 0)(i)))) | P ('b' & MOD(2, 1)(i) & !P ('a' & MOD(2, "
    "1)(i)) & P ('a' & MOD(2, 0)(i))) & MOD(2, 0)(i) | P ('b' & MOD(2, 1)(i) & P ('a' & "
    "MOD(2, 1)(i))) & P ('a' & MOD(2, 1)(i))"
)


def test_a_shrink_the_bound_does_not_end_is_a_local_minimum() -> None:
    """When the work bound does not end it, no rewrite the search tries (every node, every
    replacement) of the final formula is equal to it: rewrites refused before a later step
    are tried again in the changed formula (without that, the trained recognizer's formula
    stopped at 61 nodes, and a rewrite of it was equal)."""
    rng = random.Random(23)
    formulas = [random_formula(rng, AB, 4, FRAGMENT_OPERATORS["past LTL"]) for _ in range(12)]
    formulas.append(parse(_TRAINED, AB))
    checked = 0
    for f in formulas:
        result = shrink_counted(f, AB, work=10**9)
        assert not result.exhausted
        g = shrink_mod._shared(result.formula)
        sizes = shrink_mod._sizes(g)
        parities = any(isinstance(n, Mod) and n.modulus % 2 == 0 for n in sizes)
        for node in shrink_mod._formulas(g):
            for repl in shrink_mod._replacements(node, sizes, parities, False):
                candidate = shrink_mod._substitute(g, node, repl)
                assert not equivalent(candidate, g, AB).equal, (g, node, repl)
                checked += 1
    assert checked > 50

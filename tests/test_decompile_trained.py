"""The decompile-trained experiment's parts: the tasks' formulas against their languages, the
exact equivalence of past-time formulas against brute force, the shortest disagreement of a
model with a formula, and one tiny cell end to end."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hardsoft.compile.compiler import compile_formula
from hardsoft.errors import HardsoftError
from hardsoft.experiments.decompile_trained import (
    QUICK,
    TASKS,
    _train_config,
    check_task_formula,
    decompile_cell,
    first_disagreement,
    formula_accepts,
    task_formula,
    words_up_to,
)
from hardsoft.languages import get_language
from hardsoft.logic import parse
from hardsoft.logic.equivalence import equivalent
from hardsoft.logic.random import FRAGMENT_OPERATORS, random_formula


@pytest.mark.parametrize("task", TASKS, ids=[t.language for t in TASKS])
def test_task_formulas_define_their_languages(task) -> None:
    check_task_formula(task, 10)  # raises on the first word where formula and oracle differ


def test_a_wrong_task_formula_is_caught() -> None:
    wrong = dataclasses.replace(TASKS[2], formula="'b'")
    with pytest.raises(HardsoftError, match="wrong on 'b'"):
        check_task_formula(wrong, 4)


def _shortest_difference(f, g, alphabet, n) -> str | None:
    words = words_up_to(alphabet, n)
    diff = np.flatnonzero(
        formula_accepts(f, words, alphabet) != formula_accepts(g, words, alphabet)
    )
    return words[diff[0]] if len(diff) else None


def test_equivalence_against_brute_force_on_random_past_formulas() -> None:
    alphabet = ("a", "b")
    ops = FRAGMENT_OPERATORS["past LTL"]
    rng = np.random.default_rng(11)
    decided_equal = differ = 0
    for _ in range(60):
        f = random_formula(rng, alphabet, depth=3, operators=ops)
        g = random_formula(rng, alphabet, depth=3, operators=ops)
        eq = equivalent(f, g, alphabet)
        brute = _shortest_difference(f, g, alphabet, 7)
        if eq.equal:
            decided_equal += 1
            assert brute is None, (f, g)
        else:
            differ += 1
            if brute is not None:  # the automaton finds the same shortest word
                assert eq.counterexample == brute, (f, g)
            else:
                assert len(eq.counterexample) > 7
    assert decided_equal and differ
    # a formula is equivalent to itself and to a rewriting of it
    f = parse("('b' & Y 'a') | P ('b' & Y 'a')", alphabet)
    assert equivalent(f, parse("true S ('b' & Y 'a') | ('b' & Y 'a')", alphabet), alphabet).equal


def test_equivalence_with_position_classes_and_refusals() -> None:
    ab = ("a", "b")
    even = parse("MOD(2,0)(i)", ab)
    late = parse("!(first | Y (first | Y (first | Y first)))", ab)  # i >= 5
    assert equivalent(even, late, ab).counterexample == "aa"
    res = equivalent(even, parse("Y !Y true | Y Y Y Y true", ab), ab)
    assert (res.equal, res.counterexample) == (False, "aaaa")
    assert equivalent(parse("MOD(2,1)(i) | MOD(2,0)(i)", ab), parse("true", ab), ab).equal
    for text in ("X 'a'", "last", "#<['a'] > 2", "MOD(2,0)(#<['a'])"):
        with pytest.raises(HardsoftError, match="exact equivalence"):
            equivalent(parse(text, ab), parse("'a'", ab), ab)


def test_first_disagreement_of_a_compiled_model() -> None:
    task = TASKS[2]  # ends-ab
    alphabet = get_language(task.language).alphabet
    model = compile_formula(task.formula, alphabet, "hard", causal=True, masks="nonstrict")
    assert first_disagreement(model, task_formula(task), alphabet, 8) is None
    other = parse("'b'", alphabet)  # ends in b: differs from ends-ab first on "b"
    assert first_disagreement(model, other, alphabet, 8) == "b"
    model2 = compile_formula("'b' & P 'a'", alphabet, "hard", causal=True, masks="nonstrict")
    assert first_disagreement(model2, task_formula(task), alphabet, 8) == "abb"


def test_one_tiny_cell_end_to_end(tmp_path) -> None:
    plan = dataclasses.replace(
        QUICK, steps=3, max_n=6, agree_lengths=(5, 9), agree_count=4,
        accuracy_lengths=(5, 9), accuracy_samples=4, exhaustive_n=5, verify_n=4,
    )  # fmt: skip
    task = TASKS[0]
    cfg = _train_config(plan, task, seed=0)
    cell = decompile_cell(cfg.to_dict(), str(tmp_path / "run"), plan, task)
    assert cell["language"] == "first" and [a["n"] for a in cell["agreement"]] == [5, 9]
    miss = cell["hardened_counterexample"]
    assert miss is None or (1 <= len(miss) <= 5)
    d = cell["decompile"]
    assert d["status"] == "decompiled", d
    # three routes to the same answer: the decompiled formula matches the hardened model on
    # every word to verify_n (the evaluator against the forward pass); the exact equivalence's
    # shortest counterexample is the one found by running the model on every word to n = 5
    assert d["matches_model_to"] == 4 and d["model_mismatch"] is None
    if d["equal_at_every_length"]:
        assert miss is None and d["counterexample_to_n"] is None
    elif len(d["counterexample"]) <= 5:
        assert d["counterexample"] == miss == d["counterexample_to_n"]


def test_the_reports_verdict() -> None:
    """The verdict says no more than was shown: extends only when every model decompiled to a
    formula that matches it and was decided against the task; 2 proofs of 12 read as such."""
    from hardsoft.report.claims import CLAIMS

    judge = CLAIMS["decompile-trained"].judge

    def cell(status: str, mismatch: str | None = None, equal: bool | None = False) -> dict:
        return {"decompile": {"status": status, "model_mismatch": mismatch,
                              "equal_at_every_length": equal}}  # fmt: skip

    assert judge({"cells": [cell("decompiled", equal=True), cell("decompiled")]}) == (
        "extends",
        "2/2 decompiled, 2 formulas match their model; 1 proved equal to the task at every "
        "length, 1 differ from it (a shortest counterexample)",
    )
    assert judge({"cells": [cell("decompiled", mismatch="ab")]})[0] == "deviates"
    assert judge({"cells": [cell("decompiled"), cell("refused")]}) == (
        "inconclusive",
        "1/2 decompiled, 1 formulas match their model; 0 proved equal to the task at every "
        "length, 1 differ from it (a shortest counterexample); 1 refused (too many classes)",
    )
    assert judge({"cells": [cell("decompiled", equal=None)]})[0] == "inconclusive"
    assert judge({"cells": [cell("unavailable")]})[0] == "undetermined"


def test_within_target_counts_only_proved_recognizers() -> None:
    """The 4× target is over the recognizers proved equal to their task; sizes of the others
    do not count, and the largest ratio is reported."""
    from hardsoft.experiments.decompile_trained import within_target

    def cell(size: int, task: int, equal: bool | None) -> dict:
        return {"decompile": {"size": size, "task_size": task, "equal_at_every_length": equal}}

    cells = [cell(5, 5, True), cell(30, 5, True), cell(500, 5, False), cell(9, 3, None)]
    assert within_target(cells) == (2, 1, 6.0)
    assert within_target([]) == (0, 0, 0.0)

"""Each named formula accepts exactly its language: checked against plain-Python membership
functions on every word up to length 10 (the empty word is rejected by every formula)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from hardsoft.errors import HardsoftError
from hardsoft.logic import FORMULAS, accepts, accepts_batch, formula_names, get_formula
from hardsoft.logic.syntax import symbols


def _parity(w: str) -> bool:
    return w.count("1") % 2 == 1


def _ones_star(w: str) -> bool:
    return all(ch == "1" for ch in w)


def _anbn(w: str) -> bool:
    k = len(w) // 2
    return len(w) % 2 == 0 and w == "a" * k + "b" * k


def _majority(w: str) -> bool:
    return w.count("1") > w.count("0")


def _dyck1(w: str) -> bool:
    depth = 0
    for ch in w:
        depth += 1 if ch == "(" else -1
        if depth < 0:
            return False
    return depth == 0


MEMBERSHIP: dict[str, Callable[[str], bool]] = {
    "parity-mod": _parity,
    "parity-count": _parity,
    "ngram-abc": lambda w: "abc" in w,
    "suffix-abc": lambda w: w.endswith("abc"),
    "ones-star": _ones_star,
    "anbn": _anbn,
    "majority": _majority,
    "dyck1": _dyck1,
    "first": lambda w: w.startswith("1"),
}


def test_every_named_formula_has_a_membership_oracle() -> None:
    assert set(MEMBERSHIP) == set(formula_names())


@pytest.mark.parametrize("name", sorted(MEMBERSHIP))
def test_named_formula_defines_its_language(name: str) -> None:
    entry = get_formula(name)
    member = MEMBERSHIP[name]
    formula = entry.formula
    assert symbols(formula) <= set(entry.alphabet)
    assert accepts(formula, "") is False
    accepted = 0
    for n in range(1, 11):
        words = ["".join(t) for t in itertools.product(entry.alphabet, repeat=n)]
        got = accepts_batch(formula, words)
        want = np.array([member(w) for w in words])
        wrong = [w for w, g, x in zip(words, got, want) if g != x]
        assert not wrong, f"{name}: wrong on {wrong[:5]}"
        accepted += int(want.sum())
    assert accepted > 0  # the language is not trivially empty on these lengths


def test_records_and_errors() -> None:
    record = FORMULAS["parity-mod"].to_dict()
    assert record["fragment"] == "past TL[C,+]" and record["past_only"] is True
    assert record["alphabet"] == "01"
    with pytest.raises(HardsoftError, match="unknown formula"):
        get_formula("nope")


# Named formulas that define a language of hardsoft.languages (on non-empty words).
_SHARED = {
    "parity-mod": "parity-odd",
    "parity-count": "parity-odd",
    "ones-star": "ones-star",
    "anbn": "anbn",
    "majority": "majority",
    "first": "first",
    "dyck1": "dyck1",
}


@pytest.mark.parametrize("name", sorted(_SHARED))
def test_named_formula_agrees_with_the_languages_oracle(name: str) -> None:
    """The logic and the languages package (written independently) agree on every non-empty
    word up to length 8; for past-only formulas the value at i is prefix membership."""
    from hardsoft.languages import get_language
    from hardsoft.logic import evaluate, is_past_only

    entry, language = get_formula(name), get_language(_SHARED[name])
    assert tuple(entry.alphabet) == tuple(language.alphabet)
    for n in range(1, 9):
        words = ["".join(t) for t in itertools.product(entry.alphabet, repeat=n)]
        assert accepts_batch(entry.formula, words).tolist() == language.members(words).tolist()
        if is_past_only(entry.formula):
            vals = evaluate(entry.formula, words).astype(int)
            for w, row in zip(words, vals):
                assert row.tolist() == language.prefix_reference(w).tolist()

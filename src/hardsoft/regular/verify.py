"""Two checks of a formula against a DFA, before anything is compiled.

* :func:`product_check` decides equality **at every length**: the formula's minimal DFA, built
  bottom-up (:mod:`hardsoft.regular.automata`), against the input DFA; a breadth-first search
  of their product either meets a word they tell apart (a shortest one) or shows that none
  exists.
* :func:`evaluator_check`: the project's logic evaluator (:func:`hardsoft.logic.evaluate`, the
  ground truth of every compiled formula) against the DFA on every word up to a length and on
  random words, at every position. It decides nothing beyond the words it reads, and shares no
  code with the product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hardsoft.languages.base import all_words
from hardsoft.languages.regular import DFA
from hardsoft.logic.syntax import Formula
from hardsoft.regular.automata import counterexample, dfa_automaton, formula_automaton


@dataclass(frozen=True)
class ProductCheck:
    """``equal``: the formula at position i is the DFA's acceptance of ``w_1..w_i`` for every
    non-empty word; else ``counterexample`` is a shortest word where they differ (at its last
    position). ``states``: the product states explored."""

    equal: bool
    counterexample: str | None
    states: int

    def to_json(self) -> dict[str, Any]:
        return {
            "equal_at_every_length": self.equal,
            "counterexample": self.counterexample,
            "formula_dfa_states": self.states,
        }


def product_check(formula: Formula, dfa: DFA, max_states: int = 100_000) -> ProductCheck:
    """Decide whether ``formula`` holds at position i exactly when the DFA accepts
    ``w_1..w_i``, for every non-empty word (module docstring). A subformula whose minimal
    automaton passes ``max_states`` states: a HardsoftError (undecided)."""
    mine = formula_automaton(formula, dfa.alphabet, max_states)
    theirs = dfa_automaton(dfa)
    word = counterexample(mine, theirs, dfa.alphabet)
    return ProductCheck(word is None, word, mine.size)


def prefix_acceptance(dfa: DFA, words: Sequence[str]) -> np.ndarray:
    """``[B, n]``: whether the DFA accepts each prefix ``w_1..w_i`` (equal-length words)."""
    index = {a: k for k, a in enumerate(dfa.alphabet)}
    delta = np.asarray(dfa.delta, dtype=np.int64)
    accept = np.zeros(dfa.n_states, dtype=bool)
    accept[list(dfa.accepting)] = True
    n = len(words[0]) if words else 0
    codes = np.asarray([[index[c] for c in w] for w in words], dtype=np.int64).reshape(-1, n)
    q = np.zeros(len(words), dtype=np.int64)
    out = np.zeros((len(words), n), dtype=bool)
    for i in range(n):
        q = delta[q, codes[:, i]]
        out[:, i] = accept[q]
    return out


def evaluator_check(
    formula: Formula,
    dfa: DFA,
    exhaustive_max_n: int,
    random_n: Sequence[int] = (64, 256),
    samples: int = 32,
    seed: int = 0,
) -> dict[str, Any]:
    """The logic evaluator against the DFA at every position of every word up to
    ``exhaustive_max_n`` and of ``samples`` random words of each length in ``random_n``."""
    from hardsoft.logic import evaluate

    rng = np.random.default_rng(seed)
    batches = [all_words(dfa.alphabet, n) for n in range(1, exhaustive_max_n + 1)]
    symbols = np.asarray(dfa.alphabet)
    for n in random_n:
        batches.append(
            ["".join(row) for row in symbols[rng.integers(0, len(symbols), (samples, n))]]
        )
    checked = positions = 0
    for words in batches:
        got = evaluate(formula, words, dfa.alphabet)
        want = prefix_acceptance(dfa, words)
        wrong = np.argwhere(got != want)
        if wrong.size:
            b, i = wrong[0]
            return {"mismatch": words[int(b)][: int(i) + 1], "checked_words": checked}
        checked += len(words)
        positions += got.size
    return {
        "mismatch": None,
        "checked_words": checked,
        "checked_positions": positions,
        "exhaustive_to_n": exhaustive_max_n,
        "random_n": list(random_n),
    }

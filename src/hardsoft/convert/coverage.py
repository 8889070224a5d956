"""Which inputs a softened model's error bound covers, and checking it on every word.

A softened model's bound holds on the inputs its gaps hold on (docs/soften.md, "Coverage"):

* **certified for all words to n** — the gap is the exact minimum over every word of length
  <= n: measured on all of them when there are few enough (:data:`EXHAUSTIVE_LIMIT`);
* **certified by grid** — a lower bound on every word of length <= n from the grid the scores
  lie on, or declared by a compiler and checked (:mod:`hardsoft.convert.grid`);
* **measured on given words only** — exact on the measured words, nothing shown for the others;
* **given gap** — taken on trust (``--gap``).

:func:`verify_all` runs every word up to a length through both models (``--verify-n``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer

ALL_WORDS = "certified for all words to n"
GRID = "certified by grid"
MEASURED = "measured on given words only"
GIVEN = "given gap (trusted, not checked)"
NOTHING = "nothing to soften"

COVERS = {
    ALL_WORDS: "all words up to n",
    GRID: "all words up to n",
    MEASURED: "measured words",
    GIVEN: "words whose gaps are at least the given gap",
    NOTHING: "all words (the model is unchanged)",
}
"""The JSON ``covers`` of each case."""

EXHAUSTIVE_LIMIT = 1 << 14
"""Most words (all lengths together) the default measures exhaustively to certify a gap."""

VERIFY_LIMIT = 1 << 18
"""Most words ``--verify-n`` runs through both models."""

MEASURED_WARNING = (
    "warning: the error bound covers only the measured words; other words of the same "
    "lengths may exceed it (check every word with --verify-n N)"
)


def word_count(alphabet_size: int, n: int) -> int:
    """Number of non-empty words of length <= n."""
    return sum(alphabet_size**k for k in range(1, n + 1))


def all_words_up_to(alphabet: tuple[str, ...], n: int) -> list[str]:
    """Every non-empty word of length <= n, shortest first."""
    return ["".join(t) for k in range(1, n + 1) for t in itertools.product(alphabet, repeat=k)]


def exhaustive_words(alphabet: tuple[str, ...], n: int) -> tuple[list[str], dict[str, Any]] | None:
    """All words up to n with their description, or None when there are more than
    :data:`EXHAUSTIVE_LIMIT`."""
    count = word_count(len(alphabet), n)
    if count > EXHAUSTIVE_LIMIT:
        return None
    info = {
        "kind": "exhaustive",
        "words": count,
        "lengths": list(range(1, n + 1)),
        "description": f"every word of length <= {n} ({count} words)",
    }
    return all_words_up_to(alphabet, n), info


@dataclass
class Verification:
    """|softened − hard| over every word of length <= n."""

    n: int
    words: int
    max_error: float
    eps: float
    over_eps: int
    worst_word: str
    worst_position: int

    @property
    def ok(self) -> bool:
        return self.over_eps == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "words": self.words,
            "max_error": self.max_error,
            "eps": self.eps,
            "words_over_eps": self.over_eps,
            "worst_word": self.worst_word,
            "worst_position": self.worst_position,
            "ok": self.ok,
        }

    def describe(self) -> str:
        verdict = "all within eps" if self.ok else f"{self.over_eps} words exceed eps"
        return (
            f"verified every word of length <= {self.n} ({self.words} words): max |softened - "
            f"hard| = {self.max_error:.3g} (eps {self.eps:g}), {verdict}; worst "
            f"{self.worst_word!r} at position {self.worst_position}"
        )


def verify_all(hard: Transformer, soft: Transformer, n: int, eps: float) -> Verification:
    """Run every word of length <= n through both models (at most :data:`VERIFY_LIMIT`)."""
    alphabet = tuple(hard.spec.alphabet)
    count = word_count(len(alphabet), n)
    if n < 1 or count > VERIFY_LIMIT:
        raise HardsoftError(
            f"--verify-n {n}: {count} words up to that length; at most {VERIFY_LIMIT} are run "
            "(choose a smaller N)"
        )
    worst, worst_word, worst_pos, over = -1.0, "", 0, 0
    for k in range(1, n + 1):
        words = ["".join(t) for t in itertools.product(alphabet, repeat=k)]
        a = np.stack(hard.run_words(words, batch_size=4096))
        b = np.stack(soft.run_words(words, batch_size=4096))
        err = np.abs(a - b).max(axis=-1)  # [words, positions]
        per_word = err.max(axis=-1)
        over += int((per_word > eps).sum())
        i = int(per_word.argmax())
        if per_word[i] > worst:
            worst, worst_word, worst_pos = float(per_word[i]), words[i], int(err[i].argmax()) + 1
    return Verification(n, count, worst, eps, over, worst_word, worst_pos)

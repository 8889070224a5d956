"""Induction-head tasks (Elhage et al. 2021; k-hop: Sanford, Hsu and Telgarsky 2024), as in
Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §6. These are transductions with a per-position
target, not languages.

With 1-based positions and ``w = w_1 ... w_n``:

- ``find(i) = max({0} ∪ {j <= i : w_{j-1} = w_i})``: the position right after the rightmost
  earlier occurrence of the current symbol (``j - 1 < i``), or 0 if there is none.
- ``find^k(i) = find(find^{k-1}(i))`` with ``find(0) = 0``.
- The k-hop target at ``i`` is ``w_{find^k(i)}``, or ⊥ when ``find^k(i) = 0``.

For ``k = 1`` this is the basic induction head: find the rightmost ``j < i`` with ``w_j = w_i``
and output ``w_{j+1}``. ``prefix_reference`` returns the target as an index into the alphabet,
with ``-1`` for ⊥.
"""

from __future__ import annotations

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language

DEFAULT_ALPHABET = ("a", "b", "c", "d")
NO_ANSWER = -1


def induction_find(codes: np.ndarray) -> np.ndarray:
    """``find(i)`` for every 1-based position ``i``, returned as a length-``n+1`` array with
    ``out[0] = 0`` (so it can be iterated for k hops)."""
    n = len(codes)
    out = np.zeros(n + 1, dtype=np.int64)
    last_seen: dict[int, int] = {}  # symbol -> its rightmost 1-based position so far (< i)
    for i in range(1, n + 1):
        s = int(codes[i - 1])
        j_prev = last_seen.get(s)
        out[i] = j_prev + 1 if j_prev is not None else 0
        last_seen[s] = i
    return out


def khop_targets(codes: np.ndarray, k: int) -> np.ndarray:
    """The k-hop induction-head target at every position (symbol index, or -1 for ⊥)."""
    if k < 1:
        raise HardsoftError(f"k-hop induction needs k >= 1, got {k}")
    find = induction_find(codes)
    pos = np.arange(len(codes) + 1)
    for _ in range(k):
        pos = find[pos]
    padded = np.concatenate([[NO_ANSWER], np.asarray(codes, dtype=np.int64)])
    return padded[pos][1:]


class InductionTask(Language):
    """The k-hop induction-head task over a finite alphabet (``k = 1``: basic induction head)."""

    kind = "task"

    def __init__(self, k: int = 1, alphabet: tuple[str, ...] = DEFAULT_ALPHABET) -> None:
        if k < 1:
            raise HardsoftError(f"k-hop induction needs k >= 1, got {k}")
        self.k = k
        self.alphabet = tuple(alphabet)
        self.name = "induction-head" if k == 1 else f"khop{k}"
        self.description = (
            f"{k}-hop induction head over {''.join(self.alphabet)}: per position, the symbol "
            "after the rightmost earlier occurrence of the current symbol, iterated "
            f"{k} time(s); -1 when there is none"
        )

    def _member(self, word: str) -> bool:
        raise HardsoftError(
            f"{self.name} is a task with per-position outputs, not a language: use prefix_reference"
        )

    def member(self, word: str) -> bool:
        self.validate(word)
        return self._member(word)

    def prefix_reference(self, word: str) -> np.ndarray:
        """The per-position target as symbol indices (``-1`` = no answer)."""
        return khop_targets(self.encode(word), self.k)

    def reference_symbols(self, word: str) -> list[str | None]:
        """The per-position target as symbols (``None`` = no answer)."""
        return [self.alphabet[c] if c >= 0 else None for c in self.prefix_reference(word)]

    def has_members(self, n: int) -> bool:
        return False

    def has_nonmembers(self, n: int) -> bool:
        return False

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        self._member("")
        return []

    def sample_negative(
        self, n: int, count: int, rng: np.random.Generator | int | None = None, hard: bool = True
    ) -> list[str]:
        self._member("")
        return []

    def sample_balanced(
        self,
        n: int,
        count: int,
        rng: np.random.Generator | int | None = None,
        hard: bool = True,
        allow_one_class: bool = False,
    ) -> tuple[list[str], np.ndarray]:
        """Tasks have no members: raises HardsoftError (use :meth:`sample_uniform`)."""
        self._member("")
        raise AssertionError("unreachable")

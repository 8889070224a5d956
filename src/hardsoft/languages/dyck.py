"""DYCK-k: balanced strings over k bracket pairs.

Bracket pairs, in this order: ``()``, ``[]``, ``{}``, ``<>``, then ``aA``, ``bB``, ... for k > 4.
``dyck1`` = ``()``, ``dyck2`` = ``()[]``, ``dyck3`` = ``()[]{}``. The alphabet lists the pairs
open-then-close: ``("(", ")", "[", "]", ...)``. The empty word is in DYCK-k.
"""

from __future__ import annotations

import math
import string

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, _as_rng, check_length, codes_to_words

_PAIRS = ["()", "[]", "{}", "<>"] + [c + c.upper() for c in string.ascii_lowercase]


def bracket_pairs(k: int) -> list[str]:
    """The first ``k`` bracket pairs as two-character strings ``open + close``."""
    if not 1 <= k <= len(_PAIRS):
        raise HardsoftError(f"DYCK-k needs 1 <= k <= {len(_PAIRS)}, got {k}")
    return _PAIRS[:k]


def count_dyck_paths(r: int, h: int) -> float:
    """Number of +-1 paths of length ``r`` from height ``h`` to 0 that never go below 0
    (ballot number ``C(r, a) (h + 1) / (r - a + 1)`` with ``a = (r - h) / 2``), as a float."""
    if h < 0 or h > r or (r - h) % 2:
        return 0.0
    a = (r - h) // 2
    return math.comb(r, a) * (h + 1) / (r - a + 1)


class Dyck(Language):
    """Balanced strings over ``k`` bracket types."""

    def __init__(self, k: int) -> None:
        self.k = k
        pairs = bracket_pairs(k)
        self.name = f"dyck{k}"
        self.alphabet = tuple(c for pair in pairs for c in pair)
        self.opens = {pair[0]: t for t, pair in enumerate(pairs)}
        self.closes = {pair[1]: t for t, pair in enumerate(pairs)}
        self.description = f"balanced strings over {' '.join(pairs)} (the empty word is in)"

    def _scan(self, word: str) -> np.ndarray:
        """Per prefix: 1 iff the prefix is a complete DYCK-k word (a stack scan)."""
        out = np.zeros(len(word), dtype=np.int64)
        stack: list[int] = []
        for i, ch in enumerate(word):
            if ch in self.opens:
                stack.append(self.opens[ch])
            elif not stack or stack.pop() != self.closes[ch]:
                break  # error: no later prefix is balanced
            out[i] = int(not stack)
        return out

    def _member(self, word: str) -> bool:
        return len(word) == 0 or bool(self._scan(word)[-1])

    def prefix_reference(self, word: str) -> np.ndarray:
        self.validate(word)
        return self._scan(word)

    def is_prefix_ok(self, word: str) -> bool:
        """Can ``word`` be continued to a DYCK-k word? (No unmatched or mismatched close.)"""
        self.validate(word)
        stack: list[int] = []
        for ch in word:
            if ch in self.opens:
                stack.append(self.opens[ch])
            elif not stack or stack.pop() != self.closes[ch]:
                return False
        return True

    def has_members(self, n: int) -> bool:
        return n % 2 == 0

    def has_nonmembers(self, n: int) -> bool:
        return n > 0

    def sample_positive(self, n: int, count: int, rng=None) -> list[str]:
        """Exactly uniform over DYCK-k words of length ``n``: the bracket shape is a uniform
        Dyck path (each step up with probability N(r-1, h+1) / N(r, h), ballot numbers), and
        each matched pair gets a uniform type."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and n % 2:
            raise HardsoftError(f"{self.name} has no words of odd length {n}")
        heights = np.zeros(count, dtype=np.int64)
        types = rng.integers(0, self.k, size=(count, n))  # type of an open at this step
        stacks = np.zeros((count, n // 2 + 1), dtype=np.int64)
        codes = np.zeros((count, n), dtype=np.int64)
        rows = np.arange(count)
        for t in range(n):
            r = n - t
            # probability of going up from height h with r steps left; log-space ratio of ballot
            # numbers, computed per distinct height
            uniq, inv = np.unique(heights, return_inverse=True)
            p_up = np.array([_p_up(r, int(h)) for h in uniq])[inv.reshape(-1)]
            up = rng.random(count) < p_up
            opens_t = types[:, t]
            stacks[rows[up], heights[up]] = opens_t[up]
            heights[~up] -= 1
            close_types = stacks[rows, np.maximum(heights, 0)]
            codes[:, t] = np.where(up, 2 * opens_t, 2 * close_types + 1)
            heights[up] += 1
        return codes_to_words(self.alphabet, codes)


def _log_paths(r: int, h: int) -> float:
    if h < 0 or h > r or (r - h) % 2:
        return -math.inf
    a = (r - h) // 2
    return (
        math.lgamma(r + 1)
        - math.lgamma(a + 1)
        - math.lgamma(r - a + 1)
        + math.log(h + 1)
        - math.log(r - a + 1)
    )


def _p_up(r: int, h: int) -> float:
    """P(step up | r steps left at height h) for a uniform Dyck path ending at 0."""
    total = _log_paths(r, h)
    up = _log_paths(r - 1, h + 1)
    if up == -math.inf:
        return 0.0
    return math.exp(up - total)

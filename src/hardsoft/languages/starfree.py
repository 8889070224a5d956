"""Small star-free languages (definable in LTL, so by masked unique-hard transformers without
position features: Yang, Chiang & Angluin (2024)): the tasks the ``decompile-trained``
experiment trains on, beside ``first`` and ``ones-star``.

- ``contains-ab``: Σ*abΣ* over ``ab`` (star-free depth 2);
- ``ends-ab``: Σ*ab over ``ab`` (the last two symbols);
- ``ab-star``: (ab)* over ``ab`` (star-free although written with a star);
- ``dyck1-depth2`` (any ``dyck1-depth<k>``): DYCK-1 words whose nesting never exceeds k.

Each class samples its members exactly uniformly (and non-members where rejection would fail).
"""

from __future__ import annotations

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import (
    Language,
    OneWordPerEvenLength,
    _as_rng,
    check_length,
    codes_to_words,
)


class ContainsAB(Language):
    """Σ*abΣ* over ``ab``: some ``a`` is immediately followed by ``b``."""

    name = "contains-ab"
    alphabet = ("a", "b")
    description = "contains the factor ab (Σ*abΣ*), over ab"

    def _member(self, word: str) -> bool:
        return "ab" in word

    def has_members(self, n: int) -> bool:
        return n >= 2

    def has_nonmembers(self, n: int) -> bool:
        return True

    def sample_negative(
        self, n: int, count: int, rng: np.random.Generator | int | None = None, hard: bool = True
    ) -> list[str]:
        """Exactly uniform over the n + 1 non-members ``b^k a^(n-k)`` (rejection from uniform
        words would almost never find one at large n)."""
        check_length(n, count)
        rng = _as_rng(rng)
        return ["b" * int(k) + "a" * (n - int(k)) for k in rng.integers(0, n + 1, size=count)]


class EndsAB(Language):
    """Σ*ab over ``ab``: the last two symbols are ``ab``."""

    name = "ends-ab"
    alphabet = ("a", "b")
    description = "ends with ab (the last two symbols, Σ*ab), over ab"

    def _member(self, word: str) -> bool:
        return word.endswith("ab")

    def has_members(self, n: int) -> bool:
        return n >= 2

    def has_nonmembers(self, n: int) -> bool:
        return True

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """Exactly uniform: n - 2 free symbols, then ``ab``."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and n < 2:
            raise HardsoftError(f"{self.name} has no words of length {n}")
        return [w + "ab" for w in self.sample_uniform(max(0, n - 2), count, rng)]


class ABStar(OneWordPerEvenLength):
    """(ab)* over ``ab`` (the empty word is in; one member of each even length)."""

    name = "ab-star"
    alphabet = ("a", "b")
    description = "(ab)*, over ab (star-free; the empty word is in)"

    def _member(self, word: str) -> bool:
        return len(word) % 2 == 0 and word == "ab" * (len(word) // 2)

    def word_of(self, n: int) -> str:
        return "ab" * (n // 2)


class BoundedDyck(Language):
    """DYCK-1 over ``()`` with nesting depth at most ``depth`` (the empty word is in)."""

    alphabet = ("(", ")")

    def __init__(self, depth: int) -> None:
        if depth < 1:
            raise HardsoftError(f"the depth bound must be >= 1, got {depth}")
        self.depth = depth
        self.name = f"dyck1-depth{depth}"
        self.description = f"balanced strings over () nested at most {depth} deep"

    def _member(self, word: str) -> bool:
        h = 0
        for ch in word:
            h += 1 if ch == "(" else -1
            if not 0 <= h <= self.depth:
                return False
        return h == 0

    def has_members(self, n: int) -> bool:
        return n % 2 == 0

    def has_nonmembers(self, n: int) -> bool:
        return n > 0

    def _paths(self, n: int) -> np.ndarray:
        """Row ``r``: the number of valid continuations of r steps from height h back to 0,
        up to a factor per row (each row is scaled to max 1: only ratios within a row are
        used, and the recurrence is linear)."""
        d = self.depth
        table = np.zeros((n + 1, d + 2))
        table[0, 0] = 1.0
        for r in range(1, n + 1):
            for h in range(d + 1):
                table[r, h] = (table[r - 1, h - 1] if h >= 1 else 0.0) + table[r - 1, h + 1]
            top = table[r].max()
            if top > 0:
                table[r] /= top
        return table

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """Exactly uniform over members of length ``n``: each step goes up with probability
        N(r - 1, h + 1) / N(r, h) (N: the number of bounded paths back to 0)."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and n % 2:
            raise HardsoftError(f"{self.name} has no words of odd length {n}")
        table = self._paths(n)
        codes = np.zeros((count, n), dtype=np.int64)
        heights = np.zeros(count, dtype=np.int64)
        for t in range(n):
            r = n - t
            row = table[r - 1]
            up_ways = np.where(heights < self.depth, row[np.minimum(heights + 1, self.depth)], 0.0)
            down_ways = np.where(heights >= 1, row[np.maximum(heights - 1, 0)], 0.0)
            p_up = up_ways / np.maximum(up_ways + down_ways, 1e-300)
            up = rng.random(count) < p_up
            codes[:, t] = np.where(up, 0, 1)
            heights += np.where(up, 1, -1)
        return codes_to_words(self.alphabet, codes)

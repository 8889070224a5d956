"""Small star-free languages (definable in LTL, so by masked unique-hard transformers without
position features: Yang, Chiang & Angluin (2024)): the tasks the ``decompile-trained``
experiment trains on, beside ``first`` and ``ones-star``.

- ``contains-ab``: Σ*abΣ* over ``ab`` (star-free depth 2);
- ``ends-ab``: Σ*ab over ``ab`` (the last two symbols);
- ``ab-star``: (ab)* over ``ab`` (star-free although written with a star);
- ``dyck1-depth2`` (any ``dyck<k>-depth<m>``): DYCK-k words whose nesting never exceeds m
  (``dyck2-depth3`` is FLaRe's Dyck-(2, 3));
- ``repeat-01``: (01)* over ``01`` (FLaRe's Repeat 01).

Each class samples its members exactly uniformly (and non-members where rejection would fail).
"""

from __future__ import annotations

import itertools

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import (
    Language,
    OneWordPerEvenLength,
    _as_rng,
    check_length,
    codes_to_words,
)
from hardsoft.languages.dyck import Dyck, bracket_pairs
from hardsoft.languages.regular import DFA, dfa_from_json, dfa_from_regex


class ContainsAB(Language):
    """Σ*abΣ* over ``ab``: some ``a`` is immediately followed by ``b``."""

    name = "contains-ab"
    alphabet = ("a", "b")
    description = "contains the factor ab (Σ*abΣ*), over ab"

    def _member(self, word: str) -> bool:
        return "ab" in word

    def automaton(self) -> DFA:
        return dfa_from_regex(".*ab.*", "ab")

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

    def automaton(self) -> DFA:
        return dfa_from_regex(".*ab", "ab")

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
    """(ab)* over ``ab`` (the empty word is in; one member of each even length); subclasses
    repeat another pair of symbols (``repeat-01``)."""

    name = "ab-star"
    alphabet = ("a", "b")
    description = "(ab)*, over ab (star-free; the empty word is in)"

    @property
    def pair(self) -> str:
        return "".join(self.alphabet)

    def _member(self, word: str) -> bool:
        return len(word) % 2 == 0 and word == self.pair * (len(word) // 2)

    def word_of(self, n: int) -> str:
        return self.pair * (n // 2)

    def automaton(self) -> DFA:
        return dfa_from_regex(f"({self.pair})*", self.pair)


class Repeat01(ABStar):
    """FLaRe's Repeat 01: (01)* over ``01`` (Butoi et al. (ICLR 2025), Table 1)."""

    name = "repeat-01"
    alphabet = ("0", "1")
    description = (
        "(01)*, over 01: FLaRe's Repeat 01 (Butoi, Khalighinejad, Svete, Valvoda, Cotterell & "
        "DuSell (ICLR 2025), Table 1); star-free; the empty word is in"
    )


class BoundedDyck(Language):
    """DYCK-k (``k`` bracket types, :class:`~hardsoft.languages.dyck.Dyck`) with nesting depth
    at most ``depth`` (Dyck-(k, D) of Yao et al. (ACL 2021)); the empty word is in.
    ``dyck2-depth3`` is FLaRe's Dyck-(2, 3) (Butoi et al. (ICLR 2025), Table 1)."""

    def __init__(self, depth: int, k: int = 1) -> None:
        if depth < 1:
            raise HardsoftError(f"the depth bound must be >= 1, got {depth}")
        self.depth = depth
        self.k = k
        self.dyck = Dyck(k)
        self.alphabet = self.dyck.alphabet
        self.name = f"dyck{k}-depth{depth}"
        pairs = " ".join(bracket_pairs(k))
        self.description = f"balanced strings over {pairs} nested at most {depth} deep"
        if k > 1:
            self.description += (
                f": Dyck-({k}, {depth}) of Yao, Peng, Papadimitriou & Narasimhan (ACL 2021)"
            )
        if (k, depth) == (2, 3):
            self.description += (
                ", FLaRe's Dyck-(2, 3) (Butoi, Khalighinejad, Svete, Valvoda, Cotterell & "
                "DuSell (ICLR 2025), Table 1)"
            )

    def _heights(self, word: str) -> np.ndarray:
        """The nesting height after each symbol (opening brackets minus closing ones)."""
        opens = np.fromiter((c in self.dyck.opens for c in word), dtype=bool, count=len(word))
        return np.cumsum(np.where(opens, 1, -1))

    def _member(self, word: str) -> bool:
        return self.dyck._member(word) and bool((self._heights(word) <= self.depth).all())

    def prefix_reference(self, word: str) -> np.ndarray:
        """A complete DYCK-k prefix (the stack scan of :class:`Dyck`) never deeper than the
        bound so far."""
        balanced = self.dyck.prefix_reference(word)
        if not word:
            return balanced
        shallow = np.maximum.accumulate(self._heights(word)) <= self.depth
        return (balanced.astype(bool) & shallow).astype(np.int64)

    def automaton(self) -> DFA:
        """States: the stack of open brackets (at most ``depth``); any other move rejects."""
        opens = list(self.dyck.opens)
        close_of = {o: self.alphabet[self.alphabet.index(o) + 1] for o in opens}
        stacks = [
            "".join(s) for d in range(self.depth + 1) for s in itertools.product(opens, repeat=d)
        ]
        edges = {}
        for st in stacks:
            moves = {o: "s" + st + o for o in opens} if len(st) < self.depth else {}
            if st:
                moves[close_of[st[-1]]] = "s" + st[:-1]
            edges["s" + st] = moves
        data = {
            "alphabet": "".join(self.alphabet),
            "start": "s",
            "accept": ["s"],
            "transitions": edges,
        }
        return dfa_from_json(data, f"{self.name} DFA")

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
        if self.k > 1:
            codes = self._typed(codes, rng)
        return codes_to_words(self.alphabet, codes)

    def _typed(self, shapes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Uniform bracket types on uniform shapes (0 open, 1 close): every shape of length n
        has n/2 pairs, so the words are uniform too. A close takes its open's type."""
        count, n = shapes.shape
        types = rng.integers(0, self.k, size=(count, n))
        stacks = np.zeros((count, self.depth + 1), dtype=np.int64)
        heights = np.zeros(count, dtype=np.int64)
        rows = np.arange(count)
        codes = np.zeros_like(shapes)
        for t in range(n):
            up = shapes[:, t] == 0
            stacks[rows[up], heights[up]] = types[up, t]
            heights[~up] -= 1
            top = stacks[rows, np.maximum(heights, 0)]
            codes[:, t] = np.where(up, 2 * types[:, t], 2 * top + 1)
            heights[up] += 1
        return codes

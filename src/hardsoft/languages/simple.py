"""The simple languages of the discussion in Hahn (2020) §5, which hard attention *can* recognise:
``ones-star`` (1*), ``anbn`` (a^n b^n), plus ``majority`` and ``first``."""

from __future__ import annotations

import numpy as np

from hardsoft.languages.base import Language, OneWordPerEvenLength, _as_rng, check_length
from hardsoft.languages.regular import DFA, dfa_from_regex


class OnesStar(Language):
    """1* over ``01``: no 0 at all (the empty word is in)."""

    name = "ones-star"
    alphabet = ("0", "1")
    description = "1*: words over 01 with no 0 (the empty word is in)"

    def _member(self, word: str) -> bool:
        return "0" not in word

    def automaton(self) -> DFA:
        return dfa_from_regex("1*", "01")

    def prefix_reference(self, word: str) -> np.ndarray:
        codes = self.encode(word)
        return (np.cumsum(codes == 0) == 0).astype(np.int64)

    def has_members(self, n: int) -> bool:
        return True

    def has_nonmembers(self, n: int) -> bool:
        return n > 0

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        check_length(n, count)
        return ["1" * n] * count


class AnBn(OneWordPerEvenLength):
    """a^k b^k for k >= 0 over ``ab`` (the empty word is in; only even lengths have members)."""

    name = "anbn"
    alphabet = ("a", "b")
    description = "a^k b^k, k >= 0, over ab (the empty word is in)"

    def _member(self, word: str) -> bool:
        k = len(word) // 2
        return len(word) % 2 == 0 and word == "a" * k + "b" * k

    def prefix_reference(self, word: str) -> np.ndarray:
        self.validate(word)
        out = np.zeros(len(word), dtype=np.int64)
        n_a = n_b = 0
        ok = True
        for i, ch in enumerate(word):
            if ch == "a":
                if n_b:
                    ok = False
                n_a += 1
            else:
                n_b += 1
            out[i] = int(ok and n_a == n_b)
        return out

    def word_of(self, n: int) -> str:
        return "a" * (n // 2) + "b" * (n // 2)


class Majority(Language):
    """Strictly more 1s than 0s over ``01`` (ties are *not* in; the empty word is not in)."""

    name = "majority"
    alphabet = ("0", "1")
    description = "strictly more 1s than 0s over 01 (a tie is rejected; the empty word is out)"

    def _member(self, word: str) -> bool:
        return word.count("1") > word.count("0")

    def prefix_reference(self, word: str) -> np.ndarray:
        codes = self.encode(word)
        return (np.cumsum(2 * codes - 1) > 0).astype(np.int64)

    def has_members(self, n: int) -> bool:
        return n > 0

    def has_nonmembers(self, n: int) -> bool:
        return True

    def near_miss(self, word: str, rng: np.random.Generator) -> str | None:
        """Flip a random 1 to 0 if that rejects (only when the margin #1 - #0 is 1 or 2)."""
        if self._member(word) and word.count("1") - word.count("0") <= 2:
            ones = [i for i, c in enumerate(word) if c == "1"]
            i = ones[int(rng.integers(len(ones)))]
            return word[:i] + "0" + word[i + 1 :]
        return super().near_miss(word, rng)

    def sample_negative(
        self, n: int, count: int, rng: np.random.Generator | int | None = None, hard: bool = True
    ) -> list[str]:
        """Hard negatives: a uniformly random member with the smallest possible margin (n//2+1
        ones), with one 1 flipped to 0, so each is one edit from a member."""
        check_length(n, count)
        rng = _as_rng(rng)
        if not hard or n == 0:
            return super().sample_negative(n, count, rng, hard=False)
        out = []
        k = n // 2 + 1  # fewest 1s of a member
        for _ in range(count):
            ones = rng.choice(n, size=k, replace=False)
            w = np.zeros(n, dtype=np.int64)
            w[ones] = 1
            w[ones[int(rng.integers(k))]] = 0
            out.append("".join("01"[b] for b in w))
        return out


class First(Language):
    """Words over ``01`` whose first symbol is 1 (the empty word is not in)."""

    name = "first"
    alphabet = ("0", "1")
    description = "first symbol is 1, over 01 (the empty word is out)"

    def _member(self, word: str) -> bool:
        return word[:1] == "1"

    def automaton(self) -> DFA:
        return dfa_from_regex("1.*", "01")

    def prefix_reference(self, word: str) -> np.ndarray:
        self.validate(word)
        return np.full(len(word), int(word[:1] == "1"), dtype=np.int64)

    def has_members(self, n: int) -> bool:
        return n > 0

    def has_nonmembers(self, n: int) -> bool:
        return True

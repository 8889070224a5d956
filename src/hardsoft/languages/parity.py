"""PARITY over {0, 1}, in both conventions.

- ``parity-even``: words with an even number of 1s (Hahn 2020's PARITY; the empty word is in).
- ``parity-odd``: words with an odd number of 1s (the convention of Yang et al. (arXiv:2412.09925v1)
  §1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hardsoft.languages.base import Language, _as_rng, check_length, codes_to_words
from hardsoft.languages.regular import DFA, dfa_from_json


class Parity(Language):
    """Words over ``01`` whose number of 1s is even (``odd=False``) or odd (``odd=True``)."""

    alphabet = ("0", "1")

    def __init__(self, odd: bool) -> None:
        self.odd = odd
        self.name = "parity-odd" if odd else "parity-even"
        self.description = (
            "odd number of 1s (the convention of Yang et al. 2026)"
            if odd
            else "even number of 1s (Hahn's PARITY; the empty word is in)"
        )

    restriction_target = True

    @property
    def process_name(self) -> str | None:
        """Hahn's PARITY automaton ends only after an even number of 1s (Hahn (2020) §6)."""
        return None if self.odd else "parity-process"

    def witness_flip(self, symbol: str, alphabet: Sequence[str], rng: np.random.Generator) -> str:
        """The other bit: one substitution always changes the parity."""
        return {"0": "1", "1": "0"}[symbol]

    def _member(self, word: str) -> bool:
        return (word.count("1") % 2 == 1) == self.odd

    def automaton(self) -> DFA:
        """Two states, the parity of the 1s read so far."""
        edges = {"even": {"0": "even", "1": "odd"}, "odd": {"0": "odd", "1": "even"}}
        accept = ["odd" if self.odd else "even"]
        data = {"alphabet": "01", "start": "even", "accept": accept, "transitions": edges}
        return dfa_from_json(data, f"{self.name} DFA")

    def members(self, words: Sequence[str]) -> np.ndarray:
        for w in words:
            self.validate(w)
        return np.array([(w.count("1") % 2 == 1) == self.odd for w in words], dtype=bool)

    def prefix_reference(self, word: str) -> np.ndarray:
        codes = self.encode(word)
        odd_so_far = np.cumsum(codes) % 2 == 1
        return (odd_so_far == self.odd).astype(np.int64)

    def has_members(self, n: int) -> bool:
        return n > 0 or not self.odd

    def has_nonmembers(self, n: int) -> bool:
        return n > 0 or self.odd

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """Exactly uniform over members: n-1 free bits, the last one fixes the parity."""
        check_length(n, count)
        rng = _as_rng(rng)
        if n == 0:
            return super().sample_positive(n, count, rng)
        bits = rng.integers(0, 2, size=(count, n))
        bits[:, -1] = (bits[:, :-1].sum(axis=1) + int(self.odd)) % 2
        return codes_to_words(self.alphabet, bits)

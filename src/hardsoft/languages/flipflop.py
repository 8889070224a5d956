"""The flip-flop language (Liu et al. 2023, cited in Yang et al. (arXiv:2412.09925v1) §6).

Alphabet ``w r i 0 1``. A word alternates instruction and data symbols: positions 1, 3, 5, ...
(1-based) hold an instruction (``w`` write, ``r`` read, ``i`` ignore) and positions 2, 4, ... a
bit. It is in the language iff

- its length is even and at least 4,
- the first instruction is ``w`` and the last instruction is ``r``,
- every ``r`` is followed by the bit that follows the most recent earlier ``w``.

So ``w1r1`` and ``w0i1r0w1r1`` are in; ``w1r0``, ``r1`` and ``w1r1i0`` are not. Reading is an
instance of the basic induction-head task: at a read, retrieve the bit after the rightmost ``w``.
:func:`flipflop_state` gives that per-position memory, which the AHAT/S-RASP programs compute.
"""

from __future__ import annotations

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, _as_rng, check_length

INSTRUCTIONS = ("w", "r", "i")
BITS = ("0", "1")


class FlipFlop(Language):
    """The flip-flop language over ``w r i 0 1`` (see the module docstring)."""

    name = "flipflop"
    alphabet = ("w", "r", "i", "0", "1")
    description = (
        "instruction/bit pairs over w r i 0 1; first instruction w, last r, every r followed "
        "by the bit written by the most recent w"
    )

    def _scan(self, word: str) -> np.ndarray:
        """Per prefix: 1 iff the prefix is a member (one left-to-right pass)."""
        out = np.zeros(len(word), dtype=np.int64)
        memory: str | None = None
        for t, ch in enumerate(word):  # t is 0-based; instructions at even t
            if t % 2 == 0:
                if ch not in INSTRUCTIONS or (t == 0 and ch != "w"):
                    break
            else:
                if ch not in BITS:
                    break
                instr = word[t - 1]
                if instr == "w":
                    memory = ch
                elif instr == "r":
                    if ch != memory:
                        break
                    out[t] = int(t >= 3)
        return out

    def _member(self, word: str) -> bool:
        return len(word) > 0 and bool(self._scan(word)[-1])

    def prefix_reference(self, word: str) -> np.ndarray:
        self.validate(word)
        return self._scan(word)

    def has_members(self, n: int) -> bool:
        return n >= 4 and n % 2 == 0

    def has_nonmembers(self, n: int) -> bool:
        return True

    def near_miss(self, word: str, rng: np.random.Generator) -> str | None:
        """A non-member one substitution away that keeps the instruction/bit alternation (an
        instruction replaced by another instruction, or a bit flipped), so it is rejected for
        its content (typically a wrong read), not for a malformed shape."""
        subs = [
            (t, c)
            for t in range(len(word))
            for c in (INSTRUCTIONS if t % 2 == 0 else BITS)
            if c != word[t]
        ]
        for k in rng.permutation(len(subs)):
            t, c = subs[int(k)]
            cand = word[:t] + c + word[t + 1 :]
            if not self._member(cand):
                return cand
        return super().near_miss(word, rng)

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """Exactly uniform over members of length ``n``: a member is fixed by its middle
        instructions and the bits after ``w``/``i`` (2 choices each; the bit after ``r`` is
        forced), so each middle instruction is drawn with probabilities w 2/5, i 2/5, r 1/5."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and not self.has_members(n):
            raise HardsoftError(f"flipflop has no words of length {n} (need even n >= 4)")
        m = n // 2
        out = []
        for _ in range(count):
            instr = ["w"] + list(rng.choice(["w", "i", "r"], size=m - 2, p=[0.4, 0.4, 0.2]))
            instr.append("r")
            chars, memory = [], "0"
            for ins in instr:
                bit = memory if ins == "r" else BITS[int(rng.integers(2))]
                if ins == "w":
                    memory = bit
                chars += [ins, bit]
            out.append("".join(chars))
        return out


def flipflop_state(word: str) -> np.ndarray:
    """Per position (0-based ``t``): the bit written by the most recent ``w`` whose data bit is
    at a position ``<= t``, as 0/1, or -1 if nothing has been written yet. Validates symbols but
    not the alternation (it reads ``word[t-1] == 'w'`` and ``word[t]`` a bit)."""
    FlipFlop().validate(word)
    out = np.full(len(word), -1, dtype=np.int64)
    memory = -1
    for t, ch in enumerate(word):
        if t > 0 and word[t - 1] == "w" and ch in BITS:
            memory = int(ch)
        out[t] = memory
    return out

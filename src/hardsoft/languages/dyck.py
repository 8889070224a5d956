"""DYCK-k: balanced strings over k bracket pairs.

Bracket pairs, in this order: ``()``, ``[]``, ``{}``, ``<>``, then ``aA``, ``bB``, ... for k > 4.
``dyck1`` = ``()``, ``dyck2`` = ``()[]``, ``dyck3`` = ``()[]{}``. The alphabet lists the pairs
open-then-close: ``("(", ")", "[", "]", ...)``. The empty word is in DYCK-k.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, _as_rng, check_length, codes_to_words

if TYPE_CHECKING:
    from hardsoft.languages.restriction import Restriction

DYCK_FIX_FRACTION = 0.2
_PAIRS = ["()", "[]", "{}", "<>"] + [c + c.upper() for c in string.ascii_lowercase]


def bracket_pairs(k: int) -> list[str]:
    """The first ``k`` bracket pairs as two-character strings ``open + close``."""
    if not 1 <= k <= len(_PAIRS):
        raise HardsoftError(f"DYCK-k needs 1 <= k <= {len(_PAIRS)}, got {k}")
    return _PAIRS[:k]


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

    # ------------------------------------------------------------------ capabilities
    restriction_target = True
    no_completion_reason = "no DYCK word compatible with the restriction was found"

    @property
    def process_name(self) -> str | None:
        """Hahn's 2DYCK PCFG generates DYCK-2 (Hahn (2020) §6)."""
        return "dyck2-process" if self.k == 2 else None

    def restriction_alphabet(self) -> tuple[str, ...]:
        """DYCK-k restricted to its first bracket pair is DYCK-1 (Hahn (2020) §5, Corollary 2), so
        free positions range over ``(`` and ``)`` only."""
        return self.alphabet[:2]

    def initial_fixes(self, n: int) -> dict[int, str]:
        """The first and last ⌊0.2 n⌋ positions fixed to ``(`` and ``)`` (Hahn (2020) §5, proof
        of Corollary 2): every completion keeps a deep enough nesting for the lemma."""
        m = int(math.floor(DYCK_FIX_FRACTION * n))
        fix = {i: self.alphabet[0] for i in range(m)}
        fix.update({n - 1 - i: self.alphabet[1] for i in range(m)})
        return fix

    def witness_word(self, restriction: Restriction, rng: np.random.Generator) -> str | None:
        """A completion inside DYCK-k (:func:`complete_dyck`); one substitution then always
        leaves the language (it changes the opener/closer balance or mismatches a pair)."""
        return complete_dyck(restriction.symbols, self.alphabet)

    def witness_note(self, n: int) -> str | None:
        return "odd n: no DYCK word has odd length, so no witness can exist" if n % 2 else None

    # ------------------------------------------------------------------ membership
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

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
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


# ---------------------------------------------------------------------------- completion
def _pairs(alphabet: Sequence[str]) -> list[tuple[str, str]]:
    return [(alphabet[2 * t], alphabet[2 * t + 1]) for t in range(len(alphabet) // 2)]


def _assign_types(
    shape: list[int], syms: list[str | None], pairs: list[tuple[str, str]]
) -> list[str] | None:
    """Given opener(+1)/closer(-1) for every position, match pairs with a stack and choose
    bracket types; None if two fixed symbols are mismatched or the shape is invalid."""
    opener = {o: t for t, (o, _) in enumerate(pairs)}
    closer = {c: t for t, (_, c) in enumerate(pairs)}
    out: list[str | None] = [None] * len(shape)
    stack: list[int] = []
    for i, s in enumerate(shape):
        if s > 0:
            stack.append(i)
            continue
        if not stack:
            return None
        j = stack.pop()
        sj, si = syms[j], syms[i]
        tj = opener.get(sj) if sj is not None else None
        ti = closer.get(si) if si is not None else None
        if tj is not None and ti is not None and tj != ti:
            return None
        t = tj if tj is not None else (ti if ti is not None else 0)
        out[j], out[i] = pairs[t]
    typed = [s for s in out if s is not None]
    return None if stack or len(typed) != len(out) else typed


def _greedy_shape(
    syms: list[str | None], pairs: list[tuple[str, str]], skip: set[int]
) -> list[int] | None:
    """Openers as early as possible among free positions (maximises every prefix depth), over
    the positions not in ``skip``; None if no valid shape exists."""
    opens = {o for o, _ in pairs}
    pos = [i for i in range(len(syms)) if i not in skip]
    if len(pos) % 2:
        return None
    fixed_open = sum(1 for i in pos if syms[i] is not None and syms[i] in opens)
    need = len(pos) // 2 - fixed_open
    shape = [0] * len(syms)
    depth = 0
    for i in pos:
        s = syms[i]
        if s is None:
            if need > 0:
                shape[i], need = 1, need - 1
            else:
                shape[i] = -1
        else:
            shape[i] = 1 if s in opens else -1
        depth += shape[i]
        if depth < 0:
            return None
    if need != 0 or depth != 0:
        return None
    return shape


def complete_dyck(symbols: Sequence[str | None], alphabet: tuple[str, ...]) -> str | None:
    """A word in DYCK-k compatible with the fixed ``symbols`` (None: free), or None if none was
    found (the restriction engine's witness for DYCK: Hahn (2020) §5, Corollary 2).

    For one bracket type the greedy shape (openers as early as possible) is complete. For more
    types, fixed middle symbols are first paired with an adjacent free position (a
    self-contained matched pair), then the rest is shaped greedily and typed by stack matching;
    if that fails the plain greedy is tried. Both results are checked by the caller's oracle.
    """
    pairs = _pairs(alphabet)
    syms = list(symbols)
    n = len(syms)
    if n % 2:
        return None
    opens = {o: c for o, c in pairs}
    closes = {c: o for o, c in pairs}
    attempts: list[tuple[list[str | None], set[int]]] = []
    if len(pairs) > 1:
        fixed = list(syms)
        used: set[int] = set()
        for i, s in enumerate(syms):
            if s is None or i in used:
                continue
            if s in closes and i - 1 >= 0 and syms[i - 1] is None and i - 1 not in used:
                # only pair if the closer is not the type the prefix/suffix already serves
                fixed[i - 1] = closes[s]
                used.update({i - 1, i})
            elif s in opens and i + 1 < n and syms[i + 1] is None and i + 1 not in used:
                fixed[i + 1] = opens[s]
                used.update({i, i + 1})
        attempts.append((fixed, used))
    attempts.append((syms, set()))
    for base, used in attempts:
        shape = _greedy_shape(base, pairs, used)
        if shape is None:
            continue
        sub = [i for i in range(n) if i not in used]
        typed = _assign_types([shape[i] for i in sub], [base[i] for i in sub], pairs)
        if typed is None:
            continue
        out = list(base)
        for i, s in zip(sub, typed):
            out[i] = s
        word = [s for s in out if s is not None]
        if len(word) == n:
            return "".join(word)
    return None

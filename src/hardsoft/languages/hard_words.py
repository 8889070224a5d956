"""Words that reach the hard cases of a length, over any alphabet: what uniform random words
almost never are.

A random word of length n has counts within about √n of each other and brackets nested about
√n deep; the cases where compiled models fail first are at the extremes (docs/programs.md,
"Float limits"; the float horizon in docs/compiler.md): the largest counts, counts balanced
exactly, the deepest nesting. For every length this gives, in this order:

* for each ordered pair of symbols (a, b) — bracket pairs such as ``(``, ``)`` first — the
  deepest balanced word ``a^⌈n/2⌉ b^⌊n/2⌋`` and its two near misses, one symbol short of
  balance at the end (``a^⌈n/2⌉ b^(⌊n/2⌋-1) a``) and at the start (``b a^(⌈n/2⌉-1) b^⌊n/2⌋``);
* each run ``a^n`` (the largest count of a symbol);
* each alternation ``(ab)^(n/2)`` (counts balanced at every even position);

at most ``limit`` of them (a seeded choice when there are more).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BRACKETS = ("()", "[]", "{}", "<>")
"""Symbol pairs read as opening and closing brackets (tried first)."""

HARD_WORDS = 32
"""Hard words per length, at most."""


def _pairs(alphabet: Sequence[str]) -> list[tuple[str, str]]:
    pairs = [(p[0], p[1]) for p in BRACKETS if p[0] in alphabet and p[1] in alphabet]
    rest = [(a, b) for a in alphabet for b in alphabet if a != b and (a, b) not in pairs]
    return pairs + rest


def _deep(a: str, b: str, n: int) -> list[str]:
    k, m = (n + 1) // 2, n // 2
    words = [a * k + b * m]
    if m >= 1:
        words.append(a * k + b * (m - 1) + a)
        words.append(b + a * (k - 1) + b * m)
    return words


def hard_words(
    alphabet: Sequence[str], n: int, *, limit: int = HARD_WORDS, seed: int = 0
) -> list[str]:
    """Up to ``limit`` distinct words of length ``n`` over ``alphabet`` (module docstring)."""
    if n < 1 or not alphabet:
        return []
    words: list[str] = []
    for a, b in _pairs(alphabet):
        words += _deep(a, b, n)
    words += [a * n for a in alphabet]
    for a, b in _pairs(alphabet):
        words.append(((a + b) * (n // 2 + 1))[:n])
    unique = list(dict.fromkeys(words))
    if len(unique) <= limit:
        return unique
    first = unique[: limit // 2]  # the bracket pairs' words, kept
    rng = np.random.default_rng(seed)
    rest = unique[limit // 2 :]
    pick = sorted(rng.choice(len(rest), size=limit - len(first), replace=False))
    return first + [rest[k] for k in pick]


__all__ = ["BRACKETS", "HARD_WORDS", "hard_words"]

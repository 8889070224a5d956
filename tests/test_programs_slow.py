"""The full matrix of the issue (slow): every shipped program, both targets, against the
interpreter and the language oracle: exhaustive DYCK-1 to length 10 and DYCK-2 to length 8,
and random strings of lengths 100, 1000 and 5000 (about half members, half one-edit near
misses), float64, zero mismatches."""

from __future__ import annotations

import itertools

import pytest

from hardsoft.languages import get_language
from hardsoft.programs.ahat.build import build
from hardsoft.programs.ahat.tieless import sample_words
from hardsoft.programs.ahat.verify import agree

pytestmark = pytest.mark.slow

PROGRAMS = [
    ("dyck", 1),
    ("dyck", 2),
    ("dyck", 3),
    ("flipflop", None),
    ("induction-head", None),
    ("khop", 2),
    ("khop", 3),
]
COUNTS = {100: 16, 1000: 6, 5000: 2}
_CACHE: dict = {}


def built(name, k):
    if (name, k) not in _CACHE:
        _CACHE[(name, k)] = build(name, k, "soft-temperature")
    return _CACHE[(name, k)]


@pytest.mark.parametrize("name,k,max_len", [("dyck", 1, 10), ("dyck", 2, 8), ("dyck", 3, 6)])
def test_exhaustive_dyck(name, k, max_len) -> None:
    b = built(name, k)
    alphabet = b.compiled.program.alphabet
    words = [
        "".join(t) for n in range(1, max_len + 1) for t in itertools.product(alphabet, repeat=n)
    ]
    a = agree(b.compiled.program, b.compiled.model, b.model, words)
    assert (a.interpreter, a.hard, a.soft) == (0, 0, 0), a.first_mismatch


@pytest.mark.parametrize("n", sorted(COUNTS))
@pytest.mark.parametrize("name,k", PROGRAMS)
def test_random_lengths(name, k, n) -> None:
    b = built(name, k)
    prog = b.compiled.program
    words = sample_words(prog.reference, prog.alphabet, n, COUNTS[n], seed=n + 7)
    lang = get_language(prog.reference)
    if lang.kind == "language":
        members = lang.members(words)
        assert members.sum() == len(words) - len(words) // 2
    a = agree(prog, b.compiled.model, b.model, words)
    assert (a.interpreter, a.hard, a.soft) == (0, 0, 0), a.first_mismatch

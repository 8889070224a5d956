"""The Tomita grammars (Tomita 1982), the classic benchmark of regular languages over ``01``,
as Weiss, Goldberg & Yahav (2018) and Bhattamishra, Ahuja & Goyal (2020) list them:

1. ``1*`` — hardsoft's ``ones-star`` (``tomita1`` is its alias);
2. ``(10)*``;
3. no odd-length block of 1s immediately followed by an odd-length block of 0s (blocks are
   maximal runs: ``100`` and ``1001`` are in, ``10`` and ``1000`` are out);
4. no ``000`` anywhere;
5. an even number of 0s and an even number of 1s;
6. the number of 0s minus the number of 1s is a multiple of 3;
7. ``0*1*0*1*``.

The empty word is in every one. Each oracle (``_member``) is written from the definition above;
each :meth:`automaton` is a second, separate definition (a transition table, or a regular
expression minimised by pyformlang), and the tests check that the two agree. Tomita 3 follows
Bhattamishra et al.'s (2020) automaton; Weiss et al.'s (2018) code reads "followed by" as
"anywhere later" (then ``100110`` is out), a different language.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from hardsoft.languages.automaton import BuiltAutomaton
from hardsoft.languages.regular import DFA, dfa_from_json, dfa_from_regex

CITATION = (
    "Tomita (1982); the standard list of Weiss, Goldberg & Yahav (ICML 2018) and "
    "Bhattamishra, Ahuja & Goyal (EMNLP 2020)"
)


def _table(start: str, accept: list[str], edges: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """A DFA file over ``01``: ``edges[q] = (after 0, after 1)``."""
    return {
        "alphabet": "01",
        "start": start,
        "accept": accept,
        "transitions": {q: {"0": z, "1": o} for q, (z, o) in edges.items()},
    }


class Tomita(BuiltAutomaton):
    """Tomita grammar ``number`` (2-7; 1 is ``ones-star``), see the module docstring."""

    alphabet = ("0", "1")
    number = 0
    definition = ""

    def __init__(self) -> None:
        self.name = f"tomita{self.number}"
        self.description = f"Tomita {self.number}: {self.definition} ({CITATION}); ε is in"


class Tomita2(Tomita):
    number, definition = 2, "(10)*"

    def _member(self, word: str) -> bool:
        return len(word) % 2 == 0 and word == "10" * (len(word) // 2)

    def _automaton(self) -> DFA:
        return dfa_from_regex("(10)*", "01")


class Tomita3(Tomita):
    number = 3
    definition = "no odd block of 1s immediately followed by an odd block of 0s"

    def _member(self, word: str) -> bool:
        runs = [(s, len(list(g))) for s, g in itertools.groupby(word)]
        return not any(
            a == "1" and m % 2 and b == "0" and k % 2 for (a, m), (b, k) in zip(runs, runs[1:])
        )

    def prefix_reference(self, word: str) -> np.ndarray:
        """Per prefix, in one pass: a prefix is out once an odd block of 1s has been followed
        by a complete odd block of 0s, or while it ends inside such a block of 0s."""
        self.validate(word)
        out = np.zeros(len(word), dtype=np.int64)
        broken = after_odd_ones = False
        run, length = "", 0
        for i, ch in enumerate(word):
            if ch != run:
                if run == "0" and after_odd_ones and length % 2:
                    broken = True  # the odd block of 0s is complete
                after_odd_ones = run == "1" and length % 2 == 1
                run, length = ch, 0
            length += 1
            open_bad = run == "0" and after_odd_ones and length % 2 == 1
            out[i] = int(not broken and not open_bad)
        return out

    def _automaton(self) -> DFA:
        # Bhattamishra et al. (2020): start, odd 1s, odd 1s then odd 0s, then even 0s, dead
        return dfa_from_json(
            _table(
                "start",
                ["start", "ones", "zeros-even"],
                {
                    "start": ("start", "ones"),
                    "ones": ("zeros-odd", "start"),
                    "zeros-odd": ("zeros-even", "dead"),
                    "zeros-even": ("zeros-odd", "ones"),
                    "dead": ("dead", "dead"),
                },
            ),
            "Tomita 3 DFA",
        )


class Tomita4(Tomita):
    number, definition = 4, "no 000"

    def _member(self, word: str) -> bool:
        return "000" not in word

    def _automaton(self) -> DFA:  # the number of trailing 0s, 3 = dead
        edges = {str(z): (str(min(z + 1, 3)), "0" if z < 3 else "3") for z in range(4)}
        return dfa_from_json(_table("0", ["0", "1", "2"], edges), "Tomita 4 DFA")


class Tomita5(Tomita):
    number, definition = 5, "an even number of 0s and an even number of 1s"

    def _member(self, word: str) -> bool:
        return word.count("0") % 2 == 0 and word.count("1") % 2 == 0

    def _automaton(self) -> DFA:  # the two parities
        edges = {f"{z}{o}": (f"{1 - z}{o}", f"{z}{1 - o}") for z in (0, 1) for o in (0, 1)}
        return dfa_from_json(_table("00", ["00"], edges), "Tomita 5 DFA")


class Tomita6(Tomita):
    number, definition = 6, "(number of 0s − number of 1s) ≡ 0 (mod 3)"

    def _member(self, word: str) -> bool:
        return (word.count("0") - word.count("1")) % 3 == 0

    def _automaton(self) -> DFA:
        edges = {str(d): (str((d + 1) % 3), str((d - 1) % 3)) for d in range(3)}
        return dfa_from_json(_table("0", ["0"], edges), "Tomita 6 DFA")


class Tomita7(Tomita):
    number, definition = 7, "0*1*0*1*"

    def _member(self, word: str) -> bool:
        """The blocks (maximal runs) read 0, 1, 0, 1 in this order, any of them absent: the
        sequence of block symbols is a factor of ``0101`` (a linear test; Python's ``re`` would
        backtrack on long words)."""
        blocks = "".join(s for s, _ in itertools.groupby(word))
        return blocks in "0101"

    def _automaton(self) -> DFA:
        return dfa_from_regex("0*1*0*1*", "01")


TOMITA: dict[str, type[Tomita]] = {
    cls().name: cls for cls in (Tomita2, Tomita3, Tomita4, Tomita5, Tomita6, Tomita7)
}

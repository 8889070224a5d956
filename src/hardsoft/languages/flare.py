"""The regular tasks of FLaRe (Butoi, Khalighinejad, Svete, Valvoda, Cotterell & DuSell,
"Training Neural Networks as Recognizers of Formal Languages", ICLR 2025; their language list,
Table 1, with the definitions of their released automata), with FLaRe's alphabets:

- ``even-pairs`` over ``01``: the number of adjacent pairs ``01`` and ``10`` is even (so a
  non-empty word is in iff its first and last symbols are equal); ε is in;
- ``repeat-01`` over ``01``: (01)* (:class:`~hardsoft.languages.starfree.ABStar`'s oracle);
- ``cycle-navigation`` over ``<>=01234``: moves on a cycle of 5 positions starting at 0 (``>``
  one step up, ``<`` one down, ``=`` stay), then one digit, the position reached;
- ``modular-arithmetic-simple`` over ``01234+-*=``: ``d (op d)* = r`` with digits 0–4, the
  operations evaluated left to right (no precedence, as FLaRe's automaton reads them) modulo 5,
  and r the result;
- FLaRe's Parity (an odd number of 1s) is ``parity-odd``, its First is ``first``, its
  Dyck-(2, 3) is ``dyck2-depth3``.

Each oracle is written from the definition (Python's own ``re`` for the shapes, arithmetic for
the values); each :meth:`automaton` is a separate transition table, and the tests check that
the two agree.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from hardsoft.languages.automaton import BuiltAutomaton
from hardsoft.languages.regular import DFA, dfa_from_json

CITATION = (
    "Butoi, Khalighinejad, Svete, Valvoda, Cotterell & DuSell (ICLR 2025), Table 1 "
    "(FLaRe), after Delétang et al. (ICLR 2023)"
)
MODULUS = 5
DIGITS = "01234"


class EvenPairs(BuiltAutomaton):
    """Even pairs over ``01`` (see the module docstring)."""

    name = "even-pairs"
    alphabet = ("0", "1")
    description = f"even number of adjacent pairs 01 and 10 ({CITATION}); ε is in"

    def _member(self, word: str) -> bool:
        return sum(a != b for a, b in zip(word, word[1:])) % 2 == 0

    def prefix_reference(self, word: str) -> np.ndarray:
        codes = self.encode(word)
        changes = np.concatenate([[0], np.cumsum(codes[1:] != codes[:-1])])
        return (changes[: len(codes)] % 2 == 0).astype(np.int64)

    def _automaton(self) -> DFA:  # the first symbol and the last one
        states = {"": ("00", "11")}
        for f in "01":
            for last in "01":
                states[f + last] = (f + "0", f + "1")
        return dfa_from_json(
            {
                "alphabet": "01",
                "start": "",
                "accept": ["", "00", "11"],
                "transitions": {q: {"0": z, "1": o} for q, (z, o) in states.items()},
            },
            "even pairs DFA",
        )


class CycleNavigation(BuiltAutomaton):
    """Cycle navigation over ``<>=01234`` (see the module docstring)."""

    name = "cycle-navigation"
    alphabet = ("<", ">", "=", *DIGITS)
    description = f"moves < > = on a {MODULUS}-cycle from 0, then the position reached ({CITATION})"

    def _member(self, word: str) -> bool:
        if re.fullmatch(r"[<>=]*[0-4]", word) is None:
            return False
        return int(word[-1]) == (word.count(">") - word.count("<")) % MODULUS

    def prefix_reference(self, word: str) -> np.ndarray:
        """A member has one digit, its last symbol: only the prefix ending at the first digit
        can be in."""
        self.validate(word)
        out = np.zeros(len(word), dtype=np.int64)
        first = next((i for i, c in enumerate(word) if c in DIGITS), None)
        if first is not None:
            out[first] = int(self._member(word[: first + 1]))
        return out

    def _automaton(self) -> DFA:
        moves = {">": 1, "<": -1, "=": 0}
        edges: dict[str, dict[str, str]] = {}
        for p in range(MODULUS):
            edges[str(p)] = {m: str((p + d) % MODULUS) for m, d in moves.items()}
            edges[str(p)].update({d: "done" if int(d) == p else "dead" for d in DIGITS})
        return dfa_from_json(
            {
                "alphabet": "".join(self.alphabet),
                "start": "0",
                "accept": ["done"],
                "transitions": edges,
            },
            "cycle navigation DFA",
        )


def _apply(value: int, op: str, digit: int) -> int:
    if op == "+":
        return (value + digit) % MODULUS
    if op == "-":
        return (value - digit) % MODULUS
    return (value * digit) % MODULUS


class ModularArithmetic(BuiltAutomaton):
    """Modular arithmetic (simple) over ``01234+-*=`` (see the module docstring)."""

    name = "modular-arithmetic-simple"
    alphabet = (*DIGITS, "+", "-", "*", "=")
    description = (
        f"d (op d)* = r, digits 0-4, + - * left to right mod {MODULUS}, r the result ({CITATION})"
    )

    def _member(self, word: str) -> bool:
        if re.fullmatch(r"[0-4]([-+*][0-4])*=[0-4]", word) is None:
            return False
        value = int(word[0])
        for k in range(1, len(word) - 2, 2):
            value = _apply(value, word[k], int(word[k + 1]))
        return value == int(word[-1])

    def prefix_reference(self, word: str) -> np.ndarray:
        """A member has one ``=``, second to last: only the prefix one past the first ``=``
        can be in."""
        self.validate(word)
        out = np.zeros(len(word), dtype=np.int64)
        eq = word.find("=")
        if 0 <= eq < len(word) - 1:
            out[eq + 1] = int(self._member(word[: eq + 2]))
        return out

    def _automaton(self) -> DFA:
        """States: the value so far (v), the value and the operation read (v op), after ``=``
        (=v), and done."""
        ops = {"+": operator.add, "-": operator.sub, "*": operator.mul}
        edges: dict[str, dict[str, str]] = {"start": {d: f"v{d}" for d in DIGITS}}
        for v in range(MODULUS):
            edges[f"v{v}"] = {op: f"v{v}{op}" for op in ops}
            edges[f"v{v}"]["="] = f"={v}"
            for op, fn in ops.items():
                edges[f"v{v}{op}"] = {d: f"v{fn(v, int(d)) % MODULUS}" for d in DIGITS}
            edges[f"={v}"] = {str(v): "done"}
        return dfa_from_json(
            {
                "alphabet": "".join(self.alphabet),
                "start": "start",
                "accept": ["done"],
                "transitions": edges,
            },
            "modular arithmetic DFA",
        )

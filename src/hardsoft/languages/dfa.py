"""The complete DFA every regular language is read as (:mod:`.regular` builds and minimises
them; :meth:`hardsoft.languages.base.Language.automaton` returns one): a module of its own,
below both, so that the language base class can name it without importing the regular
pipeline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DFA:
    """A complete DFA: states ``0..n_states-1``, start 0, ``delta[q][k]`` the state after
    symbol ``alphabet[k]`` from ``q``, ``accepting`` the accepting states."""

    alphabet: tuple[str, ...]
    delta: tuple[tuple[int, ...], ...]
    accepting: frozenset[int]

    @property
    def n_states(self) -> int:
        return len(self.delta)

    def run(self, word: str, state: int = 0) -> int:
        """The state reached from ``state`` after reading ``word``."""
        index = {s: k for k, s in enumerate(self.alphabet)}
        for ch in word:
            state = self.delta[state][index[ch]]
        return state

    def accepts(self, word: str) -> bool:
        return self.run(word) in self.accepting

    def to_json(self) -> dict[str, Any]:
        """A DFA file (the format :func:`~hardsoft.languages.regular.dfa_from_file` reads)."""
        return {
            "alphabet": "".join(self.alphabet),
            "start": "0",
            "accept": [str(q) for q in sorted(self.accepting)],
            "transitions": {
                str(q): {a: str(row[k]) for k, a in enumerate(self.alphabet)}
                for q, row in enumerate(self.delta)
            },
        }

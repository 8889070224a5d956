"""The word problem of a finite group: words over generators whose product is the identity.

``a5-identity`` is the word problem of the alternating group A5 over the generators
``a`` = (1 2 3 4 5) and ``b`` = (1 2 3), which generate A5. A5 is not solvable, so its word
problem is NC¹-complete (Barrington 1989, main theorem and its proof: the word problem of every
non-solvable group is): a constant-depth transformer for it would show TC⁰ = NC¹.

The oracle composes the letters' permutations directly (apply the first letter first); the
:meth:`~WordProblem.automaton` is the group's Cayley graph, its states the 60 elements reached
from the identity, built by a breadth-first search apart from the oracle.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from hardsoft.languages.automaton import BuiltAutomaton
from hardsoft.languages.regular import DFA, dfa_from_json

Permutation = tuple[int, ...]


def cycle(n: int, *points: int) -> Permutation:
    """The permutation of ``0..n-1`` given by one cycle of 1-based points, as the images."""
    image = list(range(n))
    for a, b in zip(points, points[1:] + points[:1]):
        image[a - 1] = b - 1
    return tuple(image)


def then(f: Permutation, g: Permutation) -> Permutation:
    """First ``f``, then ``g``."""
    return tuple(g[x] for x in f)


class WordProblem(BuiltAutomaton):
    """Words over named generators whose product (first letter applied first) is the
    identity; the empty word is in."""

    def __init__(self, name: str, generators: dict[str, Permutation], description: str) -> None:
        self.name = name
        self.generators = generators
        self.alphabet = tuple(generators)
        self.description = description
        self.degree = len(next(iter(generators.values())))

    def product(self, word: str) -> Permutation:
        value = tuple(range(self.degree))
        for ch in word:
            value = then(value, self.generators[ch])
        return value

    def _member(self, word: str) -> bool:
        return self.product(word) == tuple(range(self.degree))

    def prefix_reference(self, word: str) -> np.ndarray:
        self.validate(word)
        identity = value = tuple(range(self.degree))
        out = np.zeros(len(word), dtype=np.int64)
        for i, ch in enumerate(word):
            value = then(value, self.generators[ch])
            out[i] = int(value == identity)
        return out

    def _automaton(self) -> DFA:
        """States: the group elements reached from the identity, numbered as found; an edge
        ``x --s--> x·s`` (composition written out here on arrays, apart from the oracle)."""
        gens = {s: np.array(p) for s, p in self.generators.items()}
        start = np.arange(self.degree)
        index = {start.tobytes(): "0"}
        queue = deque([start])
        edges: dict[str, dict[str, str]] = {}
        while queue:
            x = queue.popleft()
            row = {}
            for s, g in gens.items():
                y = g[x]  # x then g: the point p goes to x[p], then to g[x[p]]
                key = y.tobytes()
                if key not in index:
                    index[key] = str(len(index))
                    queue.append(y)
                row[s] = index[key]
            edges[index[x.tobytes()]] = row
        data = {
            "alphabet": "".join(self.alphabet),
            "start": "0",
            "accept": ["0"],
            "transitions": edges,
        }
        return dfa_from_json(data, f"{self.name} Cayley graph")


def a5_identity() -> WordProblem:
    """The word problem of A5 over a = (1 2 3 4 5), b = (1 2 3)."""
    return WordProblem(
        "a5-identity",
        {"a": cycle(5, 1, 2, 3, 4, 5), "b": cycle(5, 1, 2, 3)},
        "the product of the letters is the identity of A5, a = (1 2 3 4 5), b = (1 2 3): a "
        "non-solvable group, NC¹-complete (Barrington 1989, main theorem); ε is in",
    )

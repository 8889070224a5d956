"""Views: a subsequence of the word's positions, read with the word's own operators.

The local-divisor induction (:mod:`hardsoft.regular.translate`) talks about words that are not
the input: the block since the last ``c``, the sequence of ``c``-positions. A view says how
past formulas *about such a word* are written as formulas about the input. Fix a real position
i in the view's domain; the view's word at i is a subsequence of positions ``≤ i`` ending at i,
and the view's word at an earlier domain position j of it is its prefix up to j. A view gives

* ``prev(f)``: the word has a second-to-last position, and ``f`` holds there (``Y``);
* ``since(f, g)``: some earlier position j of the word has ``g``, every position of the word
  strictly between j and i has ``f`` (hardsoft's strict ``S``, docs/logic.md);
* ``count_mod(w, p, s)``: ``Σ k·|{j in the word : f at j}| ≡ s (mod p)`` for ``w = [(f, k)]``,

each as a formula about the input, true at i exactly when the statement holds of the view's
word at i (for formulas ``f``, ``g`` that hold at a domain position exactly when the statement
they stand for holds of the view's word there). Induction on formulas then shows that a formula
built from a view's letters with these operators means, at every domain position, what it
means on the view's word (Diekert & Gastin 2008 relativise first-order formulas the same way).
Views nest: a view's parent is any view, the input (:class:`Base`) at the bottom.
"""

from __future__ import annotations

from collections.abc import Sequence

from hardsoft.logic.syntax import Formula
from hardsoft.regular.formulas import TRUE, Builder

Weights = Sequence[tuple[Formula, int]]


class View:
    """A subsequence of positions (see the module docstring)."""

    b: Builder

    def prev(self, f: Formula) -> Formula:
        raise NotImplementedError

    def since(self, f: Formula, g: Formula) -> Formula:
        raise NotImplementedError

    def count_mod(self, weights: Weights, p: int, s: int) -> Formula:
        raise NotImplementedError

    def past(self, g: Formula) -> Formula:
        """``P g``: some earlier position of the view's word has ``g``."""
        return self.since(TRUE, g)

    def start(self) -> Formula:
        """True at the first position of the view's word (no position before it)."""
        return self.b.neg(self.prev(TRUE))

    def last(self, c: Formula, f: Formula) -> Formula:
        """The last position of the word (up to and including i) where ``c`` holds has ``f``
        (``f`` must imply ``c``): ``f`` at i, or ``¬c`` at i and ``¬c S f``."""
        b = self.b
        return b.disj(f, b.conj(b.neg(c), self.since(b.neg(c), f)))


class Base(View):
    """The input itself: ``Y``, ``S`` and ``MOD(p, s)(Σ k·#<[f])`` as they are (``#<`` counts
    j ≤ i, so the count at i includes i)."""

    def __init__(self, b: Builder) -> None:
        self.b = b

    def prev(self, f: Formula) -> Formula:
        return self.b.prev(f)

    def since(self, f: Formula, g: Formula) -> Formula:
        return self.b.since(f, g)

    def count_mod(self, weights: Weights, p: int, s: int) -> Formula:
        return self.b.count_mod(weights, p, s)


class Segment(View):
    """The block since the last ``c``: the parent's word at i after its last position where
    ``c`` holds (all of it if there is none). Domain: parent positions without ``c``.

    * ``prev(f) = parent.prev(¬c ∧ f)``: i has no ``c``; the position before it lies in the
      same block iff it has no ``c`` either.
    * ``since(f, g) = parent.since(¬c ∧ f, ¬c ∧ g)``: a witness j without ``c`` and no ``c``
      between j and i is exactly a witness inside the block.
    * ``count_mod``: the count over the block is the parent's count of ``¬c ∧ f`` now minus
      its value at the last ``c`` (which counts nothing of the block); with no ``c`` yet it is
      the parent's count. So ``⋁_r [now ≡ r + s] ∧ ([at the last c ≡ r] or [no c and r = 0])``,
      the ``[at the last c ≡ r]`` read by ``parent.since(¬c, c ∧ [≡ r])``.
    """

    def __init__(self, parent: View, c: Formula) -> None:
        self.parent, self.c, self.b = parent, c, parent.b
        self.not_c = self.b.neg(c)
        self._counts: dict[tuple, Formula] = {}

    def prev(self, f: Formula) -> Formula:
        return self.parent.prev(self.b.conj(self.not_c, f))

    def since(self, f: Formula, g: Formula) -> Formula:
        b = self.b
        return self.parent.since(b.conj(self.not_c, f), b.conj(self.not_c, g))

    def count_mod(self, weights: Weights, p: int, s: int) -> Formula:
        key = (tuple(weights), p, s % p)
        found = self._counts.get(key)
        if found is None:  # memoised: nested segments would otherwise ask (2p)^depth times
            found = self._counts[key] = self._count_mod(weights, p, s)
        return found

    def _count_mod(self, weights: Weights, p: int, s: int) -> Formula:
        b, up = self.b, self.parent
        inner = [(b.conj(self.not_c, f), k) for f, k in weights]
        no_c = b.neg(up.past(self.c))
        terms = []
        for r in range(p):
            at_last_c = up.since(self.not_c, b.conj(self.c, up.count_mod(inner, p, r)))
            before = b.disj(at_last_c, no_c) if r == 0 else at_last_c
            terms.append(b.conj(up.count_mod(inner, p, r + s), before))
        return b.disj(*terms)


class Marks(View):
    """The positions of ``c`` after the first one: the parent's word at i restricted to the
    positions where ``c`` holds, the first of them left out. Domain: ``c ∧ parent.P c``.

    * ``prev(f) = parent.since(¬c, c ∧ P c ∧ f)``: the previous ``c`` (nothing but ``¬c``
      between), which must itself not be the first ``c``;
    * ``since(f, g) = parent.since(¬c ∨ f, c ∧ P c ∧ g)``: positions without ``c`` between the
      witness and i are not in the word; those with ``c`` are (they follow the witness, which
      is not the first ``c``) and need ``f``;
    * ``count_mod``: the parent's count of ``c ∧ P c ∧ f``.
    """

    def __init__(self, parent: View, c: Formula) -> None:
        self.parent, self.c, self.b = parent, c, parent.b
        self.not_c = self.b.neg(c)
        self.domain = self.b.conj(c, parent.past(c))

    def prev(self, f: Formula) -> Formula:
        return self.parent.since(self.not_c, self.b.conj(self.domain, f))

    def since(self, f: Formula, g: Formula) -> Formula:
        b = self.b
        return self.parent.since(b.disj(self.not_c, f), b.conj(self.domain, g))

    def count_mod(self, weights: Weights, p: int, s: int) -> Formula:
        b = self.b
        return self.parent.count_mod([(b.conj(self.domain, f), k) for f, k in weights], p, s)

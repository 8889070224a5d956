"""From a monoid morphism to past formulas: the local-divisor induction, and cyclic extensions
for groups. No search: every step is a construction, proved below.

**What is built.** A :class:`Level` holds a view (:mod:`hardsoft.regular.views`), a finite
monoid ``M`` and letters: formulas, each with an element of ``M``, that are mutually exclusive
and cover the view's domain. Let ``φ(u)`` be the product of the letters' elements along the
view's word ``u`` at a position i. For a set ``X ⊆ M``, ``formula(X)`` is a past formula that
holds at a domain position i iff ``φ(u) ∈ X``. ``M`` is cut down to the elements the letters
generate; the induction is on ``(|M|, number of distinct letter elements)``.

1. **Every letter is the identity.** ``φ(u) = 1``: the formula is ``true`` if ``1 ∈ X``, else
   ``false``.
2. **Some letter element c is not a unit** (its letters' formula: ``c``). ``B``: the other
   letters, ``T = φ(B*)``. A word is ``u = u_0 c u_1 c … c u_k`` with ``u_j ∈ B*``, so
   ``φ(u) = t_1 · σ(t_2 ⋯ t_k) · φ(u_k)`` with ``t_j = φ(u_{j−1})`` and ``σ(t) = ctc`` into
   the local divisor ``M_c = cM ∩ Mc`` (product ``xc ∘ cy = xcy``, identity ``c``; Diekert &
   Gastin 2008). ``σ`` extends to a morphism ``T* → M_c`` because ``ct_2c ∘ ct_3c = ct_2ct_3c``,
   and ``|M_c| < |M|``: ``1 ∈ cM`` would give c a right inverse, so make it a unit. The pieces:

   * ``φ(u_k)`` and every ``t_j``: the *segment* view (the block since the last ``c``) with the
     letters of ``B``, a level of monoid ``T ≤ M`` and one letter fewer (induction);
   * ``σ(t_2 ⋯ t_k)``: the *marks* view (the ``c``-positions after the first), whose letter at a
     ``c``-position is the value ``t`` of the block before it — ``Y c`` for the empty block,
     else ``Y (¬c ∧ [block ∈ {t}])`` — a level of the smaller monoid ``σ(T*) ⊆ M_c``
     (induction); letters with one ``σ``-image are one letter;
   * no ``c`` yet: ``¬c ∧ ¬P c ∧ [segment ∈ X ∩ T]``.

   With at least one ``c``: ``φ(u) ∈ X`` iff for some ``t_1`` (read at the first ``c``: ``Y`` of
   the segment's value, or ``1`` at the first position), ``x`` (read at the last ``c``: ``c`` if
   it is the first, else the marks level) and ``y`` (the segment after the last ``c``: ``1`` at
   a ``c``), ``t_1·x·y ∈ X``. The disjunction is grouped, never spelled out pair by pair: the
   ``t_1`` by the set ``{v : t_1 v ∈ X}``, then the ``x`` by ``{y : x y ∈ that set}``, so each
   level is asked for *sets* of elements, and each set once (memoised).
3. **Every letter is a unit.** Then ``M`` is a group ``G``. If it is solvable (the caller
   refused any other: :mod:`hardsoft.regular.classify`), it has a normal subgroup ``N`` of
   prime index ``p`` (:func:`hardsoft.regular.groups.prime_quotient`), so ``π: G → G/N ≅ Z_p``
   and, with representatives ``r_s = r^s`` of the cosets, the prefix value is
   ``φ(u_1..u_i) = n_i r_{s_i}`` with ``s_i = Σ_j π(u_j)`` — a weighted letter count mod p,
   ``MOD(p, s)(Σ_a π(a)·#<[a])`` in the view — and ``n_i = n_{i−1} · r_{s_{i−1}} φ(u_i)
   r_{s_i}^{−1}``: the element of ``N`` each step contributes depends on the letter and on
   ``s_{i−1}`` only. So ``N`` is a level over the letters ``(a, s)`` = ``a ∧ [count before i ≡
   s]`` (induction: ``|N| < |G|``), and ``φ(u) ∈ X`` iff ``⋁_s [s_i = s] ∧ n_i ∈ X r_s^{−1}``.

Cases 1–2 use only ``Y``, ``S`` and Booleans, so an aperiodic monoid (where the only unit is 1
and case 3 never arises with a non-trivial group) gives a past-LTL formula: the star-free case
(Schützenberger 1965; McNaughton & Papert 1971). Case 3 adds ``MOD`` of counts (Straubing,
Thérien & Barrington 1988 for the logic; Barrington (1989) for why non-solvable groups are
left out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import Formula
from hardsoft.regular.formulas import FALSE, TRUE, Builder
from hardsoft.regular.groups import prime_quotient
from hardsoft.regular.monoid import Monoid, local_divisor
from hardsoft.regular.views import Marks, Segment, View


class TooLarge(HardsoftError):
    """The translation passed one of its size limits (the message names the number)."""


@dataclass
class Budget:
    """The translation's limits: distinct nodes built, and the levels' nesting."""

    max_nodes: int
    max_depth: int = 400
    levels: int = 0
    deepest: int = 0


class Level:
    """One level of the induction (see the module docstring)."""

    def __init__(
        self,
        view: View,
        monoid: Monoid,
        letters: Sequence[tuple[Formula, int]],
        budget: Budget,
        depth: int = 0,
    ) -> None:
        b = view.b
        budget.levels += 1
        budget.deepest = max(budget.deepest, depth)
        if depth > budget.max_depth:
            raise TooLarge(f"the induction is {depth} levels deep (at most {budget.max_depth})")
        generated = monoid.closure(el for _, el in letters)
        self.monoid = monoid.submonoid(generated)
        self.up = {int(e): k for k, e in enumerate(self.monoid.lineage)}
        merged: dict[int, list[Formula]] = {}
        for f, el in letters:
            merged.setdefault(self.up[int(el)], []).append(f)
        self.letters = {el: b.disj(*fs) for el, fs in merged.items()}
        self.view, self.b, self.budget, self.depth = view, b, budget, depth
        self.memo: dict[frozenset[int], Formula] = {}
        self._step: _Divisor | _Cyclic | None = None

    def formula(self, elements: frozenset[int]) -> Formula:
        """A formula true at a domain position iff the view's word there has its value in
        ``elements`` (elements of this level's monoid)."""
        if not elements:
            return FALSE
        if len(elements) == self.monoid.size:
            return TRUE
        found = self.memo.get(elements)
        if found is None:
            if self.b.nodes > self.budget.max_nodes:
                raise TooLarge(
                    f"the formula passed {self.budget.max_nodes} distinct nodes while being built"
                )
            found = self.memo[elements] = self.step().formula(elements)
        return found

    def step(self) -> _Divisor | _Cyclic:
        if self._step is None:
            units = self.monoid.units()
            c = self._choose([el for el in self.letters if not units[el]])
            self._step = _Cyclic(self) if c is None else _Divisor(self, c)
        return self._step

    def _choose(self, candidates: list[int]) -> int | None:
        """The non-unit letter element c to split on: the one whose marks level gets the
        fewest letters (distinct ``σ(t) = ctc``), then the smallest local divisor, then the
        smallest element (deterministic). Measured on random automata against four other
        rules (the smallest rest ``φ(B*)``, the smallest divisor, their sum, the first
        letter), this gave the smallest formulas (benchmarks/results/regular.md)."""
        if not candidates:
            return None
        m = self.monoid

        def score(c: int) -> tuple[int, int, int]:
            rest = np.asarray(m.closure(el for el in self.letters if el != c))
            sigma = m.table[m.table[c, rest], c]
            divisor = local_divisor(m, c, sigma.tolist())
            return (len(set(sigma.tolist())), divisor.size, c)

        return min(candidates, key=score)


class _Divisor:
    """Case 2 of the module docstring, for the non-unit letter element ``c``."""

    def __init__(self, level: Level, c: int) -> None:
        b, view, m = level.b, level.view, level.monoid
        self.level, self.b, self.view, self.m = level, b, view, m
        self.c = level.letters[c]
        self.not_c = b.neg(self.c)
        self.any_before = view.past(self.c)
        rest = [(f, el) for el, f in level.letters.items() if el != c]
        self.rest = Level(Segment(view, self.c), m, rest, level.budget, level.depth + 1)
        self.T = np.asarray(self.rest.monoid.lineage, dtype=np.int64)  # T = φ(B*), in M
        self.identity_in_T = int(self.rest.monoid.identity)
        sigma = m.table[m.table[c, self.T], c]  # σ(t) = c t c
        divisor = local_divisor(m, c, sigma.tolist())
        down = {int(e): k for k, e in enumerate(divisor.lineage)}
        classes: dict[int, list[int]] = {}
        for k, s in enumerate(sigma.tolist()):
            classes.setdefault(down[int(s)], []).append(k)
        letters = [(self._block_letter(ks), el) for el, ks in classes.items()]
        self.marks = Level(Marks(view, self.c), divisor, letters, level.budget, level.depth + 1)
        # the marks level's elements, in M (its own numbering, through the divisor's)
        self.E = np.asarray(divisor.lineage, dtype=np.int64)[self.marks.monoid.lineage]
        # every x·y (x in the divisor, y in T) and its index among them
        prod = m.table[np.ix_(self.E, self.T)]
        self.V, self.VX = np.unique(prod, return_inverse=True)
        self.VX = self.VX.reshape(prod.shape)
        self.psi: dict[bytes, Formula] = {}

    def _block_letter(self, ks: list[int]) -> Formula:
        """At a c-position (not the first): the block since the previous c has its value in
        ``{T[k] : k in ks}`` (``Y c`` for the empty block, whose value is 1)."""
        b, view = self.b, self.view
        empty = view.prev(self.c) if self.identity_in_T in ks else FALSE
        block = view.prev(b.conj(self.not_c, self.rest.formula(frozenset(ks))))
        return b.disj(empty, block)

    def formula(self, elements: frozenset[int]) -> Formula:
        b, m = self.b, self.m
        inside = np.zeros(m.size, dtype=bool)
        inside[list(elements)] = True
        in_t = frozenset(np.flatnonzero(inside[self.T]).tolist())
        terms = [b.conj(self.not_c, b.neg(self.any_before), self.rest.formula(in_t))]
        rows = inside[m.table[np.ix_(self.T, self.V)]]  # t1 · v ∈ X, for every t1, v
        groups: dict[bytes, list[int]] = {}
        for k, row in enumerate(rows):
            if row.any():
                groups.setdefault(row.tobytes(), []).append(k)
        for key, ks in groups.items():
            terms.append(b.conj(self._first(frozenset(ks)), self._after_first(key)))
        return b.disj(*terms)

    def _first(self, ks: frozenset[int]) -> Formula:
        """Some c so far, and the block before the first c has its value in ``T[ks]``."""
        b, view = self.b, self.view
        if len(ks) == len(self.T):  # any value: some c so far
            return b.disj(self.c, view.past(self.c))
        pre = view.prev(self.rest.formula(ks))
        if self.identity_in_T in ks:
            pre = b.disj(pre, view.start())
        first = b.conj(self.c, b.neg(self.any_before), pre)
        return b.disj(first, view.past(first))

    def _after_first(self, key: bytes) -> Formula:
        """Some c so far, and ``x·y`` is in the set ``key`` (a mask over ``V``), for x the
        marks' value at the last c and y the block after it."""
        found = self.psi.get(key)
        if found is not None:
            return found
        b = self.b
        wanted = np.frombuffer(key, dtype=bool)
        if wanted.all():  # the caller's conjunct says some c came: nothing more to say
            return TRUE
        z = wanted[self.VX]  # z[x, y]: x·y is wanted
        groups: dict[bytes, list[int]] = {}
        for x, row in enumerate(z):
            if row.any():
                groups.setdefault(row.tobytes(), []).append(x)
        terms = []
        for row_key, xs in groups.items():
            ys = frozenset(np.flatnonzero(np.frombuffer(row_key, dtype=bool)).tolist())
            terms.append(b.conj(self._at_last(frozenset(xs)), self._tail(ys)))
        found = self.psi[key] = b.disj(*terms)
        return found

    def _at_last(self, xs: frozenset[int]) -> Formula:
        """At the last c so far: the marks' word there has its value in ``xs`` (the first c:
        the empty word, value ``c``, the divisor's identity). Every value: true (the caller's
        conjunct says some c came)."""
        b, view = self.b, self.view
        if len(xs) == len(self.E):
            return TRUE
        first = b.neg(self.any_before) if self.marks.monoid.identity in xs else FALSE
        later = b.conj(self.any_before, self.marks.formula(xs))
        return view.last(self.c, b.conj(self.c, b.disj(first, later)))

    def _tail(self, ys: frozenset[int]) -> Formula:
        """The block after the last c has its value in ``T[ys]`` (at a c it is empty: 1)."""
        b = self.b
        if len(ys) == len(self.T):
            return TRUE
        at_c = self.c if self.identity_in_T in ys else FALSE
        return b.disj(at_c, b.conj(self.not_c, self.rest.formula(ys)))


class _Cyclic:
    """Case 3 of the module docstring: the group ``M`` over its normal subgroup of prime
    index."""

    def __init__(self, level: Level) -> None:
        b, view, g = level.b, level.view, level.monoid
        self.level, self.b, self.view = level, b, view
        q = prime_quotient(g, list(level.letters))
        self.p, self.pi = q.p, q.pi
        reps = [g.identity]
        for _ in range(1, q.p):
            reps.append(g.mul(reps[-1], q.rep))
        self.reps = reps
        self.inv = [g.inverse(r) for r in reps]
        self.weights = [(f, int(q.pi[el])) for el, f in level.letters.items()]
        letters = []
        for el, f in level.letters.items():
            k = int(q.pi[el])
            for s in range(q.p):
                before = view.count_mod(self.weights, q.p, s + k)  # count before i ≡ s
                h = g.mul(g.mul(reps[s], el), self.inv[(s + k) % q.p])
                letters.append((b.conj(f, before), h))
        self.sub = Level(view, g, letters, level.budget, level.depth + 1)
        if self.sub.monoid.size >= g.size:
            raise HardsoftError("internal: the subgroup of prime index is not smaller")

    def formula(self, elements: frozenset[int]) -> Formula:
        b, g = self.b, self.level.monoid
        terms = []
        for s in range(self.p):
            shifted = [g.mul(x, self.inv[s]) for x in elements if int(self.pi[x]) == s]
            inner = frozenset(self.sub.up[x] for x in shifted)
            count = self.view.count_mod(self.weights, self.p, s)
            terms.append(b.conj(count, self.sub.formula(inner)))
        return b.disj(*terms)


@dataclass
class Translation:
    """The formula of a set of elements of a morphism's monoid, with the numbers that say how
    the induction went."""

    formula: Formula
    levels: int
    depth: int
    nodes_built: int

    def to_json(self) -> dict[str, Any]:
        return {"levels": self.levels, "depth": self.depth, "nodes_built": self.nodes_built}


def translate(
    monoid: Monoid,
    letters: Sequence[tuple[str, int]],
    accepting: Sequence[int],
    max_nodes: int,
) -> Translation:
    """A past formula true at position i of a word iff the product of its letters' elements
    (``letters``: symbol → element of ``monoid``) up to i is in ``accepting``. A
    :class:`TooLarge` past ``max_nodes`` distinct nodes."""
    from hardsoft.regular.views import Base

    b = Builder([a for a, _ in letters])
    budget = Budget(max_nodes)
    root = Level(Base(b), monoid, [(b.sym(a), el) for a, el in letters], budget)
    wanted = frozenset(root.up[int(x)] for x in accepting if int(x) in root.up)
    f = root.formula(wanted)
    return Translation(f, budget.levels, budget.deepest, b.nodes)

"""Formula construction for the translation: constant folding and one shared node per formula.

The translation builds formulas by the thousand, most of them many times over; without sharing
they grow exponentially. Every node built here goes through :class:`Builder`, which folds
constants (``true ∧ φ = φ``, ``φ S false = false``, ``false S ψ = Y ψ``, ``true S ψ = P ψ``),
drops repeated operands, orders the operands of ``∧``/``∨`` canonically (so ``a ∧ b`` and
``b ∧ a`` are one node) and returns one object per distinct formula (hash-consing). The logic
AST compares structurally already; the table makes the sharing physical, so the DAG's size is
the number of distinct nodes and the compiler sees each subformula once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from hardsoft.logic.syntax import (
    Add,
    And,
    Const,
    CountPast,
    Formula,
    Mod,
    Node,
    Not,
    Or,
    Past,
    Prev,
    Scale,
    Since,
    Sym,
    Term,
    subnodes,
)

TRUE = Const(True)
FALSE = Const(False)
DISTRIBUTE = 16
"""Most terms a conjunction of disjunctions is distributed into (see :meth:`Builder._assoc`)."""


class Builder:
    """Smart constructors over one hash-consing table (see the module docstring). With the
    ``alphabet``, a Boolean combination of symbols is kept as the set of symbols it allows
    (``¬'a'`` over ``ab`` is ``'b'``; ``'a' ∧ 'b'`` is ``false``) and written as the shorter of
    ``'a' | 'b' | …`` and ``!('c' | …)``."""

    def __init__(self, alphabet: Sequence[str] = ()) -> None:
        self._table: dict[Node, Node] = {TRUE: TRUE, FALSE: FALSE}
        self._uid: dict[int, int] = {id(TRUE): 0, id(FALSE): 1}
        self.alphabet = tuple(alphabet)
        self._full = (1 << len(self.alphabet)) - 1
        self._mask: dict[int, int] = {id(TRUE): self._full, id(FALSE): 0}
        self._parts: dict[tuple[type, int], tuple[Formula, ...]] = {}

    @property
    def nodes(self) -> int:
        """How many distinct nodes were built (an upper bound on any result's DAG size)."""
        return len(self._table)

    def _intern(self, node: Node) -> Node:
        found = self._table.get(node)
        if found is None:
            self._table[node] = found = node
            self._uid[id(node)] = len(self._uid)
        return found

    def _order(self, node: Node) -> int:
        return self._uid[id(self._intern(node))]

    # ---------------------------------------------------------------- Boolean
    def sym(self, symbol: str) -> Formula:
        out = self._f(Sym(symbol))
        if symbol in self.alphabet:
            self._mask[id(out)] = 1 << self.alphabet.index(symbol)
        return out

    def _letters(self, mask: int) -> Formula:
        """The propositional formula allowing exactly the symbols of ``mask``."""
        if mask == 0:
            return FALSE
        if mask == self._full:
            return TRUE
        inside = [a for k, a in enumerate(self.alphabet) if mask >> k & 1]
        outside = [a for k, a in enumerate(self.alphabet) if not mask >> k & 1]
        if len(outside) < len(inside):
            out = self._f(Not(self._balanced([self.sym(a) for a in outside], Or)))
        else:
            out = self._balanced([self.sym(a) for a in inside], Or)
        self._mask[id(out)] = mask
        return out

    def _f(self, node: Node) -> Formula:
        out = self._intern(node)
        assert isinstance(out, Formula)
        return out

    def neg(self, f: Formula) -> Formula:
        mask = self._mask.get(id(f))
        if mask is not None:
            return self._letters(self._full & ~mask)
        if isinstance(f, Const):
            return FALSE if f.value else TRUE
        if isinstance(f, Not):
            return f.arg
        return self._f(Not(f))

    def conj(self, *args: Formula) -> Formula:
        return self._assoc(args, And, TRUE, FALSE)

    def disj(self, *args: Formula) -> Formula:
        return self._assoc(args, Or, FALSE, TRUE)

    def disj_all(self, args: Iterable[Formula]) -> Formula:
        return self.disj(*args)

    def _assoc(
        self, args: Sequence[Formula], op: type[And] | type[Or], unit: Const, zero: Const
    ) -> Formula:
        """``args`` joined by ``op``: nested operands of the same operator flattened, units
        dropped, a zero absorbs, repeats dropped, ``φ`` with ``¬φ`` gives the zero, operands
        in creation order, as a balanced tree. A conjunction of disjunctions is distributed
        (into a disjunction of conjunctions) while that makes at most :data:`DISTRIBUTE`
        terms: each alternation of ``∧`` and ``∨`` at one position costs the compiled model a
        feed-forward layer, and distributing removes one, for a few more shared nodes."""
        kept: dict[int, Formula] = {}
        conj = op is And
        letters = self._full if conj else 0
        mixed = False
        flat = [x for a in args for x in self._parts.get((op, id(self._f(a))), (a,))]
        for a in flat:
            a = self._f(a)
            if a == zero:
                return zero
            mask = self._mask.get(id(a))
            if mask is not None and self.alphabet:
                letters = letters & mask if conj else letters | mask
                mixed = True
            elif a != unit:
                kept[self._order(a)] = a
        if mixed:
            a = self._letters(letters)
            if a == zero:
                return zero
            if a != unit:
                kept[self._order(a)] = a
        if any(isinstance(a, Not) and self._order(a.arg) in kept for a in kept.values()):
            return zero
        if not kept:
            return unit
        items = [kept[k] for k in sorted(kept)]
        if conj:
            spread = self._distribute(items)
            if spread is not None:
                return spread
        out = self._balanced(items, op)
        if len(items) > 1:
            self._parts[(op, id(out))] = tuple(items)
        return out

    def _distribute(self, items: list[Formula]) -> Formula | None:
        """``a ∧ (b ∨ c)`` as ``(a ∧ b) ∨ (a ∧ c)`` for the disjunctions among ``items``, when
        the product of their sizes is at most :data:`DISTRIBUTE` (else None)."""
        ors = [a for a in items if (Or, id(a)) in self._parts and id(a) not in self._mask]
        if not ors:
            return None
        count = 1
        for a in ors:
            count *= len(self._parts[(Or, id(a))])
        if count > DISTRIBUTE:
            return None
        rest = [a for a in items if not any(a is o for o in ors)]
        choices = itertools.product(*(self._parts[(Or, id(a))] for a in ors))
        return self.disj(*(self.conj(*rest, *choice) for choice in choices))

    def _balanced(self, items: list[Formula], op: type[And] | type[Or]) -> Formula:
        while len(items) > 1:
            pairs = [self._f(op(items[k], items[k + 1])) for k in range(0, len(items) - 1, 2)]
            items = pairs + ([items[-1]] if len(items) % 2 else [])
        return items[0]

    # ---------------------------------------------------------------- temporal
    def prev(self, f: Formula) -> Formula:
        """``Y f``."""
        return FALSE if f == FALSE else self._f(Prev(f))

    def since(self, f: Formula, g: Formula) -> Formula:
        """``f S g`` (strict), folded: ``g`` false → false; ``f`` true → ``P g``; ``f`` false →
        ``Y g`` (only j = i − 1 has nothing between it and i)."""
        if g == FALSE:
            return FALSE
        if f == TRUE:
            return self._f(Past(g))
        if f == FALSE:
            return self.prev(g)
        return self._f(Since(f, g))

    def past(self, g: Formula) -> Formula:
        """``P g``."""
        return self.since(TRUE, g)

    def count_mod(self, weights: Sequence[tuple[Formula, int]], p: int, s: int) -> Formula:
        """``MOD(p, s)(Σ k·#<[f])`` over ``weights`` ``(f, k)``; weights ≡ 0 mod p and false
        formulas dropped, so no count left folds to a constant."""
        terms: list[Term] = []
        for f, k in weights:
            k %= p
            if k and f != FALSE:
                count = self._intern(CountPast(f))
                assert isinstance(count, Term)
                terms.append(count if k == 1 else self._term(Scale(k, count)))
        s %= p
        if not terms:
            return TRUE if s == 0 else FALSE
        total = terms[0]
        for t in terms[1:]:
            total = self._term(Add(total, t))
        return self._f(Mod(p, s, total))

    def _term(self, node: Node) -> Term:
        out = self._intern(node)
        assert isinstance(out, Term)
        return out


def dag_size(f: Formula) -> int:
    """The number of distinct subformulas and terms (the compiler's view of its size)."""
    return len(subnodes(f))

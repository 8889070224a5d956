"""Exact shrinking of a decompiled formula, step by step, each step decided.

The BDD simplification knows only the facts it has recorded about its atoms; some facts need
the words themselves. A hardened recognizer of ``1*`` decompiles to
``'1' & (!P '0' & (MOD(2, 0)(i) & P ('1' & MOD(2, 1)(i)) | ...))``: at an even position with
no earlier ``0``, position 1 is odd and holds ``1``, so the disjunction is always true there,
and the formula is ``'1' & !P '0'``. No fact about the atoms says so.

Equivalence at every position of every word is decidable by a finite automaton, for
past-time formulas (:func:`hardsoft.logic.equivalence.equivalent`) and for LTL with ``last``
and future operators (:func:`hardsoft.logic.twoway.equivalent_everywhere`): ``last S first``,
which a non-strict compilation of ``first`` leaves behind, is proved equal to ``Y first``.
This module tries, greedily and largest subformula first, to replace a subformula (every
occurrence of it) by ``true``, ``false``, one of its own subformulas or a position atom the
theory names (``first``, ``i = 2`` as ``Y first``, ``last``, the parity of ``i``); a
replacement is kept only when the automaton proves the new formula equal to the current one.
Every kept step is a proof, so the result is exact; which steps are found is a heuristic.
When no rewrite is left untried, the ones refused before the last kept step are tried again
(the formula around them has changed): the search ends at a local minimum, a formula none of
whose rewrites is equal to it, unless the work bound ends it first.

Most rewrites are not equal, and most of those are told apart by a word an earlier search
already found: every counterexample an automaton returns is kept, and a rewrite is first
evaluated on the kept words (:class:`_Witnesses`; each subformula of the current formula is
evaluated once, a rewrite costs its new nodes). A difference there is a difference, so only
the rewrites that agree on every kept word go to an automaton. This changes no decision, only
the work: on the hardened trained recognizers of ``decompile-trained`` 96% of the rewrites
are refused by words, and the counted work falls 4× (1.3-6× per model).

The search is bounded by **counted work**, not by the clock: the subformula values the
automaton searches and the word evaluations compute, and the nodes each rewrite's rebuild
visits, all together (:data:`WORK`; a past-time search computes one value per subformula,
state and symbol; a word evaluation one per new subformula and position). The same formula
therefore always shrinks to the same result, however loaded the machine is (a wall-clock
bound gave 43, 65, 68 or 82 nodes for one model on different runs). ``--budget``
(:mod:`hardsoft.classes.budget`) still ends a run that is too long, with an error, never with
a different formula.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from hardsoft.classes import budget
from hardsoft.errors import HardsoftError
from hardsoft.logic.equivalence import equivalent
from hardsoft.logic.semantics import BatchValues
from hardsoft.logic.structure import rewrite
from hardsoft.logic.syntax import (
    And,
    Const,
    First,
    Formula,
    Future,
    Last,
    Mod,
    Next,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Since,
    Somewhere,
    Until,
    children,
    size,
    subnodes,
)
from hardsoft.logic.twoway import equivalent_everywhere

MAX_NODES = 2000
"""Formulas larger than this are left as they are (each step is one automaton search, whose
cost grows with the formula; the work bound stops the search, this bound does not start it).
A hardened 2-layer recognizer of ``contains-ab`` once came back as 659 nodes and shrank to the
task's own 10 (``'b' & P 'a' | P ('b' & P 'a')``)."""
MAX_STATES = 20_000
"""The state cap of each automaton search; a search beyond it keeps the subformula."""
WORK = 1_000_000
"""The shrinking stops once its automaton searches and word evaluations have computed this
many subformula values in all, with the nodes each rewrite's rebuild visits (the formula so
far is exact): about 2 s of one core (2 µs per unit, measured on the formulas of the full
``decompile-trained`` plan's recognizers; the counterexample-guided refutations cut their
work 4× below the automata alone, which measured 1.4 µs per unit)."""
WORK_PER_NODE = 10_000
"""A formula of s nodes gets at most ``WORK_PER_NODE * s`` of it: a short formula that does
not shrink (a compiled ``E ('a' & X ('b' & X 'c'))``, 8 nodes) is not searched for seconds."""


@dataclass(frozen=True)
class Shrunk:
    """The result of :func:`shrink_counted`: the formula, the steps kept (each a proof), the
    equivalence searches run, the work they did (subformula values computed), and whether the
    work bound ended the search (``exhausted``) before no step was left to try."""

    formula: Formula
    steps: int = 0
    checks: int = 0
    work: int = 0
    exhausted: bool = False
    refuted: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "steps": self.steps,
            "checks": self.checks,
            "refuted": self.refuted,
            "work": self.work,
            "exhausted": self.exhausted,
        }


def shrink(formula: Formula, alphabet: tuple[str, ...], work: int | None = None) -> Formula:
    """A formula equal to ``formula`` at every position of every word, as short as the greedy
    steps find within ``work`` (counted); ``formula`` itself when it counts or is too
    large. Deterministic: the same input gives the same formula."""
    return shrink_counted(formula, alphabet, work).formula


def shrink_counted(formula: Formula, alphabet: tuple[str, ...], work: int | None = None) -> Shrunk:
    """:func:`shrink`, with the count of steps, searches and work (see :class:`Shrunk`);
    ``work`` defaults to ``min(WORK, WORK_PER_NODE * size(formula))``."""
    if size(formula) > MAX_NODES:
        return Shrunk(formula)
    if work is None:
        work = min(WORK, WORK_PER_NODE * size(formula))
    formula = _shared(formula)
    search = _Search(alphabet, work)
    if not search.decidable(formula):
        return Shrunk(formula, checks=search.checks, work=search.done)
    current, steps = formula, 0
    tried: set[tuple[Node, Node]] = set()
    fresh = False  # whether ``tried`` was emptied since the last step
    while not search.spent:
        progress = False
        sizes = _sizes(current)
        rebuild = len(sizes)  # the nodes each rewrite's substitution visits
        for node in sorted(_formulas(current), key=sizes.__getitem__, reverse=True):
            for repl in _replacements(node, sizes, search.parities, search.future):
                if (node, repl) in tried:
                    continue
                if search.spent:
                    break
                tried.add((node, repl))
                budget.check()
                candidate = _substitute(current, node, repl)
                search.done += rebuild
                if search.equal(candidate, current):
                    current, steps, progress = candidate, steps + 1, True
                    search.witnesses.keep_only(current)
                    break
            if progress or search.spent:
                break
        if progress:
            fresh = False
        elif fresh:
            break  # no rewrite of the final formula is equal to it: a local minimum
        else:  # the context changed since the rewrites were refused: try them all again
            tried.clear()
            fresh = True
    return Shrunk(_tidy(current), steps, search.checks, search.done, search.spent, search.refuted)


class _Witnesses:
    """The words on which an automaton search told two formulas apart, kept to refute later
    rewrites by evaluation (counterexample-guided: a rewrite that changes the formula's value
    at some position of a kept word is not equal, and needs no search). Sound by itself (a
    difference on one word is a difference); only agreement on every kept word goes on to
    the automaton. The words are evaluated in batches of one length, shortest first, each
    subformula once (:class:`hardsoft.logic.semantics.BatchValues`); the work counted is
    the subformula values computed, one per node and position, like the searches'."""

    def __init__(self, alphabet: tuple[str, ...]) -> None:
        self.alphabet = alphabet
        self.words: dict[int, list[str]] = {}
        self.batches: dict[int, BatchValues] = {}

    def add(self, word: str | None) -> None:
        if not word or word in self.words.get(len(word), ()):
            return
        self.words.setdefault(len(word), []).append(word)
        self.batches.pop(len(word), None)  # rebuilt with the new word on next use

    def refutes(self, f: Formula, g: Formula) -> tuple[bool, int]:
        """Whether ``f`` and ``g`` differ at some position of a kept word, and the work done."""
        work = 0
        for length in sorted(self.words):
            batch = self.batches.get(length)
            if batch is None:
                batch = self.batches[length] = BatchValues(self.words[length], self.alphabet)
            before = batch.computed
            differ = bool((batch.value(f) != batch.value(g)).any())
            rows, n = batch.shape
            work += (batch.computed - before) * rows * n
            if differ:
                return True, work
        return False, work

    def keep_only(self, formula: Formula) -> None:
        """Forget the kept values of every node outside ``formula`` (the current one)."""
        nodes = subnodes(formula)
        for batch in self.batches.values():
            batch.keep_only(nodes)


class _Search:
    """Equivalence searches that count their work against a total: the deterministic
    automaton of :mod:`hardsoft.logic.equivalence` for past-time formulas, the two-way one of
    :mod:`hardsoft.logic.twoway` once ``last`` or a future operator occurs; each first tried
    on the words earlier searches found (:class:`_Witnesses`)."""

    def __init__(self, alphabet: tuple[str, ...], work: int) -> None:
        self.alphabet = alphabet
        self.work = work
        self.checks = 0
        self.refuted = 0
        self.done = 0
        self.parities = False
        self.future = False
        self.witnesses = _Witnesses(alphabet)

    @property
    def spent(self) -> bool:
        return self.done >= self.work

    def decidable(self, formula: Formula) -> bool:
        nodes = subnodes(formula)
        self.parities = any(isinstance(n, Mod) and n.modulus % 2 == 0 for n in nodes)
        self.future = any(isinstance(n, _FUTURE) for n in nodes)
        return self.equal(formula, formula)

    def equal(self, f: Formula, g: Formula) -> bool:
        """Whether ``f`` and ``g`` are proved equal; False when they differ or the search
        passed its cap (then the cap's work is counted)."""
        refuted, work = self.witnesses.refutes(f, g)
        self.done += work
        if refuted:
            self.refuted += 1
            return False
        self.checks += 1
        nodes = len(set(subnodes(f)) | set(subnodes(g)))
        try:
            if self.future:
                two = equivalent_everywhere(f, g, self.alphabet, max_states=MAX_STATES)
                self.done += two.work
                self.witnesses.add(two.counterexample)
                return two.equal
            one = equivalent(f, g, self.alphabet, max_states=MAX_STATES)
        except HardsoftError:  # over the cap (or outside the fragment): not shown, not taken
            self.done += MAX_STATES * nodes * len(self.alphabet)
            return False
        self.done += one.states * nodes * len(self.alphabet)
        self.witnesses.add(one.counterexample)
        return one.equal


_FUTURE = (Last, Next, Until, Future, Somewhere)


def _formulas(formula: Formula) -> list[Formula]:
    return [n for n in subnodes(formula) if isinstance(n, Formula) and not isinstance(n, Const)]


def _sizes(formula: Formula) -> dict[Node, int]:
    """The size of every distinct subformula of ``formula`` (one bottom-up pass)."""
    sizes: dict[Node, int] = {}
    for n in subnodes(formula):
        sizes[n] = 1 + sum(sizes[c] for c in children(n))
    return sizes


def _size_in(sizes: dict[Node, int], node: Node) -> int:
    """``size(node)``, reading the sizes of known subformulas from ``sizes``."""
    known = sizes.get(node)
    return known if known is not None else 1 + sum(_size_in(sizes, c) for c in children(node))


def _replacements(
    node: Formula, sizes: dict[Node, int], parities: bool, future: bool
) -> list[Formula]:
    """``true``, ``false``, the node's children, for ``φ S ψ`` also ``P ψ`` and ``Y ψ`` (for
    ``φ U ψ``: ``F ψ``, ``X ψ``), and the position atoms: ``first``, ``!first``, ``Y first``
    (i = 2), with future operators also ``last``, ``!last``, ``X last`` (i = n - 1), and, when
    the formula already reads parities, ``MOD(2, r)(i)``; each shorter than ``node``."""
    options: list[Formula] = [Const(True), Const(False)]
    options += [c for c in children(node) if isinstance(c, Formula)]
    if isinstance(node, Since):
        options += [Past(node.right), Prev(node.right)]
    if isinstance(node, Until):
        options += [Future(node.right), Next(node.right)]
    if not isinstance(node, (First, Last, Mod)):
        options += [First(), Not(First()), Prev(First())]
        if future:
            options += [Last(), Not(Last()), Next(Last())]
        if parities:
            options += [Mod(2, 0, Position()), Mod(2, 1, Position())]
    seen: set[Formula] = set()
    out = []
    limit = sizes[node]
    for r in options:
        if r not in seen and r != node and _size_in(sizes, r) < limit:
            seen.add(r)
            out.append(r)
    return out


def _substitute(formula: Formula, old: Formula, new: Formula) -> Formula:
    """``formula`` with every occurrence of ``old`` replaced by ``new``."""
    memo: dict[Node, Node] = {old: new}
    for node in subnodes(formula):
        if node in memo:
            continue
        changes = {}
        for f in fields(node):  # type: ignore[arg-type]
            value = getattr(node, f.name)
            if isinstance(value, Node) and memo[value] is not value:
                changes[f.name] = memo[value]
        memo[node] = _fold(replace(node, **changes)) if changes else node  # type: ignore[type-var]
    out = memo[formula]
    assert isinstance(out, Formula)
    return out


def _shared(formula: Formula) -> Formula:
    """``formula`` with equal subtrees made one object: every dictionary the search keeps
    (automaton states, kept values, tried rewrites) then finds a subformula by identity,
    not by a structural comparison of its whole subtree."""
    return rewrite(formula, lambda node: node)


def _tidy(formula: Formula) -> Formula:
    """``formula`` with :func:`_fold` applied at every node, bottom up (identities only)."""
    return rewrite(formula, _fold)


def _fold(node: Node) -> Node:
    """Constants folded out of ``!``, ``&``, ``|``, ``Y``, ``P``, ``S`` and their mirrors
    (``P true`` is ``!first``, ``F true`` is ``!last``, ``E true`` is ``true``); ``!!φ`` is
    ``φ``, ``!(!φ & !ψ)`` is ``φ | ψ`` (and dually). Each is an identity."""
    if isinstance(node, Not) and isinstance(node.arg, Const):
        return Const(not node.arg.value)
    if isinstance(node, Not) and isinstance(node.arg, Not):
        return node.arg.arg
    if isinstance(node, Not) and isinstance(node.arg, (And, Or)):  # De Morgan, when shorter
        left, right = node.arg.left, node.arg.right
        if isinstance(left, Not) and isinstance(right, Not):
            return (Or if isinstance(node.arg, And) else And)(left.arg, right.arg)
    if isinstance(node, (Prev, Past)) and isinstance(node.arg, Const):
        return Not(First()) if node.arg.value else Const(False)
    if isinstance(node, (Next, Future)) and isinstance(node.arg, Const):
        return Not(Last()) if node.arg.value else Const(False)
    if isinstance(node, Somewhere) and isinstance(node.arg, Const):
        return node.arg
    if isinstance(node, (Since, Until)) and node.right == Const(False):
        return Const(False)
    if isinstance(node, (And, Or)):
        absorbing = isinstance(node, Or)  # true absorbs |, false absorbs &
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(side, Const):
                return Const(absorbing) if side.value == absorbing else other
    return node

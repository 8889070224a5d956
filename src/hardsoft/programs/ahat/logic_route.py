"""The logic route to the §6 tasks of Yang, Strobl, Chiang & Angluin (TACL 2026): each task
written as temporal-logic formulas, one per named output, which the logic compiler turns into
a softmax transformer with τ(n) = Θ(1/n) (cf. their Corollary 17, and Corollary 18 for these
past-only formulas compiled with future masks; with the compiler's default strict masks the
heads are our own constructions, see :mod:`hardsoft.compile.results`).

The paper says the basic induction head is definable in LTL and that k hops iterate it. We
make that concrete with one operator, "χ at find(i)":

    At_find(χ) = ∨_σ  Q_σ ∧ [ (Y Q_σ ∧ χ)  ∨  (¬Y Q_σ ∧ (¬Y Q_σ S (Y Q_σ ∧ χ))) ]

``find(i)`` is the rightmost ``j ≤ i`` with ``w_{j−1} = w_i`` (``hardsoft.languages.induction``),
i.e. the rightmost ``j ≤ i`` where ``Y Q_σ`` holds, σ = w_i. Either that is ``i`` itself (first
disjunct), or ``Y Q_σ`` fails at ``i`` and the strict since finds the rightmost ``j < i`` with
``Y Q_σ`` (the ``¬Y Q_σ`` conjunct at ``i`` matters: without it an earlier match would be read
where ``i`` itself matches but χ fails there). When there is no such ``j`` (``find(i) = 0``)
the formula is false for every χ.

- k-hop induction head: output ``a`` is ``At_find^k(Q_a)`` (``find^k(i) = find(find^{k−1}(i))``,
  and ``At_find(χ)`` at ``i`` is χ at ``find(i)``), plus an output ``none`` = no symbol output
  holds. Exactly one output is 1 at every position: the answer's symbol, or ``none``.
- flip-flop: one output ``accept``, membership of the prefix (``hardsoft.languages.flipflop``).

Each formula is checked against the task oracles (``prefix_reference``) with the logic evaluator
in the tests, exhaustively for small n and on random strings at larger n.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import reduce

from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import Const, First, Formula, Not, Or, Past, Prev, Since, Sym

INDUCTION_ALPHABET = ("a", "b", "c", "d")
FLIPFLOP_ALPHABET = ("w", "r", "i", "0", "1")
NONE = "none"
"""The output name that is 1 where a symbol-valued task has no answer."""
ACCEPT = "accept"
"""The output name of a Boolean (membership) task."""


def any_of(formulas: Iterable[Formula]) -> Formula:
    """The disjunction of ``formulas`` (``false`` if there are none)."""
    items = list(formulas)
    return reduce(Or, items) if items else Const(False)


def at_find(chi: Formula, alphabet: Sequence[str]) -> Formula:
    """χ at ``find(i)``, false where ``find(i) = 0`` (see the module docstring).

    Written as one flat disjunction of conjunctions (``Q_σ ∧ Y Q_σ ∧ χ`` and
    ``Q_σ ∧ ¬Y Q_σ ∧ (¬Y Q_σ S (Y Q_σ ∧ χ))``), which is the same formula distributed: the
    compiler turns each conjunction into one ReLU neuron and the disjunction into one more.
    When χ is a symbol, ``Q_σ ∧ χ`` is dropped for σ ≠ χ (false) and shortened to ``Q_σ``
    for σ = χ.
    """
    parts = []
    for s in alphabet:
        here, prev = Sym(s), Prev(Sym(s))
        if not isinstance(chi, Sym):
            parts.append(here & prev & chi)
        elif chi.symbol == s:
            parts.append(here & prev)
        parts.append(here & Not(prev) & Since(Not(prev), prev & chi))
    return any_of(parts)


def induction_formulas(
    k: int = 1, alphabet: Sequence[str] = INDUCTION_ALPHABET
) -> dict[str, Formula]:
    """The k-hop induction head as named outputs: one per symbol ``a`` (``At_find^k(Q_a)``)
    and ``none`` (no symbol output holds, i.e. ``find^k(i) = 0``)."""
    if k < 1:
        raise HardsoftError(f"k-hop induction needs k >= 1, got {k}")
    outputs: dict[str, Formula] = {}
    for a in alphabet:
        f: Formula = Sym(a)
        for _ in range(k):
            f = at_find(f, alphabet)
        outputs[a] = f
    outputs[NONE] = Not(any_of(outputs.values()))
    return outputs


def flipflop_formulas() -> dict[str, Formula]:
    """Flip-flop membership of every prefix, as one output ``accept``.

    With ``I`` an instruction (``w r i``) and ``B`` a bit, a position *fails* if it breaks the
    alternation that starts with ``w`` (``first ∧ ¬w``, ``I ∧ Y I``, ``B ∧ Y B``) or if it is the
    bit of a read that differs from the bit after the most recent earlier ``w``
    (``¬Y w S (Y w ∧ Q_b)``: the bit b was written last). In a prefix without failures the
    instruction slots are the odd positions, so "i is the bit of a read" is ``B ∧ Y r``, and
    ``i ≥ 4`` follows (the first instruction is ``w``). The prefix is in the language iff
    ``B ∧ Y r`` holds at ``i`` and no position ``≤ i`` fails.
    """
    w, r = Sym("w"), Sym("r")
    instr = any_of(Sym(c) for c in ("w", "r", "i"))
    bit = any_of(Sym(c) for c in ("0", "1"))
    bad_slot = (First() & Not(w)) | (instr & Prev(instr)) | (bit & Prev(bit))
    wrote = Prev(w)
    last_written = {b: Since(Not(wrote), wrote & Sym(b)) for b in ("0", "1")}
    wrong_bit = any_of(Sym(b) & Not(last_written[b]) for b in ("0", "1"))
    bad_read = Prev(r) & wrong_bit
    fail = bad_slot | bad_read
    ok_so_far = Not(fail) & Not(Past(fail))
    return {ACCEPT: bit & Prev(r) & ok_so_far}


AT_FIND = "At_find(χ) = ∨_σ Q_σ ∧ [(Y Q_σ ∧ χ) ∨ (¬Y Q_σ ∧ (¬Y Q_σ S (Y Q_σ ∧ χ)))] (χ at find(i))"
LOGIC_TASKS: dict[str, tuple[Callable[[int], dict[str, Formula]], tuple[str, ...], str, str]] = {
    "induction-head": (
        lambda k: induction_formulas(1),
        INDUCTION_ALPHABET,
        "induction-head",
        f"output σ = At_find(Q_σ), none = no symbol output; {AT_FIND}",
    ),
    "khop": (
        lambda k: induction_formulas(k),
        INDUCTION_ALPHABET,
        "khop{k}",
        f"output σ = At_find^k(Q_σ), none = no symbol output; {AT_FIND}",
    ),
    "flipflop": (
        lambda k: flipflop_formulas(),
        FLIPFLOP_ALPHABET,
        "flipflop",
        "accept = B ∧ Y r ∧ no position so far fails (alternation from w, or a read whose bit "
        "differs from the bit after the last w)",
    ),
}
"""Task name -> (the formulas for k, the alphabet, the language/task name in
``hardsoft.languages``, a one-line definition). ``dyck`` has no logic route (Yang et al.
(arXiv:2412.09925v1) §6 conjecture that DYCK-2 is not definable in this logic)."""


def task_formulas(name: str, k: int | None = None) -> tuple[dict[str, Formula], tuple[str, ...]]:
    """The named outputs and alphabet of task ``name`` on the logic route (``khop`` needs k)."""
    if name not in LOGIC_TASKS:
        known = ", ".join(LOGIC_TASKS)
        raise HardsoftError(f"program {name!r} has no logic route (it has: {known})")
    make, alphabet, _, _ = LOGIC_TASKS[name]
    if name == "khop":
        if k is None:
            raise HardsoftError("program khop needs --k (the number of hops, >= 1)")
        if k < 1:
            raise HardsoftError("khop needs --k >= 1")
    elif k is not None:
        raise HardsoftError(f"program {name} takes no --k")
    return make(k or 0), alphabet


def task_reference_name(name: str, k: int | None = None) -> str:
    """The ``hardsoft.languages`` name whose oracle the task's outputs must match."""
    if name == "khop" and k == 1:
        return "induction-head"
    return LOGIC_TASKS[name][2].format(k=k)


__all__ = [
    "ACCEPT",
    "AT_FIND",
    "LOGIC_TASKS",
    "NONE",
    "any_of",
    "at_find",
    "flipflop_formulas",
    "induction_formulas",
    "task_formulas",
    "task_reference_name",
]

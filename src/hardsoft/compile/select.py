"""Lowering one unique-hard attention operation with Boolean scores to the IR (B-RASP's
attention, Yang, Chiang & Angluin, NeurIPS 2024).

The operation: at position i, the leftmost (rightmost) j allowed by a mask where
``score(a_i, b_j)`` holds, where ``a_i`` are query-side bits (Boolean IR nodes read at i) and
``b_j`` key-side bits; its result is ``value(a_i, b_j)`` there, else ``default(i)``. Score and
value may be *any* Boolean functions. A dot-product score cannot compute an arbitrary
function of both sides, so the operation is split by the query side (our construction):

1. every assignment u of the query bits gives a key-side score ``g_u(b)`` and value
   ``h_u(b) = g_u(b) ∧ value(u, b)``; assignments with equal ``(g_u, h_u)`` form a *class*
   (those with ``g_u = false`` none), and class k's gate ``α_k(i)`` is a Boolean of the
   query bits (a literal, or a sum of minterms: one feed-forward layer at most);
2. the gates are mutually exclusive, so ``Σ_k α_k(i) g_k(j)`` is exactly ``score(a_i, b_j)``,
   0 or 1: one head with query ``(α_k)`` and key ``(g_k)`` has as maximisers exactly the
   candidates, and leftmost/rightmost hardmax takes the program's choice;
3. the head reads ``g_k`` and ``h_k`` at the witness; ``found = Σ_k α_k ∧ g_k(j*)`` and
   ``val = Σ_k α_k ∧ h_k(j*)`` are sums of mutually exclusive terms, and the result is
   ``val + (¬found ∧ default)``, all in the head's own feed-forward.

With only non-strict masks (``nonstrict``), ``j < i`` is ``j ≤ i − 1``: each class gets a
non-strict head and ``Y`` (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Thm. 12's heads)
moves its reads by one position (``i < j``: ``X``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from hardsoft.compile.ir import (
    FALSE,
    TRUE,
    Attention,
    BAtom,
    BNode,
    BSelect,
    mk_and,
    mk_not,
    mk_shift,
    mk_sum,
    node,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import Mask, Weighting

MAX_QUERY_BITS = 12
"""Query-side bits of one operation: 2^12 assignments are enumerated to find the classes."""

Side = Callable[[tuple[bool, ...]], BNode]
"""A key-side Boolean node for one assignment of the query bits."""

Assignment = tuple[bool, ...]


def _possible(bits: Sequence[BNode], u: Assignment) -> bool:
    """Whether an assignment can occur: a position has one symbol, so at most one symbol
    atom among the bits is true."""
    return sum(1 for x, b in zip(bits, u) if b and isinstance(x, BAtom)) <= 1


def _classes(
    bits: Sequence[BNode], score: Side, value: Side
) -> tuple[list[int], dict[tuple[BNode, BNode], list[Assignment]]]:
    """The query bits the operation depends on, and the classes: ``(g, h)`` → the
    (possible) assignments of those bits that give them."""
    table: dict[Assignment, tuple[BNode, BNode] | None] = {}
    for u in itertools.product((False, True), repeat=len(bits)):
        if not _possible(bits, u):
            continue
        g = score(u)
        table[u] = None if g == FALSE else (g, mk_and(g, value(u)))

    def flip(u: Assignment, t: int) -> Assignment:
        return u[:t] + (not u[t],) + u[t + 1 :]

    relevant = [
        t
        for t in range(len(bits))
        if any(flip(u, t) in table and table[u] != table[flip(u, t)] for u in table)
    ]
    cells: dict[tuple[BNode, BNode], list[Assignment]] = {}
    for v in itertools.product((False, True), repeat=len(relevant)):
        where = dict(zip(relevant, v))
        u = tuple(where.get(t, False) for t in range(len(bits)))
        pair = table.get(u)
        if pair is not None:
            cells.setdefault(pair, []).append(v)
    return relevant, cells


def _gate(cells: list[Assignment], bits: list[BNode]) -> BNode:
    """A Boolean of ``bits`` true exactly on ``cells`` among the possible assignments: a
    constant, a literal, or a sum of minterms (or one minus such a sum, whichever has
    fewer); impossible assignments are don't-cares."""
    everything = [
        v for v in itertools.product((False, True), repeat=len(bits)) if _possible(bits, v)
    ]
    chosen = set(cells)
    if len(chosen) == len(everything):
        return TRUE
    for t, x in enumerate(bits):
        for bit in (False, True):
            if chosen == {v for v in everything if v[t] == bit}:
                return x if bit else mk_not(x)

    def minterm(v: Assignment) -> BNode:
        lits = [x if b else mk_not(x) for x, b in zip(bits, v)]
        if any(b and isinstance(x, BAtom) for x, b in zip(bits, v)):  # the symbol decides
            lits = [x for x, b in zip(bits, v) if b and isinstance(x, BAtom)] + [
                lit for lit, x in zip(lits, bits) if not isinstance(x, BAtom)
            ]
        return mk_and(*lits)

    others = [v for v in everything if v not in chosen]
    if len(others) < len(chosen):
        return mk_not(mk_sum(*(minterm(v) for v in others)))
    return mk_sum(*(minterm(v) for v in sorted(chosen)))


def _select(att: Attention, k: int, column: int) -> BNode:
    if att.gates[k] == FALSE or att.columns[column] == FALSE:
        return FALSE
    return node(BSelect, att, k, column)


def mk_attention(
    *,
    mask: Mask,
    tie: Weighting,
    query_bits: Sequence[BNode],
    score: Side,
    value: Side,
    default: BNode,
    nonstrict: bool,
    label: str,
) -> BNode:
    """The IR of one attention operation (see the module docstring). ``query_bits`` are
    distinct non-constant nodes; ``score(u)``/``value(u)`` give the key-side node for an
    assignment ``u`` of them. ``label`` names the operation in the certificate."""
    if len(query_bits) > MAX_QUERY_BITS:
        raise HardsoftError(
            f"the score and value read {len(query_bits)} different values at i; at most "
            f"{MAX_QUERY_BITS} are compiled (their 2^{MAX_QUERY_BITS} combinations are "
            "enumerated)"
        )
    relevant, cells = _classes(query_bits, score, value)
    bits = [query_bits[t] for t in relevant]
    classes = [(_gate(vs, bits), g, h) for (g, h), vs in cells.items()]
    classes = [c for c in classes if c[0] != FALSE]
    found: list[BNode] = []
    val: list[BNode] = []
    if nonstrict and mask.is_strict:
        for gate, g, h in classes:
            f, v = _shifted(mask, tie, g, h, label)
            found.append(mk_and(gate, f))
            val.append(mk_and(gate, v))
    else:
        columns: dict[BNode, int] = {}
        reads: list[tuple[int, int]] = []
        for k, (_, g, h) in enumerate(classes):
            for x in (g, h):
                if x != FALSE:
                    reads.append((k, columns.setdefault(x, len(columns))))
        att = node(
            Attention,
            mask,
            tie,
            tuple(c[0] for c in classes),
            tuple(c[1] for c in classes),
            tuple(columns),
            tuple(dict.fromkeys(reads)),
            label,
        )
        for k, (_, g, h) in enumerate(classes):
            found.append(_select(att, k, columns[g]))
            if h != FALSE:
                val.append(_select(att, k, columns[h]))
    any_found = mk_sum(*found)
    return mk_sum(mk_sum(*val), mk_and(mk_not(any_found), default))


def _shifted(mask: Mask, tie: Weighting, g: BNode, h: BNode, label: str) -> tuple[BNode, BNode]:
    """One class of a strict-mask operation with only non-strict masks: a non-strict head
    (``j ≤ p``, or ``j ≥ p``) then ``Y`` (``X``) of its reads: ``j < i`` is ``j ≤ i − 1``."""
    before = mask is Mask.STRICT_FUTURE
    base = Mask.FUTURE if before else Mask.PAST
    columns = (g,) if h in (g, FALSE) else (g, h)
    reads = tuple((0, c) for c in range(len(columns)))
    att = node(Attention, base, tie, (TRUE,), (g,), columns, reads, label)
    direction = "past" if before else "future"
    f = mk_shift(TRUE, _select(att, 0, 0), direction)
    if h == FALSE:
        return f, FALSE
    v = f if h == g else mk_shift(TRUE, _select(att, 0, 1), direction)
    return f, v

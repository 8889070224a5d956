"""The average-hard pieces RASP is lowered to, written in the AHAT program DSL
(:mod:`hardsoft.programs.ahat.dsl`); each is exact on the values it is given.

* :func:`gate` — ``b · x`` for an exact Boolean ``b`` and a bounded ``x`` (one ReLU layer);
* :func:`hat` — ``[x = v]`` for an ``x`` known to take values at least ``spacing`` apart;
* :func:`table_score` — a Select's predicate table ``T[q][k]`` on one-hot queries and keys as
  a bilinear attention score;
* :func:`select_max` — attend to the rightmost position where ``T[q_i][k_j]`` holds (tieless:
  0/1 scores plus the tie-break ``j/(2n)``), with the flag "something was selected";
* :func:`recover_count` — an exact integer count ``S`` from the average ``S/D`` a uniform head
  gives (``D = n`` or ``i``): a table lookup of position ``S`` (cf. Yang, Strobl, Chiang &
  Angluin (arXiv:2412.09925v1) Thm. 20; score ``(2Sj − j²)/D``, gap ``1/D``) and an
  existence head for ``S = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.dsl import Linear, Position
from hardsoft.programs.rasp.domains import Bound, Finite
from hardsoft.programs.rasp.ops import Relation

Onehot = dict[int, Linear]
"""A one-hot: value code -> its exact 0/1 indicator (all 0 where the value is None)."""


def const(c: float) -> Linear:
    return dsl.as_linear(float(c))


def lin_sum(forms: Sequence[dsl.SOpLike]) -> Linear:
    """The sum of ``forms``, in one pass (adding them pairwise copied the growing sum each
    time: quadratic, most of ``--max-len 400``'s compile time)."""
    terms: dict[dsl.SOp, float] = {}
    constant = 0.0
    for f in forms:
        form = dsl.as_linear(f)
        for x, c in form.terms.items():
            terms[x] = terms.get(x, 0.0) + c
        constant += form.const
    return Linear({x: c for x, c in terms.items() if c != 0.0}, constant)


def gate(b: dsl.SOpLike, x: dsl.SOpLike, lo: float, hi: float, label: str = "gate") -> Linear:
    """``b · x`` for an exact Boolean ``b`` and ``lo <= x <= hi``:
    ``lo·b + ReLU(x − lo − (hi − lo)(1 − b))``."""
    lb, lx = dsl.as_linear(b), dsl.as_linear(x)
    width = max(hi - lo, 0.0)
    inner = lx - lo - (1.0 - lb) * width
    return lb * lo + dsl.relu(inner, label=label)


def and2(a: dsl.SOpLike, b: dsl.SOpLike, label: str = "and") -> dsl.PWL:
    return dsl.and_(a, b, label=label)


def not_none(b: dsl.SOpLike, none: Linear | None, label: str = "defined") -> Linear:
    """``b`` where the value is defined, 0 where it is None (``none`` its exact flag)."""
    if none is None:
        return dsl.as_linear(b)
    return dsl.relu(dsl.as_linear(b) - none, label=label).lin()


def hat(x: dsl.SOpLike, v: float, spacing: float, label: str = "eq") -> Linear:
    """``[x = v]`` for ``x`` in a set whose values are at least ``spacing`` apart (and
    integers when ``spacing`` is 1)."""
    return dsl.is_zero((dsl.as_linear(x) - v) * (1.0 / spacing), label=label)


def step_geq(x: dsl.SOpLike, threshold: float, label: str = "geq") -> Linear:
    """``[x >= threshold]`` for an integer ``x`` and an integer ``threshold``."""
    return dsl.step(x, threshold, label=label).lin()


def table_score(
    queries: Onehot, keys: Onehot, table: dict[tuple[int, int], bool]
) -> tuple[list[Linear], list[Linear]]:
    """Query and key forms whose product is ``T[q_i][k_j]`` (1 where the predicate holds):
    one dimension per query value (or per key value, whichever is fewer)."""
    qs = [q for q in queries if any(table.get((q, k), False) for k in keys)]
    ks = [k for k in keys if any(table.get((q, k), False) for q in queries)]
    if len(qs) <= len(ks):
        return (
            [queries[q] for q in qs],
            [lin_sum([keys[k] for k in keys if table.get((q, k), False)]) for q in qs],
        )
    return (
        [lin_sum([queries[q] for q in queries if table.get((q, k), False)]) for k in ks],
        [keys[k] for k in ks],
    )


def table_at(
    queries: Onehot, keys: Onehot, table: dict[tuple[int, int], bool], label: str
) -> Linear:
    """``T[q][k]`` for exact query and key one-hots (of one position, or a key read by a
    tieless head): ``Σ_q ReLU([q] + Σ_k T[q][k]·[k] − 1)``, one ReLU per query value (the inner
    sum is 0 or 1 because the key one-hot is), or per key value if there are fewer."""
    by_row: dict[int, list[int]] = {}
    by_col: dict[int, list[int]] = {}
    for q, k in table:  # grouped once: a scan per row was cubic in --max-len
        by_row.setdefault(q, []).append(k)
        by_col.setdefault(k, []).append(q)
    if not by_row:
        return const(0.0)
    if len(by_row) <= len(by_col):
        pieces = [
            (1.0, queries[q] + lin_sum([keys[k] for k in by_row[q]]) - 1.0) for q in sorted(by_row)
        ]
    else:
        pieces = [
            (1.0, keys[k] + lin_sum([queries[q] for q in by_col[k]]) - 1.0) for k in sorted(by_col)
        ]
    return dsl.pwl(pieces, label=label).lin()


@dataclass
class Selected:
    """What :func:`select_max` read: ``found`` (exact 0/1) and the read forms, valid where
    ``found`` is 1."""

    found: Linear
    values: list[Linear]


def select_max(
    queries: Onehot,
    keys: Onehot,
    table: dict[tuple[int, int], bool] | None,
    values: Sequence[Linear],
    mask: str,
    label: str,
) -> Selected:
    """The rightmost allowed j with ``T[q_i][k_j]`` (every allowed j if ``table`` is None),
    reading ``values`` there. Tieless: scores are 0/1 and the tie-break adds ``j/(2n)``."""
    if table is None:
        head = dsl.attend([], [], list(values), mask=mask, tie="rightmost", label=label)
        return Selected(head.found.lin(), [head.outs[k].lin() for k in range(len(values))])
    q, k = table_score(queries, keys, table)
    read_keys = list(keys)
    head = dsl.attend(
        q, k, [*values, *(keys[c] for c in read_keys)], mask=mask, tie="rightmost", label=label
    )
    outs = [head.outs[m].lin() for m in range(len(values))]
    read = {c: head.outs[len(values) + m].lin() for m, c in enumerate(read_keys)}
    # No allowed position: every output of the head is 0, so the read keys are 0 and so is
    # the table entry; otherwise the entry says whether the rightmost maximum is selected.
    found = table_at(queries, read, table, label=f"{label}.found")
    return Selected(found, outs)


def uniform_mean(values: Sequence[Linear], mask: str, label: str) -> dsl.Attend:
    """The averages of ``values`` over the positions ``mask`` allows (a uniform head)."""
    return dsl.attend([], [], list(values), mask=mask, tie="average", label=label)


DENOMINATOR = {"none": "n", "future": "i"}
"""The number of positions a uniform head with this mask averages over (1-based i)."""


def recover_count(frac: Linear, exists: Linear, mask: str, label: str) -> Linear:
    """The integer ``S`` from ``frac = S/D`` (``D`` = n for mask none, i for future) and the
    exact flag ``exists = [S >= 1]``: a lookup of position ``max(S, 1)`` by the score
    ``(2Sj − j²)/D`` (maximal at j = S, gap at least 1/D >= 1/n) reads the feature i there."""
    inv = Position("1/n") if mask == "none" else Position("1/i")
    head = dsl.attend(
        [frac, -1.0 * inv],
        [2.0 * Position("i"), Position("i^2")],
        [Position("i")],
        mask=mask,
        tie="average",
        gap="1/n",
        label=label,
    )
    return head.value(0) - 1.0 + exists


# ---- comparisons and sizes on integers --------------------------------------------------


def int_compare(x: Linear, rel: Relation, c: Any, name: str) -> Linear:
    """``[x REL c]`` for an integer-valued form and a constant: ReLU steps."""
    c = float(c)
    if rel in (Relation.EQ, Relation.NEQ):
        eq = dsl.is_zero(x - c, label=f"{name}.eq") if c == math.floor(c) else const(0.0)
        return eq if rel is Relation.EQ else 1.0 - eq
    if rel is Relation.LT:
        return step_geq(-1.0 * x, 1 - math.ceil(c), label=f"{name}.lt")
    if rel is Relation.LEQ:
        return step_geq(-1.0 * x, -math.floor(c), label=f"{name}.le")
    if rel is Relation.GT:
        return step_geq(x, math.floor(c) + 1, label=f"{name}.gt")
    return step_geq(x, math.ceil(c), label=f"{name}.ge")


def finite_compare(x: Linear, d: Finite, rel: Relation, c: Any, name: str) -> Linear:
    """``[x REL c]`` for a number taking the values ``d``: ReLU ramps between neighbours."""
    xs = sorted({float(v) for v in d.values})
    truth = {v: rel.holds(v, c) for v in xs}
    out = const(1.0 if truth[xs[0]] else 0.0)
    for a, b in zip(xs, xs[1:]):
        if truth[a] != truth[b]:
            ramp = dsl.pwl([(1.0 / (b - a), x - a), (-1.0 / (b - a), x - b)], label=f"{name}.ramp")
            out = out + ramp * (1.0 if truth[b] else -1.0)
    return out


def signed_gate(d: Linear, feature: Position, name: str) -> Linear:
    """``d · f`` for ``d`` in {−1, 0, 1} and a feature ``f`` in [0, 1]: two ReLU gates."""
    pos = dsl.relu(feature - (1.0 - d), label=f"{name}.corr+")
    neg = dsl.relu(feature - (1.0 + d), label=f"{name}.corr-")
    return pos - neg


def range_check(t: Linear, name: str) -> Linear:
    """``[1 <= t <= n]`` for an integer t (a 1-based position)."""
    lo = step_geq(t, 1, label=f"{name}.lo")
    hi = step_geq(Position("n") - t, 0, label=f"{name}.hi")
    return dsl.and_(lo, hi, label=f"{name}.inrange").lin()


def region_size(regions: frozenset[str]) -> tuple[Linear, str, tuple[Bound, Bound]]:
    """The number of positions in a union of regions (1-based i), with its bounds."""
    i, n = Position("i"), Position("n")
    sizes: dict[frozenset[str], tuple[Linear, str, tuple[Bound, Bound]]] = {
        frozenset(): (const(0.0), "0", (Bound(0, 0), Bound(0, 0))),
        frozenset("<"): (i - 1.0, "indices", (Bound(0, 0), Bound(1, -1))),
        frozenset("="): (const(1.0), "1", (Bound(0, 1), Bound(0, 1))),
        frozenset(">"): (n - i, "n - 1 - indices", (Bound(0, 0), Bound(1, -1))),
        frozenset("<="): (i.lin(), "indices + 1", (Bound(0, 1), Bound(1, 0))),
        frozenset("=>"): (n - i + 1.0, "n - indices", (Bound(0, 1), Bound(1, 0))),
        frozenset("<>"): (n - 1.0, "n - 1", (Bound(1, -1), Bound(1, -1))),
        frozenset("<=>"): (n.lin(), "n", (Bound(1, 0), Bound(1, 0))),
    }
    return sizes[regions]


def same(a: Linear, b: Linear) -> bool:
    return a.const == b.const and {k.uid: c for k, c in a.terms.items()} == {
        k.uid: c for k, c in b.terms.items()
    }

"""Selectors in a normal form the compiler can build heads from.

A query position i and a key position j stand in one of three *regions*: j < i, j = i or
j > i. A selector whose atoms are Selects

* of ``indices`` against ``indices`` with a :class:`~.api.Comparison` (or ``& | ~`` of them):
  *order atoms*, true or false per region (masks: ``future`` is j <= i, ``strict-future``
  j < i, ...), and
* of finite-valued keys against finite-valued queries with any predicate: *table atoms*, a
  table ``T[q][k]`` computed by calling the predicate on the values,

combined with ``& | ~``, is one table per region over the (joint) query and key values:
:class:`TableForm`. A Select of ``indices`` against an integer SOp with ``==`` is a lookup
(:class:`Lookup`): position ``j = q(i)``, or the position whose key equals i.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp.domains import Finite
from hardsoft.programs.rasp.lambdas import Reading, read_predicate
from hardsoft.programs.rasp.ops import Affine, Compare, Compose, Relation

REGIONS = ("<", "=", ">")
"""j < i, j = i, j > i (key position j, query position i)."""
_REPRESENTATIVE = {"<": (0, 1), "=": (1, 1), ">": (1, 0)}
"""A (key index, query index) pair in each region: a Comparison of integers depends only on
their order, so its value there is its value on the whole region."""

MASK_REGIONS: dict[str, frozenset[str]] = {
    "none": frozenset("<=>"),
    "future": frozenset("<="),
    "strict-future": frozenset("<"),
    "past": frozenset("=>"),
    "strict-past": frozenset(">"),
}
"""The regions each attention mask allows."""

JOINT_LIMIT = 4096
"""Most joint values of the keys (or queries) of a combined selector."""


class Unsupported(HardsoftError):
    """No gadget is exact for this operation at every length: ``operation`` names it,
    ``reason`` says why, ``boundable`` whether a bounded compile (``--max-len``, listing the
    values at n <= N) would build it."""

    def __init__(self, operation: str, reason: str, *, boundable: bool = False) -> None:
        super().__init__(f"{operation} {reason}")
        self.operation = operation
        self.reason = reason
        self.boundable = boundable


def mask_of(regions: frozenset[str]) -> str | None:
    for mask, rs in MASK_REGIONS.items():
        if rs == regions:
            return mask
    return None


def is_comparison_tree(pred: Any) -> bool:
    if isinstance(pred, R.Comparison):
        return True
    if isinstance(pred, R.CombinedPredicate):
        return is_comparison_tree(pred.fst) and is_comparison_tree(pred.snd)
    if isinstance(pred, R.NegatedPredicate):
        return is_comparison_tree(pred.inner)
    return False


def order_truth(pred: Any, slope: int = 1) -> dict[str, bool]:
    """A Comparison tree on ``slope·j + b`` (keys) and ``slope·i + b`` (queries), per region:
    it depends only on the order of j and i, reversed where the slope is negative."""
    return {
        r: bool(pred(*(slope * p for p in _REPRESENTATIVE[r]))) for r in REGIONS
    }  # fmt: skip


@dataclass
class TableAtom:
    keys: R.SOp
    queries: R.SOp
    table: np.ndarray  # [query code, key code]


@dataclass
class Lookup:
    """``Select(keys, queries, EQ)`` where one side is ``indices`` and the other an integer
    SOp: ``inverse`` False selects j = queries(i); True selects the j with keys(j) = i."""

    keys: R.SOp
    queries: R.SOp
    inverse: bool


@dataclass
class TableForm:
    """One table per region over the joint query and key values (each a tuple of codes of
    ``query_sops`` / ``key_sops``)."""

    key_sops: list[R.SOp]
    query_sops: list[R.SOp]
    key_codes: list[tuple[int, ...]]
    query_codes: list[tuple[int, ...]]
    tables: dict[str, np.ndarray] = field(default_factory=dict)

    def constant(self, region: str) -> bool | None:
        t = self.tables[region]
        if t.size == 0 or t.all():
            return True
        if not t.any():
            return False
        return None

    def regions(self) -> frozenset[str] | None:
        """The selected regions if every table is constant (a pure order selector)."""
        consts = {r: self.constant(r) for r in REGIONS}
        if any(c is None for c in consts.values()):
            return None
        return frozenset(r for r, c in consts.items() if c)

    def as_dict(self, region: str) -> dict[tuple[int, int], bool]:
        t = self.tables[region]
        return {(q, k): True for q, k in zip(*np.nonzero(t))}


@dataclass
class _Leaf:
    truth: dict[str, bool] | None = None
    atom: TableAtom | None = None


Node = Any  # _Leaf | ("and"|"or", Node, Node) | ("not", Node)


class SelectorAnalysis:
    """Builds the normal form of a selector, given the domains of its SOps."""

    def __init__(
        self,
        domain: Callable[[R.SOp], Any],
        finite: Callable[[R.SOp, str], Finite],
        name: Callable[[R.RASPExpr], str],
        index_form: Callable[[R.SOp], tuple[int, int] | None] = lambda s: None,
        causal: bool = False,
    ) -> None:
        self.domain = domain
        self.finite = finite  # an SOp's finite domain, or Unsupported/bounded conversion
        self.name = name
        self.index_form = index_form  # (a, b) where the SOp is a·indices + b
        self.causal = causal

    def analyse(self, sel: R.Selector, user: str, *, lookups: bool = True) -> TableForm | Lookup:
        """The selector's normal form; ``lookups=False`` reads a lookup as a table too (a
        bounded compile, where its keys have no lookup gadget)."""
        sel = self.rewrite(sel)
        lookup = self._lookup(sel) if lookups else None
        if lookup is not None and self.causal and not self._behind(lookup):
            raise Unsupported(
                user,
                "is a lookup (Select of indices with ==) that may select a later position, "
                "which causal=True masks: hardsoft's lookup gadget has no causal form",
            )
        if lookup is not None:
            return lookup
        if self.causal:  # Tracr's causal_eval: every selector ANDed with j <= i
            sel = R.SelectorAnd(sel, R.Select(R.indices, R.indices, R.Comparison.LEQ))
        tree = self._tree(sel, user)
        atoms: list[TableAtom] = []
        _collect(tree, atoms)
        key_sops = _unique([a.keys for a in atoms])
        query_sops = _unique([a.queries for a in atoms])
        key_codes = _joint([len(self.finite(s, user).values) for s in key_sops], user)
        query_codes = _joint([len(self.finite(s, user).values) for s in query_sops], user)
        form = TableForm(key_sops, query_sops, key_codes, query_codes)
        for r in REGIONS:
            form.tables[r] = self._eval(tree, r, form)
        return form

    def rewrite(self, sel: R.Selector) -> R.Selector:
        """A Select whose predicate is a lambda read as ``a·k + b·q + c REL 0`` (:mod:`.lambdas`)
        as the equivalent Select with a Comparison: ``q == k + d`` is ``Select(keys,
        queries - d, EQ)`` (a lookup), ``k == c`` is ``Select(keys, Full(c), EQ)``; other
        selectors unchanged."""
        if isinstance(sel, (R.SelectorAnd, R.SelectorOr)):
            fst, snd = self.rewrite(sel.fst), self.rewrite(sel.snd)
            return type(sel)(fst, snd) if (fst, snd) != (sel.fst, sel.snd) else sel
        if isinstance(sel, R.SelectorNot):
            inner = self.rewrite(sel.inner)
            return R.SelectorNot(inner) if inner is not sel.inner else sel
        if not isinstance(sel, R.Select):
            return sel
        if isinstance(sel.predicate, R.Comparison) and sel.predicate.relation is not None:
            return self._against_constant(sel, sel.predicate.relation)
        if is_comparison_tree(sel.predicate):
            return sel
        reading = read_predicate(sel.predicate)
        if reading is None:
            return sel
        out = _equivalent(sel, reading, self.name(sel))
        if out is None:
            return sel
        if isinstance(out.predicate, R.Comparison) and out.predicate.relation is not None:
            return self._against_constant(out, out.predicate.relation)  # ``lambda k, q: k <= 2``
        return out

    def _against_constant(self, sel: R.Select, rel: Relation) -> R.Select:
        """A Comparison of an unbounded SOp with an SOp holding one constant value (``Select(
        count, Map(lambda x: 2, indices), GEQ)``) as a Boolean key: ``Select(count >= 2,
        Full(True), EQ)``; other Selects unchanged."""
        kd, qd = self.domain(sel.keys), self.domain(sel.queries)
        name = self.name(sel)
        if _one_number(qd) and not isinstance(kd, Finite):
            (v,) = qd.values
            holds = sel.keys._compare(rel, v).named(f"{name}.key")
            return R.Select(holds, R.Full(True), R.Comparison.EQ)
        if _one_number(kd) and not isinstance(qd, Finite):
            (v,) = kd.values
            holds = sel.queries._compare(rel.flipped, v).named(f"{name}.query")
            return R.Select(R.Full(True), holds, R.Comparison.EQ)
        return sel

    def _behind(self, lookup: Lookup) -> bool:
        """Whether a lookup of j = q(i) always selects j <= i (``q = indices − c``, c >= 0),
        so that the causal mask does not change it."""
        form = None if lookup.inverse else self.index_form(lookup.queries)
        return form is not None and form[0] == 1 and form[1] <= 0

    def _lookup(self, sel: R.Selector) -> Lookup | None:
        if not isinstance(sel, R.Select) or sel.predicate is not R.Comparison.EQ:
            return None
        k_idx = isinstance(sel.keys, R.IndicesType)
        q_idx = isinstance(sel.queries, R.IndicesType)
        if k_idx == q_idx:
            return None
        other = sel.queries if k_idx else sel.keys
        if isinstance(self.domain(other), Finite) and not _integers(self.domain(other)):
            return None
        return Lookup(sel.keys, sel.queries, inverse=not k_idx)

    def _tree(self, sel: R.Selector, user: str) -> Node:
        if isinstance(sel, R.SelectorAnd):
            return ("and", self._tree(sel.fst, user), self._tree(sel.snd, user))
        if isinstance(sel, R.SelectorOr):
            return ("or", self._tree(sel.fst, user), self._tree(sel.snd, user))
        if isinstance(sel, R.SelectorNot):
            return ("not", self._tree(sel.inner, user))
        if isinstance(sel, R.ConstantSelector):
            raise Unsupported(
                self.name(sel), "a ConstantSelector is a fixed matrix for tests, not a program"
            )
        assert isinstance(sel, R.Select)
        both_indices = isinstance(sel.keys, R.IndicesType) and isinstance(
            sel.queries, R.IndicesType
        )
        if sel.predicate is R.Comparison.EQ and both_indices:
            return _Leaf(truth=order_truth(sel.predicate))
        if both_indices and is_comparison_tree(sel.predicate):
            return _Leaf(truth=order_truth(sel.predicate))
        slope = self._common_slope(sel)
        if slope is not None and is_comparison_tree(sel.predicate):
            return _Leaf(truth=order_truth(sel.predicate, slope))
        if isinstance(sel.predicate, R.Comparison) and sel.predicate in (
            R.Comparison.TRUE,
            R.Comparison.FALSE,
        ):
            return _Leaf(truth=dict.fromkeys(REGIONS, sel.predicate is R.Comparison.TRUE))
        why = f"Select {self.name(sel)} (in {user}, {_predicate_text(sel.predicate)})"
        kd = self.finite(sel.keys, why)
        qd = self.finite(sel.queries, why)
        return _Leaf(atom=TableAtom(sel.keys, sel.queries, _table(sel, kd, qd, self.name)))

    def _common_slope(self, sel: R.Select) -> int | None:
        """The slope a where keys and queries are the same affine map ``a·indices + b`` of
        indices (``1 - indices`` against itself): a comparison of them is an order selector."""
        if isinstance(self.domain(sel.keys), Finite):
            return None
        kf, qf = self.index_form(sel.keys), self.index_form(sel.queries)
        if kf is None or kf != qf:
            return None
        return kf[0]

    def _eval(self, tree: Node, region: str, form: TableForm) -> np.ndarray:
        shape = (len(form.query_codes), len(form.key_codes))
        if isinstance(tree, _Leaf):
            if tree.truth is not None:
                return np.full(shape, tree.truth[region], dtype=bool)
            atom = tree.atom
            assert atom is not None
            qi = [s.unique_id for s in form.query_sops].index(atom.queries.unique_id)
            ki = [s.unique_id for s in form.key_sops].index(atom.keys.unique_id)
            q = np.array([c[qi] for c in form.query_codes], dtype=np.int64)
            k = np.array([c[ki] for c in form.key_codes], dtype=np.int64)
            return atom.table[q][:, k] if len(q) and len(k) else np.zeros(shape, dtype=bool)
        if tree[0] == "not":
            return ~self._eval(tree[1], region, form)
        a, b = self._eval(tree[1], region, form), self._eval(tree[2], region, form)
        return (a & b) if tree[0] == "and" else (a | b)


def always_selects(form: TableForm | Lookup) -> bool:
    """Whether the selector always selects something (it contains the diagonal)."""
    if isinstance(form, TableForm):
        regions = form.regions()
        return regions is not None and "=" in regions
    return False


def selection_parts(form: TableForm) -> list[tuple[str, dict[tuple[int, int], bool]]]:
    """A table selector as (mask, table) parts, one head each, merged where tables agree."""
    lt, eq, gt = (form.tables[r] for r in REGIONS)
    d = {r: form.as_dict(r) for r in REGIONS}
    if np.array_equal(lt, eq) and np.array_equal(eq, gt):
        return [("none", d["<"])]
    if np.array_equal(lt, eq) and not gt.any():
        return [("future", d["<"])]
    if np.array_equal(eq, gt) and not lt.any():
        return [("past", d["="])]
    parts = []
    if lt.any():
        parts.append(("strict-future", d["<"]))
    if eq.any():
        parts.append(("self", d["="]))
    if gt.any():
        parts.append(("strict-past", d[">"]))
    return parts


def _one_number(d: Any) -> bool:
    return (
        isinstance(d, Finite)
        and len(d.values) == 1
        and isinstance(d.values[0], (int, float))
        and not isinstance(d.values[0], bool)
    )


def _equivalent(sel: R.Select, r: Reading, name: str) -> R.Select | None:
    """``a·k + b·q + c REL 0`` as a Select with a Comparison, for ``a = ±1, b = ∓1`` (k REL'
    q + d), ``b = 0`` (k REL' constant) and ``a = 0`` (a condition on the query alone)."""
    a, b, c = r.a, r.b, r.c
    rel = r.relation
    if a == 1 and b == -1:  # k − q + c REL 0  ⟺  k REL q − c
        shift, cmp = -c, rel
    elif a == -1 and b == 1:  # q − k + c REL 0  ⟺  k REL^flipped q + c
        shift, cmp = c, rel.flipped
    elif b == 0 and a in (1, -1):  # a·k + c REL 0  ⟺  k REL' −c/a
        cmp = rel if a == 1 else rel.flipped
        full = R.Full(int(-c / a)).named(f"{name}.constant")
        return R.Select(sel.keys, full, R.Comparison[cmp.name])
    elif a == 0 and b in (1, -1):  # a condition on the query: every key or none
        op = Compose(Affine((int(b),), int(c)), Compare(rel, 0))
        cond = R.Map(op, sel.queries, op=op)  # the compiler reads op; evaluate never sees it
        return R.Select(R.Full(True), cond.named(f"{name}.holds"), R.Comparison.EQ)
    else:
        return None
    queries = sel.queries if shift == 0 else (sel.queries + int(shift)).named(f"{name}.query")
    return R.Select(sel.keys, queries, R.Comparison[cmp.name])


def _predicate_text(pred: Any) -> str:
    if isinstance(pred, R.Comparison):
        return f"predicate {pred.name}"
    if is_comparison_tree(pred):
        return "a combination of Comparisons"
    return "a Python predicate"


def _integers(d: Finite) -> bool:
    return all(isinstance(v, (int, bool)) for v in d.values)


def _collect(tree: Node, out: list[TableAtom]) -> None:
    if isinstance(tree, _Leaf):
        if tree.atom is not None:
            out.append(tree.atom)
        return
    for sub in tree[1:]:
        _collect(sub, out)


def _unique(sops: list[R.SOp]) -> list[R.SOp]:
    seen: dict[int, R.SOp] = {}
    for s in sops:
        seen.setdefault(s.unique_id, s)
    return list(seen.values())


def _joint(sizes: list[int], user: str) -> list[tuple[int, ...]]:
    total = 1
    for s in sizes:
        total *= s
    if total > JOINT_LIMIT:
        raise Unsupported(
            user, f"its selector combines SOps with {total} joint values (more than {JOINT_LIMIT})"
        )
    return list(itertools.product(*(range(s) for s in sizes)))


def _table(sel: R.Select, kd: Finite, qd: Finite, name: Callable[[R.RASPExpr], str]) -> np.ndarray:
    """``predicate(key, query)`` on every pair of values. An arithmetic error leaves the pair
    unselected (as Tracr's value inference ignores them: ``rasp.evaluate`` raises there, so
    such an input has no value to agree with); any other exception is the program's error."""
    out = np.zeros((len(qd.values), len(kd.values)), dtype=bool)
    for a, q in enumerate(qd.values):
        for b, k in enumerate(kd.values):
            try:
                out[a, b] = bool(sel.predicate(k, q))
            except ArithmeticError:
                out[a, b] = False
            except Exception as exc:  # the user's predicate
                raise HardsoftError(
                    f"Select {name(sel)}'s predicate raised {type(exc).__name__}: {exc} on key "
                    f"{k!r}, query {q!r}"
                ) from None
    return out

"""The compiler's intermediate graph: a DAG of distinct Boolean nodes and linear counting terms.

Lowering (:func:`lower`) rewrites the logic AST into a handful of primitives, sharing every
repeated subformula (nodes are frozen dataclasses, and the lowering is memoised on the AST):

* ``BAtom`` / ``BConst`` / ``BFeat`` (a 0/1 position feature such as ``[i=1]`` or
  ``[i mod m = r]``; ``MOD`` of ``k·i + c`` is one such feature) and ``BNot`` cost no layer:
  they are linear forms of the residual stream (``[i=1]``/``[i=n]`` with non-strict masks cost
  one uniform head each, Yang et al. (arXiv:2412.09925v1) Prop. 11);
* ``BAnd`` (``|`` and ``->`` become ``!``/``&``) is one feed-forward neuron;
* ``BShift(pred, val, direction)`` is the value of ``val`` at the nearest ``j < i`` (``past``)
  or ``j > i`` (``future``) where ``pred`` holds, false if there is none. It covers
  ``Y φ = BShift(true, φ)``, ``φ S ψ = BShift(ψ | !φ, ψ)``, ``P φ = BShift(φ, φ)`` and the
  mirrored ``X U F``; ``val`` always implies ``pred`` (so "no witness" reads as false).
  ``strict=False`` allows ``j = i``. When only non-strict masks exist (``nonstrict``), a
  strict shift with a predicate is lowered to ``Y``/``X`` of the non-strict one, and
  ``E φ`` to ``P̂ φ ∨ F̂ φ`` (non-strict shifts both sides);
* ``BGeq(term)`` is ``[term >= 0]`` for an integer linear term (every comparison is one or two
  of these), and ``BMod(m, r, term)`` is ``term mod m = r``;
* ``BSelect`` reads one unique-hard :class:`Attention` (a B-RASP attention operation: any
  mask, leftmost or rightmost, a score that is any Boolean function of query-side and key-side
  bits, split into mutually exclusive query classes by :func:`mk_attention`), and ``BSum`` adds
  Boolean nodes of which at most one holds (a linear form: no layer).

A linear term (:class:`Lin`) is ``Σ c_k · count_k + c_i · i + c_0`` where a count is
``('pre', φ)`` (``#<[φ]``) or ``('suf', φ)`` (``#>[φ]``); ``n`` is rewritten as
``i + #>[true] − 1``.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hardsoft.errors import HardsoftError
from hardsoft.logic import syntax as S
from hardsoft.logic.dag import topological
from hardsoft.model.spec import Mask, Weighting


class Interned:
    """An interned IR object (built only through :func:`node`): ``uid`` orders them stably."""

    uid: int


class BNode(Interned):
    """Base class of Boolean IR nodes. Nodes are interned (built only through the ``mk_*``
    functions and :func:`node`), so equal nodes are the same object and hashing and equality
    are O(1) however much the DAG shares; ``uid`` orders them stably."""


# Weak values: a node lives while something (a parent's key, a caller) holds it, so compiling
# many formulas in one process does not grow the table without bound. uids only ever increase.
_TABLE: weakref.WeakValueDictionary[tuple, Interned] = weakref.WeakValueDictionary()
_UIDS = itertools.count()


_I = TypeVar("_I", bound="Interned")


def node(cls: type[_I], *args: object) -> _I:
    """The unique instance of ``cls(*args)`` (children are interned, so keys use identity)."""
    key = (cls, *args)
    found = _TABLE.get(key)
    if found is None:
        made = cls(*args)
        object.__setattr__(made, "uid", next(_UIDS))
        _TABLE[key] = made
        return made
    assert isinstance(found, cls)  # the key starts with the class
    return found


@dataclass(frozen=True, eq=False)
class BAtom(BNode):
    symbol: str


@dataclass(frozen=True, eq=False)
class BConst(BNode):
    value: bool


@dataclass(frozen=True, eq=False)
class BFeat(BNode):
    """A 0/1-valued position feature (``[i=1]``, ``[i=n]``, ``[i mod m = r]``)."""

    feature: str


@dataclass(frozen=True, eq=False)
class BNot(BNode):
    arg: BNode


@dataclass(frozen=True, eq=False)
class BAnd(BNode):
    args: tuple[BNode, ...]


@dataclass(frozen=True, eq=False)
class BShift(BNode):
    """The value of ``val`` at the nearest ``j < i`` (``past``; ``j > i`` for ``future``) where
    ``pred`` holds, false if none; ``strict=False`` allows ``j = i`` too."""

    pred: BNode
    val: BNode
    direction: str  # "past" (nearest j < i) or "future" (nearest j > i)
    strict: bool = True


@dataclass(frozen=True, eq=False)
class Count(Interned):
    """``#<[arg]`` (direction ``pre``) or ``#>[arg]`` (``suf``)."""

    direction: str
    arg: BNode


@dataclass(frozen=True)
class Lin:
    """``Σ coef · count + pos · i + const`` with integer coefficients (zero ones dropped)."""

    counts: frozenset[tuple[Count, int]]
    pos: int = 0
    const: int = 0

    @staticmethod
    def make(counts: dict[Count, int], pos: int = 0, const: int = 0) -> Lin:
        return Lin(frozenset((c, k) for c, k in counts.items() if k != 0), pos, const)

    def as_dict(self) -> dict[Count, int]:
        return dict(self.counts)

    def __add__(self, other: Lin) -> Lin:
        d = self.as_dict()
        for c, k in other.counts:
            d[c] = d.get(c, 0) + k
        return Lin.make(d, self.pos + other.pos, self.const + other.const)

    def scale(self, k: int) -> Lin:
        return Lin.make({c: k * v for c, v in self.counts}, k * self.pos, k * self.const)

    def __sub__(self, other: Lin) -> Lin:
        return self + other.scale(-1)

    @property
    def is_const(self) -> bool:
        return not self.counts and self.pos == 0

    @property
    def directions(self) -> set[str]:
        return {c.direction for c, _ in self.counts}

    def abs_count_coefs(self) -> int:
        return sum(abs(k) for _, k in self.counts)

    def items(self) -> list[tuple[Count, int]]:
        """The (count, coefficient) pairs in a stable order."""
        return sorted(self.counts, key=lambda ck: ck[0].uid)


@dataclass(frozen=True, eq=False)
class BGeq(BNode):
    """``[term >= 0]``."""

    term: Lin


@dataclass(frozen=True, eq=False)
class BMod(BNode):
    """``term mod modulus = residue`` (remainder in ``0..m-1``)."""

    modulus: int
    residue: int
    term: Lin


@dataclass(frozen=True, eq=False)
class BSum(BNode):
    """The sum of Boolean nodes of which at most one holds at any position: a 0/1 value that
    is a linear form of theirs. Built only where the exclusivity holds by construction (the
    query classes of one :class:`Attention`, a value and the default it replaces)."""

    args: tuple[BNode, ...]


@dataclass(frozen=True, eq=False)
class Attention(Interned):
    """One unique-hard attention operation. At position i, class k's witness is the leftmost
    (``tie`` = leftmost) or rightmost position j allowed by ``mask`` with ``keys[k](j)``; the
    ``gates`` (query classes) are mutually exclusive, so the score
    ``Σ_k gates[k](i) · keys[k](j)`` is 0 or 1 and its maximisers are exactly class k's
    candidates. ``columns`` are key-side values read at the witness; ``reads`` lists the
    ``(class, column)`` pairs that are read; ``label`` names what it implements (a program
    statement, shown in the certificate)."""

    mask: Mask
    tie: Weighting
    gates: tuple[BNode, ...]
    keys: tuple[BNode, ...]
    columns: tuple[BNode, ...]
    reads: tuple[tuple[int, int], ...]
    label: str


@dataclass(frozen=True, eq=False)
class BSelect(BNode):
    """``gates[k](i) ∧ columns[c](j*)`` for the witness j* of class ``k`` of ``att``; false
    when the gate fails at i or class k has no witness. ``columns[c]`` implies ``keys[k]``."""

    att: Attention
    k: int
    column: int


TRUE: BNode = node(BConst, True)
FALSE: BNode = node(BConst, False)


def const(value: bool) -> BNode:
    return TRUE if value else FALSE


def mk_not(a: BNode) -> BNode:
    if isinstance(a, BConst):
        return const(not a.value)
    if isinstance(a, BNot):
        return a.arg
    return node(BNot, a)


def mk_and(*args: BNode) -> BNode:
    flat: list[BNode] = []
    for a in args:
        flat.extend(a.args if isinstance(a, BAnd) else (a,))
    kept: list[BNode] = []
    seen: set[BNode] = set()
    for a in flat:
        if a == FALSE:
            return FALSE
        if a == TRUE or a in seen:
            continue
        seen.add(a)
        kept.append(a)
    if any(mk_not(a) in seen for a in kept):
        return FALSE
    if not kept:
        return TRUE
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=lambda x: x.uid)
    return node(BAnd, tuple(kept))


def mk_or(*args: BNode) -> BNode:
    return mk_not(mk_and(*(mk_not(a) for a in args)))


def mk_shift(pred: BNode, val: BNode, direction: str, strict: bool = True) -> BNode:
    if val == FALSE or pred == FALSE:
        return FALSE
    return node(BShift, pred, val, direction, strict)


def mk_sum(*args: BNode) -> BNode:
    """``BSum`` of mutually exclusive nodes (the caller guarantees it), FALSE ones dropped."""
    kept = sorted({a for a in args if a != FALSE}, key=lambda x: x.uid)
    if not kept:
        return FALSE
    if len(kept) == 1:
        return kept[0]
    return node(BSum, tuple(kept))


def mk_strict_shift(pred: BNode, val: BNode, direction: str, nonstrict_masks: bool) -> BNode:
    """``BShift(pred, val, direction)`` (strict: ``j < i`` / ``j > i``). With only non-strict
    masks, a strict shift with a predicate is the previous (next) position's non-strict shift:
    ``φ S ψ`` at ``i`` is the non-strict since at ``i − 1`` (our construction for Yang et al.
    (arXiv:2412.09925v1) Thm. 15, by way of Thm. 12's Y), so it lowers to ``Y`` (``X``) of a
    non-strict shift."""
    if not nonstrict_masks or pred == TRUE:
        return mk_shift(pred, val, direction)
    return mk_shift(TRUE, mk_shift(pred, val, direction, strict=False), direction)


def mk_geq(term: Lin) -> BNode:
    if term.is_const:
        return const(term.const >= 0)
    return node(BGeq, term)


def mk_mod(m: int, r: int, term: Lin) -> BNode:
    if m == 1:
        return TRUE
    counts = {c: k % m for c, k in term.counts if k % m}
    term = Lin.make(counts, term.pos % m, term.const % m)
    if term.is_const:
        return const(term.const % m == r)
    if not term.counts:
        return _mod_of_position(m, r, term.pos, term.const)
    return node(BMod, m, r, term)


def _mod_of_position(m: int, r: int, k: int, c: int) -> BNode:
    """``k·i + c ≡ r (mod m)`` as one feature: it holds iff ``i ≡ ρ (mod m/g)`` with
    ``g = gcd(k, m)`` (and never unless g divides ``r − c``), so a modulus of any size costs
    one position feature ``[i mod m' = ρ]``."""
    g = math.gcd(k, m)
    if (r - c) % g:
        return FALSE
    m2 = m // g
    if m2 == 1:
        return TRUE
    rho = ((r - c) // g) * pow(k // g, -1, m2) % m2
    return node(BFeat, f"[i mod {m2} = {rho}]")


def lower(
    formula: S.Formula, alphabet: tuple[str, ...], causal: bool = False, nonstrict: bool = False
) -> BNode:
    """Lower a logic formula to the IR (see the module docstring). With ``causal``, operators
    that look to the right (``X U F E last #> n``) are a HardsoftError. ``nonstrict``: only
    non-strict masks will be available, so ``S U P F`` become ``Y``/``X`` of non-strict
    shifts and ``E φ`` the non-strict ``P̂ φ ∨ F̂ φ`` (one attention layer instead of two)."""
    return lower_all([formula], alphabet, causal, nonstrict)[0]


def lower_all(
    formulas: list[S.Formula], alphabet: tuple[str, ...], causal: bool, nonstrict: bool
) -> list[BNode]:
    """Lower several formulas at once (shared subformulas are lowered once)."""
    memo: dict[S.Node, BNode | Lin] = {}
    ctx = _Lowering(memo, set(alphabet), nonstrict)
    roots: list[S.Node] = list(formulas)
    for sub in topological(roots, S.children):
        if causal and S.operator(sub) in S.FUTURE_OPERATORS:
            raise HardsoftError(
                f"operator {S.operator(sub)} looks to the right of the current "
                "position, so it cannot be compiled with causal=True (only future masks); "
                "the causal target covers the past fragment (Y S P #< i and Boolean operators)"
            )
        memo[sub] = _LOWER[type(sub)](ctx, sub)
    return [ctx.f(f) for f in formulas]


def feature_node(name: str) -> BNode:
    return node(BFeat, name)


def count(direction: str, arg: BNode) -> Count:
    return node(Count, direction, arg)


@dataclass
class _Lowering:
    memo: dict[S.Node, BNode | Lin]
    alpha: set[str]
    nonstrict: bool

    def f(self, x: S.Node) -> BNode:
        v = self.memo[x]
        assert isinstance(v, BNode)
        return v

    def t(self, x: S.Node) -> Lin:
        v = self.memo[x]
        assert isinstance(v, Lin)
        return v

    def shift(self, pred: BNode, val: BNode, direction: str) -> BNode:
        return mk_strict_shift(pred, val, direction, self.nonstrict)


def _sym(c: _Lowering, x: S.Sym) -> BNode:
    if x.symbol not in c.alpha:
        raise HardsoftError(
            f"symbol {x.symbol!r} of the formula is not in the alphabet "
            f"{''.join(sorted(c.alpha))!r}"
        )
    return node(BAtom, x.symbol)


def _since(c: _Lowering, x: S.Since | S.Until) -> BNode:
    phi, psi = c.f(x.left), c.f(x.right)
    not_phi = mk_not(phi)
    # ψ ∨ ¬φ is just ¬φ when ψ = ¬φ ∧ ... implies it (absorption): one Boolean stage less
    implied = psi == not_phi or (isinstance(psi, BAnd) and not_phi in psi.args)
    pred = not_phi if implied else mk_or(psi, not_phi)
    return c.shift(pred, psi, "past" if isinstance(x, S.Since) else "future")


def _somewhere(c: _Lowering, x: S.Somewhere) -> BNode:
    a = c.f(x.arg)
    if c.nonstrict:  # E φ = (some j <= i has φ) | (some j >= i has φ)
        return mk_or(mk_shift(a, a, "past", False), mk_shift(a, a, "future", False))
    return mk_or(mk_shift(a, a, "past"), a, mk_shift(a, a, "future"))


def _compare(c: _Lowering, x: S.Compare) -> BNode:
    d = c.t(x.left) - c.t(x.right)
    one = Lin.make({}, 0, 1)
    if x.op == "<":
        return mk_geq(d.scale(-1) - one)
    if x.op == "<=":
        return mk_geq(d.scale(-1))
    if x.op == ">":
        return mk_geq(d - one)
    if x.op == ">=":
        return mk_geq(d)
    eq = mk_and(mk_geq(d), mk_geq(d.scale(-1)))
    return eq if x.op == "=" else mk_not(eq)


def _count_past(c: _Lowering, x: S.CountPast) -> Lin:
    arg = c.f(x.arg)
    if arg == FALSE:
        return Lin.make({})
    if arg == TRUE:
        return Lin.make({}, 1, 0)  # #<[true] = i
    return Lin.make({count("pre", arg): 1})


def _count_future(c: _Lowering, x: S.CountFuture) -> Lin:
    arg = c.f(x.arg)
    return Lin.make({}) if arg == FALSE else Lin.make({count("suf", arg): 1})


_LOWER: dict[type, Callable[[_Lowering, Any], BNode | Lin]] = {
    S.Sym: _sym,
    S.Const: lambda c, x: const(x.value),
    S.First: lambda c, x: feature_node("[i=1]"),
    S.Last: lambda c, x: feature_node("[i=n]"),
    S.Not: lambda c, x: mk_not(c.f(x.arg)),
    S.And: lambda c, x: mk_and(c.f(x.left), c.f(x.right)),
    S.Or: lambda c, x: mk_or(c.f(x.left), c.f(x.right)),
    S.Implies: lambda c, x: mk_or(mk_not(c.f(x.left)), c.f(x.right)),
    S.Prev: lambda c, x: mk_shift(TRUE, c.f(x.arg), "past"),
    S.Next: lambda c, x: mk_shift(TRUE, c.f(x.arg), "future"),
    S.Since: _since,
    S.Until: _since,
    S.Past: lambda c, x: c.shift(c.f(x.arg), c.f(x.arg), "past"),
    S.Future: lambda c, x: c.shift(c.f(x.arg), c.f(x.arg), "future"),
    S.Somewhere: _somewhere,
    S.Compare: _compare,
    S.Mod: lambda c, x: mk_mod(x.modulus, x.residue, c.t(x.term)),
    S.CountPast: _count_past,
    S.CountFuture: _count_future,
    S.IntConst: lambda c, x: Lin.make({}, 0, x.value),
    S.Position: lambda c, x: Lin.make({}, 1, 0),
    S.Length: lambda c, x: Lin.make({count("suf", TRUE): 1}, 1, -1),  # n = i + #>[true] - 1
    S.Add: lambda c, x: c.t(x.left) + c.t(x.right),
    S.Sub: lambda c, x: c.t(x.left) - c.t(x.right),
    S.Scale: lambda c, x: c.t(x.arg).scale(x.factor),
}
"""One lowering rule per AST node class (the operator-coverage test checks it is complete)."""


def ir_nodes(root: BNode) -> list[BNode]:
    """Distinct Boolean IR nodes reachable from ``root`` (terms' count arguments included),
    children before parents."""
    return ir_nodes_all([root])


def ir_nodes_all(roots: list[BNode]) -> list[BNode]:
    """Distinct Boolean IR nodes reachable from any of ``roots``, children before parents
    (a node shared by several roots appears once)."""
    return topological(roots, ir_children)


def ir_children(node: BNode) -> list[BNode]:
    if isinstance(node, BNot):
        return [node.arg]
    if isinstance(node, BAnd):
        return list(node.args)
    if isinstance(node, BShift):
        return [node.pred, node.val]
    if isinstance(node, (BGeq, BMod)):
        return [c.arg for c, _ in node.term.counts]
    if isinstance(node, BSum):
        return list(node.args)
    if isinstance(node, BSelect):  # everything the head reads: its layer waits for all
        att = node.att
        return [*att.gates, *att.keys, *att.columns]
    return []

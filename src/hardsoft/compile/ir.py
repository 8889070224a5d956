"""The compiler's intermediate graph: a DAG of distinct Boolean nodes and linear counting terms.

Lowering (:func:`lower`) rewrites the logic AST into a handful of primitives, sharing every
repeated subformula (nodes are frozen dataclasses, and the lowering is memoised on the AST):

* ``BAtom`` / ``BConst`` / ``BFeat`` (a 0/1 position feature such as ``[i=1]``) and ``BNot``
  cost no layer: they are linear forms of the residual stream;
* ``BAnd`` (``|`` and ``->`` become ``!``/``&``) is one feed-forward neuron;
* ``BShift(pred, val, direction)`` is the value of ``val`` at the nearest ``j < i`` (``past``)
  or ``j > i`` (``future``) where ``pred`` holds, false if there is none. It covers
  ``Y φ = BShift(true, φ)``, ``φ S ψ = BShift(ψ | !φ, ψ)``, ``P φ = BShift(φ, φ)`` and the
  mirrored ``X U F``; ``val`` always implies ``pred`` (so "no witness" reads as false);
* ``BGeq(term)`` is ``[term >= 0]`` for an integer linear term (every comparison is one or two
  of these), and ``BMod(m, r, term)`` is ``term mod m = r``.

A linear term (:class:`Lin`) is ``Σ c_k · count_k + c_i · i + c_0`` where a count is
``('pre', φ)`` (``#<[φ]``) or ``('suf', φ)`` (``#>[φ]``); ``n`` is rewritten as
``i + #>[true] − 1``.
"""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass

from hardsoft.errors import HardsoftError
from hardsoft.logic import syntax as S


class BNode:
    """Base class of Boolean IR nodes. Nodes are interned (built only through the ``mk_*``
    functions and :func:`node`), so equal nodes are the same object and hashing and equality
    are O(1) however much the DAG shares; ``uid`` orders them stably."""

    uid: int


# Weak values: a node lives while something (a parent's key, a caller) holds it, so compiling
# many formulas in one process does not grow the table without bound. uids only ever increase.
_TABLE: weakref.WeakValueDictionary[tuple, object] = weakref.WeakValueDictionary()
_UIDS = itertools.count()


def node(cls: type, *args: object) -> object:
    """The unique instance of ``cls(*args)`` (children are interned, so keys use identity)."""
    key = (cls, *args)
    found = _TABLE.get(key)
    if found is None:
        found = cls(*args)
        object.__setattr__(found, "uid", next(_UIDS))
        _TABLE[key] = found
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
    pred: BNode
    val: BNode
    direction: str  # "past" (nearest j < i) or "future" (nearest j > i)


@dataclass(frozen=True, eq=False)
class Count:
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


TRUE: BNode = node(BConst, True)  # type: ignore[assignment]
FALSE: BNode = node(BConst, False)  # type: ignore[assignment]


def const(value: bool) -> BNode:
    return TRUE if value else FALSE


def mk_not(a: BNode) -> BNode:
    if isinstance(a, BConst):
        return const(not a.value)
    if isinstance(a, BNot):
        return a.arg
    return node(BNot, a)  # type: ignore[return-value]


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
    return node(BAnd, tuple(kept))  # type: ignore[return-value]


def mk_or(*args: BNode) -> BNode:
    return mk_not(mk_and(*(mk_not(a) for a in args)))


def mk_shift(pred: BNode, val: BNode, direction: str) -> BNode:
    if val == FALSE or pred == FALSE:
        return FALSE
    return node(BShift, pred, val, direction)  # type: ignore[return-value]


def mk_geq(term: Lin) -> BNode:
    if term.is_const:
        return const(term.const >= 0)
    return node(BGeq, term)  # type: ignore[return-value]


def mk_mod(m: int, r: int, term: Lin) -> BNode:
    if m == 1:
        return TRUE
    counts = {c: k % m for c, k in term.counts if k % m}
    term = Lin.make(counts, term.pos % m, term.const % m)
    if term.is_const:
        return const(term.const % m == r)
    return node(BMod, m, r, term)  # type: ignore[return-value]


_FUTURE_NAMES = {
    S.Next: "X",
    S.Until: "U",
    S.Future: "F",
    S.Somewhere: "E",
    S.Last: "last",
    S.CountFuture: "#>",
    S.Length: "n",
}


def lower(formula: S.Formula, alphabet: tuple[str, ...], causal: bool = False) -> BNode:
    """Lower a logic formula to the IR (see the module docstring). With ``causal``, operators
    that look to the right (``X U F E last #> n``) are a HardsoftError."""
    memo: dict[S.Node, BNode | Lin] = {}
    alpha = set(alphabet)
    for node in S.subnodes(formula):
        if causal and type(node) in _FUTURE_NAMES:
            raise HardsoftError(
                f"operator {_FUTURE_NAMES[type(node)]} looks to the right of the current "
                "position, so it cannot be compiled with causal=True (only future masks); "
                "the causal target covers the past fragment (Y S P #< i and Boolean operators)"
            )
        memo[node] = _lower_one(node, memo, alpha)
    out = memo[formula]
    assert isinstance(out, BNode)
    return out


def count(direction: str, arg: BNode) -> Count:
    return node(Count, direction, arg)  # type: ignore[return-value]


node_ = node


def _lower_one(node: S.Node, memo: dict, alpha: set[str]) -> BNode | Lin:
    def f(x: S.Node) -> BNode:
        v = memo[x]
        assert isinstance(v, BNode)
        return v

    def t(x: S.Node) -> Lin:
        v = memo[x]
        assert isinstance(v, Lin)
        return v

    if isinstance(node, S.Sym):
        if node.symbol not in alpha:
            raise HardsoftError(
                f"symbol {node.symbol!r} of the formula is not in the alphabet "
                f"{''.join(sorted(alpha))!r}"
            )
        return node_(BAtom, node.symbol)
    if isinstance(node, S.Const):
        return const(node.value)
    if isinstance(node, S.First):
        return node_(BFeat, "[i=1]")
    if isinstance(node, S.Last):
        return node_(BFeat, "[i=n]")
    if isinstance(node, S.Not):
        return mk_not(f(node.arg))
    if isinstance(node, S.And):
        return mk_and(f(node.left), f(node.right))
    if isinstance(node, S.Or):
        return mk_or(f(node.left), f(node.right))
    if isinstance(node, S.Implies):
        return mk_or(mk_not(f(node.left)), f(node.right))
    if isinstance(node, S.Prev):
        return mk_shift(TRUE, f(node.arg), "past")
    if isinstance(node, S.Next):
        return mk_shift(TRUE, f(node.arg), "future")
    if isinstance(node, (S.Since, S.Until)):
        phi, psi = f(node.left), f(node.right)
        direction = "past" if isinstance(node, S.Since) else "future"
        return mk_shift(mk_or(psi, mk_not(phi)), psi, direction)
    if isinstance(node, S.Past):
        return mk_shift(f(node.arg), f(node.arg), "past")
    if isinstance(node, S.Future):
        return mk_shift(f(node.arg), f(node.arg), "future")
    if isinstance(node, S.Somewhere):
        a = f(node.arg)
        return mk_or(mk_shift(a, a, "past"), a, mk_shift(a, a, "future"))
    if isinstance(node, S.Compare):
        d = t(node.left) - t(node.right)
        one = Lin.make({}, 0, 1)
        if node.op == "<":
            return mk_geq(d.scale(-1) - one)
        if node.op == "<=":
            return mk_geq(d.scale(-1))
        if node.op == ">":
            return mk_geq(d - one)
        if node.op == ">=":
            return mk_geq(d)
        eq = mk_and(mk_geq(d), mk_geq(d.scale(-1)))
        return eq if node.op == "=" else mk_not(eq)
    if isinstance(node, S.Mod):
        return mk_mod(node.modulus, node.residue, t(node.term))
    if isinstance(node, S.CountPast):
        arg = f(node.arg)
        if arg == FALSE:
            return Lin.make({})
        if arg == TRUE:
            return Lin.make({}, 1, 0)  # #<[true] = i
        return Lin.make({count("pre", arg): 1})
    if isinstance(node, S.CountFuture):
        arg = f(node.arg)
        return Lin.make({}) if arg == FALSE else Lin.make({count("suf", arg): 1})
    if isinstance(node, S.IntConst):
        return Lin.make({}, 0, node.value)
    if isinstance(node, S.Position):
        return Lin.make({}, 1, 0)
    if isinstance(node, S.Length):
        return Lin.make({count("suf", TRUE): 1}, 1, -1)  # n = i + #>[true] - 1
    if isinstance(node, S.Add):
        return t(node.left) + t(node.right)
    if isinstance(node, S.Sub):
        return t(node.left) - t(node.right)
    if isinstance(node, S.Scale):
        return t(node.arg).scale(node.factor)
    raise TypeError(f"cannot lower {node!r}")


def ir_nodes(root: BNode) -> list[BNode]:
    """Distinct Boolean IR nodes reachable from ``root`` (terms' count arguments included),
    children before parents."""
    return ir_nodes_all([root])


def ir_nodes_all(roots: list[BNode]) -> list[BNode]:
    """Distinct Boolean IR nodes reachable from any of ``roots``, children before parents
    (a node shared by several roots appears once)."""
    order: list[BNode] = []
    seen: set[BNode] = set()
    stack: list[tuple[BNode, bool]] = [(root, False) for root in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            if node not in seen:
                seen.add(node)
                order.append(node)
            continue
        if node in seen:
            continue
        stack.append((node, True))
        for child in ir_children(node):
            if child not in seen:
                stack.append((child, False))
    return order


def ir_children(node: BNode) -> list[BNode]:
    if isinstance(node, BNot):
        return [node.arg]
    if isinstance(node, BAnd):
        return list(node.args)
    if isinstance(node, BShift):
        return [node.pred, node.val]
    if isinstance(node, (BGeq, BMod)):
        return [c.arg for c, _ in node.term.counts]
    return []

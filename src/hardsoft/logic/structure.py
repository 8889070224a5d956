"""Structural queries on LTL[C,+] syntax trees: children, subformulas in dependency order,
size, depth, temporal depth, operators, and the fragments of Yang, Strobl, Chiang & Angluin
(arXiv:2412.09925v1) §4 a formula belongs to. Every query walks the shared DAG once (no
recursion)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from hardsoft.logic.dag import topological
from hardsoft.logic.nodes import (
    _FIELDS,
    COMPARE_OPS,
    Add,
    And,
    Compare,
    Const,
    CountFuture,
    CountPast,
    First,
    Formula,
    Future,
    Implies,
    IntConst,
    Last,
    Length,
    Mod,
    Next,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Scale,
    Since,
    Somewhere,
    Sub,
    Sym,
    Until,
)

__all__ = [
    "FUTURE_OPERATORS",
    "Fragment",
    "children",
    "subnodes",
    "subformulas",
    "symbols",
    "size",
    "depth",
    "temporal_depth",
    "operators",
    "operator",
    "is_past_only",
    "fragment",
]


# ---------------------------------------------------------------- structure


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes (formulas and terms) of ``node``, left to right."""
    return tuple(
        value
        for value in (getattr(node, name) for name in _FIELDS[type(node)])
        if isinstance(value, Node)
    )


def subnodes(node: Node) -> list[Node]:
    """All distinct sub-nodes of ``node`` (formulas and terms, ``node`` included) in dependency
    order: every node comes after all of its children. Equal subtrees appear once."""
    return topological([node], children)


def rewrite(formula: Formula, visit: Callable[[Node], Node]) -> Formula:
    """``formula`` rebuilt bottom up: every node gets its rewritten children, then ``visit``
    (equal subtrees are rewritten once)."""
    memo: dict[Node, Node] = {}
    for node in subnodes(formula):
        changes = {
            name: memo[value]
            for name in _FIELDS[type(node)]
            if isinstance(value := getattr(node, name), Node) and memo[value] is not value
        }
        memo[node] = visit(replace(node, **changes) if changes else node)  # type: ignore[type-var]
    out = memo[formula]
    assert isinstance(out, Formula)
    return out


def subformulas(node: Node) -> list[Formula]:
    """The distinct subformulas of ``node`` (children before parents); terms are left out."""
    return [n for n in subnodes(node) if isinstance(n, Formula)]


def symbols(node: Node) -> frozenset[str]:
    """The alphabet symbols mentioned by ``node``."""
    return frozenset(n.symbol for n in subnodes(node) if isinstance(n, Sym))


def size(node: Node) -> int:
    """The number of nodes of the syntax tree, counting repeated subtrees every time."""
    memo: dict[Node, int] = {}
    for n in subnodes(node):
        memo[n] = 1 + sum(memo[c] for c in children(n))
    return memo[node]


def shared_size(node: Node) -> int:
    """The number of distinct sub-nodes: the size when every repeated subformula is written
    once, as a named definition (a B-RASP-style program), and referred to by name."""
    return len(subnodes(node))


def depth(node: Node) -> int:
    """The height of the syntax tree: atoms and literals have depth 0."""
    memo: dict[Node, int] = {}
    for n in subnodes(node):
        kids = children(n)
        memo[n] = 1 + max(memo[c] for c in kids) if kids else 0
    return memo[node]


_ATTENTION = (Prev, Next, Since, Until, Past, Future, Somewhere, CountPast, CountFuture)


def temporal_depth(node: Node) -> int:
    """The nesting depth of operators that look at other positions (``Y X S U P F E #< #>``):
    the number of attention stages a layer-by-layer construction needs (``first``/``last``
    and ``n``, which look at the whole word, are not counted)."""
    memo: dict[Node, int] = {}
    for n in subnodes(node):
        below = max((memo[c] for c in children(n)), default=0)
        memo[n] = below + (1 if isinstance(n, _ATTENTION) else 0)
    return memo[node]


_OPERATOR_NAMES: dict[type, str] = {
    Sym: "sym",
    Const: "const",
    First: "first",
    Last: "last",
    Not: "!",
    And: "&",
    Or: "|",
    Implies: "->",
    Prev: "Y",
    Next: "X",
    Since: "S",
    Until: "U",
    Past: "P",
    Future: "F",
    Somewhere: "E",
    Mod: "MOD",
    CountPast: "#<",
    CountFuture: "#>",
    IntConst: "int",
    Position: "i",
    Length: "n",
    Add: "+",
    Sub: "-",
    Scale: "*",
}


def operator(node: Node) -> str:
    """The operator name of one node: its concrete-syntax token (``"Y"``, ``"#<"``, ``"<="``),
    or ``"sym"``, ``"const"``, ``"int"`` for symbols, ``true``/``false`` and integer literals."""
    if isinstance(node, Compare):
        return node.op
    return _OPERATOR_NAMES[type(node)]


def operators(node: Node) -> frozenset[str]:
    """The set of operator names (see :func:`operator`) used anywhere in ``node``."""
    return frozenset(operator(n) for n in subnodes(node))


# ---------------------------------------------------------------- fragments

FUTURE_OPERATORS: frozenset[str] = frozenset({"X", "U", "F", "E", "last", "#>", "n"})
"""The operators that look to the right of the current position (or at the whole word's
length): a formula without them is past-only, computable with future masks (causal). The one
place this set is written; the random generator and the compiler derive from it."""
_LOCAL_OPS = frozenset({"Y", "X", "first", "last"})
_SINCE_OPS = frozenset({"S", "U", "P", "F", "E"})
_COUNT_OPS = frozenset({"#<", "#>", "MOD", "i", "n", "int", "+", "-", "*", *COMPARE_OPS})


@dataclass(frozen=True)
class Fragment:
    """The smallest of the fragments of Yang et al. (arXiv:2412.09925v1) §4 containing a formula.

    ``base`` is one of ``TL[Y,X]``, ``TL[S,U]``, ``LTL``, ``TL[C,+]``, ``LTL[C,+]``;
    ``past_only`` says no operator looks to the right (``X U F E last #> n``), so a
    future-masked (causal) transformer can compute the formula; ``name`` is the past variant's
    name when ``past_only`` (``TL[Y]``, ``TL[S]``, ``past LTL``, ``past TL[C,+]``,
    ``past LTL[C,+]``) and ``base`` otherwise.
    """

    base: str
    past_only: bool

    @property
    def name(self) -> str:
        if not self.past_only:
            return self.base
        return {"TL[Y,X]": "TL[Y]", "TL[S,U]": "TL[S]"}.get(self.base, f"past {self.base}")

    def __str__(self) -> str:
        return self.name


def is_past_only(node: Node) -> bool:
    """True iff no operator in ``node`` looks at positions to the right of ``i`` (or at ``n``):
    the value at ``i`` depends only on ``w_1..w_i``."""
    return not (operators(node) & FUTURE_OPERATORS)


def fragment(node: Node) -> Fragment:
    """Classify ``node`` into the smallest fragment of the seed containing it (syntactically).

    ``first``/``last`` count as TL[Y,X] operators (``!Y true``, ``!X true``); a formula with no
    temporal or counting operator is placed in TL[Y,X] (TL[Y] if past-only), the cheapest to
    compile. Counting with any of ``Y X S U P F E`` is LTL[C,+]; ``Y``/``X`` together with
    ``S U P F E`` is LTL.
    """
    ops = operators(node)
    local = bool(ops & _LOCAL_OPS)
    since = bool(ops & _SINCE_OPS)
    count = bool(ops & _COUNT_OPS)
    if count:
        temporal = bool(ops & (_SINCE_OPS | {"Y", "X"}))
        base = "LTL[C,+]" if temporal else "TL[C,+]"
    elif local and since:
        base = "LTL"
    elif since:
        base = "TL[S,U]"
    else:
        base = "TL[Y,X]"
    return Fragment(base=base, past_only=not (ops & FUTURE_OPERATORS))

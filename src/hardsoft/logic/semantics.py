"""The evaluator: the value of every formula and term at every position of a batch of words.

This is the project's ground truth for the logic (compiled transformers are judged against it),
so it is plain code straight from the definitions of Yang, Strobl, Chiang & Angluin
(arXiv:2412.09925v1) §4 (Defs. 10, 14, 19), vectorised with numpy over a batch of equal-length
words. Positions are 1-based in the logic and 0-based in the arrays: column ``k`` of a result is
position ``i = k + 1``.

The empty word has no last position, so :func:`accepts` rejects it for every formula (the
language of a formula is a set of non-empty words); :func:`evaluate` on empty words returns
arrays with zero columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import (
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
    Term,
    Until,
    children,
    subnodes,
)

__all__ = [
    "as_symbol_array",
    "evaluate",
    "evaluate_term",
    "evaluate_all",
    "values",
    "accepts",
    "accepts_batch",
    "BatchValues",
]


def as_symbol_array(
    words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None = None
) -> np.ndarray:
    """Turn a batch of words into a ``[B, n]`` array of one-character strings.

    ``words`` is a sequence of equal-length strings, a ``[B, n]`` array of characters, or a
    ``[B, n]`` integer array of token ids into ``alphabet`` (then required). With ``alphabet``,
    string words must use only its symbols.
    """
    alpha = None if alphabet is None else list(alphabet)
    if isinstance(words, str):
        raise HardsoftError("expected a batch of words (a list of strings), got a single string")
    if isinstance(words, np.ndarray) and words.dtype.kind in "iu":
        if alpha is None:
            raise HardsoftError("token-id words need an alphabet to name the symbols")
        if words.ndim != 2:
            raise HardsoftError(f"token ids must have shape [batch, length], got {words.shape}")
        if words.size and (words.min() < 0 or words.max() >= len(alpha)):
            raise HardsoftError(f"token ids must be in 0..{len(alpha) - 1}")
        table = np.array(alpha if alpha else [""], dtype="<U1")
        return table[words] if words.size else np.empty(words.shape, dtype="<U1")
    if isinstance(words, np.ndarray) and words.dtype.kind == "U":
        if words.ndim != 2:
            raise HardsoftError(f"symbol arrays must have shape [batch, length], got {words.shape}")
        array = words.astype("<U1")
    else:
        words = list(words)
        lengths = {len(w) for w in words}
        if len(lengths) > 1:
            raise HardsoftError(f"words in a batch must have equal length, got {sorted(lengths)}")
        n = lengths.pop() if lengths else 0
        array = np.empty((len(words), n), dtype="<U1")
        for b, word in enumerate(words):
            if not isinstance(word, str):
                raise HardsoftError(f"a word must be a string, got {word!r}")
            array[b, :] = list(word)
    if alpha is not None and array.size:
        unknown = sorted(set(np.unique(array)) - set(alpha))
        if unknown:
            raise HardsoftError(
                f"symbol {unknown[0]!r} of the input is not in the alphabet {''.join(alpha)!r}"
            )
    return array


def _strict_last(mask: np.ndarray) -> np.ndarray:
    """For each column k: the largest column j < k where ``mask`` holds, or -1."""
    batch, n = mask.shape
    idx = np.where(mask, np.arange(n)[None, :], -1)
    inclusive = np.maximum.accumulate(idx, axis=1) if n else idx
    out = np.full((batch, n), -1, dtype=np.int64)
    out[:, 1:] = inclusive[:, :-1]
    return out


def _since(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a S b``: the nearest ``j < i`` with ``b`` is the best witness (a farther one spans a
    longer stretch that must satisfy ``a``), so check ``a`` on the open interval after it."""
    last_b = _strict_last(b)
    last_not_a = _strict_last(~a)
    return (last_b >= 0) & (last_not_a <= last_b)


class _Input:
    """The batch as token codes: ``codes[b, k]`` indexes ``symbols`` (token ids are used as
    they are; strings are encoded once), so a symbol test is one integer comparison."""

    def __init__(self, words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None):
        alpha = None if alphabet is None else list(alphabet)
        if isinstance(words, np.ndarray) and words.dtype.kind in "iu" and alpha is not None:
            if words.ndim != 2:
                raise HardsoftError(f"token ids must have shape [batch, length], got {words.shape}")
            if words.size and (words.min() < 0 or words.max() >= len(alpha)):
                raise HardsoftError(f"token ids must be in 0..{len(alpha) - 1}")
            self.codes = words.astype(np.int64, copy=False)
            self.symbols = alpha
        else:
            chars = as_symbol_array(words, alpha)
            uniques, inverse = np.unique(chars, return_inverse=True)
            self.symbols = [str(u) for u in uniques]
            self.codes = inverse.reshape(chars.shape).astype(np.int64)
        self.shape = self.codes.shape

    def equals(self, symbol: str) -> np.ndarray:
        if symbol not in self.symbols:
            return np.zeros(self.shape, dtype=bool)
        return self.codes == self.symbols.index(symbol)


INT64_MAX = int(np.iinfo(np.int64).max)


def magnitude_bound(node: Node, n: int) -> int:
    """An upper bound on ``|value|`` of every term under ``node`` (and of every MOD constant)
    at length ``n``: counts, ``i`` and ``n`` are at most ``n``; sums add bounds; ``k * t``
    multiplies by ``|k|``. When it is at most 2^63 − 1, int64 arithmetic is exact (no
    intermediate value can leave the range); otherwise :func:`evaluate_all` computes with
    Python integers."""
    bound: dict[Node, int] = {}
    worst = 0
    for sub in subnodes(node):
        if isinstance(sub, IntConst):
            b = abs(sub.value)
        elif isinstance(sub, (Position, Length, CountPast, CountFuture)):
            b = n
        elif isinstance(sub, (Add, Sub)):
            b = bound[sub.left] + bound[sub.right]
        elif isinstance(sub, Scale):
            b = abs(sub.factor) * bound[sub.arg]
        elif isinstance(sub, Mod):
            b = max(sub.modulus, sub.residue)
        else:
            continue
        bound[sub] = b
        worst = max(worst, b)
    return worst


def _node_value(
    node: Node, memo: dict[Node, np.ndarray], sym: _Input, exact: bool = False
) -> np.ndarray:
    """The value of ``node`` from its children's (in ``memo``). Terms are int64 arrays, or
    object arrays of Python ints when ``exact`` (values that may leave the int64 range)."""
    batch, n = sym.shape
    ints = object if exact else np.int64
    pos = np.broadcast_to(np.arange(1, n + 1, dtype=np.int64)[None, :], (batch, n))
    if isinstance(node, Sym):
        return sym.equals(node.symbol)
    if isinstance(node, Const):
        return np.full((batch, n), node.value, dtype=bool)
    if isinstance(node, First):
        return pos == 1
    if isinstance(node, Last):
        return pos == n
    if isinstance(node, Not):
        return ~memo[node.arg]
    if isinstance(node, And):
        return memo[node.left] & memo[node.right]
    if isinstance(node, Or):
        return memo[node.left] | memo[node.right]
    if isinstance(node, Implies):
        return ~memo[node.left] | memo[node.right]
    if isinstance(node, Prev):
        out = np.zeros((batch, n), dtype=bool)
        out[:, 1:] = memo[node.arg][:, :-1]
        return out
    if isinstance(node, Next):
        out = np.zeros((batch, n), dtype=bool)
        out[:, :-1] = memo[node.arg][:, 1:]
        return out
    if isinstance(node, Since):
        return _since(memo[node.left], memo[node.right])
    if isinstance(node, Until):  # mirror image of Since
        a, b = memo[node.left][:, ::-1], memo[node.right][:, ::-1]
        return np.ascontiguousarray(_since(a, b)[:, ::-1])
    if isinstance(node, Past):
        return _strict_last(memo[node.arg]) >= 0
    if isinstance(node, Future):
        return np.ascontiguousarray((_strict_last(memo[node.arg][:, ::-1]) >= 0)[:, ::-1])
    if isinstance(node, Somewhere):
        return np.broadcast_to(memo[node.arg].any(axis=1, keepdims=True), (batch, n)).copy()
    if isinstance(node, Compare):
        left, right = memo[node.left], memo[node.right]
        return {
            "<": np.less,
            "<=": np.less_equal,
            "=": np.equal,
            "!=": np.not_equal,
            ">=": np.greater_equal,
            ">": np.greater,
        }[node.op](left, right).astype(bool)
    if isinstance(node, Mod):
        return (np.mod(memo[node.term], node.modulus) == node.residue).astype(bool)
    if isinstance(node, CountPast):
        return np.cumsum(memo[node.arg], axis=1, dtype=np.int64).astype(ints)
    if isinstance(node, CountFuture):
        rev = np.cumsum(memo[node.arg][:, ::-1], axis=1, dtype=np.int64)
        return np.ascontiguousarray(rev[:, ::-1]).astype(ints)
    if isinstance(node, IntConst):
        return np.full((batch, n), node.value, dtype=ints)
    if isinstance(node, Position):
        return pos.astype(ints)
    if isinstance(node, Length):
        return np.full((batch, n), n, dtype=ints)
    if isinstance(node, Add):
        return memo[node.left] + memo[node.right]
    if isinstance(node, Sub):
        return memo[node.left] - memo[node.right]
    if isinstance(node, Scale):
        return node.factor * memo[node.arg]
    raise TypeError(f"not a logic node: {node!r}")


def evaluate_all(
    node: Node, words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None = None
) -> dict[Node, np.ndarray]:
    """The value of every distinct subformula and subterm of ``node``: a dict from node to a
    ``[B, n]`` array (bool for formulas; int64 for terms, or object arrays of exact Python
    integers when :func:`magnitude_bound` exceeds the int64 range). Useful to check a compiled
    model's intermediate coordinates."""
    sym = _Input(words, alphabet)
    exact = magnitude_bound(node, sym.shape[1]) > INT64_MAX
    memo: dict[Node, np.ndarray] = {}
    for sub in subnodes(node):
        memo[sub] = _node_value(sub, memo, sym, exact)
    return memo


def _missing(node: Node, memo: dict[Node, np.ndarray]) -> list[Node]:
    """The sub-nodes of ``node`` not in ``memo``, children first (the walk stops at kept
    nodes, so a rewrite of a large formula costs its new nodes only)."""
    order: list[Node] = []
    seen: set[Node] = set()
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        item, expanded = stack.pop()
        if expanded:
            order.append(item)
        elif item not in memo and item not in seen:
            seen.add(item)
            stack.append((item, True))
            stack.extend((c, False) for c in children(item) if c not in memo and c not in seen)
    return order


class BatchValues:
    """The value of every node asked for on one fixed batch of equal-length words, each node
    computed once and kept. Many formulas that share subformulas (a formula and its rewrites,
    as :mod:`hardsoft.decompile.shrink` tries them) then cost only their new nodes.
    ``computed`` counts the node values computed so far (each one ``[B, n]`` array)."""

    def __init__(self, words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None) -> None:
        self._sym = _Input(words, alphabet)
        self._memo: dict[Node, np.ndarray] = {}
        self.computed = 0

    @property
    def shape(self) -> tuple[int, int]:
        """``(B, n)``: words and their length."""
        batch, n = self._sym.shape
        return batch, n

    def value(self, node: Node) -> np.ndarray:
        """``node``'s value at every position, ``[B, n]`` (computed where not kept yet)."""
        memo = self._memo
        if node not in memo:
            missing = _missing(node, memo)
            exact = any(isinstance(sub, Term) for sub in missing) and (
                magnitude_bound(node, self._sym.shape[1]) > INT64_MAX
            )
            for sub in missing:
                memo[sub] = _node_value(sub, memo, self._sym, exact)
                self.computed += 1
        return memo[node]

    def keep_only(self, nodes: Iterable[Node]) -> None:
        """Forget every kept value but those of ``nodes`` (bounds the memory over many
        formulas)."""
        wanted = set(nodes)
        self._memo = {k: v for k, v in self._memo.items() if k in wanted}


def evaluate(
    formula: Formula, words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None = None
) -> np.ndarray:
    """The truth value of ``formula`` at every position: a bool array of shape ``[B, n]``."""
    if not isinstance(formula, Formula):
        raise HardsoftError(f"expected a formula, got {formula!r}")
    return evaluate_all(formula, words, alphabet)[formula]


def evaluate_term(
    term: Term, words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None = None
) -> np.ndarray:
    """The value of a counting term at every position: an int64 array of shape ``[B, n]``
    (an object array of Python integers when the values may leave the int64 range)."""
    if not isinstance(term, Term):
        raise HardsoftError(f"expected a term, got {term!r}")
    return evaluate_all(term, words, alphabet)[term]


def values(formula: Formula, word: str, alphabet: Iterable[str] | None = None) -> np.ndarray:
    """The truth value of ``formula`` at each position of one word: a bool array ``[n]``."""
    return evaluate(formula, [word], alphabet)[0]


def accepts_batch(
    formula: Formula, words: Sequence[str] | np.ndarray, alphabet: Iterable[str] | None = None
) -> np.ndarray:
    """Acceptance of each word of a batch: the value at the last position (empty words: False)."""
    vals = evaluate(formula, words, alphabet)
    if vals.shape[1] == 0:
        return np.zeros(vals.shape[0], dtype=bool)
    return vals[:, -1].copy()


def accepts(formula: Formula, word: str, alphabet: Iterable[str] | None = None) -> bool:
    """``word ∈ L(formula)``: the formula holds at the last position ``n``. The empty word has
    no last position and is rejected by every formula."""
    if not isinstance(word, str):
        raise HardsoftError(f"a word must be a string, got {word!r}")
    return bool(accepts_batch(formula, [word], alphabet)[0])

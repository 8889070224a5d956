"""``evaluate(program, xs)``: RASP's meaning, as Tracr's evaluator defines it, and fast enough
to check compiled models at n = 10⁴.

The semantics are Tracr's (``tracr.rasp.rasp.DefaultRASPEvaluator``): indices from 0; a Map or
SequenceMap leaves None as None and calls the user's function otherwise; a Select calls its
predicate on (key, query) (a :class:`~.api.Comparison` refuses None); SelectorWidth counts the
selected keys; Aggregate is the default where nothing is selected, the selected value where one
is, and the mean where several numbers are (several non-numbers are an error).

Two deliberate differences, both for *categorical* Aggregates that select several positions:
if their values differ, it is an error here (:class:`AggregateError`): Tracr returns their mean,
which is not one of the SOp's values (and which its compiled model does not compute either);
if they all hold one value (the same type too), that value is the result: Tracr returns the
float mean for numbers (``2.0`` for ``[2, 2]``) and refuses strings.

It is the ground truth the compiled models are checked against, so it shares no code with the
compiler: it calls the user's functions (``Map.f``, ``Select.predicate``), never the ``op``
descriptions. For speed it calls them once per distinct value (or pair of values), memoises
every expression within one call, and compares numbers with numpy when a Select's predicate
is a :class:`~.api.Comparison` (or ``& | ~`` of them) of numbers.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.rasp import api as R

_BLOCK = 1 << 22
"""Selector entries computed at once (rows × n): about 4 MB of booleans."""
_SMALL_TABLE = 64
"""Predicate tables up to this many (distinct key, distinct query) pairs are filled by calling
the predicate; above it, a Comparison (tree) of numbers is computed with numpy, which gives
Python's answers on numbers."""


class RaspError(HardsoftError):
    """A RASP program failed on an input (its own function raised, or an Aggregate is not
    defined there): one line naming the expression and the position."""


class AggregateError(RaspError):
    """A categorical Aggregate selected several positions with different values (or several
    non-numbers, which Tracr refuses too)."""


def _key(v: Any) -> Any:
    """A dictionary key that keeps 1, 1.0 and True apart (Tracr's functions may tell them
    apart, e.g. ``str``)."""
    try:
        hash(v)
    except TypeError:
        return ("unhashable", id(v))
    return (type(v), v)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, bool, float))


class Evaluator:
    """Evaluates expressions on one input, each once (results memoised by ``unique_id``)."""

    def __init__(self, xs: Sequence[Any], causal: bool = False) -> None:
        self.xs = list(xs)
        self.causal = causal
        self.n = len(self.xs)
        self.memo: dict[int, list[Any]] = {}
        self.codes: dict[int, tuple[np.ndarray, list[Any]]] = {}
        self.tables: dict[int, np.ndarray] = {}

    def coded(self, expr: R.SOp) -> tuple[np.ndarray, list[Any]]:
        """The SOp's values as codes into its distinct values (see :func:`_codes`)."""
        found = self.codes.get(expr.unique_id)
        if found is None:
            found = self.codes[expr.unique_id] = _codes(self.sop(expr))
        return found

    def sop(self, expr: R.SOp) -> list[Any]:
        found = self.memo.get(expr.unique_id)
        if found is None:
            found = self._sop(expr)
            self.memo[expr.unique_id] = found
        return found

    def _sop(self, expr: R.SOp) -> list[Any]:
        n = self.n
        if isinstance(expr, R.TokensType):
            return list(self.xs)
        if isinstance(expr, R.IndicesType):
            return list(range(n))
        if isinstance(expr, R.LengthType):
            return [n] * n
        if isinstance(expr, R.Map):
            return self._map(expr, expr.f, [self.sop(expr.inner)])
        if isinstance(expr, R.SequenceMap):
            return self._map(expr, expr.f, [self.sop(expr.fst), self.sop(expr.snd)])
        if isinstance(expr, R.Full):
            return [expr.fill] * n
        if isinstance(expr, R.ConstantSOp):
            if expr.check_length and len(expr.value) != n:
                raise RaspError(
                    f"ConstantSOp {expr.name} has length {len(expr.value)}, the input {n}"
                )
            return list(expr.value)
        if isinstance(expr, R.SelectorWidth):
            widths = [0] * n
            for rows, block in self.selector_blocks(expr.selector):
                widths[rows.start : rows.stop] = block.sum(axis=1).tolist()
            return widths
        if isinstance(expr, R.Aggregate):
            return self._aggregate(expr)
        raise RaspError(f"cannot evaluate {expr!r}: not an SOp of hardsoft.rasp")

    def _map(self, expr: R.SOp, f: Callable[..., Any], args: list[list[Any]]) -> list[Any]:
        """``f`` on each position's arguments (None if any is None), once per distinct tuple."""
        cache: dict[tuple[Any, ...], Any] = {}
        out: list[Any] = []
        for i, vals in enumerate(zip(*args)):
            if any(v is None for v in vals):
                out.append(None)
                continue
            k = tuple(_key(v) for v in vals)
            if k not in cache:
                try:
                    cache[k] = f(*vals)
                except Exception as exc:  # the user's function: any exception is theirs
                    raise RaspError(
                        f"{type(expr).__name__} {expr.name} raised {type(exc).__name__}: "
                        f"{exc} on {', '.join(map(repr, vals))} (index {i}, position {i + 1})"
                    ) from exc
            out.append(cache[k])
        return out

    # ---- selectors ---------------------------------------------------------------------

    def selector_blocks(self, sel: R.Selector) -> Iterator[tuple[slice, np.ndarray]]:
        """The selection matrix ``[query, key]`` in blocks of rows: ``(rows, bool array)``."""
        n = self.n
        step = max(1, _BLOCK // max(n, 1))
        for start in range(0, n, step):
            rows = slice(start, min(n, start + step))
            block = self._rows(sel, rows)
            if self.causal:  # Tracr's causal_eval: j <= i only
                block = block & (np.arange(n)[None, :] <= np.arange(rows.start, rows.stop)[:, None])
            yield rows, block

    def _rows(self, sel: R.Selector, rows: slice) -> np.ndarray:
        n = self.n
        if isinstance(sel, R.Select):
            return self._select_rows(sel, rows)
        if isinstance(sel, R.SelectorAnd):
            return self._rows(sel.fst, rows) & self._rows(sel.snd, rows)
        if isinstance(sel, R.SelectorOr):
            return self._rows(sel.fst, rows) | self._rows(sel.snd, rows)
        if isinstance(sel, R.SelectorNot):
            return ~self._rows(sel.inner, rows)
        if isinstance(sel, R.ConstantSelector):
            value = np.asarray(sel.value, dtype=bool).reshape(-1, n) if n else np.zeros((0, 0))
            if sel.check_length and value.shape != (n, n):
                raise RaspError(f"ConstantSelector {sel.name} does not match the input length {n}")
            return value[rows]
        raise RaspError(f"cannot evaluate {sel!r}: not a selector of hardsoft.rasp")

    def _select_rows(self, sel: R.Select, rows: slice) -> np.ndarray:
        kcodes, kvals = self.coded(sel.keys)
        qcodes, qvals = self.coded(sel.queries)
        if len(kvals) * len(qvals) > _SMALL_TABLE and _numeric(sel.predicate, kvals, qvals):
            k = np.asarray(self.sop(sel.keys), dtype=np.float64)[None, :]
            q = np.asarray(self.sop(sel.queries)[rows], dtype=np.float64)[:, None]
            return _numpy_predicate(sel.predicate, k, q)
        table = self._table(sel, kvals, qvals)
        return table[qcodes[rows]][:, kcodes]

    def _table(self, sel: R.Select, kvals: list[Any], qvals: list[Any]) -> np.ndarray:
        """``predicate(key, query)`` for every distinct query (rows) and key (columns), each
        pair computed once per evaluation."""
        found = self.tables.get(sel.unique_id)
        if found is not None:
            return found
        table = np.zeros((len(qvals), len(kvals)), dtype=bool)
        for a, q in enumerate(qvals):
            for b, k in enumerate(kvals):
                try:
                    table[a, b] = bool(sel.predicate(k, q))
                except Exception as exc:  # the user's predicate
                    raise RaspError(
                        f"Select {sel.name}'s predicate raised {type(exc).__name__}: {exc} "
                        f"on key {k!r}, query {q!r}"
                    ) from exc
        self.tables[sel.unique_id] = table
        return table

    # ---- aggregate ---------------------------------------------------------------------

    def _aggregate(self, expr: R.Aggregate) -> list[Any]:
        values = self.sop(expr.sop)
        codes, distinct = self.coded(expr.sop)
        numeric = np.array([_is_number(v) for v in distinct], dtype=bool)
        is_num = numeric[codes] if len(codes) else np.zeros(0, dtype=bool)
        as_float = np.array([float(v) if _is_number(v) else math.nan for v in values])
        categorical = R.is_categorical(expr)
        out: list[Any] = [None] * self.n
        for rows, block in self.selector_blocks(expr.selector):
            count = block.sum(axis=1)
            lo = np.where(block, codes[None, :], len(distinct)).min(axis=1)
            hi = np.where(block, codes[None, :], -1).max(axis=1)
            all_num = ~(block & ~is_num[None, :]).any(axis=1)
            sums = (np.where(block, np.nan_to_num(as_float), 0.0)).sum(axis=1)
            for r, i in enumerate(range(rows.start, rows.stop)):
                c = int(count[r])
                if c == 0:
                    out[i] = expr.default
                elif c == 1:
                    out[i] = values[int(np.argmax(block[r]))]
                elif categorical and lo[r] == hi[r]:
                    out[i] = distinct[int(lo[r])]  # one value, held by every selected position
                elif categorical:
                    raise AggregateError(
                        f"categorical Aggregate {expr.name} averages several values at index "
                        f"{i} (position {i + 1}): {_shown(values, block[r])} (it must select "
                        "one position, or positions holding one number; or declare it numerical)"
                    )
                elif not all_num[r]:
                    raise AggregateError(
                        f"numerical Aggregate {expr.name} averages values that are not all "
                        f"numbers at index {i} (position {i + 1}): {_shown(values, block[r])}"
                    )
                else:
                    out[i] = float(sums[r]) / c
        return out


def _shown(values: list[Any], row: np.ndarray) -> str:
    picked = [values[j] for j in np.flatnonzero(row)[:6]]
    more = ", ..." if row.sum() > 6 else ""
    return "[" + ", ".join(map(repr, picked)) + more + "]"


def _codes(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Each value's index among the distinct values (1, 1.0 and True kept apart)."""
    index: dict[Any, int] = {}
    distinct: list[Any] = []
    codes = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        k = _key(v)
        c = index.get(k)
        if c is None:
            c = index[k] = len(distinct)
            distinct.append(v)
        codes[i] = c
    return codes, distinct


def _numeric(pred: Any, kvals: list[Any], qvals: list[Any]) -> bool:
    """A predicate built from Comparisons (and ``& | ~``) on numbers, no None: numpy gives
    Python's answers (a Comparison refuses None, so those go through the table)."""
    return (
        _comparison_tree(pred)
        and all(_is_number(v) for v in kvals)
        and all(_is_number(v) for v in qvals)
    )


def _comparison_tree(pred: Any) -> bool:
    if isinstance(pred, R.Comparison):
        return True
    if isinstance(pred, R.CombinedPredicate):
        return _comparison_tree(pred.fst) and _comparison_tree(pred.snd)
    if isinstance(pred, R.NegatedPredicate):
        return _comparison_tree(pred.inner)
    return False


def _numpy_predicate(pred: Any, k: np.ndarray, q: np.ndarray) -> np.ndarray:
    """A Comparison tree on keys ``[1, n]`` and queries ``[rows, 1]``: ``[rows, n]`` bools."""
    shape = np.broadcast_shapes(k.shape, q.shape)
    if isinstance(pred, R.CombinedPredicate):
        a, b = _numpy_predicate(pred.fst, k, q), _numpy_predicate(pred.snd, k, q)
        return (a & b) if pred.how is R.Combine.AND else (a | b)
    if isinstance(pred, R.NegatedPredicate):
        return ~_numpy_predicate(pred.inner, k, q)
    if pred is R.Comparison.TRUE:
        return np.ones(shape, dtype=bool)
    if pred is R.Comparison.FALSE:
        return np.zeros(shape, dtype=bool)
    return np.broadcast_to(_NUMPY_RELATIONS[pred.value](k, q), shape)


_NUMPY_RELATIONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def evaluate(expr: R.RASPExpr, xs: Sequence[Any], *, causal: bool = False) -> Any:
    """The value of ``expr`` on the input ``xs``: a list (SOp) or a list of rows of bools
    (selector, ``[query][key]``), as Tracr's ``rasp.evaluate`` (``causal``: as Tracr's
    ``causal_eval.evaluate``, every selector ANDed with j <= i)."""
    ev = Evaluator(xs, causal)
    if isinstance(expr, R.SOp):
        return ev.sop(expr)
    if isinstance(expr, R.Selector):
        n = ev.n
        out = np.zeros((n, n), dtype=bool)
        for rows, block in ev.selector_blocks(expr):
            out[rows] = block
        return out.tolist()
    raise TypeError(f"evaluate needs an SOp or a selector of hardsoft.rasp, got {expr!r}")


def evaluate_all(
    program: R.SOp, xs: Sequence[Any], sops: Sequence[R.SOp], *, causal: bool = False
) -> list[list[Any]]:
    """The values of each of ``sops`` (parts of ``program``) on ``xs``, in one evaluation."""
    ev = Evaluator(xs, causal)
    ev.sop(program)
    return [ev.sop(s) for s in sops]


class RASPEvaluator(abc.ABC):
    """Tracr's base class of RASP evaluators (``tracr.rasp.rasp.RASPEvaluator``)."""

    @abc.abstractmethod
    def evaluate(self, expr: R.RASPExpr, xs: Sequence[Any]) -> Any:
        """The value of ``expr`` on the input ``xs``."""


class DefaultRASPEvaluator(RASPEvaluator):
    """Tracr's evaluator by its name: ``rasp.evaluate`` is ``DefaultRASPEvaluator().evaluate``
    (the vectorised evaluator above, with Tracr's semantics)."""

    causal = False

    def evaluate(self, expr: R.RASPExpr, xs: Sequence[Any]) -> Any:
        return evaluate(expr, xs, causal=self.causal)


R.register_evaluator(evaluate)

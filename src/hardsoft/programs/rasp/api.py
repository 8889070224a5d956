"""RASP as Tracr's users write it (``tracr.rasp.rasp``), by the same names, built by us.

A Tracr program runs after changing its import line to ``from hardsoft import rasp``. The
objects are Tracr's: SOps (``tokens``, ``indices``, ``length``, ``Map``, ``SequenceMap``,
``LinearSequenceMap``, ``Full``, ``ConstantSOp``, ``SelectorWidth``, ``Aggregate``), selectors
(``Select`` with a :class:`Comparison` or a predicate, combined with ``& | ~``), annotations
(``numerical``, ``categorical``, ``.named()``) and :func:`evaluate`.

Two differences, both so that the compiler can see what a program does:

* Python operators on SOps build the same ``Map``/``SequenceMap`` with the same function, and
  attach a description (``.op``: an affine map, a comparison with a constant, a logical
  operation; :mod:`.ops`). ``x < y`` with two SOps is a ``SequenceMap`` comparison (Tracr's
  operator would build a Map whose function returns an SOp).
* Selectors combined with ``& | ~`` keep their predicates as structured objects
  (:class:`CombinedPredicate`, :class:`NegatedPredicate`) where Tracr builds lambdas; they are
  called with the same results.
"""

from __future__ import annotations

import abc
import collections.abc
import copy
import enum
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hardsoft.programs.rasp.ops import (
    Affine,
    Compare,
    Compose,
    ElementOp,
    Logic,
    LogicKind,
    Product,
    Quotient,
    Relation,
)

Value = None | int | float | str | bool | tuple
SelectorValue = list[list[bool]]
NumericValue = int | float
VT = TypeVar("VT")
ExprT = TypeVar("ExprT", bound="RASPExpr")

_NAME_KEY = "name"
_ENCODING_KEY = "encoding"


class Annotator(Protocol):
    def __call__(self, expr: RASPExpr) -> Any:
        """The default annotation of ``expr``."""


DEFAULT_ANNOTATORS: dict[str, Annotator] = {}
"""Default annotations, computed lazily the first time a key is read (as in Tracr)."""


_EVALUATOR: list[Callable[[RASPExpr, Sequence[Any]], Any]] = []


def register_evaluator(evaluate: Callable[[RASPExpr, Sequence[Any]], Any]) -> None:
    """Install the evaluator behind ``expr(xs)``: :mod:`hardsoft.programs.rasp.evaluate` calls
    this when it is imported, and the package imports it before any of its modules can be
    used, so the API (which the evaluator reads) does not import its evaluator."""
    _EVALUATOR[:] = [evaluate]


class _Annotations(collections.abc.Mapping):
    """An expression's annotations: immutable to the user, defaults filled in lazily."""

    def __init__(self, expr: RASPExpr, **kwargs: Any) -> None:
        self._expr = expr
        self._inner: dict[str, Any] = dict(kwargs)

    def __getitem__(self, key: str) -> Any:
        if key not in self._inner:
            if key not in DEFAULT_ANNOTATORS:
                raise KeyError(f"no annotation {key!r}; known: {sorted(self._known())}")
            self._inner[key] = DEFAULT_ANNOTATORS[key](self._expr)
        return self._inner[key]

    def _known(self) -> set[str]:
        return set(self._inner) | set(DEFAULT_ANNOTATORS)

    def __iter__(self) -> Iterator[str]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)


class RASPExpr(abc.ABC):
    """Any RASP expression: an SOp or a selector."""

    _ids = itertools.count(1)

    def __init__(self) -> None:
        self._annotations: Mapping[str, Any] = _Annotations(self)
        self._unique_id = next(RASPExpr._ids)

    def __call__(self, xs: Sequence[Value]) -> Any:
        """Evaluate on ``xs`` (:func:`hardsoft.programs.rasp.evaluate.evaluate`, the evaluator
        :func:`register_evaluator` installed)."""
        (evaluate,) = _EVALUATOR
        return evaluate(self, xs)

    @property
    def annotations(self) -> Mapping[str, Any]:
        return self._annotations

    @annotations.setter
    def annotations(self, annotations: Mapping[str, Any]) -> None:
        self._annotations = _Annotations(self, **annotations)

    @property
    def name(self) -> str:
        return str(self.annotations[_NAME_KEY])

    @property
    @abc.abstractmethod
    def children(self) -> Sequence[RASPExpr]:
        """The expressions this one reads directly."""

    @property
    def unique_id(self) -> int:
        return self._unique_id

    def copy(self: ExprT) -> ExprT:
        """A shallow copy with a new id."""
        new = copy.copy(self)
        new._unique_id = next(RASPExpr._ids)
        return new

    @property
    def label(self) -> str:
        return f"{self.name}_{self.unique_id}"

    def named(self: ExprT, name: str) -> ExprT:
        return annotate(self, name=name)

    def annotated(self: ExprT, **annotations: Any) -> ExprT:
        return annotate(self, **annotations)


def annotate(expr: ExprT, **annotations: Any) -> ExprT:
    """A copy of ``expr`` with ``annotations`` added (replacing those of the same key)."""
    new = expr.copy()
    new.annotations = {**expr.annotations, **annotations}
    return new


# ---- SOps ---------------------------------------------------------------------------------


def _unary(op: ElementOp, f: Callable[[Any], Any], sop: SOp) -> Map:
    return Map(f, sop, op=op)  # simplified as in Tracr: a Map of a Map is one Map


def _binary(op: ElementOp, f: Callable[[Any, Any], Any], x: SOp, y: SOp) -> SequenceMap:
    return SequenceMap(f, x, y, op=op)


class SOp(RASPExpr):
    """A sequence operation: one value per position. Operators build Maps/SequenceMaps with
    Tracr's function and a description (``.op``, :mod:`.ops`)."""

    def __lt__(self, other: Any) -> SOp:
        return self._compare(Relation.LT, other)

    def __le__(self, other: Any) -> SOp:
        return self._compare(Relation.LEQ, other)

    def __eq__(self, other: Any) -> SOp:  # type: ignore[override]
        return self._compare(Relation.EQ, other)

    def __ne__(self, other: Any) -> SOp:  # type: ignore[override]
        return self._compare(Relation.NEQ, other)

    def __gt__(self, other: Any) -> SOp:
        return self._compare(Relation.GT, other)

    def __ge__(self, other: Any) -> SOp:
        return self._compare(Relation.GEQ, other)

    __hash__ = None  # type: ignore[assignment]  # == builds an SOp, as in Tracr

    def _compare(self, rel: Relation, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Compare(rel, binary=True), lambda x, y: rel.holds(x, y), self, other)
        return _unary(Compare(rel, other), lambda x: rel.holds(x, other), self)

    def __add__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Affine((1, 1)), lambda x, y: x + y, self, other)
        return _unary(Affine((1,), other), lambda x: x + other, self)

    def __radd__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Affine((1, 1)), lambda x, y: x + y, other, self)
        return _unary(Affine((1,), other), lambda x: other + x, self)

    def __sub__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Affine((1, -1)), lambda x, y: x - y, self, other)
        return _unary(Affine((1,), -other), lambda x: x - other, self)

    def __rsub__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Affine((1, -1)), lambda x, y: x - y, other, self)
        return _unary(Affine((-1,), other), lambda x: other - x, self)

    def __mul__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Product(), lambda x, y: x * y, self, other)
        return _unary(Affine((other,)), lambda x: x * other, self)

    def __rmul__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Product(), lambda x, y: x * y, other, self)
        return _unary(Affine((other,)), lambda x: other * x, self)

    def __truediv__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Quotient(), lambda x, y: x / y, self, other)
        return _unary(Affine((1,), 0, other), lambda x: x / other, self)

    def __rtruediv__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Quotient(), lambda x, y: x / y, other, self)
        return Map(lambda x: other / x, self)

    def __invert__(self) -> SOp:
        return _unary(Logic(LogicKind.NOT), lambda x: not x, self)

    def __and__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Logic(LogicKind.AND, binary=True), lambda x, y: x and y, self, other)
        return _unary(Logic(LogicKind.AND, other), lambda x: x and other, self)

    def __or__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Logic(LogicKind.OR, binary=True), lambda x, y: x or y, self, other)
        return _unary(Logic(LogicKind.OR, other), lambda x: x or other, self)

    def __rand__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Logic(LogicKind.AND, binary=True), lambda x, y: x and y, other, self)
        return _unary(Logic(LogicKind.AND, other, reverse=True), lambda x: other and x, self)

    def __ror__(self, other: Any) -> SOp:
        if isinstance(other, SOp):
            return _binary(Logic(LogicKind.OR, binary=True), lambda x, y: x or y, other, self)
        # Tracr's __ror__ computes ``x or other`` (not ``other or x``); kept for equal results.
        return _unary(Logic(LogicKind.OR, other), lambda x: x or other, self)


class _Source(SOp):
    """A source SOp: no children, labelled by its fixed name (``SOURCE``)."""

    SOURCE = ""

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []

    @property
    def label(self) -> str:
        return self.SOURCE

    def __repr__(self) -> str:
        return self.SOURCE


class TokensType(_Source):
    """The input tokens."""

    SOURCE = "tokens"


class IndicesType(_Source):
    """The position of each token, from 0."""

    SOURCE = "indices"


class LengthType(_Source):
    """The length of the input, at every position."""

    SOURCE = "length"


tokens = TokensType()
indices = IndicesType()
length = LengthType()


def _check_function(f: Any, what: str) -> None:
    if not callable(f) or isinstance(f, RASPExpr):
        raise TypeError(f"{what} needs a function, got {f!r}")


def _check_sop(x: Any, what: str) -> None:
    if not isinstance(x, SOp):
        raise TypeError(f"{what} needs an SOp, got {x!r}")


class Map(SOp):
    """``f`` applied to each value of ``inner`` (None stays None). With ``simplify`` (the
    default, as in Tracr) a Map of a Map becomes one Map of the composed function. ``op``
    (keyword only, not in Tracr) describes ``f`` for the compiler (:mod:`.ops`)."""

    def __init__(
        self,
        f: Callable[[Any], Any],
        inner: SOp,
        simplify: bool = True,
        *,
        op: ElementOp | None = None,
    ) -> None:
        super().__init__()
        _check_function(f, "Map")
        _check_sop(inner, "Map")
        self.f = f
        self.inner = inner
        self.op: ElementOp | None = op
        if simplify and isinstance(inner, Map):
            inner_f, outer_f = inner.f, f
            self.f = lambda t: outer_f(inner_f(t))
            self.inner = inner.inner
            self.op = Compose(inner.op or inner_f, op or outer_f)

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]


class SequenceMap(SOp):
    """``f`` applied to the values of ``fst`` and ``snd`` at each position (None if either
    is None)."""

    def __init__(
        self,
        f: Callable[[Any, Any], Any],
        fst: SOp,
        snd: SOp,
        *,
        op: ElementOp | None = None,
    ) -> None:
        super().__init__()
        _check_function(f, "SequenceMap")
        _check_sop(fst, "SequenceMap")
        _check_sop(snd, "SequenceMap")
        self.f = f
        self.fst = fst
        self.snd = snd
        self.op: ElementOp | None = op

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class LinearSequenceMap(SequenceMap):
    """``fst_fac · fst + snd_fac · snd``."""

    def __init__(self, fst: SOp, snd: SOp, fst_fac: float, snd_fac: float) -> None:
        super().__init__(
            lambda x, y: fst_fac * x + snd_fac * y, fst, snd, op=Affine((fst_fac, snd_fac))
        )
        self.fst_fac = fst_fac
        self.snd_fac = snd_fac


class Full(SOp):
    """``fill`` at every position."""

    def __init__(self, fill: Value) -> None:
        super().__init__()
        self.fill = fill

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []


def sop_not(sop: SOp) -> SOp:
    return ~sop


class ConstantSOp(SOp):
    """A fixed sequence (for tests; it has no transformer)."""

    def __init__(self, value: Sequence[Any], check_length: bool = True) -> None:
        super().__init__()
        self.value = value
        self.check_length = check_length

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []


# ---- selectors ----------------------------------------------------------------------------


class Predicate(Protocol):
    def __call__(self, key: Any, query: Any) -> bool:
        """Whether ``key`` is selected for ``query``."""


class Comparison(enum.Enum):
    """A predicate ``key OP query`` for :class:`Select` (Tracr's names and semantics)."""

    EQ = "=="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    NEQ = "!="
    TRUE = "True"
    FALSE = "False"

    def __call__(self, key: Any, query: Any) -> bool:
        if key is None:
            raise ValueError("key is None!")
        if query is None:
            raise ValueError("query is None!")
        if self is Comparison.TRUE:
            return True
        if self is Comparison.FALSE:
            return False
        return Relation(self.value).holds(key, query)

    @property
    def relation(self) -> Relation | None:
        """The relation ``key OP query`` (None for TRUE and FALSE)."""
        if self in (Comparison.TRUE, Comparison.FALSE):
            return None
        return Relation(self.value)


class Combine(str, enum.Enum):
    AND = "and"
    OR = "or"


@dataclass(frozen=True)
class CombinedPredicate:
    """``fst(k, q) and/or snd(k, q)``: a combined Select's predicate (Tracr's lambda)."""

    fst: Predicate
    snd: Predicate
    how: Combine

    def __call__(self, key: Any, query: Any) -> bool:
        a, b = self.fst(key, query), self.snd(key, query)
        return (a and b) if self.how is Combine.AND else (a or b)


@dataclass(frozen=True)
class NegatedPredicate:
    """``not inner(k, q)``."""

    inner: Predicate

    def __call__(self, key: Any, query: Any) -> bool:
        return not self.inner(key, query)


@dataclass(frozen=True)
class FixedKey:
    """``inner(fill, q)``: a Select over ``Full(fill)`` keys merged into another Select."""

    inner: Predicate
    fill: Any

    def __call__(self, key: Any, query: Any) -> bool:
        return self.inner(self.fill, query)


@dataclass(frozen=True)
class FixedQuery:
    """``inner(k, fill)``: a Select over ``Full(fill)`` queries merged into another Select."""

    inner: Predicate
    fill: Any

    def __call__(self, key: Any, query: Any) -> bool:
        return self.inner(key, self.fill)


class Selector(RASPExpr):
    """Which keys each query attends to; ``& | ~`` combine selectors."""

    def __and__(self, other: Selector) -> Selector:
        return selector_and(self, other)

    def __rand__(self, other: Selector) -> Selector:
        return selector_and(other, self)

    def __or__(self, other: Selector) -> Selector:
        return selector_or(self, other)

    def __ror__(self, other: Selector) -> Selector:
        return selector_or(other, self)

    def __invert__(self) -> Selector:
        return selector_not(self)


class Select(Selector):
    """Query position i selects key position j iff ``predicate(keys[j], queries[i])``."""

    def __init__(self, keys: SOp, queries: SOp, predicate: Predicate) -> None:
        super().__init__()
        _check_sop(keys, "Select keys")
        _check_sop(queries, "Select queries")
        if not callable(predicate):
            raise TypeError(f"Select needs a Comparison or a predicate, got {predicate!r}")
        self.keys = keys
        self.queries = queries
        self.predicate = predicate

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.keys, self.queries]


class ConstantSelector(Selector):
    """A fixed selection matrix (for tests; it has no transformer)."""

    def __init__(self, value: SelectorValue, check_length: bool = True) -> None:
        super().__init__()
        self.value = value
        self.check_length = check_length

    @property
    def children(self) -> Sequence[RASPExpr]:
        return []


class SelectorWidth(SOp):
    """How many keys each query selects."""

    def __init__(self, selector: Selector) -> None:
        super().__init__()
        if not isinstance(selector, Selector):
            raise TypeError(f"SelectorWidth needs a selector, got {selector!r}")
        self.selector = selector

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector]


class SelectorAnd(Selector):
    def __init__(self, fst: Selector, snd: Selector) -> None:
        super().__init__()
        self.fst, self.snd = fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class SelectorOr(Selector):
    def __init__(self, fst: Selector, snd: Selector) -> None:
        super().__init__()
        self.fst, self.snd = fst, snd

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.fst, self.snd]


class SelectorNot(Selector):
    def __init__(self, inner: Selector) -> None:
        super().__init__()
        self.inner = inner

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.inner]


def selector_not(inner: Selector, simplify: bool = True) -> Selector:
    """``~inner``: a Select with the negated predicate where possible (as in Tracr)."""
    if simplify and isinstance(inner, Select):
        return Select(inner.keys, inner.queries, NegatedPredicate(inner.predicate))
    return SelectorNot(inner)


def selector_and(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merge(fst, snd, Combine.AND)
        if merged is not None:
            return merged
    return SelectorAnd(fst, snd)


def selector_or(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merge(fst, snd, Combine.OR)
        if merged is not None:
            return merged
    return SelectorOr(fst, snd)


def _merge(fst: Select, snd: Select, how: Combine) -> Select | None:
    """Two Selects over the same keys and queries (or ``Full`` ones) as one Select with a
    combined predicate: Tracr's ``_attempt_simplify``, with structured predicates."""
    p1: Predicate = fst.predicate
    p2: Predicate = snd.predicate
    keys: SOp | None = None
    queries: SOp | None = None
    if isinstance(fst.keys, Full):
        keys, p1 = snd.keys, FixedKey(p1, fst.keys.fill)
    if isinstance(snd.keys, Full):
        keys, p2 = fst.keys, FixedKey(p2, snd.keys.fill)
    if isinstance(fst.queries, Full):
        queries, p1 = snd.queries, FixedQuery(p1, fst.queries.fill)
    if isinstance(snd.queries, Full):
        queries, p2 = fst.queries, FixedQuery(p2, snd.queries.fill)
    if fst.keys is snd.keys:
        keys = fst.keys
    if fst.queries is snd.queries:
        queries = fst.queries
    if keys is None or queries is None:
        return None
    return Select(keys, queries, CombinedPredicate(p1, p2, how))


class Aggregate(SOp):
    """The mean of ``sop`` over the selected keys (``default`` where none is selected); a
    categorical Aggregate must select at most one value."""

    def __init__(self, selector: Selector, sop: SOp, default: Any = None) -> None:
        super().__init__()
        if not isinstance(selector, Selector):
            raise TypeError(f"Aggregate needs a selector, got {selector!r}")
        _check_sop(sop, "Aggregate")
        if default is not None and not isinstance(default, (str, float, bool, int)):
            raise TypeError(
                f"Aggregate's default must be None, str, float, bool or int, got {default!r}"
            )
        self.selector = selector
        self.sop = sop
        self.default = default

    @property
    def children(self) -> Sequence[RASPExpr]:
        return [self.selector, self.sop]


# ---- encodings and names ------------------------------------------------------------------


class Encoding(enum.Enum):
    """How an SOp is carried: one coordinate per value (categorical) or one number."""

    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


SOpT = TypeVar("SOpT", bound=SOp)


def numerical(sop: SOpT) -> SOpT:
    return annotate(sop, encoding=Encoding.NUMERICAL)


def categorical(sop: SOpT) -> SOpT:
    return annotate(sop, encoding=Encoding.CATEGORICAL)


def get_encoding(sop: SOp) -> Encoding:
    encoding: Encoding = sop.annotations[_ENCODING_KEY]
    return encoding


def is_numerical(sop: SOp) -> bool:
    return get_encoding(sop) == Encoding.NUMERICAL


def is_categorical(sop: SOp) -> bool:
    return get_encoding(sop) == Encoding.CATEGORICAL


def default_encoding(expr: RASPExpr) -> Encoding:
    if not isinstance(expr, SOp):
        raise TypeError(f"{expr!r} is not an SOp and has no encoding")
    return Encoding.CATEGORICAL


_DEFAULT_NAMES: tuple[tuple[type, str], ...] = (
    (TokensType, "tokens"),
    (IndicesType, "indices"),
    (LengthType, "length"),
    (LinearSequenceMap, "linear_sequence_map"),
    (SequenceMap, "sequence_map"),
    (Map, "map"),
    (Full, "full"),
    (ConstantSOp, "constant_sop"),
    (SelectorWidth, "selector_width"),
    (Aggregate, "aggregate"),
    (SOp, "sop"),
    (Select, "select"),
    (SelectorAnd, "selector_and"),
    (SelectorOr, "selector_or"),
    (SelectorNot, "selector_not"),
    (ConstantSelector, "constant_selector"),
    (Selector, "selector"),
)


def default_name(expr: RASPExpr) -> str:
    for cls, name in _DEFAULT_NAMES:
        if isinstance(expr, cls):
            return name
    raise NotImplementedError(f"{expr!r} has no default name")


DEFAULT_ANNOTATORS[_ENCODING_KEY] = default_encoding
DEFAULT_ANNOTATORS[_NAME_KEY] = default_name

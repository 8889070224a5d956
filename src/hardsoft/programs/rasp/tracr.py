"""``from_tracr(sop)``: a program built with Tracr's own ``tracr.rasp`` as ``hardsoft.rasp``
objects (Tracr is not a dependency: this works where it is installed).

Tracr's operators (``x + 1``, ``x < 3``, ``~x``, ``a & b``, ...) build Maps of lambdas defined
in ``tracr/rasp/rasp.py``; each is recognised by its code object (exactly that operator's
lambda, never by what it returns on samples) and given the same description our operators
attach (:mod:`.ops`), with the constant read from its closure. Any other function is kept as
it is: the program computes the same thing, and the compiler treats it as a Python function.
"""

from __future__ import annotations

from types import CodeType, FunctionType
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.programs.rasp import api as R
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


def _tracr() -> Any:
    try:
        from tracr.rasp import rasp as T  # type: ignore[import-not-found]
    except ImportError:
        raise HardsoftError(
            "from_tracr needs Tracr (pip install git+https://github.com/google-deepmind/tracr)"
        ) from None
    return T


def _lambdas(fn: Any) -> list[CodeType]:
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    return [c for c in code.co_consts if isinstance(c, CodeType) and c.co_name == "<lambda>"]


def _operator_table(T: Any) -> dict[CodeType, tuple[str, int]]:
    """Code object of each lambda in Tracr's SOp operators -> (operator, arity)."""
    table: dict[CodeType, tuple[str, int]] = {}
    for op in (
        "__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__", "__add__", "__radd__",
        "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
        "__invert__", "__and__", "__or__", "__rand__", "__ror__",
    ):  # fmt: skip
        for code in _lambdas(getattr(T.SOp, op)):
            table[code] = (op, code.co_argcount)
    for code in _lambdas(T.sop_not):
        table[code] = ("__invert__", 1)
    return table


def _closure(f: FunctionType, name: str) -> Any:
    names = f.__code__.co_freevars
    return f.__closure__[names.index(name)].cell_contents if f.__closure__ else None


_RELATIONS = {
    "__lt__": Relation.LT,
    "__le__": Relation.LEQ,
    "__eq__": Relation.EQ,
    "__ne__": Relation.NEQ,
    "__gt__": Relation.GT,
    "__ge__": Relation.GEQ,
}


def _describe(f: Any, table: dict[CodeType, tuple[str, int]], T: Any) -> ElementOp | None:
    """The description of one of Tracr's operator lambdas (None: an ordinary function)."""
    if not isinstance(f, FunctionType):
        return None
    found = table.get(f.__code__)
    if found is None:
        if set(f.__code__.co_freevars) == {"f", "inner_f"}:  # Map simplification
            inner, outer = _closure(f, "inner_f"), _closure(f, "f")
            return Compose(_describe(inner, table, T) or inner, _describe(outer, table, T) or outer)
        return None
    op, arity = found
    if arity == 2:
        return {
            "__add__": Affine((1, 1)),
            "__radd__": Affine((1, 1)),
            "__sub__": Affine((1, -1)),
            "__rsub__": Affine((1, -1)),
            "__mul__": Product(),
            "__rmul__": Product(),
            "__truediv__": Quotient(),
            "__rtruediv__": Quotient(),
            "__and__": Logic(LogicKind.AND, binary=True),
            "__rand__": Logic(LogicKind.AND, binary=True),
            "__or__": Logic(LogicKind.OR, binary=True),
            "__ror__": Logic(LogicKind.OR, binary=True),
        }.get(op)
    if op == "__invert__":
        return Logic(LogicKind.NOT)
    other = _closure(f, "other")
    if isinstance(other, T.SOp):
        return None
    if op in _RELATIONS:
        return Compare(_RELATIONS[op], other)
    return {
        "__add__": lambda: Affine((1,), other),
        "__radd__": lambda: Affine((1,), other),
        "__sub__": lambda: Affine((1,), -other),
        "__rsub__": lambda: Affine((-1,), other),
        "__mul__": lambda: Affine((other,)),
        "__rmul__": lambda: Affine((other,)),
        "__truediv__": lambda: Affine((1,), 0, other),
        "__and__": lambda: Logic(LogicKind.AND, other),
        "__rand__": lambda: Logic(LogicKind.AND, other, reverse=True),
        "__or__": lambda: Logic(LogicKind.OR, other),
        "__ror__": lambda: Logic(LogicKind.OR, other),
    }.get(op, lambda: None)()


class _Converter:
    def __init__(self) -> None:
        self.T = _tracr()
        self.table = _operator_table(self.T)
        self.memo: dict[int, R.RASPExpr] = {}

    def expr(self, e: Any) -> Any:
        uid = id(e)
        if uid not in self.memo:
            self.memo[uid] = self._annotate(e, self._convert(e))
        return self.memo[uid]

    def _annotate(self, e: Any, out: R.RASPExpr) -> R.RASPExpr:
        ann = dict(e.annotations)
        keep: dict[str, Any] = {}
        if "name" in ann:
            keep["name"] = ann["name"]
        if "encoding" in ann and isinstance(out, R.SOp):
            keep["encoding"] = R.Encoding(ann["encoding"].value)
        if not keep or isinstance(out, (R.TokensType, R.IndicesType, R.LengthType)):
            return out
        return R.annotate(out, **keep)

    def _convert(self, e: Any) -> R.RASPExpr:
        T = self.T
        if isinstance(e, T.TokensType):
            return R.tokens
        if isinstance(e, T.IndicesType):
            return R.indices
        if isinstance(e, T.LengthType):
            return R.length
        if isinstance(e, T.LinearSequenceMap):
            return R.LinearSequenceMap(self.expr(e.fst), self.expr(e.snd), e.fst_fac, e.snd_fac)
        if isinstance(e, T.SequenceMap):
            op = _describe(e.f, self.table, T)
            return R.SequenceMap(e.f, self.expr(e.fst), self.expr(e.snd), op=op)
        if isinstance(e, T.Map):
            op = _describe(e.f, self.table, T)
            return R.Map(e.f, self.expr(e.inner), simplify=False, op=op)
        if isinstance(e, T.Full):
            return R.Full(e.fill)
        if isinstance(e, T.ConstantSOp):
            return R.ConstantSOp(e.value, e.check_length)
        if isinstance(e, T.SelectorWidth):
            return R.SelectorWidth(self.expr(e.selector))
        if isinstance(e, T.Aggregate):
            return R.Aggregate(self.expr(e.selector), self.expr(e.sop), default=e.default)
        if isinstance(e, T.Select):
            return R.Select(self.expr(e.keys), self.expr(e.queries), self._predicate(e.predicate))
        if isinstance(e, T.SelectorAnd):
            return R.SelectorAnd(self.expr(e.fst), self.expr(e.snd))
        if isinstance(e, T.SelectorOr):
            return R.SelectorOr(self.expr(e.fst), self.expr(e.snd))
        if isinstance(e, T.SelectorNot):
            return R.SelectorNot(self.expr(e.inner))
        if isinstance(e, T.ConstantSelector):
            return R.ConstantSelector(e.value, e.check_length)
        raise HardsoftError(f"from_tracr: {type(e).__name__} is not a Tracr RASP expression")

    def _predicate(self, p: Any) -> Any:
        if isinstance(p, self.T.Comparison):
            return R.Comparison[p.name]
        return p


def from_tracr(sop: Any) -> R.SOp:
    """The hardsoft.rasp program of a Tracr SOp (same functions, same names and encodings)."""
    conv = _Converter()
    if not isinstance(sop, conv.T.SOp):
        raise HardsoftError(f"from_tracr needs a tracr.rasp SOp, got {sop!r}")
    out = conv.expr(sop)
    assert isinstance(out, R.SOp)
    return out

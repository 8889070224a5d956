"""RASP → an average-hard attention program (:mod:`hardsoft.programs.dsl`), exact at every
length wherever every operation has an exact gadget.

Each SOp is carried as its domain (:mod:`.domains`) says:

* finite values: a **one-hot**, one exact 0/1 coordinate per value (None: all 0); a Map of a
  one-hot is a linear form of it (a table costs nothing), a SequenceMap of two is one ReLU
  per pair of values (one feed-forward layer);
* ``indices``, ``length`` and counts: **one integer coordinate** from the position features
  ``i`` and ``n``, never one-hot; affine maps and comparisons with constants are exact
  (linear forms and ReLU steps on integers);
* means (numerical Aggregates): one coordinate; where a mean is compared with a constant, its
  numerator (a sum of counts) is recovered as exact integers and compared instead.

Selectors (:mod:`.selectors`): an order selector (``indices`` vs ``indices``) is an attention
mask — a numerical Aggregate over it is a uniform head, its SelectorWidth the mask's size
(``n``, ``i``, ...); a finite table is a bilinear score on one-hots — a categorical Aggregate
reads the rightmost selected position (tieless: 0/1 scores plus the tie-break j/(2n)), a
SelectorWidth is a uniform head over the table's columns gated by the query's value (count/n,
or the exact integer by a table lookup); ``Select(indices, q, ==)`` is a table lookup of
position q (score 2tj − j², gap 1).

Where no gadget is exact at every length (a Python function of an unbounded SOp, a
categorical output of an unbounded SOp, ...), the lowering raises :class:`Unsupported` — or,
with ``max_len``, lists the SOp's values at n <= max_len, builds the table, and records the
reason (:attr:`Lowering.bounded`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs import dsl
from hardsoft.programs.dsl import Linear, Position, Token
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp import gadgets as G
from hardsoft.programs.rasp.domains import (
    Bound,
    Domain,
    Finite,
    Ints,
    Reals,
    affine_bounds,
    distinct,
    ints_of_finite,
    is_number,
    key,
)
from hardsoft.programs.rasp.graph import statements, topological
from hardsoft.programs.rasp.ops import (
    Affine,
    Compare,
    Compose,
    ElementOp,
    Logic,
    LogicKind,
    Product,
    Relation,
)
from hardsoft.programs.rasp.selectors import (
    MASK_REGIONS,
    REGIONS,
    Lookup,
    SelectorAnalysis,
    TableForm,
    Unsupported,
    mask_of,
)

Onehot = G.Onehot

_DENOM = {
    "none": lambda: Position("n").lin(),
    "future": lambda: Position("i").lin(),
    "strict-future": lambda: Position("i") - 1.0,
    "past": lambda: Position("n") - Position("i") + 1.0,
    "strict-past": lambda: Position("n") - Position("i"),
}
"""How many positions each mask allows at position i (1-based), as a linear form."""

_EMPTY = {"strict-future": "[i=1]", "strict-past": "[i=n]"}
"""Where a strict mask allows no position: a 0/1 position feature."""

_DEFAULT_NAME = re.compile(r"^(map|sequence_map|linear_sequence_map)(_\d+)?(\.\d+)*$")
_INDEX = Bound(0, 0), Bound(1, -1)
_COUNT = Bound(0, 0), Bound(1, 0)


@dataclass
class Scaled:
    """A count carried as ``count / D`` (D = n or i): exact where no tieless head precedes
    it, and cheaper than the integer (no lookup head)."""

    form: Linear
    unit: str  # "n" or "i"


@dataclass
class Low:
    """One SOp (or an intermediate of a composed Map), lowered: its domain and whichever
    representations exist so far. The views of :class:`Lowering` fill the others on demand."""

    name: str
    domain: Domain
    onehot: Onehot | None = None
    number: Linear | None = None
    none: Linear | None = None
    scaled: Scaled | None = None
    recover: Callable[[], Linear] | None = None  # builds the exact integer (a count)
    ratio: Ratio | None = None
    values_at: Callable[[int], tuple[Any, ...]] | None = None  # its values at n <= N
    formula: str | None = None  # how it is computed, where that is a formula (an affine map)

    def describe(self, extra: str = "") -> str:
        """The SOp and its values, for reasons: ``keys = digit + 0.1*indices (real numbers)``."""
        what = f"{self.name} = {self.formula}" if self.formula else self.name
        return f"{what} ({self.domain.describe()}{extra})"

    @property
    def term(self) -> str:
        """How it appears inside another formula: its name, or its formula if it has only a
        default name (``map``, ``sequence_map_2``)."""
        if self.formula and _DEFAULT_NAME.match(self.name):
            return f"({self.formula})" if " " in self.formula else self.formula
        return self.name


def enumerate_values(x: Low, max_len: int) -> tuple[Any, ...] | None:
    """Every value ``x`` takes at some n <= max_len, if that is known (None otherwise)."""
    d = x.domain
    if isinstance(d, Finite):
        return d.values
    if x.values_at is not None:
        return x.values_at(max_len)
    if isinstance(d, Ints):
        return tuple(d.values_up_to(max_len))
    return None


@dataclass
class Ratio:
    """A mean as ``(Σ coef · #{j in mask : x_j = v} + const · D) / D`` with D the number of
    positions the mask allows and ``default`` where it allows none: the exact integer
    numerator behind a comparison of the mean."""

    mask: str
    terms: dict[tuple[int, int], Fraction]  # (id of the Low of x, value code) -> coefficient
    sources: dict[int, Low]
    const: Fraction
    default: Any

    def affine(self, a: Fraction, b: Fraction) -> Ratio:
        terms = {k: a * c for k, c in self.terms.items() if a * c != 0}
        default = None if self.default is None else a * Fraction(self.default) + b
        return Ratio(self.mask, terms, self.sources, a * self.const + b, default)

    def plus(self, other: Ratio) -> Ratio | None:
        if other.mask != self.mask:
            return None
        terms = dict(self.terms)
        for k, c in other.terms.items():
            terms[k] = terms.get(k, Fraction(0)) + c
        default = None
        if self.default is not None and other.default is not None:
            default = Fraction(self.default) + Fraction(other.default)
        return Ratio(
            self.mask,
            {k: c for k, c in terms.items() if c},
            {**self.sources, **other.sources},
            self.const + other.const,
            default,
        )


@dataclass
class Note:
    statement: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"statement": self.statement, "text": self.text}


class Lowering:
    """The lowering of one program (see the module docstring)."""

    def __init__(
        self,
        program: R.SOp,
        vocab: tuple[Any, ...],
        symbols: tuple[str, ...],
        max_len: int | None = None,
    ) -> None:
        self.program = program
        self.vocab = vocab
        self.symbols = symbols
        self.max_len = max_len
        self.lows: dict[int, Low] = {}
        self.bounded: list[Note] = []
        self.domain_notes: list[Note] = []
        self.gadgets: list[Note] = []
        self.tied: list[str] = []
        self._names: dict[int, str] = {}
        self._views: dict[int, tuple[Finite, Onehot]] = {}
        self._counts: dict[tuple[Any, ...], tuple[Linear, Linear]] = {}
        for name, sop in statements(program):
            self._names[sop.unique_id] = name
        for k, expr in enumerate(topological(program)):
            self._names.setdefault(expr.unique_id, f"{expr.name}#{k}")
        self.selectors = SelectorAnalysis(
            lambda s: self.low(s).domain,
            lambda s, user: self.finite(self.low(s), user),
            self.name,
        )

    # ---- bookkeeping ---------------------------------------------------------------------

    def name(self, expr: R.RASPExpr) -> str:
        return self._names.get(expr.unique_id, expr.label)

    def gadget(self, who: str, text: str) -> None:
        self.gadgets.append(Note(who, text))

    def unsupported(self, who: R.RASPExpr | str, reason: str) -> Unsupported:
        where = who if isinstance(who, str) else f"{type(who).__name__} {self.name(who)}"
        return Unsupported(where, reason)

    def who(self, sop: R.RASPExpr) -> str:
        return f"{type(sop).__name__} {self.name(sop)}"

    # ---- views ---------------------------------------------------------------------------

    def low(self, sop: R.SOp) -> Low:
        found = self.lows.get(sop.unique_id)
        if found is None:
            found = self._lower(sop)
            self.lows[sop.unique_id] = found
        return found

    def finite(self, x: Low, user: str) -> Finite:
        """The values as a finite set: the SOp's own, or (bounded compile) its values at
        n <= max_len, recording ``user`` as the operation that needed them."""
        if isinstance(x.domain, Finite):
            return x.domain
        return self._view(x, user)[0]

    def onehot(self, x: Low, user: str) -> Onehot:
        if isinstance(x.domain, Finite):
            if x.onehot is None:
                x.onehot = self._hats(x, x.domain)
            return x.onehot
        return self._view(x, user)[1]

    def number(self, x: Low) -> Linear:
        if x.number is None and x.recover is not None:
            x.number = x.recover()
        if x.number is None:
            d = x.domain
            if not isinstance(d, Finite) or not d.numeric:
                raise Unsupported(x.name, f"its values {d.describe()} are not numbers")
            assert x.onehot is not None
            x.number = G.lin_sum([x.onehot[c] * float(v) for c, v in enumerate(d.values) if v])
        return x.number

    def integer(self, x: Low, user: str) -> Linear:
        """The exact integer value (a count is recovered from count/D by a table lookup)."""
        d = x.domain
        if isinstance(d, Ints) or (isinstance(d, Finite) and ints_of_finite(d) is not None):
            return self.number(x)
        raise Unsupported(user, f"needs {x.name} as an integer, but its values are {d.describe()}")

    def none(self, x: Low) -> Linear | None:
        """The exact 0/1 flag "the value is None" (None if it never is)."""
        if not x.domain.nullable:
            return None
        if x.none is None:
            assert x.onehot is not None, f"{x.name} can be None but has no flag"
            x.none = 1.0 - G.lin_sum(list(x.onehot.values()))
        return x.none

    def _hats(self, x: Low, d: Finite) -> Onehot:
        """A one-hot from a number taking finitely many values: ``[x = v]`` by ReLU hats."""
        if x.number is None or not d.numeric:
            raise HardsoftError(f"internal: {x.name} has neither a one-hot nor a number")
        spacing = d.spacing()
        none = self.none(x) if x.none is not None else None
        return {
            c: G.not_none(G.hat(x.number, float(v), spacing, label=f"{x.name}={v}"), none)
            for c, v in enumerate(d.values)
        }

    def _view(self, x: Low, user: str) -> tuple[Finite, Onehot]:
        """An unbounded SOp's values at n <= max_len as a one-hot (a bounded compile): the
        integers in its range, or the values of an affine map of such."""
        d = x.domain
        listable = isinstance(d, Ints) or x.values_at is not None
        if not listable:
            raise Unsupported(
                user,
                f"needs the values of {x.name} as a finite table, but they are "
                f"{d.describe()}: no table of them exists at any length",
            )
        if self.max_len is None:
            raise Unsupported(
                user,
                f"needs the values of {x.name} as a finite table, but they are "
                f"{d.describe()}, which grow with the length n",
                boundable=True,
            )
        found = self._views.get(id(x))
        if found is None:
            values = enumerate_values(x, self.max_len)
            assert values is not None
            fin = Finite(distinct(values), d.nullable)
            spacing = fin.spacing()
            v = self.number(x)
            oh = {
                c: G.not_none(G.hat(v, float(val), spacing, label=f"{x.name}={val}"), x.none)
                for c, val in enumerate(fin.values)
            }
            found = self._views[id(x)] = (fin, oh)
        depends = (
            ", which depend on the position"
            if isinstance(d, Reals) or "indices" in (x.formula or "")
            else ""
        )
        text = (
            f"reads {x.describe(depends)} as a table of its {len(found[0].values)} values at "
            f"n <= {self.max_len}"
        )
        if all(b.statement != user or b.text != text for b in self.bounded):
            self.bounded.append(Note(user, text))
        return found

    # ---- dispatch ------------------------------------------------------------------------

    def _lower(self, sop: R.SOp) -> Low:
        name = self.name(sop)
        if isinstance(sop, R.TokensType):
            onehot = {c: Token(s).lin() for c, s in enumerate(self.symbols)}
            return Low(name, Finite(self.vocab), onehot=onehot)
        if isinstance(sop, R.IndicesType):
            return Low(name, Ints(*_INDEX), number=Position("i") - 1.0)
        if isinstance(sop, R.LengthType):
            return Low(name, Ints(Bound(1, 0), Bound(1, 0)), number=Position("n").lin())
        if isinstance(sop, R.Full):
            values = distinct([sop.fill])
            low = Low(
                name, Finite(values, sop.fill is None), onehot={0: G.const(1.0)} if values else {}
            )
            if values and is_number(sop.fill):
                low.number = G.const(float(sop.fill))  # type: ignore[arg-type]
            return low
        if isinstance(sop, R.ConstantSOp):
            raise self.unsupported(
                sop, "a ConstantSOp is a fixed sequence for tests, not a program"
            )
        if isinstance(sop, R.Map):
            return self._map(sop)
        if isinstance(sop, R.SequenceMap):
            return self._sequence_map(sop)
        if isinstance(sop, R.SelectorWidth):
            return self._width(sop)
        if isinstance(sop, R.Aggregate):
            return self._mean(sop) if R.is_numerical(sop) else self._pick(sop)
        raise self.unsupported(sop, "not an SOp of hardsoft.rasp")

    # ---- Map and SequenceMap -------------------------------------------------------------

    def _call(self, who: str, f: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """``f(*args)``: (True, value), or (False, None) for an arithmetic error (undefined
        there, as Tracr's value inference has it). Other exceptions are the program's error."""
        try:
            return True, f(*args)
        except ArithmeticError:
            return False, None
        except Exception as exc:  # the user's function
            shown = ", ".join(repr(a) for a in args)
            raise HardsoftError(
                f"{who} raised {type(exc).__name__}: {exc} on {shown} (a value its input can take)"
            ) from None

    def _table(self, who: str, name: str, f: Callable[..., Any], xs: list[Low]) -> Low:
        """A function of finite SOps as a table over their values: a linear form of one
        one-hot, or one ReLU per pair of values of two."""
        doms = [self.finite(x, who) for x in xs]
        ohs = [self.onehot(x, who) for x in xs]
        combos: dict[Any, list[tuple[int, ...]]] = {}
        reps: dict[Any, Any] = {}
        for codes in np.ndindex(*[len(d.values) for d in doms]):
            ok, out = self._call(who, f, *(d.values[c] for d, c in zip(doms, codes)))
            if not ok or out is None:
                continue
            try:
                distinct([out])
            except ValueError as exc:
                raise HardsoftError(f"{who}: {exc}") from None
            k = key(out)
            reps.setdefault(k, out)
            combos.setdefault(k, []).append(tuple(int(c) for c in codes))
        values = tuple(reps.values())
        total = int(np.prod([len(d.values) for d in doms]))
        covered = sum(len(v) for v in combos.values())
        nullable = any(d.nullable for d in doms) or covered < total
        onehot: Onehot = {}
        for c, cs in enumerate(combos.values()):
            if len(xs) == 1:
                onehot[c] = G.lin_sum([ohs[0][combo[0]] for combo in cs])
            else:
                pieces = [
                    (1.0, G.lin_sum([oh[k] for oh, k in zip(ohs, combo)]) - (len(ohs) - 1.0))
                    for combo in cs
                ]
                onehot[c] = dsl.pwl(pieces, label=f"{name}={values[c]}").lin()
        how = (
            "a linear form of the input's one-hot"
            if len(xs) == 1
            else f"one ReLU per pair of values ({total} pairs, one feed-forward layer)"
        )
        self.gadget(name, f"table over {total} value(s): {how}")
        return Low(name, Finite(values, nullable), onehot=onehot)

    def _map(self, sop: R.Map) -> Low:
        who, name = self.who(sop), self.name(sop)
        x = self.low(sop.inner)
        if isinstance(x.domain, Finite) and (x.onehot is not None or sop.op is None):
            return self._table(who, name, sop.f, [x])
        if sop.op is not None:
            try:
                return self._op1(who, name, sop.op, x)
            except Unsupported:
                if self.max_len is None and not isinstance(x.domain, Finite):
                    raise
        if isinstance(x.domain, Finite):
            return self._table(who, name, sop.f, [x])
        if self.max_len is None:
            raise Unsupported(
                who,
                f"applies a Python function to {x.name}, whose values are "
                f"{x.domain.describe()} and grow with the length n; a function is a table "
                "only over finitely many values",
                boundable=isinstance(x.domain, Ints),
            )
        return self._table(who, name, sop.f, [x])

    def _op1(self, who: str, name: str, op: ElementOp | Callable[..., Any], x: Low) -> Low:
        """A described function of one number-valued SOp, without a table."""
        if isinstance(op, Compose):
            steps = op.steps()
            cur = x
            for k, step in enumerate(steps):
                if k and isinstance(cur.domain, Finite):
                    return self._table(who, name, _chain(steps[k:]), [cur])
                if not isinstance(step, ElementOp):
                    raise Unsupported(
                        who,
                        f"applies a Python function to {cur.name} ({cur.domain.describe()}), "
                        "whose values grow with the length n",
                        boundable=isinstance(cur.domain, Ints),
                    )
                cur = self._op1(who, f"{name}.{k}" if k < len(steps) - 1 else name, step, cur)
            return cur
        if isinstance(op, Affine):
            return self._affine(who, name, op, [x])
        if isinstance(op, Compare):
            return self._compare(who, name, x, op.relation, op.const)
        if isinstance(op, Logic) and op.kind is LogicKind.NOT:
            return self._compare(who, name, x, Relation.EQ, 0)
        raise Unsupported(
            who,
            f"{op.describe(x.name) if isinstance(op, ElementOp) else 'a Python function'} "
            f"has no exact gadget on {x.domain.describe()}",
            boundable=isinstance(x.domain, Ints),
        )

    def _affine(self, who: str, name: str, op: Affine, xs: list[Low]) -> Low:
        """``Σ a_k x_k + c``: a linear form (no layer)."""
        coefs, const = op.real()
        number = G.const(const)
        for c, x in zip(coefs, xs):
            number = number + self.number(x) * c
        nullable = any(x.domain.nullable for x in xs)
        as_ints = [
            x.domain
            if isinstance(x.domain, Ints)
            else ints_of_finite(x.domain)
            if isinstance(x.domain, Finite)
            else None
            for x in xs
        ]
        dom: Domain
        if all(isinstance(x.domain, Finite) for x in xs):
            doms = [x.domain for x in xs]
            values = distinct(op(*combo) for combo in itertools.product(*(d.values for d in doms)))  # type: ignore[union-attr]
            dom = Finite(values, nullable)
        elif op.integral and all(d is not None for d in as_ints):
            lo, hi = affine_bounds(list(zip(op.coefs, as_ints)), op.const)  # type: ignore[arg-type]
            dom = Ints(lo, hi, nullable)
        else:
            lo_f: float | None = const
            hi_f: float | None = const
            for c, x in zip(coefs, xs):
                a, b = _interval(x.domain)
                if a is None or b is None or lo_f is None or hi_f is None:
                    lo_f = hi_f = None
                    continue
                lo_f, hi_f = lo_f + min(c * a, c * b), hi_f + max(c * a, c * b)
            dom = Reals(lo_f, hi_f, nullable)
        low = Low(name, dom, number=number, none=self._none_of(xs, name))
        low.formula = op.describe(*(x.term for x in xs))
        if not isinstance(dom, Finite):
            low.values_at = _affine_values(op, xs)
        ratios = [x.ratio for x in xs]
        if all(r is not None for r in ratios):
            parts = [r.affine(Fraction(c), Fraction(0)) for r, c in zip(ratios, coefs)]  # type: ignore[union-attr]
            total: Ratio | None = parts[0]
            for p in parts[1:]:
                total = total.plus(p) if total is not None else None
            if total is not None:
                low.ratio = total.affine(Fraction(1), Fraction(const))
        self.gadget(name, f"affine map {op.describe(*(x.name for x in xs))}: a linear form")
        return low

    def _none_of(self, xs: list[Low], name: str) -> Linear | None:
        flags = [f for f in (self.none(x) for x in xs) if f is not None]
        if not flags:
            return None
        if len(flags) == 1:
            return flags[0]
        return dsl.or_(*flags, label=f"{name}.none")

    def _compare(self, who: str, name: str, x: Low, rel: Relation, c: Any) -> Low:
        """``x REL c`` for a number and a constant: exact on integers, on numbers taking
        finitely many values, and on means (through their integer numerators)."""
        if not is_number(c):
            raise Unsupported(who, f"compares {x.name} with {c!r}, which is not a number")
        d = x.domain
        if isinstance(d, Ints) or (isinstance(d, Finite) and ints_of_finite(d) is not None):
            truth = _int_compare(self.integer(x, who), rel, c, name)
            how = "ReLU steps on the integer"
        elif x.ratio is not None:
            truth = self._ratio_compare(who, name, x.ratio, rel, c)
            how = "ReLU steps on the mean's numerator, exact integer counts"
        elif isinstance(d, Finite) and d.numeric:
            truth = _finite_compare(self.number(x), d, rel, c, name)
            how = "a ReLU ramp between neighbouring values"
        else:
            raise Unsupported(
                who,
                f"compares {x.name} ({d.describe()}) with {c!r}: its values have no fixed grid, "
                "so no fixed ReLU step separates them",
            )
        none = self.none(x)
        yes = G.not_none(truth, none, label=f"{name}.true")
        no = G.not_none(1.0 - truth, none, label=f"{name}.false")
        self.gadget(name, f"{x.name} {rel.value} {c!r}: {how}")
        return Low(name, Finite((False, True), d.nullable), onehot={0: no, 1: yes})

    def _ratio_compare(self, who: str, name: str, ratio: Ratio, rel: Relation, c: Any) -> Linear:
        """``(N/D) REL c`` as ``N − c·D REL 0`` on exact integers (D > 0), the default's
        comparison where the mask allows no position."""
        cf = Fraction(c)
        scale = _dyadic_scale([cf, ratio.const, *ratio.terms.values()])
        if scale is None:
            raise Unsupported(
                who,
                f"compares a mean with {c!r}: the constants are not dyadic fractions (k/2^m), "
                "so Python's float comparison is not a comparison of integers",
            )
        numer = G.const(0.0)
        for (src, code), coef in ratio.terms.items():
            count = self._region_count(ratio.mask, ratio.sources[src], code, name)
            numer = numer + count * float(coef * scale)
        numer = numer + _DENOM[ratio.mask]() * float((ratio.const - cf) * scale)
        truth = _int_compare(numer, rel, 0, name)
        empty = _EMPTY.get(ratio.mask)
        if empty is None:
            return truth
        flag = Position(empty).lin()
        fallback = ratio.default is not None and rel.holds(ratio.default, c)
        return G.gate(1.0 - flag, truth, 0.0, 1.0, label=f"{name}.nonempty") + flag * float(
            fallback
        )

    def _sequence_map(self, sop: R.SequenceMap) -> Low:
        who, name = self.who(sop), self.name(sop)
        x, y = self.low(sop.fst), self.low(sop.snd)
        if isinstance(x.domain, Finite) and isinstance(y.domain, Finite):
            return self._table(who, name, sop.f, [x, y])
        op = sop.op
        try:
            if isinstance(op, Affine):
                return self._affine(who, name, op, [x, y])
            if isinstance(op, Compare) and op.binary:
                diff = self._affine(who, f"{name}.diff", Affine((1, -1)), [x, y])
                return self._compare(who, name, diff, op.relation, 0)
            if isinstance(op, Product):
                return self._product(who, name, x, y)
        except Unsupported:
            if self.max_len is None:
                raise
        unbounded = [v for v in (x, y) if not isinstance(v.domain, Finite)]
        if self.max_len is None:
            raise Unsupported(
                who,
                f"applies a Python function to {' and '.join(v.name for v in unbounded)}, whose "
                "values grow with the length n; a function is a table only over finitely many "
                "values",
                boundable=all(isinstance(v.domain, Ints) for v in unbounded),
            )
        return self._table(who, name, sop.f, [x, y])

    def _product(self, who: str, name: str, x: Low, y: Low) -> Low:
        """``x * y`` where one factor is 0 or 1 and the other bounded: a ReLU gate."""
        for b, v in ((x, y), (y, x)):
            bd = b.domain
            if (
                isinstance(bd, Finite)
                and bd.numeric
                and {float(t) for t in bd.values} <= {0.0, 1.0}
            ):
                lo, hi = _interval(v.domain)
                if lo is None or hi is None:
                    continue
                number = G.gate(self.number(b), self.number(v), lo, hi, label=f"{name}.gate")
                dom = Reals(min(lo, 0.0), max(hi, 0.0), bd.nullable or v.domain.nullable)
                self.gadget(name, f"{b.name} * {v.name}: a ReLU gate")
                return Low(name, dom, number=number, none=self._none_of([x, y], name))
        raise Unsupported(who, "multiplies two SOps, neither of which only takes 0 and 1")

    # ---- SelectorWidth -------------------------------------------------------------------

    def _width(self, sop: R.SelectorWidth) -> Low:
        who, name = self.who(sop), self.name(sop)
        form = self.selectors.analyse(sop.selector, who)
        if isinstance(form, Lookup) and form.inverse:
            if self.max_len is None:
                raise Unsupported(
                    who,
                    "counts the positions whose key equals each index: the keys have no "
                    "finite table",
                    boundable=True,
                )
            form = self.selectors.analyse(sop.selector, who, lookups=False)
        if isinstance(form, Lookup):
            t = self.integer(self.low(form.queries), who) + 1.0
            self.gadget(name, "width of a lookup: [0 <= q < n], ReLU steps")
            return Low(name, Finite((0, 1)), number=_range_check(t, name))
        regions = form.regions()
        if regions is not None:
            size, text, (lo, hi) = _region_size(regions)
            self.gadget(name, f"width of the order selector: {text} (position features)")
            return Low(name, Ints(lo, hi), number=size)
        return self._table_width(name, form, who)

    def _table_width(self, name: str, form: TableForm, who: str) -> Low:
        q_oh, k_oh = self._joint(form, who, name)
        t = {r: form.as_dict(r) for r in REGIONS}
        lt, eq, gt = (form.tables[r] for r in REGIONS)

        def here(table: dict[tuple[int, int], bool]) -> Linear:
            return G.table_at(q_oh, k_oh, table, label=f"{name}.self")

        scaled: Scaled | None = None
        for mask, unit, feature, cond in (
            ("none", "n", "1/n", np.array_equal(lt, gt) and lt.any()),
            ("future", "i", "1/i", lt.any() and not gt.any()),
        ):
            if cond:
                frac = self._frac(mask, q_oh, k_oh, t["<"], name)
                corr = here(t["="]) - here(t["<"])
                scaled = Scaled(frac + _signed_gate(corr, Position(feature), name), unit)
                break

        def recover() -> Linear:
            total = here(t["="]) if eq.any() else G.const(0.0)
            if np.array_equal(lt, gt):
                if lt.any():
                    total = total + self._count("none", q_oh, k_oh, t["<"], name) - here(t["<"])
                return total
            if lt.any():
                total = total + self._count("future", q_oh, k_oh, t["<"], name) - here(t["<"])
            if gt.any():
                total = (
                    total
                    + self._count("none", q_oh, k_oh, t[">"], name)
                    - self._count("future", q_oh, k_oh, t[">"], name)
                )
            return total

        how = (
            "a uniform head over the table's columns, gated by the query's value "
            f"(count/{scaled.unit}); the exact integer by a table lookup where it is needed"
            if scaled
            else "uniform heads and table lookups (exact integer counts)"
        )
        self.gadget(name, f"count: {how}")
        return Low(name, Ints(*_COUNT), scaled=scaled, recover=recover)

    def _joint(self, form: TableForm, who: str, name: str) -> tuple[Onehot, Onehot]:
        """The one-hots of the (joint) query and key values of a table selector."""

        def joint(sops: list[R.SOp], codes: list[tuple[int, ...]], side: str) -> Onehot:
            ohs = [self.onehot(self.low(s), who) for s in sops]
            if not ohs:
                return {0: G.const(1.0)}
            if len(ohs) == 1:
                return {c: ohs[0][code[0]] for c, code in enumerate(codes)}
            return {
                c: dsl.and_(*(oh[k] for oh, k in zip(ohs, code)), label=f"{name}.{side}{c}").lin()
                for c, code in enumerate(codes)
            }

        return (
            joint(form.query_sops, form.query_codes, "q"),
            joint(form.key_sops, form.key_codes, "k"),
        )

    def _frac(
        self, mask: str, q_oh: Onehot, k_oh: Onehot, table: dict[tuple[int, int], bool], name: str
    ) -> Linear:
        """``#{j in mask : T[q_i][k_j]} / D``: one uniform head averaging, per query value q,
        the column ``Σ_k T[q][k]·[k_j = k]``; ReLU gates pick the row of q_i."""
        sig = ("frac", mask, tuple(sorted(table)), id(q_oh), id(k_oh))
        if sig in self._counts:
            return self._counts[sig][0]
        rows = sorted({q for q, _ in table})
        cols = [G.lin_sum([k_oh[k] for (qq, k) in table if qq == q]) for q in rows]
        if len(rows) == len(q_oh) and all(_same(cols[0], c) for c in cols):
            head = G.uniform_mean([cols[0]], mask, label=f"{name}.mean")
            frac = head.outs[0].lin()
        else:
            head = G.uniform_mean(cols, mask, label=f"{name}.mean")
            frac = G.lin_sum(
                [
                    G.gate(q_oh[q], head.outs[m], 0.0, 1.0, label=f"{name}.q{q}")
                    for m, q in enumerate(rows)
                ]
            )
        self._counts[sig] = (frac, frac)
        return frac

    def _count(
        self, mask: str, q_oh: Onehot, k_oh: Onehot, table: dict[tuple[int, int], bool], name: str
    ) -> Linear:
        """The exact integer ``#{j in mask : T[q_i][k_j]}`` (mask none or future)."""
        sig = ("count", mask, tuple(sorted(table)), id(q_oh), id(k_oh))
        if sig not in self._counts:
            frac = self._frac(mask, q_oh, k_oh, table, name)
            exists = G.select_max(q_oh, k_oh, table, [], mask, label=f"{name}.exists").found
            self._counts[sig] = (
                G.recover_count(frac, exists, mask, label=f"{name}.lookup"),
                exists,
            )
        return self._counts[sig][0]

    def _region_count(self, mask: str, x: Low, code: int, name: str) -> Linear:
        """The exact ``#{j in mask : x_j = value(code)}`` for a finite x."""
        oh = self.onehot(x, name)
        one: Onehot = {0: G.const(1.0)}
        col: Onehot = {0: oh[code]}
        table = {(0, 0): True}
        sub = f"{name}.{x.name}={x.domain.values[code]!r}"  # type: ignore[union-attr]
        if mask in ("none", "future"):
            return self._count(mask, one, col, table, sub)
        future = self._count("future", one, col, table, sub)
        if mask == "strict-future":
            return future - oh[code]
        everything = self._count("none", one, col, table, sub)
        if mask == "past":
            return everything - future + oh[code]
        return everything - future  # strict-past

    # ---- Aggregate -----------------------------------------------------------------------

    def _pick(self, sop: R.Aggregate) -> Low:
        """A categorical Aggregate: the value at the selected position (its one-hot)."""
        who, name = self.who(sop), self.name(sop)
        x = self.low(sop.sop)
        xd = self.finite(x, who)
        read = [self.onehot(x, who)[c] for c in range(len(xd.values))]
        values = list(xd.values)
        default_code = None
        if sop.default is not None:
            (dv,) = distinct([sop.default])
            match = [c for c, v in enumerate(values) if key(v) == key(dv)]
            if not match:
                values.append(dv)
            default_code = match[0] if match else len(values) - 1
        form = self.selectors.analyse(sop.selector, who)
        found, got, one = self._select(sop, form, read)
        onehot: Onehot = {}
        for c in range(len(values)):
            part = got[c] if c < len(got) else G.const(0.0)
            onehot[c] = part + (1.0 - found) if c == default_code else part
        if not one:
            self.domain_notes.append(
                Note(
                    name,
                    "reads the rightmost selected position: exact wherever rasp.evaluate is "
                    "defined (a categorical Aggregate whose selected positions hold different "
                    "values is an error there)",
                )
            )
        nullable = xd.nullable or (sop.default is None and not _always_found(form))
        return Low(name, Finite(tuple(values), nullable), onehot=onehot)

    def _select(
        self, sop: R.Aggregate, form: TableForm | Lookup, read: list[Linear]
    ) -> tuple[Linear, list[Linear], bool]:
        """Attend to the selected position: (found, ``read`` there gated by found, whether the
        selector selects at most one position)."""
        who, name = self.who(sop), self.name(sop)
        if isinstance(form, Lookup) and form.inverse:
            try:
                return self._inverse_lookup(sop, form, read)
            except Unsupported:
                if self.max_len is None:
                    raise
                form = self.selectors.analyse(sop.selector, who, lookups=False)
        if isinstance(form, Lookup):
            t = self.integer(self.low(form.queries), who) + 1.0
            head = dsl.lookup_int(t, read, label=f"{name}.lookup")
            found = _range_check(t, name)
            got = [
                G.gate(found, head.outs[m], 0.0, 1.0, label=f"{name}.v{m}")
                for m in range(len(read))
            ]
            self.gadget(name, "table lookup of position q(i): score 2tj - j^2, gap 1")
            return found, got, True
        regions = form.regions()
        if regions is not None:
            if regions == frozenset("="):
                self.gadget(name, "the value at the same position (no attention)")
                return G.const(1.0), list(read), True
            if not regions:
                return G.const(0.0), [G.const(0.0)] * len(read), True
            mask = mask_of(regions)
            if mask is None:
                raise Unsupported(
                    who, f"selects the regions {sorted(regions)} (j != i), not one mask"
                )
            sel = G.select_max({}, {}, None, read, mask, label=f"{name}.pick")
            self.gadget(name, f"the rightmost position of mask {mask} (tie-break j/(2n))")
            return sel.found, sel.values, False
        q_oh, k_oh = self._joint(form, who, name)
        found = G.const(0.0)
        got = [G.const(0.0)] * len(read)
        parts = _selection_parts(form)
        for mask, table in parts:
            if mask == "self":
                pf = G.table_at(q_oh, k_oh, table, label=f"{name}.self")
                pv = [G.gate(pf, r, 0.0, 1.0, label=f"{name}.selfv") for r in read]
            else:
                sel = G.select_max(q_oh, k_oh, table, read, mask, label=f"{name}.pick")
                pf = sel.found
                pv = [G.gate(pf, v, 0.0, 1.0, label=f"{name}.val") for v in sel.values]
            if len(parts) == 1:
                return pf, pv, False
            take = dsl.relu(pf - found, label=f"{name}.take").lin()
            got = [g + G.gate(take, v, 0.0, 1.0, label=f"{name}.use") for g, v in zip(got, pv)]
            found = found + take
        self.gadget(
            name,
            f"the rightmost selected position ({', '.join(m for m, _ in parts)}): 0/1 table "
            "scores plus the tie-break j/(2n)",
        )
        return found, got, False

    def _inverse_lookup(
        self, sop: R.Aggregate, form: Lookup, read: list[Linear]
    ) -> tuple[Linear, list[Linear], bool]:
        """``Select(k, indices, ==)``: the position whose key is the query's index, by the
        score ``2·k_j·i0 − k_j²`` (maximal where k_j = i0; the rightmost among equal keys)."""
        who, name = self.who(sop), self.name(sop)
        kl = self.low(form.keys)
        kd = kl.domain
        fits = isinstance(kd, Ints) and kd.within(Bound(0, 0), Bound(1, 0))
        if isinstance(kd, Finite):
            as_ints = ints_of_finite(kd)
            fits = as_ints is not None and as_ints.within(Bound(0, 0), Bound(1, 0))
        if not fits:
            raise Unsupported(
                who,
                f"looks up the position whose key equals its index, but the keys "
                f"({kd.describe()}) are not all in [0, n], where the score 2 k_j i - k_j^2 "
                "is built",
                boundable=isinstance(kd, Ints),
            )
        k = self.integer(kl, who)
        k2 = dsl.square(k, label=f"{name}.square")
        i0 = Position("i") - 1.0
        head = dsl.attend(
            [i0, G.const(1.0)],
            [2.0 * k, -1.0 * k2],
            [*read, k],
            mask="none",
            tie="rightmost",
            label=f"{name}.find",
        )
        found = dsl.equal(head.outs[len(read)], i0, label=f"{name}.found")
        got = [
            G.gate(found, head.outs[m], 0.0, 1.0, label=f"{name}.v{m}") for m in range(len(read))
        ]
        self.gadget(
            name,
            "the position whose key equals the query's index: score 2 k_j i0 - k_j^2 on "
            "integer keys (k_j^2 by a lookup), rightmost among equal keys",
        )
        return found, got, False

    def _mean(self, sop: R.Aggregate) -> Low:
        """A numerical Aggregate: the mean of the selected values."""
        who, name = self.who(sop), self.name(sop)
        x = self.low(sop.sop)
        if x.domain.nullable:
            raise Unsupported(who, f"averages {x.name}, which can be None")
        default = sop.default
        if default is not None and not is_number(default):
            raise Unsupported(who, f"has the default {default!r}, which is not a number")
        dflt = float(default or 0)
        value = self.number(x)
        lo, hi = _interval(x.domain)
        form = self.selectors.analyse(sop.selector, who)
        span = (None, None) if lo is None or hi is None else (min(lo, dflt), max(hi, dflt))
        if isinstance(form, TableForm) and form.regions() == frozenset("="):
            self.gadget(name, "the value at the same position (no attention)")
            return Low(name, x.domain, number=value, ratio=x.ratio)
        if isinstance(form, Lookup):
            if lo is None or hi is None:
                raise Unsupported(
                    who,
                    f"reads {x.name} ({x.domain.describe()}) at a looked-up position: only "
                    "bounded values can be switched off where nothing is found",
                )
            found, got, _ = self._select(sop, form, [value - lo])
            number = got[0] + found * lo + (1.0 - found) * dflt
            dom: Domain = Reals(span[0], span[1], default is None)
            if isinstance(x.domain, Finite):
                extra = [default] if default is not None else []
                dom = Finite(distinct([*x.domain.values, *extra]), default is None)
            return Low(name, dom, number=number, none=(1.0 - found) if default is None else None)
        regions = form.regions()
        if regions is not None:
            if not regions:
                return Low(name, Finite(distinct([default]), default is None), number=G.const(dflt))
            mask = mask_of(regions)
            if mask is None:
                raise Unsupported(
                    who, f"averages over the regions {sorted(regions)} (j != i), not one mask"
                )
            head = G.uniform_mean([value], mask, label=f"{name}.mean")
            nullable = default is None and mask in _EMPTY
            low = Low(name, Reals(span[0], span[1], nullable), number=head.value(0, dflt))
            if nullable:
                low.none = 1.0 - head.found.lin()
            if isinstance(x.domain, Finite) and x.domain.numeric:
                terms = {(id(x), c): Fraction(v) for c, v in enumerate(x.domain.values) if v}
                low.ratio = Ratio(mask, terms, {id(x): x}, Fraction(0), default)
            self.gadget(name, f"a uniform head over mask {mask}: the mean, exactly")
            return low
        # a mean over the positions a table selects: average-hard attention with ties
        if lo is None or hi is None:
            raise Unsupported(who, f"averages {x.name} ({x.domain.describe()}), which is unbounded")
        parts = _selection_parts(form)
        if len(parts) != 1 or parts[0][0] == "self":
            raise Unsupported(who, "averages over a selector that is not one mask with a table")
        mask, table = parts[0]
        q_oh, k_oh = self._joint(form, who, name)
        qf, kf = G.table_score(q_oh, k_oh, table)
        keys = list(k_oh)
        head = dsl.attend(
            qf,
            kf,
            [value, *(k_oh[k] for k in keys)],
            mask=mask,
            tie="average",
            label=f"{name}.mean",
        )
        averaged = {k: head.outs[1 + m].lin() for m, k in enumerate(keys)}
        found = G.table_at(q_oh, averaged, table, label=f"{name}.found")
        number = G.gate(found, head.outs[0] - lo, 0.0, hi - lo, label=f"{name}.gate") + found * lo
        number = number + (1.0 - found) * dflt
        self.tied.append(name)
        self.gadget(
            name,
            "an average-hard head over the selected positions (ties averaged: exact with "
            "average-hard attention; Theorem 26 does not cover it)",
        )
        return Low(
            name,
            Reals(span[0], span[1], default is None),
            number=number,
            none=(1.0 - found) if default is None else None,
        )


# ---- helpers -------------------------------------------------------------------------------


def _affine_values(op: Affine, xs: list[Low]) -> Callable[[int], tuple[Any, ...]] | None:
    """The values of ``op(*xs)`` at n <= N, from the inputs' values (None if unknown)."""

    def values(max_len: int) -> tuple[Any, ...]:
        parts = []
        for x in xs:
            listed = enumerate_values(x, max_len)
            if listed is None:
                raise Unsupported(x.name, "has values that cannot be listed")
            parts.append(listed)
        return distinct(op(*combo) for combo in itertools.product(*parts))

    return values


def _chain(steps: list[Any]) -> Callable[[Any], Any]:
    def f(v: Any) -> Any:
        for s in steps:
            v = s(v)
        return v

    return f


def _same(a: Linear, b: Linear) -> bool:
    return a.const == b.const and {k.uid: c for k, c in a.terms.items()} == {
        k.uid: c for k, c in b.terms.items()
    }


def _interval(d: Domain) -> tuple[float | None, float | None]:
    if isinstance(d, Finite):
        if not d.values or not d.numeric:
            return None, None
        return d.interval()
    if isinstance(d, Reals):
        return d.lo, d.hi
    return None, None


def _dyadic_scale(values: list[Fraction], limit: int = 1 << 20) -> int | None:
    """The least power of two that makes every value an integer (None above ``limit``)."""
    scale = 1
    for v in values:
        den = v.denominator
        if den & (den - 1):
            return None
        scale = max(scale, den)
    return scale if scale <= limit else None


def _int_compare(x: Linear, rel: Relation, c: Any, name: str) -> Linear:
    """``[x REL c]`` for an integer-valued form and a constant: ReLU steps."""
    c = float(c)
    if rel in (Relation.EQ, Relation.NEQ):
        eq = dsl.is_zero(x - c, label=f"{name}.eq") if c == math.floor(c) else G.const(0.0)
        return eq if rel is Relation.EQ else 1.0 - eq
    if rel is Relation.LT:
        return G.step_geq(-1.0 * x, 1 - math.ceil(c), label=f"{name}.lt")
    if rel is Relation.LEQ:
        return G.step_geq(-1.0 * x, -math.floor(c), label=f"{name}.le")
    if rel is Relation.GT:
        return G.step_geq(x, math.floor(c) + 1, label=f"{name}.gt")
    return G.step_geq(x, math.ceil(c), label=f"{name}.ge")


def _finite_compare(x: Linear, d: Finite, rel: Relation, c: Any, name: str) -> Linear:
    """``[x REL c]`` for a number taking the values ``d``: ReLU ramps between neighbours."""
    xs = sorted({float(v) for v in d.values})
    truth = {v: rel.holds(v, c) for v in xs}
    out = G.const(1.0 if truth[xs[0]] else 0.0)
    for a, b in zip(xs, xs[1:]):
        if truth[a] != truth[b]:
            ramp = dsl.pwl([(1.0 / (b - a), x - a), (-1.0 / (b - a), x - b)], label=f"{name}.ramp")
            out = out + ramp * (1.0 if truth[b] else -1.0)
    return out


def _signed_gate(d: Linear, feature: Position, name: str) -> Linear:
    """``d · f`` for ``d`` in {−1, 0, 1} and a feature ``f`` in [0, 1]: two ReLU gates."""
    pos = dsl.relu(feature - (1.0 - d), label=f"{name}.corr+")
    neg = dsl.relu(feature - (1.0 + d), label=f"{name}.corr-")
    return pos - neg


def _range_check(t: Linear, name: str) -> Linear:
    """``[1 <= t <= n]`` for an integer t (a 1-based position)."""
    lo = G.step_geq(t, 1, label=f"{name}.lo")
    hi = G.step_geq(Position("n") - t, 0, label=f"{name}.hi")
    return dsl.and_(lo, hi, label=f"{name}.inrange").lin()


def _region_size(regions: frozenset[str]) -> tuple[Linear, str, tuple[Bound, Bound]]:
    """The number of positions in a union of regions (1-based i), with its bounds."""
    i, n = Position("i"), Position("n")
    sizes: dict[frozenset[str], tuple[Linear, str, tuple[Bound, Bound]]] = {
        frozenset(): (G.const(0.0), "0", (Bound(0, 0), Bound(0, 0))),
        frozenset("<"): (i - 1.0, "indices", (Bound(0, 0), Bound(1, -1))),
        frozenset("="): (G.const(1.0), "1", (Bound(0, 1), Bound(0, 1))),
        frozenset(">"): (n - i, "n - 1 - indices", (Bound(0, 0), Bound(1, -1))),
        frozenset("<="): (i.lin(), "indices + 1", (Bound(0, 1), Bound(1, 0))),
        frozenset("=>"): (n - i + 1.0, "n - indices", (Bound(0, 1), Bound(1, 0))),
        frozenset("<>"): (n - 1.0, "n - 1", (Bound(1, -1), Bound(1, -1))),
        frozenset("<=>"): (n.lin(), "n", (Bound(1, 0), Bound(1, 0))),
    }
    return sizes[regions]


def _always_found(form: TableForm | Lookup) -> bool:
    """Whether the selector always selects something (it contains the diagonal)."""
    if isinstance(form, TableForm):
        regions = form.regions()
        return regions is not None and "=" in regions
    return False


def _selection_parts(form: TableForm) -> list[tuple[str, dict[tuple[int, int], bool]]]:
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


__all__ = ["MASK_REGIONS", "Low", "Lowering", "Note", "Unsupported"]

"""RASP → an average-hard attention program (:mod:`hardsoft.programs.ahat.dsl`), exact at every
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
import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.dsl import Linear, Position, Token
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp import gadgets as G
from hardsoft.programs.rasp.aggregate import OTHERS, Selections
from hardsoft.programs.rasp.domains import (
    Bound,
    Domain,
    Finite,
    Ints,
    Reals,
    Tuples,
    affine_bounds,
    distinct,
    dyadic_scale,
    interval,
    ints_of_finite,
    is_number,
    key,
)
from hardsoft.programs.rasp.gadgets import Onehot, finite_compare, int_compare
from hardsoft.programs.rasp.graph import statements, topological
from hardsoft.programs.rasp.lambdas import read_map, read_pack, read_unpack, unread_reason
from hardsoft.programs.rasp.lowered import Low, Note, Ratio, enumerate_values
from hardsoft.programs.rasp.ops import (
    Affine,
    Compare,
    Compose,
    ElementOp,
    FloorDiv,
    Logic,
    LogicKind,
    Modulo,
    Pack,
    Product,
    Relation,
)
from hardsoft.programs.rasp.selectors import MASK_REGIONS, SelectorAnalysis, Unsupported

_DENOM = {
    "none": lambda: Position("n").lin(),
    "future": lambda: Position("i").lin(),
    "strict-future": lambda: Position("i") - 1.0,
    "past": lambda: Position("n") - Position("i") + 1.0,
    "strict-past": lambda: Position("n") - Position("i"),
    "others": lambda: Position("n") - 1.0,
}
"""How many positions each mask allows at position i (1-based), as a linear form."""

_EMPTY = {"strict-future": "[i=1]", "strict-past": "[i=n]", "others": "[n=1]"}
"""Where a strict mask allows no position: a 0/1 position feature."""

_INDEX = Bound(0, 0), Bound(1, -1)
CONSTANT_RANGE = 64
"""An affine map of unbounded integers whose bounds do not depend on n (``0 * indices + 2``)
takes finitely many values: up to this many, it is a finite SOp."""


class Lowering:
    """The lowering of one program (see the module docstring)."""

    def __init__(
        self,
        program: R.SOp,
        vocab: tuple[Any, ...],
        symbols: tuple[str, ...],
        max_len: int | None = None,
        causal: bool = False,
    ) -> None:
        self.program = program
        self.causal = causal
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
        self.counts: dict[tuple[Any, ...], tuple[Linear, Linear]] = {}
        for name, sop in statements(program):
            self._names[sop.unique_id] = name
        for k, expr in enumerate(topological(program)):
            self._names.setdefault(expr.unique_id, f"{expr.name}#{k}")
        self.selections = Selections(self)
        self.selectors = SelectorAnalysis(
            lambda s: self.low(s).domain,
            lambda s, user: self.finite(self.low(s), user),
            self.name,
            lambda s: self.low(s).index_affine,
            causal,
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
        if x.number is None and x.scaled is not None and x.scaled.unit == OTHERS:
            raise Unsupported(
                x.name,
                "is a mean over j != i, carried as its sum over j != i divided by n: its value "
                "needs a division by n - 1, which no layer computes exactly (it can be an "
                "output, or compared with a constant)",
            )
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
                f"{d.describe()}, which hardsoft does not list (it lists the values at "
                "n <= N of integers, of affine maps of them and of means of integers)",
            )
        if self.max_len is None:
            grows = "grow with" if isinstance(d, Ints) else "depend on"
            raise Unsupported(
                user,
                f"needs the values of {x.name} as a finite table, but they are "
                f"{d.describe()}, which {grows} the length n",
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
            return Low(name, Ints(*_INDEX), number=Position("i") - 1.0, index_affine=(1, 0))
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
            return self.selections._width(sop)
        if isinstance(sop, R.Aggregate):
            return self.selections._mean(sop) if R.is_numerical(sop) else self.selections._pick(sop)
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

    def _read(self, name: str, f: Callable[..., Any], arity: int) -> ElementOp | None:
        """A user's lambda read as a structured op, where that is certain (:mod:`.lambdas`)."""
        op = read_map(f, arity)
        if op is not None:
            self.gadget(name, f"read the lambda as {op.describe(*('x', 'y')[:arity])}")
        return op

    def _map(self, sop: R.Map) -> Low:
        who, name = self.who(sop), self.name(sop)
        x = self.low(sop.inner)
        if isinstance(x.domain, Finite) and (x.onehot is not None or sop.op is None):
            return self._table(who, name, sop.f, [x])
        if x.parts is not None:
            return self._unpack(who, name, sop, x)
        op = sop.op or self._read(name, sop.f, 1)
        if op is not None:
            try:
                return self._op1(who, name, op, x)
            except Unsupported:
                if self.max_len is None and not isinstance(x.domain, Finite):
                    raise
        if isinstance(x.domain, Finite):
            return self._table(who, name, sop.f, [x])
        if self.max_len is None:
            raise Unsupported(
                who,
                f"applies a Python function to {x.name}, whose values are "
                f"{x.domain.describe()} and {_change(x)}; a function is a table only over "
                f"finitely many values (the function is not read: {unread_reason(sop.f)})",
                boundable=_listable(x),
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
                        f"whose values {_change(cur)}",
                        boundable=_listable(cur),
                    )
                cur = self._op1(who, f"{name}.{k}" if k < len(steps) - 1 else name, step, cur)
            return cur
        if isinstance(op, Affine):
            return self._affine(who, name, op, [x])
        if isinstance(op, (Modulo, FloorDiv)):
            return self._modular(who, name, op, x)
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
            if lo.a == hi.a == 0 and hi.b - lo.b <= CONSTANT_RANGE:  # the same at every length
                dom = Finite(tuple(range(int(lo.b), int(hi.b) + 1)), nullable)
        else:
            lo_f: float | None = const
            hi_f: float | None = const
            for c, x in zip(coefs, xs):
                a, b = interval(x.domain)
                if a is None or b is None or lo_f is None or hi_f is None:
                    lo_f = hi_f = None
                    continue
                lo_f, hi_f = lo_f + min(c * a, c * b), hi_f + max(c * a, c * b)
            dom = Reals(lo_f, hi_f, nullable)
        low = Low(name, dom, number=number, none=self._none_of(xs, name))
        low.formula = op.describe(*(x.term for x in xs))
        if len(xs) == 1 and op.integral and xs[0].index_affine is not None:
            a, b = xs[0].index_affine
            low.index_affine = (op.coefs[0] * a, op.coefs[0] * b + op.const)
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

    def _modular(self, who: str, name: str, op: Modulo | FloorDiv, x: Low) -> Low:
        """``x % m`` (a one-hot of the residue) or ``x // m`` (``(x − x % m)/m``, a linear
        form) for an integer x whose residue is known exactly (:meth:`residues`)."""
        m = op.modulus
        res = self.residues(x, m, who)
        if isinstance(op, Modulo):
            self.gadget(name, f"{x.name} % {m}: the residue as a one-hot (MOD)")
            return Low(name, Finite(tuple(range(m)), x.domain.nullable), onehot=dict(res))
        d = x.domain
        assert isinstance(d, Ints)
        rem = G.lin_sum([res[r] * float(r) for r in range(1, m)])
        number = (self.integer(x, who) - rem) * (1.0 / m)
        lo = Bound(d.lo.a / m, (d.lo.b - m + 1) / m)  # floor(x / m) >= (x - m + 1) / m
        hi = Bound(d.hi.a / m, d.hi.b / m)
        self.gadget(name, f"{x.name} // {m}: (x - x % {m}) / {m}, a linear form of the residue")
        return Low(name, Ints(lo, hi, d.nullable), number=number, none=x.none)

    def residues(self, x: Low, m: int, who: str) -> Onehot:
        """The one-hot of ``x mod m`` for an integer SOp: from the position features
        ``[i mod m = r]`` for an affine map of indices, or (an integer in [0, n]) by a table
        lookup of position max(x, 1) reading them there (cf. the MOD gadget of the logic
        compiler)."""
        d = x.domain
        if not isinstance(d, Ints):
            raise Unsupported(who, f"takes {x.name} mod {m}, but its values are {d.describe()}")
        if x.index_affine is not None:  # a·(i − 1) + b: a table of (i − 1) mod m
            a, b = x.index_affine
            at = {r: Position(f"[i mod {m} = {(r + 1) % m}]").lin() for r in range(m)}
            return {
                v: G.lin_sum([at[r] for r in range(m) if (a * r + b) % m == v]) for v in range(m)
            }
        if not d.within(Bound(0, 0), Bound(1, 0)):
            raise Unsupported(
                who,
                f"takes {x.name} mod {m}: its values ({d.describe()}) are neither an affine map "
                "of indices nor in [0, n], where a lookup of position x reads x mod m",
                boundable=True,
            )
        if self.causal:
            raise Unsupported(
                who,
                f"takes {x.name} mod {m} by a lookup of position {x.name}, which may be later "
                "than i: causal=True allows no such head",
            )
        v = self.integer(x, who)
        feats = [Position(f"[i mod {m} = {r}]") for r in range(m)]
        head = dsl.lookup_int(v, feats, label=f"{x.name}.mod{m}")
        zero = dsl.is_zero(v, label=f"{x.name}.zero")
        out: Onehot = {}
        for r in range(m):
            read = G.gate(1.0 - zero, head.outs[r], 0.0, 1.0, label=f"{x.name}.mod{m}.{r}")
            out[r] = G.not_none(read + zero if r == 0 else read, self.none(x))
        self.gadget(x.name, f"{x.name} mod {m}: a table lookup of position x (score 2xj - j^2, "
                    "gap 1) reading the features [j mod m = r]")  # fmt: skip
        return out

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
            truth = int_compare(self.integer(x, who), rel, c, name)
            how = "ReLU steps on the integer"
        elif x.ratio is not None:
            truth = self._ratio_compare(who, name, x.ratio, rel, c)
            how = "ReLU steps on the mean's numerator, exact integer counts"
        elif isinstance(d, Finite) and d.numeric:
            truth = finite_compare(self.number(x), d, rel, c, name)
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
        scale = dyadic_scale([cf, ratio.const, *ratio.terms.values()])
        if scale is None:
            raise Unsupported(
                who,
                f"compares a mean with {c!r}: the constants are not dyadic fractions (k/2^m), "
                "so Python's float comparison is not a comparison of integers",
            )
        numer = G.const(0.0)
        for (src, code), coef in ratio.terms.items():
            count = self.selections._region_count(ratio.mask, ratio.sources[src], code, name)
            numer = numer + count * float(coef * scale)
        numer = numer + _DENOM[ratio.mask]() * float((ratio.const - cf) * scale)
        truth = int_compare(numer, rel, 0, name)
        empty = _EMPTY.get(ratio.mask)
        if empty is None:
            return truth
        flag = (
            dsl.and_(Position("[i=1]"), Position("[i=n]"), label=f"{name}.n1").lin()
            if empty == "[n=1]"
            else Position(empty).lin()
        )
        fallback = ratio.default is not None and rel.holds(ratio.default, c)
        return G.gate(1.0 - flag, truth, 0.0, 1.0, label=f"{name}.nonempty") + flag * float(
            fallback
        )

    def _sequence_map(self, sop: R.SequenceMap) -> Low:
        who, name = self.who(sop), self.name(sop)
        x, y = self.low(sop.fst), self.low(sop.snd)
        if isinstance(x.domain, Finite) and isinstance(y.domain, Finite):
            return self._table(who, name, sop.f, [x, y])
        op = sop.op or self._read(name, sop.f, 2)
        pack = read_pack(sop.f) if op is None and self.max_len is None else None
        if pack is not None:
            return self._pack(name, pack, x, y)
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
                f"values {_change(unbounded[0])}; a function is a table only over finitely many "
                f"values (the function is not read: {unread_reason(sop.f)})",
                boundable=all(_listable(v) for v in unbounded),
            )
        return self._table(who, name, sop.f, [x, y])

    def _pack(self, name: str, pack: Pack, x: Low, y: Low) -> Low:
        """A tuple of SOps (one unbounded) carried as its components: Tracr's
        ``make_nary_sequencemap`` builds ``(*x, y)`` step by step."""
        head = [x]
        if x.parts is not None and pack.flatten:
            head = list(x.parts)
        elif pack.flatten and isinstance(x.domain, Finite) and x.domain.values:
            sizes = {len(v) if isinstance(v, tuple) else None for v in x.domain.values}
            if len(sizes) != 1:
                raise Unsupported(
                    name, f"packs {x.name}, whose values are tuples of different sizes"
                )
            (size,) = sizes
            if size is not None:  # components of a finite tuple: tables
                head = [
                    self._table(name, f"{name}[{k}]", operator.itemgetter(k), [x])
                    for k in range(size)
                ]
        parts = [*head, y]
        nullable = any(p.domain.nullable for p in parts)
        self.gadget(name, f"the tuple {pack.describe(x.name, y.name)}: carried as its components")
        return Low(name, Tuples(tuple(p.domain for p in parts), nullable), parts=parts)

    def _unpack(self, who: str, name: str, sop: R.Map, x: Low) -> Low:
        """A function of a tuple carried as its components, read as a function of them."""
        assert x.parts is not None
        op = read_unpack(sop.f, len(x.parts))
        if op is None:
            raise Unsupported(
                who,
                f"applies a Python function to the tuples {x.name} ({x.domain.describe()}), "
                "which is not read as an affine map of their components",
                boundable=True,
            )
        self.gadget(name, f"read the lambda as {op.describe(x.name)}")
        if isinstance(op.inner, Affine):
            return self._affine(who, name, op.inner, list(x.parts))
        if isinstance(op.inner, Compare) and op.inner.binary:
            diff = self._affine(who, f"{name}.diff", Affine((1, -1)), list(x.parts))
            return self._compare(who, name, diff, op.inner.relation, 0)
        raise Unsupported(who, f"{op.describe(x.name)} has no exact gadget", boundable=True)

    def _product(self, who: str, name: str, x: Low, y: Low) -> Low:
        """``x * y`` where one factor is 0 or 1 and the other bounded: a ReLU gate."""
        for b, v in ((x, y), (y, x)):
            bd = b.domain
            if (
                isinstance(bd, Finite)
                and bd.numeric
                and {float(t) for t in bd.values} <= {0.0, 1.0}
            ):
                lo, hi = interval(v.domain)
                if lo is None or hi is None:
                    continue
                number = G.gate(self.number(b), self.number(v), lo, hi, label=f"{name}.gate")
                dom = Reals(min(lo, 0.0), max(hi, 0.0), bd.nullable or v.domain.nullable)
                self.gadget(name, f"{b.name} * {v.name}: a ReLU gate")
                return Low(name, dom, number=number, none=self._none_of([x, y], name))
        raise Unsupported(who, "multiplies two SOps, neither of which only takes 0 and 1")


def _listable(x: Low) -> bool:
    """Whether a bounded compile can list the values of ``x`` at n <= N."""
    return isinstance(x.domain, Ints) or x.values_at is not None


def _change(x: Low) -> str:
    """How the values of an unbounded SOp depend on n, for reasons."""
    if isinstance(x.domain, Ints):
        return "grow with the length n"
    if x.values_at is not None:
        return "depend on the length n (finitely many at n <= N)"
    return "are not listed by hardsoft (it lists integers, affine maps of them, means of integers)"


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


__all__ = ["MASK_REGIONS", "Low", "Lowering", "Note", "Unsupported"]

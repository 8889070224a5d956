"""Selectors lowered: SelectorWidth and Aggregate (see :mod:`.lower` for the table of
gadgets). An order selector is an attention mask, a finite one a score table on one-hots, an
``indices == q`` one a table lookup (:mod:`.selectors`); counts are carried as count/n or
recovered as exact integers, categorical Aggregates read the rightmost selected position,
numerical ones are uniform heads."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.dsl import Linear, Position
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp import gadgets as G
from hardsoft.programs.rasp.domains import (
    Bound,
    Domain,
    Finite,
    Ints,
    Reals,
    distinct,
    interval,
    ints_of_finite,
    is_number,
    key,
)
from hardsoft.programs.rasp.gadgets import Onehot, range_check, region_size, same, signed_gate
from hardsoft.programs.rasp.lowered import Low, Lowerer, Note, Ratio, Scaled
from hardsoft.programs.rasp.selectors import (
    REGIONS,
    Lookup,
    TableForm,
    Unsupported,
    always_selects,
    mask_of,
    selection_parts,
)

_COUNT = Bound(0, 0), Bound(1, 0)
OTHERS = "mean*(n-1)/n"
"""The unit of a mean over j != i: its sum over j != i divided by n."""
MEAN_VALUES_LIMIT = 20000
"""Most values a mean may take at n <= N for a bounded compile to list them."""
_EMPTY = {"strict-future": "[i=1]", "strict-past": "[i=n]"}
"""Where a strict mask allows no position: a 0/1 position feature."""


class Selections:
    """The SelectorWidths and Aggregates of one lowering."""

    def __init__(self, lw: Lowerer) -> None:
        self.lw = lw

    # ---- SelectorWidth -------------------------------------------------------------------

    def _width(self, sop: R.SelectorWidth) -> Low:
        who, name = self.lw.who(sop), self.lw.name(sop)
        form = self.lw.selectors.analyse(sop.selector, who)
        if isinstance(form, Lookup) and form.inverse:
            if self.lw.max_len is None:
                raise Unsupported(
                    who,
                    "counts the positions whose key equals each index: the keys have no "
                    "finite table",
                    boundable=True,
                )
            form = self.lw.selectors.analyse(sop.selector, who, lookups=False)
        if isinstance(form, Lookup):
            t = self.lw.integer(self.lw.low(form.queries), who) + 1.0
            self.lw.gadget(name, "width of a lookup: [0 <= q < n], ReLU steps")
            return Low(name, Finite((0, 1)), number=range_check(t, name))
        regions = form.regions()
        if regions is not None:
            size, text, (lo, hi) = region_size(regions)
            self.lw.gadget(name, f"width of the order selector: {text} (position features)")
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
                scaled = Scaled(frac + signed_gate(corr, Position(feature), name), unit)
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
        self.lw.gadget(name, f"count: {how}")
        return Low(name, Ints(*_COUNT), scaled=scaled, recover=recover)

    def _joint(self, form: TableForm, who: str, name: str) -> tuple[Onehot, Onehot]:
        """The one-hots of the (joint) query and key values of a table selector."""

        def joint(sops: list[R.SOp], codes: list[tuple[int, ...]], side: str) -> Onehot:
            ohs = [self.lw.onehot(self.lw.low(s), who) for s in sops]
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
        if sig in self.lw.counts:
            return self.lw.counts[sig][0]
        rows = sorted({q for q, _ in table})
        cols = [G.lin_sum([k_oh[k] for (qq, k) in table if qq == q]) for q in rows]
        if len(rows) == len(q_oh) and all(same(cols[0], c) for c in cols):
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
        self.lw.counts[sig] = (frac, frac)
        return frac

    def _count(
        self, mask: str, q_oh: Onehot, k_oh: Onehot, table: dict[tuple[int, int], bool], name: str
    ) -> Linear:
        """The exact integer ``#{j in mask : T[q_i][k_j]}`` (mask none or future)."""
        sig = ("count", mask, tuple(sorted(table)), id(q_oh), id(k_oh))
        if sig not in self.lw.counts:
            frac = self._frac(mask, q_oh, k_oh, table, name)
            exists = G.select_max(q_oh, k_oh, table, [], mask, label=f"{name}.exists").found
            self.lw.counts[sig] = (
                G.recover_count(frac, exists, mask, label=f"{name}.lookup"),
                exists,
            )
        return self.lw.counts[sig][0]

    def _region_count(self, mask: str, x: Low, code: int, name: str) -> Linear:
        """The exact ``#{j in mask : x_j = value(code)}`` for a finite x."""
        oh = self.lw.onehot(x, name)
        one: Onehot = {0: G.const(1.0)}
        col: Onehot = {0: oh[code]}
        table = {(0, 0): True}
        sub = f"{name}.{x.name}={x.domain.values[code]!r}"  # type: ignore[union-attr]
        if mask in ("none", "future"):
            return self._count(mask, one, col, table, sub)
        if mask == "others":
            return self._count("none", one, col, table, sub) - oh[code]
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
        who, name = self.lw.who(sop), self.lw.name(sop)
        x = self.lw.low(sop.sop)
        xd = self.lw.finite(x, who)
        read = [self.lw.onehot(x, who)[c] for c in range(len(xd.values))]
        values = list(xd.values)
        default_code = None
        if sop.default is not None:
            (dv,) = distinct([sop.default])
            match = [c for c, v in enumerate(values) if key(v) == key(dv)]
            if not match:
                values.append(dv)
            default_code = match[0] if match else len(values) - 1
        form = self.lw.selectors.analyse(sop.selector, who)
        found, got, one = self._select(sop, form, read)
        onehot: Onehot = {}
        for c in range(len(values)):
            part = got[c] if c < len(got) else G.const(0.0)
            onehot[c] = part + (1.0 - found) if c == default_code else part
        if not one:
            self.lw.domain_notes.append(
                Note(
                    name,
                    "reads the rightmost selected position: exact wherever rasp.evaluate is "
                    "defined (a categorical Aggregate whose selected positions hold different "
                    "values is an error there)",
                )
            )
        nullable = xd.nullable or (sop.default is None and not always_selects(form))
        return Low(name, Finite(tuple(values), nullable), onehot=onehot)

    def _select(
        self, sop: R.Aggregate, form: TableForm | Lookup, read: list[Linear]
    ) -> tuple[Linear, list[Linear], bool]:
        """Attend to the selected position: (found, ``read`` there gated by found, whether the
        selector selects at most one position)."""
        who, name = self.lw.who(sop), self.lw.name(sop)
        if isinstance(form, Lookup) and form.inverse:
            try:
                return self._inverse_lookup(sop, form, read)
            except Unsupported:
                if self.lw.max_len is None:
                    raise
                form = self.lw.selectors.analyse(sop.selector, who, lookups=False)
        if isinstance(form, Lookup):
            t = self.lw.integer(self.lw.low(form.queries), who) + 1.0
            behind = "future" if self.lw.causal else "none"  # causal: the lookup is behind
            head = dsl.lookup_int(t, read, label=f"{name}.lookup", mask=behind)
            found = range_check(t, name)
            got = [
                G.gate(found, head.outs[m], 0.0, 1.0, label=f"{name}.v{m}")
                for m in range(len(read))
            ]
            self.lw.gadget(name, "table lookup of position q(i): score 2tj - j^2, gap 1")
            return found, got, True
        regions = form.regions()
        if regions is not None:
            if regions == frozenset("="):
                self.lw.gadget(name, "the value at the same position (no attention)")
                return G.const(1.0), list(read), True
            if not regions:
                return G.const(0.0), [G.const(0.0)] * len(read), True
            mask = mask_of(regions)
            if mask is None:
                raise Unsupported(
                    who, f"selects the regions {sorted(regions)} (j != i), not one mask"
                )
            sel = G.select_max({}, {}, None, read, mask, label=f"{name}.pick")
            self.lw.gadget(name, f"the rightmost position of mask {mask} (tie-break j/(2n))")
            return sel.found, sel.values, False
        q_oh, k_oh = self._joint(form, who, name)
        found = G.const(0.0)
        got = [G.const(0.0)] * len(read)
        parts = selection_parts(form)
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
        self.lw.gadget(
            name,
            f"the rightmost selected position ({', '.join(m for m, _ in parts)}): 0/1 table "
            "scores plus the tie-break j/(2n)",
        )
        return found, got, False

    def _mean_others(self, sop: R.Aggregate, x: Low, span: tuple[Any, Any]) -> Low:
        """A mean over j != i: the uniform mean over every position minus the query's own
        term, ``(Σ_{j≠i} x_j)/n``, carried as that (unit ``mean*(n-1)/n``: read, it is
        multiplied by n/(n − 1)); the default where n = 1."""
        who, name = self.lw.who(sop), self.lw.name(sop)
        d = x.domain
        if not (isinstance(d, Finite) and d.numeric):
            raise Unsupported(
                who,
                f"averages {x.name} ({d.describe()}) over j != i: hardsoft corrects the mean "
                "over all positions by the query's own term only for finitely many numbers",
            )
        default = sop.default
        oh = self.lw.onehot(x, who)
        head = G.uniform_mean([self.lw.number(x)], "none", label=f"{name}.mean")
        inv_n = Position("1/n")
        own = G.lin_sum([
            G.gate(oh[c], inv_n, 0.0, 1.0, label=f"{name}.own{c}") * float(v)
            for c, v in enumerate(d.values) if v
        ])  # fmt: skip
        alone = dsl.and_(Position("[i=1]"), Position("[i=n]"), label=f"{name}.n1").lin()
        form = head.value(0) - own + alone * float(default or 0)
        low = Low(name, Reals(span[0], span[1], default is None), scaled=Scaled(form, OTHERS))
        if default is None:
            low.none = alone
        terms = {(id(x), c): Fraction(v) for c, v in enumerate(d.values) if v}
        low.ratio = Ratio("others", terms, {id(x): x}, Fraction(0), default)
        self.lw.gadget(
            name,
            "a mean over j != i: a uniform head over every position minus the query's own term "
            "(x_i/n, a ReLU gate), carried as the sum over j != i divided by n",
        )
        return low

    def _inverse_lookup(
        self, sop: R.Aggregate, form: Lookup, read: list[Linear]
    ) -> tuple[Linear, list[Linear], bool]:
        """``Select(k, indices, ==)``: the position whose key is the query's index, by the
        score ``2·k_j·i0 − k_j²`` (maximal where k_j = i0; the rightmost among equal keys)."""
        who, name = self.lw.who(sop), self.lw.name(sop)
        kl = self.lw.low(form.keys)
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
        k = self.lw.integer(kl, who)
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
        self.lw.gadget(
            name,
            "the position whose key equals the query's index: score 2 k_j i0 - k_j^2 on "
            "integer keys (k_j^2 by a lookup), rightmost among equal keys",
        )
        return found, got, False

    def _mean(self, sop: R.Aggregate) -> Low:
        """A numerical Aggregate: the mean of the selected values."""
        who, name = self.lw.who(sop), self.lw.name(sop)
        x = self.lw.low(sop.sop)
        if x.domain.nullable:
            raise Unsupported(who, f"averages {x.name}, which can be None")
        default = sop.default
        if default is not None and not is_number(default):
            raise Unsupported(who, f"has the default {default!r}, which is not a number")
        dflt = float(default or 0)
        value = self.lw.number(x)
        lo, hi = interval(x.domain)
        form = self.lw.selectors.analyse(sop.selector, who)
        span = (None, None) if lo is None or hi is None else (min(lo, dflt), max(hi, dflt))
        if isinstance(form, TableForm) and form.regions() == frozenset("="):
            self.lw.gadget(name, "the value at the same position (no attention)")
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
            if regions == frozenset("<>"):
                return self._mean_others(sop, x, span)
            if mask is None:
                raise Unsupported(who, f"averages over the regions {sorted(regions)}, not one mask")
            head = G.uniform_mean([value], mask, label=f"{name}.mean")
            nullable = default is None and mask in _EMPTY
            low = Low(name, Reals(span[0], span[1], nullable), number=head.value(0, dflt))
            if nullable:
                low.none = 1.0 - head.found.lin()
            if isinstance(x.domain, Finite) and x.domain.numeric:
                terms = {(id(x), c): Fraction(v) for c, v in enumerate(x.domain.values) if v}
                low.ratio = Ratio(mask, terms, {id(x): x}, Fraction(0), default)
                low.values_at = mean_values(x.domain, mask, default)
            self.lw.gadget(name, f"a uniform head over mask {mask}: the mean, exactly")
            return low
        # a mean over the positions a table selects: average-hard attention with ties
        if lo is None or hi is None:
            raise Unsupported(who, f"averages {x.name} ({x.domain.describe()}), which is unbounded")
        parts = selection_parts(form)
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
        self.lw.tied.append(name)
        self.lw.gadget(
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


def mean_values(d: Finite, mask: str, default: Any) -> Any:
    """The values at n <= N of a mean over ``mask`` of integer values ``d``, as Python
    computes them (an exact integer sum divided by the count): None for other values."""
    if not all(isinstance(v, (int, bool)) for v in d.values):
        return None
    ints = sorted({int(v) for v in d.values})

    def values(max_len: int) -> tuple[Any, ...]:
        out: set[float] = set() if default is None else {default}
        sums = {0}
        for k in range(1, max_len + 1):  # k positions averaged
            sums = {s + v for s in sums for v in ints}
            out |= {s / k for s in sums}
            if len(out) > MEAN_VALUES_LIMIT:
                raise Unsupported(
                    "a mean", f"takes more than {MEAN_VALUES_LIMIT} values at n <= {max_len}"
                )
        return tuple(sorted(out))

    return values

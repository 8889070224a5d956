"""Float limits of a compiled average-hard program: the largest n at which rounding in float64
or float32 cannot change any output (docs/programs.md, "Float limits").

In exact arithmetic the compiled transformer computes the program's values
(:mod:`hardsoft.programs.ahat.dsl`) exactly. In a float format (unit roundoff u = 2⁻⁵³, 2⁻²⁴; p
significand bits) every value carries an error, bounded here node by node at a length n from
the construction (first-order rounding model, every bound valid for any summation order):

* each value's exact range, and whether it lies on a grid (multiples of 2^-g): a value on a
  grid with |v|·2^g < 2^p, computed from exact inputs by exact coefficients, is exact (the
  integers of a count, a step, a table lookup's score);
* a linear form is one dot product of m nonzero terms: off by γ_m·Σ|terms| (γ_m = m·u/(1 −
  m·u)) plus its inputs' errors times the coefficients;
* a feed-forward piece sum: the same for its pieces and its output sum; a function of one
  input form moves that form's error by its own slopes, and not at all where the exact inputs
  sit on a flat piece (``round_bool`` absorbs any error below 1/3);
* a uniform head averages by prefix sums (its path at every n unless ``--dense``): sums of
  exact grid values are exact below 2^p and divided once; otherwise off by
  (2√N + 3)·u·max|v| (the two-level sum);
* a tieless head's scores (over the mask's allowed pairs) must be off by less than half its
  gap γ(n): the maximum is then the exact one, and an average-hard or unique-hard head copies
  its value exactly. At softmax temperature τ(n) the mass off the maximum is at most
  η = (n − 1)·e^{−(γ − 2E)/τ} (each other weight at least the format's least positive number,
  which exp may round up to), which moves the output by 2η·max|v| and adds the rounding of a
  sum of n terms (below η·max|v| while η < u/4: the maximum's weight is then exactly 1);
* every output must end within its readout's tolerance (1/2 for bits and integers).

:func:`float_limits` returns, per format, the largest n at which every condition holds for
every n' <= n, and the condition that fails first past it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hardsoft.model.spec import Weighting, eval_tau
from hardsoft.model.transformer import Transformer
from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.float_values import (
    EXACT_ONE,
    FORMATS,
    SNAP_POINTS,
    Computed,
    Fmt,
    NoLimit,
    OneInput,
    Val,
    by_symbol,
    feature,
    linear,
    one_input,
    relu,
    rounded_away,
)

# ---- the pass over the program -------------------------------------------------------------


@dataclass(frozen=True)
class HeadModel:
    """How a compiled head computes: its weighting (average-hard, unique-hard or softmax),
    τ(n) for softmax, and where it is (``layer.head``)."""

    weighting: Weighting
    tau: str | None
    where: str


class Failed(Exception):
    """A condition of the analysis fails at this n (its reason)."""


def _copied(v: Val) -> Val:
    """A value read at another position (0 where no position is allowed)."""
    return replace(v, mono=None, rel=0.0, lo=min(v.lo, 0.0), hi=max(v.hi, 0.0), by_symbol=None)


class Pass:
    """One evaluation of every node of a program at length n in format ``fmt``."""

    def __init__(
        self,
        program: dsl.Program,
        heads: dict[int, HeadModel],
        n: int,
        fmt: Fmt,
        shapes: dict[Any, Any] | None = None,
    ) -> None:
        self.program, self.heads, self.n, self.fmt = program, heads, n, fmt
        self.vals: dict[int, Val] = {}
        self.forms: dict[int, tuple[dsl.Linear, Computed]] = {}  # holds the form: ids stay
        self.shapes = {} if shapes is None else shapes  # n-independent: PWL shapes, tables

    def run(self, tolerances: Sequence[Callable[[int], float]]) -> None:
        for x in self.program.nodes():
            self.node(x)
        for k, (form, tol) in enumerate(zip(self.program.outputs, tolerances)):
            v = self.output(form)
            if not v.err < tol(self.n):
                raise Failed(
                    f"output {k}: error bound {v.err:.3g} is not below its readout's "
                    f"tolerance {tol(self.n):.3g}"
                )

    def value(self, x: dsl.SOp) -> Val:
        return self.vals[x.uid]

    def form(self, lin: dsl.Linear) -> Computed:
        key = id(lin)
        if key not in self.forms:
            terms = [(c, self.value(t)) for t, c in lin.terms.items()]
            if ("table", key) not in self.shapes:  # per symbol: the same at every n
                self.shapes["table", key] = (lin, by_symbol(terms, lin.const))
            table = self.shapes["table", key][1]
            self.forms[key] = (lin, linear(terms, lin.const, self.fmt, table))
        return self.forms[key][1]

    def node(self, x: dsl.SOp) -> None:
        if isinstance(x, dsl.Token):
            alphabet = self.program.alphabet
            table = np.array([float(a == x.symbol) for a in alphabet])
            self.vals[x.uid] = Val(0.0, 1.0, 0.0, 0, 1.0, by_symbol=table)
        elif isinstance(x, dsl.Position):
            self.vals[x.uid] = feature(x.feature, self.n, self.fmt)
        elif isinstance(x, dsl.PWL):
            self.vals[x.uid] = self.pwl(x)
        elif isinstance(x, dsl.Attend):
            outs, found = self.attend(x)
            for o, v in zip(x.outs, outs):
                self.vals[o.uid] = v
            self.vals[x.found.uid] = found
        elif isinstance(x, dsl.AttnOut):
            pass  # set by its head
        elif not isinstance(x, dsl.Linear):  # pragma: no cover
            raise NoLimit(f"no rounding bound for {type(x).__name__}")

    def output(self, form: dsl.Linear) -> Val:
        """An output as the compiler reads it: one coordinate, or an identity piece sum."""
        if len(form.terms) == 1 and not form.const:
            ((t, c),) = form.terms.items()
            if c == 1.0 and not isinstance(t, (dsl.Token, dsl.Position)):
                return self.value(t)
        return self.pwl(dsl.PWL([(1.0, form), (-1.0, form.scaled(-1.0))], "out"))

    # -- feed-forward

    def pwl(self, x: dsl.PWL) -> Val:
        ins = [self.form(f) for _, f in x.pieces]
        out = linear([(w, relu(c.val)) for (w, _), c in zip(x.pieces, ins)], 0.0, self.fmt)
        val = out.val
        if x.uid not in self.shapes:
            self.shapes[x.uid] = one_input(x.pieces)
        one = self.shapes[x.uid]
        if one is None:
            return val
        form, g = one
        t = self.form(form)
        lo, hi = g.range(t.val.lo, t.val.hi)
        err = val.err
        if err > 0.0:
            rounding = sum(abs(w) * c.rounding for (w, _), c in zip(x.pieces, ins))
            err = min(err, self.moved(g, t) + rounding + out.rounding)
        return replace(val, lo=max(val.lo, lo), hi=min(val.hi, hi), err=err)

    def moved(self, g: OneInput, t: Computed) -> float:
        """How far g moves when its input is off by the carried error of t: by its swing
        around each exact input (on a small grid: a flat piece moves it 0), else by its
        steepest slope."""
        e, v = t.carried, t.val
        if v.grid is not None and (v.hi - v.lo) * 2.0**v.grid <= SNAP_POINTS:
            step = 2.0**-v.grid
            first = math.ceil(v.lo / step)
            points = [(first + k) * step for k in range(int((v.hi - v.lo) / step) + 2)]
            return max(g.swing(p, e) for p in points if v.lo <= p <= v.hi)
        ks = sorted(set(g.kinks(v.lo - e, v.hi + e)))
        slopes = [abs(g.at(b) - g.at(a)) / (b - a) for a, b in zip(ks, ks[1:]) if b > a]
        return max(slopes, default=0.0) * e

    # -- attention

    def attend(self, x: dsl.Attend) -> tuple[list[Val], Val]:
        head = self.heads[x.uid]
        values = [self.form(v).val for v in x.values]
        if x.uniform:
            return [self.mean(v, x.mask) for v in values], self.mean(EXACT_ONE, x.mask)
        err = self.score_error(x, head)
        gap = self.gap(x)
        copy = [_copied(v) for v in values]
        found = Val(0.0, 1.0, 0.0, 0, 1.0)
        if gap is None:  # an average over the positions a table selects (ties kept exactly)
            if err > 0.0:
                raise Failed(f"head {head.where} ({x.label}): its tied scores are not exact")
            return [replace(v, err=v.err + (self.n + 2) * self.fmt.u * v.mag) for v in copy], found
        if not 2.0 * err < gap:
            raise Failed(
                f"head {head.where} ({x.label}): score error bound {err:.3g} is not below half "
                f"its gap {gap:.3g}"
            )
        if head.weighting is not Weighting.SOFTMAX:
            return copy, found
        spread = (gap - 2.0 * err) / eval_tau(head.tau, self.n)
        weight = max(math.exp(-spread), self.fmt.tiny)  # exp may round up to the least float
        eta = (self.n - 1) * weight
        return [self.summed(v, eta) for v in copy], self.summed(found, eta)

    def summed(self, v: Val, eta: float) -> Val:
        """A softmax head's weighted sum of up to n values, mass ``eta`` off the maximum:
        2·eta·max|v| from the exact value, plus rounding. With eta below u/4 the weights'
        sum rounds to exactly 1, the maximum's weight is exactly 1 and only the other terms
        (at most eta·max|v| together) are added to its value, so that rounding is below
        eta·max|v|; otherwise (n + 2)·u·max|v| or (5u + 3·eta)·max|v|."""
        u, n = self.fmt.u, self.n
        rounding = eta * (1.0 + n * u) if eta < u / 4 else min((n + 2.0) * u, 5 * u + 3 * eta)
        return replace(v, err=v.err + (2.0 * eta + rounding) * v.mag)

    def mean(self, v: Val, mask: str) -> Val:
        """A uniform head's average of ``v`` over the allowed positions, by the prefix-sum
        path (:func:`hardsoft.model.fastkernels.uniform_attention`, at every n): sums of exact
        grid values are exact below 2^p, then divided once (values near the grid:
        :func:`rounded_away`); else (2√N + 3)·u·max|v|."""
        n, fmt = self.n, self.fmt
        lo, hi = (min(v.lo, 0.0), max(v.hi, 0.0)) if mask.startswith("strict") else (v.lo, v.hi)
        on_grid = v.grid is not None and n * v.mag * 2.0**v.grid < 2.0**fmt.p
        rounding = (2.0 * math.sqrt(n) + 3.0) * fmt.u * v.mag
        if on_grid and rounded_away(n * v.err, v.grid, fmt):
            rounding = v.err + fmt.u * v.mag  # an exact sum (up to n·err), divided once
        return Val(lo, hi, v.err + rounding, None, v.mag)

    def gap(self, x: dsl.Attend) -> float | None:
        """The head's declared gap γ(n): a tie-break gives unit/(2n)."""
        if x.tie in ("leftmost", "rightmost"):
            return x.score_unit / 2.0 / self.n
        return None if x.gap is None else eval_tau(x.gap, self.n)

    def dims(self, x: dsl.Attend) -> list[tuple[Val, Val]]:
        """The (query, key) values of every score dimension, with the compiler's tie-break."""
        dims = [(self.form(q).val, self.form(k).val) for q, k in zip(x.query, x.key)]
        if x.tie in ("leftmost", "rightmost"):
            sign = 1.0 if x.tie == "rightmost" else -1.0
            delta = x.score_unit / 2.0
            tb = linear([(sign, feature("i/n", self.n, self.fmt))], 0.0, self.fmt).val
            dims.append((linear([], delta, self.fmt).val, tb))
        return dims

    def score_error(self, x: dsl.Attend, head: HeadModel) -> float:
        """A bound on the error of every allowed score (0: computed exactly)."""
        fmt = self.fmt
        dims = self.dims(x)
        sizes = [term_size(q, k, x.mask, self.n) for q, k in dims]
        total = sum(sizes)
        grids = [None if q.grid is None or k.grid is None else q.grid + k.grid for q, k in dims]
        grid = None if None in grids else max(g for g in grids if g is not None)
        carried = sum(term_error(q, k, s) for (q, k), s in zip(dims, sizes))
        rounding = fmt.gamma(len(dims) + 3) * total  # any order; a fast path's split
        if grid is not None and total * 2.0**grid < 2.0**fmt.p:  # exact in exact inputs
            rounding = min(rounding, carried) if rounded_away(carried, grid, fmt) else rounding
            rounding = 0.0 if carried == 0 else rounding
        err = carried + rounding
        if head.weighting is Weighting.SOFTMAX:
            err += 3.0 * fmt.u * total  # the scale 1/τ and the row maximum subtracted
        return err


_CORNERS = {
    "none": ((1, 1), (1, 0), (0, 1), (0, 0)),
    "future": ((0, 0), (1, 0), (1, 1)),
    "strict-future": ((0, 0), (1, 0), (1, 1)),
    "past": ((0, 0), (0, 1), (1, 1)),
    "strict-past": ((0, 0), (0, 1), (1, 1)),
}
"""The corners (i, j) of a mask's allowed region in log coordinates (0: position 1, 1:
position n); a product of powers of i and j is largest at one of them."""


def term_size(q: Val, k: Val, mask: str, n: int) -> float:
    """max |q(i)·k(j)| over the allowed pairs (a bound)."""
    if q.mono is None or k.mono is None:
        return q.size * k.size
    qm, km = q.mono, k.mono
    c = abs(qm.c * km.c) * float(n) ** (qm.b + km.b)
    return max(c * float(n) ** (qm.a * ci + km.a * cj) for ci, cj in _CORNERS[mask])


def term_error(q: Val, k: Val, size: float) -> float:
    """The error a product term carries from its factors."""
    if q.mono is not None and k.mono is not None:
        return (q.rel + k.rel + q.rel * k.rel) * size
    return q.err * k.size + q.size * k.err + q.err * k.err


# ---- the limit -------------------------------------------------------------------------------


def head_models(compiled: Any, model: Transformer) -> dict[int, HeadModel]:
    """Every Attend of a compiled program with how ``model`` (the compiled AHAT, its
    unique-hard or its softmax version) computes it."""
    out = {}
    for uid, (ell, h) in compiled.head_of.items():
        spec = model.spec.layers[ell].heads[h]
        out[uid] = HeadModel(Weighting.parse(spec.weighting, "weighting"), spec.tau, f"{ell}.{h}")
    return out


def check_at(
    program: dsl.Program,
    heads: dict[int, HeadModel],
    tolerances: Sequence[Callable[[int], float]],
    n: int,
    fmt: Fmt,
    shapes: dict[Any, Any] | None = None,
) -> str | None:
    """Why rounding in ``fmt`` may change an output at length n (None: it cannot);
    ``shapes`` caches what does not depend on n across calls."""
    try:
        Pass(program, heads, n, fmt, shapes).run(tolerances)
    except Failed as exc:
        return str(exc)
    return None


def largest_n(check: Callable[[int], str | None], top: int) -> tuple[int, int | None, str | None]:
    """The largest N <= ``top`` with ``check(n)`` None for every n <= N (bisection, then
    checked on a logarithmic grid below the result), the first failing n and its reason."""
    why = check(1)
    if why is not None:
        return 0, 1, why
    good, bad, why = _bisect(check, 1, top)
    last = 1
    for k in range(1, GRID_POINTS + 1):
        m = int(round(good ** (k / GRID_POINTS)))
        if m <= last:
            continue
        r = check(m)
        if r is not None:  # not monotone: the first failure below the bisection's answer
            return _bisect(check, last, m)
        last = m
    return good, bad, why


GRID_POINTS = 8
"""Points of the logarithmic grid that checks the bisection's answer."""


def _bisect(
    check: Callable[[int], str | None], good: int, end: int
) -> tuple[int, int | None, str | None]:
    """Largest passing n in [good, end] (``good`` passes), assuming failures are monotone."""
    why = check(end)
    if why is None:
        return end, None, None
    bad = end
    while bad - good > 1:
        mid = (good + bad) // 2
        r = check(mid)
        if r is None:
            good = mid
        else:
            bad, why = mid, r
    return good, bad, why


DERIVATION = (
    "node-by-node rounding bounds of the compiled program (docs/programs.md, 'Float limits'): "
    "dot products off by gamma_m*sum|terms| (exact on integer grids below 2^p), uniform means "
    "by prefix sums (exact for integers below 2^p, then one division), every tieless "
    "head's score error under half its gap gamma(n) (softmax: mass (n-1)exp(-(gamma-2E)/tau) "
    "off the maximum), every output within its readout's tolerance; u = 2^-53 (float64), "
    "2^-24 (float32); the dense path (--dense) is not covered"
)


def float_limits(
    program: dsl.Program,
    heads: dict[int, HeadModel],
    tolerances: Sequence[Callable[[int], float]],
    max_len: int | None = None,
) -> dict[str, Any]:
    """The certificate's ``float_limits``: per format the largest n that is proven exact
    (0: none), ``binding`` (what fails first past it) and how it was derived."""
    out: dict[str, Any] = {"binding": {}}
    shapes: dict[Any, Any] = {}
    for fmt in FORMATS:
        top = 2**fmt.p if max_len is None else min(max_len, 2**fmt.p)
        try:
            good, bad, why = largest_n(
                functools.partial(check_at, program, heads, tolerances, fmt=fmt, shapes=shapes),
                top,
            )
        except NoLimit as exc:
            good, bad, why = 0, None, str(exc)
        out[fmt.name] = good
        out["binding"][fmt.name] = (
            f"n = {bad}: {why}" if bad is not None else why or f"exact up to n = {top}"
        )
    out["binding_heads"] = [out["binding"]["float64"]]
    out["derivation"] = DERIVATION
    return out


__all__ = [
    "FORMATS",
    "HeadModel",
    "check_at",
    "feature",
    "float_limits",
    "head_models",
    "largest_n",
    "linear",
]

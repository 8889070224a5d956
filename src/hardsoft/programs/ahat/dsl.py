"""A small embedded DSL for average-hard attention programs (in the spirit of B-RASP/S-RASP).

A program is a graph of *sequence operations* (SOps): every SOp has one number per position.
Each kind compiles to a piece of a transformer (see :mod:`hardsoft.programs.ahat.compile`):

=================  ==========================================  ===========================
SOp                meaning at position i                        compiles to
=================  ==========================================  ===========================
``Token(a)``       [w_i = a]                                    the word embedding
``Position(f)``    the position feature f(i, n) (``i``, …)      the position embedding
``Linear``         Σ c_k x_k(i) + c_0 (``x + y``, ``2*x``, …)    nothing (a linear form)
``PWL``            Σ_k w_k ReLU(L_k(i))  (piecewise linear)     one feed-forward sublayer
``Attend``         attention: score, value, mask, tie rule      one attention head
=================  ==========================================  ===========================

``Attend(query, key, values, mask, tie)`` scores ``s(i, j) = Σ_d query[d](i) · key[d](j)`` over
the positions j the mask allows (none, future j<=i, strict-future j<i, past j>=i, strict-past
j>i) and returns, for each value, its value at the maximal j: the leftmost or rightmost maximal
j (``tie="leftmost"|"rightmost"``) or the average over all maximal j (``tie="average"``). With no
query/key it is uniform attention (an average over the allowed positions). A row with no allowed
position gives 0 and ``found = 0``; :meth:`Attend.value` adds a default for that case.

Helpers build the usual position-wise operations from ``PWL``: Booleans (:func:`and_`,
:func:`or_`, :func:`not_`, :func:`xor`), integer comparisons (:func:`step`, :func:`is_zero`,
:func:`equal`), :func:`relu`, :func:`abs_`, :func:`round_bool`; and the counting/lookup
idioms :func:`prev`, :func:`exists`, :func:`count` and :func:`lookup` from ``Attend``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from hardsoft.errors import HardsoftError
from hardsoft.model.spec import MASKS

TIES = ("leftmost", "rightmost", "average")
_ids = itertools.count()


class SOp:
    """Base class of every sequence operation; arithmetic builds :class:`Linear` forms."""

    label: str
    uid: int  # set once at construction (not a dataclass field)

    def __post_init__(self) -> None:
        object.__setattr__(self, "uid", next(_ids))

    def lin(self) -> Linear:
        return Linear({self: 1.0}, 0.0)

    def __add__(self, other: SOpLike) -> Linear:
        return as_linear(self).plus(as_linear(other))

    __radd__ = __add__

    def __sub__(self, other: SOpLike) -> Linear:
        return as_linear(self).plus(as_linear(other).scaled(-1.0))

    def __rsub__(self, other: SOpLike) -> Linear:
        return as_linear(other).plus(as_linear(self).scaled(-1.0))

    def __mul__(self, c: float) -> Linear:
        if not isinstance(c, (int, float)):
            raise HardsoftError("SOps can only be multiplied by constants (use and_ for Booleans)")
        return as_linear(self).scaled(float(c))

    __rmul__ = __mul__

    def __neg__(self) -> Linear:
        return as_linear(self).scaled(-1.0)

    def __hash__(self) -> int:
        return self.uid

    def __eq__(self, other: object) -> bool:
        return self is other


@dataclass(eq=False)
class Token(SOp):
    """[w_i = symbol]."""

    symbol: str
    label: str = ""


@dataclass(eq=False)
class Position(SOp):
    """The named position feature (``i``, ``n``, ``i/n``, ``1/i``, ``i^2``, ``(-1)^i``, …)."""

    feature: str
    label: str = ""


@dataclass(eq=False)
class Linear(SOp):
    """``Σ terms[x]·x + const`` over materialised SOps (Token, Position, PWL, AttnOut)."""

    terms: dict[SOp, float] = field(default_factory=dict)
    const: float = 0.0
    label: str = ""

    def lin(self) -> Linear:
        return self

    def plus(self, other: Linear) -> Linear:
        terms = dict(self.terms)
        for x, c in other.terms.items():
            terms[x] = terms.get(x, 0.0) + c
        return Linear({x: c for x, c in terms.items() if c != 0.0}, self.const + other.const)

    def scaled(self, c: float) -> Linear:
        return Linear({x: v * c for x, v in self.terms.items() if v * c != 0.0}, self.const * c)


@dataclass(eq=False)
class PWL(SOp):
    """``Σ_k weight_k · ReLU(form_k(i))``: one feed-forward sublayer, one residual coordinate."""

    pieces: list[tuple[float, Linear]]
    label: str = ""


@dataclass(eq=False)
class AttnOut(SOp):
    """Output ``index`` of an :class:`Attend` head (``index = -1``: the ``found`` flag)."""

    head: Attend
    index: int
    label: str = ""


@dataclass(eq=False)
class Attend(SOp):
    """One attention head (see the module docstring).

    ``score_unit``: for leftmost/rightmost, distinct score values differ by at least this much
    (1 for integer scores); the compiler adds the tie-breaking term ``± (3·unit/4)·j/n``,
    which makes the head tieless with gap ``3·unit/(4n)``, declared as ``unit/(2n)``.
    ``gap``: for ``tie="average"`` heads with a score, the author's declared gap γ(n) as an
    expression in n (checked, never trusted blindly).
    """

    query: list[Linear]
    key: list[Linear]
    values: list[Linear]
    mask: str = "none"
    tie: str = "average"
    score_unit: float = 1.0
    gap: str | None = None
    label: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mask not in MASKS:
            raise HardsoftError(f"unknown mask {self.mask!r} (one of {MASKS})")
        if self.tie not in TIES:
            raise HardsoftError(f"unknown tie rule {self.tie!r} (one of {TIES})")
        if len(self.query) != len(self.key):
            raise HardsoftError("attention needs as many query forms as key forms")
        if self.score_unit <= 0:
            raise HardsoftError("score_unit must be positive")
        self.outs = [AttnOut(self, k, f"{self.label}.v{k}") for k in range(len(self.values))]
        self.found = AttnOut(self, -1, f"{self.label}.found")

    @property
    def uniform(self) -> bool:
        """No score at all: every allowed position gets equal weight (W_Q = W_K = 0)."""
        return not self.query and self.tie == "average"

    def value(self, k: int = 0, default: float = 0.0) -> Linear:
        """Value ``k`` at the selected position(s), or ``default`` where no position is allowed."""
        out = self.outs[k].lin()
        if default:
            out = out.plus(Linear({self.found: -default}, default))
        return out


SOpLike = SOp | float | int


def as_linear(x: SOpLike) -> Linear:
    """Any SOp or constant as a :class:`Linear` form."""
    if isinstance(x, (int, float)):
        return Linear({}, float(x))
    if isinstance(x, Linear):
        return x
    if isinstance(x, SOp):
        return Linear({x: 1.0}, 0.0)
    raise HardsoftError(f"not a sequence operation: {x!r}")


@dataclass
class Program:
    """A named program: its alphabet, its outputs (output 0 is the per-position value) and
    ``gap``, the declared lower bound γ(n) on the gap of every tieless head (an expression in
    n). ``description`` says what it computes; ``reference`` names the language whose
    ``prefix_reference`` it must equal; ``output_names`` optionally names the outputs."""

    name: str
    alphabet: tuple[str, ...]
    outputs: list[Linear]
    gap: str
    description: str = ""
    reference: str = ""
    output_names: tuple[str, ...] = ()

    def nodes(self) -> list[SOp]:
        """Every SOp the outputs depend on, dependencies first."""
        order: list[SOp] = []
        seen: set[int] = set()

        def visit(x: SOp) -> None:
            if x.uid in seen:
                return
            seen.add(x.uid)
            for d in dependencies(x):
                visit(d)
            order.append(x)

        for out in self.outputs:
            visit(out)
        return order


def dependencies(x: SOp) -> list[SOp]:
    """The SOps ``x`` reads directly."""
    if isinstance(x, Linear):
        return list(x.terms)
    if isinstance(x, PWL):
        return [form for _, form in x.pieces]
    if isinstance(x, AttnOut):
        return [x.head]
    if isinstance(x, Attend):
        return [*x.query, *x.key, *x.values]
    return []


# ---- position-wise helpers (each one feed-forward sublayer) --------------------------------


def pwl(pieces: Sequence[tuple[float, SOpLike]], label: str = "") -> PWL:
    return PWL([(float(w), as_linear(f)) for w, f in pieces], label)


def relu(x: SOpLike, label: str = "") -> PWL:
    return pwl([(1.0, x)], label)


def abs_(x: SOpLike, label: str = "") -> PWL:
    return pwl([(1.0, x), (1.0, -as_linear(x))], label)


def identity(x: SOpLike, label: str = "") -> PWL:
    """A materialised copy of a (signed) linear form: ReLU(x) − ReLU(−x)."""
    return pwl([(1.0, x), (-1.0, -as_linear(x))], label)


def step(x: SOpLike, threshold: float, label: str = "") -> PWL:
    """[x >= threshold] for integer-valued x: ReLU(x − t + 1) − ReLU(x − t)."""
    lx = as_linear(x)
    return pwl([(1.0, lx - threshold + 1.0), (-1.0, lx - threshold)], label)


def is_zero(x: SOpLike, label: str = "") -> Linear:
    """[x = 0] for integer-valued x: 1 − min(|x|, 1), one feed-forward sublayer."""
    lx = as_linear(x)
    m = pwl([(1.0, lx), (-1.0, lx - 1.0), (1.0, -lx), (-1.0, -lx - 1.0)], label)
    return 1.0 - m


def equal(x: SOpLike, y: SOpLike, label: str = "") -> Linear:
    """[x = y] for integer-valued x and y."""
    return is_zero(as_linear(x) - as_linear(y), label)


def and_(*xs: SOpLike, label: str = "") -> PWL:
    """Conjunction of exact Booleans: ReLU(Σ x − (m − 1))."""
    total = Linear({}, 0.0)
    for x in xs:
        total = total.plus(as_linear(x))
    return relu(total - float(len(xs) - 1), label)


def not_(x: SOpLike) -> Linear:
    return 1.0 - as_linear(x)


def or_(*xs: SOpLike, label: str = "") -> Linear:
    """Disjunction of exact Booleans: 1 − ReLU(1 − Σ x)."""
    total = Linear({}, 0.0)
    for x in xs:
        total = total.plus(as_linear(x))
    return 1.0 - relu(1.0 - total, label)


def xor(a: SOpLike, b: SOpLike, label: str = "") -> PWL:
    """Exclusive or of exact Booleans: |a − b|."""
    return abs_(as_linear(a) - as_linear(b), label)


def round_bool(x: SOpLike, label: str = "") -> PWL:
    """Approximate Boolean → exact: ReLU(3x − 1) − ReLU(3x − 2) (Yang, Strobl, Chiang &
    Angluin (arXiv:2412.09925v1) Lemma 9)."""
    lx = as_linear(x)
    return pwl([(1.0, lx * 3.0 - 1.0), (-1.0, lx * 3.0 - 2.0)], label)


# ---- attention idioms ----------------------------------------------------------------------


def attend(
    query: Sequence[SOpLike],
    key: Sequence[SOpLike],
    values: Sequence[SOpLike],
    *,
    mask: str = "none",
    tie: str = "average",
    score_unit: float = 1.0,
    gap: str | None = None,
    label: str = "",
) -> Attend:
    return Attend(
        [as_linear(q) for q in query],
        [as_linear(k) for k in key],
        [as_linear(v) for v in values],
        mask,
        tie,
        score_unit,
        gap,
        label,
    )


def prev(values: Sequence[SOpLike], label: str = "prev") -> Attend:
    """The values at position i − 1 (0 and found = 0 at i = 1): strict-future, rightmost,
    constant score."""
    return attend(
        [], [], values, mask="strict-future", tie="rightmost", score_unit=2.0, label=label
    )


def exists(x: SOpLike, mask: str = "future", label: str = "exists") -> Linear:
    """[some allowed j has x_j = 1] for an exact Boolean x: the rightmost maximal x_j."""
    head = attend([1.0], [x], [x], mask=mask, tie="rightmost", label=label)
    return head.value(0)


def mean(x: SOpLike, mask: str = "future", label: str = "mean") -> Linear:
    """The average of x over the allowed positions (uniform attention); future: (Σ_{j<=i} x)/i."""
    return attend([], [], [x], mask=mask, tie="average", label=label).value(0)


def lookup_index(
    target_over_i: SOpLike, values: Sequence[SOpLike], label: str = "lookup"
) -> Attend:
    """Attend to the position j = t given t/i (t an integer in [1, i]): score
    (2 t j − j²)/i, maximal at j = t with gap ≥ 1/i ≥ 1/n (the table lookup of Yang et al.
    (arXiv:2412.09925v1) Thm. 20)."""
    return attend(
        [target_over_i, -1.0 * Position("1/i")],
        [2.0 * Position("i"), Position("i^2")],
        values,
        mask="future",
        tie="average",
        gap="1/n",
        label=label,
    )


def lookup_int(
    target: SOpLike, values: Sequence[SOpLike], label: str = "at", mask: str = "none"
) -> Attend:
    """Attend to the position j = t for an integer t in [1, n]: score 2tj − j², gap ≥ 1.
    (For t <= 0 it lands on j = 1; with mask ``future``, t must be at most i.)"""
    return attend(
        [target, 1.0],
        [2.0 * Position("i"), -1.0 * Position("i^2")],
        values,
        mask=mask,
        tie="average",
        gap="1",
        label=label,
    )


def count(x: SOpLike, label: str = "count") -> Linear:
    """#{j <= i : x_j = 1} exactly, for an exact Boolean x. A uniform head gives S/i, a
    rightmost head E = [S >= 1], and a table lookup the position J = max(S, 1); S = J − 1 + E."""
    frac = mean(x, label=f"{label}.mean")
    e = exists(x, label=f"{label}.exists")
    j = lookup_index(frac, [Position("i")], label=f"{label}.lookup").value(0)
    return j - 1.0 + e


def square(t: SOpLike, label: str = "square") -> Linear:
    """t² for an integer t in [0, n]: look up position max(t, 1) and read its feature i²."""
    j2 = lookup_int(t, [Position("i^2")], label=label).value(0)
    return j2 - 1.0 + step(t, 1, label=f"{label}.pos")

"""Compilation targets and mask modes: what differs between hard attention, softmax with a
temperature τ(n) and softmax with unbounded position features, and between strict and
non-strict masks.

The compiler has two independent axes:

* :class:`Target` — *how a score is made sharp*. Each target is a :class:`Gadgets` object
  that turns a gadget's intent ("attend to the rightmost position where P holds", "put the
  mass on the even positions iff x > 0", "attend to position j = C") into one head's
  weighting, query, key, temperature and proven error bound. ``hard`` uses unique-hard or
  average-hard attention (exact); ``soft-temperature`` uses softmax, bounded position
  features and τ(n) = 1/(λ n^k) (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1), the (a) parts
  of Thms. 12–23); ``soft-pe`` uses softmax with τ = 1 and unbounded features such as ``i`` or
  ``n·(−1)^i`` that scale the scores (the (b) parts).
* :class:`MaskMode` — *which masks exist*. ``strict`` may use every mask of the model
  (``strict-future`` j < i and ``strict-past`` j > i included); ``nonstrict`` uses only the
  masks of a GPT-style decoder (``none``, ``future`` j ≤ i, ``past`` j ≥ i): Prop. 11 for
  first/last, Thm. 12's ``(−1)^i`` construction for Y/X, a non-strict shift then Y for S/U
  (our own; which heads are the paper's constructions: :mod:`hardsoft.compile.results`).
  The builder chooses gadgets by mask mode; targets never look at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from hardsoft.compile import bounds as B
from hardsoft.craft import LinearForm
from hardsoft.model.spec import Mask, Weighting, _Option


class Target(_Option):
    """A compilation target (how scores are made sharp). ``soft-ln`` does not sharpen
    scores at all: it compiles the counting fragment with uniform heads and layer norm
    (:mod:`hardsoft.compile.layernorm`), so it covers less of the logic than the others."""

    HARD = "hard"
    SOFT_TEMPERATURE = "soft-temperature"
    SOFT_PE = "soft-pe"
    SOFT_LN = "soft-ln"

    @property
    def full_logic(self) -> bool:
        """Whether the target compiles every formula of LTL[C,+] (the gadget targets)."""
        return self is not Target.SOFT_LN


class MaskMode(_Option):
    """Which attention masks the compiler may use."""

    STRICT = "strict"
    NONSTRICT = "nonstrict"


TARGETS = tuple(t.value for t in Target if t.full_logic)
"""The targets that compile every formula (``soft-ln``: the counting fragment only)."""
ALL_TARGETS = tuple(t.value for t in Target)
MASK_MODES = tuple(m.value for m in MaskMode)


def shift_mask(past: bool, strict: bool) -> Mask:
    """The mask of a head that looks to the left (``past``) or right, excluding the query's
    own position (``strict``) or not."""
    if past:
        return Mask.STRICT_FUTURE if strict else Mask.FUTURE
    return Mask.STRICT_PAST if strict else Mask.PAST


class FeatureFn(Protocol):
    """Registers a position feature and returns its residual coordinate name."""

    def __call__(self, name: str) -> str: ...


@dataclass(frozen=True)
class Tau:
    """τ(n) = 1/(λ n^power): the temperature of a soft-temperature head."""

    lam: float
    power: int

    @property
    def expression(self) -> str:
        n = "n" if self.power == 1 else f"n**{self.power}"
        return f"1/({B.fmt_lambda(self.lam)}*{n})"


@dataclass
class HeadPlan:
    """One head's weighting, query/key forms (one per head dimension), temperature and bound;
    ``params`` are the gadget's constants, stated in the certificate."""

    weighting: Weighting
    query: list[LinearForm]
    key: list[LinearForm]
    tau: Tau | None
    bound: B.Bound
    params: dict[str, float] = field(default_factory=dict)
    float_limit: B.FloatLimit | None = None


def _alt(f: FeatureFn, sign: float = 1.0) -> LinearForm:
    """``sign · (−1)^j``: +sign on even positions."""
    return {f("(-1)^i"): sign}


def _lookup_params(lam: float) -> dict[str, float]:
    return {"lambda": lam, "value_error_times_n": B.retrieval_value_bound(lam)}


class Gadgets:
    """The attention constructions of one target. Subclasses fill in every method."""

    target: Target
    uniform: Weighting = Weighting.SOFTMAX
    """The weighting of uniform heads (no query/key): all allowed positions weigh the same."""
    gated_queries: bool = True
    """Whether a score may multiply query-side Booleans into the key's (:meth:`select`); if
    not, the builder gives each query class its own head."""

    def select(
        self,
        f: FeatureFn,
        gates: list[LinearForm],
        keys: list[LinearForm],
        leftmost: bool,
        mask: Mask,
    ) -> HeadPlan:
        """Attend, within ``mask``, to the leftmost (rightmost) ``j`` whose score
        ``Σ_k gates[k](i) keys[k](j)`` is 1 (a 0/1 score: the gates are exclusive); where no
        ``j`` scores 1, anywhere. Targets without ``gated_queries`` get one gate, ignored."""
        raise NotImplementedError

    def shift(self, f: FeatureFn, pred: LinearForm, past: bool, strict: bool) -> HeadPlan:
        """Attend to the nearest ``j`` left (``past``) or right of ``i`` where ``pred`` holds
        (``j = i`` allowed unless ``strict``); positions without ``pred`` only where none has."""
        raise NotImplementedError

    def parity(self, f: FeatureFn, past: bool, even: bool) -> HeadPlan:
        """Attend to the nearest ``j`` (``j ≤ i`` if ``past``, else ``j ≥ i``) of the given
        parity (Yang et al. (arXiv:2412.09925v1) Thm. 12's ``(−1)^i`` construction)."""
        raise NotImplementedError

    def sign(
        self,
        f: FeatureFn,
        x: LinearForm,
        corrections: list[tuple[LinearForm, int]],
        kind: str,
        linear_key: bool,
    ) -> HeadPlan:
        """Put the mass on the even positions iff ``x > 0`` (``corrections``: ``(1 − z, c)``
        pairs subtracting ``c (1 − z)/n`` from x); ``linear_key`` asks for the n-independent
        key ``j (−1)^j`` (``pre`` comparisons only)."""
        raise NotImplementedError

    def lookup(
        self, f: FeatureFn, frac: LinearForm, inv: LinearForm, lam: float, bounded_1j: bool
    ) -> HeadPlan:
        """Attend to ``j = C`` given ``C/N`` (``frac``) and ``1/N`` (``inv``). ``bounded_1j``:
        use the n-independent keys ``(−1/(2j²), 1/j)`` (exact targets only)."""
        raise NotImplementedError


class HardGadgets(Gadgets):
    """Unique-hard heads for shifts and lookups, average-hard heads for counting and signs:
    exact (Yang et al. (arXiv:2412.09925v1) Def. 4: UHAT/AHAT)."""

    target = Target.HARD
    uniform = Weighting.AVERAGE

    def select(
        self,
        f: FeatureFn,
        gates: list[LinearForm],
        keys: list[LinearForm],
        leftmost: bool,
        mask: Mask,
    ) -> HeadPlan:
        weighting = Weighting.LEFTMOST if leftmost else Weighting.RIGHTMOST
        return HeadPlan(
            weighting, [dict(g) for g in gates], [dict(k) for k in keys], None, B.Exact()
        )

    def shift(self, f: FeatureFn, pred: LinearForm, past: bool, strict: bool) -> HeadPlan:
        weighting = Weighting.RIGHTMOST if past else Weighting.LEFTMOST
        return HeadPlan(weighting, [{f("1"): 1.0}], [dict(pred)], None, B.Exact())

    def parity(self, f: FeatureFn, past: bool, even: bool) -> HeadPlan:
        weighting = Weighting.RIGHTMOST if past else Weighting.LEFTMOST
        key = _alt(f, 1.0 if even else -1.0)
        return HeadPlan(weighting, [{f("1"): 1.0}], [key], None, B.Exact())

    def sign(
        self,
        f: FeatureFn,
        x: LinearForm,
        corrections: list[tuple[LinearForm, int]],
        kind: str,
        linear_key: bool,
    ) -> HeadPlan:
        query = [dict(x), *(dict(omz) for omz, _ in corrections)]
        key = [_alt(f), *({f("1/n*(-1)^i"): -float(c)} for _, c in corrections)]
        return HeadPlan(Weighting.AVERAGE, query, key, None, B.Exact())

    def lookup(
        self, f: FeatureFn, frac: LinearForm, inv: LinearForm, lam: float, bounded_1j: bool
    ) -> HeadPlan:
        if bounded_1j:
            # score (1/N)(1/j − C/(2j²)): increasing below j = C, decreasing above
            query = [dict(frac), dict(inv)]
            key = [{f("1/i*1/i"): -0.5}, {f("1/i"): 1.0}]
        else:
            query = [{k: 2.0 * v for k, v in frac.items()}, dict(inv)]
            key = [{f("i/n*1/n"): 1.0}, {f("(i/n)^2"): -1.0}]
        return HeadPlan(Weighting.LEFTMOST, query, key, None, B.Exact(), {}, B.LOOKUP_FLOAT)


class SoftTemperatureGadgets(Gadgets):
    """Softmax with τ(n) = 1/(λ n) (1/(λ n³) for lookups) and bounded features only."""

    target = Target.SOFT_TEMPERATURE

    def select(
        self,
        f: FeatureFn,
        gates: list[LinearForm],
        keys: list[LinearForm],
        leftmost: bool,
        mask: Mask,
    ) -> HeadPlan:
        """Score ``S(i, j) ± j/(2n)`` (``−`` for leftmost: Lemma 8's tie-break), τ = 1/(8n):
        the shift gadget's scores with the 0/1 score of query classes in place of ``P_j``."""
        lam = B.SHIFT_LAMBDA
        query = [*(dict(g) for g in gates), {f("1"): 1.0}]
        key = [*(dict(k) for k in keys), {f("i/n"): -0.5 if leftmost else 0.5}]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            Tau(lam, 1),
            B.ShiftBound(lam, mask.is_strict),
            {"lambda": lam},
            B.SHIFT_FLOAT,
        )

    def shift(self, f: FeatureFn, pred: LinearForm, past: bool, strict: bool) -> HeadPlan:
        lam = B.SHIFT_LAMBDA
        key = {**pred}
        key[f("i/n")] = key.get(f("i/n"), 0.0) + (0.5 if past else -0.5)
        return HeadPlan(
            Weighting.SOFTMAX,
            [{f("1"): 1.0}],
            [key],
            Tau(lam, 1),
            B.ShiftBound(lam, strict),
            {"lambda": lam},
            B.SHIFT_FLOAT,
        )

    def parity(self, f: FeatureFn, past: bool, even: bool) -> HeadPlan:
        lam = B.PARITY_LAMBDA
        key = {f("(-1)^i"): 1.0 if even else -1.0, f("i/n"): 1.0 if past else -1.0}
        return HeadPlan(
            Weighting.SOFTMAX,
            [{f("1"): 1.0}],
            [key],
            Tau(lam, 1),
            B.ParityBound(lam),
            {"lambda": lam},
            B.PARITY_FLOAT,
        )

    def sign(
        self,
        f: FeatureFn,
        x: LinearForm,
        corrections: list[tuple[LinearForm, int]],
        kind: str,
        linear_key: bool,
    ) -> HeadPlan:
        g = 0.3 if kind == "glob" else 0.5
        lam = 2 * B.SIGN_LAMBDA if kind == "glob" else B.SIGN_LAMBDA
        query = [dict(x), *(dict(omz) for omz, _ in corrections)]
        key = [_alt(f), *({f("1/n*(-1)^i"): -float(c)} for _, c in corrections)]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            Tau(lam, 1),
            B.SignBound(g, lam),
            {"lambda": lam, "g": g},
        )

    def lookup(
        self, f: FeatureFn, frac: LinearForm, inv: LinearForm, lam: float, bounded_1j: bool
    ) -> HeadPlan:
        query = [{k: 2.0 * v for k, v in frac.items()}, dict(inv)]
        key = [{f("i/n*1/n"): 1.0}, {f("(i/n)^2"): -1.0}]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            Tau(lam, 3),
            B.LookupBound(lam),
            _lookup_params(lam),
            B.LOOKUP_FLOAT,
        )


class SoftPEGadgets(Gadgets):
    """Softmax with τ = 1: unbounded position features (``i``, ``n``, ``n·(−1)^i``, ...)
    scale the scores instead of a temperature."""

    target = Target.SOFT_PE
    gated_queries = False  # a query-side Boolean times the unbounded n is no linear form

    def select(
        self,
        f: FeatureFn,
        gates: list[LinearForm],
        keys: list[LinearForm],
        leftmost: bool,
        mask: Mask,
    ) -> HeadPlan:
        """Query ``(λn, ±λ/2)`` against key ``(K_j, j)``: scaled score ``λn K_j ± (λ/2) j``
        (the shift gadget with ``n`` in place of ``i`` so that every mask and tie is
        covered). The gate is applied by the feed-forward, not here."""
        assert len(keys) == 1
        lam = B.SHIFT_LAMBDA
        query = [{f("n"): lam}, {f("1"): -lam / 2 if leftmost else lam / 2}]
        key = [dict(keys[0]), {f("i"): 1.0}]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            None,
            B.ShiftBound(lam, mask.is_strict),
            {"lambda": lam},
            B.SHIFT_FLOAT,
        )

    def shift(self, f: FeatureFn, pred: LinearForm, past: bool, strict: bool) -> HeadPlan:
        lam = B.SHIFT_LAMBDA
        big = f("i") if past else f("n")
        query = [{big: lam}, {f("1"): lam / 2 if past else -lam / 2}]
        key = [dict(pred), {f("i"): 1.0}]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            None,
            B.ShiftBound(lam, strict),
            {"lambda": lam},
            B.SHIFT_FLOAT,
        )

    def parity(self, f: FeatureFn, past: bool, even: bool) -> HeadPlan:
        lam = B.PARITY_LAMBDA
        # M = i (past) or n − i + 1 (future): at least the number of allowed positions
        big = {f("i"): lam} if past else {f("n"): lam, f("i"): -lam, f("1"): lam}
        query = [big, {f("1"): lam if past else -lam}]
        key = [_alt(f, 1.0 if even else -1.0), {f("i"): 1.0}]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            None,
            B.ParityBound(lam),
            {"lambda": lam},
            B.PARITY_FLOAT,
        )

    def sign(
        self,
        f: FeatureFn,
        x: LinearForm,
        corrections: list[tuple[LinearForm, int]],
        kind: str,
        linear_key: bool,
    ) -> HeadPlan:
        query = [dict(x), *(dict(omz) for omz, _ in corrections)]
        if linear_key and kind == "pre" and not corrections:
            lam = B.LINEAR_SIGN_LAMBDA
            key = [{f("i*(-1)^i"): lam}]
            return HeadPlan(
                Weighting.SOFTMAX, query, key, None, B.LinearSignBound(0.5, lam), {"lambda": lam}
            )
        g = 0.3 if kind == "glob" else 0.5
        lam = 2 * B.SIGN_LAMBDA if kind == "glob" else B.SIGN_LAMBDA
        key = [{f("n*(-1)^i"): lam}, *(_alt(f, -c * lam) for _, c in corrections)]
        return HeadPlan(
            Weighting.SOFTMAX, query, key, None, B.SignBound(g, lam), {"lambda": lam, "g": g}
        )

    def lookup(
        self, f: FeatureFn, frac: LinearForm, inv: LinearForm, lam: float, bounded_1j: bool
    ) -> HeadPlan:
        query = [{k: 2.0 * v for k, v in frac.items()}, dict(inv)]
        key = [{f("n*i"): lam}, {f("n*i^2"): -lam}]
        return HeadPlan(
            Weighting.SOFTMAX,
            query,
            key,
            None,
            B.LookupBound(lam),
            _lookup_params(lam),
            B.LOOKUP_FLOAT,
        )


GADGETS: dict[Target, type[Gadgets]] = {
    Target.HARD: HardGadgets,
    Target.SOFT_TEMPERATURE: SoftTemperatureGadgets,
    Target.SOFT_PE: SoftPEGadgets,
}
"""One gadget class per target."""

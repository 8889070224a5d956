"""The compiler's scheduling and gadget stage: IR nodes → craft heads and neurons.

:class:`Builder` walks the IR DAG children-first. Each node becomes one gadget (one attention
head and/or a few ReLU neurons) placed at the earliest layer where its inputs exist: an
attention head of layer ``L`` reads what is ready after layer ``L − 1``, a neuron of layer
``L`` also reads that layer's attention outputs. Stages count sublayers: inputs are at stage
0, layer ``L``'s attention output at ``2L + 1`` and its feed-forward output at ``2L + 2``.
Every Boolean node ends as an exact 0/1 linear form of the residual stream.

The builder is target-independent: what a head's scores look like on each target comes from
the :class:`~hardsoft.compile.targets.Gadgets` object. The mask mode is the second axis and
is consulted in two places only: how ``[i = 1]``/``[i = n]`` are obtained (:meth:`flag`:
position features, or Yang et al. (arXiv:2412.09925v1) Prop. 11 with non-strict masks) and how a
strict ``Y``/``X`` is built (:meth:`_shift`: one strict-mask head, or Thm. 12's ``(−1)^i``
construction). Each head names its construction; its label comes from the constructions ↔
results table (:mod:`hardsoft.compile.results`).

One job (scheduling IR nodes into layers and emitting their gadgets): the scheduling and the
gadget emission share the same per-node state (readiness stages, caches, pending ramps), so
splitting them along the node types would pass that state back and forth rather than
separate concerns; the targets' score formulas and the labels already live elsewhere.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hardsoft.compile import bounds as B
from hardsoft.compile.ir import (
    TRUE,
    Attention,
    BAnd,
    BAtom,
    BConst,
    BFeat,
    BGeq,
    BMod,
    BNode,
    BNot,
    BSelect,
    BShift,
    BSum,
    Count,
    Lin,
    mk_geq,
)
from hardsoft.compile.results import head_label
from hardsoft.compile.targets import GADGETS, HeadPlan, MaskMode, Target, shift_mask
from hardsoft.craft import AttentionHead, CraftLayer, LinearForm, Neuron, ramp, round_bool
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import Mask

MAX_AND_EPS = 0.4
"""A ``&`` may combine approximate inputs whose errors sum to at most this (< 1/2)."""

PARITY_SLACK = 0.3
"""The parity ramps read ``x`` between ``2 + 0.3`` and ``3 − 0.3`` (valid for ε <= 0.15)."""

SELECT_SLACK = 0.3
"""A selection's ramp reads ``gate + read`` between ``1 + 0.3`` and ``2 − 0.3`` (valid for
reads within ε <= 0.3 of their exact value)."""


@dataclass(frozen=True)
class Part:
    """One ramp of a pending value: ``ramp(x; lo, hi)`` where ``x <= lo`` (false) or
    ``hi <= x <= top`` (true)."""

    x: LinearForm
    lo: float
    hi: float
    top: float

    def with_conjuncts(self, extra: LinearForm, m: int) -> Part:
        """``self ∧ e_1 ∧ … ∧ e_m`` for exact Booleans summing to ``extra``: scaling the
        conjuncts by ``K = top − lo`` keeps every false case at or below the shifted ``lo``."""
        k = max(1.0, self.top - self.lo)
        x = lin_form((self.x, 1.0), (extra, k))
        return Part(x, self.lo + k * m, self.hi + k * m, self.top + k * m)


class Value:
    """A node's value: an exact 0/1 linear form of the residual (``form``), available from
    stage ``ready`` on.

    ``approx`` is the unrounded head output (within ``eps`` of the exact value), ready at
    ``approx_ready``, so a ``&`` can read it in the same layer's feed-forward. ``parts`` is a
    *pending* value: the sum of the ramps of mutually exclusive :class:`Part` s, computable by
    the feed-forward of layer ``layer`` and written to a coordinate only when ``form`` is
    first read (``negated``: the value is one minus that sum); a ``&`` with exact inputs folds
    them into the ramps instead, saving a layer.
    """

    def __init__(
        self,
        form: LinearForm | None,
        ready: int,
        approx: LinearForm | None = None,
        approx_ready: int = 0,
        eps: float = 0.0,
        *,
        parts: list[Part] | None = None,
        layer: int = 0,
        negated: bool = False,
        materialize: Callable[[], LinearForm] | None = None,
    ) -> None:
        self._form = form
        self.ready = ready
        self.approx, self.approx_ready, self.eps = approx, approx_ready, eps
        self.parts, self.layer, self.negated = parts, layer, negated
        self._materialize = materialize

    @property
    def form(self) -> LinearForm:
        if self._form is None:
            assert self._materialize is not None
            self._form = self._materialize()
        return self._form


def att_layer(stage: int) -> int:
    """The first layer whose attention can read a value ready at ``stage``."""
    return (stage + 1) // 2


def ffn_layer(stage: int) -> int:
    """The first layer whose feed-forward can read a value ready at ``stage``."""
    return max(0, stage // 2)


def lin_form(*terms: tuple[LinearForm, float]) -> LinearForm:
    """``Σ coef · form`` with zero coefficients dropped."""
    out: LinearForm = {}
    for form, coef in terms:
        for k, v in form.items():
            out[k] = out.get(k, 0.0) + coef * v
    return {k: v for k, v in out.items() if v != 0.0}


def _float_entry(limit: B.FloatLimit | None) -> dict[str, Any]:
    if limit is None:
        return {"float_limit": None, "max_exact_n": None}
    return {
        "float_limit": limit.text,
        "max_exact_n": {fmt: limit.max_n(u) for fmt, u in B.UNIT_ROUNDOFF.items()},
    }


def category(term: Lin) -> str:
    """How a comparison term is normalised: ``pre`` (only ``#<``, ``i``, constants: divide by
    ``i``), ``suf`` (only ``#>`` and constants: divide by ``n − i + 1``) or ``glob``
    (anything else: counts are looked up as positions and everything is divided by ``n``)."""
    dirs = term.directions
    if "suf" not in dirs:
        return "pre"
    if dirs == {"suf"} and term.pos == 0:
        return "suf"
    return "glob"


class Builder:
    """Accumulates features, residual coordinates, layers and per-head certificate entries."""

    def __init__(
        self, alphabet: tuple[str, ...], target: Target, masks: MaskMode, causal: bool
    ) -> None:
        self.alphabet = alphabet
        self.target = target
        self.gadgets = GADGETS[target]()
        self.nonstrict = masks is MaskMode.NONSTRICT
        self.causal = causal
        self.features: dict[str, None] = {}  # ordered set of canonical feature names
        self._canonical: dict[str, str] = {}
        self.coords: list[str] = []
        self.layers: dict[int, CraftLayer] = {}
        self.head_info: list[dict[str, Any]] = []
        self.values: dict[BNode, Value] = {}
        self.cache: dict[object, Any] = {}
        self.moduli: dict[Count, set[int]] = {}
        self.need_r: dict[Count, int] = {}
        self.rounded: dict[str, str] = {}  # approximate head output -> its rounded coordinate
        self.one = self.feat("1")

    # ---- residual bookkeeping
    def feat(self, name: str) -> str:
        """Register the position feature ``name``; its residual coordinate's name."""
        canonical = self._canonical.get(name)
        if canonical is None:
            canonical = self._canonical[name] = parse_feature(name).name
        self.features.setdefault(canonical, None)
        return f"pos:{canonical}"

    def new(self, prefix: str) -> str:
        name = f"{prefix}:{len(self.coords)}"
        self.coords.append(name)
        return name

    def layer(self, index: int) -> CraftLayer:
        return self.layers.setdefault(index, CraftLayer())

    def add_head(
        self,
        index: int,
        mask: Mask,
        plan: HeadPlan,
        output: dict[str, LinearForm],
        gadget: str,
        construction: str,
    ) -> AttentionHead:
        """Add one head (the plan's weighting, scores and τ under ``mask``) to layer ``index``
        and record its certificate entry."""
        layer = self.layer(index)
        tau = plan.tau.expression if plan.tau is not None else None
        head = AttentionHead(plan.weighting, mask, plan.query, plan.key, output, tau=tau)
        self.head_info.append(
            {
                "layer": index,
                "head": len(layer.heads),
                "gadget": gadget,
                "construction": construction,
                "theorem": self.label(construction),
                "weighting": str(plan.weighting),
                "mask": str(mask),
                "tau": tau,
                "tau_power": plan.tau.power if plan.tau is not None else 0,
                **plan.params,
                "bound": plan.bound.text,
                "error_bound": plan.bound.sup(),
                "_bound": plan.bound,
                **_float_entry(plan.float_limit),
            }
        )
        layer.heads.append(head)
        return head

    def uniform_head(
        self, index: int, mask: Mask, output: dict[str, LinearForm], gadget: str, construction: str
    ) -> None:
        """A uniform head (no scores): the exact average over the allowed positions."""
        plan = HeadPlan(self.gadgets.uniform, [], [], None, B.Exact("exact (uniform attention)"))
        self.add_head(index, mask, plan, output, gadget, construction)

    def add_neurons(self, index: int, neurons: list[Neuron]) -> None:
        self.layer(index).neurons.extend(neurons)

    def label(self, construction: str) -> str:
        """The head's label, from the constructions ↔ results table (compile/results.py)."""
        masks = "nonstrict" if self.nonstrict else "strict"
        return head_label(construction, str(self.target), masks, self.causal)

    # ---- requirements gathered before emission
    def prepare(self, nodes: list[BNode]) -> None:
        for node in nodes:
            if isinstance(node, BMod):
                for c, _ in node.term.counts:
                    self.moduli.setdefault(c, set()).add(node.modulus)
            if isinstance(node, BGeq) and category(node.term) == "glob":
                total = node.term.abs_count_coefs()
                for c, _ in node.term.counts:
                    self.need_r[c] = max(self.need_r.get(c, 0), total)

    # ---- nodes
    def value(self, node: BNode) -> Value:
        found = self.values.get(node)
        if found is None:
            found = self.values[node] = EMIT[type(node)](self, node)
        return found

    def _atom(self, node: BAtom) -> Value:
        return Value({f"tok:{node.symbol}": 1.0}, 0)

    def _const(self, node: BConst) -> Value:
        return Value({self.one: 1.0} if node.value else {}, 0)

    def _feat(self, node: BFeat) -> Value:
        if node.feature in ("[i=1]", "[i=n]"):
            return self.flag(node.feature)
        return Value({self.feat(node.feature): 1.0}, 0)

    def _not(self, node: BNot) -> Value:
        v = self.value(node.arg)
        if v.parts is not None:  # stay pending: 1 − form only if someone reads it
            return Value(
                None,
                v.ready,
                parts=v.parts,
                layer=v.layer,
                negated=not v.negated,
                materialize=lambda: lin_form(({self.one: 1.0}, 1.0), (v.form, -1.0)),
            )
        out = Value(lin_form(({self.one: 1.0}, 1.0), (v.form, -1.0)), v.ready)
        if v.approx is not None:
            out.approx = lin_form(({self.one: 1.0}, 1.0), (v.approx, -1.0))
            out.approx_ready, out.eps = v.approx_ready, v.eps
        return out

    def _and_node(self, node: BAnd) -> Value:
        return self.and_([self.value(a) for a in node.args])

    def and_(self, vs: list[Value]) -> Value:
        """``∧`` of exact Booleans: ``ReLU(Σ x − (k − 1))``. Inputs that are not yet rounded
        can be read unrounded (within ``eps``) when that saves a layer: with total error
        ``E <= 0.4`` the sum is ``>= k − E`` if all hold and ``<= k − 1 + E`` otherwise, and
        a two-ReLU step between those values is exactly 0/1."""
        fused = self._fuse_and(vs)
        if fused is not None:
            return fused
        k = len(vs)
        exact_layer = ffn_layer(max(v.ready for v in vs))
        early = [v.approx_ready if v.approx is not None else v.ready for v in vs]
        layer = ffn_layer(max(early))
        dst = self.new("and")
        if layer < exact_layer:
            use = [v.approx is not None and v.ready > 2 * layer + 1 for v in vs]
            err = sum(v.eps for v, u in zip(vs, use) if u)
            if err <= MAX_AND_EPS:
                form = lin_form(
                    *(((v.approx or {}) if u else v.form, 1.0) for v, u in zip(vs, use))
                )
                # the window [k − 1 + E_max, k − E_max] is valid for every error E <= E_max,
                # so softer heads than the certified ones stay exact too
                self.add_neurons(layer, ramp(form, k - 1.0 + MAX_AND_EPS, k - MAX_AND_EPS, dst))
                return Value({dst: 1.0}, 2 * layer + 2)
        form = lin_form(*((v.form, 1.0) for v in vs))
        self.add_neurons(exact_layer, [Neuron(form, -(k - 1.0), {dst: 1.0})])
        return Value({dst: 1.0}, 2 * exact_layer + 2)

    def pending(self, parts: list[Part], layer: int, prefix: str) -> Value:
        """A value computed by the ramps of ``parts`` in layer ``layer``'s feed-forward,
        written to a new coordinate ``prefix:k`` only if its exact form is read."""

        def materialize() -> LinearForm:
            dst = self.new(prefix)
            for part in parts:
                self.add_neurons(layer, ramp(part.x, part.lo, part.hi, dst))
            return {dst: 1.0}

        return Value(None, 2 * layer + 2, parts=parts, layer=layer, materialize=materialize)

    def _fuse_and(self, vs: list[Value]) -> Value | None:
        """``∧`` of one pending value and exact inputs ready for its feed-forward: fold the
        exact inputs into the pending ramps (``P ∧ e``: every part gets the conjuncts; ``¬P ∧
        e = e − Σ (part ∧ e)``), so the conjunction costs no extra layer."""
        pending = [v for v in vs if v.parts is not None]
        if len(pending) != 1:
            return None
        p = pending[0]
        others = [v for v in vs if v is not p]
        if any(v.ready > 2 * p.layer + 1 for v in others):
            return None
        extra = lin_form(*((v.form, 1.0) for v in others))
        assert p.parts is not None
        parts = [part.with_conjuncts(extra, len(others)) for part in p.parts]
        if not p.negated:
            return self.pending(parts, p.layer, "and")
        dst = self.new("and")
        neurons = [Neuron(extra, -(len(others) - 1.0), {dst: 1.0})]
        for part in parts:
            neurons += ramp(part.x, part.lo, part.hi, dst)
            neurons[-2].outputs[dst] *= -1
            neurons[-1].outputs[dst] *= -1
        self.add_neurons(p.layer, neurons)
        return Value({dst: 1.0}, 2 * p.layer + 2)

    # ---- [i = 1], [i = n]: position features, or Prop. 11 with non-strict masks
    def flag(self, name: str) -> Value:
        """``[i=1]``, ``[i=n]`` or ``[n=1]`` as an exact 0/1 value."""
        if not self.nonstrict:
            feature = "[i=1]*[i=n]" if name == "[n=1]" else name
            return Value({self.feat(feature): 1.0}, 0)
        key = ("flag", name)
        if key not in self.cache:
            if name == "[n=1]":
                self.cache[key] = self.and_([self.flag("[i=1]"), self.flag("[i=n]")])
            else:
                self.cache[key] = self._prop11(first=name == "[i=1]")
        return self.cache[key]

    def _prop11(self, first: bool) -> Value:
        """Yang et al. (arXiv:2412.09925v1) Prop. 11: uniform future (past) attention averaging
        ``(−1)^j`` gives exactly −1 at ``i = 1`` (±1 at ``i = n``) and a value in [−1/3, 1/3]
        elsewhere (an alternating sum is 0 or ±1 over at least 2 (3) positions); a ReLU ramp between
        1/2 and 9/10 in ``|value|`` reads the flag exactly."""
        tmp = self.new("first_att" if first else "last_att")
        mask = Mask.FUTURE if first else Mask.PAST
        self.uniform_head(
            0,
            mask,
            {tmp: {self.feat("(-1)^i"): 1.0}},
            "first" if first else "last",
            "first" if first else "last",
        )
        parts = [Part({tmp: -1.0}, 0.5, 0.9, 1.0)]
        if not first:
            parts.append(Part({tmp: 1.0}, 0.5, 0.9, 1.0))
        return self.pending(parts, 0, "first" if first else "last")

    # ---- Y X S U P F
    def _shift(self, node: BShift) -> Value:
        if self.nonstrict and node.strict:
            if node.pred != TRUE:
                raise TypeError("strict shifts with a predicate are lowered to Y/X of one")
            return self._parity_shift(node)
        return self._head_shift(node)

    @staticmethod
    def _shift_construction(node: BShift) -> str:
        if not node.strict:
            return "nonstrict-shift"
        return "strict-shift-yx" if node.pred == TRUE else "strict-shift-su"

    def _head_shift(self, node: BShift) -> Value:
        """One head attends to the nearest position where the predicate holds (``val``
        implies ``pred``, so "no witness" reads as false)."""
        p, v = self.value(node.pred), self.value(node.val)
        layer = att_layer(max(p.ready, v.ready))
        past = node.direction == "past"
        plan = self.gadgets.shift(self.feat, p.form, past, node.strict)
        gadget = ("shift-past" if past else "shift-future") + ("" if node.strict else "-nonstrict")
        mask = shift_mask(past, node.strict)
        theorem = self._shift_construction(node)
        if plan.bound.exact:
            dst = self.new("shift")
            self.add_head(layer, mask, plan, {dst: dict(v.form)}, gadget, theorem)
            return Value({dst: 1.0}, 2 * layer + 1)
        tmp, dst = self.new("shift_att"), self.new("shift")
        self.add_head(layer, mask, plan, {tmp: dict(v.form)}, gadget, theorem)
        self.add_neurons(layer, round_bool(tmp, dst))
        self.rounded[tmp] = dst
        eps = plan.bound.sup()
        return Value({dst: 1.0}, 2 * layer + 2, {tmp: 1.0}, 2 * layer + 1, eps)

    def _parity_pair(
        self, layer: int, past: bool
    ) -> list[tuple[AttentionHead, str, LinearForm, float]]:
        """The two heads of Yang et al. (arXiv:2412.09925v1) Thms. 12/13 at ``layer``, shared by
        every ``Y`` (``X``) computed there: one attends to the nearest even ``j`` (``j ≤ i`` for Y,
        ``j ≥ i`` for X), the other to the nearest odd one. Each also averages its own parity
        flag ``[j even]`` / ``[j odd]``: a gate that is 0 where no such position exists (i = 1
        for Y, i = n for X) and ≈ 1 elsewhere. Returns ``(head, gate, [i of the other
        parity], ε)`` per head."""
        key = ("parity", layer, past)
        if key not in self.cache:
            alt = self.feat("(-1)^i")
            pair = []
            for even in (True, False):
                plan = self.gadgets.parity(self.feat, past, even)
                gate = self.new("parity_gate")
                parity_j = {self.one: 0.5, alt: 0.5 if even else -0.5}
                at_i = {self.one: 0.5, alt: -0.5 if even else 0.5}
                gadget = ("prev" if past else "next") + ("-even" if even else "-odd")
                theorem = "parity-pair"
                head = self.add_head(
                    layer, shift_mask(past, False), plan, {gate: parity_j}, gadget, theorem
                )
                pair.append((head, gate, at_i, plan.bound.sup()))
            self.cache[key] = pair
        return self.cache[key]

    def _parity_shift(self, node: BShift) -> Value:
        """``Y φ`` / ``X φ`` with non-strict masks: at odd ``i`` the even-parity head's value
        (the nearest even position is ``i ∓ 1``), at even ``i`` the odd-parity head's. Per
        head ``x = value + gate + [i has the other parity]`` is ``>= 3 − 2ε`` iff all three
        hold and ``<= 2 + ε`` otherwise; a ramp from 2.3 to 2.7 reads it exactly for any
        ``ε <= 0.15`` (the proven ε is 0.0224: the slack keeps softer τ exact too)."""
        v = self.value(node.val)
        layer = att_layer(v.ready)
        parts = []
        for head, gate, at_i, eps in self._parity_pair(layer, node.direction == "past"):
            assert 2 * eps <= PARITY_SLACK  # the proven bound leaves the ramp's window free
            tmp = self.new("parity_att")
            head.output[tmp] = dict(v.form)
            x = lin_form(({tmp: 1.0}, 1.0), ({gate: 1.0}, 1.0), (at_i, 1.0))
            parts.append(Part(x, 2.0 + PARITY_SLACK, 3.0 - PARITY_SLACK, 3.0))
        return self.pending(parts, layer, "prev" if node.direction == "past" else "next")

    # ---- B-RASP attention: unique-hard selection with query classes (compile/select.py)
    def _sum(self, node: BSum) -> Value:
        """A sum of mutually exclusive Booleans: the sum of their forms, or, when all are
        pending in the same feed-forward, one pending value with all their ramps."""
        vs = [self.value(a) for a in node.args]
        pending = all(v.parts is not None and not v.negated for v in vs)
        if pending and len({v.layer for v in vs}) == 1:
            parts = [part for v in vs for part in (v.parts or [])]
            return self.pending(parts, vs[0].layer, "sum")
        return Value(lin_form(*((v.form, 1.0) for v in vs)), max(v.ready for v in vs))

    def _select(self, node: BSelect) -> Value:
        """``gate_k(i) ∧ column(j*)``: a ramp of ``gate + read`` in the head's feed-forward
        (the read is 0 where class k has no witness; where i is in another class the gate is
        0 and ``gate + read <= 1``)."""
        layer, reads = self._attention(node.att)
        gate = self.value(node.att.gates[node.k])
        x = lin_form((gate.form, 1.0), ({reads[(node.k, node.column)]: 1.0}, 1.0))
        part = Part(x, 1.0 + SELECT_SLACK, 2.0 - SELECT_SLACK, 2.0)
        return self.pending([part], layer, "select")

    def _attention(self, att: Attention) -> tuple[int, dict[tuple[int, int], str]]:
        """The head(s) of one attention operation: one head with the gates as query when
        the target can multiply them into the score (``gated_queries``), else one head per
        class. Returns the layer and the coordinate holding each ``(class, column)`` read."""
        key = ("attention", att)
        if key in self.cache:
            return self.cache[key]
        needed = [*att.gates, *att.keys, *att.columns]
        layer = att_layer(max(self.value(x).ready for x in needed))
        groups = [list(range(len(att.gates)))]
        if len(att.gates) > 1 and not self.gadgets.gated_queries:
            groups = [[k] for k in range(len(att.gates))]
        leftmost = att.tie.value == "leftmost"
        gadget = "select-leftmost" if leftmost else "select-rightmost"
        reads: dict[tuple[int, int], str] = {}
        for group in groups:
            gates = [self.value(att.gates[k]).form for k in group]
            keys = [self.value(att.keys[k]).form for k in group]
            plan = self.gadgets.select(self.feat, gates, keys, leftmost, att.mask)
            plan.params["classes"] = len(group)
            output: dict[str, LinearForm] = {}
            for c in sorted({c for k, c in att.reads if k in group}):
                tmp = self.new("select_att")
                output[tmp] = dict(self.value(att.columns[c]).form)
                for k in group:
                    reads[(k, c)] = tmp
            self.add_head(layer, att.mask, plan, output, gadget, "select")
            self.head_info[-1]["implements"] = att.label
        self.cache[key] = (layer, reads)
        return self.cache[key]

    # ---- counting
    def count_fraction(self, count: Count) -> Value:
        """``C/N``: the count divided by the number of positions it ranges over (``i`` for
        ``#<``, ``n − i + 1`` for ``#>``), exactly, by a uniform head."""
        key = ("cf", count)
        if key not in self.cache:
            v = self.value(count.arg)
            layer = att_layer(v.ready)
            dst = self.new("count")
            mask = Mask.FUTURE if count.direction == "pre" else Mask.PAST
            theorem = "count"
            self.uniform_head(layer, mask, {dst: dict(v.form)}, f"count-{count.direction}", theorem)
            self.cache[key] = Value({dst: 1.0}, 2 * layer + 1)
        return self.cache[key]

    def inv_den(self, direction: str) -> Value:
        """``1/N``: the feature ``1/i`` (prefix) or ``1/(n − i + 1)`` by a uniform past head
        on ``[j = n]`` (the remark after Yang et al. (arXiv:2412.09925v1) Prop. 11)."""
        if direction == "pre":
            return Value({self.feat("1/i"): 1.0}, 0)
        key = ("inv", "suf")
        if key not in self.cache:
            last = self.flag("[i=n]")
            layer = att_layer(last.ready)
            dst = self.new("inv_suffix")
            self.uniform_head(
                layer,
                Mask.PAST,
                {dst: dict(last.form)},
                "inverse-suffix-length",
                "inverse-suffix",
            )
            self.cache[key] = Value({dst: 1.0}, 2 * layer + 1)
        return self.cache[key]

    def _sign(
        self,
        x: LinearForm,
        ready: int,
        kind: str,
        bound_abs: float,
        corrections: list[tuple[Value, int]],
        coef_sum: float,
    ) -> Value:
        """``[x > 0]`` for a value ``x`` with ``n·|x| >= g`` (kind ``glob``) or ``N·|x| >= g``.

        One head puts the mass on the even positions iff ``x > 0`` (the target's scores) and
        reads ``[j even]``; the feed-forward rounds it, except where there is no even
        position (``n = 1``, or ``i = 1`` for ``pre``): there ``x`` is itself at least 1/4
        away from 0 and a gated step decides. ``corrections`` are ``(z, c)`` pairs adding
        ``−c (1 − z)/n`` to ``x`` (retrieval of a zero count).
        """
        pre = kind == "pre"
        gate = self.flag("[i=1]" if pre else "[n=1]")
        ready = max([ready, *(z.ready for z, _ in corrections)])
        layer = max(att_layer(ready), ffn_layer(gate.ready))
        one_minus = [(lin_form(({self.one: 1.0}, 1.0), (z.form, -1.0)), c) for z, c in corrections]
        plan = self.gadgets.sign(self.feat, x, one_minus, kind, linear_key=self.nonstrict)
        if kind == "glob":  # x is a sum of retrieved values: O(1) magnitudes, margin 0.3/n
            plan.float_limit = B.FloatLimit("linear", 40.0 * max(coef_sum, 1.0))
        else:  # x from uniform counts C/N, each summed exactly and divided once
            plan.float_limit = B.sign_float(coef_sum, len(x) + len(corrections))
        alt = self.feat("(-1)^i")
        tmp, dst = self.new("sign_att"), self.new("sign")
        theorem = "sign"
        mask = Mask.FUTURE if pre else Mask.NONE
        self.add_head(layer, mask, plan, {tmp: {self.one: 0.5, alt: 0.5}}, f"sign-{kind}", theorem)
        x_eff = lin_form((x, 1.0), *((omz, -float(c)) for omz, c in one_minus))
        big = bound_abs + 3.0
        gated = lin_form((x_eff, 1.0), (gate.form, big))
        read = lin_form(({tmp: 1.0}, 3.0), (gate.form, -3.0))
        neurons = [
            Neuron(read, -1.0, {dst: 1.0}),
            Neuron(dict(read), -2.0, {dst: -1.0}),
            Neuron(gated, 0.25 - big, {dst: 2.0}),
            Neuron(dict(gated), -0.25 - big, {dst: -2.0}),
        ]
        self.add_neurons(layer, neurons)
        self.rounded[tmp] = dst
        return Value({dst: 1.0}, 2 * layer + 2)

    def _geq(self, node: BGeq) -> Value:
        term = node.term
        kind = category(term)
        bound_abs = float(term.abs_count_coefs() + abs(term.pos) + abs(term.const) + 1)
        half = term.const + 0.5
        if kind in ("pre", "suf"):
            parts: list[tuple[LinearForm, float]] = []
            ready = 0
            for c, k in term.items():
                cf = self.count_fraction(c)
                parts.append((cf.form, float(k)))
                ready = max(ready, cf.ready)
            inv = self.inv_den(kind)
            ready = max(ready, inv.ready)
            parts.append((inv.form, half))
            if term.pos:
                parts.append(({self.one: 1.0}, float(term.pos)))
            coefs = float(term.abs_count_coefs() + abs(term.pos))
            return self._sign(lin_form(*parts), ready, kind, bound_abs, [], coefs)
        parts = [({self.feat("i/n"): 1.0}, float(term.pos)), ({self.feat("1/n"): 1.0}, half)]
        ready = 0
        corrections = []
        for c, k in term.items():
            r = self.retrieve(c)
            parts.append((r["R"].form, float(k)))
            ready = max(ready, r["R"].ready)
            corrections.append((r["z"], k))
        coefs = float(term.abs_count_coefs() + abs(term.pos))
        return self._sign(lin_form(*parts), ready, "glob", bound_abs, corrections, coefs)

    def retrieve(self, count: Count) -> dict[str, Any]:
        """Table lookup of the count ``C`` as a position (the target's scores are largest at
        ``j = C``); the head reads ``j/n`` (``R ≈ C/n``) and the residues ``[j mod m = ρ]``
        there. ``C = 0`` has no position: it lands on ``j = 1``, and ``z = [C >= 1]`` (a sign
        test) corrects it."""
        key = ("ret", count)
        if key in self.cache:
            return self.cache[key]
        cf = self.count_fraction(count)
        inv = self.inv_den(count.direction)
        layer = att_layer(max(cf.ready, inv.ready))
        mask = Mask.FUTURE if count.direction == "pre" else Mask.NONE
        lam = B.choose_retrieval_lambda(self.need_r.get(count, 0))
        plan = self.gadgets.lookup(self.feat, cf.form, inv.form, lam, bounded_1j=self.nonstrict)
        soft = not plan.bound.exact
        output: dict[str, LinearForm] = {}
        result: dict[str, Any] = {"res": {}}
        if count in self.need_r:
            r_name = self.new("retrieved")
            output[r_name] = {self.feat("i/n"): 1.0}
        tmps: dict[tuple[int, int], str] = {}
        for m in sorted(self.moduli.get(count, ())):
            for rho in range(m):
                tmps[(m, rho)] = self.new(f"residue{m}_att" if soft else f"residue{m}")
                output[tmps[(m, rho)]] = {self.feat(f"[i mod {m} = {rho}]"): 1.0}
        theorem = "lookup"
        self.add_head(layer, mask, plan, output, f"lookup-{count.direction}", theorem)
        if count in self.need_r:
            result["R"] = Value({r_name: 1.0}, 2 * layer + 1)
        for (m, rho), tmp in tmps.items():
            if soft:
                dst = self.new(f"residue{m}")
                self.add_neurons(layer, round_bool(tmp, dst))
                self.rounded[tmp] = dst
                result["res"][(m, rho)] = Value({dst: 1.0}, 2 * layer + 2)
            else:
                result["res"][(m, rho)] = Value({tmp: 1.0}, 2 * layer + 1)
        result["z"] = self.value(mk_geq(Lin.make({count: 1}, 0, -1)))
        self.cache[key] = result
        return result

    def _mod(self, node: BMod) -> Value:
        """``MOD(m, r)`` of a term with counts: one FFN sums AND-neurons over the residue
        combinations of the counts (and of ``i``) that satisfy ``Σ c ρ + c_0 ≡ r``."""
        m, term = node.modulus, node.term
        variables: list[tuple[int, list[Value]]] = []  # (coefficient, residue values 0..m-1)
        for c, k in term.items():
            r = self.retrieve(c)
            z = r["z"]
            forms = []
            for rho in range(m):
                rr = r["res"][(m, rho)]
                if rho == 0:  # C = 0 reads residue 1 (j = 1): move it to residue 0
                    f = lin_form((rr.form, 1.0), ({self.one: 1.0}, 1.0), (z.form, -1.0))
                elif rho == 1:
                    f = lin_form((rr.form, 1.0), (z.form, 1.0), ({self.one: 1.0}, -1.0))
                else:
                    f = dict(rr.form)
                forms.append(Value(f, max(rr.ready, z.ready)))
            variables.append((k, forms))
        if term.pos:
            residues = [Value({self.feat(f"[i mod {m} = {rho}]"): 1.0}, 0) for rho in range(m)]
            variables.append((term.pos, residues))
        ready = max(v.ready for _, forms in variables for v in forms)
        layer = ffn_layer(ready)
        dst = self.new("mod")
        neurons = []
        for combo in itertools.product(range(m), repeat=len(variables)):
            total = term.const + sum(k * rho for (k, _), rho in zip(variables, combo))
            if total % m != node.residue:
                continue
            form = lin_form(*((forms[rho].form, 1.0) for (_, forms), rho in zip(variables, combo)))
            neurons.append(Neuron(form, -(len(variables) - 1.0), {dst: 1.0}))
        self.add_neurons(layer, neurons)
        return Value({dst: 1.0}, 2 * layer + 2)


EMIT: dict[type, Callable[[Builder, Any], Value]] = {
    BAtom: Builder._atom,
    BConst: Builder._const,
    BFeat: Builder._feat,
    BNot: Builder._not,
    BAnd: Builder._and_node,
    BShift: Builder._shift,
    BGeq: Builder._geq,
    BMod: Builder._mod,
    BSum: Builder._sum,
    BSelect: Builder._select,
}
"""One gadget per IR node class (the operator-coverage test checks it is complete)."""

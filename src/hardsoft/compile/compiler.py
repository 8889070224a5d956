"""The compiler: formula → IR DAG → scheduled craft blocks → weights → certificate.

:func:`compile_formula` lowers the formula to the IR of :mod:`hardsoft.compile.ir` (every
distinct subformula once), then walks the DAG children-first. Each node becomes one gadget
(one attention head and/or a few ReLU neurons) placed at the earliest layer where its inputs
exist: an attention head of layer ``L`` reads what is ready after layer ``L − 1``, a neuron of
layer ``L`` also reads that layer's attention outputs. Stages count sublayers: inputs are at
stage 0, layer ``L``'s attention output at ``2L + 1`` and its feed-forward output at
``2L + 2``. Every Boolean node ends as an exact 0/1 linear form of the residual stream.

The three targets differ only in the attention gadgets (see :mod:`hardsoft.compile.bounds` and
docs/compiler.md): ``hard`` uses unique-hard (leftmost/rightmost) heads and average-hard heads
for counting, exactly; ``soft-temperature`` uses softmax with τ(n) and bounded position
features; ``soft-pe`` uses softmax with τ = 1 and unbounded position features.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

from hardsoft import validate
from hardsoft.compile import bounds as B
from hardsoft.compile.certificate import build_certificate
from hardsoft.compile.ir import (
    BAnd,
    BAtom,
    BConst,
    BFeat,
    BGeq,
    BMod,
    BNode,
    BNot,
    BShift,
    Count,
    Lin,
    ir_nodes,
    lower,
    mk_geq,
)
from hardsoft.craft import (
    AttentionHead,
    CraftLayer,
    LinearForm,
    Neuron,
    assemble,
    round_bool,
    standard_residual,
    token_name,
)
from hardsoft.errors import HardsoftError
from hardsoft.logic import parse
from hardsoft.logic.syntax import Formula, to_text
from hardsoft.model.features import parse_feature
from hardsoft.model.transformer import Transformer

TARGETS = ("hard", "soft-temperature", "soft-pe")
MAX_MOD_NEURONS = 20000


@dataclass
class Value:
    """A node's value: an exact (or, for ``R`` retrievals, approximate) linear form of the
    residual, available from stage ``ready`` on."""

    form: LinearForm
    ready: int
    approx: LinearForm | None = None
    approx_ready: int = 0
    eps: float = 0.0
    """``approx``: the unrounded head output (within ``eps`` of the exact value), ready one
    stage earlier, so a ``&`` can read it in the same layer's feed-forward."""


MAX_AND_EPS = 0.4
"""A ``&`` may combine approximate inputs whose errors sum to at most this (< 1/2)."""


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


class Builder:
    """Accumulates features, residual coordinates, layers and per-head certificate entries."""

    def __init__(self, alphabet: tuple[str, ...], target: str, causal: bool) -> None:
        self.alphabet = alphabet
        self.target = target
        self.causal = causal
        self.features: list[str] = []
        self.coords: list[str] = []
        self.layers: dict[int, CraftLayer] = {}
        self.head_info: list[dict] = []
        self.values: dict[BNode, Value] = {}
        self.cache: dict[object, object] = {}
        self.moduli: dict[Count, set[int]] = {}
        self.need_r: dict[Count, int] = {}
        self.rounded: dict[str, str] = {}  # approximate head output -> its rounded coordinate
        self.one = self.feat("1")

    # ---- residual bookkeeping
    def feat(self, name: str) -> str:
        canonical = parse_feature(name).name
        if canonical not in self.features:
            self.features.append(canonical)
        return f"pos:{canonical}"

    def new(self, prefix: str) -> str:
        name = f"{prefix}:{len(self.coords)}"
        self.coords.append(name)
        return name

    def layer(self, index: int) -> CraftLayer:
        return self.layers.setdefault(index, CraftLayer())

    def add_head(self, index: int, head: AttentionHead, info: dict) -> None:
        layer = self.layer(index)
        info = {
            "layer": index,
            "head": len(layer.heads),
            "weighting": head.weighting,
            "mask": head.mask,
            "tau": head.tau,
            **info,
        }
        layer.heads.append(head)
        self.head_info.append(info)

    def add_neurons(self, index: int, neurons: list[Neuron]) -> None:
        self.layer(index).neurons.extend(neurons)

    @property
    def soft(self) -> bool:
        return self.target != "hard"

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
            found = self._emit(node)
            self.values[node] = found
        return found

    def _emit(self, node: BNode) -> Value:
        if isinstance(node, BAtom):
            return Value({token_name(node.symbol): 1.0}, 0)
        if isinstance(node, BConst):
            return Value({self.one: 1.0} if node.value else {}, 0)
        if isinstance(node, BFeat):
            return Value({self.feat(node.feature): 1.0}, 0)
        if isinstance(node, BNot):
            v = self.value(node.arg)
            out = Value(lin_form(({self.one: 1.0}, 1.0), (v.form, -1.0)), v.ready)
            if v.approx is not None:
                out.approx = lin_form(({self.one: 1.0}, 1.0), (v.approx, -1.0))
                out.approx_ready, out.eps = v.approx_ready, v.eps
            return out
        if isinstance(node, BAnd):
            return self._and([self.value(a) for a in node.args])
        if isinstance(node, BShift):
            return self._shift(node)
        if isinstance(node, BGeq):
            return self._geq(node.term)
        if isinstance(node, BMod):
            return self._mod(node)
        raise TypeError(f"unknown IR node {node!r}")

    def _and(self, vs: list[Value]) -> Value:
        """``∧`` of exact Booleans: ``ReLU(Σ x − (k − 1))``. Inputs that are not yet rounded
        can be read unrounded (within ``eps``) when that saves a layer: with total error
        ``E <= 0.4`` the sum is ``>= k − E`` if all hold and ``<= k − 1 + E`` otherwise, and
        a two-ReLU step between those values is exactly 0/1."""
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
                    *((v.approx if u else v.form, 1.0) for v, u in zip(vs, use))  # type: ignore[misc]
                )
                width = 1.0 - 2.0 * err
                self.add_neurons(
                    layer,
                    [
                        Neuron(form, -(k - 1.0 + err), {dst: 1.0 / width}),
                        Neuron(dict(form), -(k - err), {dst: -1.0 / width}),
                    ],
                )
                return Value({dst: 1.0}, 2 * layer + 2)
        form = lin_form(*((v.form, 1.0) for v in vs))
        self.add_neurons(exact_layer, [Neuron(form, -(k - 1.0), {dst: 1.0})])
        return Value({dst: 1.0}, 2 * exact_layer + 2)

    # ---- Y X S U P F
    def _shift(self, node: BShift) -> Value:
        p, v = self.value(node.pred), self.value(node.val)
        layer = att_layer(max(p.ready, v.ready))
        past = node.direction == "past"
        mask = "strict-future" if past else "strict-past"
        gadget = "shift-past" if past else "shift-future"
        if self.target == "hard":
            dst = self.new("shift")
            head = AttentionHead(
                "rightmost" if past else "leftmost",
                mask,
                [{self.one: 1.0}],
                [dict(p.form)],
                {dst: dict(v.form)},
            )
            self.add_head(layer, head, {"gadget": gadget, "error_bound": 0.0, "bound": "exact"})
            return Value({dst: 1.0}, 2 * layer + 1)
        lam = B.SHIFT_LAMBDA
        tmp, dst = self.new("shift_att"), self.new("shift")
        if self.target == "soft-temperature":
            sign = 0.5 if past else -0.5
            query = [{self.one: 1.0}]
            key = [lin_form((p.form, 1.0), ({self.feat("i/n"): sign}, 1.0))]
            tau: str | None = f"1/({B.fmt_lambda(lam)}*n)"
        else:
            big = self.feat("i") if past else self.feat("n")
            query = [{big: lam}, {self.one: lam / 2 if past else -lam / 2}]
            key = [dict(p.form), {self.feat("i"): 1.0}]
            tau = None
        head = AttentionHead("softmax", mask, query, key, {tmp: dict(v.form)}, tau=tau)
        self.add_head(
            layer,
            head,
            {
                "gadget": gadget,
                "lambda": lam,
                "bound": "q/(1-q) + (n-1)*exp(-lambda*n/2 - lambda), q = exp(-lambda/2)",
                "error_bound": B.shift_bound_sup(lam),
                "_bound_fn": ("shift", lam),
            },
        )
        self.add_neurons(layer, round_bool(tmp, dst))
        self.rounded[tmp] = dst
        return Value(
            {dst: 1.0},
            2 * layer + 2,
            approx={tmp: 1.0},
            approx_ready=2 * layer + 1,
            eps=B.shift_bound_sup(lam),
        )

    # ---- counting
    def count_fraction(self, count: Count) -> Value:
        """``C/N``: the count divided by the number of positions it ranges over (``i`` for
        ``#<``, ``n − i + 1`` for ``#>``), exactly, by a uniform head."""
        key = ("cf", count)
        if key not in self.cache:
            v = self.value(count.arg)
            layer = att_layer(v.ready)
            dst = self.new("count")
            mask = "future" if count.direction == "pre" else "past"
            weighting = "average" if self.target == "hard" else "softmax"
            head = AttentionHead(weighting, mask, [], [], {dst: dict(v.form)})
            self.add_head(
                layer,
                head,
                {
                    "gadget": f"count-{count.direction}",
                    "error_bound": 0.0,
                    "bound": "exact (uniform attention)",
                },
            )
            self.cache[key] = Value({dst: 1.0}, 2 * layer + 1)
        return self.cache[key]  # type: ignore[return-value]

    def inv_den(self, direction: str) -> Value:
        """``1/N``: the feature ``1/i`` (prefix) or ``1/(n − i + 1)`` by a uniform past head."""
        if direction == "pre":
            return Value({self.feat("1/i"): 1.0}, 0)
        key = ("inv", "suf")
        if key not in self.cache:
            dst = self.new("inv_suffix")
            weighting = "average" if self.target == "hard" else "softmax"
            head = AttentionHead(weighting, "past", [], [], {dst: {self.feat("[i=n]"): 1.0}})
            self.add_head(
                0,
                head,
                {
                    "gadget": "inverse-suffix-length",
                    "error_bound": 0.0,
                    "bound": "exact (uniform attention)",
                },
            )
            self.cache[key] = Value({dst: 1.0}, 1)
        return self.cache[key]  # type: ignore[return-value]

    def _sign(
        self,
        x: LinearForm,
        ready: int,
        kind: str,
        g: float,
        bound_abs: float,
        corrections: list[tuple[Value, int]],
    ) -> Value:
        """``[x > 0]`` for a value ``x`` with ``n·|x| >= g`` (kind ``glob``) or ``N·|x| >= g``.

        One head: scores ``x·(−1)^j`` (times ``λ n`` through τ or the feature ``n·(−1)^j``)
        over all positions (future positions only for ``pre``) put the mass on the even
        positions iff ``x > 0``; the value ``[j even]`` reads it. The feed-forward rounds it,
        except where there is no even position (``n = 1``, or ``i = 1`` for ``pre``): there
        ``x`` is itself at least 1/4 away from 0 and a gated step decides. ``corrections``
        are ``(1 − z, c)`` pairs adding ``−c (1 − z)/n`` to ``x`` (retrieval of a zero count).
        """
        ready = max([ready, *(z.ready for z, _ in corrections)])
        layer = att_layer(ready)
        pre = kind == "pre"
        mask = "future" if pre else "none"
        gate = self.feat("[i=1]") if pre else self.feat("[i=1]*[i=n]")
        alt = self.feat("(-1)^i")
        lam = B.SIGN_LAMBDA if kind != "glob" else 2 * B.SIGN_LAMBDA
        query = [dict(x)]
        if self.target == "soft-pe":
            key = [{self.feat("n*(-1)^i"): lam}]
        else:
            key = [{alt: 1.0}]
        one_minus = []
        for z, c in corrections:
            omz = lin_form(({self.one: 1.0}, 1.0), (z.form, -1.0))
            one_minus.append((omz, c))
            query.append(omz)
            if self.target == "soft-pe":
                key.append({alt: -c * lam})
            else:
                key.append({self.feat("1/n*(-1)^i"): -float(c)})
        tmp, dst = self.new("sign_att"), self.new("sign")
        output = {tmp: {self.one: 0.5, alt: 0.5}}
        if self.target == "hard":
            head = AttentionHead("average", mask, query, key, output)
            info = {"gadget": f"sign-{kind}", "error_bound": 0.0, "bound": "exact"}
        else:
            tau = f"1/({B.fmt_lambda(lam)}*n)" if self.target == "soft-temperature" else None
            head = AttentionHead("softmax", mask, query, key, output, tau=tau)
            info = {
                "gadget": f"sign-{kind}",
                "lambda": lam,
                "g": g,
                "bound": "2*exp(-2*g*lambda)",
                "error_bound": B.sign_bound(g, lam),
            }
        self.add_head(layer, head, info)
        x_eff = lin_form((x, 1.0), *((omz, -float(c)) for omz, c in one_minus))
        big = bound_abs + 3.0
        gated = lin_form((x_eff, 1.0), ({gate: big}, 1.0))
        neurons = [
            Neuron({tmp: 3.0, gate: -3.0}, -1.0, {dst: 1.0}),
            Neuron({tmp: 3.0, gate: -3.0}, -2.0, {dst: -1.0}),
            Neuron(gated, 0.25 - big, {dst: 2.0}),
            Neuron(dict(gated), -0.25 - big, {dst: -2.0}),
        ]
        self.add_neurons(layer, neurons)
        self.rounded[tmp] = dst
        return Value({dst: 1.0}, 2 * layer + 2)

    def _geq(self, term: Lin) -> Value:
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
            return self._sign(lin_form(*parts), ready, kind, 0.5, bound_abs, [])
        parts = [({self.feat("i/n"): 1.0}, float(term.pos)), ({self.feat("1/n"): 1.0}, half)]
        ready = 0
        corrections = []
        for c, k in term.items():
            r = self.retrieve(c)
            parts.append((r["R"].form, float(k)))
            ready = max(ready, r["R"].ready)
            corrections.append((r["z"], k))
        return self._sign(lin_form(*parts), ready, "glob", 0.3, bound_abs, corrections)

    def retrieve(self, count: Count) -> dict:
        """Table lookup of the count ``C`` as a position: score ``(C² − (j − C)²)/(N n²)``
        is largest at ``j = C``; the head reads ``j/n`` (``R ≈ C/n``) and the residues
        ``[j mod m = ρ]`` there. ``C = 0`` has no position: it lands on ``j = 1``, and
        ``z = [C >= 1]`` (a sign test) corrects it."""
        key = ("ret", count)
        if key in self.cache:
            return self.cache[key]  # type: ignore[return-value]
        cf = self.count_fraction(count)
        inv = self.inv_den(count.direction)
        layer = att_layer(max(cf.ready, inv.ready))
        mask = "future" if count.direction == "pre" else "none"
        query = [lin_form((cf.form, 2.0)), dict(inv.form)]
        lam = B.choose_retrieval_lambda(self.need_r.get(count, 0))
        if self.target == "soft-pe":
            key_forms = [{self.feat("n*i"): lam}, {self.feat("n*i^2"): -lam}]
        else:
            key_forms = [{self.feat("i/n*1/n"): 1.0}, {self.feat("(i/n)^2"): -1.0}]
        output: dict[str, LinearForm] = {}
        result: dict = {"res": {}}
        if count in self.need_r:
            r_name = self.new("retrieved")
            output[r_name] = {self.feat("i/n"): 1.0}
        tmps: dict[tuple[int, int], str] = {}
        for m in sorted(self.moduli.get(count, ())):
            for rho in range(m):
                tmps[(m, rho)] = self.new(f"residue{m}_att" if self.soft else f"residue{m}")
                output[tmps[(m, rho)]] = {self.feat(f"[i mod {m} = {rho}]"): 1.0}
        if self.target == "hard":
            head = AttentionHead("leftmost", mask, query, key_forms, output)
            info = {"gadget": f"lookup-{count.direction}", "error_bound": 0.0, "bound": "exact"}
        else:
            tau = f"1/({B.fmt_lambda(lam)}*n**3)" if self.target == "soft-temperature" else None
            head = AttentionHead("softmax", mask, query, key_forms, output, tau=tau)
            info = {
                "gadget": f"lookup-{count.direction}",
                "lambda": lam,
                "bound": (
                    "residues: 2*sum_d exp(-lambda*d^2); value j/n: (2/n)*sum_d d*exp(-lambda*d^2)"
                ),
                "error_bound": B.retrieval_residue_bound(lam),
                "value_error_times_n": B.retrieval_value_bound(lam),
            }
        self.add_head(layer, head, info)
        if count in self.need_r:
            result["R"] = Value({r_name: 1.0}, 2 * layer + 1)
        for (m, rho), tmp in tmps.items():
            if self.soft:
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
        m, term = node.modulus, node.term
        variables: list[tuple[int, list[Value]]] = []  # (coefficient, residue forms 0..m-1)
        for c, k in term.items():
            r = self.retrieve(c)
            z = r["z"]
            forms = []
            for rho in range(m):
                rr = r["res"][(m, rho)]
                if rho == 0:
                    f = lin_form((rr.form, 1.0), ({self.one: 1.0}, 1.0), (z.form, -1.0))
                elif rho == 1:
                    f = lin_form((rr.form, 1.0), (z.form, 1.0), ({self.one: 1.0}, -1.0))
                else:
                    f = dict(rr.form)
                forms.append(Value(f, max(rr.ready, z.ready)))
            variables.append((k, forms))
        if term.pos:
            variables.append(
                (term.pos, [Value({self.feat(f"[i mod {m} = {rho}]"): 1.0}, 0) for rho in range(m)])
            )
        if len(variables) == 1 and not term.counts:
            k, forms = variables[0]
            hits = [rho for rho in range(m) if (k * rho + term.const) % m == node.residue]
            return Value(lin_form(*((forms[rho].form, 1.0) for rho in hits)), 0)
        if m ** len(variables) > MAX_MOD_NEURONS:
            raise HardsoftError(
                f"MOD({m}, {node.residue}) of a term with {len(variables)} counts needs "
                f"{m ** len(variables)} neurons; split the term"
            )
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


EXACT_FLOAT64 = 2**50
"""Largest term magnitude compiled: float64 holds integers exactly only below 2^53, and the
gadgets scale counts by 1/i; a constant of 2^52 already made compiled models wrong."""


def _require_float64_exact(formula: Formula, n: int) -> None:
    """Refuse a formula whose counting terms can exceed :data:`EXACT_FLOAT64` in magnitude at
    the certificate's length ``n`` (the evaluator computes them exactly; the weights could
    not), instead of emitting a model that disagrees with it."""
    from hardsoft.logic.semantics import magnitude_bound

    bound = magnitude_bound(formula, n)
    if bound > EXACT_FLOAT64:
        raise HardsoftError(
            f"the formula's terms reach about {float(bound):.3g} at n = {n}, beyond what float64 "
            f"weights represent exactly (2^50); use smaller constants"
        )


def compile_formula(
    formula: Formula | str,
    alphabet: str | tuple[str, ...] | list[str],
    target: str = "hard",
    causal: bool = False,
    *,
    n: int = 1000,
    name: str = "",
) -> Transformer:
    """Compile ``formula`` into a transformer whose output coordinate 0 is the formula's value
    (exactly 0 or 1) at every position of every input over ``alphabet``.

    ``target``: ``hard`` | ``soft-temperature`` | ``soft-pe`` (see the module docstring).
    ``causal``: only future masks; formulas with ``X U F E last #> n`` are a HardsoftError.
    ``n``: the length at which the certificate evaluates τ(n) and the error bounds.
    The certificate is ``model.meta["certificate"]`` (saved with the model).
    """
    started = time.perf_counter()
    alpha = validate.alphabet(alphabet)
    if target not in TARGETS:
        raise HardsoftError(f"unknown target {target!r} (one of {', '.join(TARGETS)})")
    if isinstance(formula, str):
        formula = parse(formula, alphabet=alpha)
    _require_float64_exact(formula, n)
    root = lower(formula, alpha, causal=causal)
    nodes = ir_nodes(root)
    b = Builder(alpha, target, causal)
    b.prepare(nodes)
    for node in nodes:
        b.value(node)
    root_value = b.value(root)
    form = root_value.form
    if len(form) == 1 and next(iter(form.values())) == 1.0 and next(iter(form)) in b.coords:
        out = next(iter(form))
    else:
        layer = ffn_layer(root_value.ready)
        out = b.new("out")
        b.add_neurons(layer, [Neuron(dict(form), 0.0, {out: 1.0})])
    n_layers = max(b.layers) + 1
    layers = [b.layers.get(k, CraftLayer()) for k in range(n_layers)]
    residual = standard_residual(alpha, b.features)
    for c in b.coords:
        residual.add(c)
    text = to_text(formula)
    model = assemble(
        alphabet=alpha,
        position_features=b.features,
        residual=residual,
        layers=layers,
        outputs=[out],
        name=name or f"compiled[{target}{', causal' if causal else ''}]: {text}",
    )
    model.meta["certificate"] = build_certificate(
        model=model,
        formula=formula,
        alphabet=alpha,
        target=target,
        causal=causal,
        head_info=b.head_info,
        features=b.features,
        n=n,
        ir_size=len(nodes),
        output=out,
        seconds=time.perf_counter() - started,
    )
    model.meta["formula"] = text
    model.meta["kind"] = "compiled-formula"
    model.meta["rounded"] = dict(b.rounded)
    return model

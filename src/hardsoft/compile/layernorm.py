"""The ``soft-ln`` target: the counting fragment of Yang & Chiang (COLM 2024) compiled into a
future-masked softmax transformer with τ = 1 and post layer norm with ε = 0.

Own construction, after Yang & Chiang's main theorem (their compilation of K_t[#], i.e.
C-RASP, into future-masked softmax transformers whose comparisons use layer norm). Every
Boolean is a *pair* of residual coordinates ``(b, −b)`` with ``b = ±U`` (+ true, − false), so
every residual vector has mean 0 and layer norm is a pure rescaling; the one-pair ``one``
(always true) carries the position's scale, and every feed-forward is positively homogeneous
(no biases), so a rescaling of a whole position changes nothing it decides. Layer L:

* attention — one uniform head (scores 0, future mask ``j ≤ i``: exactly uniform at τ = 1)
  averages the 0/1 values ``(b + one)/2`` of the counted Booleans and of ``[j = 1]``, writing
  ``C/i`` and ``1/i`` (as pairs) in units of ``one``;
* feed-forward — a comparison ``t ≥ 0`` of an integer linear term ``t = Σ c_k C_k + c_i·i +
  c_0`` reads ``x = (t + ½)/i`` (a linear form: ``|x| ≥ 1/(2i)``) and a flat ramp writes
  ``[x > 0]`` at the scale ``F = 1/i`` (exact for an error in ``x`` up to ``F/4``); an equality
  ``t = 0`` is one flat trapezoid; a conjunction is one flat unit; every Boolean kept is
  rewritten at the same scale ``F`` and everything else (counts, Booleans no longer needed) is
  cancelled;
* post layer norm (ε = 0) maps the pairs ``±F`` back to ``±κ`` (``κ = √(d / 2B)`` for B live
  pairs): the 1/i-sized comparison becomes a ±κ Boolean again, at every length.

A layer with conjunctions only works at the scale ``one`` instead of ``F``. The output is read
as ``y = ½ ± ½`` from the output's pair after the last layer norm: exactly 0 or 1 (a fixed
margin ½) at every position of every input. The certificate (:mod:`hardsoft.compile.ln_bounds`)
gives the margin as a function of n, the float limits and what ε > 0 does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hardsoft.compile import limits
from hardsoft.compile.ir import (
    TRUE,
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
    count,
    ir_nodes_all,
    mk_and,
    mk_geq,
    mk_not,
    mk_or,
    node,
)
from hardsoft.craft import (
    AttentionHead,
    CraftLayer,
    Embedding,
    LinearForm,
    Neuron,
    Residual,
    assemble,
    feature_names,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import LayerNormPlacement
from hardsoft.model.transformer import Transformer

FIRST = node(BFeat, "[i=1]")
"""``[i = 1]``: its uniform average is ``1/i``, the quantity Yang & Chiang's BOS symbol gives."""
ONE = "one"
LN_EPS = 0.0
FRAGMENT = (
    "Yang & Chiang's (COLM 2024) counting fragment (symbols, Boolean connectives, #<, linear "
    "comparisons of counts and i, first, P, MOD(m, r)(i))"
)


SHIFT_WHY = (
    "with τ = 1 and bounded scores a head puts weight Θ(1/i) on every earlier position (Hahn "
    "(2020) Lemma 5's bound), and no layer-norm construction for it is known to us"
)
MOD_WHY = (
    "no future-masked layer-norm construction for it is known to us (Chiang & Cholak's PARITY "
    "decides the whole word in an unmasked encoder: hardsoft program parity --target soft-ln)"
)
CAUSAL_WHY = "soft-ln models are future-masked, so they read the prefix only"


def _outside(what: str, why: str) -> HardsoftError:
    return HardsoftError(
        f"--target soft-ln compiles {FRAGMENT}; {what} is outside it: {why}; use --target "
        "soft-temperature or soft-pe"
    )


# ------------------------------------------------------------------ the fragment
def _past(c: Count) -> Count:
    if c.direction != "pre":
        raise _outside("a suffix count #>[φ] (or n)", CAUSAL_WHY)
    return c


def _rewrite(x: BNode, memo: dict[BNode, BNode]) -> BNode:
    """``x`` with P written by counts; anything outside the fragment is a HardsoftError."""
    if x in memo:
        return memo[x]
    out: BNode
    if isinstance(x, (BAtom, BConst)):
        out = x
    elif isinstance(x, BFeat):
        if x.feature != "[i=1]" and not x.feature.startswith("[i mod "):
            raise _outside(f"the position feature {x.feature} (last, or n)", CAUSAL_WHY)
        out = x
    elif isinstance(x, BNot):
        out = mk_not(_rewrite(x.arg, memo))
    elif isinstance(x, BAnd):
        out = mk_and(*(_rewrite(a, memo) for a in x.args))
    elif isinstance(x, BGeq):
        terms: dict[Count, int] = {}
        for c, k in x.term.counts:
            key = count("pre", _rewrite(_past(c).arg, memo))
            terms[key] = terms.get(key, 0) + k
        out = mk_geq(Lin.make(terms, x.term.pos, x.term.const))
    elif isinstance(x, BShift) and x.pred is x.val and x.direction == "past" and x.strict:
        phi = _rewrite(x.val, memo)  # P φ: φ held at some j < i
        c = count("pre", phi)
        two, one = Lin.make({c: 1}, 0, -2), Lin.make({c: 1}, 0, -1)
        out = mk_or(mk_geq(two), mk_and(mk_not(phi), mk_geq(one)))
    elif isinstance(x, BShift):
        op = "Y" if x.pred == TRUE else ("S" if x.direction == "past" else "X, U or F")
        what = f"{op} (a shift to the nearest earlier position; C-RASP's #[pred] is Y)"
        raise _outside(what, SHIFT_WHY)
    elif isinstance(x, BMod):
        raise _outside("MOD of a count", MOD_WHY)
    elif isinstance(x, (BSelect, BSum)):
        raise _outside("a B-RASP attention (a unique-hard selection)", SHIFT_WHY)
    else:  # pragma: no cover - every IR class is listed above
        raise HardsoftError(f"unknown IR node {type(x).__name__}")
    memo[x] = out
    return out


def in_fragment(roots: list[BNode]) -> list[BNode]:
    """The roots rewritten into the fragment (P by counts), or a one-line HardsoftError naming
    what is outside it."""
    memo: dict[BNode, BNode] = {}
    return [_rewrite(r, memo) for r in roots]


# ------------------------------------------------------------------ literals and kinds
@dataclass(frozen=True)
class Lit:
    """A Boolean read from a pair: ``base`` (never a BNot) and whether it is negated."""

    base: BNode
    neg: bool = False


def lit(x: BNode) -> Lit:
    neg = False
    while isinstance(x, BNot):
        x, neg = x.arg, not neg
    if x == node(BConst, False):
        return Lit(TRUE, not neg)
    return Lit(x, neg)


def equality_term(x: BNode) -> Lin | None:
    """``t`` when ``x`` is ``[t >= 0] & [-t >= 0]`` (how the IR writes ``t = 0``), else None."""
    if isinstance(x, BAnd) and len(x.args) == 2:
        a, b = x.args
        if isinstance(a, BGeq) and isinstance(b, BGeq) and b.term == a.term.scale(-1):
            return a.term
    return None


def comparison_term(x: BNode) -> Lin:
    """The term ``t`` of a comparison ``[t >= 0]`` or an equality ``t = 0``."""
    eq = equality_term(x)
    if eq is not None:
        return eq
    assert isinstance(x, BGeq)
    return x.term


def _term_inputs(term: Lin) -> list[BNode]:
    return [c.arg for c, _ in term.counts]


def inputs_of(x: BNode) -> list[BNode]:
    """The bases a computed node reads (counted Booleans for comparisons)."""
    eq = equality_term(x)
    if eq is not None:
        return [lit(a).base for a in _term_inputs(eq)]
    if isinstance(x, BGeq):
        return [lit(a).base for a in _term_inputs(x.term)]
    if isinstance(x, BAnd):
        return [lit(a).base for a in x.args]
    return []


def is_comparison(x: BNode) -> bool:
    return isinstance(x, BGeq) or equality_term(x) is not None


# ------------------------------------------------------------------ the schedule
@dataclass
class Plan:
    """Which layer computes each base node (0: the embedding), and what each layer keeps."""

    level: dict[BNode, int] = field(default_factory=dict)
    layers: int = 0
    live: dict[int, list[BNode]] = field(default_factory=dict)  # after layer L (0: embedding)

    def at(self, layer: int) -> list[BNode]:
        return [x for x, lv in self.level.items() if lv == layer and lv > 0]

    def comparisons(self, layer: int) -> list[BNode]:
        return [x for x in self.at(layer) if is_comparison(x)]

    def counted(self, layer: int) -> list[BNode]:
        """The Booleans this layer's head counts (in a stable order)."""
        seen: dict[BNode, None] = {}
        for x in self.comparisons(layer):
            for c, _ in comparison_term(x).items():
                seen.setdefault(c.arg, None)
        return list(seen)


def _bases(roots: list[BNode]) -> list[BNode]:
    """Every base node the roots need, children first (equalities kept whole)."""
    order: list[BNode] = []
    seen: set[BNode] = set()

    def visit(x: BNode) -> None:
        x = lit(x).base
        if x in seen:
            return
        seen.add(x)
        for y in inputs_of(x):
            visit(y)
        order.append(x)

    for r in roots:
        visit(r)
    return order


def schedule(roots: list[BNode]) -> Plan:
    """Each node at the earliest layer its inputs allow: a comparison one layer after its
    counted Booleans (its head reads them), a conjunction one layer after its arguments."""
    plan = Plan()
    bases = _bases(roots)
    for x in bases:
        if isinstance(x, (BAtom, BConst, BFeat)):
            plan.level[x] = 0
        else:
            plan.level[x] = 1 + max((plan.level[y] for y in inputs_of(x)), default=0)
    plan.layers = max(plan.level.values(), default=0)
    if plan.layers:  # the scale (one) and [i = 1] (for 1/i) are in every model with layers
        plan.level.setdefault(TRUE, 0)
        plan.level.setdefault(FIRST, 0)
    outputs = {lit(r).base for r in roots}
    for layer in range(plan.layers + 1):
        later = [x for x in bases if plan.level[x] > layer]
        used = {y for x in later for y in inputs_of(x)} | outputs
        keep = [x for x in bases if plan.level[x] <= layer and x in used]
        if layer < plan.layers:  # the scale (one) and 1/i (first) stay until the last layer
            keep = [TRUE, FIRST] + [x for x in keep if x not in (TRUE, FIRST)]
        plan.live[layer] = keep
    return plan


# ------------------------------------------------------------------ residual names
def pair(x: BNode) -> tuple[str, str]:
    """The residual coordinates ``(b, −b)`` of a base node."""
    if x == TRUE:
        name = ONE
    elif isinstance(x, BAtom):
        name = f"tok:{x.symbol}"
    elif isinstance(x, BFeat):
        name = f"feat:{x.feature}"
    else:
        name = f"n{x.uid}"
    return name, name + "~"


def count_pair(layer: int, x: BNode) -> tuple[str, str]:
    name = f"c{layer}:first" if x == FIRST else f"c{layer}:{pair(x)[0]}"
    return name, name + "~"


def _form(lt: Lit) -> LinearForm:
    return {pair(lt.base)[1 if lt.neg else 0]: 1.0}


def _write(outputs: dict[str, float], x: BNode, w: float) -> None:
    """Add ``w`` to ``x``'s coordinate and ``−w`` to its mirror."""
    pos, neg = pair(x)
    outputs[pos] = outputs.get(pos, 0.0) + w
    outputs[neg] = outputs.get(neg, 0.0) - w


def _add(*forms: tuple[LinearForm, float]) -> LinearForm:
    out: LinearForm = {}
    for form, k in forms:
        for name, v in form.items():
            out[name] = out.get(name, 0.0) + k * v
    return {n: v for n, v in out.items() if v != 0.0}


# ------------------------------------------------------------------ one layer
@dataclass
class _Layer:
    """The craft description of one layer under construction."""

    index: int
    plan: Plan
    before: list[BNode]
    unit: LinearForm = field(default_factory=dict)
    craft: CraftLayer = field(default_factory=CraftLayer)
    counts: list[tuple[str, str]] = field(default_factory=list)

    def neuron(self, inputs: LinearForm, outputs: dict[str, float]) -> Neuron:
        made = Neuron(inputs, 0.0, outputs)
        self.craft.neurons.append(made)
        return made


def _head(layer: _Layer, counted: list[BNode]) -> None:
    """One uniform future-masked head: ``C/i`` of every counted Boolean and ``1/i``."""
    output: dict[str, LinearForm] = {}
    for x in [FIRST, *counted]:
        value = _add((_form(lit(x)), 0.5), ({ONE: 1.0}, 0.5))  # (b + one)/2 ∈ {0, 1}
        pos, neg = count_pair(layer.index, x)
        output[pos], output[neg] = value, {k: -v for k, v in value.items()}
        layer.counts.append((pos, neg))
    layer.craft.heads.append(AttentionHead("softmax", "future", [], [], output))


def _comparison_form(layer: _Layer, term: Lin, half: float) -> LinearForm:
    """``(t + half)/i`` in units of ``one``: counts C/i, ``c_i`` (i/i), the constant via 1/i."""
    parts: list[tuple[LinearForm, float]] = [({ONE: 1.0}, float(term.pos))]
    parts.append(({count_pair(layer.index, FIRST)[0]: 1.0}, term.const + half))
    for c, k in term.items():
        parts.append(({count_pair(layer.index, c.arg)[0]: 1.0}, float(k)))
    return _add(*parts)


def _emit_comparison(layer: _Layer, x: BNode, unit_out: dict[str, float]) -> None:
    """``[t >= 0]`` by a flat ramp on ``x = (t + ½)/i`` (steps at ±F/4), or ``[t = 0]`` by a
    flat trapezoid on ``t/i`` (steps at ±F/4 and ±3F/4); written as the pair ``±F``."""
    eq = equality_term(x)
    f = layer.unit
    if eq is None:
        assert isinstance(x, BGeq)
        xf = _comparison_form(layer, x.term, 0.5)
        steps = [(0.25, 2.0), (-0.25, -2.0)]  # 2(ReLU(x + F/4) − ReLU(x − F/4)) = F·[x > 0]
    else:
        xf = _comparison_form(layer, eq, 0.0)
        steps = [(0.75, 2.0), (0.25, -2.0), (-0.25, -2.0), (-0.75, 2.0)]
    for shift, w in steps:
        out: dict[str, float] = {}
        _write(out, x, 2.0 * w)
        layer.neuron(_add((xf, 1.0), (f, shift)), out)
    _write(unit_out, x, -1.0)  # the pair is 2·[x]F − F = ±F


def _emit_and(layer: _Layer, x: BAnd, unit_out: dict[str, float]) -> None:
    """``[∧ a_k]·U`` by one flat unit: ReLU(U + Σa − (m − ½)one) − ReLU(Σa − (m − ½)one)."""
    m = len(x.args)
    total = _add(*((_form(lit(a)), 1.0) for a in x.args), ({ONE: 1.0}, -(m - 0.5)))
    for extra, w in ((layer.unit, 2.0), ({}, -2.0)):
        out: dict[str, float] = {}
        _write(out, x, w)
        layer.neuron(_add((total, 1.0), (extra, 1.0)), out)
    _write(unit_out, x, -1.0)


def _rescale(layer: _Layer, x: BNode) -> None:
    """A kept Boolean ``±one`` rewritten as ``±F`` (flat units), its old value cancelled."""
    p = {pair(x)[0]: 1.0}
    for sign in (1.0, -1.0):  # true part (sign +), false part (sign −)
        sp = {k: sign * v for k, v in p.items()}
        for extra, w in ((layer.unit, 1.0), ({}, -1.0)):
            out: dict[str, float] = {}
            _write(out, x, sign * w)
            layer.neuron(_add((sp, 1.0), ({ONE: 1.0}, -0.5), (extra, 1.0)), out)
    _cancel(layer, pair(x))


def _cancel(layer: _Layer, names: tuple[str, str]) -> None:
    """Remove a pair ``(v, −v)`` from the residual: ``−ReLU(v) + ReLU(−v)`` and the mirror."""
    pos, neg = names
    layer.neuron({pos: 1.0}, {pos: -1.0, neg: 1.0})
    layer.neuron({pos: -1.0}, {pos: 1.0, neg: -1.0})


def build_layer(plan: Plan, index: int) -> _Layer:
    """Layer ``index``: its head (if it compares), the new Booleans, the kept ones rescaled
    (comparison layers), and the rest cancelled."""
    layer = _Layer(index, plan, plan.live[index - 1])
    comparisons = plan.comparisons(index)
    if comparisons:
        _head(layer, plan.counted(index))
        layer.unit = {count_pair(index, FIRST)[0]: 1.0}
    else:
        layer.unit = {ONE: 1.0}
    unit_out: dict[str, float] = {}
    for x in plan.at(index):
        if is_comparison(x):
            _emit_comparison(layer, x, unit_out)
        else:
            assert isinstance(x, BAnd)
            _emit_and(layer, x, unit_out)
    keep = set(plan.live[index])
    for x in layer.before:
        if x in keep and comparisons:
            _rescale(layer, x)
        elif x not in keep:
            _cancel(layer, pair(x))
    for names in layer.counts:
        _cancel(layer, names)
    if unit_out:
        layer.neuron(dict(layer.unit), unit_out)
    return layer


# ------------------------------------------------------------------ the model
@dataclass
class LNModel:
    """A compiled soft-ln model and what its certificate reads."""

    model: Transformer
    plan: Plan
    outputs: list[Lit]
    layers: list[_Layer]
    features: list[str]
    kappa: float
    uses_past: bool = False  # P was written by counts


def _embedding(plan: Plan, alphabet: tuple[str, ...], residual: Residual) -> Embedding:
    """Tokens and features as ±1 pairs: ``one`` from the constant feature, ``[i=1]`` and
    ``[i mod m = r]`` as ``2f − 1``."""
    base = [x for x in plan.level if plan.level[x] == 0] + [TRUE]
    tokens: dict[str, LinearForm] = {a: {} for a in alphabet}
    features: dict[str, LinearForm] = {"pos:1": {}}
    for x in dict.fromkeys(base):
        pos, neg = pair(x)
        if pos in residual:
            continue
        residual.add(pos)
        residual.add(neg)
        if isinstance(x, BAtom):
            for a in alphabet:
                s = 1.0 if a == x.symbol else -1.0
                tokens[a].update({pos: s, neg: -s})
        elif isinstance(x, BFeat):
            features[feature_names(x.feature)[0]] = {pos: 2.0, neg: -2.0}
            features["pos:1"].update({pos: -1.0, neg: 1.0})
        else:
            features["pos:1"].update({pos: 1.0, neg: -1.0})
    return Embedding(
        tokens=tokens, features=features, layer_norm=LayerNormPlacement.POST, ln_eps=LN_EPS
    )


def build_ln_model(
    roots: list[BNode], alphabet: tuple[str, ...], names: tuple[str, ...], name: str
) -> LNModel:
    """IR roots (one per output) → the soft-ln model (see the module docstring)."""
    uses_past = any(isinstance(x, BShift) for x in ir_nodes_all(roots))
    roots = in_fragment(roots)
    limits.check_ir(ir_nodes_all(roots))
    plan = schedule(roots)
    residual = Residual()
    emb = _embedding(plan, alphabet, residual)
    features = ["1"] + sorted(x.feature for x in plan.level if isinstance(x, BFeat))
    layers = [build_layer(plan, k) for k in range(1, plan.layers + 1)]
    for layer in layers:
        for names_ in (*layer.counts, *(pair(x) for x in plan.at(layer.index))):
            for nm in names_:
                if nm not in residual:
                    residual.add(nm)
    outs = [lit(r) for r in roots]
    live = len(plan.live[plan.layers])
    kappa = (residual.dim / (2 * live)) ** 0.5 if plan.layers else 1.0
    emb.output_bias = tuple(0.5 for _ in outs)
    crafts = [layer.craft for layer in layers]
    position_dim = len(features)
    planned = limits.parameter_count(len(alphabet), position_dim, residual.dim, crafts, len(outs))
    limits.check_parameters(planned + 4 * residual.dim * len(crafts))  # + the layer norms
    forms = [{pair(o.base)[1 if o.neg else 0]: 0.5 / kappa} for o in outs]
    model = assemble(
        alphabet=alphabet,
        position_features=features,
        residual=residual,
        layers=crafts,
        outputs=forms,
        output_names=names,
        name=name,
        embedding=emb,
    )
    return LNModel(model, plan, outs, layers, features, kappa, uses_past)

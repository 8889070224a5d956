"""Program → average-hard attention transformer (AHAT), through the craft stage.

Each materialised SOp gets one named residual coordinate; ``Linear`` SOps stay linear forms.
Scheduling: layer ℓ (0-based) has an attention stage 2ℓ+1 and a feed-forward stage 2ℓ+2; the
input embedding is stage 0. An ``Attend`` runs at the first attention stage after everything it
reads, a ``PWL`` at the first feed-forward stage after its inputs.

Every head is an *average*-hardmax head. Tie rules become scores: ``rightmost`` adds
``(3·unit/4)·j/n`` to the score and ``leftmost`` subtracts it (Yang, Strobl, Chiang & Angluin
(arXiv:2412.09925v1) Lemma 8: a position term scaled below the gap), so the maximum is
unique with gap ≥ 3·unit/(4n) whenever distinct raw scores differ by ≥ unit. The head declares
the gap unit/(2n): the construction exceeds its declaration by half, so that float rounding of
large scores (2kj − k² at n = 400 is 160,000) never takes the measured gap below it. Heads
without a score are uniform (W_Q = W_K = 0). Constants use the position feature ``1``."""

from __future__ import annotations

from dataclasses import dataclass, field

from hardsoft.craft import (
    AttentionHead,
    CraftLayer,
    LinearForm,
    Neuron,
    Residual,
    assemble,
    feature_names,
    standard_residual,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import eval_tau
from hardsoft.model.transformer import Transformer
from hardsoft.programs.ahat.dsl import PWL, Attend, AttnOut, Linear, Position, Program, SOp, Token

ONE = "pos:1"
TIEBREAK_FEATURE = "i/n"
TIEBREAK = 0.75
"""The tie-break term's weight, in score units: below 1 (it never overrides a difference of
raw scores), above the declared 1/2 (headroom against rounding: see the module docstring)."""


@dataclass
class HeadInfo:
    """What the compiler knows about one head: where it is, its kind and its declared gap."""

    layer: int
    head: int
    label: str
    kind: str  # "uniform" or "tieless"
    gap: str | None  # declared γ(n) (None: not declared, must be measured)
    tie: str
    mask: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Compiled:
    """The AHAT and the bookkeeping the checkers need."""

    model: Transformer
    program: Program
    heads: list[HeadInfo] = field(default_factory=list)
    stages: dict[int, int] = field(default_factory=dict)
    head_of: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Where each ``Attend`` (by uid) is: (layer, head)."""

    @property
    def n_layers(self) -> int:
        return len(self.model.spec.layers)


def _features_of(program: Program) -> list[str]:
    feats = ["1", TIEBREAK_FEATURE]
    for x in program.nodes():
        if isinstance(x, Position) and x.feature not in feats:
            feats.append(x.feature)
    return feats


def _pos_name(feature: str) -> str:
    (name,) = feature_names(feature)
    return name


def _stage(x: SOp, stages: dict[int, int]) -> int:
    if x.uid in stages:
        return stages[x.uid]
    if isinstance(x, (Token, Position)):
        s = 0
    elif isinstance(x, Linear):
        s = max((_stage(t, stages) for t in x.terms), default=0)
    elif isinstance(x, PWL):
        s_in = max((_stage(f, stages) for _, f in x.pieces), default=0)
        s = s_in + 2 if s_in % 2 == 0 else s_in + 1
    elif isinstance(x, Attend):
        s_in = max((_stage(f, stages) for f in [*x.query, *x.key, *x.values]), default=0)
        s = s_in + 1 if s_in % 2 == 0 else s_in + 2
    elif isinstance(x, AttnOut):
        s = _stage(x.head, stages)
    else:  # pragma: no cover
        raise TypeError(type(x))
    stages[x.uid] = s
    return s


def compile_program(program: Program, *, name: str | None = None) -> Compiled:
    """Compile ``program`` to an AHAT (float64 weights, average-hard heads)."""
    nodes = program.nodes()
    stages: dict[int, int] = {}
    for x in nodes:
        _stage(x, stages)
    features = _features_of(program)
    res: Residual = standard_residual(program.alphabet, features)
    coord: dict[int, str] = {}
    for x in nodes:
        if isinstance(x, Token):
            if x.symbol not in program.alphabet:
                raise HardsoftError(f"program {program.name}: token {x.symbol!r} not in alphabet")
            coord[x.uid] = f"tok:{x.symbol}"
        elif isinstance(x, Position):
            coord[x.uid] = _pos_name(x.feature)
        elif isinstance(x, PWL):
            coord[x.uid] = res.add(f"{x.label or 'pwl'}#{x.uid}")
        elif isinstance(x, Attend):
            for o in [*x.outs, x.found]:
                coord[o.uid] = res.add(f"{o.label or 'attn'}#{o.uid}")

    def form(lin: Linear) -> LinearForm:
        out: LinearForm = {}
        for t, c in lin.terms.items():
            out[coord[t.uid]] = out.get(coord[t.uid], 0.0) + c
        if lin.const:
            out[ONE] = out.get(ONE, 0.0) + lin.const
        return out

    outputs: list[str] = []
    extra_stage = 0
    out_pwls: list[PWL] = []
    for out_lin in program.outputs:
        if len(out_lin.terms) == 1 and not out_lin.const:
            ((t, c),) = out_lin.terms.items()
            if c == 1.0 and t.uid in coord and not isinstance(t, (Token, Position)):
                outputs.append(coord[t.uid])
                continue
        p = PWL([(1.0, out_lin), (-1.0, out_lin.scaled(-1.0))], "out")
        _stage(p, stages)
        coord[p.uid] = res.add(f"out#{p.uid}")
        out_pwls.append(p)
        outputs.append(coord[p.uid])
        extra_stage = max(extra_stage, stages[p.uid])

    max_stage = max([*stages.values(), extra_stage, 1])
    n_layers = (max_stage + 1) // 2
    layers = [CraftLayer() for _ in range(n_layers)]
    infos: list[HeadInfo] = []
    head_of: dict[int, tuple[int, int]] = {}
    for x in [*nodes, *out_pwls]:
        s = stages[x.uid]
        if isinstance(x, PWL):
            layer = layers[s // 2 - 1]
            for w, f in x.pieces:
                fm = form(f)
                bias = fm.pop(ONE, 0.0)
                layer.neurons.append(Neuron(fm, bias, {coord[x.uid]: w}))
        elif isinstance(x, Attend):
            ell = (s - 1) // 2
            query = [form(q) for q in x.query]
            key = [form(k) for k in x.key]
            gap = x.gap
            kind = "uniform" if x.uniform else "tieless"
            if x.tie in ("leftmost", "rightmost"):
                sign = 1.0 if x.tie == "rightmost" else -1.0
                query.append({ONE: TIEBREAK * x.score_unit})
                key.append({_pos_name(TIEBREAK_FEATURE): sign})
                gap = f"{x.score_unit / 2.0!r}/n"
            output = {coord[o.uid]: form(v) for o, v in zip(x.outs, x.values)}
            output[coord[x.found.uid]] = {ONE: 1.0}
            layers[ell].heads.append(AttentionHead("average", x.mask, query, key, output))
            head_of[x.uid] = (ell, len(layers[ell].heads) - 1)
            infos.append(
                HeadInfo(ell, len(layers[ell].heads) - 1, x.label, kind, gap, x.tie, x.mask)
            )
    _check_gap_declarations(program, infos)
    model = assemble(
        alphabet=program.alphabet,
        position_features=features,
        residual=res,
        layers=layers,
        outputs=outputs,
        output_names=program.output_names,
        name=program.name,
        meta={
            "program": program.name,
            "target": "average-hard",
            "heads": [h.to_dict() for h in infos],
            "program_gap": program.gap,
        },
    )
    return Compiled(model=model, program=program, heads=infos, stages=stages, head_of=head_of)


def _check_gap_declarations(program: Program, infos: list[HeadInfo]) -> None:
    """The program's γ(n) must not exceed any head's declared gap (checked on a grid of n)."""
    for h in infos:
        if h.kind != "tieless" or h.gap is None:
            continue
        for n in (1, 2, 3, 10, 100, 10**3, 10**4, 10**5, 10**6):
            if eval_tau(program.gap, n) > eval_tau(h.gap, n) * (1 + 1e-12):
                raise HardsoftError(
                    f"program {program.name}: declared gap {program.gap} exceeds head "
                    f"{h.label}'s gap {h.gap} at n = {n}"
                )

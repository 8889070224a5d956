"""Compile a RASP program: lower it to an average-hard program (:mod:`.lower`), compile that
with the AHAT compiler (:mod:`hardsoft.programs.ahat.compile`), check that every head is uniform or
tieless (:mod:`hardsoft.programs.ahat.tieless`) and, for ``soft-temperature``, convert it to softmax
with the temperature τ(n) of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Theorem 26
(:mod:`hardsoft.programs.ahat.soften`). One route, the project's own compilers: RASP adds no
parallel compiler, only the lowering.

Targets:

* ``average-hard`` — the AHAT itself (uniform heads average, tieless heads have a unique
  maximum);
* ``hard`` — the same weights with every tieless head unique-hard (rightmost): the same
  outputs, since their maximum is unique; uniform heads (and the heads of a numerical mean
  over a table, which average ties) stay average-hard;
* ``soft-temperature`` — every head softmax at the certified τ(n); each output is read as its
  meta entry says (``read``), exact because ε is below half the spacing of its values.

The certificate (``model.meta["certificate"]``) says whether the model is exact at every
length or for n <= max_len (and which operation needed the bound, and why), which gadget each
statement became, the domain conditions (where ``rasp.evaluate`` itself is undefined), the
outputs, the tieless check, for softmax Theorem 26's τ(n) with its constants, and
``float_limits``: the largest n proven exact in float64 and float32
(:mod:`hardsoft.programs.ahat.rounding`).
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.model.spec import ModelSpec, Weighting
from hardsoft.model.transformer import Transformer
from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.compile import Compiled, compile_program
from hardsoft.programs.ahat.rounding import float_limits, head_models
from hardsoft.programs.ahat.soften import certificate as theorem26
from hardsoft.programs.ahat.soften import soften
from hardsoft.programs.ahat.tieless import TielessReport, check_tieless, sample_words
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp.domains import distinct, key
from hardsoft.programs.rasp.graph import statements
from hardsoft.programs.rasp.lower import Lowering
from hardsoft.programs.rasp.outputs import Output, build_outputs, json_value
from hardsoft.programs.rasp.selectors import Unsupported
from hardsoft.programs.readout import TOLERANCE


class Target(str, Enum):
    AVERAGE_HARD = "average-hard"
    HARD = "hard"
    SOFT_TEMPERATURE = "soft-temperature"

    @classmethod
    def parse(cls, value: str) -> Target:
        try:
            return cls(value)
        except ValueError:
            known = ", ".join(t.value for t in cls)
            raise HardsoftError(f"unknown --target {value!r} (one of {known})") from None


TARGETS = tuple(t.value for t in Target)

SYMBOL_POOL = (
    string.ascii_lowercase + string.ascii_uppercase + string.digits + "αβγδεζηθικλμνξπρστυφχψω"
    "ΓΔΘΛΞΠΣΦΨΩабвгдежзийклмнопрстуфхцчшщэюя"
)
"""Single-character symbols for vocabularies whose values are not single characters."""


class NeedsMaxLen(HardsoftError):
    """An operation has no gadget exact at every length (which is not a proof that no such
    transformer exists); ``--max-len N`` builds a model exact for n <= N."""


@dataclass
class RaspCompiled:
    """A compiled program: the requested model, the AHAT it came from and the evidence."""

    model: Transformer
    ahat: Compiled
    lowering: Lowering
    report: TielessReport | None
    outputs: list[Output]


MAX_LEN = 256
"""The largest ``max_len`` of a bounded RASP model: its tables of positions make its width
grow with the bound and its parameters and build time with the bound squared (without a cap,
``--max-len 100000`` grew with no end in sight). On the shared 2-core machine (load 12) sort
took 25 s and 0.6 GB at 200, 60 s and 1.5 GB at 400, 93 s and 2.4 GB at 512, with nothing to
show meanwhile: the cap keeps a build well inside two minutes."""


def symbols_for(vocab: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """The vocabulary's values (sorted where they sort) and one symbol per value: the value
    itself where every value is one character, else letters, digits, ... in order. A
    vocabulary lists each token once, and None (RASP's undefined value) is no token: both
    are refused rather than silently dropped, as a repeated alphabet symbol is."""
    given = list(vocab)
    if any(v is None for v in given):
        raise HardsoftError(
            "the vocabulary holds None: None is RASP's undefined value (what an Aggregate "
            "that selects nothing gives), not a token; leave it out"
        )
    try:
        values = distinct(given)
    except ValueError as exc:
        raise HardsoftError(f"vocabulary: {exc}") from None
    if len(values) < len(given):
        keys = [key(v) for v in given]
        again = next(v for k, v in enumerate(given) if keys[k] in keys[:k])
        raise HardsoftError(f"the vocabulary repeats the value {again!r}: list each token once")
    if not values:
        raise HardsoftError("the vocabulary is empty")
    if all(isinstance(v, str) and len(v) == 1 for v in values):
        return values, tuple(str(v) for v in values)
    try:
        values = tuple(sorted(values))  # a set's order is arbitrary: fix one
    except TypeError:
        pass
    if len(values) > len(SYMBOL_POOL):
        raise HardsoftError(f"the vocabulary has {len(values)} values; at most {len(SYMBOL_POOL)}")
    return values, tuple(SYMBOL_POOL[: len(values)])


def _program_gap(prog: dsl.Program) -> str:
    """γ(n), the smallest gap of the program's tieless heads: ``c/n`` or a constant."""
    per_n: list[float] = []
    consts: list[float] = []
    for x in prog.nodes():
        if not isinstance(x, dsl.Attend) or x.uniform:
            continue
        if x.tie in ("leftmost", "rightmost"):
            per_n.append(x.score_unit / 2.0)
        elif x.gap is not None:
            g = x.gap.replace(" ", "")
            if g.endswith("/n"):
                per_n.append(float(g[:-2]))
            else:
                consts.append(float(g))
    if per_n:
        return f"{min(per_n + consts)!r}/n"
    if consts:
        return repr(min(consts))
    return "1"


def _chosen(program: R.SOp, outputs: Sequence[str] | None) -> list[tuple[str, R.SOp]]:
    table = statements(program)
    if not outputs:
        return [table[-1]]
    by_name = dict(table)
    missing = [o for o in outputs if o not in by_name]
    if missing:
        raise HardsoftError(
            f"no statement named {missing[0]!r} (statements: {', '.join(n for n, _ in table)})"
        )
    return [(o, by_name[o]) for o in outputs]


def lower_program(
    program: R.SOp,
    vocab: Sequence[Any],
    *,
    max_len: int | None = None,
    outputs: Sequence[str] | None = None,
    name: str = "",
    causal: bool = False,
) -> tuple[Lowering, dsl.Program, list[Output]]:
    """The AHAT program of a RASP program (no weights yet); ``causal``: every selector
    restricted to j <= i, as Tracr's ``causal_eval`` evaluates it."""
    if not isinstance(program, R.SOp):
        raise HardsoftError(f"the program must be an SOp of hardsoft.rasp, got {program!r}")
    values, symbols = symbols_for(vocab)
    lw = Lowering(program, values, symbols, max_len, causal)
    try:
        outs = build_outputs(lw, _chosen(program, outputs))
    except Unsupported as exc:
        if exc.boundable and max_len is None:
            raise NeedsMaxLen(
                f"{exc.operation} {exc.reason}: hardsoft has no gadget exact at every length "
                "for it; --max-len N builds a model exact for n <= N"
            ) from None
        raise HardsoftError(f"cannot compile: {exc.operation} {exc.reason}") from None
    prog = dsl.Program(
        name or program.name,
        symbols,
        [o.form for o in outs],
        gap="1",
        output_names=tuple(o.entry["name"] for o in outs),
    )
    prog.gap = _program_gap(prog)
    return lw, prog, outs


def _tieless_check(compiled: Compiled, max_len: int | None, seed: int = 0) -> TielessReport:
    """Every head uniform or tieless: all words to length 4 (or while |Σ|^n <= 4096) and
    8 random words at 16 and 48 (bounded compiles: only lengths <= max_len)."""
    alphabet = compiled.program.alphabet
    top = 4 if max_len is None else min(4, max_len)
    sampled = {
        n: sample_words(None, alphabet, n, 8, seed + n)
        for n in (16, 48)
        if max_len is None or n <= max_len
    }
    if max_len is not None and max_len > 4 and max_len not in sampled:
        sampled[max_len] = sample_words(None, alphabet, max_len, 8, seed + max_len)
    return check_tieless(
        compiled.model,
        exhaustive_up_to=top,
        exhaustive_limit=4096,
        sampled=sampled,
        program_gap=compiled.program.gap,
    )


def _hard(model: Transformer, keep_average: list[list[bool]]) -> Transformer:
    """The same weights with every tieless head unique-hard (rightmost); uniform heads and
    heads that average ties stay average-hard."""
    spec = model.spec
    layers = []
    for layer, flags in zip(spec.layers, keep_average):
        heads = tuple(
            h if uni else dataclasses.replace(h, weighting=Weighting.RIGHTMOST)
            for h, uni in zip(layer.heads, flags)
        )
        layers.append(dataclasses.replace(layer, heads=heads))
    new_spec = ModelSpec.from_dict(
        {**spec.to_dict(), "layers": [dataclasses.asdict(x) for x in layers]}
    )
    hard = Transformer(new_spec, dtype=model.dtype).to(model.device)
    hard.load_state_dict(model.state_dict())
    hard.meta = dict(model.meta)
    return hard


def compile_rasp(
    program: R.SOp,
    vocab: Sequence[Any],
    *,
    target: str = "soft-temperature",
    max_len: int | None = None,
    outputs: Sequence[str] | None = None,
    name: str = "",
    source: str = "",
    check_seed: int = 0,
    causal: bool = False,
) -> RaspCompiled:
    """Compile ``program`` over ``vocab`` for ``target`` (see the module docstring).

    Without ``max_len`` the model is exact at every length or this raises
    :class:`NeedsMaxLen` (naming the operation and why); with it, the operations that need a
    bound read their SOps' values at n <= max_len and the certificate says so. ``causal``:
    Tracr's causal semantics (``causal_eval``: every selector ANDed with j <= i), so every
    head attends only to positions j <= i."""
    tgt = Target.parse(target)
    if max_len is not None and (isinstance(max_len, bool) or int(max_len) < 1):
        raise HardsoftError(f"--max-len must be a positive integer, got {max_len!r}")
    if max_len is not None and max_len > MAX_LEN:
        raise HardsoftError(
            f"--max-len {max_len}: a bounded RASP model grows with the bound squared (sort at "
            f"--max-len 400: width 1,748, 16.7M parameters, a minute to build); at most "
            f"{MAX_LEN}"
        )
    lw, prog, outs = lower_program(
        program, vocab, max_len=max_len, outputs=outputs, name=name, causal=causal
    )
    if tgt is Target.SOFT_TEMPERATURE:
        _check_soft(lw, outs)
    compiled = compile_program(prog, name=prog.name)
    report = None
    if not lw.tied:
        report = _tieless_check(compiled, max_len if lw.bounded else None, check_seed)
        if not report.uniform_tieless:
            tie = next(h for h in report.heads if h.kind == "tied")
            raise HardsoftError(
                f"internal: head {tie.label} has a tie on {(tie.tie or {}).get('word')!r}; "
                "please report this program"
            )
        bad = report.declared_violations()
        if bad:
            raise HardsoftError(f"internal: declared gap violated: {bad[0]}")
    model = compiled.model
    keep_average = [  # uniform heads, and heads that average ties (a mean over a table)
        [h.kind == "uniform" or (h.tie == "average" and h.gap is None)
         for h in _layer_heads(compiled, ell)]
        for ell in range(len(model.spec.layers))
    ]  # fmt: skip
    cert = _certificate(lw, prog, outs, tgt, report, max_len)
    if tgt is Target.HARD:
        model = _hard(model, keep_average)
    elif tgt is Target.SOFT_TEMPERATURE:
        eps = _eps(outs)
        ns: tuple[int, ...] = (10, 100, 1000, 5000)
        if lw.bounded and max_len is not None:
            ns = tuple(sorted({n for n in ns if n < max_len} | {max_len}))
        t26 = theorem26(model, prog.gap, eps, ns)
        cert.update(t26)
        model = soften(model, t26["tau"])
    cert["float_limits"] = float_limits(
        compiled.program,
        head_models(compiled, model),
        [_tolerance(o) for o in outs],
        max_len if lw.bounded else None,
    )
    model.meta["target"] = tgt.value
    model.meta["kind"] = "compiled-rasp"
    model.meta["certificate"] = cert
    model.meta["program"] = {
        "notation": "rasp",
        "name": prog.name,
        "source": source or prog.name,
        "outputs": [o.entry for o in outs],
        "vocab": {s: json_value(v) for s, v in zip(lw.symbols, lw.vocab)},
        "max_len": max_len if lw.bounded else None,
        "causal": causal,
    }
    return RaspCompiled(model, compiled, lw, report, outs)


def _tolerance(o: Output) -> Callable[[int], float]:
    """How far output ``o`` may be off at length n and still be read right: half the spacing
    of its values (a count carried as count/n: that over n), or the checker's tolerance for
    a real read exactly."""
    if o.precision is None:
        return lambda n: TOLERANCE
    if o.entry.get("unit"):
        return lambda n: o.precision / n  # type: ignore[operator]
    return lambda n: o.precision  # type: ignore[return-value]


def _layer_heads(compiled: Compiled, ell: int) -> list[Any]:
    infos = sorted((h for h in compiled.heads if h.layer == ell), key=lambda h: h.head)
    return infos


def _check_soft(lw: Lowering, outs: list[Output]) -> None:
    """What Theorem 26 cannot carry: averages over ties, and real-valued outputs after a
    tieless head (their values have no spacing for ε to stay under)."""
    from hardsoft.programs.rasp.outputs import tieless_upstream

    if lw.tied:
        raise HardsoftError(
            f"cannot compile for soft-temperature: the numerical Aggregate {lw.tied[0]} averages "
            "over the positions a table selects, an average-hard head with ties, which Theorem 26 "
            "(uniform or tieless heads only) does not convert; --target average-hard builds it"
        )
    for o in outs:
        if o.precision is None and tieless_upstream(o.form):
            raise HardsoftError(
                f"cannot compile for soft-temperature: the output {o.entry['name']} is a real "
                "number computed after a tieless head, so Theorem 26's error ε cannot be rounded "
                "away (its values have no fixed spacing); --target average-hard builds it"
            )


def _eps(outs: list[Output]) -> float:
    """Theorem 26's output error: below half the spacing of every output's values (1/4 for
    0/1 and integer outputs)."""
    from hardsoft.programs.rasp.outputs import tieless_upstream

    eps = 0.25
    for o in outs:
        if o.precision is not None and tieless_upstream(o.form):
            eps = min(eps, 0.49 * o.precision)
    return eps


def _certificate(
    lw: Lowering,
    prog: dsl.Program,
    outs: list[Output],
    target: Target,
    report: TielessReport | None,
    max_len: int | None,
) -> dict[str, Any]:
    bounded = bool(lw.bounded)
    cert: dict[str, Any] = {
        "notation": "rasp",
        "program": prog.name,
        "target": target.value,
        "length_general": not bounded,
        "exact_for": f"n <= {max_len}" if bounded else "every length n",
        "bounded_because": [b.to_dict() for b in lw.bounded],
        "domain": [d.to_dict() for d in lw.domain_notes],
        "gadgets": [g.to_dict() for g in lw.gadgets],
        "outputs": [o.entry for o in outs],
        "route": "RASP -> average-hard program (hardsoft.programs.ahat.dsl) -> AHAT"
        + (
            " -> softmax, Yang et al. (arXiv:2412.09925v1) Theorem 26"
            if target is Target.SOFT_TEMPERATURE
            else ""
        ),
        "program_gap": prog.gap,
        "causal": lw.causal,
    }
    if max_len is not None and not bounded:
        cert["note"] = f"--max-len {max_len} was not needed: the model is exact at every length"
    if report is not None:
        summary = report.to_dict()
        cert["tieless_check"] = {
            "uniform_tieless": summary["uniform_tieless"],
            "lengths": summary["lengths"],
            "gamma_measured": summary["gamma_measured"],
        }
    if lw.tied:
        cert["tied_heads"] = list(lw.tied)
    if bounded and target is Target.SOFT_TEMPERATURE:
        cert["values_note"] = f"τ(n) is certified for n <= {max_len}, where the model is exact"
    return cert

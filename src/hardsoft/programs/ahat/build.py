"""One call from a program name to a finished model: compile to the AHAT, check that it is
uniform–tieless (exhaustively for small n, by sampling for larger n), for the
``soft-temperature`` target convert it with the certified τ(n), and attach the certificate
(for both targets: ``float_limits``, the largest n proven exact in each float format)."""

from __future__ import annotations

from dataclasses import dataclass

from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer
from hardsoft.programs.ahat.compile import Compiled, compile_program
from hardsoft.programs.ahat.library import get_program
from hardsoft.programs.ahat.rounding import float_limits, head_models
from hardsoft.programs.ahat.soften import DEFAULT_EPS, certificate, soften
from hardsoft.programs.ahat.tieless import TielessReport, check_tieless, sample_words

TARGETS = ("average-hard", "soft-temperature")


@dataclass
class Built:
    compiled: Compiled
    report: TielessReport
    model: Transformer  # the requested target
    certificate: dict  # float_limits for both targets; Theorem 26's bound for softmax


def check_compiled(
    compiled: Compiled,
    *,
    exhaustive_up_to: int = 5,
    sampled_lengths: tuple[int, ...] = (32, 128),
    samples: int = 16,
    seed: int = 0,
) -> TielessReport:
    """The uniform–tieless check of a compiled program at the given lengths."""
    prog = compiled.program
    sampled = {
        n: sample_words(
            prog.reference or None, prog.alphabet, n, samples, seed + n, uniform_share=0.5
        )
        for n in sampled_lengths
    }
    return check_tieless(
        compiled.model, exhaustive_up_to=exhaustive_up_to, sampled=sampled, program_gap=prog.gap
    )


def build(
    name: str,
    k: int | None = None,
    target: str = "average-hard",
    *,
    eps: float = DEFAULT_EPS,
    exhaustive_up_to: int = 5,
    sampled_lengths: tuple[int, ...] = (32, 128),
) -> Built:
    """Build the shipped program ``name`` for ``target`` (see :data:`TARGETS`)."""
    if target not in TARGETS:
        raise HardsoftError(f"unknown target {target!r} (one of {', '.join(TARGETS)})")
    compiled = compile_program(get_program(name, k))
    report = check_compiled(
        compiled, exhaustive_up_to=exhaustive_up_to, sampled_lengths=sampled_lengths
    )
    if not report.uniform_tieless:
        tie = next(h for h in report.heads if h.kind == "tied")
        where = tie.tie or {}
        raise HardsoftError(
            f"head {tie.label} is neither uniform nor tieless: tie on {where.get('word')!r} at "
            f"position {where.get('position')} (keys {where.get('tied_keys')})"
        )
    bad = report.declared_violations()
    if bad:
        raise HardsoftError(f"declared gap violated: {bad[0]}")
    hard = compiled.model
    hard.meta["tieless_check"] = report.to_dict()
    cert: dict = {"target": "average-hard"}
    model = hard
    if target == "soft-temperature":
        cert = certificate(hard, compiled.program.gap, eps)
        cert["gamma_measured"] = report.to_dict()["gamma_measured"]
        model = soften(hard, cert["tau"])
    half = [lambda n: 0.5] * len(compiled.program.outputs)  # bits and integers, rounded
    cert["float_limits"] = float_limits(compiled.program, head_models(compiled, model), half)
    model.meta["certificate"] = cert
    return Built(compiled, report, model, cert)

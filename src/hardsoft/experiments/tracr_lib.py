"""Tracr's library compiled by hardsoft: one softmax transformer per program, exact at every
length where the program allows it, checked against ``rasp.evaluate``.

Each function of Tracr's ``lib`` (Lindner et al. 2023), written for ``hardsoft.rasp``
(``src/hardsoft/programs/examples/tracr_lib.py``), plus a Boolean map of a count, is compiled
with ``--target soft-temperature`` (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) Theorem 26's
τ(n)) and every output is compared with the interpreter at every position: all words up to
length 4 and random words at n = 100 (quick), all words up to length 7 and random words at
n = 100 and 1000 (full). The two sorts whose keys Tracr makes unique with
``min_key · i / max_seq_len`` are sorts only for n <= max_seq_len: they are compiled with that
bound and checked up to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.model.spec import eval_tau  # noqa: E402
from hardsoft.programs.check_source import check_program  # noqa: E402
from hardsoft.programs.rasp.load import library_path, load  # noqa: E402


@dataclass(frozen=True)
class Plan:
    exhaustive: int
    random_n: tuple[int, ...]
    samples: int


QUICK = Plan(4, (100,), 2)
FULL = Plan(7, (100, 1000), 4)

EXTRA = {"count_is_two": "SelectorWidth(...) == 2"}
"""Programs beyond the lib: a Boolean map of a count."""

_SNAKE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")


def _quoted(text: str) -> str:
    """Identifiers in 'quotes' (report tables show words, not bare snake_case)."""
    return _SNAKE.sub(lambda m: f"'{m.group(1)}'", text)


PERMUTED = {"sort_unique"}
"""Programs defined only where their keys are unique: also checked on random permutations of
the whole vocabulary (random words repeat symbols, where ``rasp.evaluate`` is undefined)."""


def _permutations(alphabet: tuple[str, ...], count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.permutation(list(alphabet))) for _ in range(count)]


def _one(name: str, label: str, plan: Plan, seed: int) -> dict[str, Any]:
    program = load(library_path(), name=name)
    model = program.compile("soft-temperature")
    cert = model.meta["certificate"]
    bound = model.meta["program"]["max_len"]
    lengths = plan.random_n if bound is None else (bound,)
    samples = plan.samples if bound is None else plan.samples * 4
    extra = _permutations(program.alphabet, 4 * plan.samples, seed) if name in PERMUTED else []
    wide = len(program.alphabet) > 8  # all words to length 4 over 26 letters: too many
    report = check_program(
        model,
        program,
        exhaustive_max_n=min(plan.exhaustive, 2) if wide else plan.exhaustive,
        random_n=lengths,
        samples=samples,
        seed=seed,
        words=extra,
    )
    tau = cert.get("tau", "1")
    return {
        "name": name,
        "label": label,
        "status": "length-general" if cert["length_general"] else f"bounded (n ≤ {bound})",
        "reason": "; ".join(f"{b['statement']} {b['text']}" for b in cert["bounded_because"]),
        "layers": len(model.spec.layers),
        "heads": sum(len(layer.heads) for layer in model.spec.layers),
        "width": model.spec.d_model,
        "parameters": model.parameter_count(),
        "tau_1000": eval_tau(tau, 1000 if bound is None else bound),
        "tau_at": 1000 if bound is None else bound,
        "uniform_only": tau == "1",
        "checked_strings": report["checked_strings"],
        "checked_positions": report["checked_positions"],
        "undefined_strings": report["undefined_strings"],
        "max_n": report["max_n"],
        "mismatches": report["mismatches"],
        "first_mismatch": report["first_mismatch"],
    }


def _tau_text(r: dict[str, Any]) -> str:
    text = f"{r['tau_1000']:.3g}"
    return text if r["tau_at"] == 1000 else f"{text} (at n = {r['tau_at']}, its bound)"


def _figure(ctx: Context, rows: list[dict[str, Any]]) -> str:
    path = ctx.figure_path("tracr_lib_parameters.png")
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    labels = [r["label"] for r in rows]
    colors = ["tab:blue" if r["status"] == "length-general" else "tab:orange" for r in rows]
    ax.barh(range(len(rows)), [r["parameters"] for r in rows], color=colors)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("parameters of the compiled model (the same for every n)")
    ax.set_title("Tracr's library, compiled once for all lengths (soft-temperature)")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color="tab:blue", label="length-general"),
        plt.Rectangle((0, 0), 1, 1, color="tab:orange", label="bounded: n ≤ max_seq_len"),
    ]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path.name


@register(
    "tracr-lib",
    title="Tracr's library in RASP: one softmax transformer for every length",
    version="1",
    order=65,
    seed_ref="Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) "
    "§5, Theorem 26; Tracr (Lindner et "
    "al. 2023)",
)
def run(ctx: Context) -> Result:
    from hardsoft.programs.rasp.load import library_programs

    plan = QUICK if ctx.quick else FULL
    programs = {**{name: f"{fn}()" for fn, name in library_programs().items()}, **EXTRA}
    rows = [_one(name, label, plan, ctx.seed) for name, label in programs.items()]
    mismatches = sum(r["mismatches"] for r in rows)
    general = [r for r in rows if r["status"] == "length-general"]
    table = Table(
        "Each program: status, size (constant in n), certified τ and the check against "
        "rasp.evaluate",
        ["program", "status", "layers", "heads", "parameters", "τ(1000)", "positions checked",
         "longest n", "mismatches"],
        [
            [r["label"], r["status"], r["layers"], r["heads"], r["parameters"],
             "1 (uniform heads only)" if r["uniform_only"] else _tau_text(r),
             r["checked_positions"], r["max_n"], r["mismatches"]]
            for r in rows
        ],
    )  # fmt: skip
    reasons = Table(
        "Why the bounded programs are bounded (the certificate's words)",
        ["program", "reason"],
        [[r["label"], _quoted(r["reason"])] for r in rows if r["reason"]],
    )
    summary = (
        f"{len(general)} of {len(rows)} programs compile to one softmax model exact at every "
        f"length ({len(rows) - len(general)} bounded: keys made unique with i/max_seq_len); "
        f"every output at every position agrees with rasp.evaluate ({mismatches} mismatches, "
        f"words to length {plan.exhaustive} and random words up to n = "
        f"{max(r['max_n'] for r in rows)}). "
        f"{sum(r['uniform_only'] for r in rows)} need only uniform heads (exact at any τ)."
    )
    metrics = {
        "mismatches": mismatches,
        "length_general": len(general),
        "programs": {
            r["name"]: {k: v for k, v in r.items() if k != "first_mismatch"} for r in rows
        },  # fmt: skip
        "first_mismatch": next((r["first_mismatch"] for r in rows if r["mismatches"]), None),
    }
    return Result(
        metrics=metrics,
        figures=[_figure(ctx, rows)],
        tables=[table, reasons],
        summary=summary,
    )


__all__ = ["run"]

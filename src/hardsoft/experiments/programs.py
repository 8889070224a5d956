"""Experiment ``programs``: every shipped example program, in every notation this installation
reads (C-RASP ``.cr``, B-RASP ``.brasp``, Tracr's RASP in ``tracr_lib.py``), compiled to every
target its notation offers and checked against its own interpreter.

Targets: C-RASP and B-RASP ``hard``, ``soft-temperature`` (softmax with τ(n) and bounded
position features) and ``soft-pe`` (τ = 1, unbounded position features); RASP
``average-hard``, ``soft-temperature`` (Theorem 26's τ(n)) and ``hard``. A target a program
does not support (its ``compile`` refuses with a one-line error, e.g. a RASP mean on ``hard``)
is listed as refused, with the reason. Every output is compared with the interpreter by
``check --program``'s machinery (:func:`hardsoft.programs.check_source.check_program`) at
every position of every word up to a length and of random words (:data:`QUICK`,
:data:`FULL`); a RASP model built for n ≤ N (the file's ``max_len``) is checked up to N.

Quick mode runs every C-RASP and B-RASP program and a representative subset of the RASP
library (:data:`QUICK_RASP`: a count, a histogram, Dyck-1 by shuffle_dyck and a bounded sort);
the full mode runs all of them, with longer words. The table gives layers, heads, width,
parameters, the certified τ(n) and the check counts; the figure the sizes and the certified
temperatures.

New notations plug in with no change here: the programs come from
:func:`hardsoft.programs.source.example_programs` and go through the
:class:`~hardsoft.programs.source.SourceProgram` contract.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hardsoft.errors import HardsoftError  # noqa: E402
from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.model import eval_tau  # noqa: E402
from hardsoft.programs.check_source import check_program  # noqa: E402
from hardsoft.programs.compiled import model_sizes  # noqa: E402
from hardsoft.programs.source import (  # noqa: E402
    NOTATION_TARGETS,
    ExampleProgram,
    Notation,
    SourceProgram,
    example_programs,
    load_program,
)

TARGETS = ("hard", "average-hard", "soft-temperature", "soft-pe", "soft-ln")
"""Every target some notation offers, in the order of the table and figure."""

TAU_NS = (10, 100, 1000, 10_000, 100_000)


@dataclass(frozen=True)
class Plan:
    """How far each model is checked: every word up to ``exhaustive`` symbols (``small`` over
    three or more symbols), and ``samples`` random words at each length of ``random_n``."""

    exhaustive: int
    small: int
    random_n: tuple[int, ...]
    samples: int


QUICK = Plan(exhaustive=5, small=4, random_n=(100,), samples=2)
FULL = Plan(exhaustive=10, small=6, random_n=(100, 1000), samples=12)

QUICK_RASP = ("count", "hist", "shuffle_dyck", "sort")
"""The RASP library programs the quick mode runs (a count, a histogram, Dyck-1, and a sort
built for n ≤ 10); the full mode runs every one."""

WIDE = 8
"""Over more symbols than this (RASP's sort_unique: 26 letters) words are exhaustive only to
length 2."""


def _chosen(quick: bool) -> list[ExampleProgram]:
    return [
        e
        for e in example_programs()
        if not (quick and e.file.notation is Notation.RASP and e.inner not in QUICK_RASP)
    ]


def _exhaustive_n(program: SourceProgram, plan: Plan) -> int:
    k = len(program.alphabet)
    return plan.exhaustive if k <= 2 else plan.small if k <= WIDE else 2


def _tau_exprs(cert: dict, target: str) -> list[str]:
    """The certified τ(n) expressions of a softmax model's heads: one string (the logic and
    RASP compilers), or one entry per group of heads (B-RASP: ``[{"expression", ...}]``)."""
    tau = cert.get("tau")
    if target in ("hard", "average-hard"):
        return []
    if isinstance(tau, list):
        tau = list(dict.fromkeys(str(t["expression"]) for t in tau))
    elif tau:
        tau = [str(tau)]
    tau_one = target in ("soft-pe", "soft-ln")  # τ = 1 by construction
    return tau or (["1"] if tau_one else [])


def _tau_at(exprs: list[str], n: int) -> float | None:
    """The certified temperature of the coldest head at length n; None without one."""
    return min((float(eval_tau(e, n)) for e in exprs), default=None)


def _row(ctx: Context, example: ExampleProgram, program: SourceProgram, target: str) -> dict:
    row: dict[str, Any] = {
        "program": example.label,
        "notation": program.notation.value,
        "target": target,
        "alphabet": "".join(program.alphabet),
    }
    started = time.perf_counter()
    try:
        model = program.compile(target)
    except HardsoftError as exc:
        row["refused"] = str(exc).splitlines()[0]
        return row
    plan = QUICK if ctx.quick else FULL
    report = check_program(
        model,
        program,
        exhaustive_max_n=_exhaustive_n(program, plan),
        random_n=plan.random_n,
        samples=plan.samples,
        seed=ctx.seed,
    )
    cert = model.meta.get("certificate") or {}
    exprs = _tau_exprs(cert, target)
    row.update(model_sizes(model))
    row.update(
        outputs=list(model.spec.output_names),
        theorem=cert.get("theorem", ""),
        tau=", ".join(exprs) or None,
        gap=cert.get("gap"),
        tau_at={str(n): _tau_at(exprs, n) for n in TAU_NS},
        max_len=report["max_len"],
        strings=report["checked_strings"],
        positions=report["checked_positions"],
        undefined=report["undefined_strings"],
        mismatches=report["mismatches"],
        max_abs_error=report["max_abs_error"],
        first_mismatch=report["first_mismatch"],
        seconds=round(time.perf_counter() - started, 3),
    )
    return row


def _short(expr: str, limit: int = 28) -> str:
    """A τ(n) expression for a table cell or a legend (Theorem 26's carries long constants)."""
    return expr if len(expr) <= limit else expr[: limit - 1] + "…"


def _figure(ctx: Context, rows: list[dict[str, Any]]) -> str:
    built = [r for r in rows if "refused" not in r]
    names = list(dict.fromkeys(r["program"] for r in built))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(16, 5), gridspec_kw={"width_ratios": [3, 1.6]})
    width = 0.8 / len(TARGETS)
    for k, target in enumerate(TARGETS):
        values = [
            next((r["parameters"] for r in built if r["program"] == n and r["target"] == target),
                 np.nan)
            for n in names
        ]  # fmt: skip
        offset = (k - (len(TARGETS) - 1) / 2) * width
        ax.bar(np.arange(len(names)) + offset, values, width, label=target)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("parameters")
    ax.set_title("compiled size per program and target")
    ax.legend(fontsize=8)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in built:
        if r["target"] == "soft-temperature" and r["heads"] and r["tau"]:
            groups.setdefault((r["notation"], r["tau"]), []).append(r)
    styles = {"crasp": "-", "brasp": "--", "rasp": ":"}
    for (notation, _expr), members in sorted(groups.items()):
        progs = [r["program"] for r in members]
        bound = members[0]["max_len"]  # a bounded model's τ(n) only where it is built for
        ns = [n for n in TAU_NS if bound is None or n <= bound]
        taus = [members[0]["tau_at"][str(n)] for n in ns]
        shown = ", ".join(progs) if len(progs) <= 3 else f"{len(progs)} programs"
        label = f"{Notation(notation).display}, {_tau_cell(members[0])}: {shown}"
        label += f" (built for n ≤ {bound})" if bound is not None else ""
        bx.loglog(ns, taus, styles.get(notation, "-"), marker="o", ms=3, label=label)
    bx.set_xlabel("n")
    bx.set_ylabel("certified τ(n) (smallest head)")
    bx.set_title("soft-temperature: certified τ(n)")
    bx.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    path = ctx.figure_path("programs.png")
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return path.name


def _tau_cell(r: dict[str, Any]) -> str:
    """τ(n) as certified; Theorem 26's long expression by its gap γ(n) (τ(1000) is beside)."""
    tau = r["tau"]
    if not tau:
        return "—"
    if len(tau) > 28 and r.get("gap"):
        return f"Thm. 26, γ(n) = {r['gap']}"
    return "τ = " + _short(tau)


def _checked(r: dict[str, Any]) -> str:
    text = f"{r['positions']:,} in {r['strings']:,} words"
    if r["max_len"] is not None:
        text += f" (model built for n ≤ {r['max_len']})"
    if r["undefined"]:
        text += f"; {r['undefined']:,} words where the program is undefined"
    return text


def _table(rows: list[dict[str, Any]]) -> Table:
    out = []
    for r in rows:
        if "refused" in r:
            out.append([r["program"], r["notation"], r["target"], "refused: " + r["refused"]]
                       + [""] * 7)  # fmt: skip
            continue
        tau = r["tau_at"]["1000"]
        out.append(
            [
                r["program"],
                r["notation"],
                r["target"],
                r["layers"],
                r["heads"],
                r["width"],
                r["parameters"],
                _tau_cell(r).removeprefix("τ = "),
                f"{tau:.3g}" if tau is not None else "—",
                _checked(r),
                r["mismatches"],
            ]
        )
    return Table(
        "Shipped programs compiled to each target, checked against their interpreters",
        ["program", "notation", "target", "layers", "heads", "width", "parameters",
         "τ(n)", "τ(1000)", "checked", "mismatches"],
        out,
    )  # fmt: skip


@register(
    "programs",
    title="Programs in the papers' notations, compiled exact (C-RASP, B-RASP, RASP)",
    version="3",
    order=47,
)
def run(ctx: Context) -> Result:
    rows: list[dict[str, Any]] = []
    skipped = []
    chosen = _chosen(ctx.quick)
    for example in chosen:
        if not example.file.available:
            notation = example.file.notation.display
            skipped.append(f"{example.name} ({notation}: notation not available)")
            continue
        program = load_program(example.path)
        for target in NOTATION_TARGETS[program.notation]:
            rows.append(_row(ctx, example, program, target))
    built = [r for r in rows if "refused" not in r]
    mismatches = sum(int(r["mismatches"]) for r in built)
    positions = sum(int(r["positions"]) for r in built)
    notations = list(dict.fromkeys(r["notation"] for r in rows))
    subset = ctx.quick and len(chosen) < len(example_programs())
    metrics = {
        "programs": len({r["program"] for r in rows}),
        "notations": notations,
        "models": len(built),
        "refused": len(rows) - len(built),
        "mismatches": mismatches,
        "checked_positions": positions,
        "all_exact": mismatches == 0 and all(r["positions"] > 0 for r in built),
        "max_abs_error": max((float(r["max_abs_error"]) for r in built), default=0.0),
        "subset": subset,
        "skipped": skipped,
        "rows": rows,
    }
    figure = _figure(ctx, rows) if built else None
    counts = {n: len({r["program"] for r in rows if r["notation"] == n}) for n in notations}
    which = ", ".join(f"{k} {Notation(n).display}" for n, k in counts.items())
    summary = (
        f"{metrics['programs']} shipped programs ({which}"
        + ("; quick mode: the RASP library's " + ", ".join(QUICK_RASP) + " only" if subset else "")
        + f") compiled to {len(built)} models ({metrics['refused']} target(s) refused, with the "
        f"reason); every output checked against the program's own interpreter at "
        f"{positions:,} positions: {mismatches} mismatches (largest raw output error "
        f"{metrics['max_abs_error']:.2g}, read by each output's encoding). The certified "
        "temperatures are the compilers': the logic compiler's for C-RASP (Yang, Strobl, "
        "Chiang & Angluin (arXiv:2412.09925v1) Thm. 21 and Cor. 23), one softmax head per B-RASP "
        "attention with τ = 1/(8n) (own construction, cf. Lemma 8), Theorem 26's τ(n) for RASP; "
        "soft-ln: τ = 1 and layer norm with ε = 0 for C-RASP's counting fragment (own "
        "construction, cf. Yang & Chiang (COLM 2024), main theorem; a program with #[pred], "
        "i.e. Y, is refused)."
    )
    if skipped:
        summary += " Not run: " + "; ".join(skipped) + "."
    return Result(
        metrics=metrics,
        figures=[figure] if figure else [],
        tables=[_table(rows)],
        summary=summary,
    )

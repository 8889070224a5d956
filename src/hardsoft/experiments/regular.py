"""Regular languages compiled: each language's syntactic monoid and class (star-free,
solvable, non-solvable), the past formula the local-divisor translation gives (distinct nodes
as built and after the decompiler's proved shrinking), the ``hard`` model (layers, heads) and
the lengths at which it was checked against the DFA (docs/regular.md).

The formula is proved equal to the DFA at every length (its own minimal DFA, built bottom-up,
is the input's) before it is compiled; the compiler's certificate proves the model computes the
formula at every length; the check here is the independent last look: every word up to a
length and random words, against the DFA. A non-solvable language (the A5 word problem) is
refused with its group named (Barrington 1989: NC¹-complete; no construction known).
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FormatStrFormatter  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.languages import get_language  # noqa: E402
from hardsoft.languages.regular import DFA, dfa_from_regex  # noqa: E402

QUICK_REGEXES = (
    ("parity (even 1s)", "0*(10*10*)*", "01"),
    ("(aa)*", "(aa)*", "ab"),
    ("(ab|ba)*", "(ab|ba)*", "ab"),
    ("(aab)*", "(aab)*", "ab"),
    ("Σ*abΣ*", ".*ab.*", "ab"),
    ("Dyck-1, depth ≤ 3", "(a(a(ab)*b)*b)*", "ab"),
)
QUICK_LANGUAGES = ("tomita4", "a5-identity")
FULL_LANGUAGES = ("tomita5", "tomita6", "tomita7", "even-pairs", "cycle-navigation")
"""Registered languages (their own DFAs, hardsoft.languages) beside the expressions."""


def _languages(quick: bool) -> list[tuple[str, DFA]]:
    named = [(label, dfa_from_regex(rx, alphabet)) for label, rx, alphabet in QUICK_REGEXES]
    registered = QUICK_LANGUAGES if quick else QUICK_LANGUAGES + FULL_LANGUAGES
    for name in registered:
        dfa = get_language(name).automaton()
        assert dfa is not None, name
        named.append((name, dfa))
    return named


def _one(label: str, dfa: DFA) -> dict[str, Any]:
    from hardsoft.atlas.evidence import class_violations
    from hardsoft.atlas.table import column
    from hardsoft.regular.compile import compile_regular

    result = compile_regular(dfa, "hard")  # raises on a mismatch with the DFA (a bug)
    rec = result.record
    row: dict[str, Any] = {
        "language": label,
        "class": rec["class"],
        "monoid_size": rec["monoid_size"],
        "refused": result.refused,
    }
    if result.refused:
        group: dict[str, Any] = next((g for g in rec["groups"] if not g["solvable"]), {})
        row["reason"] = rec["reason"]
        row["group"] = group.get("name")
        return row
    cert, check = rec["certificate"], rec["model_check"]
    row.update(
        dag_before=rec["formula_size"]["dag_before"],
        dag_after=rec["formula_size"]["dag_after"],
        layers=cert["layers"],
        heads=cert["heads_total"],
        weightings=sorted({h["weighting"] for h in cert["heads"]}),
        exhaustive_to_n=check["exhaustive_to_n"],
        max_n=check["max_n"],
        checked_strings=check["checked_strings"],
        mismatches=check["mismatches"],
        unique_hard_strict=result.model is not None
        and not class_violations(result.model, column("uhat-strict")),
        proved_every_length=rec["formula_check"]["product"]["equal_at_every_length"],
    )
    return row


def _figure(ctx: Context, rows: list[dict[str, Any]]) -> str:
    path = ctx.figure_path("regular_sizes.png")
    built = [r for r in rows if not r["refused"]]
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = {"star-free": "tab:blue", "solvable": "tab:green"}
    for r in built:
        ax.scatter(r["monoid_size"], r["dag_after"], color=colors[r["class"]], s=30)
        ax.annotate(r["language"], (r["monoid_size"], r["dag_after"]), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")  # fmt: skip
    for cls, color in colors.items():
        ax.scatter([], [], color=color, label=cls)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers, not 2×10⁰
        axis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.set_xlabel("syntactic monoid size")
    ax.set_ylabel("formula size (distinct nodes, after shrinking)")
    ax.set_title("Regular languages compiled: formula size by monoid size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path.name


def _table(rows: list[dict[str, Any]]) -> Table:
    def cells(r: dict[str, Any]) -> list[Any]:
        if r["refused"]:
            return [r["language"], r["class"], r["monoid_size"], f"refused: {r['group']}",
                    "—", "—", "—", "—"]  # fmt: skip
        return [
            r["language"], r["class"], r["monoid_size"], r["dag_before"], r["dag_after"],
            r["layers"], f"{r['heads']} ({', '.join(r['weightings'])})",
            f"all words ≤ {r['exhaustive_to_n']}, random to {r['max_n']}: "
            f"{r['mismatches']} mismatches",
        ]  # fmt: skip

    return Table(
        "Each language: class, syntactic monoid, past formula (distinct nodes as built → after "
        "proved shrinking), the hard model and its check against the DFA (the formula is "
        "proved equal to the DFA at every length)",
        ["language", "class", "monoid size", "formula built", "formula kept", "layers",
         "heads (weightings)", "checked against the DFA"],
        [cells(r) for r in rows],
    )  # fmt: skip


@register(
    "regular-compiled",
    title="Regular languages compiled: a transformer exact at every length",
    version="1",
    order=48,
    seed_ref="Yang, Chiang & Angluin (2024) §5–6; Straubing, Thérien & Barrington (1988); "
    "Barrington (1989)",
)
def run(ctx: Context) -> Result:
    rows = [_one(label, dfa) for label, dfa in _languages(ctx.quick)]
    built = [r for r in rows if not r["refused"]]
    refused = [r for r in rows if r["refused"]]
    mismatches = sum(r["mismatches"] for r in built)
    star_free = [r for r in built if r["class"] == "star-free"]
    unique_only = [r for r in star_free if r["unique_hard_strict"]]
    names = ", ".join(f"{r['language']} ({r['group']})" for r in refused) or "none"
    summary = (
        f"{len(built)} of {len(rows)} languages compiled ({len(star_free)} star-free, "
        f"{len(built) - len(star_free)} solvable), each formula proved equal to the DFA at "
        f"every length and each model checked against the DFA ({mismatches} mismatches); "
        f"{len(unique_only)} of the {len(star_free)} star-free models are unique-hard with "
        f"strict masks and no position features (read from the model); refused: {names} "
        "(Barrington 1989: NC¹-complete, no construction known)."
    )
    metrics = {
        "mismatches": mismatches,
        "compiled": len(built),
        "refused": [r["language"] for r in refused],
        "refused_groups": [r["group"] for r in refused],
        "star_free_unique_only": len(unique_only),
        "star_free": len(star_free),
        "proved_every_length": all(r["proved_every_length"] for r in built),
        "languages": {r["language"]: r for r in rows},
    }
    return Result(metrics, figures=[_figure(ctx, rows)], tables=[_table(rows)], summary=summary)


__all__ = ["run"]

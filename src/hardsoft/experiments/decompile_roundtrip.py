"""Decompile round trip: formula → hard transformer → formula, and random unique-hard models →
formulas (docs/decompile.md).

1. **Round trip.** Every named formula (``hardsoft formulas list``), a few hand-written LTL
   formulas and random LTL formulas are compiled with ``--target hard`` under both mask modes
   (strict and non-strict); the model is decompiled to G, and G ≡ F is checked by the logic
   evaluator at every position of every word up to length 10 (quick: 6) and of random words
   up to n = 2000 (quick: 200). Sizes side by side (tree nodes, temporal depth) and the ratio
   |G| / |F|. Counting formulas (named, hand-written and random LTL[C,+]) compile to
   average-hard heads and unbounded position features and are decompiled to counting terms;
   whatever decompile refuses is reported with the reason.
2. **Random unique-hard models** without position features (the constant feature ``1``
   only): leftmost and rightmost, masks none/future/past/strict-future/strict-past, 1–2 layers
   (full: 1–3), decompiled and checked against the model at every position of every word up
   to length 9 (quick: 7) and of random words up to n = 500 (quick: 200).
3. **Random counting models**: two uniform average-hard heads per mask, a random ReLU layer
   and readout (weights on the grid 1/8), decompiled to count comparisons and checked the
   same way.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402

if TYPE_CHECKING:
    from hardsoft.model.transformer import Transformer

COUNTING = (
    ("count-gt", "#<['a'] > 2 * #<['b'] + 1", "ab"),
    ("mod-3", "MOD(3, 1)(#<['a'])", "ab"),
    ("suffix-eq", "#>['a'] = #>['b']", "ab"),
    ("suffix-mod", "MOD(2, 0)(#>['b'])", "ab"),
    ("last-balanced", "last & #<['a'] = #<['b']", "ab"),
    ("half-length", "2 * #<['a'] > n", "ab"),
    ("since-count", "'a' S (#<['b'] = 2)", "ab"),
)
"""Hand-written counting formulas (prefix and suffix counts, MOD, n, counts under S)."""

HAND = (
    ("since", "'a' S 'b'", "ab"),
    ("until", "'a' U 'b'", "ab"),
    ("yesterday", "'a' & Y ('b' & Y 'a')", "ab"),
    ("next-prev", "'a' & (X 'b' | Y 'c')", "abc"),
    ("no-b-before", "'a' & !P 'b'", "ab"),
    ("nested-since", "('a' | X 'b') S ('c' & Y 'a')", "abc"),
    ("first-a", "E (first & 'a')", "ab"),
    ("last-two", "'b' & Y 'a'", "ab"),
)
MASK_MODES = ("strict", "nonstrict")
WEIGHTINGS = ("leftmost", "rightmost")
MASKS = ("none", "future", "past", "strict-future", "strict-past")


def _short(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def roundtrip_row(
    name: str, text: str, alphabet: str, masks: str, quick: bool, seed: int
) -> dict[str, Any]:
    """Compile, decompile and compare one formula (one table row)."""
    from hardsoft.compile import compile_formula
    from hardsoft.decompile import decompile
    from hardsoft.decompile.decompiler import equivalence
    from hardsoft.errors import HardsoftError
    from hardsoft.logic import parse
    from hardsoft.logic.syntax import size, temporal_depth, to_text

    f = parse(text, alphabet=alphabet)
    row: dict[str, Any] = {"name": name, "masks": masks, "F": to_text(f), "size_F": size(f)}
    try:
        model = compile_formula(f, alphabet=alphabet, target="hard", masks=masks)
    except HardsoftError as exc:
        return {**row, "status": f"refused (compile): {exc}"}
    start = time.perf_counter()
    try:
        d = decompile(model, verify_n=5 if quick else 8, random_words=20 if quick else 200)
    except HardsoftError as exc:
        return {**row, "status": f"refused: {exc}"}
    g = d.formulas[0]
    eq = equivalence(
        f,
        g,
        tuple(alphabet),
        max_n=6 if quick else 10,
        random_count=20 if quick else 200,
        random_max_n=200 if quick else 2000,
        seed=seed,
    )
    return {
        **row,
        "status": "ok" if eq["mismatches"] == 0 and d.verified["mismatches"] == 0 else "MISMATCH",
        "G": to_text(g),
        "size_G": size(g),
        "ratio": size(g) / size(f),
        "depth_F": temporal_depth(f),
        "depth_G": temporal_depth(g),
        "layers": len(model.spec.layers),
        "method": d.to_dict()["method"],
        "classes": d.classes[-1],
        "model_mismatches": d.verified["mismatches"],
        "equiv_positions": eq["positions"],
        "equiv_mismatches": eq["mismatches"],
        "equiv_exhaustive_n": eq["exhaustive_n"],
        "equiv_max_n": eq["max_n"],
        "seconds": round(time.perf_counter() - start, 2),
    }


def random_decompile_model(weighting: str, mask: str, layers: int, seed: int) -> Transformer:
    """The random unique-hard model decompiled here and in ``benchmarks/decompile.py``: every
    head ``weighting`` and ``mask``, d_model 8, the constant feature 1 only, 2 heads per layer
    (1 from 3 layers on), alphabet ``01``, seeded by ``seed``."""
    from hardsoft.model import random_model

    return random_model(
        layers=layers,
        heads=1 if layers >= 3 else 2,
        d_model=8,
        weighting=weighting,
        mask=mask,
        position_features=("1",),
        seed=seed,
    )


COUNTING_FEATURES = {
    "future": ("1", "1/i"),
    "none": ("1", "1/n"),
    "past": ("1",),
    "strict-future": ("1",),
    "strict-past": ("1",),
}
"""The position features of the random counting models: a count over the window divided by
its size, compared with a feature of the same denominator, stays linear."""


def random_counting_model(mask: str, seed: int, d_ff: int = 4) -> Transformer:
    """A random counting model: two uniform average-hard heads with ``mask`` averaging a
    random function of the symbol (alphabet ``01``), then a random ReLU feed-forward and
    readout over the averages and the position features (:data:`COUNTING_FEATURES`); d_model
    8 (symbol part in dims 0-3, position part in 4-7), every weight on the grid 1/8."""
    import torch

    from hardsoft.model import random_model

    model = random_model(
        layers=1,
        heads=2,
        d_model=8,
        d_ff=d_ff,
        weighting="average",
        mask=mask,
        position_features=COUNTING_FEATURES[mask],
        seed=seed,
    )
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.round(param * 8) / 8)
        model.W_E[:, 4:] = 0
        model.W_pos[:, :4] = 0
        for head in model.blocks[0].heads:
            head.W_Q.zero_()  # uniform: every window position scores the same
            head.W_K.zero_()
            head.W_V[4:] = 0  # the value is a function of the symbol
    return model


def counting_model_row(mask: str, quick: bool, seed: int) -> dict[str, Any]:
    """Decompile one random counting model and check it against the model (one row)."""
    from hardsoft.decompile import decompile
    from hardsoft.errors import HardsoftError
    from hardsoft.logic.syntax import size

    model = random_counting_model(mask, seed)
    row: dict[str, Any] = {"mask": mask, "seed": seed, "features": COUNTING_FEATURES[mask]}
    start = time.perf_counter()
    try:
        d = decompile(
            model,
            verify_n=7 if quick else 9,
            random_words=50 if quick else 200,
            random_max_n=200 if quick else 500,
            seed=seed,
        )
    except HardsoftError as exc:
        return {**row, "status": f"refused: {exc}", "positions": 0, "mismatches": 0}
    return {
        **row,
        "status": "ok" if d.verified["mismatches"] == 0 else "MISMATCH",
        "classes": d.classes,
        "size": size(d.formulas[0]),
        "G": to_text_short(d.formulas[0]),
        "positions": d.verified["positions"],
        "mismatches": d.verified["mismatches"],
        "exhaustive_n": d.verified["exhaustive_n"],
        "max_n": d.verified["max_n"],
        "seconds": round(time.perf_counter() - start, 2),
    }


def to_text_short(f: Any, width: int = 80) -> str:
    from hardsoft.logic.syntax import to_text

    return _short(to_text(f), width)


def random_model_row(weighting: str, mask: str, layers: int, quick: bool, seed: int) -> dict:
    """Decompile one random unique-hard model (:func:`random_decompile_model`) and verify it."""
    from hardsoft.decompile import decompile
    from hardsoft.logic.syntax import size

    model = random_decompile_model(weighting, mask, layers, seed)
    heads = len(model.spec.layers[0].heads)
    start = time.perf_counter()
    d = decompile(
        model,
        verify_n=7 if quick else 9,
        random_words=30 if quick else 200,
        random_max_n=200 if quick else 500,
        seed=seed,
    )
    return {
        "weighting": weighting,
        "mask": mask,
        "layers": layers,
        "heads": heads,
        "classes": d.classes,
        "size": size(d.formulas[0]),
        "positions": d.verified["positions"],
        "mismatches": d.verified["mismatches"],
        "exhaustive_n": d.verified["exhaustive_n"],
        "max_n": d.verified["max_n"],
        "seconds": round(time.perf_counter() - start, 2),
    }


def _formulas(quick: bool, seed: int) -> list[tuple[str, str, str]]:
    from hardsoft.logic import FORMULAS
    from hardsoft.logic.random import FRAGMENT_OPERATORS, random_formula
    from hardsoft.logic.syntax import to_text

    out = [(name, e.text, e.alphabet) for name, e in FORMULAS.items()]
    out += list(HAND) + list(COUNTING)
    rng = np.random.default_rng(seed)
    for k in range(4 if quick else 24):
        f = random_formula(int(rng.integers(2**31)), "ab", 3, FRAGMENT_OPERATORS["LTL"])
        out.append((f"random-{k}", to_text(f), "ab"))
    for k in range(3 if quick else 12):
        f = random_formula(int(rng.integers(2**31)), "ab", 3, FRAGMENT_OPERATORS["LTL[C,+]"])
        out.append((f"random-count-{k}", to_text(f), "ab"))
    return out


@register(
    "decompile-roundtrip",
    title="Decompile: compile -> decompile round trip, random unique-hard and counting models",
    version="3",
    order=75,
    seed_ref="Yang, Chiang & Angluin (2024)",
)
def run(ctx: Context) -> Result:
    rows = [
        roundtrip_row(name, text, alphabet, masks, ctx.quick, ctx.seed)
        for name, text, alphabet in _formulas(ctx.quick, ctx.seed)
        for masks in MASK_MODES
    ]
    layer_range = (1, 2) if ctx.quick else (1, 2, 3)
    randoms = [
        random_model_row(w, m, layers, ctx.quick, ctx.seed + 17 * k)
        for k, (w, m, layers) in enumerate(
            (w, m, layers) for layers in layer_range for w in WEIGHTINGS for m in MASKS
        )
        if not (ctx.quick and layers == 2 and m in ("past", "strict-past"))
    ]
    counting = [
        counting_model_row(m, ctx.quick, ctx.seed + 31 * k)
        for k, m in enumerate(m for m in MASKS for _ in range(1 if ctx.quick else 3))
    ]
    done = [r for r in rows if "ratio" in r]
    refused = [r for r in rows if r["status"].startswith("refused")]
    metrics = _metrics(rows, done, refused, randoms, counting)
    fig = ctx.figure_path("decompile_roundtrip_sizes.png")
    _plot(done, fig)
    tables = [_roundtrip_table(rows), _random_table(randoms), _counting_table(counting)]
    summary = _summary(metrics, rows, done, refused, randoms, counting)
    return Result(metrics=metrics, figures=[fig.name], tables=tables, summary=summary)


def _metrics(
    rows: list[dict],
    done: list[dict],
    refused: list[dict],
    randoms: list[dict],
    counting: list[dict],
) -> dict[str, Any]:
    """The experiment's metrics from its three kinds of rows."""
    ratios = [r["ratio"] for r in done]
    metrics = {
        "formulas": len(rows),
        "decompiled": len(done),
        "refused": len(refused),
        "all_equivalent": all(r["status"] == "ok" for r in done),
        "equiv_mismatches": sum(r["equiv_mismatches"] for r in done),
        "model_mismatches": sum(r["model_mismatches"] for r in done),
        "ratio_max": max(ratios, default=None),
        "ratio_median": float(np.median(ratios)) if ratios else None,
        "within_4x": sum(1 for x in ratios if x <= 4),
        "random_models": len(randoms),
        "random_mismatches": sum(r["mismatches"] for r in randoms),
        "random_positions": sum(r["positions"] for r in randoms),
        "counting_decompiled": sum(1 for r in done if r["method"] == "counting"),
        "counting_models": len(counting),
        "counting_models_ok": sum(1 for r in counting if r["status"] == "ok"),
        "counting_mismatches": sum(r["mismatches"] for r in counting),
        "counting_positions": sum(r["positions"] for r in counting),
    }
    return metrics


def _roundtrip_table(rows: list[dict]) -> Table:
    """The compiled formulas' round trips, one row per (formula, mask mode)."""
    return Table(
        "Round trip: F -> compile --target hard -> decompile -> G (G = F checked by the "
        "logic evaluator)",
        [
            "name",
            "masks",
            "F",
            "|F|",
            "G",
            "|G|",
            "|G|/|F|",
            "depth F/G",
            "layers",
            "method",
            "classes",
            "G = F (positions)",
            "status",
        ],
        [
            [
                r["name"],
                r["masks"],
                _short(r["F"], 40),
                r["size_F"],
                _short(r.get("G", ""), 60),
                r.get("size_G", ""),
                round(r["ratio"], 2) if "ratio" in r else "",
                f"{r['depth_F']}/{r['depth_G']}" if "ratio" in r else "",
                r.get("layers", ""),
                r.get("method", ""),
                r.get("classes", ""),
                f"{r['equiv_positions'] - r['equiv_mismatches']}/{r['equiv_positions']}"
                if "ratio" in r
                else "",
                _short(r["status"], 90),
            ]
            for r in rows
        ],
    )


def _random_table(randoms: list[dict]) -> Table:
    """The random unique-hard models, decompiled and checked against the model."""
    return Table(
        "Random unique-hard models (feature 1 only): decompiled formulas against the model",
        [
            "weighting",
            "mask",
            "layers",
            "heads",
            "classes per layer",
            "|G|",
            "positions",
            "mismatches",
            "all words to n",
            "random to n",
            "seconds",
        ],
        [
            [
                r["weighting"],
                r["mask"],
                r["layers"],
                r["heads"],
                str(r["classes"]),
                r["size"],
                r["positions"],
                r["mismatches"],
                r["exhaustive_n"],
                r["max_n"],
                r["seconds"],
            ]
            for r in randoms
        ],
    )


def _counting_table(counting: list[dict]) -> Table:
    """The random counting models, decompiled and checked against the model."""
    return Table(
        "Random counting models (two uniform average-hard heads, a random ReLU layer, "
        "weights on the grid 1/8): decompiled formulas against the model",
        [
            "mask",
            "features",
            "classes per layer",
            "|G|",
            "G",
            "positions",
            "mismatches",
            "all words to n",
            "random to n",
            "seconds",
            "status",
        ],
        [
            [
                r["mask"],
                ", ".join(r["features"]),
                str(r.get("classes", "")),
                r.get("size", ""),
                r.get("G", ""),
                r["positions"],
                r["mismatches"],
                r.get("exhaustive_n", ""),
                r.get("max_n", ""),
                r.get("seconds", ""),
                _short(r["status"], 90),
            ]
            for r in counting
        ],
    )


def _summary(
    metrics: dict[str, Any],
    rows: list[dict],
    done: list[dict],
    refused: list[dict],
    randoms: list[dict],
    counting: list[dict],
) -> str:
    """The experiment's one-paragraph summary."""
    summary = (
        f"{len(done)} of {len(rows)} (formula, mask mode) pairs compile to hard models and "
        f"were decompiled ({metrics['counting_decompiled']} of them counting models: "
        f"average-hard heads, unbounded position features); G = F at every checked position "
        f"for {sum(1 for r in done if r['status'] == 'ok')} of them (evaluator mismatches: "
        f"{metrics['equiv_mismatches']}). Size ratio |G|/|F|: median "
        f"{_ratio(metrics['ratio_median'])}, max {_ratio(metrics['ratio_max'])}; "
        f"{metrics['within_4x']} of {len(done)} within 4x. {len(refused)} refused. Random "
        f"unique-hard models: {len(randoms)} decompiled, {metrics['random_mismatches']} "
        f"mismatches in {metrics['random_positions']:,} positions. Random counting models: "
        f"{metrics['counting_models_ok']} of {len(counting)} decompiled and agree, "
        f"{metrics['counting_mismatches']} mismatches in {metrics['counting_positions']:,} "
        "positions."
    )
    return summary


def _ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _plot(rows: list[dict[str, Any]], path: Any) -> None:
    fig, ax = plt.subplots(figsize=(5, 4))
    for masks, marker in (("strict", "o"), ("nonstrict", "s")):
        pts = [(r["size_F"], r["size_G"]) for r in rows if r["masks"] == masks]
        if pts:
            x, y = zip(*pts)
            ax.scatter(x, y, marker=marker, label=f"masks {masks}", alpha=0.7)
    top = max([max(r["size_F"], r["size_G"]) for r in rows] + [2])
    ax.plot([1, top], [1, top], "k--", lw=0.8, label="|G| = |F|")
    ax.plot([1, top / 4], [4, top], "r:", lw=0.8, label="|G| = 4|F|")
    ax.set_xlabel("|F| (source formula, tree nodes)")
    ax.set_ylabel("|G| (decompiled formula)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("compile -> decompile round trip")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

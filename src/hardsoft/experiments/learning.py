"""Theorem 6 in practice (Hahn (2020) §6): soft-attention transformers and LSTMs trained on
Hahn's PARITY automaton and 2DYCK PCFG with exact next-symbol targets.

* (a) **train at n**: for each n, train on prefixes of exactly length n and measure the
  cross-entropy gap to optimal at n, for transformers without layer norm (Theorem 6's setting),
  with pre-layer-norm (the escape Chiang & Cholak (2022) use), and LSTMs; mean and 95% band
  over seeds.
* (b) **length generalization** as Delétang et al. (ICLR 2023) test it: train on lengths
  <= 40, per-token accuracy at positions 41..500.
* (c) the Lemma 5 sensitivity of every trained transformer (Hahn (2020) §6), next to its gap.
* (d) **Theorem 6's own setting**: the theorem is about one fixed transformer as n grows. The
  models of (b) (trained once on n <= 40), and an unmasked transformer trained at the last
  position (:mod:`hardsoft.learn.bidirectional`; Lemma 5 covers it), are evaluated at growing
  test lengths. The report's verdict (:func:`hardsoft.report.claims.theorem6_trend`) tests the
  trend the theorem predicts with 95% t-intervals over seeds; with one seed (quick mode) it is
  "inconclusive".

Every (setting, seed) cell is one job on the context's executor (in-process or Ray), and its
run folder lives under ``<out>/runs/``, so an interrupted ``--full`` run resumes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.experiments.sensitivity import finite  # noqa: E402
from hardsoft.languages.distributions import DyckProcess  # noqa: E402
from hardsoft.learn import (  # noqa: E402
    ArchConfig,
    TrainConfig,
    cross_entropy_by_length,
    get_process,
    length_generalization,
    load_run,
)
from hardsoft.learn.bidirectional import train_last_position  # noqa: E402
from hardsoft.learn.data import encode  # noqa: E402
from hardsoft.learn.evaluate import majority_baseline  # noqa: E402
from hardsoft.learn.executors import make_executor  # noqa: E402
from hardsoft.learn.sweep import train_cell  # noqa: E402

VERSION = "3"
LANGUAGES = ("parity", "dyck2")
# model label -> (architecture, layer norm); "tf-none" is Theorem 6's setting
MODELS = {
    "tf-none": ("transformer", "none"),
    "tf-pre": ("transformer", "pre"),
    "lstm": ("lstm", ""),
}
# (d) only: the unmasked transformer without layer norm, trained at the last position
BIDIR = "tf-bidir"
ALL_MODELS = {**MODELS, BIDIR: ("transformer", "none")}
TRAIN_MAX_B = 40  # Delétang et al. (2023) train on lengths <= 40 and test on 41..500


@dataclass(frozen=True)
class Plan:
    """The sizes of one mode of the experiment."""

    lengths: tuple[int, ...]  # (a): train and measure at each n
    seeds: int
    steps: int
    tokens_per_step: int  # (a): batch size = max(2, tokens_per_step // n)
    width: int
    eval_samples: int
    gen_lengths: tuple[int, ...]  # (b): test lengths
    gen_samples: int
    sens_lengths: tuple[int, ...]  # (c)
    fixed_lengths: tuple[int, ...]  # (d): the models trained on n <= 40, tested at these n


QUICK = Plan((8, 64), 1, 150, 512, 16, 128, (41, 100, 250), 8, (8, 64), (10, 40, 160))
FULL = Plan(
    (8, 32, 128, 512),
    5,
    1000,
    1024,
    32,
    512,
    (41, 60, 100, 150, 200, 300, 400, 500),
    32,
    (8, 32, 128, 512),
    (10, 20, 40, 80, 160, 320, 640),
)


def train_config(plan: Plan, language: str, model: str, seed: int, n: int | None) -> TrainConfig:
    """(a) when ``n`` is given: exactly length n; (b) otherwise: lengths 1..40."""
    arch, norm = ALL_MODELS[model]
    is_lstm = arch == "lstm"
    if is_lstm:
        arch_cfg = ArchConfig(arch=arch, layers=1, d_model=plan.width)
    else:
        arch_cfg = ArchConfig(arch=arch, layers=2, heads=2, d_model=plan.width, layer_norm=norm)
    batch = max(2, plan.tokens_per_step // n) if n else max(2, 2 * plan.tokens_per_step // 41)
    if model == BIDIR:  # one target per prefix (the last position): more prefixes per step
        batch *= 4
    return TrainConfig(
        language=language,
        arch=arch_cfg,
        min_n=n or 1,
        max_n=n or TRAIN_MAX_B,
        steps=plan.steps,
        batch_size=batch,
        lr=1e-2 if is_lstm else 3e-3,
        warmup=max(10, plan.steps // 20),
        seed=seed,
        checkpoint_every=max(1, plan.steps // 4),
    )


def _words(process):
    """In-distribution inputs for the sensitivity measurement: exact prefixes of the process."""

    def sample(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
        return encode(process, process.sample_prefixes(n, count, rng, min_length=n))

    return sample


def _sensitivity(model, process, plan: Plan, n: int | None) -> dict[str, Any]:
    """Lemma 5 on a trained transformer: the largest single-symbol influence on the last
    position's final activation at each length, and the log-log slope."""
    from hardsoft.limits.sensitivity import measure_sensitivity

    lengths = list(plan.sens_lengths)
    rep = measure_sensitivity(
        model, lengths, samples=4, flips=16, seed=0, words=_words(process), check_bound=False
    )
    influence = rep.series("last_max")
    at = n if n in lengths else lengths[-1]
    fit = rep.slope("last_max")
    return {
        "lengths": lengths,
        "max_influence": influence,
        "influence_at_n": influence[lengths.index(at)],
        "slope": None if fit is None else fit.slope,
    }


def _evaluate(run_dir: Path, plan: Plan, n: int | None) -> dict[str, Any]:
    """The gap at n (a) or the per-token accuracy beyond 40 (b), and (c) for transformers."""
    cfg, model = load_run(run_dir)
    process = get_process(cfg.language, cfg.p)
    out: dict[str, Any] = {}
    if n is not None:
        (row,) = cross_entropy_by_length(model, process, [n], samples=plan.eval_samples)
        out.update(gap=row.gap, chance_gap=row.chance_gap, model_ce=row.model)
    else:
        # (d) Theorem 6's setting: this one trained model, at growing n (last position)
        rows = cross_entropy_by_length(
            model, process, plan.fixed_lengths, samples=plan.eval_samples, batch_size=16
        )
        out["fixed_gap"] = [r.gap for r in rows]
        out["fixed_chance_gap"] = [r.chance_gap for r in rows]
        if isinstance(process, DyckProcess):
            bound = process.hahn_gap_bound(plan.fixed_lengths)
            out["fixed_hahn_bound"] = [float(b) for b in bound]
    if n is None and not (getattr(model, "meta", None) or {}).get("objective"):
        # per-token accuracy reads every position: only for future-masked models and LSTMs
        g = length_generalization(
            model, process, plan.gen_lengths, TRAIN_MAX_B, samples=plan.gen_samples
        )
        out.update(per_length=g.per_length, beyond=g.beyond)
    if cfg.arch.arch == "transformer":
        out["sensitivity"] = _sensitivity(model, process, plan, n)
    return out


def learning_cell(
    config: dict[str, Any], run_dir: str, plan: Plan, n: int | None, last_position: bool = False
) -> dict:
    """One job: train (or skip a finished run), then evaluate (cached in ``eval.json``).
    ``last_position``: the unmasked transformer of :mod:`hardsoft.learn.bidirectional`."""
    torch.manual_seed(0)
    if last_position:
        metrics = train_last_position(TrainConfig.from_dict(config), run_dir)
    else:
        metrics = train_cell(config, run_dir)
    cache = Path(run_dir) / "eval.json"
    key = json.dumps([VERSION, plan.__repr__(), n])
    if cache.is_file():
        stored = json.loads(cache.read_text())
        if stored.get("key") == key:
            return {**stored["result"], "final_loss": metrics["final_loss"]}
    result = _evaluate(Path(run_dir), plan, n)
    from hardsoft.model.io import atomic_write

    atomic_write(
        cache, lambda tmp: Path(tmp).write_text(json.dumps({"key": key, "result": result}))
    )
    return {**result, "final_loss": metrics["final_loss"]}


def _jobs(plan: Plan, seed0: int, root: Path) -> list[tuple[dict[str, Any], tuple]]:
    """Every cell: its labels and its job arguments."""
    jobs = []
    for language in LANGUAGES:
        for n in (*plan.lengths, None):
            for model in MODELS if n else ALL_MODELS:
                for seed in range(seed0, seed0 + plan.seeds):
                    cfg = train_config(plan, language, model, seed, n)
                    part = f"n{n}" if n else f"le{TRAIN_MAX_B}"
                    run = root / f"{language}-{model}-{part}-s{seed}"
                    label = {"language": language, "model": model, "n": n, "seed": seed}
                    jobs.append((label, (cfg.to_dict(), str(run), plan, n, model == BIDIR)))
    return jobs


def _run_grid(ctx: Context, plan: Plan) -> list[dict[str, Any]]:
    mode = "quick" if ctx.quick else "full"
    root = ctx.figures_dir.parent / "runs" / f"learning-theorem6-v{VERSION}-{mode}"
    # the longest jobs first (transformers at the largest n), so the last ones to finish are short
    jobs = sorted(_jobs(plan, ctx.seed, root), key=_cost, reverse=True)
    executor = make_executor(ctx.executor, address=ctx.address)
    cells: list[dict[str, Any]] = [{} for _ in jobs]
    for k, (state, value) in executor.map(learning_cell, [args for _, args in jobs]):
        if state != "ok":
            raise RuntimeError(f"learning cell {jobs[k][0]} failed: {value}")
        cells[k] = {**jobs[k][0], **value}
    return cells


def _cost(job: tuple[dict[str, Any], tuple]) -> float:
    """A rough relative cost: attention makes a transformer's step grow with n."""
    label = job[0]
    n = label["n"] or TRAIN_MAX_B
    return n * (4.0 if label["model"] != "lstm" else 1.0)


def band(values: list[float]) -> tuple[float, float, float]:
    """Mean and the 95% t-interval of the mean (the band is the mean when there is one seed)."""
    from hardsoft.limits.sensitivity import t_quantile

    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if len(v) < 2:
        return mean, mean, mean
    half = t_quantile(0.975, len(v) - 1) * float(v.std(ddof=1)) / np.sqrt(len(v))
    return mean, mean - half, mean + half


def _select(cells, **match) -> list[dict[str, Any]]:
    return [c for c in cells if all(c[k] == v for k, v in match.items())]


def _summaries(cells, plan: Plan) -> dict[str, Any]:
    """Per language and model: (a) gap bands by n, (b) accuracy bands and the best constant
    guess's accuracy on the same prefixes, (c) influence."""
    out: dict[str, Any] = {}
    for language in LANGUAGES:
        baseline = majority_baseline(
            get_process(language), plan.gen_lengths, TRAIN_MAX_B, samples=plan.gen_samples
        )
        for model in MODELS:
            a = [_select(cells, language=language, model=model, n=n) for n in plan.lengths]
            b = _select(cells, language=language, model=model, n=None)
            r: dict[str, Any] = {
                "gap": [band([c["gap"] for c in cs]) for cs in a],
                "chance_gap": [cs[0]["chance_gap"] for cs in a],
                "beyond_40": band([c["beyond"] for c in b]),
                "baseline_40": baseline,
                "per_length": [band(list(x)) for x in zip(*(c["per_length"] for c in b))],
            }
            if model != "lstm":
                r["influence_at_n"] = [
                    band([c["sensitivity"]["influence_at_n"] for c in cs]) for cs in a
                ]
                slopes = [[c["sensitivity"]["slope"] for c in cs] for cs in a]
                r["slope"] = [band([s for s in ss if s is not None] or [np.nan]) for ss in slopes]
            out[f"{language}/{model}"] = r
    return out


def fixed_summary(cells, plan: Plan) -> dict[str, Any]:
    """(d): per language and model, the per-seed gaps of the one model trained on n <= 40 at
    each test length, with the chance gap (and for 2DYCK Hahn's bound) there: what the
    Theorem 6 verdict (:func:`hardsoft.report.claims.theorem6_trend`) reads."""
    by: dict[str, Any] = {}
    for language in LANGUAGES:
        for model in ALL_MODELS:
            cs = sorted(_select(cells, language=language, model=model, n=None), key=_seed)
            if not cs:
                continue
            entry = {
                "gap": [list(x) for x in zip(*(c["fixed_gap"] for c in cs))],
                "chance_gap": cs[0]["fixed_chance_gap"],
            }
            if "fixed_hahn_bound" in cs[0]:
                entry["hahn_bound"] = cs[0]["fixed_hahn_bound"]
            by[f"{language}/{model}"] = entry
    return {"lengths": list(plan.fixed_lengths), "train_max": TRAIN_MAX_B, "by": by}


def _seed(cell: dict[str, Any]) -> int:
    return int(cell["seed"])


_STYLE = {
    "tf-none": ("o-", "transformer, no layer norm"),
    "tf-pre": ("^-", "transformer, pre-layer-norm"),
    "lstm": ("s-", "LSTM"),
}
_NAMES = {"parity": "PARITY automaton (p = 0.5)", "dyck2": "2DYCK PCFG (p = 0.3)"}


def _band_plot(ax, xs, bands, style, label) -> None:
    mean = [m for m, _, _ in bands]
    (line,) = ax.plot(xs, mean, style, label=label)
    ax.fill_between(
        xs,
        [lo for _, lo, _ in bands],
        [hi for _, _, hi in bands],
        color=line.get_color(),
        alpha=0.2,
    )


def _figure_gap(ctx: Context, plan: Plan, summ: dict[str, Any], mode: str) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, language in zip(axes, LANGUAGES):
        for model, (style, label) in _STYLE.items():
            _band_plot(ax, plan.lengths, summ[f"{language}/{model}"]["gap"], style, label)
        ax.plot(plan.lengths, summ[f"{language}/lstm"]["chance_gap"], "k--", label="unigram chance")
        ax.set_xscale("log", base=2)
        ax.set(xlabel="training and test length n", ylabel="cross-entropy − optimal at n (nats)")
        ax.set_title(_NAMES[language], fontsize=10)
        ax.set_ylim(bottom=-0.02)
        ax.legend(fontsize=8)
    fig.suptitle(f"(a) trained and tested at n; {mode}")
    return _save(ctx, fig, "learning-gap-at-n.png")


def _figure_generalization(ctx: Context, plan: Plan, summ: dict[str, Any], mode: str) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, language in zip(axes, LANGUAGES):
        for model, (style, label) in _STYLE.items():
            _band_plot(
                ax, plan.gen_lengths, summ[f"{language}/{model}"]["per_length"], style, label
            )
        ax.axhline(
            summ[f"{language}/lstm"]["baseline_40"], color="k", ls="--", label="best constant guess"
        )
        ax.set(xlabel="test length", ylabel="per-token accuracy", ylim=(0.4, 1.02))
        ax.set_title(_NAMES[language], fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle(f"(b) trained on n ≤ {TRAIN_MAX_B}, per-token accuracy; {mode}")
    return _save(ctx, fig, "learning-generalization.png")


_FIXED_STYLE = {
    "tf-none": ("o-", "transformer, future mask"),
    "tf-bidir": ("D-", "transformer, unmasked (last position)"),
    "tf-pre": ("^-", "transformer, pre-layer-norm"),
    "lstm": ("s-", "LSTM"),
}


def _figure_fixed(ctx: Context, fixed: dict[str, Any], mode: str) -> str:
    """(d): one model per seed trained on n <= 40, its gap at growing test lengths n."""
    lengths = fixed["lengths"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, language in zip(axes, LANGUAGES):
        for model, (style, label) in _FIXED_STYLE.items():
            entry = fixed["by"].get(f"{language}/{model}")
            if entry is not None:
                _band_plot(ax, lengths, [band(g) for g in entry["gap"]], style, label)
        entry = fixed["by"][f"{language}/tf-none"]
        if "hahn_bound" in entry:
            ax.plot(lengths, entry["hahn_bound"], "k:", label="Hahn's bound P0(n)(1−p)ln 2")
        ax.plot(lengths, entry["chance_gap"], "k--", label="unigram chance")
        ax.axvline(TRAIN_MAX_B, color="grey", lw=0.8, label="longest training length")
        ax.set_xscale("log", base=2)
        ax.set(xlabel="test length n", ylabel="cross-entropy − optimal at n (nats)")
        ax.set_title(_NAMES[language], fontsize=10)
        ax.set_ylim(bottom=-0.02)
        ax.legend(fontsize=8)
    fig.suptitle(f"(d) one model trained on n ≤ {TRAIN_MAX_B}, tested at growing n; {mode}")
    return _save(ctx, fig, "learning-fixed-model.png")


def _figure_sensitivity(ctx: Context, plan: Plan, cells, mode: str) -> str:
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullFormatter

    colors = dict(
        zip(plan.lengths, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(plan.lengths))))
    )
    markers = {"tf-none": "o", "tf-pre": "^"}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, language in zip(axes, LANGUAGES):
        for model, marker in markers.items():
            for n in plan.lengths:
                cs = _select(cells, language=language, model=model, n=n)
                xs = [c["sensitivity"]["influence_at_n"] for c in cs]
                ax.scatter(xs, [c["gap"] for c in cs], color=colors[n], marker=marker, alpha=0.8)
        handles = [
            Line2D([], [], color="k", marker=m, ls="", label=_STYLE[k][1])
            for k, m in markers.items()
        ]
        handles += [
            Line2D([], [], color=colors[n], marker="s", ls="", label=f"n = {n}")
            for n in plan.lengths
        ]
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set(
            xlabel="Lemma 5 influence at n (max ‖Δy_n‖, last layer)",
            ylabel="cross-entropy − optimal at n (nats)",
        )
        ax.set_title(_NAMES[language], fontsize=10)
        ax.legend(handles=handles, fontsize=8)
    fig.suptitle(f"(c) Lemma 5 sensitivity vs gap, trained at n; {mode}")
    return _save(ctx, fig, "learning-sensitivity-vs-gap.png")


def _save(ctx: Context, fig, name: str) -> str:
    fig.tight_layout()
    path = ctx.figure_path(name)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path.name


def _fmt(b) -> str:
    """Mean [95% band]; "(one seed)" where there is no band."""
    if b[0] == b[1] == b[2]:
        return f"{b[0]:.3f} (one seed)"
    return f"{b[0]:.3f} [{b[1]:.3f}, {b[2]:.3f}]"


def _tables(plan: Plan, summ: dict[str, Any]) -> list[Table]:
    gap_rows, gen_rows = [], []
    for key, r in summ.items():
        language, model = key.split("/")
        for k, n in enumerate(plan.lengths):
            sens = r.get("influence_at_n")
            gap_rows.append(
                [
                    language,
                    model,
                    n,
                    _fmt(r["gap"][k]),
                    f"{r['chance_gap'][k]:.3f}",
                    "-" if sens is None else f"{sens[k][0]:.3g}",
                ]
            )
        gen_rows.append([language, model, _fmt(r["beyond_40"]), f"{r['baseline_40']:.3f}"])
    return [
        Table(
            "(a) Cross-entropy gap to optimal at n, trained at n (nats; mean [95% band])",
            ["process", "model", "n", "gap", "chance gap", "Lemma 5 influence at n"],
            gap_rows,
        ),
        Table(
            "(b) Per-token accuracy at positions 41..500, trained on n <= 40 (mean [95% band])",
            ["process", "model", "accuracy", "best constant guess"],
            gen_rows,
        ),
    ]


def _fixed_table(fixed: dict[str, Any]) -> Table:
    rows = []
    for key, entry in fixed["by"].items():
        language, model = key.split("/")
        for k, n in enumerate(fixed["lengths"]):
            mean = band(entry["gap"][k])[0]
            bound = entry.get("hahn_bound")
            rows.append(
                [
                    _NAMES[language].split(" ")[0],
                    _FIXED_STYLE[model][1],
                    n,
                    _fmt(band(entry["gap"][k])),
                    f"{mean / entry['chance_gap'][k]:.2f}",
                    f"{entry['chance_gap'][k]:.3f}",
                    "-" if bound is None else f"{bound[k]:.3f}",
                ]
            )
    return Table(
        f"(d) One model trained on n <= {fixed['train_max']}, gap to optimal at test length n "
        "(nats; mean [95% band over seeds])",
        ["process", "model", "n", "gap", "gap / chance", "chance gap", "Hahn's 2DYCK bound"],
        rows,
    )


def _fixed_text(fixed: dict[str, Any], seeds: int) -> str:
    from hardsoft.experiments.verdicts import theorem6_trend

    trend = theorem6_trend(fixed)
    parts = "; ".join(f"{k}: {p['verdict']}, {p['numbers']}" for k, p in trend["parts"].items())
    return (
        f"Theorem 6's own setting (d): one model per seed ({seeds} seed(s)) trained on n <= "
        f"{fixed['train_max']} and evaluated at n = {', '.join(map(str, fixed['lengths']))}. "
        f"The verdict tests the trend over n with 95% t-intervals over seeds and is "
        f"{trend['verdict']} ({parts})."
    )


def _summary_text(plan: Plan, summ: dict[str, Any], seeds: int) -> str:
    n = plan.lengths[-1]

    def gap(key: str) -> str:
        return f"{summ[key]['gap'][-1][0]:.3f}"

    return (
        f"Trained at n = {n} ({seeds} seed(s)): PARITY gap: transformer without layer norm "
        f"{gap('parity/tf-none')}, with pre-layer-norm {gap('parity/tf-pre')}, LSTM "
        f"{gap('parity/lstm')} (chance gap {summ['parity/lstm']['chance_gap'][-1]:.3f}); 2DYCK: "
        f"{gap('dyck2/tf-none')}, {gap('dyck2/tf-pre')}, {gap('dyck2/lstm')}. Per-token "
        f"accuracy beyond 40 on PARITY: {summ['parity/tf-none']['beyond_40'][0]:.2f} "
        f"(transformer, no layer norm), {summ['parity/lstm']['beyond_40'][0]:.2f} (LSTM); the "
        f"best constant guess scores {summ['parity/lstm']['baseline_40']:.2f}."
    )


@register(
    "learning-theorem6",
    title="Theorem 6: cross-entropy gap when trained at n, length generalization, sensitivity",
    version=VERSION,
    order=61,
    seed_ref="Hahn (2020) §6 Theorem 6 and Lemma 5; Delétang et al. (ICLR 2023) Table 2",
)
def run(ctx: Context) -> Result:
    plan = QUICK if ctx.quick else FULL
    mode = "quick run" if ctx.quick else "full run"
    cells = _run_grid(ctx, plan)
    summ = _summaries(cells, plan)
    fixed = fixed_summary(cells, plan)
    figures = [
        _figure_fixed(ctx, fixed, mode),
        _figure_gap(ctx, plan, summ, mode),
        _figure_generalization(ctx, plan, summ, mode),
        _figure_sensitivity(ctx, plan, cells, mode),
    ]
    metrics = {"plan": plan.__dict__, "summary": summ, "fixed": fixed, "cells": cells}
    tables = [_fixed_table(fixed), *_tables(plan, summ)]
    text = _fixed_text(fixed, plan.seeds) + " " + _summary_text(plan, summ, plan.seeds)
    return Result(finite(metrics), figures, tables, text)

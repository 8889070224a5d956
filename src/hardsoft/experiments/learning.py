"""Theorem 6 in practice: a soft-attention transformer and an LSTM trained on Hahn's PARITY
automaton and 2DYCK PCFG (exact next-symbol targets); cross-entropy gap to optimal by prefix
length, and Delétang-style length generalization (train on n <= 40, test on 41..500)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.experiments.sensitivity import cpu_threads, finite  # noqa: E402
from hardsoft.learn import (  # noqa: E402
    ArchConfig,
    TrainConfig,
    cross_entropy_by_length,
    get_process,
    length_generalization,
    load_run,
    train,
)


def _configs(quick: bool, language: str, arch: str, seed: int) -> TrainConfig:
    if quick:
        width = 16
        steps = 200 if arch == "lstm" else 250
        batch = 32
    else:
        width = 64
        steps = 3000
        batch = 64
    return TrainConfig(
        language=language,
        arch=ArchConfig(arch=arch, layers=1 if arch == "lstm" else 2, heads=2, d_model=width),
        max_n=40,
        steps=steps,
        batch_size=batch,
        lr=1e-2 if arch == "lstm" else 3e-3,
        warmup=max(10, steps // 20),
        seed=seed,
        checkpoint_every=max(steps, 1),
    )


@register(
    "learning-theorem6",
    title="Theorem 6: cross-entropy gap to optimal by length, transformer vs LSTM",
    version="1",
    order=61,
    seed_ref="Hahn (2020) §6, Theorem 6; Delétang et al. 2023 (length generalization)",
)
def run(ctx: Context) -> Result:
    quick = ctx.quick
    seeds = [ctx.seed] if quick else [ctx.seed + k for k in range(3)]
    lengths = [1, 2, 4, 8, 16, 32, 64, 128, 256] if quick else [2**k for k in range(11)]
    samples = 64 if quick else 512
    gen_lengths = [41, 100, 250, 500] if quick else [41, 60, 100, 150, 200, 300, 400, 500]
    results: dict[tuple[str, str], dict] = {}
    with cpu_threads(ctx.device), tempfile.TemporaryDirectory() as tmp:
        for language in ("parity", "dyck2"):
            process = get_process(language)
            for arch in ("transformer", "lstm"):
                gaps, finals, gens, tps = [], [], [], []
                for seed in seeds:
                    cfg = _configs(quick, language, arch, seed)
                    run_dir = Path(tmp) / f"{language}-{arch}-{seed}"
                    metrics = train(cfg, run_dir, device=ctx.device, show_progress=False)
                    _, model = load_run(run_dir, device=ctx.device)
                    rows = cross_entropy_by_length(
                        model, process, lengths, samples=samples, device=ctx.device
                    )
                    gaps.append([r.gap for r in rows])
                    finals.append(metrics["final_loss"])
                    tps.append(metrics["tokens_per_second"] or 0.0)
                    g = length_generalization(
                        model, process, gen_lengths, cfg.max_n, samples=16, device=ctx.device
                    )
                    gens.append(g.beyond)
                results[(language, arch)] = {
                    "gap": np.mean(gaps, axis=0).tolist(),
                    "gap_min": np.min(gaps, axis=0).tolist(),
                    "gap_max": np.max(gaps, axis=0).tolist(),
                    "chance_gap": [r.chance_gap for r in rows],
                    "final_loss": float(np.mean(finals)),
                    "generalization": float(np.mean(gens)),
                    "tokens_per_second": float(np.mean(tps)),
                    "steps": cfg.steps,
                    "width": cfg.arch.d_model,
                }
    mode = "quick run: tiny models, few steps" if quick else "full run"
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, language in zip(axes, ("parity", "dyck2")):
        for arch, style in (("transformer", "o-"), ("lstm", "s-")):
            r = results[(language, arch)]
            (line,) = ax.semilogx(lengths, r["gap"], style, label=arch)
            if len(seeds) > 1:
                ax.fill_between(
                    lengths, r["gap_min"], r["gap_max"], color=line.get_color(), alpha=0.2
                )
        ax.semilogx(
            lengths, results[(language, "lstm")]["chance_gap"], "k--", label="unigram chance"
        )
        ax.axvline(40, color="gray", lw=0.6, ls=":", label="longest training prefix")
        ax.set_xlabel("prefix length n")
        ax.set_ylabel("cross-entropy − optimal (nats)")
        name = "PARITY automaton" if language == "parity" else "2DYCK PCFG"
        ax.set_title(f"{name} (p = {get_process(language).p}; {mode})")
        ax.set_ylim(bottom=-0.02)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig_path = ctx.figure_path("learning-gap-by-length.png")
    fig.savefig(fig_path, dpi=130)
    plt.close(fig)

    table_rows, metrics = [], {"lengths": lengths, "seeds": seeds}
    for (language, arch), r in results.items():
        table_rows.append(
            [
                language,
                arch,
                r["width"],
                r["steps"],
                f"{r['final_loss']:.4f}",
                f"{r['gap'][0]:.4f}",
                f"{r['gap'][-1]:.4f}",
                f"{r['chance_gap'][-1]:.4f}",
                f"{r['generalization']:.3f}",
            ]
        )
        metrics[f"{language}/{arch}"] = r
    table = Table(
        title=f"Cross-entropy gap to optimal (nats; mean over {len(seeds)} seed(s); {mode})",
        columns=[
            "process",
            "model",
            "width",
            "steps",
            "final train loss",
            f"gap at n={lengths[0]}",
            f"gap at n={lengths[-1]}",
            "chance gap",
            "per-token acc. n in 41..500",
        ],
        rows=table_rows,
    )
    pt, pl = results[("parity", "transformer")], results[("parity", "lstm")]
    dt, dl = results[("dyck2", "transformer")], results[("dyck2", "lstm")]
    summary = (
        f"PARITY at n = {lengths[-1]}: transformer gap {pt['gap'][-1]:.3f} nats (chance gap "
        f"{pt['chance_gap'][-1]:.3f}), LSTM {pl['gap'][-1]:.3f}. 2DYCK: transformer "
        f"{dt['gap'][-1]:.3f}, LSTM {dl['gap'][-1]:.3f}. Per-token accuracy beyond the training "
        f"lengths on PARITY: transformer {pt['generalization']:.2f}, LSTM "
        f"{pl['generalization']:.2f}. "
        + (
            "Quick run: tiny models trained for a few hundred steps; the trend, not the values, "
            "is the result."
            if quick
            else ""
        )
    )
    return Result(metrics=finite(metrics), figures=[fig_path.name], tables=[table], summary=summary)

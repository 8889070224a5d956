"""Yang, Strobl, Chiang & Angluin (TACL 2026): softmax with temperature simulates general hard
attention, τ set by the attention gap; and the converse direction for trained models.

Three parts (docs/soften.md):

1. **Random UHAT/AHAT models** (leftmost, rightmost, average × masks none, future, past ×
   1–2 layers; 3 in full mode), softened with the gap measured on a word list: τ against the
   measured gap, the measured |softened − hard| against the error bound (also at larger
   temperatures θ·2^k, where the bound is not met by construction), and the exactness horizon
   of the fixed τ: the longest tested length at which fresh random words stay within ε.
2. **Compiled hard formulas**, softened with the certified (grid) gap at N = 200: exact after
   rounding at every position against the logic evaluator, τ(n) and the horizon, for τ(n) as
   certified and for τ frozen at τ(N).
3. **A trained transformer on Hahn's PARITY process**, hardened (leftmost) and restricted at
   n = 256 (Hahn 2020 §5): a verified witness for the hard counterpart, and whether the trained
   softmax model itself gets the pair right.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.experiments.text import expression  # noqa: E402

WEIGHTINGS = ("leftmost", "rightmost", "average")
MASKS = ("none", "future", "past")
FORMULAS = (
    "MOD(2,1)(#<['1'])",
    "!E(#<[Y '1'] = #>['1'])",
    "'1' S '0'",
    "Y Y '1' & X '0'",
    "#<['1'] >= #>['0']",
)
N_COMPILED = 200
EPS = 0.25


def _words(rng: np.random.Generator, lengths, count: int) -> list[str]:
    return ["".join(rng.choice(["0", "1"], size=n)) for n in lengths for _ in range(count)]


def max_error(hard, soft, words: list[str]) -> float:
    """max |soft − hard| over every output coordinate, position and word."""
    a, b = hard.run_words(words), soft.run_words(words)
    return max(float(np.abs(x - y).max()) for x, y in zip(a, b))


def largest_theta(hard, r, words: list[str], eps: float, iters: int = 6) -> float:
    """The largest θ (within 2^(1/2^iters), searched from the certified θ up to 2^10 of it)
    at which the measured max |softened − hard| on ``words`` is still <= eps."""
    lo, hi = r.theta, None
    for k in range(1, 11):
        if max_error(hard, r.at_theta(r.theta * 2.0**k).model, words) > eps:
            hi = r.theta * 2.0**k
            break
        lo = r.theta * 2.0**k
    if hi is None:
        return lo
    for _ in range(iters):
        mid = (lo * hi) ** 0.5
        if max_error(hard, r.at_theta(mid).model, words) <= eps:
            lo = mid
        else:
            hi = mid
    return lo


def _horizon(hard, soft, n0: int, steps: int, rng, count: int, eps: float) -> tuple[int, bool]:
    """Largest n in n0·2^k (k < steps) up to which fresh random words stay within eps, and
    whether the error ever exceeded it."""
    good = 0
    for k in range(steps):
        n = n0 * 2**k
        if max_error(hard, soft, _words(rng, [n], count)) > eps:
            return good, True
        good = n
    return good, False


def _random_models(ctx: Context) -> tuple[list[list], list[dict], list[tuple]]:
    """Part 1: rows of the table, per-model records and (bound, measured) sweep points."""
    from hardsoft.convert import soften
    from hardsoft.model import random_model

    rng = np.random.default_rng(ctx.seed)
    depths = (1, 2) if ctx.quick else (1, 2, 3)
    lengths = (2, 3, 5, 8, 13, 20) if ctx.quick else (2, 3, 5, 8, 13, 21, 34, 55)
    rows, records, sweep = [], [], []
    for w in WEIGHTINGS:
        for mask in MASKS:
            for L in depths:
                hard = random_model(
                    weighting=w, mask=mask, layers=L, seed=ctx.seed + L, dtype=torch.float64
                )
                words = _words(rng, lengths, 4 if ctx.quick else 8)
                r = soften(hard, gap_inputs=words, eps=EPS)
                err = max_error(hard, r.model, words)
                for k in (-2, -1, 0, 1, 2) if ctx.quick else (-3, -2, -1, 0, 1, 2, 3, 4):
                    rk = r.at_theta(r.theta * 2.0**k) if k else r
                    sweep.append((rk.error_bound, max_error(hard, rk.model, words), L))
                theta_max = largest_theta(hard, r, words, EPS, 4 if ctx.quick else 8)
                horizon, broke = _horizon(
                    hard, r.model, max(lengths), 4 if ctx.quick else 6, rng, 4, EPS
                )
                rec = {
                    "weighting": w,
                    "mask": mask,
                    "layers": L,
                    "gap": r.gap,
                    "effective_gap": min(c for c, _ in (h.effective_gap() for h in r.heads)),
                    "tau": r.tau_at(r.n),
                    "theta": r.theta,
                    "error_bound": r.error_bound,
                    "measured_error": err,
                    "largest_theta_within_eps": theta_max,
                    "horizon": horizon,
                    "horizon_broke": broke,
                }
                records.append(rec)
                rows.append(
                    [
                        w,
                        mask,
                        L,
                        f"{r.gap:.3g}",
                        f"{rec['tau']:.3g}",
                        f"{r.theta:.3g}",
                        f"{r.error_bound:.3g}",
                        f"{err:.3g}",
                        f"{theta_max / r.theta:.3g}",
                        _fmt_h((horizon, broke), max(lengths)),
                    ]
                )
    return rows, records, sweep


def _compiled(ctx: Context) -> tuple[list[list], list[dict]]:
    """Part 2: compiled hard formulas softened with the certified gap at N = 200."""
    from hardsoft.check import check_formula
    from hardsoft.compile import compile_formula
    from hardsoft.convert import soften
    from hardsoft.convert.soften import build_softened
    from hardsoft.model.spec import eval_tau

    rows, records = [], []
    lengths = list(range(9, N_COMPILED + 1, 1 if not ctx.quick else 17)) + [N_COMPILED]
    for f in FORMULAS:
        hard = compile_formula(f, "01", target="hard")
        r = soften(hard, n=N_COMPILED, eps=EPS)
        rep = check_formula(
            r.model, f, exhaustive_max_n=8, random_n=lengths, samples=4 if ctx.quick else 16
        )
        frozen_taus = {
            key: None if t is None else repr(eval_tau(t, N_COMPILED)) for key, t in r.taus.items()
        }
        frozen = build_softened(hard, r.heads, frozen_taus)
        horizons = {}
        for name, model in (("certified", r.model), ("frozen", frozen)):
            horizons[name] = _formula_horizon(model, f, 2 if ctx.quick else 5)
        rec = {
            "formula": f,
            "layers": len(hard.blocks),
            "tau": r.tau,
            "tau_at_N": r.tau_at(N_COMPILED),
            "theta": r.theta,
            "error_bound": r.error_bound,
            "mismatches": rep["mismatches"],
            "max_abs_error": rep["max_abs_error"],
            "checked_strings": rep["checked_strings"],
            "horizon_certified": horizons["certified"],
            "horizon_frozen": horizons["frozen"],
        }
        records.append(rec)
        rows.append(
            [
                f,
                rec["layers"],
                expression(r.tau),
                f"{r.error_bound:.3g}",
                rep["mismatches"],
                f"{rep['max_abs_error']:.2g}",
                _fmt_h(horizons["certified"]),
                _fmt_h(horizons["frozen"]),
            ]
        )
    return rows, records


def _fmt_h(h: tuple[int, bool], first: int = N_COMPILED) -> str:
    """``>= n`` (never failed up to n), ``n`` (failed at the next length) or ``< first``."""
    if not h[1]:
        return f">= {h[0]}"
    return f"{h[0]}" if h[0] else f"< {first}"


def _formula_horizon(model, formula: str, steps: int) -> tuple[int, bool]:
    """Largest n in N·2^k (k < steps) at which 4 random words are exact after rounding."""
    from hardsoft.check import check_formula

    good = 0
    for k in range(steps):
        n = N_COMPILED * 2**k
        rep = check_formula(model, formula, exhaustive_max_n=0, random_n=[n], samples=4, seed=k)
        if rep["mismatches"]:
            return good, True
        good = n
    return good, False


def _trained(ctx: Context) -> dict[str, Any]:
    """Part 3: train on Hahn's PARITY process, harden, restrict at n = 256, compare."""
    from hardsoft.convert import harden
    from hardsoft.languages import get_language
    from hardsoft.learn import ArchConfig, TrainConfig, train
    from hardsoft.learn.train import load_run
    from hardsoft.limits.restrict import restrict
    from hardsoft.model.transformer import Transformer

    cfg = TrainConfig(
        language="parity",
        arch=ArchConfig(layers=2, heads=2, d_model=16 if ctx.quick else 32),
        steps=150 if ctx.quick else 3000,
        max_n=40,
        warmup=15 if ctx.quick else 100,
        seed=ctx.seed,
        checkpoint_every=10**6,
    )
    with tempfile.TemporaryDirectory() as tmp:
        metrics = train(cfg, tmp, device=ctx.device, show_progress=False, resume=False)
        _, soft = load_run(tmp)
    assert isinstance(soft, Transformer)
    soft = soft.to("cpu")
    hard = harden(soft, "leftmost")
    t0 = time.perf_counter()
    res = restrict(hard, 256, "parity-even", seed=ctx.seed)
    w = res.witness
    out: dict[str, Any] = {
        "final_loss": metrics["final_loss"],
        "restrict_seconds": time.perf_counter() - t0,
        "free_fraction": res.restriction.free_fraction,
        "c": len(res.dependency_set),
        "witness_verified": bool(w and w.verified),
    }
    lang = get_language("parity-even")
    rng = np.random.default_rng(ctx.seed)
    with torch.no_grad():
        if w is not None and w.x is not None and w.x_prime is not None:
            acc = soft(soft.encode([w.x, w.x_prime])).accept.tolist()
            out.update(
                hard_accepts=[w.accept, w.accept_prime],
                in_language=list(w.in_language or ()),
                soft_accepts=acc,
                soft_right_on_pair=acc == list(w.in_language or ()),
            )
        for n in (16, 40, 256):
            words = _words(rng, [n], 200)
            truth = np.array([bool(lang.member(x)) for x in words])
            models: tuple[tuple[str, Transformer], ...] = (("soft", soft), ("hard", hard))
            for name, m in models:
                got = m(m.encode(words)).accept.cpu().numpy()
                out[f"{name}_accuracy_n{n}"] = float((got == truth).mean())
    return out


def _figures(ctx: Context, records: list[dict], compiled: list[dict], sweep: list[tuple]):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for L, marker in ((1, "o"), (2, "s"), (3, "^")):
        pts = [(r["effective_gap"], r["tau"]) for r in records if r["layers"] == L]
        if pts:
            ax1.loglog(*zip(*pts), marker, alpha=0.7, label=f"random, {L} layer(s), measured")
    pts = [(c["tau_at_N"] / c["theta"], c["tau_at_N"]) for c in compiled]
    ax1.loglog(*zip(*pts), "k*", ms=9, label=f"compiled formulas, certified (n = {N_COMPILED})")
    ax1.set_xlabel("smallest gap softmax sees, γ' (after the tie-break)")
    ax1.set_ylabel("smallest temperature τ")
    ax1.set_title("τ = θ·γ': θ from the error bound")
    ax1.legend(fontsize=7)
    ax1.grid(True, which="both", alpha=0.3)
    for L, marker in ((1, "o"), (2, "s"), (3, "^")):
        pts = [(b, max(m, 1e-18)) for b, m, depth in sweep if depth == L]
        if pts:
            ax2.loglog(*zip(*pts), marker, alpha=0.6, label=f"{L} layer(s)")
    lo = min(min(b for b, _, _ in sweep), min(max(m, 1e-18) for _, m, _ in sweep))
    hi = max(b for b, _, _ in sweep)
    ax2.loglog([lo, hi], [lo, hi], "k--", lw=1, label="measured = bound")
    ax2.set_xlabel("error bound (at θ/4 ... 4θ; θ meets ε = 1/4)")
    ax2.set_ylabel("measured max |softened − hard|")
    ax2.set_title("Measured error against the bound (random models)")
    ax2.legend(fontsize=7)
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = ctx.figure_path("soften_tau_error.png")
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


_LABELS = {
    "final_loss": "final training loss (nats)",
    "restrict_seconds": "time to build the restriction (s)",
    "free_fraction": "free fraction under the restriction",
    "c": "dependency set size c",
    "witness_verified": "witness verified by running the model",
    "hard_accepts": "hardened model accepts x, x′",
    "in_language": "in PARITY: x, x′",
    "soft_accepts": "softmax model accepts x, x′",
    "soft_right_on_pair": "softmax model right on both x and x′",
}


def _label(key: str) -> str:
    """A metric's name in words: ``hard_accuracy_n16`` → "hardened model accuracy at n = 16"."""
    for prefix, model in (("hard_accuracy_n", "hardened"), ("soft_accuracy_n", "softmax")):
        if key.startswith(prefix):
            return f"{model} model accuracy at n = {key[len(prefix) :]}"
    return _LABELS.get(key, key.replace("_", " "))


def _value(v: Any) -> str:
    """A table value as text: yes/no, lists joined, floats to 4 significant digits."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple)):
        return ", ".join(_value(x) for x in v)
    return f"{v:.4g}" if isinstance(v, float) else str(v)


@register(
    "soften",
    title="Softening hard-attention models; hardening a trained one",
    version="1",
    order=62,
    seed_ref="Yang, Strobl, Chiang & Angluin (TACL 2026); Hahn (2020) §5",
)
def run(ctx: Context) -> Result:
    t0 = time.perf_counter()
    rows, records, sweep = _random_models(ctx)
    c_rows, compiled = _compiled(ctx)
    trained = _trained(ctx)
    fig = _figures(ctx, records, compiled, sweep)
    violations = sum(m > b for b, m, _ in sweep) + sum(
        r["measured_error"] > r["error_bound"] for r in records
    )
    ratios = [r["error_bound"] / max(r["measured_error"], 1e-300) for r in records]
    slack = [r["largest_theta_within_eps"] / r["theta"] for r in records]
    metrics = {
        "random": records,
        "compiled": compiled,
        "trained": trained,
        "bound_violations": violations,
        "compiled_mismatches": sum(c["mismatches"] for c in compiled),
        "bound_over_measured": {"min": min(ratios), "max": max(ratios)},
        "largest_theta_over_certified": {"min": min(slack), "max": max(slack)},
        "seconds": time.perf_counter() - t0,
    }
    summary = (
        f"{len(records)} random hard models softened with the gap measured on a word list: "
        f"the measured |softened − hard| is below the error bound in every case ({violations} "
        f"violations, also at temperatures θ/4 to {2 ** (2 if ctx.quick else 4)}θ); the bound "
        f"is {min(ratios):.2g}–{max(ratios):.2g} times the measured error at the chosen τ, "
        f"but the largest θ that keeps the measured error within ε is only "
        f"{min(slack):.2g}–{max(slack):.2g} times the certified θ (τ ∝ θ). "
        f"{len(compiled)} compiled hard formulas softened with the certified gap at n = "
        f"{N_COMPILED} agree with the logic evaluator after rounding "
        f"({metrics['compiled_mismatches']} mismatches). A transformer trained on Hahn's PARITY "
        f"process, hardened, gets a witness at n = 256 (verified: "
        f"{trained['witness_verified']}); the softmax model itself is "
        f"{'right' if trained.get('soft_right_on_pair') else 'wrong'} on the pair."
    )
    t_rows = [[_label(k), _value(v)] for k, v in trained.items()]
    return Result(
        metrics=metrics,
        figures=[fig.name],
        tables=[
            Table(
                "Random hard models, gap measured on the word list",
                [
                    "weighting",
                    "mask",
                    "layers",
                    "gap",
                    "τ",
                    "θ",
                    "error bound",
                    "measured error",
                    "largest θ within ε / θ",
                    "horizon (ε = 1/4)",
                ],
                rows,
            ),
            Table(
                f"Compiled hard formulas, certified gap, N = {N_COMPILED}",
                [
                    "formula",
                    "layers",
                    "τ(n)",
                    "error bound",
                    "mismatches (evaluator)",
                    "max |out − ref|",
                    "horizon τ(n)",
                    "horizon τ(N) frozen",
                ],
                c_rows,
            ),
            Table(
                "Trained PARITY transformer, hardened and restricted",
                ["quantity", "value"],
                t_rows,
            ),
        ],
        summary=summary,
    )


__all__ = ["largest_theta", "max_error", "run"]

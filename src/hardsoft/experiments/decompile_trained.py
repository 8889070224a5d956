"""Decompiling trained transformers: what a small softmax recognizer of a star-free language
computes once hardened, at every length.

For each task (a star-free language, so definable in LTL and by masked unique-hard attention
without position encodings: Yang, Chiang & Angluin (2024)) and each seed:

1. train a small softmax transformer as a recognizer (Butoi et al. (ICLR 2025) protocol,
   ``hardsoft train --objective recognizer``; position features ``1,(-1)^i``, which take finitely
   many values, so the hardened model can be decompiled);
2. harden it (every head leftmost-hard, :func:`hardsoft.convert.harden`) and measure where the
   softmax model and its hardened self agree, by length (``hardsoft agree``);
3. run the hardened model on every word up to ``exhaustive_n`` and name the shortest word where
   it disagrees with the task's own formula (itself checked against the language's oracle on
   every word to that length first) — a counterexample found by running the model;
4. decompile the hardened model (``hardsoft.decompile``) into a formula, check the formula
   against the hardened model on every word up to 8 (the logic evaluator against the model), and
   decide whether the formula equals the task's formula at *every* length
   (:func:`hardsoft.logic.equivalence.equivalent`) — a proof that the hardened model recognizes
   the task at every length, or the shortest input where it does not.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from hardsoft.errors import HardsoftError  # noqa: E402
from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.experiments.sensitivity import finite  # noqa: E402
from hardsoft.languages import all_words, get_language  # noqa: E402
from hardsoft.learn.executors import make_executor  # noqa: E402
from hardsoft.learn.models import ArchConfig  # noqa: E402
from hardsoft.learn.recognize import accuracy_by_length, sample_strings  # noqa: E402
from hardsoft.learn.train import TrainConfig  # noqa: E402
from hardsoft.logic import parse  # noqa: E402
from hardsoft.logic.semantics import accepts_batch, evaluate  # noqa: E402
from hardsoft.logic.syntax import Formula, shared_size, size, to_text  # noqa: E402

VERSION = "8"

# The task's own formulas (hardsoft syntax; read at the last position). Dyck-1 of depth <= 2:
# the word starts with "(" and ends with ")", and its doubled letters alternate "((", "))", ...
# starting with "((" and ending with "))" (each "((" shifts the height band {0,1} to {1,2}).
_DD, _CC = "('(' & Y '(')", "(')' & Y ')')"
_LAST_DOUBLE_DD = f"((!{_DD} & !{_CC}) S {_DD})"
_BAD = f"(({_DD} & {_LAST_DOUBLE_DD}) | ({_CC} & !{_LAST_DOUBLE_DD}))"
_REPEAT = "(('a' & Y 'a') | ('b' & Y 'b'))"


@dataclass(frozen=True)
class Task:
    language: str
    formula: str
    description: str


TASKS = (
    Task("first", "(first & '1') | P (first & '1')", "first symbol is 1"),
    Task("contains-ab", "('b' & Y 'a') | P ('b' & Y 'a')", "contains ab (Σ*abΣ*)"),
    Task("ends-ab", "'b' & Y 'a'", "last two symbols are ab (Σ*ab)"),
    Task(
        "dyck1-depth2",
        f"')' & ((first & '(') | P (first & '(')) & !{_BAD} & !P {_BAD} "
        f"& ({_CC} | !{_LAST_DOUBLE_DD})",
        "Dyck-1 of depth at most 2",
    ),
    Task("ones-star", "'1' & !P '0'", "no 0 (1*)"),
    Task(
        "ab-star",
        f"'b' & ((first & 'a') | P (first & 'a')) & !{_REPEAT} & !P {_REPEAT}",
        "(ab)*",
    ),
)


@dataclass(frozen=True)
class Plan:
    """The sizes of one mode."""

    seeds: int
    steps: int
    max_n: int  # training lengths 1..max_n
    batch_size: int
    layers: int
    heads: int
    d_model: int
    features: str
    agree_lengths: tuple[int, ...]
    agree_count: int
    accuracy_lengths: tuple[int, ...]
    accuracy_samples: int
    exhaustive_n: int  # every word up to this length: model vs task, formula vs task
    verify_n: int  # every word up to this length: decompiled formula vs hardened model
    random_words: int = 200  # and this many random words up to random_max_n (the decompiler's)
    random_max_n: int = 1000
    # the decompiler's own estimate refuses larger models before the work: its simplification
    # of a two-layer, two-head model of width 32 (about 2,000 classes) ran for over 10 minutes
    max_classes: int = 1000


QUICK = Plan(
    2, 120, 12, 32, 1, 2, 16, "1,(-1)^i", (8, 64, 256), 16, (8, 64, 256), 32, 10, 6, 20, 200
)
FULL = Plan(
    5, 1500, 40, 32, 2, 1, 32, "1,(-1)^i",
    (8, 64, 512, 4096), 8, (8, 40, 80, 500, 1000), 64, 12, 8,
)  # fmt: skip


def task_formula(task: Task) -> Formula:
    """The task's formula over its language's alphabet."""
    return parse(task.formula, get_language(task.language).alphabet)


def words_up_to(alphabet: tuple[str, ...], n: int) -> list[str]:
    """Every non-empty word of length <= n, by length then in the alphabet's order."""
    return [w for k in range(1, n + 1) for w in all_words(alphabet, k)]


def formula_accepts(formula: Formula, words: list[str], alphabet: tuple[str, ...]) -> np.ndarray:
    """The logic evaluator's acceptance of each word (batched by length)."""
    out = np.zeros(len(words), dtype=bool)
    by_len: dict[int, list[int]] = {}
    for k, w in enumerate(words):
        by_len.setdefault(len(w), []).append(k)
    for idx in by_len.values():
        out[idx] = accepts_batch(formula, [words[k] for k in idx], alphabet)
    return out


def check_task_formula(task: Task, n: int) -> None:
    """The task's formula equals the language's oracle on every non-empty word up to ``n``
    (a HardsoftError naming the first word otherwise)."""
    lang = get_language(task.language)
    words = words_up_to(lang.alphabet, n)
    got = formula_accepts(task_formula(task), words, lang.alphabet)
    want = lang.members(words)
    bad = np.flatnonzero(got != want)
    if len(bad):
        raise HardsoftError(f"the formula of {task.language} is wrong on {words[bad[0]]!r}")


def _train_config(plan: Plan, task: Task, seed: int) -> TrainConfig:
    arch = ArchConfig(
        layers=plan.layers,
        heads=plan.heads,
        d_model=plan.d_model,
        features=plan.features,
        layer_norm="none",
    )
    return TrainConfig(
        language=task.language,
        objective="recognizer",
        arch=arch,
        min_n=1,
        max_n=plan.max_n,
        val_max_n=2 * plan.max_n,
        steps=plan.steps,
        batch_size=plan.batch_size,
        lr=3e-3,
        warmup=min(100, plan.steps // 10),
        seed=seed,
        log_every=max(1, plan.steps // 4),
        checkpoint_every=plan.steps or 1,
    )


def _model_accepts(model: Any, words: list[str]) -> np.ndarray:
    """The model's declared acceptance at every position ``[B, n]`` of equal-length words."""
    from hardsoft.model.readout import acceptance_of

    out = torch.as_tensor(np.stack(model.run_words(words)))
    return acceptance_of(model).accept(out).numpy()


def first_disagreement(model: Any, formula: Formula, alphabet: tuple[str, ...], n: int) -> Any:
    """The shortest word (then first in the alphabet's order) of length <= n where the model's
    acceptance differs from ``formula``'s, or None. All words of length n are run once: with a
    future mask and position features that do not depend on n, position i reads the prefix of
    length i, so every shorter word is a prefix of one of them."""
    words = all_words(alphabet, n)
    got = _model_accepts(model, words)
    want = evaluate(formula, words, alphabet)
    for k in range(n):
        bad = np.flatnonzero(got[:, k] != want[:, k])
        if len(bad):
            return min(words[i][: k + 1] for i in bad)
    return None


def _decompile(hard: Any, task: Task, plan: Plan) -> dict[str, Any]:
    """Decompile the hardened model; check the formula against it (every word to verify_n)
    and against the task's formula (every word to exhaustive_n, and at every length)."""
    try:
        import importlib

        decompile = importlib.import_module("hardsoft.decompile").decompile
    except ImportError:
        return {"status": "unavailable", "reason": "the decompiler is not in this build"}
    alphabet = tuple(hard.spec.alphabet)
    try:
        result = decompile(
            hard,
            verify_n=plan.verify_n,
            random_words=plan.random_words,
            random_max_n=plan.random_max_n,
            max_classes=plan.max_classes,
        )
    except HardsoftError as exc:
        return {"status": "refused", "reason": str(exc)}
    formula = _accept_formula(result, alphabet)
    out: dict[str, Any] = {
        "status": "decompiled",
        "formula": to_text(formula),
        "size": size(formula),
        "size_before": result.outputs[0].size_before,
        "size_before_shrinking": result.outputs[0].size_written,
        "size_shared": shared_size(formula),
        "shrink": result.outputs[0].shrink,
        "task_size": size(task_formula(task)),
        "classes": list(result.classes),
        "seconds": round(result.seconds, 3),
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
        "certificate": _plain(getattr(result, "certificate", None)),
        "verified": _plain(getattr(result, "verified", None)),
    }
    miss = first_disagreement(hard, formula, alphabet, plan.verify_n)
    out["matches_model_to"] = plan.verify_n if miss is None else None
    out["model_mismatch"] = miss
    task_f = task_formula(task)
    words = words_up_to(alphabet, plan.exhaustive_n)
    diff = np.flatnonzero(
        formula_accepts(formula, words, alphabet) != formula_accepts(task_f, words, alphabet)
    )
    out["counterexample_to_n"] = words[diff[0]] if len(diff) else None
    try:
        from hardsoft.logic.equivalence import equivalent

        eq = equivalent(formula, task_f, alphabet)
        out["equal_at_every_length"] = eq.equal
        out["counterexample"] = eq.counterexample
    except HardsoftError as exc:
        out["equal_at_every_length"] = None
        out["undecided"] = str(exc)
    return out


def _accept_formula(result: Any, alphabet: tuple[str, ...]) -> Formula:
    """The formula of the ``accept`` output (the first) of a decompiler result."""
    formulas = result.formulas
    if isinstance(formulas, dict):
        formulas = list(formulas.values())
    first = formulas[0]
    return parse(first, alphabet) if isinstance(first, str) else first


def _plain(obj: Any) -> Any:
    """A JSON-able rendering (dataclasses as dicts, anything else as text)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "__dataclass_fields__"):
        return _plain(asdict(obj))
    return str(obj)


def decompile_cell(config: dict[str, Any], run_dir: str, plan: Plan, task: Task) -> dict:
    """One job: train (or resume) one recognizer, harden it, measure, decompile."""
    from hardsoft.convert import harden
    from hardsoft.learn.sweep import train_cell
    from hardsoft.learn.train import load_run
    from hardsoft.model.inspect import agreement

    torch.manual_seed(0)
    metrics = train_cell(config, run_dir)
    from hardsoft.model.transformer import Transformer

    cfg, soft = load_run(run_dir)
    if not isinstance(soft, Transformer):
        raise HardsoftError(f"{run_dir!r} holds no transformer")
    hard = harden(soft, "leftmost")
    lang = get_language(task.language)
    agree = []
    for n in plan.agree_lengths:
        words = sample_strings(lang, n, plan.agree_count, np.random.default_rng([7, n]))[0]
        agree.append(agreement(soft, hard, words).to_dict())
    acc_soft = accuracy_by_length(soft, lang, plan.accuracy_lengths, samples=plan.accuracy_samples)
    acc_hard = accuracy_by_length(hard, lang, plan.accuracy_lengths, samples=plan.accuracy_samples)
    miss = first_disagreement(hard, task_formula(task), lang.alphabet, plan.exhaustive_n)
    return {
        "language": task.language,
        "seed": cfg.seed,
        "final_loss": metrics.get("final_loss"),
        "validation": metrics.get("validation"),
        "agreement": agree,
        "accuracy_softmax": [r.to_dict() for r in acc_soft],
        "accuracy_hardened": [r.to_dict() for r in acc_hard],
        "hardened_vs_task_to_n": plan.exhaustive_n,
        "hardened_counterexample": miss,
        "decompile": _decompile(hard, task, plan),
    }


def _run_cells(ctx: Context, plan: Plan) -> list[dict[str, Any]]:
    mode = "quick" if ctx.quick else "full"
    root = ctx.figures_dir.parent / "runs" / f"decompile-trained-v{VERSION}-{mode}"
    jobs = []
    for task in TASKS:
        for seed in range(ctx.seed, ctx.seed + plan.seeds):
            cfg = _train_config(plan, task, seed)
            jobs.append((cfg.to_dict(), str(root / f"{task.language}-s{seed}"), plan, task))
    executor = make_executor(ctx.executor, address=ctx.address)
    cells: list[dict[str, Any]] = [{} for _ in jobs]
    for k, (state, value) in executor.map(decompile_cell, jobs):
        if state != "ok":
            raise RuntimeError(f"cell {jobs[k][3].language} seed {k} failed: {value}")
        cells[k] = value
    return cells


def _verdict(cell: dict[str, Any]) -> str:
    """What was shown about the hardened model and the task, in a few words."""
    d = cell["decompile"]
    if d["status"] == "decompiled":
        if d.get("equal_at_every_length"):
            return "= task at every length (proof)"
        if d.get("counterexample"):
            return f"differs on `{d['counterexample']}`"
        return f"undecided ({d.get('undecided', '?')})"
    miss = cell["hardened_counterexample"]
    if miss is not None:
        return f"differs on `{miss}` (run)"
    return f"= task on every word <= {cell['hardened_vs_task_to_n']} (no proof)"


def _sizes(d: dict[str, Any]) -> str:
    """First written (temporal atoms as created) → after the BDD simplification → after the
    proved shrinking."""
    if "size" not in d:
        return "-"
    return f"{d.get('size_before', '-')} → {d.get('size_before_shrinking', '-')} → {d['size']}"


def _seconds(d: dict[str, Any]) -> str:
    if "seconds" not in d:
        return "-"
    shrink = (d.get("shrink") or {}).get("seconds")
    return f"{d['seconds']:.2f}" + (f" ({shrink:.2f})" if shrink is not None else "")


def within_target(cells: list[dict[str, Any]], factor: float = 4.0) -> tuple[int, int, float]:
    """(proved equal to their task, of those within ``factor`` × the task's size, the largest
    ratio) over the decompiled recognizers."""
    proved = [c["decompile"] for c in cells if c["decompile"].get("equal_at_every_length")]
    ratios = [d["size"] / d["task_size"] for d in proved]
    return len(proved), sum(r <= factor for r in ratios), max(ratios, default=0.0)


def _tables(plan: Plan, cells: list[dict[str, Any]]) -> list[Table]:
    cols = ["task", "seed", "val. acc."]
    cols += [f"agree n={n}" for n in plan.agree_lengths]
    cols += ["hardened acc. (longest)", "decompiled formula", "size: first → simplified → shrunk",
             "named defs", "size / task's", "classes per layer", "decompile s (shrink s)",
             "hardened model vs task"]  # fmt: skip
    rows = []
    for c in cells:
        d = c["decompile"]
        formula = d.get("formula") if d["status"] == "decompiled" else d["status"]
        if isinstance(formula, str) and len(formula) > 80:
            formula = formula[:77] + "..."
        val = (c.get("validation") or {}).get("accuracy")
        rows.append(
            [
                c["language"],
                c["seed"],
                "-" if val is None else f"{val:.3f}",
                *[f"{a['accept_positions']:.3f}" for a in c["agreement"]],
                f"{c['accuracy_hardened'][-1]['accuracy']:.3f}",
                formula,
                _sizes(d),
                d.get("size_shared", "-"),
                f"{d['size'] / d['task_size']:.2g}" if "size" in d else "-",
                " ".join(map(str, d["classes"])) if "classes" in d else "-",
                _seconds(d),
                _verdict(c),
            ]
        )
    per_task = []
    for task in TASKS:
        mine = [c for c in cells if c["language"] == task.language]
        proofs = sum(bool(c["decompile"].get("equal_at_every_length")) for c in mine)
        runs_ok = sum(c["hardened_counterexample"] is None for c in mine)
        per_task.append(
            [task.language, task.description, task.formula if len(task.formula) < 60 else
             task.formula[:57] + "...", len(mine), runs_ok, proofs]
        )  # fmt: skip
    return [
        Table("Trained, hardened, decompiled: per task and seed", cols, rows),
        Table(
            "Tasks, their formulas, and the seeds whose hardened model matched the task "
            f"(on every word to {plan.exhaustive_n}; at every length by proof)",
            ["task", "language", "formula", "seeds", f"match to n={plan.exhaustive_n}", "proofs"],
            per_task,
        ),
    ]


def _figure(ctx: Context, plan: Plan, cells: list[dict[str, Any]], mode: str) -> str:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for task in TASKS:
        mine = [c for c in cells if c["language"] == task.language]
        agree = np.array([[a["accept_positions"] for a in c["agreement"]] for c in mine])
        acc = np.array([[r["accuracy"] for r in c["accuracy_hardened"]] for c in mine])
        line = ax1.plot(plan.agree_lengths, agree.mean(0), marker="o", label=task.language)[0]
        ax1.fill_between(plan.agree_lengths, agree.min(0), agree.max(0), alpha=0.15,
                         color=line.get_color())  # fmt: skip
        ax2.plot(plan.accuracy_lengths, acc.mean(0), marker="o", color=line.get_color(),
                 label=task.language)  # fmt: skip
    ax2.axvline(plan.max_n, color="grey", linestyle=":", linewidth=1, label="longest training n")
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("input length n")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)
    ax1.set_ylabel("positions where softmax and hardened agree")
    ax1.set_title(f"(a) softmax vs its hardened self (mean, min-max over seeds; {mode})",
                  fontsize=9)  # fmt: skip
    ax2.set_ylabel("hardened model's accuracy (oracle labels)")
    ax2.set_title("(b) hardened recognizer vs the language, by length", fontsize=9)
    fig.tight_layout()
    path = ctx.figure_path("decompile-trained.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _summary(plan: Plan, cells: list[dict[str, Any]]) -> str:
    statuses = {c["decompile"]["status"] for c in cells}
    longest = plan.agree_lengths[-1]
    agree = np.mean([c["agreement"][-1]["accept_positions"] for c in cells])
    matched = sum(c["hardened_counterexample"] is None for c in cells)
    text = (
        f"{len(cells)} small softmax recognizers ({len(TASKS)} star-free tasks × {plan.seeds} "
        f"seeds, features {plan.features}, trained on lengths 1–{plan.max_n}). Softmax and "
        f"hardened (leftmost) models agree on {agree:.1%} of positions at n = {longest} "
        f"(mean). {matched} of {len(cells)} hardened models match their task on every word up "
        f"to length {plan.exhaustive_n} (run exhaustively)."
    )
    if statuses == {"unavailable"}:
        return text + " Decompilation: unavailable in this build, so no formula and no proof."
    proofs, within, worst = within_target(cells)
    text += (
        f" Decompiled: {sum(c['decompile']['status'] == 'decompiled' for c in cells)}; the "
        f"formula equals the task's at every length (a proof) for {proofs}"
    )
    if proofs:
        text += (
            f", and {within} of those {proofs} formulas are within 4× the node count of the "
            f"task's own formula (largest ratio {worst:.2g})"
        )
    return text + "."


@register(
    "decompile-trained",
    title="Trained softmax recognizers of star-free languages: hardened, decompiled, checked",
    version=VERSION,
    order=72,
    seed_ref="Yang, Chiang & Angluin (2024); Butoi et al. (ICLR 2025)",
)
def run(ctx: Context) -> Result:
    plan = QUICK if ctx.quick else FULL
    mode = "quick run" if ctx.quick else "full run"
    for task in TASKS:
        check_task_formula(task, plan.exhaustive_n)
    cells = _run_cells(ctx, plan)
    figure = _figure(ctx, plan, cells, mode)
    metrics = {"plan": asdict(plan), "tasks": [asdict(t) for t in TASKS], "cells": cells}
    json.dumps(finite(metrics))  # strict JSON, checked here rather than in the store
    return Result(finite(metrics), [figure], _tables(plan, cells), _summary(plan, cells))


__all__ = ["TASKS", "Task", "check_task_formula", "first_disagreement", "run", "words_up_to"]

"""Learned cells: recognizers trained under the protocol of Butoi et al. (ICLR 2025), and a
status that says what was seen.

The protocol (:class:`Protocol`): train on strings of lengths 1–40 (theirs: 0–40; our models
need n ≥ 1), each step a fresh batch drawn from the language's sampler
(:mod:`hardsoft.learn.recognize`); test on freshly sampled strings, half members and half
non-members (near misses and random), at every length 1–80 (twice the longest training
length) and at 100, 200, ..., 500. A seed **learns** the row when its accuracy over lengths
1–80 is at least :data:`THRESHOLD`; the cell reads **learned in our runs** only when a
majority of seeds do, otherwise **not learned in our runs**, with the numbers either way: the
accuracy on the training lengths 1–40, beyond them (41–80) and at 100–500 separately. Quick
mode trains two rows with runs too short to be a finding (100 steps, width 16): the cell stays
**pending** and shows the numbers as a smoke test of the pipeline.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hardsoft.atlas.evidence import MODEL_FILE, Budget, Evidence, rel
from hardsoft.atlas.table import Column, EvidenceKind, Row, Status
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language

THRESHOLD = 0.99
"""Accuracy a seed must reach on lengths 1–2·max_n (held-out strings) to count as learning."""
LEARN_FILE = "metrics.json"
LONG = (100, 200, 300, 400, 500)


@dataclass(frozen=True)
class Protocol:
    """Training and test of the learned cells (see the module docstring)."""

    max_n: int
    steps: int
    d_model: int
    layers: int
    seeds: int
    samples: int

    @property
    def lengths(self) -> list[int]:
        return [*range(1, 2 * self.max_n + 1), *LONG]


def protocol(budget: Budget) -> Protocol:
    """Quick: 3 seeds of 100 steps, width 16, one layer; full: 5 seeds of 2000 steps, width
    32, two layers. Both train on 1–40 and test to 500."""
    if budget.quick:
        return Protocol(max_n=40, steps=100, d_model=16, layers=1, seeds=3, samples=16)
    return Protocol(max_n=40, steps=2000, d_model=32, layers=2, seeds=5, samples=32)


def _stats(values: list[float]) -> dict[str, float]:
    a = np.array(values, dtype=float)
    return {
        "mean": float(a.mean()),
        "std": float(a.std()),
        "min": float(a.min()),
        "max": float(a.max()),
    }


def produce_learn(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """Train recognizers (Butoi et al. 2025 objective) over several seeds, test them under the
    protocol and decide the status by :data:`THRESHOLD` in a majority of seeds."""
    from hardsoft.learn.models import ArchConfig
    from hardsoft.learn.recognize import accuracy_by_length, mean_accuracy
    from hardsoft.learn.train import TrainConfig, load_run, train

    lang = get_language(row.language)
    if lang.kind != "language":
        raise HardsoftError(f"{row.language} is a per-position task, not a language")
    plan = protocol(budget)
    arch = "lstm" if col.id == "trained-lstm" else "transformer"
    L = plan.max_n
    per_seed: list[dict[str, Any]] = []
    cmds: list[str] = []
    artefacts: dict[str, str] = {}
    for seed in range(plan.seeds):
        run = folder / f"seed-{seed}"
        cfg = TrainConfig(
            language=row.language,
            objective="recognizer",
            arch=ArchConfig(arch=arch, layers=plan.layers, heads=2, d_model=plan.d_model),
            min_n=1,
            max_n=L,
            val_max_n=2 * L,
            steps=plan.steps,
            seed=seed,
            checkpoint_every=plan.steps,
        )
        train(cfg, run, resume=False, show_progress=False)
        _, model = load_run(run)
        rows = accuracy_by_length(model, lang, plan.lengths, samples=plan.samples)
        test = mean_accuracy(rows, 1, 2 * L) or 0.0
        per_seed.append(
            {
                "seed": seed,
                "train_lengths": mean_accuracy(rows, 1, L),
                "test_to_2x": test,
                "beyond_training": mean_accuracy(rows, L + 1, 2 * L),
                "long_100_500": mean_accuracy(rows, LONG[0], LONG[-1]),
                "learned": test >= THRESHOLD,
            }
        )
        weights = run / (MODEL_FILE if arch == "transformer" else "lstm.safetensors")
        artefacts[f"model (seed {seed})"] = rel(weights, out)
        runq = shlex.quote(rel(run, out))
        cmds.append(
            f"hardsoft train --language {row.language} --objective recognizer --arch {arch} "
            f"--layers {plan.layers} --heads 2 --d-model {plan.d_model} --min-n 1 --max-n {L} "
            f"--val-max-n {2 * L} --steps {plan.steps} --checkpoint-every {plan.steps} "
            f"--seed {seed} -o {runq} --json"
        )
        cmds.append(
            f"hardsoft evaluate {runq} --lengths {','.join(map(str, plan.lengths))} "
            f"--samples {plan.samples} --json"
        )
    keys = ("train_lengths", "test_to_2x", "beyond_training", "long_100_500")
    stats = {k: _stats([s[k] for s in per_seed]) for k in keys}
    passed = sum(s["learned"] for s in per_seed)
    learned = passed > plan.seeds / 2
    status = Status.PENDING if budget.quick else Status.LEARNED if learned else Status.NOT_LEARNED
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "protocol": asdict(plan),
        "threshold": THRESHOLD,
        "rule": f"learned iff accuracy on lengths 1–{2 * L} >= {THRESHOLD} in a majority of seeds",
        "arch": arch,
        "lengths": plan.lengths,
        "per_seed": per_seed,
        "accuracy": stats,
        "seeds_learned": passed,
        "learned": learned,
        "smoke_test": budget.quick,
    }
    (folder / LEARN_FILE).write_text(json.dumps(record, indent=1) + "\n")
    artefacts["metrics"] = rel(folder / LEARN_FILE, out)
    summary = f"{_verdict(plan, status, passed)}: {_accuracies(stats, L)}; {arch}, {_size(plan)}"
    return Evidence(
        status,
        EvidenceKind.ILLUSTRATION,
        True,
        summary,
        artefacts,
        cmds,
        {
            "accuracy": stats,
            "seeds_learned": passed,
            "seeds": plan.seeds,
            "threshold": THRESHOLD,
            "train_max_n": L,
            "steps": plan.steps,
            "smoke_test": budget.quick,
        },
    )


def _size(plan: Protocol) -> str:
    return (
        f"{plan.steps} steps, width {plan.d_model}, {plan.layers} "
        f"layer{'s' if plan.layers > 1 else ''}, {plan.seeds} seeds"
    )


def _verdict(plan: Protocol, status: Status, passed: int) -> str:
    """The summary's opening: a smoke test (quick mode: no finding) or the protocol's status."""
    reach = f"{passed} of {plan.seeds} seeds reach {THRESHOLD} on lengths 1–{2 * plan.max_n}"
    if status is Status.PENDING:
        return (
            f"smoke test ({plan.steps} steps, width {plan.d_model}), not a finding: {reach} "
            "(the protocol's runs are --full)"
        )
    return f"{status.label}: {reach}"


def _accuracies(stats: dict[str, dict[str, float]], L: int) -> str:
    """Accuracy on the training lengths, beyond them up to 2L, and at 100–500, apart."""
    parts = [
        (f"1–{2 * L}", "test_to_2x"),
        (f"training lengths 1–{L}", "train_lengths"),
        (f"beyond them, {L + 1}–{2 * L}", "beyond_training"),
        (f"{LONG[0]}–{LONG[-1]}", "long_100_500"),
    ]
    shown = [f"{name} {stats[k]['mean']:.2f} ± {stats[k]['std']:.2f}" for name, k in parts]
    return "accuracy " + "; ".join(shown)

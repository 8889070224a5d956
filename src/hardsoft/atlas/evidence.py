"""Evidence producers, one per way a cell is backed (``Claim.how`` in :mod:`.table`), and the
re-checks the tests run on stored evidence. Each producer writes its artefacts into the cell's
folder and returns an :class:`Evidence`: the status the evidence supports, whether it agrees
with the claim, the numbers, the artefacts and the commands that regenerate and re-check them.

Everything here calls the engines; nothing re-derives them: the compiler
(:func:`hardsoft.compile.compile_formula`), the §6 programs
(:func:`hardsoft.programs.routes.build`),
the exact checker (:func:`hardsoft.check.check_language`), the restriction engine
(:func:`hardsoft.limits.restrict.restrict`, :func:`hardsoft.limits.witness.verify`) and the
star-free decision (:mod:`hardsoft.atlas.starfree`).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hardsoft.atlas.starfree import decide_star_free
from hardsoft.atlas.table import COLUMNS, ROWS, Claim, Column, Row, Status
from hardsoft.errors import HardsoftError
from hardsoft.languages import Language, get_language
from hardsoft.languages.regular import RegularLanguage, dfa_from_regex
from hardsoft.logic.syntax import Const, First, Not, Past
from hardsoft.model.transformer import Transformer

COLUMNS_BY_ID = {c.id: c for c in COLUMNS}
MODEL_FILE = "model.safetensors"
WITNESS_FILE = "witness.json"
CHECK_FILE = "check.json"
DECISION_FILE = "decision.json"


@dataclass
class Evidence:
    """What a producer established for one cell."""

    status: Status | None  # the status the evidence supports (None: nothing was produced)
    agrees: bool  # the evidence supports the claimed status
    summary: str  # one line with the numbers
    artefacts: dict[str, str] = field(default_factory=dict)  # name -> file (relative to out)
    commands: list[str] = field(default_factory=list)  # regenerate, then re-check
    numbers: dict[str, Any] = field(default_factory=dict)
    decision: dict[str, Any] | None = None  # the star-free decision (regular rows, column 1)

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["status"] = None if self.status is None else self.status.value
        return d


@dataclass(frozen=True)
class Budget:
    """How hard the evidence is checked: exhaustive lengths by alphabet size, random lengths
    and samples, the restriction's length and its seeds."""

    quick: bool

    def exhaustive(self, k: int) -> int:
        table = {2: 8, 3: 6, 4: 5} if self.quick else {2: 12, 3: 8, 4: 7}
        return table.get(k, 4 if self.quick else 5)

    @property
    def random_n(self) -> list[int]:
        return [64] if self.quick else [256, 1024, 4096]

    @property
    def samples(self) -> int:
        return 16 if self.quick else 64

    @property
    def seeds(self) -> int:
        return 6 if self.quick else 12


def rel(path: Path, out: Path) -> str:
    """``path`` relative to the atlas folder (artefacts are stored that way)."""
    return str(path.relative_to(out))


def row_language(row: Row) -> Language:
    """The row's oracle: the registered language, or (for a regular row whose language is not
    registered in this build) the language of its regular expression."""
    try:
        return get_language(row.language)
    except HardsoftError:
        if row.regex is None:
            raise
        return RegularLanguage(row.language, dfa_from_regex(row.regex, row.alphabet))


def _registered(name: str) -> bool:
    try:
        get_language(name)
    except HardsoftError:
        return False
    return True


# ------------------------------------------------------------------ the model class
def class_violations(model: Transformer, col: Column) -> list[str]:
    """Where ``model`` leaves ``col``'s class (weightings, position features, τ)."""
    from hardsoft.model.features import parse_feature

    bad: list[str] = []
    heads = [h for b in model.blocks for h in b.heads]
    weightings = sorted({str(h.spec.weighting) for h in heads})
    extra = [w for w in weightings if col.weightings and w not in col.weightings]
    if extra:
        bad.append(f"uses {', '.join(extra)} attention")
    features = [f for f in model.spec.position_features if f != "1"]
    if col.features == "none" and features:
        bad.append(f"uses position features {', '.join(features)}")
    if col.features == "bounded":
        unbounded = [f for f in features if not parse_feature(f).bounded]
        if unbounded:
            bad.append(f"uses unbounded position features {', '.join(unbounded)}")
    if col.tau_one and any(h.spec.tau not in (None, "1") for h in heads):
        bad.append("uses a temperature τ(n) ≠ 1")
    if col.id == "uhat-strict":
        loose = sorted({str(h.spec.mask) for h in heads} - {"strict-future", "strict-past"})
        if loose:
            bad.append(f"uses non-strict masks {', '.join(loose)}")
    if model.spec.layer_norm != "none" and col.id != "soft-ln":
        bad.append("has layer norm")
    return bad


def _no_first(node: Any) -> Any:
    """``first`` rewritten as ``!P true`` (no earlier position): the same positions, without
    the compiler's [i=1] position feature (strict masks see the first position)."""
    if isinstance(node, First):
        return Not(Past(Const(True)))
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, tuple):
            changes[f.name] = tuple(_no_first(v) for v in value)
        elif dataclasses.is_dataclass(value):
            changes[f.name] = _no_first(value)
    return dataclasses.replace(node, **changes) if changes else node


# ------------------------------------------------------------------ constructed
def _check(
    model: Transformer, row: Row, lang: Language, budget: Budget, folder: Path, out: Path
) -> tuple[dict[str, Any], list[str]]:
    """Save the model, check it exactly against the oracle; the report and the check
    command."""
    from hardsoft.check import check_language
    from hardsoft.model.io import save_model

    path = folder / MODEL_FILE
    folder.mkdir(parents=True, exist_ok=True)
    save_model(model, path)
    k = budget.exhaustive(len(row.alphabet))
    rep = check_language(
        model, lang, exhaustive_max_n=k, random_n=budget.random_n, samples=budget.samples
    )
    slim = {
        key: rep[key]
        for key in (
            "mismatches",
            "checked_strings",
            "checked_positions",
            "max_n",
            "exhaustive_lengths",
            "sampled_lengths",
            "max_abs_error",
            "first_mismatch",
        )
    }
    (folder / CHECK_FILE).write_text(json.dumps(slim, indent=1) + "\n")
    against = (
        f"--language {row.language}"
        if _registered(row.language)
        else f"--formula {shlex.quote(row.formula or '')}"
    )
    cmd = (
        f"hardsoft check {shlex.quote(rel(path, out))} {against} --exhaustive-max-n {k} "
        f"--random-n {','.join(map(str, budget.random_n))} --samples {budget.samples}"
    )
    return slim, [cmd]


def _constructed(
    model: Transformer,
    row: Row,
    col: Column,
    budget: Budget,
    folder: Path,
    out: Path,
    make_cmd: str,
    extra: dict[str, Any],
) -> Evidence:
    lang = row_language(row)
    rep, check_cmds = _check(model, row, lang, budget, folder, out)
    bad = class_violations(model, col)
    exact = rep["mismatches"] == 0
    spec = model.spec
    numbers = {
        "checked_to_n": rep["max_n"],
        "exhaustive_to_n": max(rep["exhaustive_lengths"] or [0]),
        "checked_strings": rep["checked_strings"],
        "mismatches": rep["mismatches"],
        "max_abs_error": rep["max_abs_error"],
        "layers": len(spec.layers),
        "heads": sum(len(layer.heads) for layer in spec.layers),
        "width": spec.d_model,
        "parameters": model.parameter_count(),
        "weightings": sorted({str(h.spec.weighting) for b in model.blocks for h in b.heads}),
        "position_features": [f for f in spec.position_features if f != "1"],
        "outside_class": bad,
        **extra,
    }
    summary = (
        f"{'exact' if exact else 'WRONG'} at every position: {rep['checked_strings']} strings, "
        f"all up to n = {numbers['exhaustive_to_n']}, random to n = {rep['max_n']}; "
        f"{numbers['layers']} layers, {numbers['heads']} heads, width {spec.d_model}"
    )
    if bad:
        summary += "; outside the column's class: " + "; ".join(bad)
    return Evidence(
        Status.CONSTRUCTED if exact and not bad else None,
        exact and not bad,
        summary,
        {"model": rel(folder / MODEL_FILE, out), "check": rel(folder / CHECK_FILE, out)},
        [make_cmd, *check_cmds],
        numbers,
    )


def produce_compile(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """Compile the row's formula for the column's target and check it exactly."""
    from hardsoft.compile import compile_formula
    from hardsoft.logic import parse

    if row.formula is None or not col.target:
        raise HardsoftError(f"row {row.id} has no formula for column {col.id}")
    formula = parse(row.formula, alphabet=row.alphabet)
    model = compile_formula(formula, row.alphabet, col.target, False, n=1000)
    cmd = (
        f"hardsoft compile {shlex.quote(row.formula)} --alphabet {shlex.quote(row.alphabet)} "
        f"--target {col.target} -o {shlex.quote(rel(folder / MODEL_FILE, out))}"
    )
    cert = model.meta["certificate"]
    taus = sorted({t["expression"] for t in cert.get("tau") or []})
    extra = {"formula": row.formula, "target": col.target, "tau": taus}
    return _constructed(model, row, col, budget, folder, out, cmd, extra)


def produce_program(
    row: Row, col: Column, route: str, budget: Budget, folder: Path, out: Path
) -> Evidence:
    """Build the row's §6 program on ``route`` for the column and check it exactly. On the
    unique-hard, no-position-feature column the logic route's formulas are compiled with
    ``first`` written as ``!P true``."""
    from hardsoft.compile import compile_formula
    from hardsoft.programs.routes import build

    if row.program is None:
        raise HardsoftError(f"row {row.id} has no program")
    name, k = row.program
    target = "average-hard" if route == "tieless" else col.target
    built = build(name, k, target, route=route)
    model = built.model
    path = shlex.quote(rel(folder / MODEL_FILE, out))
    kopt = f" --k {k}" if k is not None else ""
    cmd = f"hardsoft program {name}{kopt} --route {route} --target {target} -o {path}"
    extra: dict[str, Any] = {"program": name, "route": route, "target": target}
    if col.id == "uhat-strict" and built.formulas:
        outputs = {nm: _no_first(f) for nm, f in built.formulas.items()}
        model = compile_formula(outputs, row.alphabet, "hard", False, n=1000)
        from hardsoft.logic.syntax import to_text

        texts = [f"--output {shlex.quote(nm + '=' + to_text(f))}" for nm, f in outputs.items()]
        script = folder / "compile.sh"
        folder.mkdir(parents=True, exist_ok=True)
        script.write_text(
            "#!/bin/sh\n# the logic route's formulas with first written as !P true\n"
            f"hardsoft compile {' '.join(texts)} --alphabet {shlex.quote(row.alphabet)} "
            f"--target hard -o {path}\n"
        )
        cmd = f"sh {shlex.quote(rel(script, out))}"
        extra["note"] = "the logic route's formulas with first written as !P true"
    return _constructed(model, row, col, budget, folder, out, cmd, extra)


# ------------------------------------------------------------------ impossible
def _random_hard(row: Row, col: Column, seed: int) -> tuple[Transformer, str]:
    """A seeded random rightmost-hard model of the column's class, and its command."""
    from hardsoft.model import random_model

    strict = col.id == "uhat-strict"
    mask = "strict-future" if strict else "none"
    # the constant feature 1 is a bias, not a position feature
    features: tuple[str, ...] = ("1",) if strict else ("1", "i/n", "(-1)^i", "[i=1]", "[i=n]")
    model = random_model(
        weighting="rightmost",
        mask=mask,
        layers=2,
        heads=2,
        d_model=16,
        seed=seed,
        dtype=torch.float64,
        alphabet=row.alphabet,
        position_features=features,
    )
    feats = ",".join(features)
    cmd = (
        f"hardsoft random-model --weighting rightmost --mask {mask} --layers 2 --heads 2 "
        f"--d-model 16 --alphabet {shlex.quote(row.alphabet)} --features {shlex.quote(feats)} "
        f"--seed {seed}"
    )
    return model, cmd


def _majority_pair(result: Any, lang: Language, rng: np.random.Generator) -> Any:
    """A MAJORITY witness on the engine's restriction: a free position p outside the
    certified dependency set set to 1 in x and 0 in x', the other free positions chosen so
    that x has #1 − #0 ∈ {1, 2} (in) and x' has #1 − #0 ∈ {−1, 0} (out). The pair is then
    checked by running the model (:func:`hardsoft.limits.witness.verify`)."""
    from hardsoft.limits.witness import Witness

    rho = result.restriction
    deps = set(result.dependency_set)
    outside = [int(p) for p in rho.free_positions() if int(p) not in deps]
    if not outside:
        return Witness(None, None, [], reason="no free position outside the dependency set")
    p = outside[int(rng.integers(len(outside)))]
    others = [int(q) for q in rho.free_positions() if int(q) != p]
    fixed_ones = sum(1 for s in rho.symbols if s == "1")
    fixed_zeros = sum(1 for s in rho.symbols if s == "0")
    m = len(others)
    for target in (1, 2):  # #1 − #0 of x: (fixed_ones + 1 + t) − (fixed_zeros + m − t)
        twice = target - fixed_ones - 1 + fixed_zeros + m
        if twice % 2 == 0 and 0 <= twice // 2 <= m:
            t = twice // 2
            picks = rng.permutation(others)[:t]
            values = {q: "0" for q in others}
            values.update({int(q): "1" for q in picks})
            values[p] = "1"
            x = rho.fill(values)
            return Witness(x, x[:p] + "0" + x[p + 1 :], [p])
    return Witness(None, None, [], reason="the fixed positions decide the majority")


def produce_restrict(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """A restriction witness (Hahn 2020 §5) that fools a seeded random model of the column:
    the engine certifies the output depends on a few positions, and two inputs that differ
    outside them, exactly one in the language, get the same answer from the model."""
    from hardsoft.limits.restrict import restrict
    from hardsoft.limits.witness import verify
    from hardsoft.model.io import save_model

    lang = row_language(row)
    n = row.restriction_n if budget.quick else 2 * row.restriction_n
    tried = []
    for seed in range(budget.seeds):
        model, model_cmd = _random_hard(row, col, seed)
        target = row.language if lang.restriction_target else None
        result = restrict(model, n, target, seed=seed)
        witness = result.witness
        if lang.name == "majority":
            witness = verify(model, _majority_pair(result, lang, np.random.default_rng(seed)), lang)
        tried.append(seed)
        if witness is not None and witness.verified:
            break
    else:
        return Evidence(
            None,
            False,
            f"no verified witness on {len(tried)} random models at n = {n}",
            numbers={"n": n, "seeds_tried": tried},
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MODEL_FILE
    save_model(model, path)
    record: dict[str, Any] = {
        "language": row.language,
        "n": n,
        "seed": seed,
        "model": rel(path, out),
        "x": witness.x,
        "x_prime": witness.x_prime,
        "changed": [p + 1 for p in witness.changed],
        "model_accepts": [witness.accept, witness.accept_prime],
        "in_language": list(witness.in_language or ()),
        "dependency_set": [p + 1 for p in result.dependency_set],
        "free_fraction": result.restriction.free_fraction,
        "verified": witness.verified,
    }
    (folder / WITNESS_FILE).write_text(json.dumps(record, indent=1) + "\n")
    mpath = shlex.quote(rel(path, out))
    lang_opt = row.language if lang.restriction_target else "parity-even"
    cmds = [f"{model_cmd} -o {mpath}"]
    if lang.restriction_target:
        cmds.append(f"hardsoft restrict {mpath} --n {n} --language {lang_opt} --seed {seed} --json")
    cmds.append(
        f"hardsoft run {mpath} -i {shlex.quote(str(witness.x))} "
        f"-i {shlex.quote(str(witness.x_prime))}"
    )
    deps = len(result.dependency_set)
    summary = (
        f"random rightmost-hard model (seed {seed}) fooled at n = {n}: x and x' differ at "
        f"position {witness.changed[0] + 1}, outside the certified dependency set of "
        f"{deps} positions; exactly one is in {row.language}, the model gives both the same "
        "answer"
    )
    return Evidence(
        Status.IMPOSSIBLE,
        True,
        summary,
        {"model": rel(path, out), "witness": rel(folder / WITNESS_FILE, out)},
        cmds,
        {"n": n, "seeds_tried": tried, "dependency_set_size": deps},
    )


# ------------------------------------------------------------------ decided
def decision_record(row: Row) -> dict[str, Any]:
    """The star-free decision of the row's regular expression (JSON)."""
    assert row.regex is not None
    dfa = dfa_from_regex(row.regex, row.alphabet)
    return {"regex": row.regex, "alphabet": row.alphabet, **decide_star_free(dfa).to_json()}


def produce_decision(row: Row, claim: Claim, folder: Path, out: Path) -> Evidence:
    """Star-freeness of the row (decided): not star-free means no strict-masked unique-hard
    transformer without position features recognises it (Yang, Chiang & Angluin 2024)."""
    record = decision_record(row)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / DECISION_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    star_free = record["star_free"]
    if star_free:
        summary = (
            f"star-free: syntactic monoid of {record['monoid_size']} elements is aperiodic "
            f"(index {record['aperiodicity_index']})"
        )
    else:
        w = record["witness"]
        summary = (
            f"not star-free: w = {w['word']!r} has period {w['period']} in the "
            f"{record['monoid_size']}-element syntactic monoid"
        )
    cmd = (
        f"hardsoft atlas add-row --regex {shlex.quote(row.regex or '')} --name "
        f"my-{row.id} --alphabet {shlex.quote(row.alphabet)} --json"  # built-in names are taken
    )
    return Evidence(
        Status.DECIDED,
        True,
        summary,
        {"decision": rel(folder / DECISION_FILE, out)},
        [cmd],
        {"star_free": star_free, "monoid_size": record["monoid_size"]},
        decision=record,
    )


# ------------------------------------------------------------------ re-checks (tests)
def recheck_constructed(out: Path, cell: dict[str, Any]) -> dict[str, Any]:
    """Load a constructed cell's stored model and check it again, exactly as stored."""
    from hardsoft.check import check_language
    from hardsoft.model.io import load_model

    ev = cell["evidence"]
    model = load_model(out / ev["artefacts"]["model"])
    row = next(r for r in ROWS if r.id == cell["row"])
    budget = Budget(quick=True)
    return check_language(
        model,
        row_language(row),
        exhaustive_max_n=budget.exhaustive(len(row.alphabet)),
        random_n=[32],
        samples=8,
        seed=1,
    )


def recheck_witness(out: Path, cell: dict[str, Any]) -> bool:
    """Run an impossible cell's stored model on its stored witness pair again: the same
    answer on both, and exactly one in the language."""
    from hardsoft.model.io import load_model

    ev = cell["evidence"]
    model = load_model(out / ev["artefacts"]["model"])
    record = json.loads((out / ev["artefacts"]["witness"]).read_text())
    with torch.no_grad():
        acc = model(model.encode([record["x"], record["x_prime"]])).accept.cpu().numpy()
    lang = get_language(record["language"]) if _registered(record["language"]) else None
    if lang is None:
        return False
    members = (lang.member(record["x"]), lang.member(record["x_prime"]))
    return bool(acc[0] == acc[1]) and members[0] != members[1]


__all__ = [
    "Budget",
    "Evidence",
    "class_violations",
    "decision_record",
    "produce_compile",
    "produce_decision",
    "produce_program",
    "produce_restrict",
    "recheck_constructed",
    "recheck_witness",
    "row_language",
]


# ------------------------------------------------------------------ learned
LEARN_FILE = "metrics.json"


def learn_plan(budget: Budget) -> dict[str, Any]:
    """Training and test lengths of the learned cells: Butoi et al. (2025) train on 0–40 and
    validate on 0–80 (full mode; our models need n >= 1); quick mode trains tiny models on
    1–8. Tests at the training lengths and at 2×, 10× and 100× the longest."""
    if budget.quick:
        return {"max_n": 8, "steps": 150, "d_model": 16, "layers": 1, "seeds": 3, "samples": 32}
    return {"max_n": 40, "steps": 1000, "d_model": 32, "layers": 2, "seeds": 5, "samples": 16}


def produce_learn(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """Train recognizers (Butoi et al. 2025 objective, :mod:`hardsoft.learn.recognize`) on
    short strings over several seeds; accuracy at the training lengths and at 2×, 10×, 100×
    the longest, mean ± standard deviation over seeds (with the range)."""
    from hardsoft.learn.models import ArchConfig
    from hardsoft.learn.recognize import accuracy_by_length, mean_accuracy
    from hardsoft.learn.train import TrainConfig, load_run, train

    lang = get_language(row.language)
    if lang.kind != "language":
        raise HardsoftError(f"{row.language} is a per-position task, not a language")
    plan = learn_plan(budget)
    arch = "lstm" if col.id == "trained-lstm" else "transformer"
    L = plan["max_n"]
    lengths = [*range(1, L + 1), 2 * L, 10 * L, 100 * L]
    per_seed: list[dict[str, Any]] = []
    cmds: list[str] = []
    artefacts: dict[str, str] = {}
    for seed in range(plan["seeds"]):
        run = folder / f"seed-{seed}"
        cfg = TrainConfig(
            language=row.language,
            objective="recognizer",
            arch=ArchConfig(arch=arch, layers=plan["layers"], heads=2, d_model=plan["d_model"]),
            min_n=1,
            max_n=L,
            val_max_n=2 * L,
            steps=plan["steps"],
            seed=seed,
            checkpoint_every=plan["steps"],
        )
        train(cfg, run, resume=False, show_progress=False)
        _, model = load_run(run)
        rows = accuracy_by_length(model, lang, lengths, samples=plan["samples"])
        per_seed.append(
            {
                "seed": seed,
                "train": mean_accuracy(rows, 1, L),
                "2x": rows[-3].accuracy,
                "10x": rows[-2].accuracy,
                "100x": rows[-1].accuracy,
            }
        )
        weights = run / (MODEL_FILE if arch == "transformer" else "lstm.safetensors")
        artefacts[f"model (seed {seed})"] = rel(weights, out)
        runq = shlex.quote(rel(run, out))
        cmds.append(
            f"hardsoft train --language {row.language} --objective recognizer --arch {arch} "
            f"--layers {plan['layers']} --heads 2 --d-model {plan['d_model']} --min-n 1 "
            f"--max-n {L} --val-max-n {2 * L} --steps {plan['steps']} "
            f"--checkpoint-every {plan['steps']} --seed {seed} -o {runq} --json"
        )
        cmds.append(
            f"hardsoft evaluate {runq} --lengths {','.join(map(str, lengths))} "
            f"--samples {plan['samples']} --json"
        )
    summary_stats = {}
    for key in ("train", "2x", "10x", "100x"):
        vals = np.array([s[key] for s in per_seed], dtype=float)
        summary_stats[key] = {
            "mean": float(vals.mean()),
            "std": float(vals.std()),
            "min": float(vals.min()),
            "max": float(vals.max()),
        }
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "plan": plan,
        "arch": arch,
        "lengths": lengths,
        "per_seed": per_seed,
        "accuracy": summary_stats,
    }
    (folder / LEARN_FILE).write_text(json.dumps(record, indent=1) + "\n")
    artefacts["metrics"] = rel(folder / LEARN_FILE, out)
    shown = "; ".join(
        f"{k} ({n}) {v['mean']:.2f} ± {v['std']:.2f}"
        for (k, v), n in zip(summary_stats.items(), (f"1–{L}", 2 * L, 10 * L, 100 * L))
    )
    summary = f"{arch} recognizer, {plan['seeds']} seeds, accuracy at n: {shown}"
    return Evidence(
        Status.LEARNED,
        True,
        summary,
        artefacts,
        cmds,
        {"accuracy": summary_stats, "train_max_n": L, "seeds": plan["seeds"]},
    )


# ------------------------------------------------------------------ Lemma 5 sensitivity
SENSITIVITY_FILE = "sensitivity.json"
FLIP_FILE = "flip.json"
BOUNDED_FEATURES = ("1", "i/n", "(-1)^i")


def _flip_pair(lang: Language, n: int, rng: np.random.Generator) -> dict[str, Any] | None:
    """A word of length ``n`` and one single-symbol change that changes the answer at the last
    position (membership, or a task's target), found with the oracle (None if none found)."""
    for _ in range(20):
        words: list[str] = []
        if lang.kind == "language":
            if lang.has_nonmembers(n):  # near misses: one substitution from a member
                words += lang.sample_negative(n, 1, rng, hard=True)
            if lang.has_members(n):
                words += lang.sample_positive(n, 1, rng)
        words += lang.sample_uniform(n, 1, rng)
        for word in words:
            base = int(lang.prefix_reference(word)[-1])
            for p in rng.permutation(n)[:32]:
                for s in lang.alphabet:
                    if s == word[p]:
                        continue
                    other = word[:p] + s + word[p + 1 :]
                    if int(lang.prefix_reference(other)[-1]) != base:
                        return {
                            "x": word,
                            "x_prime": other,
                            "position": int(p) + 1,
                            "answers": [base, int(lang.prefix_reference(other)[-1])],
                        }
    return None


def produce_sensitivity(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """Lemma 5 (Hahn 2020 §6, corrected in the supplement) on a seeded random softmax model of
    the column (τ = 1, bounded position features, no layer norm): the largest change of the last
    activation under one symbol change, by length, its log-log slope and the corrected bound;
    with a single change that changes the row's answer at the longest length (so recognising
    the row needs an influence of at least twice the margin)."""
    from hardsoft.limits.sensitivity import measure_sensitivity
    from hardsoft.model import random_model
    from hardsoft.model.io import save_model

    lang = row_language(row)
    model = random_model(
        weighting="softmax",
        weight_scale=0.3,
        seed=0,
        alphabet=row.alphabet,
        position_features=BOUNDED_FEATURES,
        dtype=torch.float64,
    )
    if class_violations(model, col):
        raise HardsoftError(f"the random model leaves {col.id}: {class_violations(model, col)}")
    lengths = [16, 64, 256] if budget.quick else [16, 64, 256, 1024, 4096]
    rep = measure_sensitivity(model, lengths, samples=2, flips=8, seed=0)
    flip = _flip_pair(lang, lengths[-1], np.random.default_rng(0))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MODEL_FILE
    save_model(model, path)
    (folder / SENSITIVITY_FILE).write_text(json.dumps(rep.to_dict(), indent=1) + "\n")
    (folder / FLIP_FILE).write_text(json.dumps(flip, indent=1) + "\n")
    slope = rep.slope()
    influence = rep.series("last_max")
    bounds = rep.bound_series()
    decreasing = slope is not None and slope.ci[1] < 0
    ok = decreasing and not rep.violations and flip is not None
    mpath = shlex.quote(rel(path, out))
    cmds = [
        f"hardsoft random-model --weighting softmax --weight-scale 0.3 --alphabet "
        f"{shlex.quote(row.alphabet)} --features {shlex.quote(','.join(BOUNDED_FEATURES))} "
        f"--seed 0 -o {mpath}",
        f"hardsoft sensitivity {mpath} --lengths {','.join(map(str, lengths))} --samples 2 "
        "--flips 8 --json",
    ]
    shown_slope = "n/a" if slope is None else f"{slope.slope:.2f}"
    summary = (
        f"random softmax model (τ = 1, bounded features): largest change of the last activation "
        f"under one symbol change {influence[0]:.3g} at n = {lengths[0]} → "
        f"{influence[-1]:.3g} at n = {lengths[-1]} (slope {shown_slope}; corrected Lemma 5 bound "
        f"{bounds[-1]:.3g}; {len(rep.violations)} violations)"
    )
    if flip is not None:
        summary += (
            f"; at n = {lengths[-1]} one change (position {flip['position']}) changes the "
            f"answer of {row.language}: a fixed margin needs a change of the readout bounded "
            "away from 0 there, against the measured O(1/n)"
        )
    else:
        summary += "; NO single change that changes the answer was found"
    return Evidence(
        Status.IMPOSSIBLE if ok else None,
        ok,
        summary,
        {
            "model": rel(path, out),
            "sensitivity": rel(folder / SENSITIVITY_FILE, out),
            "flip": rel(folder / FLIP_FILE, out),
        },
        cmds,
        {
            "lengths": lengths,
            "max_influence": influence,
            "bound": bounds,
            "slope": None if slope is None else slope.slope,
            "slope_ci": None if slope is None else list(slope.ci),
            "violations": len(rep.violations),
        },
    )


def recheck_sensitivity(out: Path, cell: dict[str, Any]) -> bool:
    """Measure a Lemma 5 cell's stored model again (the same influences, under the bound) and
    check its stored flip with the oracle."""
    from hardsoft.limits.sensitivity import measure_sensitivity
    from hardsoft.model.io import load_model

    ev = cell["evidence"]
    model = load_model(out / ev["artefacts"]["model"])
    lengths = ev["numbers"]["lengths"]
    rep = measure_sensitivity(model, lengths, samples=2, flips=8, seed=0)
    same = np.allclose(rep.series("last_max"), ev["numbers"]["max_influence"], rtol=1e-9)
    flip = json.loads((out / ev["artefacts"]["flip"]).read_text())
    row = next(r for r in ROWS if r.id == cell["row"])
    lang = row_language(row)
    answers = [int(lang.prefix_reference(w)[-1]) for w in (flip["x"], flip["x_prime"])]
    return bool(same and not rep.violations and answers[0] != answers[1])


def recheck_impossible(out: Path, cell: dict[str, Any]) -> bool:
    """Re-run an impossible cell's stored evidence (a witness or a sensitivity measurement)."""
    arts = cell["evidence"]["artefacts"]
    return recheck_witness(out, cell) if "witness" in arts else recheck_sensitivity(out, cell)

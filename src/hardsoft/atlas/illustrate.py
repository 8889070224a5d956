"""Illustrations: a theorem shown at work on one concrete model. They sit beside a cell's
proof and are never counted as one (a witness defeats one model, not the class).

* :func:`restriction` — Hahn (2020) §5 on a seeded random unique-hard model of the column:
  the engine certifies that the restricted model's output depends on a few positions, and a
  pair x, x′ that differs outside them, exactly one in the language, gets the same answer.
  The model must *do something*: its accept/reject answer must vary over the restriction's
  completions (the engine's ``output_constant`` is false; two completions it answers
  differently are stored). A restricted model whose answer is constant would be "fooled" by
  any language — even when its output row still varies — so such models are skipped, and
  the search over a fixed list of model shapes and seeds says so when it finds none within
  its budget.
* :func:`sensitivity` — Lemma 5 (Hahn 2020 §6) measured on a seeded random softmax model of
  the column: the largest change of the last activation under one symbol change, by length,
  and its log-log slope (≈ −1). The measurement is about the model, not the language, so
  every row over the same alphabet shows the same numbers.
"""

from __future__ import annotations

import functools
import itertools
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hardsoft.atlas.evidence import MODEL_FILE, Budget, class_violations, rel, row_language
from hardsoft.atlas.table import Column, Row
from hardsoft.errors import HardsoftError
from hardsoft.languages import Language, get_language
from hardsoft.model.transformer import Transformer

WITNESS_FILE = "witness.json"
SENSITIVITY_FILE = "sensitivity.json"
ILLUSTRATION_DIR = "illustration"
BOUNDED_FEATURES = ("1", "i/n", "(-1)^i")
PE_FEATURES = ("1", "i/n", "(-1)^i", "[i=1]", "[i=n]")
SHAPES = ((2, 2), (3, 2), (4, 2), (1, 2))
"""(layers, heads) of the random models the restriction illustration tries, per seed (deeper
models keep a non-empty dependency set more often under DYCK's restriction)."""


def _random_hard(row: Row, col: Column, seed: int, shape: tuple[int, int], mask: str):
    """A seeded random rightmost-hard model of the column's class, and its command."""
    from hardsoft.model import random_model

    features = ("1",) if col.id == "uhat-strict" else PE_FEATURES
    layers, heads = shape
    model = random_model(
        weighting="rightmost",
        mask=mask,
        layers=layers,
        heads=heads,
        d_model=16,
        seed=seed,
        dtype=torch.float64,
        alphabet=row.alphabet,
        position_features=features,
    )
    cmd = (
        f"hardsoft random-model --weighting rightmost --mask {mask} --layers {layers} "
        f"--heads {heads} --d-model 16 --alphabet {shlex.quote(row.alphabet)} --features "
        f"{shlex.quote(','.join(features))} --seed {seed}"
    )
    return model, cmd


def _candidates(col: Column, budget: Budget):
    """(seed, shape, mask) in the order tried: every shape for seed 0, then seed 1, ...; at
    most ``budget.models`` of them."""
    masks = ("strict-future",) if col.id == "uhat-strict" else ("strict-future", "none")
    tried = itertools.product(range(budget.seeds), masks, SHAPES)
    for seed, mask, shape in itertools.islice(tried, budget.models):
        yield seed, shape, mask


def _majority_pair(result: Any, rng: np.random.Generator) -> Any:
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


def answer_pair(result: Any, rng: np.random.Generator) -> tuple[str, str] | None:
    """Two completions of the restriction that the model answers differently (the accepted
    one first), read from the engine's certified acceptance table over the dependency set
    (the other free positions at random); None when the answer is constant."""
    analysis, rho = result.analysis, result.restriction
    if analysis.output_constant:
        return None
    table = analysis.accept_table
    words = []
    for wanted in (True, False):
        row = int(np.flatnonzero(table == wanted)[0])
        values: dict[int, str] = {}
        for p in reversed(analysis.output_deps):  # mixed radix, the last position lowest
            row, digit = divmod(row, len(rho.alphabet))
            values[int(p)] = rho.alphabet[digit]
        rest = rho.fix(values).random_completion(rng)
        words.append(rest)
    return words[0], words[1]


@dataclass
class Found:
    """A restriction illustration's model: its command, the engine's result, the verified
    witness pair, two completions it answers differently, its seed and how many were tried."""

    model: Transformer
    cmd: str
    result: Any
    witness: Any
    pair: tuple[str, str]
    seed: int
    tried: int


def _search(row: Row, col: Column, lang: Language, n: int, budget: Budget) -> Found | int:
    """The first candidate model whose answer varies under its restriction and that has a
    verified witness, or how many were tried when none does."""
    from hardsoft.limits.restrict import restrict
    from hardsoft.limits.witness import verify

    tried = 0
    for seed, shape, mask in _candidates(col, budget):
        model, cmd = _random_hard(row, col, seed, shape, mask)
        tried += 1
        target = row.language if lang.restriction_target else None
        result = restrict(model, n, target, seed=seed)
        pair = answer_pair(result, np.random.default_rng(seed))
        if pair is None:
            continue  # the same answer on every completion: fools every language
        witness = result.witness
        if lang.name == "majority":
            witness = verify(model, _majority_pair(result, np.random.default_rng(seed)), lang)
        if witness is not None and witness.verified:
            return Found(model, cmd, result, witness, pair, seed, tried)
    return tried


def restriction(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> dict:
    """A restriction witness on a random model of the column whose answer varies under the
    restriction (see the module docstring); the illustration record (``found`` False: none
    within the budget)."""
    from hardsoft.model.io import save_model

    lang = row_language(row)
    n = row.restriction_n  # an illustration needs no long input; full mode tries more models
    found = _search(row, col, lang, n, budget)
    if isinstance(found, int):
        return {
            "kind": "illustration",
            "found": False,
            "summary": f"none of the {found} random models of the class tried (seeds from 0, "
            f"shapes (layers, heads) {list(SHAPES)}) has an accept/reject answer that varies "
            f"under its restriction at n = {n} together with a verified witness; none is shown "
            "(a model whose answer is constant under the restriction would be fooled by any "
            "language)",
            "numbers": {"n": n, "models_tried": found},
        }
    sub = folder / ILLUSTRATION_DIR
    sub.mkdir(parents=True, exist_ok=True)
    path = sub / MODEL_FILE
    save_model(found.model, path)
    record = _witness_record(row, found, rel(path, out))
    (sub / WITNESS_FILE).write_text(json.dumps(record, indent=1) + "\n")
    deps, witness = record["dependency_set"], found.witness
    summary = (
        f"Hahn's restriction on one random rightmost-hard model of the class (model "
        f"{found.tried} tried, seed {found.seed}) at n = {n}: the output depends on "
        f"{len(deps)} positions ({_positions(deps)}) and the answer varies with them (two "
        f"completions, one accepted, one rejected); x and x' differ at position "
        f"{witness.changed[0] + 1}, outside them, exactly one is in {row.language}, and the "
        "model answers both the same"
    )
    return {
        "kind": "illustration",
        "found": True,
        "summary": summary,
        "artefacts": {"model": rel(path, out), "witness": rel(sub / WITNESS_FILE, out)},
        "commands": _restriction_commands(row, lang, found, shlex.quote(rel(path, out))),
        "numbers": {
            "n": n,
            "models_tried": found.tried,
            "seed": found.seed,
            "dependency_set": deps,
        },
    }


def _witness_record(row: Row, found: Found, model_path: str) -> dict[str, Any]:
    """``witness.json``: the pair, the restriction, its dependency set and the two completions
    answered differently."""
    w, result = found.witness, found.result
    return {
        "language": row.language,
        "n": result.restriction.n,
        "seed": found.seed,
        "model": model_path,
        "x": w.x,
        "x_prime": w.x_prime,
        "changed": [p + 1 for p in w.changed],
        "model_accepts": [w.accept, w.accept_prime],
        "in_language": list(w.in_language or ()),
        "dependency_set": [p + 1 for p in result.dependency_set],
        "restriction": str(result.restriction),
        "output_constant": result.analysis.output_constant,
        "answer_varies": {"accepted": found.pair[0], "rejected": found.pair[1]},
        "free_fraction": result.restriction.free_fraction,
        "verified": w.verified,
    }


def _restriction_commands(row: Row, lang: Language, found: Found, mpath: str) -> list[str]:
    """The commands that rebuild the model and rerun the restriction (with ``--language`` for
    a restriction target only), the model on the words and the oracle on the pair."""
    target = f" --language {row.language}" if lang.restriction_target else ""
    n = found.result.restriction.n
    words = [str(found.witness.x), str(found.witness.x_prime), *found.pair]
    return [
        f"{found.cmd} -o {mpath}",
        f"hardsoft restrict {mpath} --n {n}{target} --seed {found.seed} --json",
        f"hardsoft run {mpath} " + " ".join(f"-i {shlex.quote(w)}" for w in words),
        *(f"hardsoft language member {row.language} --input {shlex.quote(w)}" for w in words[:2]),
    ]


def _positions(ps: list[int]) -> str:
    return ", ".join(map(str, ps[:8])) + (", ..." if len(ps) > 8 else "")


@functools.lru_cache(maxsize=16)
def _measured(alphabet: str, layer_norm: bool, lengths: tuple[int, ...]) -> tuple[Any, Any]:
    """The random model of :func:`sensitivity` and its measurement (the same for every row
    over ``alphabet``: measured once per build)."""
    from hardsoft.limits.sensitivity import measure_sensitivity
    from hardsoft.model import random_model

    model = random_model(
        weighting="softmax",
        weight_scale=0.3,
        seed=0,
        alphabet=alphabet,
        position_features=BOUNDED_FEATURES,
        layer_norm="pre" if layer_norm else "none",
        dtype=torch.float64,
    )
    return model, measure_sensitivity(model, list(lengths), samples=2, flips=8, seed=0)


def sensitivity(
    row: Row, col: Column, budget: Budget, folder: Path, out: Path, layer_norm: bool
) -> dict:
    """Lemma 5 measured on a seeded random softmax model of the column (τ = 1, bounded
    features; with ``layer_norm`` pre-layer norm with hardsoft's default ε = 1e-5)."""
    from hardsoft.model.io import save_model

    lengths = [16, 64, 256] if budget.quick else [16, 64, 256, 1024, 4096]
    model, rep = _measured(row.alphabet, layer_norm, tuple(lengths))
    if class_violations(model, col):
        raise HardsoftError(f"the random model leaves {col.id}: {class_violations(model, col)}")
    sub = folder / ILLUSTRATION_DIR
    sub.mkdir(parents=True, exist_ok=True)
    path = sub / MODEL_FILE
    save_model(model, path)
    (sub / SENSITIVITY_FILE).write_text(json.dumps(rep.to_dict(), indent=1) + "\n")
    slope = rep.slope()
    influence = rep.series("last_max")
    bounds = rep.bound_series()
    mpath = shlex.quote(rel(path, out))
    ln = " --layer-norm pre" if layer_norm else ""
    cmds = [
        f"hardsoft random-model --weighting softmax --weight-scale 0.3 --alphabet "
        f"{shlex.quote(row.alphabet)} --features {shlex.quote(','.join(BOUNDED_FEATURES))}"
        f"{ln} --seed 0 -o {mpath}",
        f"hardsoft sensitivity {mpath} --lengths {','.join(map(str, lengths))} --samples 2 "
        "--flips 8 --json",
    ]
    shown = "n/a" if slope is None else f"{slope.slope:.2f}"
    bound = (
        f"; corrected Lemma 5 bound {bounds[-1]:.3g}, {len(rep.violations)} violations"
        if bounds[-1] is not None
        else "; Lemma 5's bound is not computed with layer norm"
    )
    what = "with pre-layer norm (ε = 1e-5)" if layer_norm else "no layer norm"
    summary = (
        f"Lemma 5 on one random softmax model (τ = 1, bounded features, {what}; the same model "
        f"for every row over {row.alphabet!r}): the largest change of the last activation under "
        f"one symbol change falls from {influence[0]:.3g} at n = {lengths[0]} to "
        f"{influence[-1]:.3g} at n = {lengths[-1]} (log-log slope {shown}{bound})"
    )
    return {
        "kind": "illustration",
        "found": True,
        "summary": summary,
        "artefacts": {"model": rel(path, out), "sensitivity": rel(sub / SENSITIVITY_FILE, out)},
        "commands": cmds,
        "numbers": {
            "lengths": lengths,
            "max_influence": influence,
            "bound": bounds,
            "slope": None if slope is None else slope.slope,
            "slope_ci": None if slope is None else list(slope.ci),
            "violations": len(rep.violations),
            "layer_norm": layer_norm,
        },
    }


# ------------------------------------------------------------------ re-checks (tests)
def recheck_witness(out: Path, illustration: dict[str, Any]) -> bool:
    """Run a restriction illustration's stored model again, on the answer: its stored pair gets
    the same answer with exactly one word in the language, and the two stored completions of
    the restriction get different answers (so the restricted model is not constant). Every
    word must be a completion of the stored restriction."""
    from hardsoft.limits.restriction import Restriction
    from hardsoft.model.io import load_model

    arts = illustration["artefacts"]
    model: Transformer = load_model(out / arts["model"])
    record = json.loads((out / arts["witness"]).read_text())
    varies = record.get("answer_varies") or {}
    words = [record["x"], record["x_prime"], varies.get("accepted"), varies.get("rejected")]
    if None in words:
        return False  # an illustration without two differently answered completions
    rho = Restriction.from_string(record["restriction"], tuple(model.spec.alphabet))
    with torch.no_grad():
        acc = model(model.encode(words)).accept.cpu().numpy()
    lang = get_language(record["language"])
    members = (lang.member(record["x"]), lang.member(record["x_prime"]))
    return (
        bool(acc[0] == acc[1])
        and members[0] != members[1]
        and bool(acc[2])
        and not bool(acc[3])
        and all(rho.agrees(w) for w in words)
    )


def recheck_sensitivity(out: Path, illustration: dict[str, Any]) -> bool:
    """Measure a Lemma 5 illustration's stored model again: the same influences, decaying."""
    from hardsoft.limits.sensitivity import measure_sensitivity
    from hardsoft.model.io import load_model

    num = illustration["numbers"]
    model = load_model(out / illustration["artefacts"]["model"])
    rep = measure_sensitivity(model, num["lengths"], samples=2, flips=8, seed=0)
    same = np.allclose(rep.series("last_max"), num["max_influence"], rtol=1e-9)
    return bool(same and not rep.violations)

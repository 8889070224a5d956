"""Constructed cells: a model of the column's class is built here and checked exactly against
the row's oracle at every position (:func:`hardsoft.check.check_language`) — a proof for the
lengths checked, the cited theorem saying for every n.

Producers, one per ``Claim.how``: ``compile`` (the row's formula for the column's target),
``harden`` (the soft-temperature model read as average-hard attention: τ → 0, every head
average-hard), ``program-logic`` / ``program-tieless`` (a §6 program on that route) and
``crafted-anbn`` (:mod:`hardsoft.atlas.crafted`). Each model's theorem label comes from its
certificate through :func:`hardsoft.compile.results.certificate_label` — the table every
compiled model's certificate is written from — so a cell and its model cannot disagree.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

from hardsoft.atlas.evidence import (
    CHECK_FILE,
    MODEL_FILE,
    Budget,
    Evidence,
    class_violations,
    margin_violations,
    registered,
    rel,
    row_language,
)
from hardsoft.atlas.table import Column, EvidenceKind, Row, Status
from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import Const, First, Not, Past
from hardsoft.model.io import atomic_write
from hardsoft.model.transformer import Transformer

TIELESS_LABELS = {
    "dyck": (
        "own construction (uniform–tieless average-hard program: the same-depth test splits "
        "d + 1 = s·q + r with s = ⌈√n⌉; cf. Yang et al. (arXiv:2412.09925v1) Appendix E)"
    ),
    "induction-head": "own construction (uniform–tieless average-hard program; cf. Yang et al. "
    "(arXiv:2412.09925v1) §6)",
    "khop": "own construction (uniform–tieless average-hard program; cf. Yang et al. "
    "(arXiv:2412.09925v1) §6)",
    "flipflop": "own construction (uniform–tieless average-hard program; cf. Liu et al. (2023) "
    "as cited in Yang et al. (arXiv:2412.09925v1) §6)",
}
"""The theorem labels of the §6 programs' average-hard models (their route writes no
certificate theorem: the programs are ours, after the cited constructions)."""


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


def _check(
    model: Transformer, row: Row, budget: Budget, folder: Path, out: Path
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
        model, row_language(row), exhaustive_max_n=k, random_n=budget.random_n,
        samples=budget.samples,
    )  # fmt: skip
    keys = (
        "mismatches",
        "checked_strings",
        "checked_positions",
        "max_n",
        "exhaustive_lengths",
        "sampled_lengths",
        "max_abs_error",
        "first_mismatch",
    )
    slim = {key: rep[key] for key in keys}
    text = json.dumps(slim, indent=1) + "\n"
    atomic_write(folder / CHECK_FILE, lambda tmp: Path(tmp).write_text(text), CHECK_FILE)
    against = (
        f"--language {row.language}"
        if registered(row.language)
        else f"--formula {shlex.quote(row.formula or '')}"
    )
    cmd = (
        f"hardsoft check {shlex.quote(rel(path, out))} {against} --exhaustive-max-n {k} "
        f"--random-n {','.join(map(str, budget.random_n))} --samples {budget.samples}"
    )
    return slim, [cmd]


def certificate_numbers(model: Transformer) -> dict[str, Any]:
    """What the model's certificate proves, as the cell shows it: the proven error bound
    (the largest per-head attention error of a compiled model, or Theorem 26's output error ε
    of a tieless program) against the rounding margin, and the largest n at which float64 /
    float32 arithmetic still meets it (None: the certificate states no limit)."""
    cert = model.meta.get("certificate") or {}
    limits = cert.get("float_limits") or {}
    hardened = "hardened" in model.meta  # the certificate is its softmax source's
    return {
        "certificate": bool(cert),
        "certificate_of": "the soft-temperature model it hardens" if hardened else "",
        "error_bound": cert.get("max_error_bound", cert.get("eps")),
        "rounding_margin": cert.get("rounding_margin", 0.5 if "eps" in cert else None),
        "exact_by_construction": bool(cert.get("exact_by_construction")),
        "float64_exact_to_n": limits.get("float64"),
        "float32_exact_to_n": limits.get("float32"),
        "binding_heads": limits.get("binding_heads") or [],
        "float_limits_derived": "float_limits" in cert,
        "margin": ((cert.get("layer_norm") or {}).get("margin") or {}).get("output"),
    }


def certificate_text(num: dict[str, Any]) -> str:
    """One line: the certificate's bound and its float limits (see
    :func:`certificate_numbers`)."""
    if not num["certificate"]:
        return "no certificate (the exact check is the proof); float limits not derived"
    whose = f" of {num['certificate_of']}" if num["certificate_of"] else ""
    if num["exact_by_construction"]:
        bound = f"certificate{whose}: hard attention, exact by construction"
    elif num["error_bound"] is None:  # a layer-norm construction states its margin instead
        bound = f"certificate{whose}: {num['margin'] or 'no error bound stated'}"
    else:
        bound = (
            f"certificate{whose}: error ≤ {num['error_bound']:.3g} at every n (rounding margin "
            f"{num['rounding_margin']:.3g})"
        )
    if not num["float_limits_derived"]:
        return f"{bound}; float limits not derived for this route"
    f64, f32 = num["float64_exact_to_n"], num["float32_exact_to_n"]
    if f64 is None:
        return f"{bound}; no float limit (no head's bound depends on float rounding)"
    binding = ", ".join(num["binding_heads"][:3])
    return (
        f"{bound}; float limits: exact to n ≤ {f64:,} in float64, n ≤ {f32:,} in float32 "
        f"(binding: {binding})"
    )


def constructed(
    model: Transformer,
    row: Row,
    col: Column,
    budget: Budget,
    folder: Path,
    out: Path,
    make_cmd: str,
    extra: dict[str, Any],
) -> Evidence:
    """Check ``model`` exactly and against the column's class; the evidence (a proof when
    exact and in the class). ``extra["theorem"]`` is the model's label."""
    rep, check_cmds = _check(model, row, budget, folder, out)
    bad = class_violations(model, col)
    if col.fixed_margin:  # a margin that does not shrink with n: the certificate's
        bad += margin_violations(model)
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
        "masks": sorted({str(h.spec.mask) for b in model.blocks for h in b.heads}),
        "position_features": [f for f in spec.position_features if f != "1"],
        "outside_class": bad,
        **certificate_numbers(model),
        **extra,
    }
    summary = (
        f"{'exact' if exact else 'WRONG'} at every position: {rep['checked_strings']} strings, "
        f"all up to n = {numbers['exhaustive_to_n']}, random to n = {rep['max_n']}; "
        f"{numbers['layers']} layers, {numbers['heads']} heads "
        f"({', '.join(numbers['weightings'])}), width {spec.d_model}"
    )
    summary += "; " + certificate_text(numbers)
    if bad:
        summary += "; outside the column's class: " + "; ".join(bad)
    ok = exact and not bad
    return Evidence(
        Status.CONSTRUCTED if ok else None,
        EvidenceKind.PROOF,
        ok,
        summary,
        {"model": rel(folder / MODEL_FILE, out), "check": rel(folder / CHECK_FILE, out)},
        [make_cmd, *check_cmds],
        numbers,
    )


def _compiled(row: Row, target: str) -> Transformer:
    from hardsoft.compile import compile_formula
    from hardsoft.logic import parse

    if row.formula is None:
        raise HardsoftError(f"row {row.id} has no formula")
    return compile_formula(
        parse(row.formula, alphabet=row.alphabet), row.alphabet, target, False, n=1000
    )


def produce_compile(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """Compile the row's formula for the column's target and check it exactly."""
    from hardsoft.compile.results import certificate_label

    if not col.target:
        raise HardsoftError(f"column {col.id} has no compiler target")
    model = _compiled(row, col.target)
    cmd = (
        f"hardsoft compile {shlex.quote(row.formula or '')} --alphabet "
        f"{shlex.quote(row.alphabet)} --target {col.target} -o "
        f"{shlex.quote(rel(folder / MODEL_FILE, out))}"
    )
    cert = model.meta["certificate"]
    extra = {
        "formula": row.formula,
        "target": col.target,
        "tau": sorted({t["expression"] for t in cert.get("tau") or []}),
        "theorem": certificate_label(cert),
    }
    return constructed(model, row, col, budget, folder, out, cmd, extra)


def produce_harden(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """The row's soft-temperature model (Yang et al. (arXiv:2412.09925v1) §4 (a)) with every head
    made average-hard (τ → 0): an average-hard model, checked exactly like the others."""
    from hardsoft.compile.results import certificate_label
    from hardsoft.convert.harden import harden

    soft = _compiled(row, "soft-temperature")
    model = harden(soft, "average")
    label = certificate_label(soft.meta["certificate"])
    soft_path = shlex.quote(rel(folder / "soft.safetensors", out))
    path = shlex.quote(rel(folder / MODEL_FILE, out))
    cmd = (
        f"hardsoft compile {shlex.quote(row.formula or '')} --alphabet "
        f"{shlex.quote(row.alphabet)} --target soft-temperature -o {soft_path} && hardsoft "
        f"harden {soft_path} --weighting average -o {path}"
    )
    extra = {
        "formula": row.formula,
        "target": "soft-temperature, hardened to average-hard attention",
        "theorem": "own construction (every head of the soft-temperature model made "
        f"average-hard; the soft-temperature model's label: {label})",
    }
    return constructed(model, row, col, budget, folder, out, cmd, extra)


def produce_program(
    row: Row, col: Column, route: str, budget: Budget, folder: Path, out: Path
) -> Evidence:
    """Build the row's §6 program on ``route`` for the column and check it exactly. On the
    unique-hard, no-position-feature column the logic route's formulas are compiled with
    ``first`` written as ``!P true``."""
    from hardsoft.compile import compile_formula
    from hardsoft.compile.results import certificate_label
    from hardsoft.logic.syntax import to_text
    from hardsoft.programs.ahat.routes import build

    if row.program is None:
        raise HardsoftError(f"row {row.id} has no program")
    name, k = row.program
    tieless = route == "tieless"
    target = "average-hard" if tieless and col.target == "hard" else col.target
    built = build(name, k, target, route=route)
    model = built.model
    path = shlex.quote(rel(folder / MODEL_FILE, out))
    kopt = f" --k {k}" if k is not None else ""
    cmd = f"hardsoft program {name}{kopt} --route {route} --target {target} -o {path}"
    theorem = TIELESS_LABELS[name] if tieless else (built.certificate or {})["theorem"]
    if tieless and target == "soft-temperature":  # Theorem 26 applied to our program
        theorem = f"{(built.certificate or {})['theorem']}, applied to: {theorem}"
    extra: dict[str, Any] = {"program": name, "route": route, "target": target}
    if col.id == "uhat-strict" and built.formulas:
        outputs = {nm: _no_first(f) for nm, f in built.formulas.items()}
        # causal, as the logic route compiles them: the label is Cor. 18 in every column
        model = compile_formula(outputs, row.alphabet, "hard", True, n=1000)
        theorem = certificate_label(model.meta["certificate"])
        texts = [f"--output {shlex.quote(nm + '=' + to_text(f))}" for nm, f in outputs.items()]
        script = folder / "compile.sh"
        folder.mkdir(parents=True, exist_ok=True)
        script.write_text(
            "#!/bin/sh\n# the logic route's formulas with first written as !P true\n"
            f"hardsoft compile {' '.join(texts)} --alphabet {shlex.quote(row.alphabet)} "
            f"--target hard --causal -o {path}\n"
        )
        cmd = f"sh {shlex.quote(rel(script, out))}"
        extra["note"] = "the logic route's formulas with first written as !P true"
    extra["theorem"] = theorem
    ev = constructed(model, row, col, budget, folder, out, cmd, extra)
    if tieless and target == "soft-temperature":
        _theorem26(ev, model)
    return ev


def _theorem26(ev: Evidence, model: Transformer) -> None:
    """Add Theorem 26's hypothesis check (:func:`hardsoft.atlas.checks.check_theorem26`) to a
    tieless program's softmax cell: the cell agrees only if it passed."""
    from hardsoft.atlas.checks import check_theorem26

    check = check_theorem26(model.meta)
    ev.check = check.to_json()
    ev.summary += f"; {check.summary}"
    if not check.passed:
        ev.agrees, ev.status = False, None


def produce_crafted_anbn(
    row: Row, col: Column, budget: Budget, folder: Path, out: Path
) -> Evidence:
    """aⁿbⁿ by unique-hard attention with bounded position features
    (:func:`hardsoft.atlas.crafted.anbn_unique_hard`), checked exactly at every position."""
    from hardsoft.atlas.crafted import anbn_unique_hard

    model = anbn_unique_hard()
    extra = {
        "theorem": "own construction (two unique-hard layers; position i attends to i/2 and "
        "i/2 + 1 by the score (k/n)(i/n − k/n); after Hahn (2020) §5, Discussion)",
        "construction": "hardsoft.atlas.crafted.anbn_unique_hard",
    }
    mode = "quick" if budget.quick else "full"
    cmd = (
        f"hardsoft atlas --{mode} --only {row.id},{col.id} --force --out .  # writes the "
        "model (built in Python; run in the atlas folder)"
    )
    return constructed(model, row, col, budget, folder, out, cmd, extra)


def recheck_constructed(out: Path, cell: dict[str, Any]) -> dict[str, Any]:
    """Load a constructed cell's stored model and check it again, exactly as stored."""
    from hardsoft.atlas.table import row as row_by_id
    from hardsoft.check import check_language
    from hardsoft.model.io import load_model

    ev = cell["evidence"]
    model = load_model(out / ev["artefacts"]["model"])
    r = row_by_id(cell["row"])
    return check_language(
        model,
        row_language(r),
        exhaustive_max_n=Budget(quick=True).exhaustive(len(r.alphabet)),
        random_n=[32],
        samples=8,
        seed=1,
    )

"""The layer-norm columns: ``soft-ln`` built (layer norm with ε = 0), and what a fixed ε > 0
does to those models (``soft-ln-eps``).

* :func:`produce_crasp_ln` — the row's counting definition (``Row.layernorm``, else its K_t[#]
  definition ``Row.counting``) compiled by the ``soft-ln`` target (own construction after Yang
  & Chiang (COLM 2024), :mod:`hardsoft.compile.layernorm`), checked exactly at every position;
* :func:`produce_parity_ln` — PARITY by Chiang & Cholak (2022)'s construction
  (:mod:`hardsoft.compile.parity_ln`), an unmasked encoder checked at the last position of
  every word (its declared readout);
* :func:`eps_illustration` — beside a ``soft-ln-eps`` cell: the row's soft-ln model run with
  hardsoft's default ε = 1e-5, its certificate's numbers (from which n the margin is below ¼,
  up to which n every comparison is proven right) and the margin measured at the last
  position, per row.

Both producers' models must also have what the class's "fixed margin" means: the model's
certificate states an output margin of ½ at every n
(:func:`hardsoft.atlas.evidence.margin_violations`, checked for every constructed cell of a
fixed-margin column).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np

from hardsoft.atlas.construct import constructed
from hardsoft.atlas.evidence import MODEL_FILE, Budget, Evidence, rel, row_language
from hardsoft.atlas.table import Column, Row
from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer

EPS = 1e-5
"""The fixed ε the soft-ln-eps column shows (hardsoft's default ``ln_eps``)."""
EPS_FILE = "eps.json"
ILLUSTRATION_DIR = "illustration"


def ln_formula(row: Row) -> str | None:
    """The formula the soft-ln column compiles for ``row`` (None: it has none)."""
    return row.layernorm or row.counting


def _ln_model(row: Row) -> tuple[Transformer, str]:
    """The row's soft-ln model and the command that writes it (to ``MODEL``)."""
    if row.id == "parity":
        from hardsoft.compile.parity_ln import parity_layernorm

        return parity_layernorm(), "hardsoft program parity --target soft-ln -o MODEL"
    formula = ln_formula(row)
    if formula is None:
        raise HardsoftError(f"row {row.id} has no counting definition for the soft-ln column")
    from hardsoft.compile import compile_formula

    model = compile_formula(formula, row.alphabet, target="soft-ln")
    cmd = (
        f"hardsoft compile {shlex.quote(formula)} --alphabet {shlex.quote(row.alphabet)} "
        "--target soft-ln -o MODEL"
    )
    return model, cmd


def _certified(model: Transformer) -> dict[str, Any]:
    """What a cell shows from the certificate: the margin, the float limits, ε = 1e-5."""
    cert = model.meta["certificate"]
    ln = cert["layer_norm"]
    at = next(r for r in ln["eps_effect"]["at"] if r["eps"] == EPS)
    return {
        "theorem": cert["theorem"],
        "margin": "1/2 at every n (outputs exactly 0/1 after layer norm with ε = 0)",
        "pre_norm_min_at_1000": ln["margin"]["values"]["1000"]["pre_norm_min"],
        "float_limits": {k: cert["float_limits"][k] for k in ("float64", "float32")},
        "eps_1e-5": at,
    }


def _produce(model: Transformer, cmd: str, row: Row, col: Column, budget: Budget,
             folder: Path, out: Path, extra: dict[str, Any]) -> Evidence:  # fmt: skip
    """Check the model (:func:`constructed`: exact, in the class, with the certified fixed
    margin) and add the certificate's numbers to the evidence."""
    numbers = _certified(model)
    path = shlex.quote(rel(folder / MODEL_FILE, out))
    ev = constructed(model, row, col, budget, folder, out, cmd.replace("MODEL", path),
                     {**extra, **numbers})  # fmt: skip
    if not ev.agrees:
        return ev
    fl = numbers["float_limits"]
    ev.summary += (
        f"; margin 1/2 at every n (certificate); proven exact to n = {fl['float64']:,} in "
        f"float64, {fl['float32']:,} in float32"
    )
    return ev


def produce_crasp_ln(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """The row's counting definition compiled for soft-ln and checked exactly."""
    model, cmd = _ln_model(row)
    extra = {"formula": ln_formula(row), "target": "soft-ln"}
    return _produce(model, cmd, row, col, budget, folder, out, extra)


def produce_parity_ln(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> Evidence:
    """PARITY by Chiang & Cholak's construction, checked at the last position of every word."""
    model, cmd = _ln_model(row)
    extra = {"construction": "hardsoft.compile.parity_ln", "positions": "last"}
    ev = _produce(model, cmd, row, col, budget, folder, out, extra)
    ev.summary += (
        " (the last position of every word is checked: an unmasked encoder decides the whole "
        "word there, its declared readout)"
    )
    return ev


# ------------------------------------------------------------------ soft-ln-eps
def with_eps(model: Transformer, eps: float) -> Transformer:
    """A copy of ``model`` whose spec (and every layer norm) has ``ln_eps = eps``."""
    copy = Transformer(dataclasses.replace(model.spec, ln_eps=eps), dtype=model.dtype)
    copy.load_state_dict(model.state_dict())
    copy.meta = dict(model.meta)
    return copy


def _measure(model: Transformer, row: Row, lengths: list[int], samples: int) -> list[dict]:
    """At each n: the smallest output margin at the last position and whether every checked
    position was right (half members, half near misses or random words)."""
    from hardsoft.model.readout import acceptance_of

    lang = row_language(row)
    rng = np.random.default_rng(0)
    last_only = acceptance_of(model).last_only
    rows = []
    for n in lengths:
        try:
            members, _ = lang.sample_balanced(n, samples, rng, allow_one_class=True)
        except HardsoftError:
            members = lang.sample_uniform(n, samples, rng)
        words = list(members) + list(lang.sample_uniform(n, samples, rng))
        outs = model.run_words(words)
        right = True
        for w, o in zip(words, outs):
            ref = np.asarray(lang.prefix_reference(w)) > 0
            got = o[:, 0] > 0.5
            right &= bool(got[-1] == ref[-1]) if last_only else bool(np.array_equal(got, ref))
        margin = float(min(abs(o[-1, 0] - 0.5) for o in outs))
        rows.append({"n": n, "margin": margin, "right": right})
    return rows


def eps_illustration(row: Row, col: Column, budget: Budget, folder: Path, out: Path) -> dict:
    """The row's soft-ln model with ε = 1e-5: the certificate's numbers and the margin
    measured at the last position (an illustration beside the impossibility proof)."""
    from hardsoft.atlas.evidence import class_violations
    from hardsoft.model.io import save_model

    base, cmd = _ln_model(row)
    model = with_eps(base, EPS)
    lengths = [16, 64, 256, 1024] if budget.quick else [16, 64, 256, 1024, 4096]
    samples = 4 if budget.quick else 16
    measured = _measure(model, row, lengths, samples)
    at = _certified(base)["eps_1e-5"]
    sub = folder / ILLUSTRATION_DIR
    sub.mkdir(parents=True, exist_ok=True)
    path = sub / MODEL_FILE
    save_model(model, path)
    record = {"eps": EPS, "certificate": at, "measured": measured}
    (sub / EPS_FILE).write_text(json.dumps(record, indent=1) + "\n")
    outside = class_violations(model, col)
    shown = ", ".join(f"{m['margin']:.3g} at n = {m['n']}" for m in measured)
    wrong = [m["n"] for m in measured if not m["right"]]
    summary = (
        f"this row's soft-ln model run with ε = {EPS:g} (certificate: {_margin_text(at)}; "
        f"{_exact_text(at['exact_up_to_n'])}): measured margin {shown}"
        + (f"; wrong answers at n = {', '.join(map(str, wrong))}" if wrong else "")
        + (f" (the model is outside this column's class: {'; '.join(outside)})" if outside else "")
    )
    return {
        "kind": "illustration",
        "found": True,
        "summary": summary,
        "artefacts": {"model": rel(path, out), "eps": rel(sub / EPS_FILE, out)},
        "commands": [cmd.replace("MODEL", shlex.quote(rel(folder / "soft-ln.safetensors", out)))],
        "numbers": {
            "eps": EPS,
            "lengths": lengths,
            "samples": samples,
            "measured": measured,
            "certificate": at,
        },
    }


def _margin_text(at: dict[str, Any]) -> str:
    lo, hi = at["margin_at_least_quarter_up_to_n"], at["margin_below_quarter_from_n"]
    if lo is None:
        return "margin ≥ 1/4 at every n"
    text = f"margin ≥ 1/4 up to n = {lo:,}"
    return text + (f", below 1/4 from n = {hi:,}" if hi is not None else "")


def _exact_text(n: int | None) -> str:
    if n is None:
        return "every comparison proven right at every n"
    return f"every comparison proven right up to n = {n:,}"


def recheck_eps(out: Path, illustration: dict[str, Any], row: Row) -> bool:
    """Measure a stored ε illustration's model again: the same margins."""
    from hardsoft.model.io import load_model

    num = illustration["numbers"]
    model = load_model(out / illustration["artefacts"]["model"])
    again = _measure(model, row, num["lengths"], num["samples"])
    return model.spec.ln_eps == num["eps"] and all(
        abs(a["margin"] - b["margin"]) < 1e-9 and a["right"] == b["right"]
        for a, b in zip(again, num["measured"])
    )

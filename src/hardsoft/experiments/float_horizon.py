"""The float horizon: the first input length at which a compiled model, exact at every length in
exact arithmetic, gets a position wrong in float32 / float64, beside the limit its certificate
derives (``float_limits``, docs/compiler.md "Rounding").

For each model and word family, the length n is doubled from a start below the derived limit
until some position is wrong (or ``n_max``), then bisected between the last exact and the first
failing n (to a relative width of 1/64; 1/8 from n = 2^20 on, where a run takes minutes).
Every position of every word is checked against the logic evaluator (formulas) or the language
oracle (the DYCK programs). Words: uniform random,
alternating ``1010…`` (counts balanced at every even position: the threshold of MAJORITY), and
a long run of one symbol ``11…1`` (the largest counts a lookup reads); for the DYCK programs a
random balanced string, ``()()…`` and a depth-n/2 string. Quick mode: float32 only. Full mode
adds float64 for compiled PARITY, run as a stream (:mod:`hardsoft.stream`) with prefix-count
references computed chunk by chunk, from twice its derived limit up to 2^26 (about 25 minutes
on an idle core). The causal formulas run as streams in float32 too.

Failures need not be monotone in n; the bisection reports the pair (largest exact n seen, first
failing n) it ended on, which brackets *a* first failure, not necessarily the smallest one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from hardsoft.check import formula_reference  # noqa: E402
from hardsoft.experiments import Context, Result, Table, register  # noqa: E402
from hardsoft.experiments.long_inputs import word_ids  # noqa: E402
from hardsoft.logic import parse  # noqa: E402
from hardsoft.model import Transformer  # noqa: E402

FORMULAS = {
    "PARITY (MOD)": ("MOD(2,1)(#<['1'])", "01"),
    "PARITY (counting)": ("!E(#<[Y '1'] = #>['1'])", "01"),
    "MAJORITY": ("#<['1'] > #<['0']", "01"),
    "lookup MOD(3,1)(#<['1'])": ("MOD(3,1)(#<['1'])", "01"),
}
PREFIX_RULES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "PARITY (MOD)": lambda ones, i: ones % 2 == 1,
    "MAJORITY": lambda ones, i: ones > i - ones,
    "lookup MOD(3,1)(#<['1'])": lambda ones, i: ones % 3 == 1,
}
"""The causal formulas' values from the prefix count of 1s and the 1-based position: these
run as streams, checked chunk by chunk (an independent reference, like the logic evaluator
it agrees with: tests/test_float_horizon.py)."""
PROGRAMS = {"DYCK-1 program": ("dyck", 1, "dyck1"), "DYCK-2 program": ("dyck", 2, "dyck2")}
WORDS = ("random", "alternating", "run")
CHUNK = 1 << 16
REL = 1 / 64
"""Bisection stops at this relative width of the bracket ..."""
LONG, REL_LONG = 1 << 20, 1 / 8
"""... or, from n = LONG on (minutes per run), at this one."""


@dataclass(frozen=True)
class Search:
    """The outcome of one search: the largest exact n seen, the first failing n found (None:
    exact up to ``largest_exact``), and how many lengths were run."""

    largest_exact: int | None
    first_failure: int | None
    runs: int


def first_failure(exact: Callable[[int], bool], start: int, n_max: int) -> Search:
    """Double n from ``start`` while ``exact(n)``; then bisect the bracket to ``REL``."""
    lo: int | None = None
    hi: int | None = None
    runs, n = 0, start
    while n <= n_max:
        runs += 1
        if exact(n):
            lo, n = n, n * 2
        else:
            hi = n
            break
    if hi is None:
        return Search(lo, None, runs)
    floor = lo if lo is not None else 0
    while hi - floor > max(1, int(hi * (REL if hi < LONG else REL_LONG))):
        mid = (floor + hi) // 2
        runs += 1
        if exact(mid):
            floor = lo = mid
        else:
            hi = mid
    return Search(lo, hi, runs)


# ---- words: token ids, chunk by chunk (the same word's prefix for every n) -----------------


def word_chunks(kind: str, n: int, seed: int, chunk: int = CHUNK) -> Iterator[np.ndarray]:
    """The first n symbols of the word ``kind`` over {0, 1}, in chunks of ``chunk``."""
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        if kind == "random":  # one generator per CHUNK block: prefixes agree across n
            k0, k1 = s // CHUNK, (e - 1) // CHUNK
            block = np.concatenate(
                [np.random.default_rng([seed, k]).integers(0, 2, CHUNK) for k in range(k0, k1 + 1)]
            )
            yield block[s - k0 * CHUNK : e - k0 * CHUNK]
        elif kind == "alternating":
            yield 1 - np.arange(s, e) % 2
        else:
            yield np.ones(e - s, dtype=np.int64)


def dyck_word(kind: str, n: int, k: int, seed: int) -> str:
    """A DYCK-k word of length n: random balanced, ``()()…`` or depth n/2."""
    from hardsoft.languages import get_language

    if kind == "random":
        if k == 1:
            return "".join(
                "()"[c] for c in word_ids(n, np.random.default_rng([seed, n]), balanced=True)[0]
            )
        return get_language("dyck2").sample_balanced(n, 1, np.random.default_rng([seed, n]))[0][0]
    if kind == "alternating":
        unit = "()[]" if k == 2 else "()"
        return (unit * (n // len(unit) + 1))[:n]
    return "(" * (n // 2) + ")" * (n - n // 2)


# ---- one length -----------------------------------------------------------------------------


def formula_exact(model: Transformer, name: str, kind: str, n: int, seed: int) -> bool:
    """Every position of the length-n word right (one forward pass)?"""
    formula, alphabet = FORMULAS[name]
    ids = np.concatenate(list(word_chunks(kind, n, seed)))[None]
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)(ids)[0]
    with torch.no_grad():
        out = model(torch.from_numpy(ids)).outputs[0, :, 0]
    return bool(np.array_equal(out.numpy() > 0.5, ref))


def program_exact(model: Transformer, k: int, language: str, kind: str, n: int, seed: int) -> bool:
    from hardsoft.languages import get_language

    word = dyck_word(kind, n, k, seed)
    ref = np.asarray(get_language(language).prefix_reference(word)).astype(bool)
    with torch.no_grad():
        out = model(model.encode([word])).outputs[0, :, 0]
    return bool(np.array_equal(out.numpy() > 0.5, ref))


def stream_exact(model: Transformer, name: str, kind: str, n: int, seed: int) -> bool:
    """A causal formula streamed over the length-n word, each chunk checked against its prefix
    rule as it goes (stops at the first wrong chunk): memory O(chunk) at any n."""
    from hardsoft.stream import Stream

    stream, ones, rule = Stream(model, n), 0, PREFIX_RULES[name]
    for ids in word_chunks(kind, n, seed):
        out = stream.feed(torch.from_numpy(ids))[:, 0].numpy() > 0.5
        counts = np.cumsum(ids) + ones
        ref = rule(counts, np.arange(stream.pos - len(ids) + 1, stream.pos + 1))
        ones = int(counts[-1])
        if not np.array_equal(out, ref):
            return False
    return True


def stream_check_row(n: int, seed: int) -> dict[str, Any]:
    """``hardsoft check --stream`` as a user runs it: compiled PARITY (MOD) in float64, a random
    word of length ``n`` written to a file, the model and the streaming evaluator of the formula
    (:class:`hardsoft.logic.streaming.StreamEvaluator`, independent of the model) compared at
    every position, chunk by chunk (:func:`hardsoft.stream.check_stream`)."""
    import tempfile
    from pathlib import Path

    from hardsoft.compile import compile_formula
    from hardsoft.stream import check_stream

    formula, alphabet = FORMULAS["PARITY (MOD)"]
    model = compile_formula(formula, alphabet, target="soft-temperature").to(torch.float64)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "word.txt"
        with path.open("w") as fh:
            for ids in word_chunks("random", n, seed):
                fh.write("".join(alphabet[int(i)] for i in ids))
        res = check_stream(model, parse(formula, alphabet=tuple(alphabet)), path)
    return {
        "model": "PARITY (MOD)",
        "dtype": "float64",
        "n": int(res["n"]),
        "checked_positions": int(res["checked_positions"]),
        "mismatched_positions": int(res["mismatched_positions"]),
        "seconds": round(float(res["seconds"]), 2),
    }


# ---- the experiment ---------------------------------------------------------------------------


def build_models(dtype: torch.dtype) -> dict[str, tuple[Transformer, int | None, int | None]]:
    """Each model cast to ``dtype``, with its derived float32 and float64 limits (None: the
    certificate states none)."""
    from hardsoft.compile import compile_formula
    from hardsoft.programs.ahat.routes import build

    out: dict[str, tuple[Transformer, int | None, int | None]] = {}
    for name, (formula, alphabet) in FORMULAS.items():
        model = compile_formula(formula, alphabet, target="soft-temperature")
        fl = model.meta["certificate"]["float_limits"]
        out[name] = (model.to(dtype), fl["float32"], fl["float64"])
    for name, (family, k, _) in PROGRAMS.items():
        model = build(family, k, "soft-temperature").model
        fl = model.meta["certificate"]["float_limits"]  # derived per program (docs/programs.md)
        out[name] = (model.to(dtype), fl["float32"], fl["float64"])
    return out


def float32_rows(seed: int, n_max: int, quick: bool) -> list[dict[str, Any]]:
    """Every model in float32 and every word family: the search from a quarter of the derived
    limit (quick: up to ``n_max`` or the derived limit, whichever is larger)."""
    rows = []
    for name, (model, limit, _) in build_models(torch.float32).items():
        for kind in WORDS:
            start = max(8, (limit or 64) // 4)
            t0 = time.perf_counter()
            exact = checker(name, model, kind, seed)
            found = first_failure(exact, start, max(n_max, limit or 0) if quick else n_max)
            rows.append(_row(name, "float32", kind, limit, found, time.perf_counter() - t0))
    return rows


def checker(name: str, model: Transformer, kind: str, seed: int) -> Callable[[int], bool]:
    """``n -> every position right`` for one model and word family: streamed (causal formulas
    with a prefix rule), one forward pass (other formulas) or against the Dyck oracle."""
    if name in PROGRAMS:
        _, k, lang = PROGRAMS[name]
        return partial(_program_at, model, k, lang, kind, seed)
    check = stream_exact if name in PREFIX_RULES else formula_exact
    return partial(_formula_at, check, model, name, kind, seed)


def _program_at(model: Transformer, k: int, lang: str, kind: str, seed: int, n: int) -> bool:
    return program_exact(model, k, lang, kind, n, seed)


def _formula_at(check: Callable[..., bool], model, name: str, kind: str, seed: int, n: int) -> bool:
    return check(model, name, kind, n, seed)


def float64_parity_rows(
    seed: int, factor: float, n_max: int, words: tuple[str, ...] = WORDS
) -> list[dict[str, Any]]:
    """Compiled PARITY (MOD) in float64, streamed, from ``factor`` × its derived limit."""
    models = build_models(torch.float64)
    model, _, limit = models["PARITY (MOD)"]
    assert limit is not None
    rows = []
    for kind in words:
        t0 = time.perf_counter()
        found = first_failure(
            checker("PARITY (MOD)", model, kind, seed), int(limit * factor), n_max
        )
        rows.append(_row("PARITY (MOD)", "float64", kind, limit, found, time.perf_counter() - t0))
    return rows


def _row(name, fmt, kind, limit, found: Search, seconds: float) -> dict[str, Any]:
    measured = found.first_failure or found.largest_exact
    return {
        "model": name,
        "dtype": fmt,
        "word": kind,
        "derived": limit,
        "largest_exact": found.largest_exact,
        "first_failure": found.first_failure,
        "ratio": (measured / limit) if (limit and measured) else None,
        "exact_at_largest_tried": found.first_failure is None,
        "runs": found.runs,
        "seconds": round(seconds, 2),
    }


def _figure(ctx: Context, rows: list[dict[str, Any]]) -> str:
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    names = list(dict.fromkeys(f"{r['model']} ({r['dtype']})" for r in rows))
    marks = {"random": "o", "alternating": "s", "run": "^"}
    for y, label in enumerate(names):
        mine = [r for r in rows if f"{r['model']} ({r['dtype']})" == label]
        for r in mine:
            x = r["first_failure"] or r["largest_exact"]
            face = "none" if r["first_failure"] is None else None
            ax.scatter(
                [x],
                [y],
                marker=marks[r["word"]],
                facecolors=face,
                edgecolors="C0",
                color="C0",
                label=r["word"] if y == 0 else None,
            )
        if mine[0]["derived"]:
            ax.scatter(
                [mine[0]["derived"]],
                [y],
                marker="|",
                s=300,
                color="C3",
                label="derived limit" if y == 0 else None,
            )
    ax.set_xscale("log")
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xlabel("input length n (filled: first failing n; hollow: exact at the largest n tried)")
    ax.set_title("Float horizon: measured first failure vs the derived limit", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    name = "float_horizon.png"
    fig.savefig(ctx.figure_path(name), dpi=130)
    plt.close(fig)
    return name


TABLE_COLUMNS = [
    "model",
    "dtype",
    "word",
    "derived limit",
    "largest exact n",
    "first failing n",
    "measured / derived",
    "runs",
    "seconds",
]


def table_rows(rows: list[dict[str, Any]]) -> list[list[Any]]:
    out = []
    for r in rows:
        exact = r["exact_at_largest_tried"]
        ratio = "-" if not r["ratio"] else f"{'>= ' if exact else ''}{r['ratio']:.2f}"
        failing = "none up to the largest tried" if exact else r["first_failure"]
        out.append(
            [
                r["model"],
                r["dtype"],
                r["word"],
                r["derived"] or "-",
                r["largest_exact"] or "-",
                failing,
                ratio,
                r["runs"],
                r["seconds"],
            ]
        )
    return out


@register(
    "float-horizon",
    title="Float horizon: where compiled models stop being exact in float32 / float64",
    version="3",
    order=46,
    seed_ref="Yang et al. (arXiv:2412.09925v1) §4 (exact at every length, in exact arithmetic)",
)
def run(ctx: Context) -> Result:
    rows = float32_rows(ctx.seed, n_max=1 << 15 if ctx.quick else 1 << 26, quick=ctx.quick)
    if not ctx.quick:
        rows += float64_parity_rows(ctx.seed, factor=2.0, n_max=1 << 26)
    ratios = [r["ratio"] for r in rows if r["ratio"] and not r["exact_at_largest_tried"]]
    worst: dict[str, float] = {}
    for r in rows:
        if r["derived"] and r["first_failure"]:
            key = f"{r['model']} ({r['dtype']})"
            worst[key] = min(worst.get(key, r["ratio"]), r["ratio"])
    below = [k for k, v in worst.items() if v < 1]
    streamed = stream_check_row(10**6 if ctx.quick else 10**7, ctx.seed)
    return Result(
        metrics={
            "rows": rows,
            "min_ratio_by_model": worst,
            "failures_below_derived": below,
            "stream_check": streamed,
        },
        figures=[_figure(ctx, rows)],
        tables=[
            Table(
                "First failing n by bisection (every position checked)",
                TABLE_COLUMNS,
                table_rows(rows),
            ),
            Table(
                "check --stream: a random word from a file, model and streaming evaluator side "
                "by side",
                ["model", "format", "n", "positions checked", "mismatches", "seconds"],
                [
                    [
                        streamed["model"],
                        streamed["dtype"],
                        streamed["n"],
                        streamed["checked_positions"],
                        streamed["mismatched_positions"],
                        streamed["seconds"],
                    ]
                ],
            ),
        ],
        summary=(
            f"{len(rows)} searches; measured first failure / derived limit from "
            f"{min(ratios):.2f} to {max(ratios):.2f} where a failure was found"
            if ratios
            else f"{len(rows)} searches, no failure found"
        )
        + (
            f"; below the derived limit: {', '.join(below)}"
            if below
            else "; no model failed below its derived limit"
        )
        + f". `hardsoft check --stream` on compiled PARITY (float64) over a random word of "
        f"n = {streamed['n']:,} read from a file: {streamed['mismatched_positions']} "
        "mismatching positions"
        + ". The derived limit is a sufficient condition; the bisection brackets a first "
        "failure (largest exact n, first failing n) to 1/64 relative width (1/8 from n = 2^20).",
    )

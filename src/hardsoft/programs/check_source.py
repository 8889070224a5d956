"""``check MODEL --program FILE``: a compiled program against the program's own interpreter.

Every output of the model is read by its declared encoding (:mod:`hardsoft.programs.readout`)
and compared with the interpreter's value of its statement (``SourceProgram.run``), at every
position of every word up to a length and of random words. Words on which the interpreter
itself is undefined (a RASP program raising: a categorical Aggregate averaging different
values, a Map's function failing) are counted apart, not compared. A model compiled with a
bound (``meta["program"]["max_len"]``) is only checked up to it.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.hard_words import hard_words
from hardsoft.model.precision import length_bound
from hardsoft.model.transformer import Transformer
from hardsoft.programs.readout import UNITS, agrees, decode_one, expected, program_outputs
from hardsoft.programs.source import SourceProgram

EXHAUSTIVE_LIMIT = 20000
"""Above this many words of one length, that length is sampled instead (2000 words)."""


def _words(
    alphabet: Sequence[str],
    exhaustive_max_n: int,
    random_n: Sequence[int],
    samples: int,
    seed: int,
) -> tuple[list[str], list[int]]:
    rng = np.random.default_rng(seed)
    words: list[str] = []
    sampled: list[int] = []
    k = len(alphabet)
    for n in range(1, exhaustive_max_n + 1):
        if k**n <= EXHAUSTIVE_LIMIT:
            words += ["".join(w) for w in itertools.product(alphabet, repeat=n)]
        else:
            sampled.append(n)
            codes = rng.integers(0, k, size=(2000, n))
            words += ["".join(alphabet[c] for c in row) for row in codes]
    for n in random_n:
        codes = rng.integers(0, k, size=(samples, n))
        words += ["".join(alphabet[c] for c in row) for row in codes]
    return words, sampled


def _raw_error(entry: dict[str, Any], v: float, value: Any, i: int, n: int) -> float:
    """|output − what it should carry|, before reading (0 for a number that is None)."""
    if entry.get("encoding") in ("bool", "onehot"):
        return abs(v - float(expected(entry, value)))
    if value is None or not isinstance(value, (int, float)):
        return 0.0
    unit = entry.get("unit")
    scale = UNITS[unit](i, n) if unit in UNITS else 1
    return abs(v * scale - float(value))


def check_program(
    model: Transformer,
    program: SourceProgram,
    *,
    exhaustive_max_n: int = 6,
    random_n: Sequence[int] = (100, 1000),
    samples: int = 8,
    seed: int = 0,
    words: Sequence[str] = (),
    hard_n: Sequence[int] = (),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Compare every output at every position with ``program.run``; the report has the same
    keys as ``check_formula``'s, plus ``undefined_strings`` and ``skipped_lengths``. ``words``
    adds given words, ``hard_n`` the hard words of those lengths
    (:func:`hardsoft.languages.hard_words.hard_words`); words longer than a bounded model's
    bound are skipped."""
    entries = program_outputs(model.meta)
    if (model.meta.get("program") or {}).get("causal") and hasattr(program, "causal"):
        program = dataclasses.replace(program, causal=True)  # type: ignore[type-var]
    missing = [e["statement"] for e in entries if e["statement"] not in program.statements]
    if missing:
        raise HardsoftError(
            f"the model's output reads the statement {missing[0]!r}, which {program.name} does "
            "not have (is it the program the model was compiled from?)"
        )
    if tuple(model.spec.alphabet) != tuple(program.alphabet):
        raise HardsoftError(
            f"the model's alphabet {''.join(model.spec.alphabet)!r} is not the program's "
            f"{''.join(program.alphabet)!r} (give the same --vocab)"
        )
    max_len = length_bound(model.meta)
    skipped = sorted(n for n in random_n if max_len is not None and n > max_len)
    lengths = [n for n in random_n if n not in skipped]
    top = exhaustive_max_n if max_len is None else min(exhaustive_max_n, max_len)
    generated, sampled = _words(program.alphabet, top, lengths, samples, seed)
    hard = [n for n in sorted(set(hard_n)) if max_len is None or n <= max_len]
    generated += [w for n in hard for w in hard_words(program.alphabet, n, seed=seed)]
    words = generated + [w for w in words if max_len is None or len(w) <= max_len]
    report: dict[str, Any] = {
        "checked_strings": 0,
        "checked_positions": 0,
        "undefined_strings": 0,
        "mismatches": 0,
        "max_abs_error": 0.0,
        "max_n": 0,
        "first_mismatch": None,
        "sampled_lengths": sampled,
        "hard_lengths": hard,
        "skipped_lengths": skipped,
        "max_len": max_len,
        "first_undefined": None,
    }
    by_len: dict[int, list[str]] = {}
    for w in words:
        by_len.setdefault(len(w), []).append(w)
    for n in sorted(by_len):
        if progress:
            progress(f"n = {n}: {len(by_len[n])} words")
        outs = model.run_words(by_len[n])
        for w, out in zip(by_len[n], outs):
            _compare(entries, program, w, out, report)
    return report


def _compare(
    entries: list[dict[str, Any]],
    program: SourceProgram,
    word: str,
    out: np.ndarray,
    report: dict[str, Any],
) -> None:
    try:
        run = program.run(word)
    except HardsoftError as exc:
        report["undefined_strings"] += 1
        if report["first_undefined"] is None:
            report["first_undefined"] = {"word": word, "reason": str(exc)}
        return
    n = len(word)
    report["checked_strings"] += 1
    report["checked_positions"] += n
    report["max_n"] = max(report["max_n"], n)
    bad = False
    for k, e in enumerate(entries):
        values = run.values[e["statement"]]
        for i in range(n):
            v = float(out[i, k])
            got = decode_one(e, v, i + 1, n)
            ok, _ = agrees(e, got, values[i])
            err = _raw_error(e, v, values[i], i + 1, n)
            report["max_abs_error"] = max(report["max_abs_error"], err)
            if not ok and not bad:
                bad = True
                report["mismatches"] += 1
                if report["first_mismatch"] is None:
                    report["first_mismatch"] = {
                        "word": word,
                        "n": n,
                        "position": i + 1,
                        "output": e["name"],
                        "expected": _json(values[i]),
                        "got": _json(got),
                        "raw": v,
                    }


def _json(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_json(x) for x in v]
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    return v

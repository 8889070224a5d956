"""Check a model against an independent per-position reference, on every string up to a length
and on random strings of given lengths.

The reference is either a formula (the logic evaluator: the formula's value at every position)
or a language (``prefix_reference``: whether each prefix is in the language, or a task's
per-position target, where ``-1`` means "no answer" and the position is skipped). The model's
output coordinate 0 is read at every position: for 0/1 references a position agrees iff
``(output > 1/2) == reference``; for symbol-valued task targets the prediction is the argmax of
the outputs when there are several, else the output rounded to the nearest integer.

Exhaustive lengths run all ``|Σ|^n`` strings of a length in batched forward passes; above
``max_exhaustive`` strings a length is sampled instead (reported in ``sampled_lengths``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer

Reference = Callable[[np.ndarray], np.ndarray]
"""Maps token ids ``[B, n]`` to the reference ``[B, n]`` (bool or int; ``-1`` = skip)."""


def all_strings(k: int, n: int) -> np.ndarray:
    """All ``k^n`` strings of length ``n`` over ``k`` symbols as token ids ``[k^n, n]``
    (lexicographic order)."""
    if n == 0:
        return np.zeros((1, 0), dtype=np.int64)
    idx = np.arange(k**n, dtype=np.int64)
    powers = k ** np.arange(n - 1, -1, -1, dtype=np.int64)
    return (idx[:, None] // powers[None, :]) % k


def model_outputs(
    model: Transformer,
    ids: np.ndarray,
    *,
    batch_size: int = 256,
    chunk_size: int | str | None = None,
) -> np.ndarray:
    """The model's outputs ``[B, n, d_out]`` (numpy) on token ids ``[B, n]``, batched."""
    parts = []
    with torch.no_grad():
        for s in range(0, len(ids), batch_size):
            tokens = torch.from_numpy(np.ascontiguousarray(ids[s : s + batch_size])).to(
                model.device
            )
            out = model(tokens, chunk_size=chunk_size).outputs
            parts.append(out.detach().to("cpu", torch.float64).numpy())
    return np.concatenate(parts, axis=0)


def _predict(outputs: np.ndarray, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """Predictions ``[B, n]`` and the value read (coordinate 0) from outputs ``[B, n, d]``."""
    value = outputs[..., 0]
    if binary:
        return (value > 0.5).astype(np.int64), value
    if outputs.shape[-1] > 1:
        return outputs.argmax(-1).astype(np.int64), value
    return np.rint(value).astype(np.int64), value


def _batch_size_for(model: Transformer, n: int, chunk_size: int | str | None = None) -> int:
    """Keep a batch's activations around 2·10^7 numbers (and at least one string), and its
    estimated forward pass within half the available memory."""
    per = max(1, n * max(model.spec.d_model, 1) + n * n)
    size = int(max(1, min(4096, 20_000_000 // per)))
    one = memory.forward_bytes(model.spec, 1, n, model.W_E.element_size(), chunk_size)
    available = memory.available_bytes(str(model.device))
    if available is not None and one > 0:
        size = max(1, min(size, int(available // 2 // one)))
    return size


def check_model(
    model: Transformer,
    reference: Reference,
    *,
    exhaustive_max_n: int = 12,
    random_n: Sequence[int] = (100, 1000, 10000),
    samples: int = 200,
    seed: int = 0,
    max_exhaustive: int = 1 << 16,
    sampler: Callable[[int, int, np.random.Generator], np.ndarray] | None = None,
    chunk_size: int | str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Compare ``model`` with ``reference`` at every position (see the module docstring).

    Returns a JSON-ready dict: ``mismatches`` (strings with at least one wrong position),
    ``mismatched_positions``, ``checked_strings``, ``checked_positions``, ``max_n``,
    ``lengths``, ``exhaustive_lengths``, ``sampled_lengths``, ``max_abs_error`` (largest
    ``|output − reference|`` over 0/1 references: 0 means exactly 0/1 everywhere),
    ``first_mismatch`` (``{"word", "n", "position", "expected", "got", "output"}`` or None)
    and ``seconds``.
    """
    exhaustive_max_n = validate.nonneg_int(exhaustive_max_n, "exhaustive_max_n")
    random_n = [validate.positive_int(n, "random_n") for n in random_n]
    if random_n:
        samples = validate.positive_int(samples, "samples")
    seed = validate.seed(seed)
    max_exhaustive = validate.positive_int(max_exhaustive, "max_exhaustive")
    k = len(model.spec.alphabet)
    per_symbol = 48 + 8 * model.spec.d_out  # ids, reference, predictions, outputs (bytes)
    largest = [(samples, n) for n in random_n]
    if exhaustive_max_n:
        n = exhaustive_max_n
        largest.append((min(max_exhaustive, k**n) if n * math.log2(k) < 64 else max_exhaustive, n))
    itemsize = model.W_E.element_size()
    for count, n in largest:
        memory.require(count * n * per_symbol, f"checking {count} strings of length {n}")
        memory.require(
            memory.forward_bytes(model.spec, 1, n, itemsize, chunk_size),
            f"a forward pass on 1 input(s) of length {n}",
            str(model.device),
        )
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    report: dict[str, Any] = {
        "mismatches": 0,
        "mismatched_positions": 0,
        "checked_strings": 0,
        "checked_positions": 0,
        "max_n": 0,
        "lengths": [],
        "exhaustive_lengths": [],
        "sampled_lengths": [],
        "max_abs_error": 0.0,
        "first_mismatch": None,
    }
    plan: list[tuple[int, str]] = [(n, "exhaustive") for n in range(1, exhaustive_max_n + 1)]
    plan += [(n, "random") for n in random_n]
    for n, how in plan:
        if how == "exhaustive" and k**n <= max_exhaustive:
            ids = all_strings(k, n)
            report["exhaustive_lengths"].append(n)
        else:
            count = max_exhaustive if how == "exhaustive" else samples
            if sampler is not None:
                ids = sampler(n, count, rng)
            else:
                ids = rng.integers(0, k, size=(count, n), dtype=np.int64)
            report["sampled_lengths"].append(n)
        _check_batch(model, reference, ids, report, chunk_size)
        report["lengths"].append(n)
        report["max_n"] = max(report["max_n"], n)
        if progress is not None:
            progress(f"n={n}: {len(ids)} strings, {report['mismatches']} mismatching so far")
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


def _check_batch(
    model: Transformer,
    reference: Reference,
    ids: np.ndarray,
    report: dict[str, Any],
    chunk_size: int | str | None,
) -> None:
    n = ids.shape[1]
    ref = np.asarray(reference(ids))
    if ref.shape != ids.shape:
        raise HardsoftError(f"reference has shape {ref.shape}, expected {ids.shape}")
    ref = ref.astype(np.int64)
    binary = bool(np.isin(ref, (-1, 0, 1)).all())
    batch = _batch_size_for(model, n, chunk_size)
    out = model_outputs(model, ids, batch_size=batch, chunk_size=chunk_size)
    pred, value = _predict(out, binary)
    valid = ref >= 0
    wrong = (pred != ref) & valid
    if binary and valid.any():
        report["max_abs_error"] = max(
            report["max_abs_error"], float(np.abs(value - ref)[valid].max())
        )
    bad_rows = wrong.any(axis=1)
    report["mismatches"] += int(bad_rows.sum())
    report["mismatched_positions"] += int(wrong.sum())
    report["checked_strings"] += len(ids)
    report["checked_positions"] += int(valid.sum())
    if report["first_mismatch"] is None and bad_rows.any():
        b = int(np.argmax(bad_rows))
        p = int(np.argmax(wrong[b]))
        alphabet = model.spec.alphabet
        report["first_mismatch"] = {
            "word": "".join(alphabet[int(c)] for c in ids[b]),
            "n": n,
            "position": p + 1,
            "expected": int(ref[b, p]),
            "got": int(pred[b, p]),
            "output": float(value[b, p]),
        }


def formula_reference(formula: Any, alphabet: Sequence[str]) -> Reference:
    """The logic evaluator as a per-position reference."""
    from hardsoft.logic import evaluate

    alpha = list(alphabet)
    return lambda ids: evaluate(formula, ids, alpha)


def language_reference(language: Any, alphabet: Sequence[str]) -> Reference:
    """A language's ``prefix_reference`` (or a task's per-position target) as a reference."""
    alpha = list(alphabet)

    def ref(ids: np.ndarray) -> np.ndarray:
        words = ["".join(alpha[int(c)] for c in row) for row in ids]
        return np.stack([np.asarray(language.prefix_reference(w)) for w in words])

    return ref


def check_formula(model: Transformer, formula: Any, **options: Any) -> dict[str, Any]:
    """:func:`check_model` against the logic evaluator; the formula's alphabet is the model's."""
    from hardsoft.logic import Formula, parse

    if isinstance(formula, str):
        formula = parse(formula, alphabet=model.spec.alphabet)
    if not isinstance(formula, Formula):
        raise HardsoftError(f"expected a formula, got {formula!r}")
    return check_model(model, formula_reference(formula, model.spec.alphabet), **options)


def check_language(model: Transformer, language: Any, **options: Any) -> dict[str, Any]:
    """:func:`check_model` against a language's prefix oracle (``language`` may be a name)."""
    from hardsoft.languages import get_language

    if isinstance(language, str):
        language = get_language(language)
    if tuple(language.alphabet) != tuple(model.spec.alphabet):
        raise HardsoftError(
            f"the model's alphabet {''.join(model.spec.alphabet)!r} is not the language's "
            f"{''.join(language.alphabet)!r}"
        )
    if "sampler" not in options and language.kind == "language":
        options["sampler"] = _language_sampler(language)
    return check_model(model, language_reference(language, model.spec.alphabet), **options)


def _language_sampler(language: Any) -> Callable[[int, int, np.random.Generator], np.ndarray]:
    """Half uniform strings, half the language's balanced members / near misses (when it has
    both at that length), so long random checks also see members."""
    index = {s: i for i, s in enumerate(language.alphabet)}

    def sample(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
        words = language.sample_uniform(n, count - count // 2, rng)
        try:
            extra, _ = language.sample_balanced(n, count // 2, rng)
        except HardsoftError:
            extra = language.sample_uniform(n, count // 2, rng)
        words = list(words) + list(extra)
        return np.array([[index[c] for c in w] for w in words], dtype=np.int64).reshape(
            len(words), n
        )

    return sample

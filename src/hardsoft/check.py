"""Check a model against an independent per-position reference, on every string up to a length
and on random strings of given lengths.

The reference is either formulas (the logic evaluator) or a language (``prefix_reference``).

- **One formula, or a language**: the model's declared acceptance rule
  (:func:`hardsoft.model.readout.acceptance_of`: output coordinate 0 > 1/2 unless the model
  declares another, e.g. ``P(EOS) > p/2`` for a ``hardsoft train`` predictor) is read at every
  position; a position agrees iff that bit equals the reference.
- **Named outputs** (``model.spec.output_names``): one formula per output
  (:func:`check_formulas`); every output coordinate is compared with its formula's value.
- **Tasks with symbol-valued targets** (induction heads; ``-1`` = no answer): a model whose
  output names are alphabet symbols (and optionally ``none``) is read by
  :func:`symbol_readout` — the symbol whose output is 1, ``-1`` when no symbol output is —
  and every position is compared, the no-answer ones included. A model with one unnamed
  output gives the symbol index itself (``-1`` for none), read by rounding; several unnamed
  outputs are read by argmax (then ``-1`` positions cannot be expressed and are skipped).

Exhaustive lengths run all ``|Σ|^n`` strings of a length in batched forward passes; above
``max_exhaustive`` strings a length is sampled instead (reported in ``sampled_lengths``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.languages.hard_words import HARD_WORDS, hard_words
from hardsoft.model.fastpath import head_paths
from hardsoft.model.readout import acceptance_of, output_names
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
    """The model's outputs ``[B, n, d_out]`` (numpy) on token ids ``[B, n]``, batched.
    ``chunk_size`` None means the model's "auto" policy (heads without a fast path stream in
    blocks at long n, so memory stays O(n·d))."""
    parts = []
    with torch.no_grad():
        for s in range(0, len(ids), batch_size):
            tokens = torch.from_numpy(np.ascontiguousarray(ids[s : s + batch_size])).to(
                model.device
            )
            out = model(tokens, chunk_size="auto" if chunk_size is None else chunk_size).outputs
            parts.append(out.detach().to("cpu", torch.float64).numpy())
    return np.concatenate(parts, axis=0)


NONE_OUTPUT = "none"
"""The output name that is 1 where a symbol-valued task has no answer."""
INVALID = -2
"""A symbol readout that is no answer at all (two symbol outputs at 1, or a ``none`` output that
contradicts the symbol outputs): never equal to a target."""


def is_symbol_valued(names: Sequence[str], alphabet: Sequence[str]) -> bool:
    """Do the output names read as a symbol-valued output: alphabet symbols (at least one),
    optionally plus ``none``?"""
    symbols = [nm for nm in names if nm != NONE_OUTPUT]
    return bool(symbols) and all(nm in alphabet for nm in symbols)


def symbol_readout(
    outputs: np.ndarray, names: Sequence[str], alphabet: Sequence[str]
) -> np.ndarray:
    """Per position, the alphabet index of the one symbol-named output that is 1 (> 1/2),
    ``-1`` when none is, and :data:`INVALID` when several are or when an output named
    ``none`` disagrees with "no symbol output is 1". ``outputs``: ``[..., len(names)]``."""
    on = np.asarray(outputs) > 0.5
    cols = [k for k, nm in enumerate(names) if nm != NONE_OUTPUT]
    index = np.array([list(alphabet).index(names[k]) for k in cols], dtype=np.int64)
    sym_on = on[..., cols]
    count = sym_on.sum(-1)
    pred = np.where(count == 0, -1, index[sym_on.argmax(-1)])
    pred = np.where(count > 1, INVALID, pred)
    if NONE_OUTPUT in names:
        none_on = on[..., list(names).index(NONE_OUTPUT)]
        pred = np.where(none_on != (count == 0), INVALID, pred)
    return pred.astype(np.int64)


def symbol_error(outputs: np.ndarray, names: Sequence[str], alphabet: Sequence[str], ref):
    """``|output − expected|`` per position (max over outputs) for a symbol-valued model: the
    expected outputs are 1 for the target's symbol (or ``none``) and 0 elsewhere."""
    expected = np.zeros(outputs.shape, dtype=np.float64)
    for k, nm in enumerate(names):
        if nm == NONE_OUTPUT:
            expected[..., k] = ref == -1
        else:
            expected[..., k] = ref == list(alphabet).index(nm)
    return np.abs(outputs - expected).max(-1)


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


def _empty_report(model: Transformer, last_only: bool, hard_n: list[int]) -> dict[str, Any]:
    """The report :func:`check_model` fills in, before any string is checked."""
    return {
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
        "attention_paths": {},
        "readout": acceptance_of(model).describe(),
        "positions": "last" if last_only else "every",
        "by_length": [],
        "hard_lengths": hard_n,
    }


def check_model(
    model: Transformer,
    reference: Reference,
    *,
    exhaustive_max_n: int = 12,
    random_n: Sequence[int] = (100, 1000, 10000),
    samples: int = 32,
    seed: int = 0,
    max_exhaustive: int = 1 << 16,
    sampler: Callable[[int, int, np.random.Generator], np.ndarray] | None = None,
    chunk_size: int | str | None = None,
    progress: Callable[[str], None] | None = None,
    readout: str = "auto",
    numeric: Sequence[bool] | None = None,
    tolerance: float = 1e-6,
    hard_n: Sequence[int] = (),
) -> dict[str, Any]:
    """Compare ``model`` with ``reference`` at every position (see the module docstring and
    :func:`_read` for ``readout``). At each length of ``hard_n`` the words of
    :func:`hardsoft.languages.hard_words.hard_words` are checked too (the deepest balanced
    words, their near misses, runs, alternations: where compiled models fail first).

    With ``readout="outputs"``, ``numeric`` marks output columns that carry a number rather
    than a bit: they agree where ``|output − reference| <= tolerance·max(1, |reference|)``;
    a NaN reference (undefined there) is skipped.

    Returns a JSON-ready dict: ``mismatches`` (strings with at least one wrong position),
    ``mismatched_positions``, ``checked_strings``, ``checked_positions``, ``max_n``,
    ``lengths``, ``exhaustive_lengths``, ``sampled_lengths``, ``max_abs_error`` (largest
    ``|output − reference|`` over 0/1 references: 0 means exactly 0/1 everywhere),
    ``first_mismatch`` (``{"word", "n", "position", "expected", "got", "output"}`` or None),
    ``readout`` (how a 0/1 reference is read: the model's declared acceptance rule,
    :func:`hardsoft.model.readout.acceptance_of`, applied at every position), ``positions``
    (``last`` when that readout is declared for the last position only: then only the last
    position of each word is compared), ``by_length``
    (per checked length: ``strings``, ``strings_right``, ``positions``, ``positions_right``),
    ``attention_paths`` (per length, the attention path of each head: dense, chunked or a fast
    path of :mod:`hardsoft.model.fastpath`) and ``seconds``.
    """
    exhaustive_max_n = validate.nonneg_int(exhaustive_max_n, "exhaustive_max_n")
    random_n = [validate.positive_int(n, "random_n") for n in random_n]
    hard_n = sorted({validate.positive_int(n, "hard_n") for n in hard_n})
    if random_n:
        samples = validate.positive_int(samples, "samples")
    seed = validate.seed(seed)
    max_exhaustive = validate.positive_int(max_exhaustive, "max_exhaustive")
    if readout not in READOUTS:
        raise HardsoftError(f"unknown readout {readout!r} (one of {', '.join(READOUTS)})")
    k = len(model.spec.alphabet)
    largest = [(samples, n) for n in random_n] + [(HARD_WORDS, n) for n in hard_n]
    if exhaustive_max_n:
        n = exhaustive_max_n
        largest.append((min(max_exhaustive, k**n) if n * math.log2(k) < 64 else max_exhaustive, n))
    _require_memory(model, largest, chunk_size)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    last_only = acceptance_of(model).last_only
    if last_only:
        reference = _last_position(reference)
    report = _empty_report(model, last_only, hard_n)
    plan: list[tuple[int, str]] = [(n, "exhaustive") for n in range(1, exhaustive_max_n + 1)]
    plan += [(n, "random") for n in random_n] + [(n, "hard") for n in hard_n]
    for n, how in plan:
        if how == "hard":
            ids = _encode(hard_words(model.spec.alphabet, n, seed=seed), model.spec.alphabet)
        elif how == "exhaustive" and k**n <= max_exhaustive:
            ids = all_strings(k, n)
            report["exhaustive_lengths"].append(n)
        else:
            count = max_exhaustive if how == "exhaustive" else samples
            ids = _sampled(k, n, count, rng, sampler)
            report["sampled_lengths"].append(n)
        step = len(ids) if n < 1000 else PROGRESS_STRINGS  # long strings: progress per slice
        for s in range(0, len(ids), step):
            _check_batch(
                model, reference, ids[s : s + step], report, chunk_size, readout, numeric, tolerance
            )
            _merge_rows(report["by_length"])
            if progress is not None and s + step < len(ids):
                progress(f"n={n}: {s + step}/{len(ids)} strings ...")
        report["attention_paths"][str(n)] = head_paths(model)
        if n not in report["lengths"]:
            report["lengths"].append(n)
        report["max_n"] = max(report["max_n"], n)
        if progress is not None:
            progress(f"n={n}: {len(ids)} strings, {report['mismatches']} mismatching so far")
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report


def _last_position(reference: Reference) -> Reference:
    """``reference`` with every position but the last skipped (-1, or NaN for output
    references): for a model that declares its readout at the last position only."""

    def ref(ids: np.ndarray) -> np.ndarray:
        out = np.array(reference(ids), dtype=np.float64)
        out[:, :-1] = np.nan if out.ndim == 3 else -1
        return out

    return ref


def _require_memory(
    model: Transformer, largest: list[tuple[int, int]], chunk_size: int | str | None
) -> None:
    """Refuse at once a check whose batches (count strings of length n) or forward passes
    would not fit in memory."""
    per_symbol = 48 + 8 * model.spec.d_out  # ids, reference, predictions, outputs (bytes)
    itemsize = model.W_E.element_size()
    for count, n in largest:
        memory.require(count * n * per_symbol, f"checking {count} strings of length {n}")
        memory.require(
            memory.forward_bytes(model.spec, 1, n, itemsize, chunk_size),
            f"a forward pass on 1 input(s) of length {n}",
            str(model.device),
        )


def _sampled(
    k: int,
    n: int,
    count: int,
    rng: np.random.Generator,
    sampler: Callable[[int, int, np.random.Generator], np.ndarray] | None,
) -> np.ndarray:
    """``count`` words of length n: the sampler's, else uniform over ``k`` symbols."""
    if sampler is not None:
        return sampler(n, count, rng)
    return rng.integers(0, k, size=(count, n), dtype=np.int64)


def hard_lengths(random_n: Sequence[int], certified: int | None) -> list[int]:
    """The lengths a check adds hard words at: every random length, and the certified float
    limit where a random length lies past it (right at the limit the model must still be
    exact; past it, the hard words are where it fails first)."""
    lengths = set(random_n)
    if certified and random_n and certified < max(random_n):
        lengths.add(certified)
    return sorted(lengths)


def _encode(words: Sequence[str], alphabet: Sequence[str]) -> np.ndarray:
    """Words of one length as token ids ``[B, n]``."""
    index = {a: k for k, a in enumerate(alphabet)}
    n = len(words[0]) if words else 0
    return np.array([[index[c] for c in w] for w in words], dtype=np.int64).reshape(-1, n)


PROGRESS_STRINGS = 16
"""From n = 1000 on, strings are checked (and progress is reported) this many at a time."""


def _merge_rows(rows: list[dict[str, Any]]) -> None:
    """The last two ``by_length`` rows as one when they are slices of the same length."""
    if len(rows) >= 2 and rows[-1]["n"] == rows[-2]["n"]:
        last = rows.pop()
        for key in ("strings", "strings_right", "positions", "positions_right"):
            rows[-1][key] += last[key]


READOUTS = ("auto", "outputs", "symbols", "index")
"""How :func:`check_model` reads the model (see :func:`_read`)."""


def _read_outputs(
    model: Transformer,
    out: np.ndarray,
    ref: np.ndarray,
    numeric: Sequence[bool] | None,
    tolerance: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, list[str]]:
    """Every output column against a ``[B, n, d]`` reference: bits by ``> 1/2``, the
    ``numeric`` columns by closeness; NaN references are skipped."""
    if ref.shape != out.shape:
        raise HardsoftError(f"reference has shape {ref.shape}, expected {out.shape}")
    num = np.zeros(out.shape[-1], bool) if numeric is None else np.asarray(numeric, bool)
    if num.shape != (out.shape[-1],):
        raise HardsoftError(f"{len(num)} numeric flags for {out.shape[-1]} outputs")
    valid = ~np.isnan(ref)
    safe = np.where(valid, ref, 0.0)
    close = np.abs(out - safe) <= tolerance * np.maximum(1.0, np.abs(safe))
    pred = np.where(num, np.where(close, safe, out), (out > 0.5).astype(np.float64))
    err = np.where(valid, np.abs(out - safe), 0.0).max(-1)
    return pred, safe, valid, err, out, list(output_names(model))


def _read(
    model: Transformer, out: np.ndarray, ref: np.ndarray, readout: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, list[str]]:
    """Compare outputs ``[B, n, d]`` with a reference; returns per output column ``c``:
    ``pred``, ``ref`` and ``valid`` as ``[B, n, c]``, the error ``|output − expected|`` on
    ``[B, n]`` (None if not 0/1-valued), the value shown in a mismatch ``[B, n, c]`` and the
    column names.

    ``auto``: coordinate 0 against a ``[B, n]`` reference, ``> 1/2`` for 0/1 references,
    else argmax / rounding with ``-1`` skipped. ``symbols``: :func:`symbol_readout`, every
    position. ``index``: coordinate 0 rounded to an integer, every position. (``outputs``,
    every output coordinate against a ``[B, n, d]`` reference, is :func:`_read_outputs`.)"""
    names = output_names(model)
    if readout == "symbols":
        alphabet = model.spec.alphabet
        pred = symbol_readout(out, names, alphabet)
        err = symbol_error(out, names, alphabet, ref)
        shown = out.max(-1)
        col = "symbol"
    elif readout == "index":
        shown, col = out[..., 0], names[0]
        pred, err = np.rint(shown).astype(np.int64), np.abs(shown - ref)
    else:
        binary = bool(np.isin(ref, (-1, 0, 1)).all())
        pred, shown = _predict(out, binary)
        err = np.abs(shown - ref) if binary else None
        col = names[0]
        declared = acceptance_of(model)
        if binary and (declared.kind, declared.index) != ("coordinate", 0):
            # the model's own acceptance rule at every position, e.g. P(EOS) of a predictor
            pred = declared.accept(torch.from_numpy(out)).numpy().astype(np.int64)
            shown, err = declared.value(torch.from_numpy(out)).numpy(), None
            col = "P(EOS)" if declared.kind == "eos" else names[declared.index]
        elif binary:
            pred = declared.accept(torch.from_numpy(out)).numpy().astype(np.int64)
    valid = ref >= 0 if readout == "auto" else np.ones(ref.shape, bool)
    return pred[..., None], ref[..., None], valid[..., None], err, shown[..., None], [col]


def _check_batch(
    model: Transformer,
    reference: Reference,
    ids: np.ndarray,
    report: dict[str, Any],
    chunk_size: int | str | None,
    readout: str = "auto",
    numeric: Sequence[bool] | None = None,
    tolerance: float = 1e-6,
) -> None:
    n = ids.shape[1]
    ref = np.asarray(reference(ids))
    if ref.shape[:2] != ids.shape or ref.ndim != (3 if readout == "outputs" else 2):
        raise HardsoftError(f"reference has shape {ref.shape}, expected {ids.shape}")
    batch = _batch_size_for(model, n, chunk_size)
    out = model_outputs(model, ids, batch_size=batch, chunk_size=chunk_size)
    if readout == "outputs":
        ref = ref.astype(np.float64)
        pred, ref3, valid, err, shown, cols = _read_outputs(model, out, ref, numeric, tolerance)
    else:
        ref = ref.astype(np.int64)
        pred, ref3, valid, err, shown, cols = _read(model, out, ref, readout)
    wrong = ((pred != ref3) & valid).any(-1)
    checked = valid.any(-1)
    if err is not None and checked.any():
        report["max_abs_error"] = max(report["max_abs_error"], float(err[checked].max()))
    bad_rows = wrong.any(axis=1)
    report["mismatches"] += int(bad_rows.sum())
    report["mismatched_positions"] += int(wrong.sum())
    row = {"n": n, "strings": len(ids), "strings_right": int(len(ids) - bad_rows.sum())}
    row.update(positions=int(checked.sum()), positions_right=int((checked & ~wrong).sum()))
    report["by_length"].append(row)
    report["checked_strings"] += len(ids)
    report["checked_positions"] += int(checked.sum())
    if report["first_mismatch"] is None and bad_rows.any():
        b = int(np.argmax(bad_rows))
        p = int(np.argmax(wrong[b]))
        c = int(np.argmax((pred[b, p] != ref3[b, p]) & valid[b, p]))
        alphabet = model.spec.alphabet
        first: dict[str, Any] = {
            "word": "".join(alphabet[int(x)] for x in ids[b]),
            "n": n,
            "position": p + 1,
            "expected": _plain(ref3[b, p, c]),
            "got": _plain(pred[b, p, c]),
            "output": float(shown[b, p, c]),
            "output_of": cols[c],
        }
        if readout != "auto":
            first["read"] = cols[c]
            first["outputs"] = [float(v) for v in out[b, p]]
        report["first_mismatch"] = first


def _plain(x: Any) -> int | float:
    """A reference or prediction value for JSON: an int where it is integral."""
    v = float(x)
    return int(v) if v.is_integer() else v


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
    """:func:`check_model` against the logic evaluator; the formula's alphabet is the model's.
    ``formula`` may be a mapping from output names to formulas (:func:`check_formulas`); a
    single formula is compared with output coordinate 0, which must then be the model's only
    named output."""
    from hardsoft.logic import Formula, parse

    if isinstance(formula, Mapping):
        return check_formulas(model, formula, **options)
    names = tuple(model.spec.output_names)
    if len(names) > 1:
        raise HardsoftError(
            f"the model has {len(names)} named outputs ({', '.join(names)}): give one formula "
            "per output (--formula NAME=FORMULA, repeated)"
        )
    if isinstance(formula, str):
        formula = parse(formula, alphabet=model.spec.alphabet)
    if not isinstance(formula, Formula):
        raise HardsoftError(f"expected a formula, got {formula!r}")
    return check_model(model, formula_reference(formula, model.spec.alphabet), **options)


def check_formulas(
    model: Transformer, formulas: Mapping[str, Any], **options: Any
) -> dict[str, Any]:
    """:func:`check_model` of every output against its formula: ``formulas`` maps each of the
    model's output names to a formula (text or AST); a name the model lacks, or an output
    without a formula, is a one-line error. An unnamed one-output model takes one formula
    under any name."""
    from hardsoft.logic import Formula, evaluate, parse

    names = tuple(model.spec.output_names)
    if not names and model.spec.d_out == 1 and len(formulas) == 1:
        return check_formula(model, next(iter(formulas.values())), **options)
    if not names:
        raise HardsoftError("the model's outputs have no names: give one --formula FORMULA")
    unknown = [nm for nm in formulas if nm not in names]
    if unknown:
        raise HardsoftError(
            f"the model has no output {unknown[0]!r} (its outputs: {', '.join(names)})"
        )
    missing = [nm for nm in names if nm not in formulas]
    if missing:
        raise HardsoftError(
            f"no formula for output(s) {', '.join(missing)}: give one --formula NAME=FORMULA "
            f"per output ({', '.join(names)})"
        )
    alpha = list(model.spec.alphabet)
    parsed = []
    for nm in names:
        f = formulas[nm]
        f = parse(f, alphabet=alpha) if isinstance(f, str) else f
        if not isinstance(f, Formula):
            raise HardsoftError(f"output {nm!r}: expected a formula, got {f!r}")
        parsed.append(f)

    def reference(ids: np.ndarray) -> np.ndarray:
        return np.stack([evaluate(f, ids, alpha) for f in parsed], axis=-1)

    return check_model(model, reference, readout="outputs", **options)


def task_readout(model: Transformer) -> str:
    """How a task's per-position target is read from ``model``: ``symbols`` for outputs named
    by alphabet symbols (and ``none``), ``index`` for one output (the symbol index itself,
    ``-1`` for none), else ``auto`` (argmax of several unnamed outputs)."""
    names = tuple(model.spec.output_names)
    if names and is_symbol_valued(names, model.spec.alphabet):
        return "symbols"
    return "index" if model.spec.d_out == 1 else "auto"


def check_language(model: Transformer, language: Any, **options: Any) -> dict[str, Any]:
    """:func:`check_model` against a language's prefix oracle (``language`` may be a name); a
    task's symbol-valued target is read by :func:`task_readout`."""
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
    if language.kind == "task":
        options.setdefault("readout", task_readout(model))
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

"""``decompile``: a unique-hard transformer back to one formula per output, exact at every
length, checked against the model on words (docs/decompile.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hardsoft import validate
from hardsoft.classes.budget import budget as time_budget
from hardsoft.classes.budget import check as budget_check
from hardsoft.classes.budget import stage
from hardsoft.classes.counting import CountingTable, propagate_counting
from hardsoft.classes.outputs import write_output
from hardsoft.classes.propagation import (
    DEFAULT_MAX_CLASSES,
    ClassTable,
    Progress,
    check,
    propagate,
    unsupported,
)
from hardsoft.decompile.shrink import shrink_counted
from hardsoft.errors import HardsoftError
from hardsoft.languages import Language, all_words
from hardsoft.logic.semantics import evaluate
from hardsoft.logic.syntax import Const, Formula, shared_size, size, temporal_depth, to_text
from hardsoft.model.readout import acceptance_of, output_names
from hardsoft.model.spec import Weighting
from hardsoft.model.transformer import Transformer

DEFAULT_VERIFY_N = 8
DEFAULT_LANGUAGE_N = 12
CONSTANT_STATES = 20_000
"""The exact test for a constant formula gives up beyond this many automaton states."""
DEFAULT_RANDOM_WORDS = 200
DEFAULT_RANDOM_MAX_N = 1000
EXHAUSTIVE_LIMIT = 20_000
"""At most this many words are enumerated exhaustively (the length is lowered to fit)."""


@dataclass
class Output:
    """One decompiled output: its name, how it is read, and its formula."""

    name: str
    readout: str
    formula: Formula
    size_before: int | None = None
    """The size before simplification: the output's cover printed with each temporal atom
    as it was named when created, before the facts learnt later, the re-rendering and the
    exact constant test (None where not measured)."""
    size_written: int | None = None
    """The size after the BDD simplification and the constant test, before the proved
    shrinking (:mod:`hardsoft.decompile.shrink`)."""
    shrink: dict[str, Any] | None = None
    """What the proved shrinking did: steps kept, equivalence searches, counted work,
    whether the work bound ended it, and its seconds."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "readout": self.readout,
            "formula": to_text(self.formula),
            "size": size(self.formula),
            "size_shared": shared_size(self.formula),
            "size_before_simplification": self.size_before,
            "size_before_shrinking": self.size_written,
            "shrink": self.shrink,
            "temporal_depth": temporal_depth(self.formula),
        }


@dataclass
class Decompiled:
    """What :func:`decompile` returns: ``formulas`` (one per output, in output order),
    ``outputs`` (with names and readouts), ``classes`` (per layer), ``certificate`` (why the
    formulas hold at every length), ``verified`` (the check against the model) and sizes."""

    outputs: list[Output]
    table: ClassTable | CountingTable
    certificate: dict[str, Any]
    verified: dict[str, Any] = field(default_factory=dict)
    hardened: bool = False
    seconds: float = 0.0
    ties: list[str] = field(default_factory=list)
    """Outputs that can sit exactly on the readout threshold (see :func:`cautions`)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per stage: ``propagate`` (and rendering the formulas), ``check``."""
    language: dict[str, Any] | None = None
    """The comparison with a language's oracle (:func:`compare_language`), if asked for."""

    @property
    def formulas(self) -> list[Formula]:
        return [o.formula for o in self.outputs]

    @property
    def method(self) -> str:
        """``counting`` (symbolic classes with counts) or ``finite`` (finitely many vectors)."""
        return "counting" if isinstance(self.table, CountingTable) else "finite"

    @property
    def agrees(self) -> bool | None:
        """Whether the check on words found the formulas equal to the model (None: no word
        was checked). False means the model's own arithmetic decides some positions
        differently from the exact computation (see :func:`cautions`)."""
        if not self.verified.get("positions"):
            return None
        return self.verified["mismatches"] == 0

    @property
    def classes(self) -> list[int]:
        """The number of classes entering each block, and the final one."""
        return self.table.counts

    def to_dict(self) -> dict[str, Any]:
        spec = self.table.model.spec
        return {
            "outputs": [o.to_dict() for o in self.outputs],
            "classes": self.classes,
            "method": self.method,
            "model": {
                "layers": len(spec.layers),
                "heads": sum(len(layer.heads) for layer in spec.layers),
                "d_model": spec.d_model,
                "parameters": self.table.model.parameter_count(),
                "position_features": list(spec.position_features),
            },
            "hardened": self.hardened,
            "certificate": self.certificate,
            "verified": self.verified,
            "agrees": self.agrees,
            "cautions": cautions(self),
            "seconds": round(self.seconds, 3),
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
            **({"language": self.language} if self.language is not None else {}),
        }


def _readouts(model: Transformer, table: ClassTable) -> list[tuple[str, str, np.ndarray]]:
    """(name, readout description, Boolean per final class) for each output the model's
    declared readout rounds: every coordinate ``y[k] > threshold``, or for an ``eos`` readout
    the acceptance bit only."""
    acc = acceptance_of(model)
    y = table.outputs
    if acc.kind == "eos":
        import torch

        bits = acc.accept(torch.from_numpy(y)).numpy()
        return [("accept", acc.describe(), bits)]
    names = output_names(model)
    return [
        (names[k], f"y[{k}] > {acc.threshold:g}", y[:, k] > acc.threshold)
        for k in range(model.spec.d_out)
    ]


def threshold_ties(model: Transformer, table: ClassTable) -> list[str]:
    """Outputs of a finite model with a class exactly on the readout threshold."""
    acc = acceptance_of(model)
    if acc.kind == "eos":
        return []
    names = output_names(model)
    return [
        names[k] for k in range(model.spec.d_out) if (table.outputs[:, k] == acc.threshold).any()
    ]


def certificate(model: Transformer, table: ClassTable) -> dict[str, Any]:
    """Why the formulas hold for every n (see docs/decompile.md)."""
    heads = [
        {"head": t.name, "weighting": str(t.weighting), "mask": str(t.mask)}
        for layer in table.layers
        for t in layer.heads
    ]
    return {
        "method": "exact class propagation (Yang, Chiang & Angluin 2024: unique-hard attention "
        "as B-RASP / LTL operations)",
        "claim": "each formula's value equals the model's rounded output at every position of "
        "every non-empty word, at every length",
        "why": [
            "layer 0: a position's residual is a function of its symbol and its position "
            "feature values, which take finitely many values, each selected by a formula "
            f"({', '.join(table.features) or 'no features'})",
            "a unique-hard head attends to the nearest position (its tie rule) in its mask "
            "window among those whose class scores highest against the query's class: a "
            "formula over class predicates (S/U/P/F/E/Y/X), exact for every n",
            "the feed-forward, layer norm and readout are functions of the class vector",
        ],
        "heads": heads,
        "ties": "scores compared exactly (float64, bitwise): equal scores are ties, broken by "
        "position as the model does",
        "arithmetic": "float64 on a float64 copy of the model; the model's own forward pass "
        "may round differently in the last bit (see 'verified')",
        "classes_per_layer": table.counts,
    }


def cautions(result: Decompiled) -> list[str]:
    """What limits the claim for this model: mismatches found by the check, outputs on the
    readout threshold, a model that does not run in float64."""
    out = []
    v = result.verified
    if v.get("mismatches"):
        out.append(
            f"the model disagrees with the formulas at {v['mismatches']:,} of "
            f"{v['positions']:,} checked positions (first: {v.get('first_mismatch')!r}): its "
            "own floating-point rounding decides comparisons that the computation here (its "
            "linear maps in float64 on each class, compared exactly) puts on a tie or on the "
            "other side, so the formulas describe that computation, not its forward pass"
        )
    if result.ties:
        out.append(
            f"output(s) {', '.join(result.ties)} can sit exactly on the readout threshold: "
            "the formulas say 'not above' there, and the model's rounding may say otherwise"
        )
    dtype = result.certificate.get("model_dtype", "torch.float64")
    if dtype != "torch.float64" and result.method == "counting":
        out.append(
            f"the model runs in {dtype}: at long inputs its rounding of counts can differ "
            "from these exact formulas (the float horizon, docs/model.md)"
        )
    return out


def counting_certificate(model: Transformer, table: CountingTable) -> dict[str, Any]:
    """Why the formulas of a counting model hold for every n (see docs/decompile.md)."""
    heads = [
        {
            "head": f"blocks.{ell}.attn.{h}",
            "weighting": str(head.spec.weighting),
            "mask": str(head.spec.mask),
        }
        for ell, block in enumerate(model.blocks)
        for h, head in enumerate(block.heads)
    ]
    return {
        "method": "exact symbolic class propagation with counting terms (average-hard "
        "attention as counts: Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) "
        "Thm. 20; unique-hard "
        "attention as B-RASP / LTL operations: Yang, Chiang & Angluin 2024)",
        "claim": "each formula's value equals the model's rounded output at every position of "
        "every non-empty word, at every length",
        "why": [
            "layer 0: a position's residual is a polynomial in i and n with coefficients fixed "
            "by its symbol and the case of each position feature (finitely many classes)",
            "an average-hard head averages constant values over the positions of the "
            "highest-scoring classes in its window: count terms #<[phi], #>[phi] over the "
            "window size, exact for every n; scores that depend on counts split into cases, "
            "each a linear comparison of counts",
            "a unique-hard head is an S/U/P/F/E/Y/X formula over class predicates; a lookup "
            "head (a score concave in the key position j) attends to j = T for an integer "
            "count term T, clamped to its window, and reads T's residues as MOD(m, r)(T)",
            "a feed-forward unit is split on the sign of its pre-activation (a linear count "
            "comparison); the readout's threshold is one more comparison",
            "comparisons whose sign is fixed by 1 <= i <= n and 0 <= counts <= window size "
            "(a linear program) are folded; combinations of comparisons that no integer point "
            "allows (an integer program) are facts the simplification uses",
        ],
        "heads": heads,
        "ties": "scores compared exactly as polynomials (their float64 coefficients read as "
        "exact rationals): equal scores are ties, broken by position as the model does",
        "arithmetic": "weights read exactly from a float64 copy of the model; the model's own "
        "forward pass rounds, so it can differ from these formulas at lengths where rounding "
        "flips a comparison (see 'verified' and the float horizon in docs/model.md)",
        "classes_per_layer": table.counts,
    }


def is_counting(model: Transformer) -> bool:
    """Whether ``model`` needs counting terms (average-hard heads or position features with
    unboundedly many values) rather than finitely many classes."""
    return unsupported(model) is not None and not any(
        h.weighting is Weighting.SOFTMAX for layer in model.spec.layers for h in layer.heads
    )


def _decompile_counting(
    model: Transformer, max_classes: int, progress: Progress | None
) -> Decompiled:
    """Symbolic class propagation with counting terms (:mod:`hardsoft.classes.counting`)."""
    table = propagate_counting(model, max_classes, progress)
    outputs = []
    for name, how, pred in table.outputs:
        if progress is not None:
            progress(f"writing the formula of {name}")
        before = size(table.preds.formula(pred))
        formula = exact_constant(table.preds.render(pred), model.spec.alphabet)
        outputs.append(_shrunk(name, how, formula, before, model, progress))
    result = Decompiled(outputs, table, counting_certificate(model, table))
    result.ties = list(table.ties)
    return result


def _shrunk(
    name: str,
    readout: str,
    formula: Formula,
    before: int | None,
    model: Transformer,
    progress: Progress | None,
) -> Output:
    """The output with its formula shrunk by proved steps (:mod:`hardsoft.decompile.shrink`;
    formulas that count are left as they are), and what the shrinking did."""
    if progress is not None:
        progress(f"shrinking the formula of {name} (each step proved)")
    start = time.perf_counter()
    shrunk = shrink_counted(formula, tuple(model.spec.alphabet))
    how = {**shrunk.to_dict(), "seconds": round(time.perf_counter() - start, 3)}
    return Output(name, readout, shrunk.formula, before, size(formula), how)


def _decompile_finite(
    model: Transformer, max_classes: int, progress: Progress | None
) -> Decompiled:
    """Class propagation over finitely many vectors (:mod:`hardsoft.classes.propagation`)."""
    check(model)
    table = propagate(model, max_classes, progress)
    outputs = []
    for name, readout, bits in _readouts(model, table):
        if progress is not None:
            progress(f"writing the formula of {name}")
        written = write_output(table, bits)
        formula = exact_constant(written.formula, model.spec.alphabet)
        outputs.append(_shrunk(name, readout, formula, written.size_before, model, progress))
    result = Decompiled(outputs, table, certificate(model, table))
    result.ties = threshold_ties(model, table)
    return result


def decompile(
    model: Transformer,
    *,
    max_classes: int = DEFAULT_MAX_CLASSES,
    verify_n: int = DEFAULT_VERIFY_N,
    random_words: int = DEFAULT_RANDOM_WORDS,
    random_max_n: int = DEFAULT_RANDOM_MAX_N,
    harden: bool = False,
    seed: int = 0,
    progress: Progress | None = None,
    budget: float | None = None,
    language: str | None = None,
    language_n: int = DEFAULT_LANGUAGE_N,
) -> Decompiled:
    """Decompile a hard-attention ``model`` (unique-hard and/or average-hard heads) into one
    formula per output (docs/decompile.md).

    ``harden`` first turns softmax heads into leftmost hard heads (the result then describes
    the hardened model). The formulas are checked against the model's forward pass on every
    word up to ``verify_n`` and ``random_words`` random words up to ``random_max_n``
    (0 skips the check). ``progress`` is told each stage (a block and its query classes,
    rendering, the check). ``budget`` (seconds) stops the run with one line naming the stage
    once spent. ``language`` compares the first output, read at the last position, with that
    language's oracle on every word up to ``language_n`` (:func:`compare_language`)."""
    max_classes = validate.positive_int(max_classes, "max_classes")
    verify_n = validate.nonneg_int(verify_n, "verify_n")
    random_words = validate.nonneg_int(random_words, "random_words")
    random_max_n = validate.positive_int(random_max_n, "random_max_n")
    language_n = validate.positive_int(language_n, "language_n")
    if budget is not None:
        budget = validate.real(budget, "budget", lo=0, lo_open=True)
    lang = _language(language, model) if language is not None else None
    with time_budget(budget):
        return _decompile(
            model, max_classes, verify_n, random_words, random_max_n, harden, seed,
            _staged(progress), lang, language_n,
        )  # fmt: skip


def _staged(progress: Progress | None) -> Progress:
    """Tell the budget (for its message) and ``progress`` each stage."""

    def tell(what: str) -> None:
        stage(what)
        if progress is not None:
            progress(what)

    return tell


def _decompile(
    model: Transformer,
    max_classes: int,
    verify_n: int,
    random_words: int,
    random_max_n: int,
    harden: bool,
    seed: int,
    progress: Progress,
    lang: Language | None,
    language_n: int,
) -> Decompiled:
    start = time.perf_counter()
    hardened = False
    if harden and any(h.weighting is Weighting.SOFTMAX for l in model.spec.layers for h in l.heads):
        from hardsoft.convert import harden as harden_model

        model = harden_model(model, Weighting.LEFTMOST)
        hardened = True
    if is_counting(model):
        result = _decompile_counting(model, max_classes, progress)
    else:
        result = _decompile_finite(model, max_classes, progress)
    result.hardened = hardened
    if hardened:
        result.certificate["hardened"] = (
            "softmax heads were hardened to leftmost hard heads first: the formulas describe "
            "the hardened model, not the softmax one"
        )
    result.certificate["model_dtype"] = str(next(model.parameters()).dtype)
    result.timings["propagate"] = time.perf_counter() - start
    progress("checking the formulas against the model")
    result.verified = verify(model, result, verify_n, random_words, random_max_n, seed)
    result.timings["check"] = time.perf_counter() - start - result.timings["propagate"]
    if lang is not None:
        progress(f"comparing with the language {lang.name}")
        result.language = compare_language(result.formulas[0], lang, language_n)
    result.seconds = time.perf_counter() - start
    return result


def _language(name: str, model: Transformer) -> Language:
    """The language ``name``, which must be a language (not a task) over the model's
    alphabet."""
    from hardsoft.languages import get_language

    lang = get_language(name)
    if lang.kind != "language":
        raise HardsoftError(f"{lang.name} is a {lang.kind}, not a language: --language compares "
                            "a recognizer's acceptance with a language's membership")  # fmt: skip
    if tuple(lang.alphabet) != tuple(model.spec.alphabet):
        raise HardsoftError(
            f"the language {lang.name} is over {''.join(lang.alphabet)!r}, the model over "
            f"{''.join(model.spec.alphabet)!r}"
        )
    return lang


def exact_constant(formula: Formula, alphabet: tuple[str, ...]) -> Formula:
    """``false`` (``true``) if ``formula`` is false (true) at every position of every word,
    decided exactly for past-time formulas (:func:`hardsoft.logic.equivalence.equivalent`: a
    past formula's value at i is its value at the last position of the prefix of length i);
    otherwise ``formula`` itself."""
    from hardsoft.logic.equivalence import equivalent

    if isinstance(formula, Const):
        return formula
    for value in (False, True):
        try:
            same = equivalent(formula, Const(value), alphabet, max_states=CONSTANT_STATES).equal
        except HardsoftError:  # not a past-time formula, or too many states: undecided
            return formula
        if same:
            return Const(value)
    return formula


def compare_language(formula: Formula, lang: Language, max_n: int) -> dict[str, Any]:
    """The formula (read at the last position) against the language's oracle on every word
    of length 1..m (m <= ``max_n``, lowered so at most 4 × :data:`EXHAUSTIVE_LIMIT` words):
    how many differ, and the shortest (then first in the alphabet's order) that does."""
    from hardsoft.logic.semantics import accepts_batch

    alphabet = tuple(lang.alphabet)
    words_total = differ = 0
    shortest: str | None = None
    checked = 0
    for n in range(1, max_n + 1):
        if words_total + len(alphabet) ** n > 4 * EXHAUSTIVE_LIMIT:
            break
        words = all_words(alphabet, n)
        stage(f"comparing with the language {lang.name} at n = {n}")
        bad = np.flatnonzero(accepts_batch(formula, words, alphabet) != lang.members(words))
        words_total += len(words)
        differ += len(bad)
        if shortest is None and len(bad):
            shortest = words[int(bad[0])]
        checked = n
    out: dict[str, Any] = {
        "name": lang.name,
        "max_n": checked,
        "words": words_total,
        "differences": differ,
        "equal_to_n": differ == 0,
        "shortest_difference": shortest,
    }
    if shortest is not None:
        out["formula_accepts"] = bool(accepts_batch(formula, [shortest], alphabet)[0])
        out["language_accepts"] = bool(lang.member(shortest))
    return out


# ---------------------------------------------------------------------------- verification


CHECK_POSITIONS = 1 << 15
"""Positions per forward pass of the check: many short words go in one batch."""


def model_bits(model: Transformer, words: list[str], n_outputs: int) -> list[np.ndarray]:
    """The model's rounded outputs ``[n, n_outputs]`` on each word (its declared readout).
    Words are batched by length, and every head takes its exact fast path where one applies
    (docs/model.md, "Fast paths"), at short lengths too."""
    import torch

    from hardsoft.model.fastpath import fast_paths

    acc = acceptance_of(model)
    by_len: dict[int, list[int]] = {}
    for idx, w in enumerate(words):
        by_len.setdefault(len(w), []).append(idx)
    outs: list[np.ndarray] = [np.zeros((0, 0))] * len(words)
    with fast_paths("force"):
        for n, idxs in by_len.items():
            budget_check()
            group = model.run_words(
                [words[i] for i in idxs], batch_size=max(1, CHECK_POSITIONS // max(n, 1))
            )
            for i, y in zip(idxs, group):
                outs[i] = y
    bits = []
    for y in outs:
        t = torch.from_numpy(np.asarray(y, dtype=np.float64))
        if acc.kind == "eos":
            bits.append(acc.accept(t).numpy()[:, None])
        else:
            bits.append((t > acc.threshold).numpy()[:, :n_outputs])
    return bits


def exhaustive_words(
    alphabet: tuple[str, ...], max_n: int, limit: int = EXHAUSTIVE_LIMIT
) -> tuple[list[str], int]:
    """Every word of length 1..m over ``alphabet`` with m <= max_n the largest that keeps
    the count within ``limit``; returns (words, m)."""
    from itertools import product

    words: list[str] = []
    m = 0
    for n in range(1, max_n + 1):
        if len(words) + len(alphabet) ** n > limit:
            break
        words.extend("".join(t) for t in product(alphabet, repeat=n))
        m = n
    return words, m


WORDS_PER_LENGTH = 10
"""Random words share their length in groups of this many, so the model and the evaluator
run each group as one batch (one forward pass per length, not per word)."""


def random_words_upto(alphabet: tuple[str, ...], count: int, max_n: int, seed: int) -> list[str]:
    """``count`` uniform random words over ``alphabet``, in groups of :data:`WORDS_PER_LENGTH`
    sharing a length: the lengths are ``max_n`` and uniform draws from 1..max_n (so the
    longest word checked is ``max_n``, and each length is one batch)."""
    rng = np.random.default_rng(seed)
    letters = np.array(alphabet)
    groups = -(-count // WORDS_PER_LENGTH) if count else 0
    lengths = [max_n] + [int(x) for x in rng.integers(1, max_n + 1, size=max(0, groups - 1))]
    words = []
    for k in range(count):
        n = lengths[k // WORDS_PER_LENGTH]
        words.append("".join(letters[rng.integers(0, len(alphabet), size=n)]))
    return words


def agreement(
    model: Transformer, formulas: list[Formula], words: list[str]
) -> tuple[int, int, str | None]:
    """(positions, mismatching positions, first mismatching word) of the formulas (the logic
    evaluator) against the model's rounded outputs."""
    alphabet = model.spec.alphabet
    bits = model_bits(model, words, len(formulas))
    positions = mismatches = 0
    first: str | None = None
    by_len: dict[int, list[int]] = {}
    for idx, w in enumerate(words):
        by_len.setdefault(len(w), []).append(idx)
    for n, idxs in by_len.items():
        if n == 0:
            continue
        group = [words[i] for i in idxs]
        budget_check()
        expected = np.stack([bits[i] for i in idxs])  # [B, n, k]
        for k, f in enumerate(formulas):
            got = evaluate(f, group, alphabet)
            bad = got != expected[:, :, k]
            positions += bad.size
            mismatches += int(bad.sum())
            if bad.any() and first is None:
                first = group[int(np.flatnonzero(bad.any(axis=1))[0])]
    return positions, mismatches, first


def verify(
    model: Transformer,
    result: Decompiled,
    verify_n: int,
    random_words: int,
    random_max_n: int,
    seed: int,
) -> dict[str, Any]:
    """Check the formulas against ``model`` on words (see :func:`decompile`)."""
    words, exhaustive_n = exhaustive_words(model.spec.alphabet, verify_n)
    words += random_words_upto(model.spec.alphabet, random_words, random_max_n, seed)
    shortfall = _shortfall(len(model.spec.alphabet), verify_n, exhaustive_n)
    if not words:
        return {"strings": 0, "positions": 0, "mismatches": 0, "max_n": 0, "exhaustive_n": 0,
                "exhaustive_requested": verify_n, **shortfall}  # fmt: skip
    positions, mismatches, first = agreement(model, result.formulas, words)
    out: dict[str, Any] = {
        "strings": len(words),
        "positions": positions,
        "mismatches": mismatches,
        "max_n": max(len(w) for w in words),
        "exhaustive_n": exhaustive_n,
        "exhaustive_requested": verify_n,
        **shortfall,
    }
    if first is not None:
        out["first_mismatch"] = first if len(first) <= 60 else first[:60] + "..."
    return out


def _shortfall(k: int, requested: int, reached: int) -> dict[str, str]:
    """``{"exhaustive_limited": why}`` when every word up to ``requested`` was asked for
    and only lengths up to ``reached`` fit :data:`EXHAUSTIVE_LIMIT` (said, not hidden)."""
    if reached >= requested:
        return {}
    total = sum(k**n for n in range(1, reached + 2))
    return {
        "exhaustive_limited": (
            f"--verify-n {requested}: every word was checked up to n = {reached} only; with "
            f"n = {reached + 1} there are {total:,} words, more than the {EXHAUSTIVE_LIMIT:,} "
            "enumerated (longer lengths are covered by the random words)"
        )
    }


def equivalence(
    f: Formula,
    g: Formula,
    alphabet: tuple[str, ...],
    max_n: int,
    random_count: int,
    random_max_n: int,
    seed: int = 0,
) -> dict[str, Any]:
    """Compare two formulas with the logic evaluator at every position of every word up to
    ``max_n`` (as far as :data:`EXHAUSTIVE_LIMIT` allows) and of random words up to
    ``random_max_n``: ``{strings, positions, mismatches, exhaustive_n, max_n, first}``."""
    words, exhaustive_n = exhaustive_words(alphabet, max_n, limit=4 * EXHAUSTIVE_LIMIT)
    words += random_words_upto(alphabet, random_count, random_max_n, seed)
    by_len: dict[int, list[str]] = {}
    for w in words:
        by_len.setdefault(len(w), []).append(w)
    positions = mismatches = 0
    first: str | None = None
    for group in by_len.values():
        bad = evaluate(f, group, alphabet) != evaluate(g, group, alphabet)
        positions += bad.size
        mismatches += int(bad.sum())
        if first is None and bad.any():
            first = group[int(np.flatnonzero(bad.any(axis=1))[0])]
    return {
        "strings": len(words),
        "positions": positions,
        "mismatches": mismatches,
        "exhaustive_n": exhaustive_n,
        "max_n": max((len(w) for w in words), default=0),
        "first": first,
    }

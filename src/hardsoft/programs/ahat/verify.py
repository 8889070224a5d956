"""Agreement checks shared by the tests, the experiment and the benchmark: the interpreter, the
AHAT and its softmax simulation against the language oracle (``prefix_reference``), and the
bisection for the largest temperature that still gives exact outputs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hardsoft.languages import get_language
from hardsoft.model.transformer import Transformer
from hardsoft.programs.ahat.dsl import Program
from hardsoft.programs.ahat.interpret import interpret_many
from hardsoft.programs.ahat.soften import soften


@dataclass
class Agreement:
    """Mismatching words per system (a word mismatches if any position differs)."""

    words: int
    interpreter: int
    hard: int
    soft: int
    soft_max_error: float  # max |soft − hard| before rounding
    first_mismatch: str | None = None

    @property
    def ok(self) -> bool:
        return self.interpreter == 0 and self.hard == 0 and self.soft == 0


def model_outputs(model: Transformer, words: list[str], chunk_size: int | None = None) -> list:
    """Output coordinate 0 at every position, per word (float64 numpy)."""
    n_max = max((len(w) for w in words), default=0)
    batch = max(1, 2_000_000 // max(n_max * n_max, 1))
    if chunk_size is None and n_max > 512:
        chunk_size = 512
    return [o[:, 0] for o in model.run_words(words, chunk_size=chunk_size, batch_size=batch)]


def agree(
    program: Program,
    hard: Transformer,
    soft: Transformer | None,
    words: list[str],
    *,
    with_interpreter: bool = True,
    chunk_size: int | None = None,
) -> Agreement:
    """Compare everything with the oracle of ``program.reference`` on ``words``: the
    interpreter and the AHAT exactly, the softmax model after rounding to the nearest integer."""
    lang = get_language(program.reference)
    refs = [lang.prefix_reference(w) for w in words]
    interp = [o[:, 0] for o in interpret_many(program, words)] if with_interpreter else list(refs)
    hard_out = model_outputs(hard, words, chunk_size)
    soft_out = model_outputs(soft, words, chunk_size) if soft is not None else hard_out
    bad_i = bad_h = bad_s = 0
    max_err = 0.0
    first = None
    for w, r, a, h, s in zip(words, refs, interp, hard_out, soft_out):
        mi = not np.array_equal(a, r)
        mh = not np.array_equal(h, r)
        ms = not np.array_equal(np.rint(s), r)
        bad_i += mi
        bad_h += mh
        bad_s += ms
        max_err = max(max_err, float(np.abs(s - h).max()))
        if first is None and (mi or mh or ms):
            first = w
    return Agreement(len(words), bad_i, bad_h, bad_s, max_err, first)


def exact_at(hard: Transformer, words: list[str], tau: float, hard_out=None) -> bool:
    """Does the softmax model at the constant temperature ``tau`` round to the AHAT's outputs?"""
    soft = soften(hard, repr(float(tau)))
    hard_out = hard_out if hard_out is not None else model_outputs(hard, words)
    soft_out = model_outputs(soft, words)
    return all(np.array_equal(np.rint(s), h) for s, h in zip(soft_out, hard_out))


def largest_exact_tau(
    hard: Transformer,
    words: list[str],
    lo: float,
    hi: float = 10.0,
    iters: int = 18,
) -> float:
    """Bisection (in log τ) for the largest τ in [lo, hi] at which the softmax model is still
    exact on ``words`` (assumes exactness is monotone in τ; ``lo`` must be exact)."""
    hard_out = model_outputs(hard, words)
    if exact_at(hard, words, hi, hard_out):
        return hi
    a, b = math.log(lo), math.log(hi)
    for _ in range(iters):
        mid = (a + b) / 2
        if exact_at(hard, words, math.exp(mid), hard_out):
            a = mid
        else:
            b = mid
    return math.exp(a)

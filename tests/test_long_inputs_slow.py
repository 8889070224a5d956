"""Long inputs (slow: ``pytest -m slow``): compiled formulas exact at n = 10⁶ and the DYCK-2
program exact at n = 10⁵, position by position against the logic evaluator / the language
oracle, with the fast attention paths; DYCK's same-depth tie-break exact in float64 at 10⁶.
Times are in benchmarks/results/long_inputs.md (no timed assertions here)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardsoft.check import formula_reference
from hardsoft.compile import compile_formula
from hardsoft.logic import parse

pytestmark = pytest.mark.slow

FAST = {"uniform", "scan", "window", "classes"}


def balanced(n: int, rng: np.random.Generator) -> str:
    """A random balanced bracket string (a random arrangement rotated by the cycle lemma)."""
    steps = rng.permutation(np.repeat([1, -1], n // 2))
    start = int(np.argmin(np.cumsum(steps))) + 1
    steps = np.roll(steps, -start)
    return "".join("(" if s > 0 else ")" for s in steps)


@pytest.mark.parametrize(
    "formula,alphabet",
    [
        ("MOD(2,1)(#<['1'])", "01"),
        ("!E(#<[Y '1'] = #>['1'])", "01"),
        ("#<['1'] > #<['0']", "01"),
        ("!E (#<['('] < #<[')']) & #<['('] = #<[')']", "()"),
    ],
)
def test_compiled_formula_exact_at_a_million(formula: str, alphabet: str) -> None:
    n = 10**6
    model = compile_formula(formula, alphabet, target="soft-temperature")
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list(alphabet), n))]
    if alphabet == "()":
        words += [balanced(n, rng), "(" * (n // 2) + ")" * (n // 2)]
    reference = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)
    for word in words:
        ids = np.array([[alphabet.index(c) for c in word]])
        with torch.no_grad():
            out = model(torch.from_numpy(ids))
        assert out.paths is not None and set(out.paths.values()) <= FAST
        got = out.outputs[0, :, 0].numpy() > 0.5
        assert np.array_equal(got, reference(ids)[0].astype(bool))


def test_dyck2_program_exact_at_1e5() -> None:
    from hardsoft.languages import get_language
    from hardsoft.programs.ahat.build import build

    n = 10**5
    model = build("dyck", 2, "soft-temperature").model
    lang = get_language("dyck2")
    rng = np.random.default_rng(1)
    pairs = [("()", "[]")[int(b)] for b in rng.integers(0, 2, n // 2)]
    deep = "".join(p[0] for p in pairs) + "".join(p[1] for p in reversed(pairs))
    mixed = lang.sample_balanced(n, 1, rng)[0][0]
    for word in (deep, mixed):
        with torch.no_grad():
            out = model(model.encode([word]))
        assert out.paths is not None and set(out.paths.values()) <= FAST
        got = np.rint(out.outputs[0, :, 0].numpy())
        assert np.array_equal(got, np.asarray(lang.prefix_reference(word)))


def test_dyck_same_depth_tie_break_is_exact_in_float64_at_a_million() -> None:
    """On the worst string for the tie-break, the float64 scores of the same-depth head pick
    the true match and keep the exact gap 1/(2n)·(1/τ) to 10⁻⁴, in either summation order."""
    from hardsoft.programs.ahat.build import build

    n = 10**6
    b = build("dyck", 2, "soft-temperature", sampled_lengths=(32,))
    model = b.model
    info = next(h for h in b.compiled.heads if h.label == "same_depth")
    a = n // 4
    pairs = (n - 2 * a) // 2
    word = "(" * a + "()" * pairs + ")" * a
    with torch.no_grad():
        x = model.embed(model.encode([word]))
        for block in model.blocks[: info.layer]:
            x = block(x)
        head = model.blocks[info.layer].heads[info.head]
        q, k = (x @ head.W_Q)[0], (x @ head.W_K)[0]
    scale = head.score_scale(n)
    for t in np.linspace(1, pairs - 1, 16).astype(int):  # the ")" of pair t (0-based)
        i = a + 1 + 2 * int(t)
        for s in ((k[:i] @ q[i]) * scale, (k[:i].flip(-1) @ q[i].flip(-1)) * scale):
            top = torch.topk(s, 2)
            assert int(top.indices[0]) == i - 1
            gap = float(top.values[0] - top.values[1])
            assert abs(gap / (scale / (2 * n)) - 1) < 1e-4

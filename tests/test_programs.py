"""AHAT programs: the interpreter, the compiled AHAT and its softmax simulation against the
language oracles (hardsoft.languages), the uniform–tieless checker, the certificate and CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from hardsoft.cli import app
from hardsoft.errors import HardsoftError
from hardsoft.languages import get_language
from hardsoft.model.io import load_model, read_metadata
from hardsoft.model.spec import eval_tau
from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.build import build
from hardsoft.programs.ahat.compile import compile_program
from hardsoft.programs.ahat.interpret import interpret, interpret_many
from hardsoft.programs.ahat.soften import certificate, soften
from hardsoft.programs.ahat.tieless import check_tieless, sample_words
from hardsoft.programs.ahat.verify import agree, largest_exact_tau

# (program, k, exhaustive max length) for the fast slice; tests/test_programs_slow.py goes
# to DYCK-2 length 8 and beyond
CASES = [
    ("dyck", 1, 10),
    ("dyck", 2, 6),
    ("dyck", 3, 4),
    ("flipflop", None, 6),
    ("induction-head", None, 5),
    ("khop", 2, 5),
    ("khop", 3, 5),
]

_BUILT: dict = {}


def built(name: str, k: int | None):
    key = (name, k)
    if key not in _BUILT:
        _BUILT[key] = build(name, k, "soft-temperature", exhaustive_up_to=4, sampled_lengths=(40,))
    return _BUILT[key]


def all_words(alphabet, max_len: int) -> list[str]:
    return [
        "".join(t) for n in range(1, max_len + 1) for t in itertools.product(alphabet, repeat=n)
    ]


@pytest.mark.parametrize("name,k,max_len", CASES)
def test_exhaustive_agreement_with_oracle(name: str, k: int | None, max_len: int) -> None:
    b = built(name, k)
    words = all_words(b.compiled.program.alphabet, max_len)
    a = agree(b.compiled.program, b.compiled.model, b.model, words)
    assert a.words == len(words)
    assert (a.interpreter, a.hard, a.soft) == (0, 0, 0), a.first_mismatch
    assert a.soft_max_error <= b.certificate["eps"]


@pytest.mark.parametrize("name,k,_", CASES)
def test_random_length_1000(name: str, k: int | None, _: int) -> None:
    b = built(name, k)
    prog = b.compiled.program
    words = sample_words(prog.reference, prog.alphabet, 1000, 2, seed=1000)
    lang = get_language(prog.reference)
    if lang.kind == "language":  # one member, one near miss
        assert sorted(lang.members(words).tolist()) == [False, True]
    a = agree(prog, b.compiled.model, b.model, words)
    assert (a.interpreter, a.hard, a.soft) == (0, 0, 0), a.first_mismatch


@pytest.mark.floatcmp
def test_outputs_are_exact_integers_and_use_the_language_alphabet() -> None:
    for name, k, _ in CASES:
        b = built(name, k)
        lang = get_language(b.compiled.program.reference)
        assert tuple(b.model.spec.alphabet) == tuple(lang.alphabet)
        words = sample_words(lang.name, lang.alphabet, 30, 4, seed=3)
        for out in b.compiled.model.run_words(words):
            assert np.array_equal(out[:, 0], np.rint(out[:, 0]))


def test_hard_model_is_average_hard_and_soft_model_is_softmax_with_same_weights() -> None:
    b = built("dyck", 2)
    hard, soft = b.compiled.model, b.model
    assert {h.weighting for layer in hard.spec.layers for h in layer.heads} == {"average"}
    assert {h.weighting for layer in soft.spec.layers for h in layer.heads} == {"softmax"}
    assert {h.tau for layer in soft.spec.layers for h in layer.heads} == {b.certificate["tau"]}
    for (k1, v1), (k2, v2) in zip(hard.state_dict().items(), soft.state_dict().items()):
        assert k1 == k2 and torch.equal(v1, v2)


# ---- DSL helpers against plain arithmetic --------------------------------------------------


def _eval_on(sop_builder, word: str, alphabet=("0", "1")) -> np.ndarray:
    out = sop_builder()
    prog = dsl.Program("t", alphabet, [dsl.as_linear(out)], gap="1")
    return interpret(prog, word)[:, 0]


def test_dsl_boolean_and_integer_helpers() -> None:
    word = "0110100111"
    bits = np.array([int(c) for c in word])
    prevbits = np.concatenate([[0], bits[:-1]])
    one = dsl.Token("1")
    before = lambda: dsl.prev([one]).value(0)  # noqa: E731
    assert np.array_equal(_eval_on(before, word), prevbits)
    assert np.array_equal(_eval_on(lambda: dsl.and_(one, before()), word), bits & prevbits)
    assert np.array_equal(_eval_on(lambda: dsl.or_(one, before()), word), bits | prevbits)
    assert np.array_equal(_eval_on(lambda: dsl.xor(one, before()), word), bits ^ prevbits)
    counts = np.cumsum(bits)
    assert np.array_equal(_eval_on(lambda: dsl.count(one), word), counts)
    assert np.array_equal(_eval_on(lambda: dsl.square(dsl.count(one)), word), counts**2)
    i = np.arange(1, len(word) + 1)
    diff = 2 * counts - i
    assert np.array_equal(
        _eval_on(lambda: dsl.step(2.0 * dsl.count(one) - dsl.Position("i"), 0), word),
        (diff >= 0).astype(int),
    )
    assert np.array_equal(
        _eval_on(lambda: dsl.is_zero(2.0 * dsl.count(one) - dsl.Position("i")), word),
        (diff == 0).astype(int),
    )
    assert np.array_equal(_eval_on(lambda: dsl.exists(one), word), (counts > 0).astype(int))
    assert np.allclose(_eval_on(lambda: dsl.mean(one), word), counts / i)


def test_dsl_rejects_bad_arguments() -> None:
    with pytest.raises(HardsoftError):
        dsl.attend([1.0], [], [1.0])
    with pytest.raises(HardsoftError):
        dsl.attend([], [], [1.0], mask="sideways")
    with pytest.raises(HardsoftError):
        dsl.attend([], [], [1.0], tie="middle")
    with pytest.raises(HardsoftError):
        dsl.Token("a") * dsl.Token("b")


def test_compiled_small_program_matches_interpreter_on_all_masks_and_ties() -> None:
    """A generic program (not a shipped one): every mask × tie rule, compiled vs interpreted."""
    a, b = dsl.Token("a"), dsl.Token("b")
    outs = []
    for mask in ("none", "future", "strict-future", "past", "strict-past"):
        for tie in ("leftmost", "rightmost"):
            head = dsl.attend([1.0], [a], [dsl.Position("i")], mask=mask, tie=tie)
            outs.append(head.value(0, default=-1.0))
        outs.append(dsl.mean(b, mask=mask))
    prog = dsl.Program("generic", ("a", "b"), [dsl.identity(o).lin() for o in outs], "1/(2*n)")
    model = compile_program(prog).model
    words = all_words(("a", "b"), 7)
    got = model.run_words(words)
    want = interpret_many(prog, words)
    for w, g, r in zip(words, got, want):
        assert np.allclose(g, r, rtol=0, atol=1e-12), w
    # and the interpreter's leftmost/rightmost semantics against brute force on one word
    w = "babbaab"
    pos = [j + 1 for j, c in enumerate(w) if c == "a"]
    res = interpret(prog, w)
    for i in range(1, len(w) + 1):
        assert res[i - 1, 0] == min(pos) and res[i - 1, 1] == max(pos)  # mask none
        left = [j for j in pos if j < i]
        assert res[i - 1, 7] == (max(left) if left else (i - 1 if i > 1 else -1))


# ---- the uniform-tieless checker -----------------------------------------------------------


def test_checker_reports_a_tie_with_a_concrete_witness() -> None:
    a = dsl.Token("a")
    tied = dsl.attend([1.0], [a], [dsl.Position("i")], mask="future", tie="average", label="avg_a")
    prog = dsl.Program("tied", ("a", "b"), [dsl.identity(tied.value(0)).lin()], gap="1/n")
    model = compile_program(prog).model
    report = check_tieless(model, exhaustive_up_to=4)
    assert not report.uniform_tieless
    head = next(h for h in report.heads if h.label == "avg_a")
    assert head.kind == "tied"
    w, i, keys = head.tie["word"], head.tie["position"], head.tie["tied_keys"]
    # brute force: the scores [w_j = a] for j <= i really tie at the maximum on those keys
    scores = [1.0 if w[j - 1] == "a" else 0.0 for j in range(1, i + 1)]
    best = [j for j in range(1, i + 1) if scores[j - 1] == max(scores)]
    assert len(best) >= 2 and keys == best[: len(keys)]
    with pytest.raises(HardsoftError, match="neither uniform nor tieless"):
        from hardsoft.programs.ahat import build as build_mod

        original = build_mod.get_program
        build_mod.get_program = lambda name, k: prog
        try:
            build_mod.build("tied", None, "average-hard")
        finally:
            build_mod.get_program = original


def test_checker_gaps_respect_the_declared_gap_and_uniform_heads_are_found() -> None:
    b = built("dyck", 2)
    report = b.report
    assert report.uniform_tieless and not report.declared_violations()
    kinds = {h.label: h.kind for h in report.heads}
    assert kinds["lcount.mean"] == "uniform"
    assert kinds["same_depth"] == "tieless"
    for n in report.lengths:
        assert report.gamma(n) >= eval_tau("1/(2*n)", n) * (1 - 1e-9)
    # brute-force gap of the same-depth head on one word: with d + 1 = s·q + r, s = ⌈√n⌉,
    # the score is −(q_i − q_j)² − (r_i − r_j)² + 3j/(4n) (the tie-break exceeds the declared
    # gap 1/(2n) by half: headroom against rounding)
    w = "([])[(])"
    n = len(w)
    sub = check_tieless(b.compiled.model, exhaustive_up_to=0, sampled={n: [w]})
    h = next(x for x in sub.heads if x.label == "same_depth")
    height = np.cumsum([1 if c in "([" else -1 for c in w])
    depth = np.maximum(height + np.array([c in ")]" for c in w]), 0)
    base = math.ceil(math.sqrt(n))
    quo, rem = (depth + 1) // base, (depth + 1) % base

    def score(i: int, j: int) -> float:
        dq, dr = quo[i - 1] - quo[j - 1], rem[i - 1] - rem[j - 1]
        return -(dq**2) - dr**2 + 3 * j / (4 * n)

    gaps = []
    for i in range(2, n + 1):
        s = sorted(score(i, j) for j in range(1, i))
        if len(s) > 1:
            gaps.append(s[-1] - s[-2])
    assert math.isclose(h.gaps[n], min(gaps), rel_tol=1e-9)


# ---- the certificate and the conversion ----------------------------------------------------


def test_certificate_tau_is_below_the_measured_largest_exact_tau() -> None:
    b = built("dyck", 1)
    prog = b.compiled.program
    words = sample_words(prog.reference, prog.alphabet, 32, 4, seed=5)
    tau_cert = eval_tau(b.certificate["tau"], 32)
    tau_exact = largest_exact_tau(b.compiled.model, words, lo=tau_cert, iters=8)
    assert tau_cert <= tau_exact
    assert agree(prog, b.compiled.model, soften(b.compiled.model, repr(tau_cert)), words).ok


def test_certificate_contents_and_monotone_tau() -> None:
    b = built("flipflop", None)
    c = b.certificate
    for key in ("gap", "tau", "eps", "depth", "constants", "values"):
        assert key in c
    assert 0 < c["eps"] < 0.5
    taus = [eval_tau(c["tau"], n) for n in (10, 100, 1000, 10000)]
    assert all(t1 > t2 > 0 for t1, t2 in zip(taus, taus[1:]))
    for n in (10, 100, 1000):
        assert eval_tau(c["tau"], n) < eval_tau(c["gap"], n)
    with pytest.raises(HardsoftError):
        certificate(b.compiled.model, c["gap"], eps=0.6)


# ---- command line ---------------------------------------------------------------------------


def test_cli_list_and_build(tmp_path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["program", "list", "--json"])
    assert res.exit_code == 0
    names = [p["name"] for p in json.loads(res.stdout)["programs"]]
    assert names == ["induction-head", "khop", "flipflop", "dyck", "parity"]
    out = tmp_path / "m.safetensors"
    res = runner.invoke(
        app,
        ["program", "dyck", "--k", "2", "--target", "soft-temperature", "-o", str(out), "--json"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["certificate"]["tau"]
    meta = read_metadata(out)["meta"]
    assert meta["certificate"]["tau"] == summary["certificate"]["tau"]
    model = load_model(out)
    lang = get_language("dyck2")
    words = sample_words("dyck2", lang.alphabet, 50, 6, seed=9)
    for w, o in zip(words, model.run_words(words)):
        assert np.array_equal(np.rint(o[:, 0]), lang.prefix_reference(w))
    res = runner.invoke(app, ["program", "dyck", "--target", "average-hard", "-o", str(out)])
    assert res.exit_code != 0


@pytest.mark.parametrize(
    "args",
    [
        ["program", "nosuch", "-o", "x.safetensors"],
        ["program", "dyck", "--k", "9", "-o", "x.safetensors"],
        ["program", "khop", "-o", "x.safetensors"],
        ["program", "flipflop", "--target", "soft", "-o", "x.safetensors"],
        ["program", "flipflop"],
    ],
)
def test_cli_errors_are_one_line_hardsoft_errors(args) -> None:
    res = CliRunner().invoke(app, args)
    assert res.exit_code != 0
    assert isinstance(res.exception, HardsoftError)
    assert "\n" not in str(res.exception)


def test_cli_error_exit_code_and_message(tmp_path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from hardsoft.cli import main; main()",
            "program",
            "khop",
            "-o",
            "m",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_models_pass_hardsoft_check_against_the_language(tmp_path) -> None:
    """The saved models work with ``hardsoft check MODEL --language NAME`` (another team's
    checker reading the language oracle)."""
    runner = CliRunner()
    for name, k, lang in (("dyck", 1, "dyck1"), ("khop", 2, "khop2")):
        path = tmp_path / f"{lang}.safetensors"
        args = ["program", name, "--target", "soft-temperature", "-o", str(path)]
        res = runner.invoke(app, [*args, "--k", str(k)])
        assert res.exit_code == 0, res.output
        res = runner.invoke(
            app,
            ["check", str(path), "--language", lang, "--exhaustive-max-n", "6",
             "--random-n", "64", "--samples", "6", "--json"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        report = json.loads(res.stdout)
        assert report["mismatches"] == 0 and report["checked_strings"] > 6

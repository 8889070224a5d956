"""The fast attention paths (hardsoft.model.fastpath) against the dense reference path, head by
head, for every weighting and mask, and compiled models against the logic evaluator."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardsoft.model import HeadSpec, LayerSpec, ModelSpec, Transformer
from hardsoft.model.fastpath import dense_reference, fast_paths, unique_rows
from hardsoft.model.scan import prefix_sum, segmented_scan
from hardsoft.model.spec import MASKS, WEIGHTINGS

pytestmark = pytest.mark.floatcmp  # float comparisons: make test-cpus runs them per CPU path

FEATURES = ("1", "i", "i^2", "i/n", "(-1)^i")
TOK, POS = 0, 2  # residual: tok:0, tok:1, then one coordinate per feature
ONE, I, I2, IN, SIGN = (POS + k for k in range(5))


def one_head_model(weighting: str, mask: str, d_head: int, tau: str | None = None) -> Transformer:
    """One layer, one head, residual = tokens + raw position features (+ 2 spare)."""
    spec = ModelSpec(
        alphabet=("0", "1"),
        d_model=2 + len(FEATURES) + 2,
        layers=(LayerSpec(heads=(HeadSpec(weighting, mask, tau, d_head, 2),)),),
        position_features=FEATURES,
    )
    model = Transformer(spec, dtype=torch.float64)
    with torch.no_grad():
        model.W_E[0, TOK], model.W_E[1, TOK + 1] = 1.0, 1.0
        for k in range(len(FEATURES)):
            model.W_pos[k, POS + k] = 1.0
        model.W_U[TOK + 1, 0] = 1.0
    return model


def structured(kind: str, weighting: str, mask: str, seed: int = 0) -> Transformer:
    """A head whose structure makes the fast path ``kind`` apply."""
    g = torch.Generator().manual_seed(seed)
    soft = weighting == "softmax"
    model = one_head_model(weighting, mask, 2, "1/(4*n)" if soft and kind != "uniform" else None)
    head = model.blocks[0].heads[0]
    with torch.no_grad():
        head.W_V.normal_(generator=g)
        head.W_O[:, 7:9] = torch.eye(2, dtype=torch.float64)
        if kind == "scan":  # constant query, key from tokens and i/n
            head.W_Q[ONE] = torch.tensor([1.0, 0.5])
            head.W_K[TOK : TOK + 2] = torch.randint(-2, 3, (2, 2), generator=g).double()
            head.W_K[IN] = torch.tensor([0.5, 0.0])
        elif kind == "window":  # score 2·t·j − j² with t = 3 + 2·[w_i = 1]
            head.W_Q[ONE] = torch.tensor([6.0, -1.0])
            head.W_Q[TOK + 1] = torch.tensor([4.0, 0.0])
            head.W_K[I, 0], head.W_K[I2, 1] = 1.0, 1.0
        elif kind == "classes":  # keys from tokens and (-1)^j: four classes
            # integer weights: equal keys get bitwise equal scores in every path (the dense
            # matmul may round equal dot products differently in different columns)
            head.W_Q.copy_(torch.randint(-2, 3, head.W_Q.shape, generator=g))
            head.W_K[TOK : TOK + 2] = torch.randint(-2, 3, (2, 2), generator=g).double()
            head.W_K[SIGN] = torch.tensor([1.0, -1.0])
    return model


def head_outputs(model: Transformer, tokens: torch.Tensor, mode: str):
    with torch.no_grad(), fast_paths(mode):
        out = model(tokens, trace=True)
    assert out.trace is not None and out.paths is not None
    return out.trace["blocks.0.attn.0.out"], out.paths["blocks.0.attn.0"]


@pytest.mark.parametrize("kind", ["uniform", "scan", "window", "classes"])
@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("mask", MASKS)
def test_fast_path_equals_dense(kind: str, weighting: str, mask: str) -> None:
    model = structured(kind, weighting, mask)
    rng = np.random.default_rng(1)
    for n in (1, 2, 9, 40):
        tokens = torch.from_numpy(rng.integers(0, 2, size=(3, n)))
        fast, path = head_outputs(model, tokens, "force")
        dense, dense_path = head_outputs(model, tokens, "off")
        # one query, or all queries equal, is the query-independent case
        assert path == kind or (path == "scan" and n < 40), path
        assert dense_path == "dense"
        torch.testing.assert_close(fast, dense, rtol=1e-12, atol=1e-12)


def test_window_with_a_wide_softmax_falls_back() -> None:
    """A soft score (τ = 1, j/n keys) has no narrow window under the auto policy: dense runs."""
    model = one_head_model("softmax", "future", 1)
    head = model.blocks[0].heads[0]
    with torch.no_grad():
        head.W_Q[TOK + 1, 0], head.W_K[IN, 0] = 1.0, 1.0
        head.W_V[TOK + 1, 0] = 1.0
    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, 2, size=(1, 1200)))
    with torch.no_grad():
        out = model(tokens)
    assert out.paths == {"blocks.0.attn.0": "dense"}  # softmax streams only beyond 4096


def test_auto_policy_keeps_dense_for_short_inputs_and_with_autograd() -> None:
    """Short inputs run dense, except uniform heads: their prefix sums of integer values are
    exact at every n (the float limits of compiled programs count on it)."""
    model = structured("scan", "average", "future")
    uniform = structured("uniform", "softmax", "future")
    short = torch.zeros(1, 20, dtype=torch.long)
    long = torch.zeros(1, 600, dtype=torch.long)
    with torch.no_grad():
        assert model(short).paths == {"blocks.0.attn.0": "dense"}
        assert model(long).paths == {"blocks.0.attn.0": "scan"}
        assert uniform(short).paths == {"blocks.0.attn.0": "uniform"}
        assert uniform(long).paths == {"blocks.0.attn.0": "uniform"}
        with dense_reference():
            assert uniform(long).paths == {"blocks.0.attn.0": "dense"}
    assert uniform(long).paths == {"blocks.0.attn.0": "dense"}  # parameters require grad


def test_fast_paths_rejects_unknown_mode() -> None:
    from hardsoft.errors import HardsoftError

    with pytest.raises(HardsoftError, match="fast-path mode"), fast_paths("sometimes"):
        pass


@pytest.mark.parametrize("weighting", WEIGHTINGS)
def test_segmented_scan_matches_a_loop(weighting: str) -> None:
    rng = np.random.default_rng(3)
    n, d = 37, 2
    scores = torch.from_numpy(rng.integers(-3, 3, size=(2, n)).astype(float))
    values = torch.from_numpy(rng.normal(size=(2, n, d)))
    segments = torch.from_numpy(np.sort(rng.integers(0, 5, size=(2, n)), axis=1))
    state = segmented_scan(scores, values, weighting, segments=segments)
    from hardsoft.model.attention import weights_from_scores
    from hardsoft.model.scan import finish

    got = finish(state, weighting)
    for b in range(2):
        for m in range(n):
            keep = (segments[b] == segments[b, m]) & (torch.arange(n) <= m)
            w = weights_from_scores(scores[b][None, None], keep[None, None], weighting)[0, 0]
            torch.testing.assert_close(got[b, m], w @ values[b], rtol=1e-12, atol=1e-12)


def test_prefix_sum_is_a_cumsum() -> None:
    x = torch.from_numpy(np.random.default_rng(0).normal(size=(2, 1001, 3)))
    torch.testing.assert_close(prefix_sum(x), x.cumsum(1), rtol=1e-12, atol=1e-12)
    ones = torch.ones(1, 10**5, 1, dtype=torch.float64)
    # integers below 2^53: exact in any order of summation, so bitwise on any IEEE machine
    assert torch.equal(prefix_sum(ones)[0, :, 0], torch.arange(1, 10**5 + 1).double())


def test_unique_rows_groups_equal_rows() -> None:
    rng = np.random.default_rng(0)
    base = torch.from_numpy(rng.normal(size=(5, 3)))
    pick = torch.from_numpy(rng.integers(0, 5, size=200))
    rows, inv = unique_rows(base[pick])
    assert len(rows) == len(set(pick.tolist()))
    assert torch.equal(rows[inv], base[pick])  # rows selected, not computed: exact


FORMULAS = [
    ("MOD(2,1)(#<['1'])", "01"),
    ("!E(#<[Y '1'] = #>['1'])", "01"),
    ("#<['1'] > #<['0']", "01"),
    ("!E (#<['('] < #<[')']) & #<['('] = #<[')']", "()"),
]


@pytest.mark.parametrize("formula,alphabet", FORMULAS)
def test_compiled_formulas_take_fast_paths_and_stay_exact(formula: str, alphabet: str) -> None:
    """At n = 700 (auto policy) every head of these compiled models takes a fast path; the
    outputs equal the dense path's up to rounding and the evaluator's after rounding."""
    from hardsoft.check import formula_reference
    from hardsoft.compile import compile_formula
    from hardsoft.logic import parse

    model = compile_formula(formula, alphabet, target="soft-temperature")
    ids = np.random.default_rng(0).integers(0, 2, size=(2, 700))
    tokens = torch.from_numpy(ids)
    with torch.no_grad():
        fast = model(tokens, trace=True)
        with dense_reference():
            dense = model(tokens, trace=True)
    assert fast.paths is not None and fast.trace is not None and dense.trace is not None
    assert set(fast.paths.values()) <= {"uniform", "scan", "window", "classes"}
    for name in fast.paths:
        a, b = fast.trace[f"{name}.out"], dense.trace[f"{name}.out"]
        assert float((a - b).abs().max()) <= 1e-9 * max(1.0, float(b.abs().max())), name
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)(ids)
    assert np.array_equal(fast.outputs[..., 0].numpy() > 0.5, ref.astype(bool))


def test_cli_run_dense_flag_and_paths(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from hardsoft.cli import app
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    path = tmp_path / "parity.safetensors"
    save_model(compile_formula("MOD(2,1)(#<['1'])", "01", target="soft-temperature"), path)
    word = "".join(np.random.default_rng(0).choice(list("01"), 600))
    runner = CliRunner()
    results = {}
    for flag in ([], ["--dense"]):
        res = runner.invoke(
            app, ["run", str(path), "--input", word, "--input", "0110", "--json", *flag]
        )
        assert res.exit_code == 0, res.output
        results[bool(flag)] = json.loads(res.output)
    fast, dense = results[False], results[True]
    assert set(fast["attention_paths"]) == {"4", "600"}
    assert fast["attention_paths"]["600"]["blocks.1.attn.0"] == "window"
    assert set(dense["attention_paths"]["600"].values()) == {"dense"}
    for a, b in zip(fast["results"], dense["results"]):
        assert a["accept"] == b["accept"]
        assert np.allclose(a["outputs"], b["outputs"], rtol=0, atol=1e-9)
    parity = np.cumsum([c == "1" for c in word]) % 2 == 1
    assert np.array_equal(np.array(fast["results"][0]["outputs"])[:, 0] > 0.5, parity)


def test_default_threads_respects_the_environment(monkeypatch) -> None:
    from hardsoft.errors import HardsoftError
    from hardsoft.runtime import available_cores, default_threads

    monkeypatch.delenv("HARDSOFT_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("HARDSOFT_THREADS", "2")  # the more specific variable wins
    assert default_threads() == 2
    monkeypatch.delenv("HARDSOFT_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert default_threads() == 1 <= available_cores()  # one thread unless asked
    monkeypatch.setenv("HARDSOFT_THREADS", "zero")
    with pytest.raises(HardsoftError, match="HARDSOFT_THREADS"):
        default_threads()


def test_the_command_starts_with_one_thread_and_sleeping_openmp_threads() -> None:
    """In a fresh process with nothing set: one intra-op thread, OMP_WAIT_POLICY=PASSIVE set
    before torch loads; an explicit setting in the environment wins."""
    import os
    import subprocess
    import sys

    probe = (
        "import os, hardsoft.cli, torch; from hardsoft.runtime import configure_threads; "
        "configure_threads(); print(torch.get_num_threads(), os.environ.get('OMP_WAIT_POLICY'))"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_NUM_THREADS", "HARDSOFT_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
    }
    run = [sys.executable, "-c", probe]
    out = subprocess.run(run, env=clean, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "PASSIVE"]
    mine = clean | {"HARDSOFT_THREADS": "2", "OMP_WAIT_POLICY": "ACTIVE"}
    out = subprocess.run(run, env=mine, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["2", "ACTIVE"]


@pytest.mark.parametrize("formula,alphabet", FORMULAS[:2])
def test_hard_target_formulas_take_fast_paths_and_stay_exact(formula: str, alphabet: str) -> None:
    """The hard target (unique-hard and average-hard heads) through the fast paths."""
    from hardsoft.check import formula_reference
    from hardsoft.compile import compile_formula
    from hardsoft.logic import parse

    model = compile_formula(formula, alphabet, target="hard")
    ids = np.random.default_rng(1).integers(0, 2, size=(2, 600))
    with torch.no_grad():
        fast = model(torch.from_numpy(ids))
        with dense_reference():
            dense = model(torch.from_numpy(ids))
    assert fast.paths is not None and set(fast.paths.values()) - {"dense", "chunked"}
    ref = formula_reference(parse(formula, alphabet=tuple(alphabet)), alphabet)(ids)
    assert np.array_equal(fast.outputs[..., 0].numpy() > 0.5, ref.astype(bool))
    # the fast paths average by prefix sums, the dense path by weights @ values: the same
    # numbers up to rounding, not bitwise (docs/model.md, "What is bitwise")
    torch.testing.assert_close(fast.outputs, dense.outputs, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def dyck2():
    from hardsoft.programs.ahat.build import build

    return build("dyck", 2, "soft-temperature", sampled_lengths=(32,))


def dyck_words(n: int) -> list[str]:
    from hardsoft.languages import get_language

    rng = np.random.default_rng(2)
    pairs = [("()", "[]")[int(b)] for b in rng.integers(0, 2, n // 2)]
    deep = "".join(p[0] for p in pairs) + "".join(p[1] for p in reversed(pairs))
    broken = deep[: n // 2] + ("]" if deep[n // 2] == ")" else ")") + deep[n // 2 + 1 :]
    return [deep, broken, get_language("dyck2").sample_balanced(n, 1, rng)[0][0]]


@pytest.mark.parametrize("which", ["average-hard", "soft-temperature"])
def test_dyck2_program_fast_paths_equal_dense_and_oracle(dyck2, which: str) -> None:
    """DYCK-2 at n = 600: the same-depth head has ~300 key classes, so it takes the class path
    with the candidate search; AHAT and softmax model equal the dense path and the oracle."""
    from hardsoft.languages import get_language

    model = dyck2.compiled.model if which == "average-hard" else dyck2.model
    lang = get_language("dyck2")
    for word in dyck_words(600):
        tokens = model.encode([word])
        with torch.no_grad():
            fast = model(tokens, trace=True)
            with dense_reference():
                dense = model(tokens, trace=True)
        assert fast.paths is not None and fast.trace is not None and dense.trace is not None
        same = next(
            f"blocks.{h.layer}.attn.{h.head}"
            for h in dyck2.compiled.heads
            if h.label == "same_depth"
        )
        assert fast.paths[same] == "classes"
        assert set(fast.paths.values()) <= {"uniform", "scan", "window", "classes"}
        for name in fast.paths:
            a, b = fast.trace[f"{name}.out"], dense.trace[f"{name}.out"]
            assert float((a - b).abs().max()) <= 1e-9 * max(1.0, float(b.abs().max())), name
        ref = np.asarray(lang.prefix_reference(word))
        assert np.array_equal(np.rint(fast.outputs[0, :, 0].numpy()), ref)


def test_cli_check_reports_paths_and_dense_flag(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from hardsoft.cli import app
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    path = tmp_path / "majority.safetensors"
    save_model(compile_formula("#<['1'] > #<['0']", "01", target="soft-temperature"), path)
    runner = CliRunner()
    base = ["check", str(path), "--formula", "#<['1'] > #<['0']", "--exhaustive-max-n", "3"]
    base += ["--random-n", "700", "--samples", "2", "--json"]
    fast = json.loads(runner.invoke(app, base).output)
    dense = json.loads(runner.invoke(app, [*base, "--dense"]).output)
    assert fast["mismatches"] == dense["mismatches"] == 0
    assert set(fast["attention_paths"]["700"].values()) == {"uniform", "classes"}
    assert set(dense["attention_paths"]["700"].values()) == {"dense"}
    short_fast = fast["attention_paths"]["3"]  # short: uniform heads still take their path
    assert set(short_fast.values()) == {"uniform", "dense"}
    assert set(dense["attention_paths"]["3"].values()) == {"dense"}


@pytest.mark.parametrize("mask", MASKS)
def test_softmax_one_key_changed_equals_recomputing(mask: str) -> None:
    """The O(n·d) update for one changed key/value equals the dense head on the variant
    (rows it cannot update reliably are flagged, and include the changed position)."""
    from hardsoft.model.attention import attend, attention_state, softmax_one_key_changed

    g = torch.Generator().manual_seed(0)
    n, d, dv, B = 50, 3, 2, 6
    q, k = (torch.randn(1, n, d, generator=g, dtype=torch.float64) * 2 for _ in range(2))
    v = torch.randn(1, n, dv, generator=g, dtype=torch.float64)
    i = torch.randint(0, n, (B,), generator=g)
    k_new = torch.randn(B, d, generator=g, dtype=torch.float64) * 2
    v_new = torch.randn(B, dv, generator=g, dtype=torch.float64)
    state = attention_state(q, k, v, "softmax", mask, 0.7, chunk=16)
    out, redo = softmax_one_key_changed(state, q, k[0, i], v[0, i], k_new, v_new, i, mask, 0.7)
    for b in range(B):
        k2, v2 = k.clone(), v.clone()
        k2[0, i[b]], v2[0, i[b]] = k_new[b], v_new[b]
        ref, _ = attend(q, k2, v2, "softmax", mask, 0.7, use_sdpa=False)
        assert bool(redo[b, i[b]])
        keep = ~redo[b]
        torch.testing.assert_close(out[b][keep], ref[0][keep], rtol=1e-10, atol=1e-12)

"""Softening hard models and hardening soft ones (hardsoft.convert, docs/soften.md).

Ground truth is independent of the construction: softened models are compared with the hard
model they simulate (measured |soft − hard| against the certified bound) and compiled formulas
with the logic evaluator; witnesses are checked by running the models.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import hardsoft
from hardsoft.check import check_formula
from hardsoft.compile import compile_formula
from hardsoft.convert import harden, soften
from hardsoft.convert.bound import error_bound
from hardsoft.convert.gaps import parse_gap
from hardsoft.convert.grid import dyadic_exponents, feature_grid
from hardsoft.convert.norms import feature_sup
from hardsoft.errors import HardsoftError
from hardsoft.model import load_model, random_model, save_model
from hardsoft.model.readout import Acceptance, acceptance_of


def max_error(hard, soft, words: list[str]) -> float:
    a, b = hard.run_words(words), soft.run_words(words)
    return max(float(np.abs(x - y).max()) for x, y in zip(a, b))


def words_up_to(n: int, alphabet: str = "01") -> list[str]:
    return ["".join(w) for k in range(1, n + 1) for w in itertools.product(alphabet, repeat=k)]


def integer_model(weighting: str, mask: str, layers: int, seed: int, d_model: int = 6):
    """Small integer weights and integer features: exact ties are common, grids are known."""
    m = random_model(
        weighting=weighting,
        mask=mask,
        layers=layers,
        heads=1,
        d_model=d_model,
        seed=seed,
        position_features=("1", "(-1)^i", "[i=1]"),
        scale=False,
        dtype=torch.float64,
    )
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.round(1.5 * p))
    return m


# ---------------------------------------------------------------------------- measured gaps
@pytest.mark.parametrize("weighting", ["leftmost", "rightmost", "average"])
@pytest.mark.parametrize("mask", ["none", "future", "past", "strict-future"])
def test_measured_bound_holds_at_every_position(weighting: str, mask: str) -> None:
    rng = np.random.default_rng(7)
    hard = random_model(weighting=weighting, mask=mask, layers=2, seed=3, dtype=torch.float64)
    words = ["".join(rng.choice(["0", "1"], size=n)) for n in (1, 2, 3, 5, 9, 14) for _ in range(3)]
    r = soften(hard, gap_inputs=words)
    assert r.gap_source == "measured" and r.n == 14 and r.error_bound <= 0.25
    assert isinstance(r.to_dict()["tau"], float)
    for theta in (r.theta, 2 * r.theta, 4 * r.theta):  # 2θ, 4θ: the bound is not met by design
        rt = soften(hard, gap_inputs=words, theta=theta)
        assert max_error(hard, rt.model, words) <= rt.error_bound


@pytest.mark.parametrize("weighting", ["leftmost", "rightmost", "average"])
@torch.no_grad()
def test_ties_are_broken_like_the_hard_head(weighting: str) -> None:
    hard = integer_model(weighting, "future", 1, seed=4)
    words = words_up_to(6)
    r = soften(hard, gap_inputs=words)
    head = r.heads[0]
    assert head.tied_rows > 0  # the integer model really has ties
    n = 6
    ws = [w for w in words if len(w) == n]
    ph = hard(hard.encode(ws), trace=True).trace["blocks.0.attn.0.pattern"]
    ps = r.model(r.model.encode(ws), trace=True).trace["blocks.0.attn.0.pattern"]
    rows = ph.sum(-1) > 0
    on_target = (ps * (ph > 0)).sum(-1)[rows]
    assert float(on_target.min()) > 0.999  # the mass is where the hard head looks
    if weighting != "average":  # leftmost / rightmost: the same key wins every tie
        assert torch.equal(ps.argmax(-1)[rows], ph.argmax(-1)[rows])
    else:  # average: equal weights on the tie set (layer 1: bit-identical tied scores)
        ratio = torch.where(ph > 0, ps, torch.zeros_like(ps)) / ph.clamp_min(1e-300)
        hi = ratio.amax(-1)[rows]
        lo = torch.where(ph > 0, ratio, torch.full_like(ratio, 9.0)).amin(-1)[rows]
        assert torch.allclose(hi / lo, torch.ones_like(hi), atol=1e-12)
    assert max_error(hard, r.model, words) <= r.error_bound


@torch.no_grad()
def test_tie_set_weights_unequal_after_layer_one() -> None:
    """The plain argument says softmax puts equal weights on the hard tie set T. True in layer
    1; from layer 2 on the tied scores are perturbed differently and the weights differ, within
    the factor e^{2δ/τ} for the measured score error δ (the bound's extra term)."""
    hard = integer_model("average", "future", 2, seed=37)
    words = words_up_to(7)
    r0 = soften(hard, gap_inputs=words)
    r = soften(hard, gap_inputs=words, theta=4 * r0.theta)
    worst = {0: 1.0, 1: 1.0}
    for n in range(2, 8):
        ws = [w for w in words if len(w) == n]
        th = hard(hard.encode(ws), trace=True).trace
        ts = r.model(r.model.encode(ws), trace=True).trace
        for ell in (0, 1):
            tied = th[f"blocks.{ell}.attn.0.pattern"] > 0
            p = ts[f"blocks.{ell}.attn.0.pattern"]
            rows = tied.sum(-1) > 1
            if not rows.any():
                continue
            hi = torch.where(tied, p, torch.full_like(p, -1.0)).amax(-1)[rows]
            lo = torch.where(tied, p, torch.full_like(p, 2.0)).amin(-1)[rows]
            worst[ell] = max(worst[ell], float((hi / lo).max()))
            if ell == 1:  # the ratio is within e^{2δ/τ}, δ the largest score error on the row
                s_h = th["blocks.1.attn.0.q"] @ th["blocks.1.attn.0.k"].transpose(-1, -2)
                s_s = ts["blocks.1.attn.0.q"] @ ts["blocks.1.attn.0.k"].transpose(-1, -2)
                delta = (s_s - s_h).abs().masked_fill(~tied, 0).amax(-1)[rows]
                tau = r.model.blocks[1].heads[0].score_scale(n) ** -1
                assert torch.all(hi / lo <= torch.exp(2 * delta / tau) * (1 + 1e-9))
    assert worst[0] == pytest.approx(1.0, abs=1e-12)
    assert worst[1] > 1.01


# ---------------------------------------------------------------------------- certified gaps
@pytest.mark.parametrize(
    "f", ["!E(#<[Y '1'] = #>['1'])", "Y MOD(2,1)(#<['1']) | MOD(3,0)(#<['0']+2)"]
)
def test_compiled_formula_certified_and_exact(f: str) -> None:
    hard = compile_formula(f, "01", target="hard")
    r = soften(hard, n=60)
    assert r.gap_source == "certified" and r.error_bound < 0.5
    assert "/n**3" in r.tau  # the lookups' certified gap is 1/n^3
    assert {h["source"].split(":")[0] for h in r.to_dict()["heads"]} >= {"grid"}
    rep = check_formula(r.model, f, exhaustive_max_n=8, random_n=[20, 41, 60], samples=6)
    assert rep["mismatches"] == 0
    assert rep["max_abs_error"] <= r.error_bound


def test_integer_uhat_certified_by_the_grid() -> None:
    hard = integer_model("rightmost", "past", 2, seed=5)
    r = soften(hard, n=7)
    assert r.gap_source == "certified"
    assert all(h.coef >= 1.0 for h in r.heads if not h.uniform)  # integer scores: gap >= 1
    assert max_error(hard, r.model, words_up_to(7)) <= r.error_bound


def test_program_gaps_are_the_declared_ones() -> None:
    from hardsoft.programs.ahat.build import build

    b = build("flipflop", None, "average-hard", exhaustive_up_to=3, sampled_lengths=())
    hard = b.compiled.model
    r = soften(hard, n=12)
    assert r.gap_source == "certified"
    declared = [h for h in r.heads if h.source.startswith("declared")]
    assert declared and all(h.tieless for h in declared)
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("wri01"), size=n)) for n in (4, 8, 12) for _ in range(8)]
    assert max_error(hard, r.model, words) <= r.error_bound


def test_grid_rules() -> None:
    assert feature_grid("i/n")[0] and feature_grid("i/n")[1].tolist() == [0, 0, 0, 0, 1]
    assert feature_grid("1/i*(i/n)^2")[1].tolist() == [1, 0, 0, 0, 2]
    assert not feature_grid("sinusoidal:4")[0]
    assert feature_grid("[i mod 3 = 1]")[0] and feature_grid("[i=1]*[i=n]")[0]
    exp, ok = dyadic_exponents(np.array([0.0, 3.0, 0.75, -6.25, 0.1]))
    assert exp[:4].tolist() == [0, 0, 2, 2] and ok.tolist() == [True, True, True, True, False]
    assert feature_sup("i^2", 10) == 100.0 and feature_sup("1/i", 10) == 1.0
    assert feature_sup("i*1/n*1/n", 10) == 1.0 and feature_sup("n*(-1)^i", 10) == 10.0


def test_given_gap_shapes() -> None:
    assert parse_gap("0.5", 100)[:2] == (0.5, 0)
    assert parse_gap("1/(2*n)", 100)[:2] == pytest.approx((0.5, 1))
    assert parse_gap("3/n**2", 100)[:2] == pytest.approx((3.0, 2))
    coef, power, note = parse_gap("1/(n*log(n+1))", 50)
    assert power == 0 and coef == pytest.approx(1 / (50 * math.log(51))) and "minimum" in note
    hard = random_model(weighting="leftmost", layers=1, seed=1, dtype=torch.float64)
    r = soften(hard, gap="1/(2*n)", n=30)
    assert r.gap_source == "given" and r.tau.endswith("/n**2")  # tie-break: γ/(2n)


def test_bound_is_monotone_in_theta_on_a_random_model() -> None:
    hard = random_model(weighting="average", mask="future", layers=2, seed=2, dtype=torch.float64)
    r = soften(hard, gap_inputs=["0110", "1010101", "11"])
    values = [error_bound(r.constants, r.theta * 2**k)[0] for k in range(-6, 1)]
    assert values == sorted(values)


# ---------------------------------------------------------------------------- errors
def cli(*args: str) -> subprocess.CompletedProcess:
    """Run ``hardsoft ARGS`` in this process through the CLI's own ``main`` (its one-line error
    handling included); a subprocess would spend seconds importing torch per call."""
    from hardsoft.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.argv
    sys.argv = ["hardsoft", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = old
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("convert")
    hard = random_model(weighting="rightmost", mask="future", layers=2, seed=0, dtype=torch.float64)
    soft = random_model(weighting="softmax", layers=1, seed=0, dtype=torch.float64)
    ln = random_model(weighting="leftmost", layers=1, layer_norm="pre", dtype=torch.float64)
    paths = {"hard": d / "hard.st", "soft": d / "soft.st", "ln": d / "ln.st"}
    save_model(hard, paths["hard"])
    save_model(soft, paths["soft"])
    save_model(ln, paths["ln"])
    (d / "words.txt").write_text("0110\n\n10\n111000\n")
    (d / "bad.txt").write_text("0110\n01x0\n")
    paths["words"], paths["bad"], paths["dir"] = d / "words.txt", d / "bad.txt", d
    return paths


@pytest.mark.parametrize(
    "key, extra, message",
    [
        ("hard", ["--gap", "0"], "--gap must be a positive number"),
        ("hard", ["--gap", "-2.5"], "--gap must be a positive number"),
        ("hard", ["--eps", "0.5"], "--eps must be in (0, 1/2)"),
        ("hard", ["--gap-inputs", "BAD"], "line 2: symbol 'x' is not in the model's alphabet"),
        ("ln", [], "layer norm"),
        ("hard", ["--gap", "1", "--gap-inputs", "WORDS"], "not both"),
    ],
)
def test_soften_bad_input_is_one_line(files, key, extra, message) -> None:
    out = files["dir"] / f"out-{key}.st"
    extra = [
        str(files["bad"]) if a == "BAD" else str(files["words"]) if a == "WORDS" else a
        for a in extra
    ]
    res = cli("soften", str(files[key]), "-o", str(out), *extra)
    assert res.returncode == 2
    assert res.stderr.startswith("error: ") and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_soften_cli_json(files) -> None:
    out = files["dir"] / "soft-out.st"
    res = cli("soften", str(files["hard"]), "-o", str(out), "--gap-inputs", str(files["words"]))
    assert res.returncode == 0, res.stderr
    res = cli(
        "soften", str(files["hard"]), "-o", str(out), "--gap-inputs", str(files["words"]), "--json"
    )
    info = json.loads(res.stdout)
    for key in ("tau", "gap", "gap_source", "error_bound", "n", "heads", "measured_error"):
        assert key in info
    assert info["gap_source"] == "measured" and info["n"] == 6
    assert info["measured_error"] <= info["error_bound"] <= 0.25
    soft = load_model(out)
    assert all(h.weighting == "softmax" for layer in soft.spec.layers for h in layer.heads)
    assert soft.meta["softened"]["tau"] == info["tau"]


def test_harden_keeps_weights_and_rejects_hard_models(files) -> None:
    soft = load_model(files["soft"])
    hard = harden(soft, "rightmost")
    assert all(h.weighting == "rightmost" and h.tau is None for h in hard.spec.layers[0].heads)
    for (k, a), (_, b) in zip(soft.state_dict().items(), hard.state_dict().items()):
        assert torch.equal(a, b), k
    with pytest.raises(HardsoftError, match="no softmax heads"):
        harden(hard)
    with pytest.raises(HardsoftError, match="leftmost, rightmost or average"):
        harden(soft, "softmax")
    out = files["dir"] / "hardened.st"
    res = cli("harden", str(files["soft"]), "-o", str(out), "--weighting", "average", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["heads_hardened"] == 2
    res = cli("harden", str(out), "-o", str(files["dir"] / "again.st"))
    assert res.returncode == 2 and res.stderr.startswith("error: ")


# ---------------------------------------------------------------------------- trained models
def test_eos_readout() -> None:
    acc = Acceptance("eos", 2, 0.25)
    y = torch.tensor([[0.0, 0.0, math.log(2.0)], [0.0, 0.0, -5.0]])  # P(EOS) = 1/2, ~0.003
    assert acc.accept(y).tolist() == [True, False]
    with pytest.raises(HardsoftError, match="outside"):
        Acceptance.from_dict({"kind": "eos", "index": 5}, 3)


def test_hardened_trained_model_gets_a_verified_witness(tmp_path: Path) -> None:
    from hardsoft.learn import ArchConfig, TrainConfig, train
    from hardsoft.learn.train import load_run
    from hardsoft.limits.restrict import restrict

    cfg = TrainConfig(
        language="parity", arch=ArchConfig(layers=1, heads=2, d_model=8), steps=20, max_n=12
    )
    train(cfg, tmp_path, show_progress=False)
    _, soft = load_run(tmp_path)
    readout = acceptance_of(soft)
    assert readout.kind == "eos" and readout.index == 2 and readout.threshold == 0.25
    hard = harden(soft)
    assert acceptance_of(hard) == readout
    res = restrict(hard, 64, "parity-even")
    w = res.witness
    assert w is not None and w.verified
    # the witness check ran the model with the EOS readout: recompute it independently
    with torch.no_grad():
        y = hard(hard.encode([w.x, w.x_prime])).outputs[:, -1].double()
    p_eos = torch.softmax(y, -1)[:, 2]
    assert [bool(p > 0.25) for p in p_eos] == [w.accept, w.accept_prime]
    save_model(soft, tmp_path / "soft.st")  # `hardsoft run` reads acceptance the same way
    res = cli("run", str(tmp_path / "soft.st"), "--input", w.x, "--input", w.x_prime, "--json")
    with torch.no_grad():
        expected = soft(soft.encode([w.x, w.x_prime])).accept.tolist()
    assert [r["accept"] for r in json.loads(res.stdout)["results"]] == expected


def test_package_root_exports() -> None:
    assert hardsoft.soften is soften and hardsoft.harden is harden
    with pytest.raises(AttributeError):
        _ = hardsoft.no_such_thing  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- coverage (#22)
REPRO_WORDS = ["0110", "10", "111000", "0101010101", "110100111010001101", "0" * 30]


def _repro_model() -> torch.nn.Module:
    """The reproducer of the measured-gap problem (rightmost, future, 2 layers, seed 3)."""
    return random_model(
        weighting="rightmost", mask="future", layers=2, heads=2, d_model=16, seed=3,
        dtype=torch.float64,
    )  # fmt: skip


def test_measured_gap_warns_and_says_so_first(files) -> None:
    hard = _repro_model()
    path, out = files["dir"] / "repro.st", files["dir"] / "repro-soft.st"
    save_model(hard, path)
    words = files["dir"] / "repro-words.txt"
    words.write_text("\n".join(REPRO_WORDS))
    res = cli("soften", str(path), "-o", str(out), "--gap-inputs", str(words), "--verify-n", "9")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("measured on given words only:")
    assert "covers only the measured words" in res.stderr
    res = cli(
        "soften", str(path), "-o", str(out), "--gap-inputs", str(words), "--json",
        "--verify-n", "9",
    )  # fmt: skip
    info = json.loads(res.stdout)
    assert info["covers"] == "measured words" and info["case"] == "measured on given words only"
    assert "covers only the measured words" in res.stderr
    # the verification runs every word up to 9, against the hard model
    soft = load_model(out)
    every = [w for k in range(1, 10) for w in map("".join, itertools.product("01", repeat=k))]
    assert info["verified"]["words"] == len(every) == 1022
    assert info["verified"]["max_error"] == pytest.approx(max_error(hard, soft, every), abs=1e-12)
    assert info["verified"]["ok"] == (info["verified"]["max_error"] <= 0.25)


def test_default_certifies_all_words_when_few_enough(files) -> None:
    """No grid (random weights) but few words up to n: the gap is measured on every one of
    them, so the bound holds on every word up to n; checked on all of them."""
    hard = _repro_model()
    r = soften(hard, n=9)
    assert r.gap_source == "exhaustive" and r.case == "certified for all words to n"
    assert r.covers() == "all words up to n" and r.error_bound <= 0.25
    every = [w for k in range(1, 10) for w in map("".join, itertools.product("01", repeat=k))]
    assert max_error(hard, r.model, every) <= r.error_bound
    path, out = files["dir"] / "repro9.st", files["dir"] / "repro9-soft.st"
    save_model(hard, path)
    res = cli("soften", str(path), "-o", str(out), "--n", "9")
    assert res.returncode == 0 and "warning" not in res.stderr
    assert res.stdout.startswith("certified for all words to n: error bound")
    # too many words: a stated sample, with the warning
    res = cli("soften", str(path), "-o", str(out), "--n", "40", "--samples", "2", "--json")
    info = json.loads(res.stdout)
    assert info["covers"] == "measured words" and "covers only the measured words" in res.stderr


def test_grid_certificate_is_the_first_line(files) -> None:
    model = compile_formula("'1' S '0'", target="hard", alphabet="01")
    path, out = files["dir"] / "since.st", files["dir"] / "since-soft.st"
    save_model(model, path)
    res = cli("soften", str(path), "-o", str(out), "--n", "50")
    assert res.returncode == 0 and res.stdout.startswith("certified by grid: error bound")
    assert "warning" not in res.stderr


def test_all_tied_heads_report_the_tiebreak_gap() -> None:
    """Every row of each unique-hard head is tied (constant scores): the gap reported is the
    one the tie-break leaves, not 1e308."""
    model = compile_formula("Y Y '1' & X '0'", target="hard", alphabet="01")
    r = soften(model, gap_inputs=["0110", "10", "111000"])
    assert all(h.coef == math.inf and h.tied_rows > 0 for h in r.heads)
    assert r.gap == pytest.approx(min(h.effective for h in r.heads))  # type: ignore[type-var]
    assert 0 < r.gap < 1 and r.to_dict()["gap"] == r.gap


@pytest.mark.parametrize("key", ["one", "soft"])
def test_no_hard_heads_is_written_back_unchanged(files, key) -> None:
    model = (
        compile_formula("'1'", target="hard", alphabet="01")
        if key == "one"
        else load_model(files["soft"])
    )
    r = soften(model)
    assert r.heads == [] and r.error_bound == 0 and r.case == "nothing to soften"
    for (k, a), (_, b) in zip(model.state_dict().items(), r.model.state_dict().items()):
        assert torch.equal(a, b), k
    path, out = files["dir"] / f"nohard-{key}.st", files["dir"] / f"nohard-{key}-out.st"
    save_model(model, path)
    res = cli("soften", str(path), "-o", str(out), "--json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["heads"] == [] and any("unchanged" in note for note in info["notes"])
    again = load_model(out)
    assert again.spec.layers == model.spec.layers
    words = ["0110", "1", "10101"]
    assert max_error(model, again, words) == 0.0


def test_class_propagation_certifies_every_word() -> None:
    """A unique-hard model with finitely many position-feature values and random (non-dyadic)
    weights: no grid, but class propagation certifies its gaps for every n; checked on every
    word up to 10 and on random words at n = 200."""
    from hardsoft.convert.coverage import verify_all

    hard = random_model(
        weighting="rightmost", mask="future", layers=1, heads=2, d_model=16, seed=3,
        position_features=("1", "(-1)^i", "[i=1]"), dtype=torch.float64,
    )  # fmt: skip
    r = soften(hard, n=200)
    assert r.gap_source == "classes" and r.case == "certified for all words to n"
    assert r.tau.endswith("/n**1")  # tie-break γ/(2n)
    check = verify_all(hard, r.model, 10, r.eps)
    assert check.ok and check.max_error <= r.error_bound
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(["0", "1"], 200)) for _ in range(8)]
    assert max_error(hard, r.model, words) <= r.error_bound


def test_measured_gap_works_where_a_fast_path_ran() -> None:
    """The fast paths record no attention pattern (soften at n = 1000 was a KeyError): the
    measurement then recomputes the hard choice with the head's own rule, which gives the same
    rows as the recorded pattern."""
    from hardsoft.convert import gaps as G

    hard = random_model(
        weighting="rightmost", mask="future", layers=1, heads=2, d_model=8, seed=1,
        position_features=("1", "(-1)^i"), dtype=torch.float64,
    )  # fmt: skip
    words = ["0110100111", "1111100000", "0101010101"]
    tr = hard(hard.encode(words), trace=True).trace
    bare = {k: v for k, v in tr.items() if not k.endswith(".pattern")}
    assert len(bare) < len(tr)
    for g in G.hard_heads(hard):
        for a, b in zip(G._head_rows(hard, tr, g, 10, None), G._head_rows(hard, bare, g, 10, None)):
            assert torch.equal(a, b)


@pytest.mark.parametrize(("command", "key"), [("soften", "hard"), ("harden", "soft")])
def test_output_onto_the_input_is_refused(files, command: str, key: str) -> None:
    """-o MODEL itself overwrote the original model (the one the bound is about)."""
    before = files[key].read_bytes()
    res = cli(command, str(files[key]), "-o", str(files[key]))
    assert res.returncode == 2 and "is the input file" in res.stderr, res.stderr
    assert files[key].read_bytes() == before

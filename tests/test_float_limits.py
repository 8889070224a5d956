"""Float limits of compiled programs (RASP, the average-hard and tieless §6 programs): derived
from the construction (:mod:`hardsoft.programs.ahat.rounding`), carried in the certificate, exact
at the limit and wrong somewhere past it, and warned about by ``run`` and ``check``; a bounded
model run past its bound; a check that checked nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.compile import compile_program
from hardsoft.programs.ahat.rounding import FORMATS, float_limits, head_models, linear
from tests._cli import run_cli

LIB = Path(__file__).resolve().parents[1] / "src/hardsoft/programs/examples/tracr_lib.py"
F64, F32 = FORMATS


def last_symbol_program() -> dsl.Program:
    """Read the symbol at position n by a table lookup: integer scores 2nj − j², gap 1."""
    at = dsl.lookup_int(dsl.Position("n"), [dsl.Token("a")], label="last")
    return dsl.Program("last_is_a", ("a", "b"), [at.value(0)], gap="1")


def test_a_dot_product_on_integers_is_exact_below_two_to_the_p() -> None:
    """Integers below 2^p are computed exactly; past it, the bound is γ_m·Σ|terms|."""
    i = dsl.Position("i")
    small = linear([(2.0, _feature("i", 1000)), (-1.0, _feature("i^2", 1000))], 3.0, F32)
    assert small.val.err == 0.0 and small.val.grid == 0
    big = linear([(2.0, _feature("i", 5000)), (-1.0, _feature("i^2", 5000))], 0.0, F32)
    assert big.val.err > 0.0  # 5000² > 2^24: i² itself is rounded
    assert i.feature == "i"


def _feature(name: str, n: int):  # type: ignore[no-untyped-def]
    from hardsoft.programs.ahat.rounding import feature

    return feature(name, n, F32)


def test_lookup_limit_is_where_its_integer_scores_stop_being_exact() -> None:
    """The derived float32 limit of a lookup of position n is the largest n with
    3n² < 2^24 (its scores' terms 2nj and j² summed exactly), 2364; float64: 54,794,158."""
    prog = last_symbol_program()
    compiled = compile_program(prog)
    fl = float_limits(prog, head_models(compiled, compiled.model), [lambda n: 0.5])
    assert fl["float32"] == 2364 and 3 * 2364**2 < 2**24 <= 3 * 2365**2
    assert fl["float64"] == 54_794_158
    assert "n = 2365: head 0.0 (last)" in fl["binding"]["float32"]


@pytest.mark.floatcmp  # float32 runs at and past a derived limit: per CPU path
def test_lookup_is_right_at_its_limit_and_wrong_past_it() -> None:
    """Measured: exact at the derived limit (and at 4096), wrong at 8192 (scores near 1.3·10⁸
    are 8 apart in float32, so the maximum ties with its neighbour)."""
    compiled = compile_program(last_symbol_program())
    model = compiled.model.to(torch.float32)
    for n, right in ((2364, True), (8192, False)):
        words = ["a" * (n - 1) + "b", "b" * (n - 1) + "a", "ab" * (n // 2), "ba" * (n // 2)]
        got = [float(out[-1, 0]) > 0.5 for out in model.run_words(words)]
        want = [w[-1] == "a" for w in words]
        assert (got == want) is right, (n, got)


@pytest.fixture(scope="module")
def shuffle_dyck():  # type: ignore[no-untyped-def]
    from hardsoft.programs.source import load_program

    prog = load_program("@tracr_lib:shuffle_dyck")
    return prog, prog.compile("soft-temperature")


def test_rasp_certificate_carries_float_limits(shuffle_dyck) -> None:  # type: ignore[no-untyped-def]
    _, model = shuffle_dyck
    fl = model.meta["certificate"]["float_limits"]
    assert 100 <= fl["float32"] < 5000 < fl["float64"]  # measured: right at 5000 in float32
    assert fl["binding"]["float32"].startswith(f"n = {fl['float32'] + 1}: ")
    assert "gap" in fl["derivation"]


@pytest.mark.floatcmp  # float32 runs at and past a derived limit: per CPU path
def test_shuffle_dyck_is_exact_in_float32_at_its_limit(shuffle_dyck) -> None:  # type: ignore[no-untyped-def]
    """Right at the derived limit on the hard words (deepest balanced, near misses, runs) and
    random words, against the interpreter."""
    from hardsoft.programs.check_source import check_program

    prog, model = shuffle_dyck
    limit = model.meta["certificate"]["float_limits"]["float32"]
    report = check_program(
        model.to(torch.float32), prog, exhaustive_max_n=4, random_n=[limit], samples=4,
        hard_n=[limit],
    )  # fmt: skip
    assert report["mismatches"] == 0 and report["max_n"] == limit
    assert report["hard_lengths"] == [limit]


@pytest.mark.slow
@pytest.mark.floatcmp
def test_shuffle_dyck_float32_fails_past_its_limit_where_hard_words_reach(shuffle_dyck) -> None:  # type: ignore[no-untyped-def]
    """Issue 41's case: at n = 8000 in float32 the deepest balanced word is rejected (float64
    and the interpreter accept it), which random words miss."""
    from hardsoft.programs.check_source import check_program

    prog, model = shuffle_dyck
    f32 = model.to(torch.float32)
    randoms = check_program(f32, prog, exhaustive_max_n=0, random_n=[8000], samples=2)
    hard = check_program(f32, prog, exhaustive_max_n=0, random_n=[], hard_n=[8000])
    assert randoms["mismatches"] == 0 and hard["mismatches"] >= 1


def test_tieless_programs_carry_float_limits_for_both_targets() -> None:
    from hardsoft.programs.ahat.build import build

    for target in ("average-hard", "soft-temperature"):
        b = build("dyck", 1, target)
        fl = b.model.meta["certificate"]["float_limits"]
        assert 100 <= fl["float32"] < 4160 < fl["float64"], fl  # measured: 4160 fails
        assert fl["binding"]["float32"].startswith(f"n = {fl['float32'] + 1}")


def test_run_float32_warns_past_a_program_s_float_limit(tmp_path: Path) -> None:
    """Before: no float_limits in a tieless or RASP certificate, so no warning at any n."""
    model = tmp_path / "dyck1.safetensors"
    res = run_cli("program", "dyck", "--k", "1", "--target", "soft-temperature", "-o", str(model))
    assert res.rc == 0, res.err
    limit = json.loads(
        run_cli("run", str(model), "--input", "()", "--dtype", "float32", "--json").out
    )["precision"]["certified_max_n"]
    word = "(" * (limit // 2 + 1) + ")" * (limit // 2 + 1)
    res = run_cli("run", str(model), "--input", word, "--dtype", "float32", "--json")
    assert res.rc == 0, res.err
    precision = json.loads(res.out)["precision"]
    assert precision["beyond_limit"] and precision["certified_max_n"] == limit
    assert f"certified float32 limit n <= {limit:,}" in res.err
    res = run_cli("run", str(model), "--input", word, "--json")  # float64: far inside
    assert not json.loads(res.out)["precision"]["beyond_limit"] and "warning" not in res.err


def test_rasp_output_read_to_1e9_has_no_float32_limit_and_always_warns(tmp_path: Path) -> None:
    """A mean read exactly (10⁻⁹) cannot be certified in float32: the certificate says 0 and
    every float32 run warns."""
    model = tmp_path / "frac.safetensors"
    assert run_cli("program", "compile", f"{LIB}:frac_prevs", "-o", str(model)).rc == 0
    res = run_cli("run", str(model), "--input", "xyx", "--dtype", "float32", "--json")
    precision = json.loads(res.out)["precision"]
    assert precision["certified_max_n"] == 0 and precision["beyond_limit"]
    assert "proves no input length exact in float32" in res.err


def test_run_warns_past_a_bounded_model_s_length(tmp_path: Path) -> None:
    """Before: ``run`` ignored meta['program']['max_len'] (exit 0, nothing on stderr,
    beyond_limit false). It warns, and still answers: the model is a transformer at every
    length, and what a bounded construction does past its bound is worth seeing."""
    model = tmp_path / "sort.safetensors"
    assert run_cli("program", "compile", f"{LIB}:sort", "--max-len", "10", "-o", str(model)).rc == 0
    res = run_cli("run", str(model), "--input", "30213012301230123012", "--json")
    assert res.rc == 0
    precision = json.loads(res.out)["precision"]
    assert precision["beyond_limit"] and precision["length_bound"] == 10
    assert "exceeds the length this model was compiled for, n <= 10" in res.err
    res = run_cli("run", str(model), "--input", "3021301230", "--json")
    assert not json.loads(res.out)["precision"]["beyond_limit"] and "warning" not in res.err


def test_check_of_a_model_whose_bound_is_zero_checks_nothing_and_fails(tmp_path: Path) -> None:
    """Before: 0 strings checked, exit 0."""
    from hardsoft.model import load_model, save_model

    path = tmp_path / "sort.safetensors"
    assert run_cli("program", "compile", f"{LIB}:sort", "--max-len", "10", "-o", str(path)).rc == 0
    model = load_model(path)
    model.meta["program"]["max_len"] = 0
    save_model(model, path)
    res = run_cli("check", str(path), "--program", f"{LIB}:sort")
    assert res.rc == 2 and "max_len" in res.err and res.err.startswith("error: ")
    model.meta["program"]["max_len"] = 3
    save_model(model, path)
    res = run_cli("check", str(path), "--program", f"{LIB}:sort", "--exhaustive-max-n", "0",
                  "--random-n", "20")  # fmt: skip
    assert res.rc == 2 and "compared nothing" in res.err and "n <= 3" in res.err


def test_check_that_checks_nothing_does_not_pass(tmp_path: Path) -> None:
    model = tmp_path / "f.safetensors"
    assert run_cli("compile", "Y 'a'", "--alphabet", "ab", "-o", str(model)).rc == 0
    res = run_cli("check", str(model), "-f", "Y 'a'", "--exhaustive-max-n", "0", "--random-n", "")
    assert res.rc == 2 and "compared nothing" in res.err


def test_check_program_float32_prints_precision(tmp_path: Path) -> None:
    model = tmp_path / "hist.safetensors"
    assert run_cli("program", "compile", f"{LIB}:hist", "-o", str(model)).rc == 0
    args = ["--dtype", "float32", "--exhaustive-max-n", "3", "--random-n", "50", "--samples", "2"]
    res = run_cli("check", str(model), "--program", f"{LIB}:hist", *args, "--json")
    assert res.rc == 0, res.err
    report = json.loads(res.out)
    assert report["precision"]["dtype"] == "float32"
    assert report["precision"]["certified_max_n"] >= 50
    assert report["hard_lengths"] == [50]


def test_hard_words_reach_depth_balance_and_runs() -> None:
    from hardsoft.languages.hard_words import hard_words

    words = hard_words("()", 6)
    assert words[:3] == ["((()))", "((())(", ")(()))"]  # deepest, its near misses
    assert "((((((" in words and "()()()" in words
    assert all(len(w) == 6 for w in words) and len(set(words)) == len(words)
    many = hard_words("abcdefghijklmnopqrstuvwxyz", 9, limit=32)
    assert len(many) == 32 and many == hard_words("abcdefghijklmnopqrstuvwxyz", 9, limit=32)


def test_check_adds_hard_words_at_random_lengths_and_at_the_limit() -> None:
    from hardsoft.check import check_formula, hard_lengths
    from hardsoft.compile import compile_formula
    from hardsoft.languages.hard_words import hard_words

    assert hard_lengths([100, 1000], 547) == [100, 547, 1000]
    assert hard_lengths([100], 547) == [100]
    model = compile_formula("#<['1'] > #<['0']", "01")
    base = check_formula(model, "#<['1'] > #<['0']", exhaustive_max_n=0, random_n=[40],
                         samples=3)  # fmt: skip
    more = check_formula(model, "#<['1'] > #<['0']", exhaustive_max_n=0, random_n=[40],
                         samples=3, hard_n=[40])  # fmt: skip
    assert more["checked_strings"] == base["checked_strings"] + len(hard_words("01", 40))
    assert more["mismatches"] == 0 and more["hard_lengths"] == [40]
    assert np.all([r["n"] == 40 for r in more["by_length"]])


def test_a_softened_compiled_model_does_not_keep_the_hard_model_s_float_limits() -> None:
    """The hard model's certificate (float_limits of hard heads) was carried into the softmax
    model unchanged: float32 is not derived for it, so it says none."""
    from hardsoft.compile import compile_formula
    from hardsoft.convert.soften import soften
    from hardsoft.model.precision import precision_report

    hard = compile_formula("MOD(2,1)(#<['1'])", "01", target="hard")
    assert hard.meta["certificate"]["float_limits"]["float32"] == 547
    soft = soften(hard, n=50).model
    fl = soft.meta["certificate"]["float_limits"]
    assert fl["float32"] == 0 and fl["float64"] in (0, 50)
    assert precision_report(soft.meta, torch.float32, 10)["beyond_limit"]

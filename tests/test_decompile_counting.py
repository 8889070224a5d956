"""Decompiling counting models: average-hard heads, unbounded position features, lookups.

Ground truth is independent of the decompiler: the compiled model's source formula (through
the logic evaluator) and the model's own forward pass on words."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from hardsoft.classes.algebra import Poly, integer_linear, positive_multiplier
from hardsoft.classes.boolean import Predicates
from hardsoft.classes.conditions import Vars, Where
from hardsoft.classes.relations import relate
from hardsoft.compile import compile_formula
from hardsoft.decompile import decompile
from hardsoft.decompile.decompiler import (
    agreement,
    equivalence,
    exhaustive_words,
    random_words_upto,
)
from hardsoft.errors import HardsoftError
from hardsoft.experiments.decompile_roundtrip import COUNTING, random_counting_model
from hardsoft.logic import FORMULAS, parse
from hardsoft.logic.syntax import First, Last, Mod, Position, size, to_text
from hardsoft.model import random_model

COUNTING_NAMES = [n for n, e in FORMULAS.items() if "#" in e.text or "MOD" in e.text]


def _round_trip(text: str, alphabet: str, masks: str):
    f = parse(text, alphabet=alphabet)
    model = compile_formula(f, alphabet=alphabet, target="hard", masks=masks)
    d = decompile(model, verify_n=6, random_words=30, random_max_n=300)
    return f, model, d


@pytest.mark.parametrize("masks", ["strict", "nonstrict"])
@pytest.mark.parametrize("name", COUNTING_NAMES)
def test_named_counting_formulas_come_back_equal(name: str, masks: str) -> None:
    entry = FORMULAS[name]
    f, model, d = _round_trip(entry.text, entry.alphabet, masks)
    assert d.to_dict()["method"] == "counting"
    assert d.verified["mismatches"] == 0 and d.verified["positions"] > 5_000
    eq = equivalence(f, d.formulas[0], tuple(entry.alphabet), 9, 60, 600, seed=1)
    assert eq["mismatches"] == 0 and eq["exhaustive_n"] >= 9, eq
    assert size(d.formulas[0]) <= 4 * size(f), to_text(d.formulas[0])


def test_the_named_counting_formulas_are_the_expected_ones() -> None:
    assert {"parity-mod", "parity-count", "majority", "anbn", "dyck1"} <= set(COUNTING_NAMES)


@pytest.mark.parametrize("name,text,alphabet", COUNTING)
def test_hand_written_counting_formulas_strict(name: str, text: str, alphabet: str) -> None:
    f, _, d = _round_trip(text, alphabet, "strict")
    eq = equivalence(f, d.formulas[0], tuple(alphabet), 9, 40, 400, seed=2)
    assert eq["mismatches"] == 0 and d.verified["mismatches"] == 0


@pytest.mark.parametrize(
    "text,expected",
    [
        ("#<['1'] > #<['0']", "#<['1'] > #<['0']"),
        ("MOD(2, 1)(#<['1'])", "MOD(2, 1)(#<['1'])"),
        ("!E (#<[Y '1'] = #>['1'])", "!E (#<[Y '1'] = #>['1'])"),
        ("2 * #<['1'] > n", "2 * #<['1'] > n"),
    ],
)
def test_compiled_counting_formulas_come_back_verbatim(text: str, expected: str) -> None:
    assert to_text(_round_trip(text, "01", "strict")[2].formulas[0]) == expected


@pytest.mark.parametrize("mask", ["future", "past", "none", "strict-future", "strict-past"])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_counting_models_agree_with_the_model(mask: str, seed: int) -> None:
    model = random_counting_model(mask, seed)
    d = decompile(model, verify_n=0)
    words, _ = exhaustive_words(("0", "1"), 8)
    words += random_words_upto(("0", "1"), 60, 300, seed)
    positions, mismatches, first = agreement(model, d.formulas, words)
    assert mismatches == 0, (first, to_text(d.formulas[0]))
    assert positions > 10_000


def test_counting_model_in_float32_still_agrees() -> None:
    model = compile_formula("#<['a'] > 2 * #<['b'] + 1", alphabet="ab", target="hard")
    d = decompile(model.to(torch.float32), verify_n=7, random_words=20, random_max_n=300)
    assert d.verified["mismatches"] == 0


# ---------------------------------------------------------------------------- refusals


def test_layer_norm_counting_model_refused() -> None:
    model = random_model(
        layers=1, heads=1, d_model=8, weighting="average", mask="future", layer_norm="pre"
    )
    with pytest.raises(HardsoftError, match="layer norm"):
        decompile(model)


def test_mixed_denominators_refused_with_one_line() -> None:
    model = random_counting_model("past", 0)  # suffix counts alone decompile
    mixed = random_model(  # a 1/i feature next to a suffix count: C/(n-i+1) against a/i
        layers=1,
        heads=1,
        d_model=8,
        weighting="average",
        mask="past",
        position_features=("1", "1/i"),
        seed=3,
    )
    with torch.no_grad():
        for p in mixed.parameters():
            p.copy_(torch.round(p * 8) / 8)
        mixed.W_E[:, 4:] = 0
        mixed.W_pos[:, :4] = 0
        head = mixed.blocks[0].heads[0]
        head.W_Q.zero_()
        head.W_K.zero_()
        head.W_V[4:] = 0
    with pytest.raises(
        HardsoftError, match="feed-forward unit 0: a comparison that is not linear"
    ) as info:
        decompile(mixed)
    assert "\n" not in str(info.value)
    assert decompile(model, verify_n=3).verified["mismatches"] == 0


def test_feed_forward_blowup_bounded_by_max_classes() -> None:
    model = random_counting_model("future", 5, d_ff=12)
    with pytest.raises(HardsoftError, match="--max-classes 3"):
        decompile(model, max_classes=3)


# ---------------------------------------------------------------------------- the algebra


def test_positive_multiplier_clears_denominators() -> None:
    i, n, c = Poly.var("i"), Poly.var("n"), Poly.var("c0")
    bases = {"v0": n - i + Poly.const(1)}
    p = c * Poly.var("i", -1) - Poly.const(Fraction(1, 2))  # C/i - 1/2
    assert positive_multiplier(p, bases) == c - i * Fraction(1, 2)
    q = c * Poly.var("v0") + Poly.var("n", -1)  # C/(n-i+1) + 1/n: needs C·n, not linear
    assert integer_linear(positive_multiplier(q, bases)) is None
    lin = integer_linear(c * Fraction(2, 3) - i * Fraction(1, 2) + Poly.const(1))
    assert lin == ((("c0", 4), ("i", -3)), 6)


def test_comparisons_are_canonical_atoms_and_folded_by_bounds() -> None:
    p = Predicates()
    p.atom(First()), p.atom(Last())
    vars_ = Vars(p)
    c = vars_.count("pre", p.atom(parse("'a'", alphabet="ab")))
    i = Poly.var("i")
    half = vars_.compare(c * Poly.var("i", -1) - Poly.const(Fraction(1, 2)), ">")
    twice = vars_.compare(c * 2 - i, ">")  # the same condition, scaled
    assert half == twice
    assert to_text(p.atom_of[next(iter(p.bdd.support(half)))]) == "2 * #<['a'] > i"
    assert vars_.compare(c - i - Poly.const(1), ">") == p.false  # #<['a'] <= i
    assert vars_.compare(c + Poly.const(1), ">") == p.true
    at_first = vars_.compare(c - Poly.const(1), ">", Where(first=True))
    assert at_first == p.false  # at i = 1 a prefix count is at most 1


def test_relate_finds_implications_between_comparisons() -> None:
    p = Predicates()
    p.atom(First()), p.atom(Last())
    vars_ = Vars(p)
    c = vars_.count("pre", p.atom(parse("'a'", alphabet="ab")))
    odd = vars_.mod(2, 1, c)
    positive = vars_.compare(c, ">")
    assert not p.is_false(odd & ~positive)
    relate(vars_, [odd & positive])
    assert p.is_false(odd & ~positive)  # an odd count is at least 1


def test_temporal_operators_of_position_atoms_are_folded() -> None:
    p = Predicates()
    first, last = p.atom(First()), p.atom(Last())
    even = p.atom(Mod(2, 0, Position()))
    odd = p.atom(Mod(2, 1, Position()))
    p.assume((even & ~odd) | (odd & ~even), base=True)
    some_even = p.unary("E", even)
    assert p.equal(some_even, ~(first & last))  # an even position exists iff n >= 2
    assert p.equal(p.unary("E", odd), p.true)
    assert p.equal(p.unary("P", first), ~first)
    assert p.equal(p.unary("F", last), ~last)
    assert p.equal(p.unary("E", p.unary("F", last)), ~(first & last))
    assert p.equal(p.unary("P", odd), ~first)  # position 1 is odd
    assert p.unary("F", even & last) not in (p.true, p.false)  # depends on n: kept as an atom


@pytest.mark.parametrize(
    "name",
    [
        "1",
        "i",
        "n",
        "i/n",
        "1/i",
        "1/n",
        "i^2",
        "(i/n)^2",
        "[i=1]",
        "[i=n]",
        "(-1)^i",
        "[i mod 3 = 1]",
        "1/n*(-1)^i",
        "i/n*1/n",
        "1/i*1/i",
        "[i=1]*[i=n]",
        "i*(-1)^i",
    ],
)
def test_declared_terms_match_the_feature_values(name: str) -> None:
    from hardsoft.logic.semantics import evaluate
    from hardsoft.model.features import parse_feature

    feature = parse_feature(name)
    assert feature.terms is not None
    for n in range(1, 13):
        values = feature.compute(n)[:, 0].tolist()
        holds = [evaluate(parse(text), ["a" * n], ("a",))[0] for _, _, text in feature.terms]
        for i in range(1, n + 1):
            cases = [k for k, h in enumerate(holds) if h[i - 1]]
            assert cases, (name, n, i)
            for k in cases:  # every case that holds gives the feature's value
                coef, (a, b) = feature.terms[k][:2]
                assert coef * i**a * n**b == pytest.approx(values[i - 1], rel=1e-12), (name, n, i)


def test_unbounded_features_without_monomials_have_no_terms() -> None:
    from hardsoft.model.features import parse_feature

    for name in ("i//s", "i%s", "learned:8", "sinusoidal:4", "i//s*1/i"):
        assert parse_feature(name).terms is None


def test_hardsoft_decompile_stays_callable() -> None:
    """The package and the function share the name: calling it twice, or after importing a
    submodule, still decompiles."""
    import hardsoft
    import hardsoft.decompile.decompiler  # noqa: F401

    model = compile_formula("'a' & !P 'b'", alphabet="ab", target="hard")
    first = hardsoft.decompile(model, verify_n=2, random_words=0)
    again = hardsoft.decompile(model, verify_n=2, random_words=0)
    assert to_text(first.formulas[0]) == to_text(again.formulas[0]) == "'a' & !P 'b'"


def test_progress_reports_every_block() -> None:
    model = compile_formula("#<['a'] > 2 * #<['b'] + 1", alphabet="ab", target="hard")
    stages: list[str] = []
    decompile(model, verify_n=2, random_words=0, progress=stages.append)
    blocks = [s for s in stages if s.startswith("block ")]
    assert len(blocks) == len(model.blocks) and blocks[0].startswith("block 1 of ")
    assert stages[-1] == "checking the formulas against the model"


# ---------------------------------------------------------------------------- from an attack


def _hand_model(layers, features, d_model, alphabet=("a", "b")):
    from hardsoft.model.spec import LayerSpec, ModelSpec
    from hardsoft.model.transformer import Transformer

    spec = ModelSpec(
        alphabet=alphabet,
        d_model=d_model,
        layers=tuple(LayerSpec(heads=(h,), d_ff=0) for h in layers),
        position_features=features,
        d_out=1,
    )
    return Transformer(spec, dtype=torch.float64)


def _head(weighting: str, d_head: int):
    from hardsoft.model.spec import HeadSpec, Mask, Weighting

    return HeadSpec(
        weighting=Weighting(weighting), mask=Mask.FUTURE, d_head=d_head, d_value=1, scale=False
    )


def test_lower_tiers_keep_their_ranking_condition() -> None:
    """Three key groups: 'a' always on top, 'b' above 'c' iff n > 3 (the lower tiers' order
    depends on n); the output reads "attends to b"."""
    m = _hand_model([_head("average", 2)], ("1", "1/n"), 6, ("a", "b", "c"))
    with torch.no_grad():
        m.W_E[0, 0] = m.W_E[1, 1] = m.W_E[2, 2] = 1
        m.W_pos[0, 3] = m.W_pos[1, 4] = 1
        h = m.blocks[0].heads[0]
        h.W_Q[3, 0], h.W_Q[4, 1] = 1, 3  # q = (1, 3/n)
        h.W_K[0, 0] = h.W_K[0, 1] = 10
        h.W_K[1, 0] = h.W_K[2, 1] = 1  # b scores 1, c scores 3/n
        h.W_V[1, 0] = 1
        h.W_O[0, 5] = 1
        m.W_U[5, 0] = 1
    d = decompile(m, verify_n=7, random_words=40, random_max_n=60)
    assert d.verified["mismatches"] == 0 and d.agrees
    assert agreement(m, d.formulas, ["bc", "bcc", "bbcc", "cbcb", "bcbcbc"])[1] == 0


def test_lookup_of_a_count_elsewhere_is_refused() -> None:
    """A lookup attending to j = i - 1 and reading #<['a']/j there: a count at another
    position has no name in the logic."""
    m = _hand_model([_head("average", 1), _head("leftmost", 2)], ("1", "i", "i^2"), 6)
    with torch.no_grad():
        m.W_E[0, 0] = 1
        m.W_pos[0, 1] = m.W_pos[1, 2] = m.W_pos[2, 3] = 1
        h = m.blocks[0].heads[0]
        h.W_V[0, 0], h.W_O[0, 4] = 1, 1
        h = m.blocks[1].heads[0]
        h.W_Q[2, 0], h.W_Q[1, 0], h.W_Q[1, 1] = 2, -2, -1  # (2i - 2, -1)
        h.W_K[2, 0], h.W_K[3, 1] = 1, 1  # (j, j^2)
        h.W_V[4, 0], h.W_O[0, 5] = 1, 1
        m.W_U[5, 0] = 1
    with pytest.raises(HardsoftError, match="depends on counts at the looked-up position"):
        decompile(m)


def _tie_model():
    m = _hand_model([_head("average", 1)], ("1",), 2)
    with torch.no_grad():
        m.W_pos[0, 0] = 1
        m.blocks[0].heads[0].W_V[0, 0] = 0.1  # every value 0.1, so the average is 0.1
        m.blocks[0].heads[0].W_O[0, 1] = 1
        m.W_U[1, 0] = 5  # y = 0.5 = the threshold
    return m


def test_threshold_tie_is_flagged_and_the_cli_fails(tmp_path, monkeypatch, capsys) -> None:
    import sys

    from hardsoft.cli import main
    from hardsoft.model import save_model

    d = decompile(_tie_model())
    assert d.ties == ["out0"] and d.agrees is False
    assert any("readout threshold" in c for c in d.to_dict()["cautions"])
    path = tmp_path / "tie.safetensors"
    save_model(_tie_model(), path)
    monkeypatch.setattr(sys, "argv", ["hardsoft", "decompile", str(path)])
    with pytest.raises(SystemExit) as info:
        main()
    out = capsys.readouterr().out
    assert info.value.code == 1
    assert "exact at every length:" not in out and "caution: output(s) out0" in out


def test_float32_counting_model_is_cautioned() -> None:
    model = compile_formula("MOD(3, 1)(#<['a'])", alphabet="ab", target="hard")
    assert not decompile(model, verify_n=0, random_words=0).to_dict()["cautions"]
    d = decompile(model.to(torch.float32), verify_n=0, random_words=0)  # .to: in place
    assert d.agrees is None
    assert any("float32" in c for c in d.to_dict()["cautions"])

"""Regular languages compiled into transformers (hardsoft.regular), checked against outside
ground truth: automata-lib's DFA of the same expression (not ours: hardsoft.languages.regular
builds ours) at every position of every word up to length 10 and of random words up to 10^4,
and the class read from the model's own heads (the atlas's class check)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from automata.fa.dfa import DFA as AutoDFA
from automata.fa.nfa import NFA

from hardsoft.atlas.evidence import class_violations
from hardsoft.atlas.table import column
from hardsoft.check import check_model
from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import dfa_from_file, dfa_from_regex
from hardsoft.logic.syntax import operators
from hardsoft.regular.classify import RegularClass
from hardsoft.regular.compile import compile_regular, formula_for
from hardsoft.regular.monoid import local_divisor, monoid_of
from hardsoft.regular.verify import product_check

DYCK3 = "(a(a(ab)*b)*b)*"  # one bracket type (a opens, b closes), depth at most 3


class Outside:
    """automata-lib's minimal DFA of an expression (its own regex parser and construction);
    a missing transition rejects from then on."""

    def __init__(self, regex: str, alphabet: str) -> None:
        dfa = AutoDFA.from_nfa(NFA.from_regex(regex, input_symbols=set(alphabet))).minify()
        self.alphabet = alphabet
        self.trans = {q: dict(e) for q, e in dfa.transitions.items()}
        self.start, self.final = dfa.initial_state, set(dfa.final_states)

    def prefixes(self, word: str) -> np.ndarray:
        out, q = np.zeros(len(word), dtype=np.int64), self.start
        for i, a in enumerate(word):
            q = None if q is None else self.trans.get(q, {}).get(a)
            out[i] = q is not None and q in self.final
        return out

    def reference(self, ids: np.ndarray) -> np.ndarray:
        return np.stack([self.prefixes("".join(self.alphabet[int(c)] for c in row)) for row in ids])


def _check(model, outside: Outside, long: tuple[int, ...] = (100, 1000, 10_000)) -> dict:
    return check_model(
        model, outside.reference, exhaustive_max_n=10, random_n=list(long), samples=2, seed=7
    )


@pytest.mark.parametrize("regex", ["(ab|ba)*", "(aab)*", DYCK3])
def test_star_free_languages_give_unique_hard_models_exact_against_automata_lib(
    regex: str,
) -> None:
    compiled = compile_regular(dfa_from_regex(regex, "ab"), "hard")
    assert compiled.record["class"] == "star-free"
    assert "MOD" not in operators(compiled.formula) and "#<" not in operators(compiled.formula)
    model = compiled.model
    assert class_violations(model, column("uhat-strict")) == []
    heads = [h.spec for b in model.blocks for h in b.heads]
    assert {str(h.weighting) for h in heads} <= {"leftmost", "rightmost"}
    assert {str(h.mask) for h in heads} <= {"strict-future", "strict-past"}
    assert [f for f in model.spec.position_features if f != "1"] == []
    report = _check(model, Outside(regex, "ab"))
    assert report["mismatches"] == 0 and report["max_abs_error"] == 0.0
    assert report["max_n"] == 10_000 and max(report["exhaustive_lengths"]) == 10


@pytest.mark.parametrize(
    ("regex", "alphabet", "target"),
    [("(11)*", "01", "soft-temperature"), ("0*(10*10*)*", "01", "soft-pe"),
     ("(aa)*", "ab", "hard"), ("((a|b)(a|b)(a|b))*", "ab", "soft-temperature")],
)  # fmt: skip
def test_solvable_languages_compile_with_mod_exact_against_automata_lib(
    regex: str, alphabet: str, target: str
) -> None:
    compiled = compile_regular(dfa_from_regex(regex, alphabet), target)
    assert compiled.record["class"] == "solvable"
    assert "MOD" in operators(compiled.formula)
    report = _check(compiled.model, Outside(regex, alphabet), long=(100, 1000))
    assert report["mismatches"] == 0


def _permutation_dfa(tmp_path: Path, name: str, a: list[int], b: list[int]) -> Path:
    path = tmp_path / f"{name}.json"
    transitions = {str(q): {"a": str(a[q]), "b": str(b[q])} for q in range(len(a))}
    path.write_text(
        json.dumps({"alphabet": "ab", "start": "0", "accept": ["0"], "transitions": transitions})
    )
    return path


@pytest.mark.parametrize(
    ("name", "b", "group", "factors"),
    [("a5", [1, 2, 0, 3, 4], "A5", ["A5"]), ("s5", [1, 0, 2, 3, 4], "S5", ["A5", "Z2"])],
)
def test_non_solvable_groups_are_refused_with_their_name_and_generators(
    tmp_path: Path, name: str, b: list[int], group: str, factors: list[str]
) -> None:
    dfa = dfa_from_file(_permutation_dfa(tmp_path, name, [1, 2, 3, 4, 0], b))
    compiled = compile_regular(dfa, "hard")
    assert compiled.refused and compiled.model is None
    culprit = compiled.classification.culprit
    assert culprit is not None and culprit["name"] == group
    assert culprit["composition_factors"] == factors
    assert culprit["generators"] == ["a", "b"]
    reason = compiled.record["reason"]
    assert group in reason and "Barrington (1989)" in reason and "NC¹-complete" in reason
    assert "impossible" not in reason and "no construction is known" in reason


def test_s3_is_solvable_and_its_formula_counts(tmp_path: Path) -> None:
    dfa = dfa_from_file(_permutation_dfa(tmp_path, "s3", [1, 2, 0], [1, 0, 2]))
    cls, formula, record = formula_for(dfa)
    assert cls.cls is RegularClass.SOLVABLE and record["groups"][0]["name"] == "S3"
    assert formula is not None and "MOD" in operators(formula)
    assert record["formula_check"]["product"]["equal_at_every_length"]


def test_the_empty_word_is_reported_beside_the_model() -> None:
    cls, formula, record = formula_for(dfa_from_regex("(ab)*", "ab"))
    assert record["empty_word"]["member"] is True
    assert "no output" in record["empty_word"]["note"]
    _, _, other = formula_for(dfa_from_regex("(ab)+", "ab"))
    assert other["empty_word"]["member"] is False


def test_local_divisors_are_smaller_and_their_product_is_xcy() -> None:
    tm = monoid_of(dfa_from_regex(DYCK3, "ab"), 1000)
    m = tm.monoid
    units = m.units()
    for c in range(m.size):
        if units[c]:
            continue
        cm = set(m.table[c].tolist()) & set(m.table[:, c].tolist())
        div = local_divisor(m, c, sorted(cm))
        assert div.size < m.size
        elems = div.parent
        for x in range(div.size):
            for y in range(div.size):
                # x = x'c and y = cy': x ∘ y = x'cy', for any choice of x', y'
                xp = next(z for z in range(m.size) if m.table[z, c] == elems[x])
                yp = next(z for z in range(m.size) if m.table[c, z] == elems[y])
                assert elems[div.table[x, y]] == m.table[m.table[xp, c], yp]


@pytest.mark.parametrize(
    ("regex", "alphabet"),
    [(".*ab.*", "ab"), ("1.*", "01"), ("(a|b)*a(a|b)(a|b)", "ab"), ("((ab)*c)*", "abc"),
     ("(a(ab)*b)*", "ab"), ("b*(ab*ab*)*", "ab"), ("(a|bc)*", "abc")],
)  # fmt: skip
def test_translated_formulas_equal_the_dfa_at_every_length(regex: str, alphabet: str) -> None:
    cls, formula, record = formula_for(dfa_from_regex(regex, alphabet))
    assert formula is not None
    assert record["formula_check"]["product"]["equal_at_every_length"]
    words = record["formula_check"]["evaluator"]
    assert words["mismatch"] is None and words["checked_words"] > 500
    has_mod = "MOD" in operators(formula)
    assert has_mod == (cls.cls is RegularClass.SOLVABLE)


def test_the_product_check_finds_a_wrong_formula() -> None:
    from hardsoft.logic import parse

    dfa = dfa_from_regex(".*ab.*", "ab")
    wrong = product_check(parse("'b' & Y 'a'"), dfa)  # ends with ab, not contains ab
    assert not wrong.equal and wrong.counterexample == "aba"
    right = product_check(parse("'b' & Y 'a' | P ('b' & Y 'a')"), dfa)
    assert right.equal


def test_limits_refuse_with_the_number(monkeypatch: pytest.MonkeyPatch) -> None:
    import hardsoft.regular.compile as rc

    monkeypatch.setattr(rc, "MAX_MONOID", 10)
    with pytest.raises(HardsoftError, match="more than 10 elements"):
        formula_for(dfa_from_regex("(aab)*", "ab"))  # 12 elements
    monkeypatch.setattr(rc, "MAX_MONOID", 1000)
    monkeypatch.setattr(rc, "MAX_BUILT", 50)
    with pytest.raises(HardsoftError, match="passed 50 distinct nodes"):
        formula_for(dfa_from_regex(DYCK3, "ab"))


def test_cli_compiles_a_regex_and_says_what_it_built(tmp_path: Path) -> None:
    from ._cli import run_cli

    out = tmp_path / "aab.safetensors"
    r = run_cli("compile", "--regex", "(aab)*", "--alphabet", "ab", "-o", str(out), "--json")
    assert r.rc == 0, r.err
    rec = json.loads(r.out)  # exactly one JSON object
    assert rec["class"] == "star-free" and rec["monoid_size"] == 12 and not rec["refused"]
    assert rec["formula_size"]["dag_after"] <= rec["formula_size"]["dag_before"]
    assert rec["model_check"]["mismatches"] == 0 and rec["certificate"]["layers"] > 0
    assert rec["empty_word"]["member"] is True and out.is_file()


def test_cli_refuses_a_non_solvable_dfa_with_exit_1(tmp_path: Path) -> None:
    from ._cli import run_cli

    path = _permutation_dfa(tmp_path, "a5", [1, 2, 3, 4, 0], [1, 2, 0, 3, 4])
    out = tmp_path / "never.safetensors"
    r = run_cli("compile", "--dfa", str(path), "-o", str(out), "--json")
    assert r.rc == 1, r.err  # a negative result, not a usage error
    rec = json.loads(r.out)
    assert rec["refused"] and rec["class"] == "non-solvable" and rec["output"] is None
    assert "A5" in rec["reason"] and "Barrington (1989)" in rec["reason"]
    assert "'a'" in rec["reason"] and "'b'" in rec["reason"]  # the two generating words
    assert not out.exists()
    human = run_cli("compile", "--dfa", str(path))
    assert human.rc == 1 and "refused" in human.out and "Barrington (1989)" in human.out
    assert run_cli("compile", "--dfa", str(path), "--target", "nope").rc == 2


def test_cli_refuses_to_write_the_model_over_the_dfa_file(tmp_path: Path) -> None:
    """-o naming the --dfa file (or a link to it) is refused before any work: it once replaced
    the DFA with the model (docs/errors.md: no output is an input of the same command)."""
    from ._cli import run_cli

    path = _permutation_dfa(tmp_path, "z2", [1, 0], [0, 1])
    before = path.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(path)
    for out in (path, link):
        r = run_cli("compile", "--dfa", str(path), "-o", str(out))
        assert r.rc == 2 and "is the input file --dfa" in r.err, r.err
    assert path.read_bytes() == before


def test_cli_a_limit_is_a_usage_error_naming_the_number(tmp_path: Path) -> None:
    """Past a limit: exit 2 (docs/regular.md, "Limits"), the number named, nothing on stdout
    and no model; exit 1 stays the non-solvable class's."""
    from ._cli import run_cli

    out = tmp_path / "big.safetensors"
    r = run_cli(
        "compile", "--regex", "(a|b)*a(a|b){9}", "--alphabet", "ab", "-o", str(out), "--json"
    )
    assert r.rc == 2 and "2000" in r.err and r.out == "" and not out.exists(), r.err


def test_the_experiment_compiles_and_refuses_by_class() -> None:
    from hardsoft.experiments.regular import _one
    from hardsoft.languages import get_language
    from hardsoft.report.claims import CLAIMS

    star = _one("(aab)*", dfa_from_regex("(aab)*", "ab"))
    assert star["class"] == "star-free" and star["unique_hard_strict"] and not star["mismatches"]
    assert star["proved_every_length"] and star["max_n"] >= 256
    count = _one("(aa)*", dfa_from_regex("(aa)*", "ab"))
    assert count["class"] == "solvable" and not count["unique_hard_strict"]
    a5 = get_language("a5-identity").automaton()
    assert a5 is not None
    refused = _one("a5", a5)
    assert refused["refused"] and refused["group"] == "A5" and refused["monoid_size"] == 60
    metrics = {"mismatches": 0, "compiled": 2, "star_free": 1, "star_free_unique_only": 1,
               "refused_groups": ["A5"], "proved_every_length": True}  # fmt: skip
    assert CLAIMS["regular-compiled"].judge(metrics)[0] == "extends"
    assert CLAIMS["regular-compiled"].judge({**metrics, "mismatches": 1})[0] == "deviates"


def test_a_one_letter_alphabet_compiles() -> None:
    """(aa)* over the one letter a: one word per length (the checks' lengths are capped)."""
    from hardsoft.regular.compile import ONE_LETTER_LENGTH, exhaustive_length

    assert exhaustive_length(1) == ONE_LETTER_LENGTH and exhaustive_length(2) == 8
    compiled = compile_regular(dfa_from_regex("(aa)*", "a"), "hard")
    assert compiled.record["class"] == "solvable" and compiled.record["monoid_size"] == 2
    assert compiled.record["model_check"]["mismatches"] == 0

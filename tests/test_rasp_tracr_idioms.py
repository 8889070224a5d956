"""Tracr's idioms as its ``lib.py`` writes them (issue 42), compiled length-general and checked
against ``rasp.evaluate`` (never against the model itself): categorical counts, a lambda
comparing a count with a constant, comparisons of an affine map of indices, ``%`` and ``//``,
``make_nary_sequencemap``'s tuples, means over j != i, bounded tables of means, the causal
option and Tracr's evaluator names. The programs are written here in Tracr's style (no code
of Tracr's is copied); the benchmark runs Tracr's own ``lib.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardsoft import rasp
from hardsoft.errors import HardsoftError
from hardsoft.programs.check_source import check_program
from hardsoft.programs.rasp import RaspProgram, ops
from hardsoft.programs.rasp.compile import NeedsMaxLen, symbols_for
from hardsoft.programs.rasp.lambdas import read_map, read_pack, read_unpack, unread_reason

SRC = Path(__file__).resolve().parents[1] / "src/hardsoft/programs/rasp"


def program_of(sop: rasp.SOp, vocab: object, causal: bool = False) -> RaspProgram:
    values, symbols = symbols_for(list(vocab))  # type: ignore[call-overload]
    return RaspProgram(sop, sop.name, values, symbols, causal=causal)


def compiled_and_checked(sop: rasp.SOp, vocab: object, *, exhaustive: int = 5,
                         random_n: tuple[int, ...] = (40,), **kw: object):  # type: ignore[no-untyped-def]  # fmt: skip
    """Compile for soft-temperature, check every position against rasp.evaluate (or, for a
    causal model, Tracr's causal_eval semantics), return the model."""
    prog = program_of(sop, vocab, causal=bool(kw.get("causal")))
    model = rasp.compile(sop, list(vocab), **kw)  # type: ignore[arg-type]
    report = check_program(model, prog, exhaustive_max_n=exhaustive, random_n=random_n, samples=3)
    assert report["mismatches"] == 0, report["first_mismatch"]
    assert report["checked_strings"] > 0
    return model


def length_general(model) -> bool:  # type: ignore[no-untyped-def]
    cert = model.meta["certificate"]
    return cert["length_general"] and cert["exact_for"] == "every length n"


def hist() -> rasp.SOp:
    return rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))


def test_categorical_counts_are_one_integer_output() -> None:
    """Tracr's SelectorWidth is categorical by default: the count is one output holding the
    integer (read by rounding), not one coordinate per value, at every length."""
    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    count_a = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "a"))
    for sop in (length.named("length"), hist().named("hist"), count_a.named("count_a")):
        assert rasp.is_categorical(sop)
        model = compiled_and_checked(sop, "abc", random_n=(40, 300))
        assert length_general(model)
        (out,) = model.meta["program"]["outputs"]
        assert out["encoding"] == "number" and out["read"] == "round" and out["categorical"]


def test_a_lambda_comparing_a_count_with_a_constant_is_a_boolean_key() -> None:
    """count_less_freq as Tracr writes it: ``Select(hist, hist, lambda x, y: x <= n)``."""
    n = 2
    h = hist().named("hist")
    less = rasp.Select(h, h, lambda x, y: x <= n).named("select_less")
    model = compiled_and_checked(rasp.SelectorWidth(less).named("clf"), "abc", random_n=(60,))
    assert length_general(model)


@pytest.mark.parametrize("slope", [-1, 1, -2])
def test_comparisons_of_an_affine_map_of_indices_are_masks(slope: int) -> None:
    """``Select(1 - indices, 1 - indices, LT)`` is the mask j > i (Tracr's sort_unique test
    case: a reverse); any slope, the comparison reversed for negative ones."""
    keys = (slope * rasp.indices + 1).named("keys")
    smaller = rasp.Select(keys, keys, rasp.Comparison.LT).named("smaller")
    target = rasp.SelectorWidth(smaller).named("target_pos")
    sort = rasp.Aggregate(rasp.Select(target, rasp.indices, rasp.Comparison.EQ), rasp.tokens)
    model = compiled_and_checked(sort.named("sort"), "abc", random_n=(40, 200))
    assert length_general(model)
    assert any("strict" in g["text"] or "order" in g["text"]
               for g in model.meta["certificate"]["gadgets"])  # fmt: skip


def test_modulo_and_floor_division_on_indices_counts_and_length() -> None:
    """``x % m`` and ``x // m`` by constants: residues from the features [i mod m = r] for
    affine maps of indices, from a lookup of position x for counts and the length."""
    idx = rasp.indices
    cases = [
        rasp.Map(lambda x: x % 3, idx).named("i_mod3"),
        rasp.numerical(rasp.Map(lambda x: x // 3, idx)).named("i_div3"),
        rasp.Map(lambda x: (1 - 2 * x) % 4 == 1, idx).named("neg"),
        rasp.Map(lambda x: x % 2 == 0, hist()).named("hist_even"),
        rasp.numerical(rasp.Map(lambda x: x // 2, hist())).named("hist_half"),
        rasp.Map(lambda x: x % 3, rasp.length).named("len_mod3"),
    ]
    for sop in cases:
        model = compiled_and_checked(sop, "ab", exhaustive=6, random_n=(40, 97))
        assert length_general(model), sop.name


def test_modulo_is_read_only_where_certain() -> None:
    assert read_map(lambda x: x % 4, 1) == ops.Modulo(4)
    assert read_map(lambda x: (x + 1) // 2, 1) == ops.Compose(ops.Affine((1,), 1), ops.FloorDiv(2))
    for f in (lambda x: x % 2.0, lambda x: x % 0, lambda x: x % -3, lambda x: x / 2):
        assert read_map(f, 1) is None
    for f in (lambda x: x % 5, lambda x: (3 - x) // 4, lambda x: (2 * x) % 3 == 1):
        op = read_map(f, 1)
        assert op is not None and all(op(v) == f(v) for v in range(-20, 20))
    assert "divides" in unread_reason(lambda x, i: x + i / 10)


def nary(f, *sops):  # type: ignore[no-untyped-def]
    """Tracr's make_nary_sequencemap, written again in its style."""
    values, *rest = sops
    for sop in rest:
        values = rasp.SequenceMap(lambda x, y: (*x, y) if isinstance(x, tuple) else (x, y),
                                  values, sop)  # fmt: skip
    return rasp.Map(lambda args: f(*args), values)


def test_nary_tuples_with_indices_are_read_as_their_components() -> None:
    prog = nary(lambda x, y, z: x + y - z, rasp.tokens, rasp.tokens, rasp.indices).named("xyz")
    model = compiled_and_checked(prog, [1, 2, 3], random_n=(40, 150))
    assert length_general(model)
    assert read_pack(lambda x, y: (x, y)) == ops.Pack(flatten=False)
    assert read_unpack(lambda args: max(*args), 2) is None
    odd = nary(lambda x, y, z: x * y / z, rasp.indices, rasp.indices, rasp.tokens).named("odd")
    with pytest.raises(NeedsMaxLen, match="not read as an affine map of their components"):
        rasp.compile(odd, [1, 2, 3])
    compiled_and_checked(odd, [1, 2, 3], max_len=6, random_n=(6,))


def test_means_over_other_positions() -> None:
    """A mean over j != i: the mean over every position corrected by the query's own term,
    carried as the sum over j != i divided by n; compared with constants exactly."""
    is_a = rasp.numerical(rasp.tokens == "a")
    others = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.NEQ)
    for default in (0, None):
        mean = rasp.numerical(rasp.Aggregate(others, is_a, default=default)).named("others")
        model = compiled_and_checked(mean, "ab", exhaustive=6, random_n=(40, 300))
        assert length_general(model)
        assert model.meta["program"]["outputs"][0]["unit"] == "mean*(n-1)/n"
    mean = rasp.numerical(rasp.Aggregate(others, is_a, default=0)).named("others")
    for cmp in ((mean > 0.5).named("majority"), (mean == 0).named("none_else")):
        assert length_general(compiled_and_checked(cmp, "ab", exhaustive=6, random_n=(41,)))
    with pytest.raises(HardsoftError, match="division by n - 1"):
        rasp.compile(rasp.numerical(mean + 1).named("plus"), "ab")


def test_bounded_compiles_tabulate_the_values_of_means() -> None:
    """At n <= N a mean takes finitely many values: a function of it is a table there, and
    without the bound the refusal says so (never that no table exists)."""
    is_a = rasp.numerical(rasp.tokens == "a")
    prevs = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    frac = rasp.numerical(rasp.Aggregate(prevs, is_a, default=0)).named("frac")
    for sop in (rasp.numerical(rasp.Map(lambda x: x * x, frac)).named("square"),
                rasp.Map(lambda x: x > 1 / 3, frac).named("third")):  # fmt: skip
        with pytest.raises(NeedsMaxLen, match="finitely many at n <= N"):
            rasp.compile(sop, "ab")
        model = compiled_and_checked(sop, "ab", max_len=4, random_n=())
        assert model.meta["certificate"]["exact_for"] == "n <= 4"
    for path in SRC.glob("*.py"):
        assert "exists at any length" not in path.read_text(), path


def test_the_causal_option_is_tracrs_causal_eval() -> None:
    is_a = rasp.numerical(rasp.tokens == "a")
    everything = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)
    width = rasp.SelectorWidth(everything).named("width")
    mean = rasp.numerical(rasp.Aggregate(everything, is_a, default=0)).named("mean")
    shifted = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1),
                             rasp.tokens).named("prev")  # fmt: skip
    assert rasp.causal_eval.evaluate(width, "abc") == [1, 2, 3]
    assert rasp.evaluate(width, "abc") == [3, 3, 3]
    for sop in (width, mean, shifted, hist().named("hist")):
        model = compiled_and_checked(sop, "ab", causal=True, exhaustive=6, random_n=(40,))
        assert model.meta["program"]["causal"] and length_general(model)
        masks = {h.mask for layer in model.spec.layers for h in layer.heads}
        assert masks <= {"future", "strict-future"}, (sop.name, masks)
    reverse = rasp.Aggregate(rasp.Select(rasp.indices, rasp.length - rasp.indices - 1,
                                         rasp.Comparison.EQ), rasp.tokens)  # fmt: skip
    with pytest.raises(HardsoftError, match="causal"):
        rasp.compile(reverse.named("reverse"), "ab", causal=True)


def test_tracrs_evaluator_names() -> None:
    prog = hist().named("hist")
    assert isinstance(rasp.DefaultRASPEvaluator(), rasp.RASPEvaluator)
    assert rasp.DefaultRASPEvaluator().evaluate(prog, "abca") == rasp.evaluate(prog, "abca")
    causal = rasp.causal_eval.CausalEvaluator()
    assert isinstance(causal, rasp.DefaultRASPEvaluator)
    assert causal.evaluate(prog, "abca") == [1, 1, 1, 2]
    sel = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    assert rasp.causal_eval.evaluate(sel, "aa") == [[True, False], [True, True]]


def test_what_tracr_cannot_compile_compiles_here() -> None:
    """The cases benchmarks/tracr_errors.py finds Tracr refusing: & of two selectors, the
    primitive rasp.length, a mean of values other than 0 and 1 (each length-general here)."""
    eq = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    leq = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    value = rasp.numerical(rasp.Map(lambda x: {"a": 0, "b": 1, "c": 2}[x], rasp.tokens))
    cases = [
        rasp.numerical(rasp.SelectorWidth(eq & leq)).named("and"),
        rasp.numerical(rasp.Map(lambda x: x, rasp.length)).named("length"),
        rasp.numerical(rasp.Aggregate(leq, value, default=0)).named("mean012"),
    ]
    for sop in cases:
        assert length_general(compiled_and_checked(sop, "abc", random_n=(40,))), sop.name

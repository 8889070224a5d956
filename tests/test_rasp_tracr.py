"""``rasp.from_tracr``: Tracr's own objects as hardsoft.rasp ones. Runs where Tracr is
importable (it is not a dependency: ``pip install git+https://github.com/google-deepmind/tracr``);
skipped otherwise."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest

from hardsoft import rasp
from hardsoft.programs.check_source import check_program
from hardsoft.programs.rasp import RaspProgram, ops
from hardsoft.programs.rasp.compile import symbols_for

T = pytest.importorskip("tracr.rasp.rasp", reason="Tracr is not installed (not a dependency)")


def tracr_lib():  # type: ignore[no-untyped-def]
    """tracr/compiler/lib.py without tracr.compiler's heavy imports (jax, haiku)."""
    import tracr

    path = Path(tracr.__file__).parent / "compiler" / "lib.py"
    spec = importlib.util.spec_from_file_location("tracr_compiler_lib", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_operators_are_recognised() -> None:
    assert rasp.from_tracr(T.tokens + 1).op == ops.Affine((1,), 1)
    assert rasp.from_tracr(T.indices < 3).op == ops.Compare(ops.Relation.LT, 3)
    assert rasp.from_tracr(T.length - T.indices).op == ops.Affine((1, -1))
    composed = rasp.from_tracr((T.indices + 1) == 2).op
    assert isinstance(composed, ops.Compose)
    assert [type(s) for s in composed.steps()] == [ops.Affine, ops.Compare]
    assert rasp.from_tracr(T.Map(lambda v: v, T.tokens)).op is None


@pytest.mark.parametrize(
    ("make", "vocab"),
    [
        (lambda L: L.make_length(), "ab"),
        (lambda L: L.make_reverse(T.tokens), "abc"),
        (lambda L: L.make_hist(), "ab"),
        (lambda L: L.make_shuffle_dyck(["()"]), "()"),
        (lambda L: L.detect_pattern(T.tokens, "ab"), "ab"),
        (lambda L: L.make_sort_unique(T.tokens, T.tokens), "abc"),
    ],
)
def test_converted_programs_evaluate_as_tracrs(make, vocab: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Tracr's evaluator with our one documented difference: a categorical Aggregate whose
    selected positions all hold the same string gives it (Tracr raises; docs/rasp.md)."""
    tracr_mean = T._mean

    def mean(xs, default):  # type: ignore[no-untyped-def]
        if len(xs) > 1 and isinstance(xs[0], str) and all(x == xs[0] for x in xs):
            return xs[0]
        return tracr_mean(xs, default)

    monkeypatch.setattr(T, "_mean", mean)
    program = make(tracr_lib())
    ours = rasp.from_tracr(program)
    for n in range(1, 5):
        for w in itertools.product(vocab, repeat=n):
            try:
                want = program(list(w))
            except Exception:
                with pytest.raises(rasp.RaspError):
                    ours(list(w))
                continue
            assert ours(list(w)) == want


def test_tracrs_reverse_compiles_for_every_length() -> None:
    ours = rasp.from_tracr(tracr_lib().make_reverse(T.tokens))
    values, symbols = symbols_for(list("abc"))
    prog = RaspProgram(ours, "reverse", values, symbols)
    model = prog.compile("soft-temperature")
    assert model.meta["certificate"]["length_general"]
    report = check_program(model, prog, exhaustive_max_n=4, random_n=(200,), samples=2)
    assert report["mismatches"] == 0

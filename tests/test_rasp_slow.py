"""The issue's bar for the length-general programs of Tracr's lib, at full size (slow): one
soft-temperature model each, exact at every position of every word to length 7 and of random
words at n = 100 and 1000 (``hardsoft reproduce --full``, experiment ``tracr-lib``, runs the
same check)."""

from __future__ import annotations

import pytest

from hardsoft.programs.check_source import check_program
from hardsoft.programs.rasp.load import library_path, load

DONE_WHEN = [
    "length", "frac_prevs", "pair_balance", "hist", "shuffle_dyck", "shuffle_dyck2", "shifted",
    "pattern", "count", "count_is_two", "reverse", "count_less_freq", "majority3",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", DONE_WHEN)
def test_exact_to_length_7_and_at_100_and_1000(name: str) -> None:
    program = load(library_path(), name=name)
    model = program.compile("soft-temperature")
    assert model.meta["certificate"]["length_general"]
    report = check_program(model, program, exhaustive_max_n=7, random_n=(100, 1000), samples=4)
    assert report["mismatches"] == 0, report["first_mismatch"]
    assert report["max_n"] == 1000


@pytest.mark.slow
def test_sort_unique_on_permutations_of_26_letters() -> None:
    import random

    program = load(library_path(), name="sort_unique")
    model = program.compile("soft-temperature")
    rng = random.Random(0)
    words = ["".join(rng.sample(program.alphabet, 26)) for _ in range(16)]
    report = check_program(model, program, exhaustive_max_n=2, random_n=(), words=words)
    assert report["mismatches"] == 0 and report["max_n"] == 26

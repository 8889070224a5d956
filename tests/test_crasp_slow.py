"""The C-RASP property tests of tests/test_crasp.py at a larger scale (``pytest -m slow``)."""

from __future__ import annotations

import pytest

from tests.test_crasp import compiled_agree, decompiled_round_trip, translation_agrees

pytestmark = pytest.mark.slow


def test_translation_on_many_random_programs() -> None:
    translation_agrees(101, 400, 7)


def test_many_compiled_random_programs() -> None:
    compiled_agree(102, 40, 6, 300)


def test_many_decompiled_random_programs() -> None:
    refused = decompiled_round_trip(103, 10)
    assert refused <= 10  # most compiled programs decompile (the count is in docs/programs.md)
    print(f"decompile refused {refused} models on the way to 10 round trips")

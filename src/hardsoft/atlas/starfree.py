"""Star-freeness of a regular language (moved to :mod:`hardsoft.regular.starfree` and
:mod:`hardsoft.regular.monoid`, where the compiler of regular languages uses it too; the names
stay importable from here)."""

from __future__ import annotations

from hardsoft.regular.monoid import MAX_MONOID, index_and_period, transition_monoid
from hardsoft.regular.starfree import StarFreeDecision, decide_star_free, separating_word

__all__ = [
    "MAX_MONOID",
    "StarFreeDecision",
    "decide_star_free",
    "index_and_period",
    "separating_word",
    "transition_monoid",
]

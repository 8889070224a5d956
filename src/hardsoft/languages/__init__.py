"""Formal languages and per-position tasks: membership oracles, samplers and the registry.

>>> from hardsoft.languages import get_language
>>> L = get_language("dyck2")
>>> L.member("([])"), L.prefix_reference("()[").tolist()
(True, [0, 1, 0])

Names: ``parity-even``, ``parity-odd``, ``dyck1``, ``dyck2``, ``dyck3`` (any ``dyck<k>``),
``ones-star``, ``anbn``, ``majority``, ``first``, ``flipflop``, ``induction-head`` and
``khop2``, ``khop3`` (any ``khop<k>``; ``khop1`` is ``induction-head``). Hahn's §6 processes
live in :mod:`hardsoft.languages.distributions`. See docs/languages.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, all_words
from hardsoft.languages.dyck import Dyck
from hardsoft.languages.flipflop import FlipFlop, flipflop_state
from hardsoft.languages.induction import InductionTask, khop_targets
from hardsoft.languages.parity import Parity
from hardsoft.languages.simple import AnBn, First, Majority, OnesStar

__all__ = [
    "AnBn",
    "Dyck",
    "First",
    "FlipFlop",
    "HardsoftError",
    "InductionTask",
    "Language",
    "Majority",
    "OnesStar",
    "Parity",
    "all_words",
    "flipflop_state",
    "get_language",
    "khop_targets",
    "language_names",
]

_FIXED: dict[str, Callable[[], Language]] = {
    "parity-even": lambda: Parity(odd=False),
    "parity-odd": lambda: Parity(odd=True),
    "dyck1": lambda: Dyck(1),
    "dyck2": lambda: Dyck(2),
    "dyck3": lambda: Dyck(3),
    "ones-star": OnesStar,
    "anbn": AnBn,
    "majority": Majority,
    "first": First,
    "flipflop": FlipFlop,
    "induction-head": lambda: InductionTask(1),
    "khop2": lambda: InductionTask(2),
    "khop3": lambda: InductionTask(3),
}


def language_names() -> list[str]:
    """The registered names (``dyck<k>`` and ``khop<k>`` accept other k as well)."""
    return list(_FIXED)


def get_language(name: str) -> Language:
    """The language or task called ``name``; an unknown name is a one-line HardsoftError."""
    key = name.strip().lower()
    if key in _FIXED:
        return _FIXED[key]()
    m = re.fullmatch(r"dyck-?(\d+)", key)
    if m and int(m.group(1)) >= 1:
        return Dyck(int(m.group(1)))
    m = re.fullmatch(r"khop-?(\d+)", key)
    if m and int(m.group(1)) >= 1:
        return InductionTask(int(m.group(1)))
    raise HardsoftError(
        f"unknown language {name!r}; known: {', '.join(language_names())} (also dyck<k>, khop<k>)"
    )

"""Formal languages, per-position tasks and Hahn's processes: oracles, samplers and the one
registry of their names.

>>> from hardsoft.languages import get_language, get_process
>>> L = get_language("dyck2")
>>> L.member("([])"), L.prefix_reference("()[").tolist()
(True, [0, 1, 0])
>>> get_process("dyck2").name, get_process("parity-process", 0.4).p
('dyck2-process', 0.4)

Languages and tasks: ``parity-even``, ``parity-odd``, ``dyck1``, ``dyck2``, ``dyck3`` (any
``dyck<k>``), ``ones-star``, ``anbn``, ``majority``, ``first``, ``contains-ab``, ``ends-ab``,
``ab-star``, ``dyck1-depth2`` (any ``dyck<k>-depth<m>``), ``flipflop``, the Tomita grammars
``tomita2`` … ``tomita7`` (``tomita1`` is ``ones-star``), FLaRe's regular tasks ``even-pairs``,
``repeat-01``, ``cycle-navigation``, ``modular-arithmetic-simple`` and ``dyck2-depth3``, the
word problem of A5 ``a5-identity``,
``induction-head`` and ``khop2``, ``khop3`` (any ``khop<k>``; ``khop1`` is
``induction-head``); ``parity`` is Hahn's PARITY, i.e. ``parity-even``. Hahn's §6 processes
(:mod:`hardsoft.languages.distributions`): ``parity-process`` and ``dyck2-process``, also
reachable by the language they generate (``parity``, ``parity-even``, ``dyck2``). What a
language can do besides membership (be a restriction target, have a Hahn process) is declared
on its class (:class:`~hardsoft.languages.base.Language`). See docs/languages.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, all_words
from hardsoft.languages.distributions import DyckProcess, HahnProcess, ParityProcess
from hardsoft.languages.dyck import Dyck
from hardsoft.languages.flare import CycleNavigation, EvenPairs, ModularArithmetic
from hardsoft.languages.flipflop import FlipFlop, flipflop_state
from hardsoft.languages.groups import WordProblem, a5_identity
from hardsoft.languages.induction import InductionTask, khop_targets
from hardsoft.languages.parity import Parity
from hardsoft.languages.regular import AaStar, RegularLanguage
from hardsoft.languages.simple import AnBn, First, Majority, OnesStar
from hardsoft.languages.starfree import ABStar, BoundedDyck, ContainsAB, EndsAB, Repeat01
from hardsoft.languages.tomita import TOMITA

__all__ = [
    "AaStar",
    "ABStar",
    "AnBn",
    "BoundedDyck",
    "ContainsAB",
    "CycleNavigation",
    "Dyck",
    "DyckProcess",
    "EndsAB",
    "EvenPairs",
    "First",
    "FlipFlop",
    "HahnProcess",
    "HardsoftError",
    "InductionTask",
    "Language",
    "Majority",
    "ModularArithmetic",
    "OnesStar",
    "Parity",
    "ParityProcess",
    "RegularLanguage",
    "Repeat01",
    "WordProblem",
    "all_words",
    "flipflop_state",
    "get_language",
    "get_process",
    "has_process",
    "is_process",
    "khop_targets",
    "language_names",
    "process_names",
    "restriction_targets",
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
    "contains-ab": ContainsAB,
    "ends-ab": EndsAB,
    "ab-star": ABStar,
    "dyck1-depth2": lambda: BoundedDyck(2),
    "flipflop": FlipFlop,
    "induction-head": lambda: InductionTask(1),
    "khop2": lambda: InductionTask(2),
    "khop3": lambda: InductionTask(3),
    "aa-star": AaStar,
    **TOMITA,
    "even-pairs": EvenPairs,
    "repeat-01": Repeat01,
    "cycle-navigation": CycleNavigation,
    "modular-arithmetic-simple": ModularArithmetic,
    "dyck2-depth2": lambda: BoundedDyck(2, k=2),
    "dyck2-depth3": lambda: BoundedDyck(3, k=2),
    "a5-identity": a5_identity,
}
# Families with a parameter: (pattern, constructor from the integer).
_FAMILIES: tuple[tuple[str, Callable[..., Language]], ...] = (
    (r"dyck-?(\d+)", Dyck),
    (r"dyck(\d+)-depth(\d+)", lambda k, m: BoundedDyck(m, k=k)),
    (r"khop-?(\d+)", InductionTask),
)
_ALIASES = {
    "parity": "parity-even",  # Hahn's PARITY (the name the training code uses)
    "tomita1": "ones-star",  # Tomita 1 is 1*
    "dyck-2-3": "dyck2-depth3",  # FLaRe's name of Dyck-(2, 3)
}

_PROCESSES: dict[str, type[HahnProcess]] = {
    ParityProcess.name: ParityProcess,
    DyckProcess.name: DyckProcess,
}
_PROCESS_ALIASES = {"dyck-process": DyckProcess.name}


def language_names() -> list[str]:
    """The registered names (``dyck<k>`` and ``khop<k>`` accept other k as well)."""
    return list(_FIXED)


def _find_language(key: str) -> Language | None:
    key = _ALIASES.get(key, key)
    if key in _FIXED:
        return _FIXED[key]()
    for pattern, make in _FAMILIES:
        m = re.fullmatch(pattern, key)
        if m and all(int(g) >= 1 for g in m.groups()):
            return make(*(int(g) for g in m.groups()))
    return None


def get_language(name: str) -> Language:
    """The language or task called ``name``; an unknown name is a one-line HardsoftError."""
    lang = _find_language(name.strip().lower())
    if lang is None:
        raise HardsoftError(
            f"unknown language {name!r}; known: {', '.join(language_names())} "
            "(also dyck<k>, dyck<k>-depth<m>, khop<k>)"
        )
    return lang


def process_names() -> list[str]:
    """The names of Hahn's processes (:func:`get_process` also takes their languages' names)."""
    return list(_PROCESSES)


def is_process(name: str) -> bool:
    """Whether ``name`` names a process (not a language that has one)."""
    key = name.strip().lower()
    return key in _PROCESSES or key in _PROCESS_ALIASES


def has_process(name: str) -> bool:
    """Whether :func:`get_process` knows ``name`` (a process, or a language declaring one)."""
    key = name.strip().lower()
    if is_process(key):
        return True
    lang = _find_language(key)
    return lang is not None and lang.process_name is not None


def get_process(name: str, p: float | None = None) -> HahnProcess:
    """Hahn's §6 process called ``name`` (``parity-process``, ``dyck2-process``), or the one a
    language declares (``parity``, ``parity-even``, ``dyck2``), with parameter ``p`` (None: the
    process's default). Unknown names and languages without a process are HardsoftErrors."""
    key = name.strip().lower()
    key = _PROCESS_ALIASES.get(key, key)
    cls = _PROCESSES.get(key)
    if cls is None:
        lang = _find_language(key)
        if lang is not None and lang.process_name is None:
            raise HardsoftError(f"{lang.name} has no Hahn process (known: {_process_help()})")
        if lang is None or lang.process_name is None:
            raise HardsoftError(f"unknown process {name!r}; known: {_process_help()}")
        cls = _PROCESSES[lang.process_name]
    return cls(cls.default_p if p is None else p)


def _process_help() -> str:
    langs = [n for n in (*_ALIASES, *_FIXED) if (lg := _find_language(n)) and lg.process_name]
    return f"{', '.join(_PROCESSES)}, or by language: {', '.join(langs)}"


def restriction_targets() -> list[str]:
    """The registered languages the restriction engine builds witnesses for (declared by
    ``Language.restriction_target``; ``dyck<k>`` for any k)."""
    return [name for name in _FIXED if _FIXED[name]().restriction_target]

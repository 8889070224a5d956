"""Temporal logic with counting, LTL[C,+] (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §4;
Barceló et al. 2024): the AST (:mod:`.syntax`), a parser for the concrete syntax (:mod:`.parser`),
an independent evaluator (:mod:`.semantics`), the papers' example formulas (:mod:`.library`) and a
random formula generator (:mod:`.random`).

>>> from hardsoft.logic import parse, accepts
>>> accepts(parse("MOD(2, 1)(#<['1'])"), "0110100")
True
"""

from __future__ import annotations

from hardsoft.logic.library import FORMULAS, NamedFormula, formula_names, get_formula
from hardsoft.logic.parser import parse, parse_term
from hardsoft.logic.random import random_formula, random_term
from hardsoft.logic.semantics import (
    accepts,
    accepts_batch,
    evaluate,
    evaluate_all,
    evaluate_term,
    values,
)
from hardsoft.logic.syntax import *  # noqa: F403
from hardsoft.logic.syntax import __all__ as _syntax_all

__all__ = [
    *_syntax_all,
    "parse",
    "parse_term",
    "evaluate",
    "evaluate_all",
    "evaluate_term",
    "values",
    "accepts",
    "accepts_batch",
    "random_formula",
    "random_term",
    "FORMULAS",
    "NamedFormula",
    "formula_names",
    "get_formula",
]

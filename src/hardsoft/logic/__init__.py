"""Temporal logic with counting, LTL[C,+] (MATH.md §3): the AST (:mod:`.syntax`), a parser for
the concrete syntax (:mod:`.parser`), an independent evaluator (:mod:`.semantics`), the seeds'
example formulas (:mod:`.library`) and a random formula generator (:mod:`.random`)."""

from __future__ import annotations

from hardsoft.logic.parser import parse, parse_term
from hardsoft.logic.syntax import *  # noqa: F403
from hardsoft.logic.syntax import __all__ as _syntax_all

__all__ = [*_syntax_all, "parse", "parse_term"]

"""Named formulas: the examples of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §4 and the
languages the project studies, each with its alphabet and a description of the language it defines.

A word is accepted when the formula holds at its last position, so every language here is a set
of non-empty words (the empty word has no last position; see :mod:`.semantics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from hardsoft.errors import HardsoftError
from hardsoft.logic.parser import parse
from hardsoft.logic.syntax import Formula, fragment

__all__ = ["NamedFormula", "FORMULAS", "get_formula", "formula_names"]


@dataclass(frozen=True)
class NamedFormula:
    """A formula with a name, its alphabet, the language it defines and where it comes from."""

    name: str
    text: str
    alphabet: str
    description: str
    source: str = ""

    @cached_property
    def formula(self) -> Formula:
        """The parsed formula (checked against the alphabet)."""
        return parse(self.text, alphabet=self.alphabet)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record (used by ``hardsoft formulas show --json``)."""
        frag = fragment(self.formula)
        return {
            "name": self.name,
            "formula": self.text,
            "alphabet": self.alphabet,
            "description": self.description,
            "source": self.source,
            "fragment": frag.name,
            "past_only": frag.past_only,
        }


_ENTRIES = [
    NamedFormula(
        "parity-mod",
        "MOD(2, 1)(#<['1'])",
        "01",
        "PARITY: an odd number of 1s (counting term with the numerical predicate MOD).",
        "Yang et al. (arXiv:2412.09925v1) §4.4 (odd convention; Hahn (2020) §4 counts even)",
    ),
    NamedFormula(
        "parity-count",
        "!E (#<[Y '1'] = #>['1'])",
        "01",
        "PARITY without numerical predicates: the number of 1s is odd iff no position has as "
        "many 1s strictly to its left as at or to its right.",
        "Yang et al. (arXiv:2412.09925v1) §4.5",
    ),
    NamedFormula(
        "ngram-abc",
        "E ('a' & X ('b' & X 'c'))",
        "abc",
        "Words containing the 3-gram abc ('a' & X ('b' & X 'c') detects it starting at i).",
        "Yang et al. (arXiv:2412.09925v1) §4.1",
    ),
    NamedFormula(
        "suffix-abc",
        "'c' & Y ('b' & Y 'a')",
        "abc",
        "Words ending in abc (a past-only n-gram detector, computable with future masking).",
        "Yang et al. (arXiv:2412.09925v1) §4.1",
    ),
    NamedFormula(
        "ones-star",
        "'1' & !P '0'",
        "01",
        "1+: non-empty words of 1s only (the language 1*, minus the empty word).",
        "Hahn (2020) §4",
    ),
    NamedFormula(
        "anbn",
        "#<['a'] = #<['b'] & !E ('a' & P 'b')",
        "ab",
        "a^n b^n with n >= 1: as many a's as b's, and no a after a b.",
        "a simple language of hardsoft's set (docs/languages.md)",
    ),
    NamedFormula(
        "majority",
        "#<['1'] > #<['0']",
        "01",
        "MAJORITY: strictly more 1s than 0s.",
        "Yang et al. (arXiv:2412.09925v1) §4 (numerical relations)",
    ),
    NamedFormula(
        "dyck1",
        "!E (#<['('] < #<[')']) & #<['('] = #<[')']",
        "()",
        "DYCK-1: balanced brackets (no prefix has more ')' than '(' and the counts end equal).",
        "Hahn (2020) §4 (Dyck languages)",
    ),
    NamedFormula(
        "first",
        "E (first & '1')",
        "01",
        "FIRST: the first symbol is 1.",
        "a simple language of hardsoft's set (docs/languages.md)",
    ),
]

FORMULAS: dict[str, NamedFormula] = {entry.name: entry for entry in _ENTRIES}
"""All named formulas by name."""


def formula_names() -> list[str]:
    """The names of the named formulas, in a stable order."""
    return list(FORMULAS)


def get_formula(name: str) -> NamedFormula:
    """The named formula ``name``; an unknown name is a one-line error listing the known ones."""
    try:
        return FORMULAS[name]
    except KeyError:
        raise HardsoftError(
            f"unknown formula {name!r}; known: {', '.join(formula_names())}"
        ) from None

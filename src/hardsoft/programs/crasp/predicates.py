"""The built-in predicates a C-RASP file may ``#import`` (a file never runs code).

Huang et al. (ICLR 2025, "A formal framework for understanding length generalization in
transformers") extend C-RASP with *periodic* unary predicates φ(i) (φ(i) = φ(i + Δ) for a
period Δ) and *local* binary predicates ψ(i, j) (translation-invariant, ψ(i, j) depends only
on i − j, and true only for |i − j| bounded). They guard counts, ``#[ψ] b`` = the number of
j ≤ i with ψ(i, j) and ``b`` at j, and serve as Booleans. The names and meanings follow the
examples of the coli-saar/c-rasp interpreter, which counts positions **from 0**:

=================  =====  ==========================================================
name               arity  holds where (positions 0-based, as in that tool)
=================  =====  ==========================================================
``pred``           2      j = i − 1 (the previous position)
``predK``          2      j = i − K, K ≥ 1 (``pred4``: four back)
``prevK``          2      i − K ≤ j ≤ i − 1, K ≥ 1 (one of the K previous positions)
``pos_even``       1      i is even (so the first position, i = 0, is even)
``pos_mod_M_R``    1      i mod M = R, M ≥ 1, 0 ≤ R < M (``pos_even`` is ``pos_mod_2_0``)
=================  =====  ==========================================================

A binary predicate is declared by its set of offsets ``i − j`` (finite: local; only the
difference matters: translation-invariant); a unary one by its period and residue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from hardsoft.errors import HardsoftError

__all__ = ["BinaryPredicate", "Predicate", "UnaryPredicate", "builtin", "FAMILIES"]

MAX_PARAMETER = 10_000
"""Largest K or M accepted (a window or period longer than any input checked is pointless,
and the compiled model grows with K)."""

FAMILIES = (
    ("pred", "j = i - 1 (the previous position)"),
    ("predK", "j = i - K (K >= 1)"),
    ("prevK", "i - K <= j <= i - 1 (one of the K previous positions, K >= 1)"),
    ("pos_even", "i even, counting positions from 0"),
    ("pos_mod_M_R", "i mod M = R, counting positions from 0 (M >= 1, 0 <= R < M)"),
)
"""The built-in families, as listed in error messages and docs."""


@dataclass(frozen=True)
class UnaryPredicate:
    """φ(i) = [i mod ``modulus`` = ``residue``] for 0-based i (periodic)."""

    name: str
    modulus: int
    residue: int
    arity: int = 1

    def values(self, n: int) -> np.ndarray:
        """φ at the 0-based positions ``0..n-1``."""
        return np.arange(n) % self.modulus == self.residue

    def holds(self, i: int) -> bool:
        return i % self.modulus == self.residue


@dataclass(frozen=True)
class BinaryPredicate:
    """ψ(i, j) = [i − j ∈ ``offsets``] (local and translation-invariant); every offset ≥ 1,
    so a guarded count only looks back."""

    name: str
    offsets: tuple[int, ...]
    arity: int = 2

    def holds(self, i: int, j: int) -> bool:
        return (i - j) in self.offsets


Predicate = UnaryPredicate | BinaryPredicate


def _param(text: str, name: str, what: str, lo: int) -> int:
    value = int(text)
    if not lo <= value <= MAX_PARAMETER:
        raise HardsoftError(f"predicate {name}: {what} must be in {lo}..{MAX_PARAMETER}")
    return value


def builtin(name: str) -> Predicate | None:
    """The built-in predicate called ``name``, None if there is none; a family member with a
    parameter out of range (``pred0``, ``pos_mod_2_5``) is a one-line error."""
    if name == "pred":
        return BinaryPredicate(name, (1,))
    if name == "pos_even":
        return UnaryPredicate(name, 2, 0)
    m = re.fullmatch(r"(pred|prev)([0-9]+)", name)
    if m:
        k = _param(m.group(2), name, "K", 1)
        offsets = (k,) if m.group(1) == "pred" else tuple(range(1, k + 1))
        return BinaryPredicate(name, offsets)
    m = re.fullmatch(r"pos_mod_([0-9]+)_([0-9]+)", name)
    if m:
        modulus = _param(m.group(1), name, "M", 1)
        residue = int(m.group(2))
        if residue >= modulus:
            raise HardsoftError(f"predicate {name}: R must be in 0..{modulus - 1}")
        return UnaryPredicate(name, modulus, residue)
    return None

"""Checkable witnesses (Hahn (2020) §5, Corollary 2): two inputs the model cannot tell apart
although exactly one of them is in the language.

Given the final restriction and the certified dependency set D of the output, the witness is a
pair x, x' that agree with the restriction and on D and differ only at free positions outside D.
The analysis proves the model's output is the same on both; :func:`verify` checks it by running
the model, and checks membership with the language's oracle.

How x is built and which symbol x' puts at the changed position is declared by the language
(``Language.witness_word``, ``Language.witness_flip``):

* PARITY: x is any completion, x' flips one free position outside D.
* DYCK-k: x is a completion inside the language (``hardsoft.languages.dyck.complete_dyck``);
  x' changes one free position outside D. A single substitution always leaves DYCK-k: it either
  changes the difference between openers and closers, or turns a matched pair into a
  mismatched one.
* any other language: x is a random completion, x' a random other symbol.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from hardsoft.languages.base import Language
from hardsoft.limits.restriction import Restriction
from hardsoft.model.transformer import Transformer

if TYPE_CHECKING:
    from hardsoft.limits.dependency import Analysis


@dataclass
class Witness:
    """The pair, the model's outputs and the oracle's verdicts; ``verified`` only if the model
    accepts both or neither and exactly one is in the language."""

    x: str | None
    x_prime: str | None
    changed: list[int]  # 0-based positions where x and x' differ
    accept: bool | None = None
    accept_prime: bool | None = None
    in_language: tuple[bool, bool] | None = None
    predicted_accept: bool | None = None
    verified: bool = False
    reason: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["changed"] = [p + 1 for p in self.changed]
        d["in_language"] = list(self.in_language) if self.in_language else None
        return d


def _pick_outside(
    restriction: Restriction, deps: np.ndarray, rng: np.random.Generator
) -> int | None:
    dset = set(int(p) for p in deps)
    cands = [int(p) for p in restriction.free_positions() if int(p) not in dset]
    if not cands:
        return None
    return cands[int(rng.integers(len(cands)))]


def build_witness(
    restriction: Restriction, deps: np.ndarray, language: Language, rng: np.random.Generator
) -> Witness:
    """Construct (not yet verify) the pair for ``language``: ``x`` from its
    :meth:`~hardsoft.languages.base.Language.witness_word`, ``x'`` by its
    :meth:`~hardsoft.languages.base.Language.witness_flip` at a free position outside
    ``deps``."""
    p = _pick_outside(restriction, deps, rng)
    if p is None:
        return Witness(None, None, [], reason="no free position outside the dependency set")
    x = language.witness_word(restriction, rng)
    if x is None:
        return Witness(None, None, [], reason=language.no_completion_reason)
    flip = language.witness_flip(x[p], restriction.alphabet, rng)
    x_prime = x[:p] + flip + x[p + 1 :]
    return Witness(x, x_prime, [p])


def verify(
    model: Transformer,
    witness: Witness,
    language: Language,
    analysis: Analysis | None = None,
) -> Witness:
    """Run the model and the oracle on both inputs; set ``verified`` and ``reason``."""
    if witness.x is None or witness.x_prime is None:
        witness.verified = False
        return witness
    with torch.no_grad():
        out = model(model.encode([witness.x, witness.x_prime]))
    acc = out.accept.cpu().numpy()
    witness.accept, witness.accept_prime = bool(acc[0]), bool(acc[1])
    mem = (bool(language.member(witness.x)), bool(language.member(witness.x_prime)))
    witness.in_language = mem
    if analysis is not None:
        witness.predicted_accept = analysis.predicted_accept(witness.x)
    same = witness.accept == witness.accept_prime
    one = mem[0] != mem[1]
    witness.verified = same and one
    if not same:
        witness.reason = "the model's outputs differ (the dependency analysis was unsound)"
    elif not one:
        witness.reason = "both or neither input is in the language"
    else:
        wrong = witness.x if mem[0] != witness.accept else witness.x_prime
        witness.reason = f"the model is wrong on the {'first' if wrong == witness.x else 'second'}"
    return witness

"""Input restrictions ρ_n : {1..n} → Σ ∪ {*} (Hahn (2020) §5).

A :class:`Restriction` fixes some positions to symbols and leaves the others free. Positions are
0-based in the Python API and 1-based wherever a user reads them (strings, CLI, JSON).

It is a value type over an alphabet, so it lives with the languages (whose witness hooks take
one) below the restriction engine (:mod:`hardsoft.limits`, which re-exports it from
``hardsoft.limits.restriction``). :class:`RestrictedModel` runs any model that offers
``spec.alphabet``, ``encode`` and a forward pass with an ``accept`` bit (a
:class:`~hardsoft.model.Transformer`), so this module needs nothing from ``hardsoft.model``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hardsoft.errors import HardsoftError

FREE = "*"


class AcceptingModel(Protocol):
    """What :class:`RestrictedModel` needs of a model (a :class:`~hardsoft.model.Transformer`
    has all of it): its spec's alphabet, ``encode(words)`` and a forward pass whose output has
    an ``accept`` tensor."""

    @property
    def spec(self) -> Any: ...

    def encode(self, words: Sequence[str]) -> Any: ...

    def __call__(self, tokens: Any) -> Any: ...


@dataclass(frozen=True)
class Restriction:
    """``symbols[i]`` is the symbol position ``i`` is fixed to, or None if it is free.

    ``alphabet`` is what free positions range over (the analysis enumerates exactly these).
    """

    symbols: tuple[str | None, ...]
    alphabet: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.alphabet or len(set(self.alphabet)) != len(self.alphabet):
            raise HardsoftError("a restriction needs an alphabet of distinct symbols")
        if FREE in self.alphabet:
            raise HardsoftError(f"{FREE!r} marks free positions and cannot be a symbol")
        for i, s in enumerate(self.symbols):
            if s is not None and s not in self.alphabet:
                raise HardsoftError(
                    f"restriction fixes position {i + 1} to {s!r}, "
                    f"not in the alphabet {''.join(self.alphabet)!r}"
                )

    # ------------------------------------------------------------------ construction
    @staticmethod
    def free(n: int, alphabet: Sequence[str]) -> Restriction:
        """The restriction of length ``n`` that fixes nothing."""
        if n < 1:
            raise HardsoftError(f"a restriction needs n >= 1, got {n}")
        return Restriction((None,) * n, tuple(alphabet))

    @staticmethod
    def from_string(text: str, alphabet: Sequence[str]) -> Restriction:
        """Parse ``"0*1**"`` (``*`` = free)."""
        return Restriction(tuple(None if ch == FREE else ch for ch in text), tuple(alphabet))

    def fix(self, assignment: Mapping[int, str]) -> Restriction:
        """A finer restriction: also fix ``position -> symbol`` (positions must be free)."""
        syms = list(self.symbols)
        for p, s in assignment.items():
            if syms[p] is not None and syms[p] != s:
                raise HardsoftError(f"position {p + 1} is already fixed to {syms[p]!r}")
            syms[p] = s
        return Restriction(tuple(syms), self.alphabet)

    # ------------------------------------------------------------------ queries
    @property
    def n(self) -> int:
        return len(self.symbols)

    def __str__(self) -> str:
        return "".join(FREE if s is None else s for s in self.symbols)

    def free_positions(self) -> np.ndarray:
        """0-based indices of the free positions, ascending."""
        return np.array([i for i, s in enumerate(self.symbols) if s is None], dtype=np.int64)

    def fixed_positions(self) -> np.ndarray:
        return np.array([i for i, s in enumerate(self.symbols) if s is not None], dtype=np.int64)

    @property
    def num_free(self) -> int:
        return sum(s is None for s in self.symbols)

    @property
    def free_fraction(self) -> float:
        """|{i : ρ(i) = *}| / n."""
        return self.num_free / self.n

    def is_finer_than(self, other: Restriction) -> bool:
        """ρ' ⪰ ρ: agrees with ``other`` wherever ``other`` fixes a symbol."""
        return self.n == other.n and all(
            o is None or s == o for s, o in zip(self.symbols, other.symbols)
        )

    def agrees(self, word: str) -> bool:
        """Whether ``word`` is compatible with the restriction (ρX* membership)."""
        return len(word) == self.n and all(
            s is None or s == ch for s, ch in zip(self.symbols, word)
        )

    def fill(self, free_values: Mapping[int, str] | Iterable[str]) -> str:
        """The full word: fixed symbols plus ``free_values`` (a map position -> symbol, or a
        sequence listing the free positions' symbols in order)."""
        syms = list(self.symbols)
        if isinstance(free_values, Mapping):
            for p, s in free_values.items():
                if syms[p] is not None:
                    raise HardsoftError(f"position {p + 1} is fixed, not free")
                syms[p] = s
        else:
            vals = list(free_values)
            free = self.free_positions()
            if len(vals) != len(free):
                raise HardsoftError(f"expected {len(free)} free symbols, got {len(vals)}")
            for p, s in zip(free, vals):
                syms[int(p)] = s
        word = [s for s in syms if s is not None]
        if len(word) < len(syms):
            raise HardsoftError("some free positions were left unassigned")
        bad = [s for s in word if s not in self.alphabet]
        if bad:
            raise HardsoftError(f"symbol {bad[0]!r} is not in {''.join(self.alphabet)!r}")
        return "".join(word)

    def random_completion(self, rng: np.random.Generator) -> str:
        """A uniformly random compatible word."""
        free = self.free_positions()
        picks = rng.integers(0, len(self.alphabet), size=len(free))
        return self.fill({int(p): self.alphabet[int(c)] for p, c in zip(free, picks)})

    def apply(self, model: AcceptingModel) -> RestrictedModel:
        """ρT: the model as a function of the free positions only."""
        return RestrictedModel(model, self)


class RestrictedModel:
    """A model with a restriction applied: call it on the free positions' symbols."""

    def __init__(self, model: AcceptingModel, restriction: Restriction) -> None:
        missing = [a for a in restriction.alphabet if a not in model.spec.alphabet]
        if missing:
            raise HardsoftError(
                f"restriction symbol {missing[0]!r} is not in the model's alphabet "
                f"{''.join(model.spec.alphabet)!r}"
            )
        self.model = model
        self.restriction = restriction

    def accept(self, free_values: Sequence[Mapping[int, str] | Iterable[str]]) -> np.ndarray:
        """Acceptance bits of the model on the completions given by ``free_values``."""
        import torch

        words = [self.restriction.fill(v) for v in free_values]
        with torch.no_grad():
            out = self.model(self.model.encode(words))
        return out.accept.cpu().numpy()

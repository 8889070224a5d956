"""The :class:`Language` interface shared by every formal language and per-position task.

A language is a set of strings over a finite alphabet of single-character symbols. Every
language object offers the same small, stable API (other modules rely on it):

- ``name``, ``alphabet`` (tuple of one-character symbols), ``kind`` (``"language"`` or ``"task"``)
- ``member(word) -> bool`` and the vectorised ``members(words) -> np.ndarray[bool]``
- ``prefix_reference(word) -> np.ndarray[int]`` (length ``len(word)``): entry ``i`` (0-based) is
  1 if the prefix ``word[: i + 1]`` is in the language, else 0; a task returns its per-position
  target instead
- ``sample_uniform(n, count, rng)``: ``count`` i.i.d. uniform strings of length ``n``
- ``sample_balanced(n, count, rng)``: ``(words, labels)`` with ``count // 2`` non-members (hard
  near misses by default) and ``count - count // 2`` members, shuffled
- capabilities: ``restriction_target`` and the witness hooks of the restriction engine
  (``restriction_alphabet``, ``initial_fixes``, ``witness_word``, ``witness_flip``,
  ``witness_note``), ``process_name`` (the Hahn §6 process that generates it) and
  ``automaton()`` (the minimal DFA of a regular language, None otherwise)

Unknown symbols raise :class:`~hardsoft.errors.HardsoftError` naming the symbol and position.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from hardsoft.errors import HardsoftError

if TYPE_CHECKING:
    from hardsoft.languages.dfa import DFA
    from hardsoft.languages.restriction import Restriction

_MAX_REJECTION_ROUNDS = 200


def _as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def check_length(n: int, count: int | None = None) -> None:
    """Reject negative lengths / counts with a one-line user error."""
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise HardsoftError(f"length n must be a non-negative integer, got {n!r}")
    if count is not None and (not isinstance(count, (int, np.integer)) or count < 0):
        raise HardsoftError(f"count must be a non-negative integer, got {count!r}")


def codes_to_words(alphabet: Sequence[str], codes: np.ndarray) -> list[str]:
    """Rows of symbol indices ``[count, n]`` to strings (a byte lookup for ASCII alphabets)."""
    codes = np.asarray(codes, dtype=np.int64)
    if codes.ndim != 2:
        raise ValueError("codes must be a 2-D array [count, n]")
    count, n = codes.shape
    if all(len(a) == 1 and ord(a) < 128 for a in alphabet):
        table = np.frombuffer("".join(alphabet).encode("ascii"), dtype=np.uint8)
        raw = table[codes].tobytes().decode("ascii")
        return [raw[i * n : (i + 1) * n] for i in range(count)]
    return ["".join(alphabet[c] for c in row) for row in codes]


class Language(ABC):
    """Base class: subclasses set ``name``, ``alphabet``, ``description`` and implement
    :meth:`_member` (on an already validated word). Everything else has a correct default;
    subclasses override the samplers and :meth:`prefix_reference` for speed or exact
    uniformity."""

    name: str = ""
    alphabet: tuple[str, ...] = ()
    description: str = ""
    kind: str = "language"

    # ------------------------------------------------------------------ capabilities
    # What the rest of the toolkit may do with a language, declared here and overridden by the
    # classes that can do more (never guessed from names).

    #: A target of the restriction engine (``hardsoft restrict``): Hahn (2020) §5, Corollary 2.
    restriction_target: bool = False
    #: The witness's reason when :meth:`witness_word` finds no completion.
    no_completion_reason: str = "no word compatible with the restriction was found"

    @property
    def process_name(self) -> str | None:
        """The registry name of the Hahn §6 process that generates this language, if any."""
        return None

    def automaton(self) -> DFA | None:
        """The language's minimal complete DFA, for the regular pipeline (``hardsoft language
        dfa``, ``atlas add-row --dfa``, the atlas's regular rows); None where none is given (not
        regular, or a task). A DFA is a second definition beside the oracle, written apart
        from it, and tests check that the two agree."""
        return None

    def restriction_alphabet(self) -> tuple[str, ...]:
        """The symbols the restriction engine lets free positions range over."""
        return self.alphabet

    def initial_fixes(self, n: int) -> dict[int, str]:
        """Positions (0-based) the engine's initial restriction at length ``n`` fixes."""
        return {}

    def witness_word(self, restriction: Restriction, rng: np.random.Generator) -> str | None:
        """The witness's first input ``x``: a completion of ``restriction`` (None if none
        suitable exists). Default: a uniformly random completion."""
        return restriction.random_completion(rng)

    def witness_flip(self, symbol: str, alphabet: Sequence[str], rng: np.random.Generator) -> str:
        """The symbol that replaces ``symbol`` in ``x'``. Default: a uniformly random other
        symbol of ``alphabet``."""
        others = [a for a in alphabet if a != symbol]
        return others[int(rng.integers(len(others)))]

    def witness_note(self, n: int) -> str | None:
        """A note for the report when no witness can exist at length ``n`` (None: none)."""
        return None

    # ------------------------------------------------------------------ validation
    def validate(self, word: str) -> None:
        """Raise HardsoftError if ``word`` contains a symbol outside the alphabet."""
        if not isinstance(word, str):
            raise HardsoftError(f"{self.name}: expected a string, got {type(word).__name__}")
        allowed = set(self.alphabet)
        for i, ch in enumerate(word):
            if ch not in allowed:
                raise HardsoftError(
                    f"{self.name}: unknown symbol {ch!r} at position {i + 1} "
                    f"(alphabet: {''.join(self.alphabet)})"
                )

    def encode(self, word: str) -> np.ndarray:
        """The word as symbol indices into ``alphabet`` (validated)."""
        self.validate(word)
        index = {s: k for k, s in enumerate(self.alphabet)}
        return np.fromiter((index[c] for c in word), dtype=np.int64, count=len(word))

    def decode(self, codes: Iterable[int]) -> str:
        """Symbol indices back to a string."""
        return "".join(self.alphabet[int(c)] for c in codes)

    # ------------------------------------------------------------------ membership
    @abstractmethod
    def _member(self, word: str) -> bool:
        """Membership of a validated word (subclasses)."""

    def member(self, word: str) -> bool:
        """Is ``word`` in the language? Unknown symbols raise HardsoftError."""
        self.validate(word)
        return bool(self._member(word))

    def members(self, words: Sequence[str]) -> np.ndarray:
        """Vectorised :meth:`member`: a boolean array, one entry per word."""
        return np.fromiter((self.member(w) for w in words), dtype=bool, count=len(words))

    def prefix_reference(self, word: str) -> np.ndarray:
        """Per-position reference: entry ``i`` is 1 iff ``word[:i+1]`` is a member.
        (The empty prefix is not included; ask ``member("")`` for it.)"""
        self.validate(word)
        return np.array(
            [int(self._member(word[: i + 1])) for i in range(len(word))], dtype=np.int64
        )

    # ------------------------------------------------------------------ sampling
    def sample_uniform(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """``count`` strings of length ``n``, each symbol i.i.d. uniform over the alphabet."""
        check_length(n, count)
        rng = _as_rng(rng)
        codes = rng.integers(0, len(self.alphabet), size=(count, n))
        return codes_to_words(self.alphabet, codes)

    def has_members(self, n: int) -> bool:
        """Does the language contain a word of length ``n``? (Default: brute force for tiny
        ``n``, otherwise assume yes; subclasses answer exactly.)"""
        if len(self.alphabet) ** n <= 4096:
            return any(self._member(w) for w in _all_words(self.alphabet, n))
        return True

    def has_nonmembers(self, n: int) -> bool:
        """Does some word of length ``n`` lie outside the language?"""
        if len(self.alphabet) ** n <= 4096:
            return any(not self._member(w) for w in _all_words(self.alphabet, n))
        return True

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """``count`` members of length ``n``. Default: rejection from the uniform distribution
        (so uniform over members); subclasses with rare members override this."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and not self.has_members(n):
            raise HardsoftError(f"{self.name} has no words of length {n}")
        return self._rejection(n, count, rng, want=True)

    def sample_negative(
        self,
        n: int,
        count: int,
        rng: np.random.Generator | int | None = None,
        hard: bool = True,
    ) -> list[str]:
        """``count`` non-members of length ``n``. With ``hard`` (default) each is a one-symbol
        substitution of a random member (a near miss) where one exists; otherwise (or when no
        member of length ``n`` exists) uniform non-members by rejection."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and not self.has_nonmembers(n):
            raise HardsoftError(f"every word of length {n} is in {self.name}: no negatives")
        out: list[str] = []
        if hard and count and self.has_members(n):
            for pos in self.sample_positive(n, count, rng):
                miss = self.near_miss(pos, rng)
                if miss is not None:
                    out.append(miss)
        if len(out) < count:
            out.extend(self._rejection(n, count - len(out), rng, want=False))
        return out

    def near_miss(self, word: str, rng: np.random.Generator) -> str | None:
        """A non-member that differs from the member ``word`` in exactly one position, chosen
        at random among all such substitutions; ``None`` if there is none."""
        n = len(word)
        k = len(self.alphabet)
        if n == 0 or k < 2:
            return None
        # Try random substitutions first (cheap), then all of them in random order.
        for _ in range(16):
            i = int(rng.integers(n))
            s = self.alphabet[int(rng.integers(k))]
            if s != word[i]:
                cand = word[:i] + s + word[i + 1 :]
                if not self._member(cand):
                    return cand
        order = rng.permutation(n * k)
        for flat in order[: min(len(order), 4096)]:
            i, j = divmod(int(flat), k)
            s = self.alphabet[j]
            if s != word[i]:
                cand = word[:i] + s + word[i + 1 :]
                if not self._member(cand):
                    return cand
        return None

    def sample_balanced(
        self,
        n: int,
        count: int,
        rng: np.random.Generator | int | None = None,
        hard: bool = True,
        allow_one_class: bool = False,
    ) -> tuple[list[str], np.ndarray]:
        """``count`` strings of length ``n``: ``count - count // 2`` members and ``count // 2``
        non-members (near misses if ``hard``), shuffled; returns ``(words, labels)`` with
        boolean labels computed by the oracle. If no member (or no non-member) of length ``n``
        exists, raise HardsoftError, or with ``allow_one_class`` return only the other class."""
        check_length(n, count)
        rng = _as_rng(rng)
        n_pos = count - count // 2
        n_neg = count // 2
        has_pos = self.has_members(n)
        has_neg = self.has_nonmembers(n)
        if not has_pos or not has_neg:
            missing = "members" if not has_pos else "non-members"
            if not allow_one_class:
                raise HardsoftError(
                    f"{self.name} has no {missing} of length {n}; pick another n "
                    "(or pass allow_one_class=True for one class only)"
                )
            if not has_pos:
                n_pos, n_neg = 0, count
            else:
                n_pos, n_neg = count, 0
        words = self.sample_positive(n, n_pos, rng) + self.sample_negative(n, n_neg, rng, hard)
        order = rng.permutation(len(words))
        words = [words[i] for i in order]
        labels = self.members(words)
        return words, labels

    def _rejection(self, n: int, count: int, rng: np.random.Generator, want: bool) -> list[str]:
        out: list[str] = []
        for _ in range(_MAX_REJECTION_ROUNDS):
            if len(out) >= count:
                break
            batch = self.sample_uniform(n, max(2 * (count - len(out)), 16), rng)
            out.extend(w for w in batch if self._member(w) == want)
        if len(out) < count:
            what = "members" if want else "non-members"
            raise HardsoftError(
                f"{self.name}: could not sample {count} {what} of length {n} by rejection"
            )
        return out[:count]

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name} over {''.join(self.alphabet)!r}>"


def _all_words(alphabet: Sequence[str], n: int) -> Iterable[str]:
    import itertools

    for tup in itertools.product(alphabet, repeat=n):
        yield "".join(tup)


def all_words(alphabet: Sequence[str], n: int) -> list[str]:
    """Every word of length ``n`` over ``alphabet`` in lexicographic order (for brute force)."""
    return list(_all_words(alphabet, n))


class OneWordPerEvenLength(Language):
    """A language with exactly one member of each even length and none of odd length (aⁿbⁿ,
    (ab)*, (aa)*): membership tests and the sampler of members follow from :meth:`word_of`."""

    @abstractmethod
    def word_of(self, n: int) -> str:
        """The one member of even length ``n``."""

    def has_members(self, n: int) -> bool:
        return n % 2 == 0

    def has_nonmembers(self, n: int) -> bool:
        return n > 0

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """The one member of each even length (rejection would almost never find it)."""
        check_length(n, count)
        if count and n % 2:
            return super().sample_positive(n, count, rng)  # raises the clear error
        return [self.word_of(n)] * count

"""Exact samplers for a language with a DFA: members of length n drawn uniformly through the
automaton's path counts (the length-controlled sampling of regular languages FLaRe uses,
Butoi et al. 2025), and exact answers to "is there a member (non-member) of length n?".

The DFA only *proposes* words here; membership is always decided by the language's own oracle
(``_member``), so labels of sampled words come from the definition, not from the automaton.
"""

from __future__ import annotations

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, _as_rng, check_length, codes_to_words
from hardsoft.languages.regular import DFA


class PathCounts:
    """For a complete DFA: ``reach[r, q]`` whether some word of length r leads from state q to
    acceptance (``fail[r, q]``: to rejection), and ``weight[r, q]`` how many, each row scaled to
    a maximum of 1 (only ratios within a row are used). Rows are added as longer lengths are
    asked for."""

    def __init__(self, dfa: DFA) -> None:
        self.delta = np.array(dfa.delta, dtype=np.int64)
        accept = np.zeros(dfa.n_states, dtype=bool)
        accept[list(dfa.accepting)] = True
        self.reach: list[np.ndarray] = [accept]
        self.fail: list[np.ndarray] = [~accept]
        self.weight: list[np.ndarray] = [accept.astype(np.float64)]

    def extend(self, n: int) -> None:
        """Rows up to length ``n``."""
        while len(self.reach) <= n:
            self.reach.append(np.asarray(self.reach[-1][self.delta].any(axis=1)))
            self.fail.append(np.asarray(self.fail[-1][self.delta].any(axis=1)))
            w = self.weight[-1][self.delta].sum(axis=1)
            top = w.max()
            self.weight.append(w / top if top > 0 else w)

    def sample(self, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` accepted words of length ``n`` as symbol codes, exactly uniform: each step
        from state q with r symbols left takes symbol a with probability N(r-1, δ(q, a)) /
        N(r, q)."""
        self.extend(n)
        state = np.zeros(count, dtype=np.int64)
        codes = np.zeros((count, n), dtype=np.int64)
        for t in range(n):
            nxt = self.delta[state]  # [count, k]
            left = n - t - 1
            w = np.where(self.reach[left][nxt], self.weight[left][nxt], 0.0)
            lost = w.sum(axis=1) == 0  # a count below float range: still reachable
            w[lost] = self.reach[left][nxt[lost]]
            cum = np.cumsum(w, axis=1)
            u = rng.random(count) * cum[:, -1]
            pick = np.minimum((cum <= u[:, None]).sum(axis=1), nxt.shape[1] - 1)
            codes[:, t] = pick
            state = nxt[np.arange(count), pick]
        return codes


class AutomatonSampled(Language):
    """A language whose :meth:`automaton` drives its member sampler (exactly uniform over the
    members of each length) and answers :meth:`has_members` / :meth:`has_nonmembers` exactly.
    Subclasses give ``_member`` (the oracle, from the definition) and ``automaton``."""

    _counts: PathCounts | None = None

    def _paths(self, n: int) -> PathCounts:
        if self._counts is None:
            dfa = self.automaton()
            if dfa is None:
                raise HardsoftError(f"{self.name} has no automaton to sample from")
            self._counts = PathCounts(dfa)
        self._counts.extend(n)
        return self._counts

    def has_members(self, n: int) -> bool:
        return bool(self._paths(n).reach[n][0])

    def has_nonmembers(self, n: int) -> bool:
        return bool(self._paths(n).fail[n][0])

    def sample_positive(
        self, n: int, count: int, rng: np.random.Generator | int | None = None
    ) -> list[str]:
        """Exactly uniform over the members of length ``n`` (path counts of the DFA)."""
        check_length(n, count)
        rng = _as_rng(rng)
        if count and not self.has_members(n):
            raise HardsoftError(f"{self.name} has no words of length {n}")
        return codes_to_words(self.alphabet, self._paths(n).sample(n, count, rng))

    def sample_negative(
        self,
        n: int,
        count: int,
        rng: np.random.Generator | int | None = None,
        hard: bool = True,
    ) -> list[str]:
        """Non-members of length ``n``; with ``hard``, near misses: a uniform member with one
        random substitution that leaves the language, drawing more members where one has none
        (a member of Tomita 4 without ``00`` cannot leave it in one step), and uniform
        non-members only if a few rounds find too few."""
        check_length(n, count)
        rng = _as_rng(rng)
        if not (hard and count and self.has_members(n) and self.has_nonmembers(n)):
            return super().sample_negative(n, count, rng, hard)
        out: list[str] = []
        for _ in range(8):
            for member in self.sample_positive(n, 2 * (count - len(out)), rng):
                miss = self.near_miss(member, rng)
                if miss is not None and len(out) < count:
                    out.append(miss)
            if len(out) == count:
                return out
        return out + self._rejection(n, count - len(out), rng, want=False)


class BuiltAutomaton(AutomatonSampled):
    """An :class:`AutomatonSampled` whose DFA is built once per instance, on first use, by
    :meth:`_automaton` (Tomita's grammars, FLaRe's tasks, the group word problems)."""

    _dfa: DFA | None = None

    def automaton(self) -> DFA:
        if self._dfa is None:
            self._dfa = self._automaton()
        return self._dfa

    def _automaton(self) -> DFA:
        raise NotImplementedError  # every subclass builds its DFA

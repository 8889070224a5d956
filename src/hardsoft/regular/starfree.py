"""Star-freeness of a regular language, decided on the transition monoid of its minimal DFA.

The transition monoid of the minimal complete DFA is the syntactic monoid of the language.
Schützenberger (1965): the language is star-free iff that monoid is aperiodic, i.e. every
element m has m^k = m^(k+1) for some k. Each element's powers m, m^2, ... run into a cycle;
the monoid is aperiodic iff every cycle has length (period) 1. Yang, Chiang & Angluin (2024)
show that masked unique-hard attention transformers without position features recognise
exactly the star-free languages, so this decides that column of the atlas.

Evidence either way is concrete and checkable without this code: for a star-free language, the
aperiodicity index n (x u^n y ∈ L ⟺ x u^(n+1) y ∈ L for all words x, u, y); otherwise a word w
whose element has period p > 1 (so w^k ≠ w^(k+1) in the monoid for every k), with words x, y
such that x w^k y and x w^(k+1) y differ in membership.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA
from hardsoft.regular.monoid import compose, index_and_period, transition_monoid


@dataclass(frozen=True)
class StarFreeDecision:
    """The decision and its evidence (see the module docstring)."""

    star_free: bool
    n_states: int
    monoid_size: int
    aperiodicity_index: int | None = None
    witness: str | None = None
    witness_index: int | None = None
    witness_period: int | None = None
    context: tuple[str, str] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "star_free": self.star_free,
            "minimal_dfa_states": self.n_states,
            "monoid_size": self.monoid_size,
            "theorem": "aperiodic syntactic monoid ⇔ star-free (Schützenberger 1965)",
        }
        if self.star_free:
            out["aperiodicity_index"] = self.aperiodicity_index
            out["evidence"] = (
                f"every element m of the {self.monoid_size}-element syntactic monoid has "
                f"m^{self.aperiodicity_index} = m^{self.aperiodicity_index + 1}"
                if self.aperiodicity_index is not None
                else ""
            )
        else:
            assert self.context is not None
            x, y = self.context
            k = self.witness_index
            out["witness"] = {
                "word": self.witness,
                "index": k,
                "period": self.witness_period,
                "x": x,
                "y": y,
                "claim": (
                    f"w = {self.witness!r} has period {self.witness_period} in the monoid, so "
                    f"w^k ≠ w^(k+1) for every k; e.g. x w^{k} y and x w^{(k or 0) + 1} y with "
                    f"x = {x!r}, y = {y!r} differ in membership"
                ),
            }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _access_words(dfa: DFA) -> list[str]:
    """A shortest word reaching each state (every state of a minimal DFA is reachable)."""
    reach: dict[int, str] = {0: ""}
    queue = deque([0])
    while queue:
        q = queue.popleft()
        for k, a in enumerate(dfa.alphabet):
            r = dfa.delta[q][k]
            if r not in reach:
                reach[r] = reach[q] + a
                queue.append(r)
    return [reach[q] for q in range(dfa.n_states)]


def separating_word(dfa: DFA, p: int, q: int) -> str:
    """A shortest y with p·y and q·y on different sides of acceptance (p, q distinct states of
    a minimal DFA are separated by some word)."""
    seen = {(p, q): ""}
    queue = deque([(p, q)])
    while queue:
        s, t = queue.popleft()
        if (s in dfa.accepting) != (t in dfa.accepting):
            return seen[(s, t)]
        for k, a in enumerate(dfa.alphabet):
            nxt = (dfa.delta[s][k], dfa.delta[t][k])
            if nxt not in seen:
                seen[nxt] = seen[(s, t)] + a
                queue.append(nxt)
    raise HardsoftError("the DFA is not minimal: two of its states accept the same words")


def decide_star_free(dfa: DFA) -> StarFreeDecision:
    """Decide star-freeness of the language of the minimal complete ``dfa``."""
    monoid = transition_monoid(dfa)
    worst_index = 1
    # shortest witness first: the monoid dict is in BFS (length, then alphabet) order
    for f, word in monoid.items():
        k, p = index_and_period(f)
        if p > 1:
            fk = f
            for _ in range(k - 1):
                fk = compose(fk, f)
            fk1 = compose(fk, f)
            q = next(i for i in range(dfa.n_states) if fk[i] != fk1[i])
            x = _access_words(dfa)[q]
            y = separating_word(dfa, fk[q], fk1[q])
            return StarFreeDecision(
                star_free=False,
                n_states=dfa.n_states,
                monoid_size=len(monoid),
                witness=word,
                witness_index=k,
                witness_period=p,
                context=(x, y),
            )
        worst_index = max(worst_index, k)
    return StarFreeDecision(
        star_free=True,
        n_states=dfa.n_states,
        monoid_size=len(monoid),
        aperiodicity_index=worst_index,
    )

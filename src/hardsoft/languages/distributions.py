"""Hahn's §6 processes (Theorem 6): the PARITY automaton and the 2DYCK PCFG, with exact DPs.

Both processes emit a string symbol by symbol and stop with END-OF-SEQUENCE (EOS). The
prediction task is the next symbol over ``alphabet + (EOS,)``; EOS has index ``len(alphabet)``.

- ``ParityProcess(p)`` over ``01``, ``0 < p < 1``: with an even number of 1s so far it ends with
  probability ``p`` and emits ``0`` or ``1`` with probability ``(1 - p)/2`` each; with an odd
  count it emits ``0`` or ``1`` with probability ``1/2`` each (it cannot end).
- ``DyckProcess(p)`` over ``()[]``, ``0 < p < 1/2``: the PCFG ``S -> (S)S | [S]S`` (``p/2``
  each) ``| ε`` (``1 - p``). At height ``h > 0``: open ``(`` or ``[`` with ``p/2`` each, close
  the innermost bracket with ``1 - p``; at height 0: open with ``p/2`` each, EOS with ``1 - p``.
  ``p < 1/2`` makes the expected length finite.

Everything is exact dynamic programming over a small *summary state* that determines survival
and the next-symbol entropy: the parity of the 1s (PARITY) or the height (2DYCK).

Conditioning. "A prefix of length ``n``" means ``X_{1:n}`` for a string ``X`` with ``|X| >= m``
(``m = min_length``, default ``n``: the prefix exists and the next symbol may be EOS; pass
``min_length = n + 1`` for strings strictly longer than ``n``). With ``alpha_t(s) = P(no EOS in
the first t symbols, state s after them)`` and ``beta_t(s) = P(no EOS before symbol m | state s
after t symbols)``:

    P(X_{1:n} = x | |X| >= m) = P(x) * beta_n(s(x)) / beta_0(s_0),

and the exact sampler draws symbol ``t + 1`` with probability ``P(σ | state) * beta_{t+1}(s')
/ beta_t(s)`` (backward DP, then forward sampling; no rejection). Renormalising the unconditioned
next-symbol probabilities without ``beta`` would be wrong because survival depends on the state.

Cross-entropies at prefix length ``n`` (nats), with ``pi_n = alpha_n / sum(alpha_n)`` the state
distribution after ``n`` symbols given ``|X| >= n``:

- optimal: ``sum_s pi_n(s) H(next | s)`` (the expected entropy of the exact next-symbol
  distribution; the cross-entropy of the Bayes-optimal predictor);
- unigram chance: ``H(sum_s pi_n(s) P(. | s))``, the entropy of the marginal next-symbol
  distribution at step ``n``: the best predictor that ignores the prefix's content (it may know
  ``n``). For 2DYCK the marginal splits the closing mass equally between ``)`` and ``]``, which
  is exact because the process is invariant under swapping the two bracket types.

The module is long but holds one job: the processes and their exact dynamic programs (the
shared conditioning and cross-entropy DPs on :class:`HahnProcess`, each process's transitions
and sampler beside it).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import _as_rng, check_length, codes_to_words

EOS = "<eos>"


def _entropy(probs: np.ndarray) -> np.ndarray:
    """Entropy in nats along the last axis (0 log 0 = 0)."""
    p = np.asarray(probs, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=-1)


class _Walker(Protocol):
    """The forward sampler of :meth:`HahnProcess.sample_prefixes` (see ``_sampler``)."""

    def __call__(self, t: int, log_beta_next: np.ndarray) -> None: ...

    def result(self) -> list[str]: ...


class HahnProcess(ABC):
    """Common machinery; subclasses define the summary-state chain and the full-state walk.

    Subclasses declare their registry ``name``, ``alphabet``, a one-line ``description``, the
    admissible range of ``p`` (``p_range``, for help texts), ``default_p`` (the value the
    training code uses when none is given) and ``stops_in`` (the language of the prefixes after
    which the process may end); the registry is :mod:`hardsoft.languages`."""

    name: str = ""
    stops_in: str = ""
    alphabet: tuple[str, ...] = ()
    description: str = ""
    p_range: str = ""
    default_p: float = 0.5
    kind: str = "process"
    p: float

    def __init__(self, p: float) -> None:
        """A process with parameter ``p`` (subclasses check its range)."""
        self.p = float(p)

    @property
    def symbols(self) -> tuple[str, ...]:
        """The prediction targets: the alphabet followed by EOS."""
        return (*self.alphabet, EOS)

    @property
    def eos_index(self) -> int:
        return len(self.alphabet)

    # ---- summary-state chain (subclasses) -------------------------------------------------
    @abstractmethod
    def _n_states(self, max_steps: int) -> int:
        """Size of the summary-state vector needed to follow the chain for ``max_steps`` steps."""

    @abstractmethod
    def _forward(self, alpha: np.ndarray) -> np.ndarray:
        """One step of the non-EOS transitions: ``alpha'(s') = sum_s alpha(s) P(s -> s')``."""

    @abstractmethod
    def _log_backward(self, log_beta: np.ndarray) -> np.ndarray:
        """Log space: ``beta(s) = sum_{s'} P(s -> s' without EOS) beta'(s')``. (Survival
        probabilities of different states differ by factors like ``rho^m``, so the backward DP
        must run in log space for long horizons.)"""

    @abstractmethod
    def _state_dists(self, size: int) -> np.ndarray:
        """``[size, |Σ|+1]`` next-symbol distribution per summary state (for 2DYCK the close
        mass is split equally between the two types: see the module docstring)."""

    @abstractmethod
    def _state_entropy(self, size: int) -> np.ndarray:
        """Entropy (nats) of the exact next-symbol distribution in each summary state."""

    # ---- full-state walk (subclasses) ----------------------------------------------------------
    @abstractmethod
    def _walk(self, prefix: str) -> tuple[list[np.ndarray], int]:
        """Exact next-symbol distributions after every prefix ``prefix[:t]`` (t = 0..n) and the
        summary state after the whole prefix; HardsoftError if the prefix is impossible."""

    # ---- public API ----------------------------------------------------------------------------
    def validate(self, word: str) -> None:
        allowed = set(self.alphabet)
        for i, ch in enumerate(word):
            if ch not in allowed:
                raise HardsoftError(
                    f"{self.name}: unknown symbol {ch!r} at position {i + 1} "
                    f"(alphabet: {''.join(self.alphabet)})"
                )

    def encode(self, words: Sequence[str]) -> np.ndarray:
        """Symbol indices ``[B, n]`` (into ``alphabet``) of equal-length words, by a byte table;
        a symbol outside the alphabet is a HardsoftError naming it."""
        if len(words) == 0:
            return np.zeros((0, 0), dtype=np.int64)
        n = len(words[0])
        if any(len(w) != n for w in words):
            raise HardsoftError(f"{self.name}: needs strings of equal length")
        table = np.full(256, -1, dtype=np.int64)
        for k, a in enumerate(self.alphabet):
            table[ord(a)] = k
        try:
            raw: bytes | None = "".join(words).encode("latin-1")
        except UnicodeEncodeError:  # a symbol beyond latin-1 is in no alphabet
            raw = None
        ids = None if raw is None else table[np.frombuffer(raw, dtype=np.uint8)]
        if ids is None or (ids < 0).any():
            for w in words:
                self.validate(w)  # raises, naming the first bad symbol and its position
        assert ids is not None
        return ids.reshape(len(words), n)

    def next_probs(self, prefix: str) -> np.ndarray:
        """The exact distribution of the next symbol (over ``symbols``) after ``prefix``."""
        self.validate(prefix)
        dists, _ = self._walk(prefix)
        return dists[-1]

    def next_prob_matrix(self, words: Sequence[str], include_empty: bool = False) -> np.ndarray:
        """``[B, n, |Σ|+1]`` next-symbol distributions for equal-length strings: row ``t`` is the
        distribution of symbol ``t + 2`` given the prefix ``w[: t + 1]`` (for a causal model
        reading ``w`` and predicting its continuation). With ``include_empty`` the shape is
        ``[B, n + 1, |Σ|+1]`` and row 0 is the distribution of the first symbol."""
        if len(words) == 0:
            return np.zeros((0, 0, len(self.symbols)))
        n = len(words[0])
        if any(len(w) != n for w in words):
            raise HardsoftError("next_prob_matrix needs strings of equal length")
        out = np.empty((len(words), n + 1, len(self.symbols)))
        for b, w in enumerate(words):
            self.validate(w)
            dists, _ = self._walk(w)
            out[b] = np.stack(dists)
        return out if include_empty else out[:, 1:]

    def log_probability(self, prefix: str) -> float:
        """``log P(X_{1:n} = prefix)`` (unconditioned: the prefix is emitted, no EOS in it)."""
        self.validate(prefix)
        dists, _ = self._walk(prefix)
        index = {s: k for k, s in enumerate(self.alphabet)}
        total = 0.0
        for t, ch in enumerate(prefix):
            q = dists[t][index[ch]]
            if q <= 0:
                return -math.inf
            total += math.log(q)
        return total

    def log_survival(self, n: int) -> float:
        """``log P(|X| >= n)``, by the forward DP."""
        check_length(n)
        return float(self._forward_pass([n])[2][0])

    def _backward_log(self, m: int, n: int, size: int) -> tuple[np.ndarray, float]:
        """(log beta_n, log beta_0 at the initial state) for ``min_length = m``."""
        log_beta = np.zeros(size)
        log_beta_n = None
        for t in range(m, -1, -1):
            if t == n:
                log_beta_n = log_beta.copy()
            if t == 0:
                break
            log_beta = self._log_backward(log_beta)
        assert log_beta_n is not None
        return log_beta_n, float(log_beta[0])

    def log_prefix_probability(self, prefix: str, min_length: int | None = None) -> float:
        """``log P(X_{1:n} = prefix | |X| >= min_length)`` (default ``min_length = n``)."""
        self.validate(prefix)
        n = len(prefix)
        m = n if min_length is None else min_length
        if m < n:
            raise HardsoftError(f"min_length must be >= the prefix length {n}, got {m}")
        lp = self.log_probability(prefix)
        if lp == -math.inf:
            return lp
        _, state = self._walk(prefix)
        size = self._n_states(m + 1)
        log_beta_n, log_beta_0 = self._backward_log(m, n, size)
        return lp + float(log_beta_n[state]) - log_beta_0

    def prefix_probability(self, prefix: str, min_length: int | None = None) -> float:
        """``P(X_{1:n} = prefix | |X| >= min_length)`` (default ``min_length = n``)."""
        return math.exp(self.log_prefix_probability(prefix, min_length))

    def sample_prefixes(
        self,
        n: int,
        count: int,
        rng: np.random.Generator | int | None = None,
        min_length: int | None = None,
    ) -> list[str]:
        """``count`` exact i.i.d. draws of ``X_{1:n}`` given ``|X| >= min_length`` (default
        ``n``): backward DP of the survival probability, then forward sampling."""
        check_length(n, count)
        rng = _as_rng(rng)
        m = n if min_length is None else min_length
        if m < n:
            raise HardsoftError(f"min_length must be >= n = {n}, got {m}")
        size = self._n_states(m + 1)
        block = max(1, math.isqrt(m) + 1)
        # Pass 1: checkpoints of log beta every `block` steps, from m down to 0.
        checkpoints: dict[int, np.ndarray] = {}
        log_beta = np.zeros(size)
        for t in range(m, -1, -1):
            if t % block == 0 or t == m:
                checkpoints[t] = log_beta.copy()
            if t == 0:
                break
            log_beta = self._log_backward(log_beta)
        walker = self._sampler(count, n, rng)
        for start in range(0, n, block):
            end = min(start + block, m)
            # Recompute beta_{start+1 .. end} from the checkpoint at `end`.
            betas = {end: checkpoints[end]}
            b = checkpoints[end]
            for t in range(end - 1, start, -1):
                b = self._log_backward(b)
                betas[t] = b
            for t in range(start, min(start + block, n)):
                walker(t, betas[t + 1])
        return walker.result()

    @abstractmethod
    def _sampler(self, count: int, n: int, rng: np.random.Generator) -> _Walker:
        """The forward walker of :meth:`sample_prefixes`: called as ``walker(t, log_beta_next)``
        for t = 0..n-1, it draws symbol t of ``count`` prefixes; ``walker.result()`` gives them."""

    def sample_words(
        self, count: int, rng: np.random.Generator | int | None = None, max_length: int = 10**6
    ) -> list[str]:
        """``count`` complete strings drawn from the process (ancestral sampling); a string
        reaching ``max_length`` symbols raises HardsoftError (it is astronomically rare for
        the default)."""
        rng = _as_rng(rng)
        out = []
        for _ in range(count):
            chars: list[str] = []
            while True:
                dist = self.next_probs_fast(chars)
                k = int(rng.choice(len(dist), p=dist))
                if k == self.eos_index:
                    break
                chars.append(self.alphabet[k])
                if len(chars) >= max_length:
                    raise HardsoftError(f"{self.name}: a sampled string exceeded {max_length}")
            out.append("".join(chars))
        return out

    def next_probs_fast(self, chars: list[str]) -> np.ndarray:
        return self.next_probs("".join(chars))

    def _forward_pass(self, ns: Sequence[int]) -> tuple[dict[int, np.ndarray], int, np.ndarray]:
        """Run the forward DP to ``max(ns)``; return {n: pi_n}, the state count and
        ``log P(|X| >= n)`` for each n in ``ns``."""
        ns = [int(v) for v in ns]
        for v in ns:
            check_length(v)
        top = max(ns) if ns else 0
        size = self._n_states(top + 1)
        alpha = np.zeros(size)
        alpha[0] = 1.0
        log_z = 0.0
        want = set(ns)
        pis: dict[int, np.ndarray] = {}
        logs: dict[int, float] = {}
        for t in range(top + 1):
            if t in want:
                pis[t] = alpha.copy()
                logs[t] = log_z
            if t == top:
                break
            alpha = self._forward(alpha)
            s = alpha.sum()
            log_z += math.log(s)
            alpha = alpha / s
        return pis, size, np.array([logs[v] for v in ns])

    def state_distribution(self, n: int) -> np.ndarray:
        """``pi_n``: the summary state (parity / height) after ``n`` symbols given ``|X| >= n``."""
        return self._forward_pass([n])[0][n]

    def optimal_cross_entropy(self, ns: Sequence[int]) -> np.ndarray:
        """Expected entropy (nats) of the exact next-symbol distribution after a random prefix
        of length ``n`` (given ``|X| >= n``), for each ``n`` in ``ns``."""
        pis, size, _ = self._forward_pass(ns)
        h = self._state_entropy(size)
        return np.array([float(pis[int(v)] @ h) for v in ns])

    def unigram_cross_entropy(self, ns: Sequence[int]) -> np.ndarray:
        """Entropy (nats) of the marginal next-symbol distribution at step ``n`` (given
        ``|X| >= n``): the cross-entropy of the best predictor ignoring the prefix's content."""
        pis, size, _ = self._forward_pass(ns)
        dists = self._state_dists(size)
        return np.array([float(_entropy(pis[int(v)] @ dists)) for v in ns])

    def marginal_next(self, n: int) -> np.ndarray:
        """The marginal next-symbol distribution at step ``n`` (given ``|X| >= n``)."""
        pis, size, _ = self._forward_pass([n])
        return pis[n] @ self._state_dists(size)

    def __repr__(self) -> str:
        return f"<process {self.name} p={self.p}>"


class ParityProcess(HahnProcess):
    """Hahn's two-state PARITY automaton (states: even / odd number of 1s so far)."""

    name = "parity-process"
    stops_in = "parity-even"
    alphabet = ("0", "1")
    description = "Hahn's PARITY automaton"
    p_range = "0<p<1"
    default_p = 0.5

    def __init__(self, p: float) -> None:
        p = float(p)
        if not 0.0 < p < 1.0:
            raise HardsoftError(f"parity-process needs 0 < p < 1, got {p}")
        self.p = p
        q = (1.0 - p) / 2.0
        self._dist = np.array([[q, q, p], [0.5, 0.5, 0.0]])

    def _n_states(self, max_steps: int) -> int:
        return 2

    def _forward(self, alpha: np.ndarray) -> np.ndarray:
        d = self._dist
        return np.array(
            [alpha[0] * d[0, 0] + alpha[1] * d[1, 1], alpha[0] * d[0, 1] + alpha[1] * d[1, 0]]
        )

    def _log_backward(self, log_beta: np.ndarray) -> np.ndarray:
        ld = np.log(self._dist[:, :2])
        return np.array(
            [
                np.logaddexp(ld[0, 0] + log_beta[0], ld[0, 1] + log_beta[1]),
                np.logaddexp(ld[1, 0] + log_beta[1], ld[1, 1] + log_beta[0]),
            ]
        )

    def _state_dists(self, size: int) -> np.ndarray:
        return self._dist.copy()

    def _state_entropy(self, size: int) -> np.ndarray:
        return _entropy(self._dist)

    def _walk(self, prefix: str) -> tuple[list[np.ndarray], int]:
        state = 0
        dists = [self._dist[0].copy()]
        for ch in prefix:
            state ^= int(ch == "1")
            dists.append(self._dist[state].copy())
        return dists, state

    def next_prob_matrix(self, words: Sequence[str], include_empty: bool = False) -> np.ndarray:
        if len(words) == 0:
            return np.zeros((0, 0, 3))
        bits = self.encode(words)
        states = np.concatenate([np.zeros((len(words), 1), np.int64), np.cumsum(bits, 1) % 2], 1)
        out = self._dist[states]
        return out if include_empty else out[:, 1:]

    def _sampler(self, count: int, n: int, rng: np.random.Generator) -> _Walker:
        return _ParitySampler(self, count, n, rng)


class _ParitySampler:
    def __init__(self, proc: ParityProcess, count: int, n: int, rng: np.random.Generator):
        self.proc, self.rng = proc, rng
        self.state = np.zeros(count, dtype=np.int64)
        self.codes = np.zeros((count, n), dtype=np.int64)

    def __call__(self, t: int, log_beta_next: np.ndarray) -> None:
        ld = np.log(self.proc._dist[:, :2])
        s = self.state
        # symbol 0 keeps the state, symbol 1 flips it
        lw0 = ld[s, 0] + log_beta_next[s]
        lw1 = ld[s, 1] + log_beta_next[1 - s]
        p1 = 1.0 / (1.0 + np.exp(lw0 - lw1))
        bit = (self.rng.random(len(s)) < p1).astype(np.int64)
        self.codes[:, t] = bit
        self.state = s ^ bit

    def result(self) -> list[str]:
        return codes_to_words(("0", "1"), self.codes)


class DyckProcess(HahnProcess):
    """Hahn's 2DYCK PCFG ``S -> (S)S | [S]S`` (p/2 each) ``| ε`` (1 - p); summary state: height."""

    name = "dyck2-process"
    stops_in = "dyck2"
    alphabet = ("(", ")", "[", "]")
    description = "Hahn's 2DYCK PCFG"
    p_range = "0<p<1/2"
    default_p = 0.3

    def __init__(self, p: float) -> None:
        p = float(p)
        if not 0.0 < p < 0.5:
            raise HardsoftError(
                f"dyck2-process needs 0 < p < 1/2 (finite expected length), got {p}"
            )
        self.p = p

    def _n_states(self, max_steps: int) -> int:
        return max_steps + 2

    def _forward(self, alpha: np.ndarray) -> np.ndarray:
        out = np.zeros_like(alpha)
        out[1:] += self.p * alpha[:-1]
        out[:-1] += (1.0 - self.p) * alpha[1:]
        return out

    def _log_backward(self, log_beta: np.ndarray) -> np.ndarray:
        lp, lq = math.log(self.p), math.log1p(-self.p)
        up = np.empty_like(log_beta)
        up[:-1] = lp + log_beta[1:]
        up[-1] = lp + log_beta[-1]  # top height: never reached within the horizon
        out = up.copy()
        out[1:] = np.logaddexp(up[1:], lq + log_beta[:-1])
        return out

    def _state_dists(self, size: int) -> np.ndarray:
        p = self.p
        d = np.tile([p / 2, (1 - p) / 2, p / 2, (1 - p) / 2, 0.0], (size, 1))
        d[0] = [p / 2, 0.0, p / 2, 0.0, 1 - p]
        return d

    def _state_entropy(self, size: int) -> np.ndarray:
        p = self.p
        h = float(_entropy(np.array([p / 2, p / 2, 1 - p])))
        return np.full(size, h)

    def _walk(self, prefix: str) -> tuple[list[np.ndarray], int]:
        p = self.p
        stack: list[str] = []
        dists = []
        closer = {"(": ")", "[": "]"}
        for t in range(len(prefix) + 1):
            d = np.zeros(5)
            d[0] = d[2] = p / 2
            if stack:
                d[1 if stack[-1] == "(" else 3] = 1 - p
            else:
                d[4] = 1 - p
            dists.append(d)
            if t == len(prefix):
                break
            ch = prefix[t]
            if ch in closer:
                stack.append(ch)
            elif not stack or closer[stack.pop()] != ch:
                raise HardsoftError(
                    f"{self.name}: prefix {prefix!r} is impossible (bad {ch!r} at position {t + 1})"
                )
        return dists, len(stack)

    def _sampler(self, count: int, n: int, rng: np.random.Generator) -> _Walker:
        return _DyckSampler(self, count, n, rng)

    def next_prob_matrix(self, words: Sequence[str], include_empty: bool = False) -> np.ndarray:
        """Vectorised over the batch (one pass over positions with a stack per string)."""
        if len(words) == 0:
            return np.zeros((0, 0, 5))
        codes = self.encode(words)
        n = codes.shape[1]
        batch = len(words)
        rows = np.arange(batch)
        stack = np.zeros((batch, n + 1), dtype=np.int64)  # bracket type 0 = (, 1 = [
        height = np.zeros(batch, dtype=np.int64)
        out = np.zeros((batch, n + 1, 5))
        p = self.p
        for t in range(n + 1):
            out[:, t, 0] = out[:, t, 2] = p / 2
            top = stack[rows, np.maximum(height - 1, 0)]
            out[rows, t, np.where(height > 0, 2 * top + 1, 4)] = 1 - p
            if t == n:
                break
            c = codes[:, t]
            is_open = c % 2 == 0
            bad = ~is_open & ((height == 0) | (c // 2 != top))
            if bad.any():
                b = int(np.flatnonzero(bad)[0])
                raise HardsoftError(
                    f"{self.name}: prefix {words[b]!r} is impossible "
                    f"(bad {words[b][t]!r} at position {t + 1})"
                )
            stack[rows[is_open], height[is_open]] = c[is_open] // 2
            height = np.where(is_open, height + 1, height - 1)
        return out if include_empty else out[:, 1:]

    def closing_unbalanced_probability(self, ns: Sequence[int]) -> np.ndarray:
        """``P0(n) = P(h_n > 0 and x_n is a closing bracket | |X| >= n)``: the event in Hahn's
        proof of Theorem 6 (footnote 4), after which the closing type is fully determined."""
        ns = [int(v) for v in ns]
        pis, _, _ = self._forward_pass([max(v - 1, 0) for v in ns])
        out = []
        for n in ns:
            if n == 0:
                out.append(0.0)
                continue
            pi = pis[n - 1]
            survive = self._forward(np.append(pi, 0.0)).sum()
            closes_to_positive = (1.0 - self.p) * pi[2:].sum()  # from h + 1 >= 2 down to h >= 1
            out.append(float(closes_to_positive / survive))
        return np.array(out)

    def hahn_gap_bound(self, ns: Sequence[int]) -> np.ndarray:
        """Hahn's asymptotic lower bound on a soft-attention transformer's excess cross-entropy
        over the optimum at prefix length ``n``: ``P0(n) (1 - p) ln 2`` (Theorem 6 proof)."""
        return self.closing_unbalanced_probability(ns) * (1.0 - self.p) * math.log(2.0)


class _DyckSampler:
    def __init__(self, proc: DyckProcess, count: int, n: int, rng: np.random.Generator):
        self.p, self.rng = proc.p, rng
        self.height = np.zeros(count, dtype=np.int64)
        self.stack = np.zeros((count, n + 1), dtype=np.int64)  # 0 = '(', 1 = '['
        self.codes = np.zeros((count, n), dtype=np.int64)  # index into "()[]"
        self.rows = np.arange(count)

    def __call__(self, t: int, log_beta_next: np.ndarray) -> None:
        h = self.height
        lw_open = math.log(self.p) + log_beta_next[h + 1]  # either type, p/2 each
        lw_close = math.log1p(-self.p) + log_beta_next[np.maximum(h - 1, 0)]
        with np.errstate(over="ignore"):
            p_open = np.where(h > 0, 1.0 / (1.0 + np.exp(lw_close - lw_open)), 1.0)
        is_open = self.rng.random(len(h)) < p_open
        typ = self.rng.integers(0, 2, size=len(h))
        top = self.stack[self.rows, np.maximum(h - 1, 0)]
        self.codes[:, t] = np.where(is_open, 2 * typ, 2 * top + 1)
        opened = self.rows[is_open]
        self.stack[opened, h[is_open]] = typ[is_open]
        self.height = np.where(is_open, h + 1, h - 1)

    def result(self) -> list[str]:
        return codes_to_words(("(", ")", "[", "]"), self.codes)

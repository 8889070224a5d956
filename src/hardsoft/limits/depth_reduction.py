"""The Depth Reduction Lemma (Hahn (2020) §5, Lemma 4; supplement S1) as an algorithm.

Layer by layer (the heads of layer ℓ read the activations ``x^(ℓ)``, which form a
c-transformer's layer 0), starting from the current restriction ρ:

* **Stage 1** (Lemma 6): fix every free position that feeds more than ``c / (η C)``
  activations of ``x^(ℓ)`` (C = current free fraction) to a random symbol.
* **Stage 2** (Lemma 15, Definition 16): for every tuple ((h, i), z) rank the candidate key
  positions by their maximum attainable score, walk the ranking and record the activations that
  bring new free inputs; the tuple is *satisfied* when its attention depends on at most ``c k``
  free inputs, and otherwise k-depends on the first ``max(k, 1)`` such activations. While some
  activation j is k-depended on by more than ``|V(j)| k H`` unsatisfied tuples, fix its inputs to
  the value that attains the maximum for most of them (pigeonhole: more than ``k H``).
* **Stage 3** (Lemmas 21–23): a random restriction fixing each free position with probability q
  (uniform symbol), with the bad events ``X^(z)_{i,h}`` (an unsatisfied tuple none of whose
  k-dependencies is fixed to a maximising value) and ``X_0`` (more than ``(1+δ) q`` of the free
  positions fixed), made constructive by Moser–Tardos resampling (:mod:`hardsoft.limits.lll`).

Parameters ``η, q, δ`` default to the split ``1-2η = 1-(1+δ)q = sqrt(C'/C)`` with ``δ = 1/2``,
which satisfies ``(1-2η)(1-(1+δ)q) = C'/C`` (supplement Definition 5), where the per-layer
ratio is ``C'/C = C_target^(1/L)``. The paper's k is astronomically large at practical n (see
:func:`paper_k`); the practical default is ``k = 0`` (a tuple is satisfied only when its head's
attention is *captured*: it depends on no free input), which keeps the dependency sets small.
The soundness of the final result never relies on the lemma's bounds: the exact analysis of
:mod:`hardsoft.limits.dependency` certifies the output's dependency set.

The module is long but holds one job, this one algorithm: its three stages share the builder's
state (the restriction, the layer's tables and the log), and its pieces that stand alone live
elsewhere (the analysis in :mod:`~hardsoft.limits.dependency`, the resampling in
:mod:`~hardsoft.limits.lll`).
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from hardsoft.errors import HardsoftError
from hardsoft.limits import lll
from hardsoft.limits.dependency import (
    DEFAULT_MAX_ROWS,
    ActivationLayer,
    Analysis,
    TupleInfo,
    analyse_head,
    analysis_of,
    assignments,
    check_unique_hard,
    embed_layer,
    engine_model,
    next_layer,
    symbol_ids,
)
from hardsoft.limits.layercache import CACHE_BYTES, LayerCache
from hardsoft.limits.restriction import Restriction
from hardsoft.model.transformer import Transformer


@dataclass
class Params:
    """The lemma's parameters. ``C``: target free fraction at the end, relative to the
    positions free at the start; ``k``: the satisfaction parameter; ``eta, q, delta``: as in
    supplement Definition 5 (None: derived from C and the number of layers)."""

    C: float = 0.5
    k: int | None = None
    eta: float | None = None
    q: float | None = None
    delta: float | None = None
    max_rounds: int = 100
    max_resamplings: int = 5_000
    max_rows: int = DEFAULT_MAX_ROWS
    seed: int = 0

    def resolved(self, num_layers: int) -> Params:
        """Fill in η, q, δ so that (1-2η)(1-(1+δ)q) = C^(1/L)."""
        if not 0 < self.C <= 1:
            raise HardsoftError(f"C must be in (0, 1], got {self.C}")
        if self.k is not None and self.k < 0:
            raise HardsoftError(f"k must be >= 0, got {self.k}")
        r = self.C ** (1.0 / max(1, num_layers))
        sq = math.sqrt(r)
        delta = 0.5 if self.delta is None else self.delta
        eta = (1 - sq) / 2 if self.eta is None else self.eta
        q = (1 - sq) / (1 + delta) if self.q is None else self.q
        if not 0 < eta < 0.5 and self.C < 1:
            raise HardsoftError(f"eta must be in (0, 1/2), got {eta}")
        if not 0 <= q < 1 or not 0 <= (1 + delta) * q < 1:
            raise HardsoftError(f"need 0 <= q and (1+delta) q < 1, got q={q}, delta={delta}")
        return Params(
            self.C,
            self.k,
            max(eta, 1e-9),
            q,
            delta,
            self.max_rounds,
            self.max_resamplings,
            self.max_rows,
            self.seed,
        )


@dataclass
class LayerLog:
    """What happened at one layer (fractions are of n)."""

    layer: int
    k: int = 0
    c_in: int = 0
    free_start: float = 0.0
    free_after_stage1: float = 0.0
    free_after_stage2: float = 0.0
    free_after_stage3: float = 0.0
    stage1_fixed: int = 0
    stage1_threshold: float = 0.0
    stage2_rounds: int = 0
    stage2_fixes: int = 0
    stage2_positions: int = 0
    tuples: int = 0
    unsatisfied_after_stage2: int = 0
    stage3_events: int = 0
    resamplings: int = 0
    mt_bound: float = 0.0
    mt_expected_independent: float = 0.0
    lll_condition: bool | None = None
    mt_converged: bool = True
    unsatisfied_final: int = 0
    c_out: int = 0
    paper_k: float = 0.0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def paper_k(c: int, H: int, eta: float, C: float, q: float, S: int = 2) -> float:
    """The smallest k (a power of 2) meeting the supplement's conditions (12) and, from its
    Lemma 17 (eq. 14: each of at most ``|V| n / k`` iterations fixes up to c inputs),
    ``|V| c / k <= η C`` (``|V| = S^c``; 2^c c / k for a binary alphabet) for the measured c,
    with A = 1/k², B = 1/2 (ignoring the n-dependent X_0 condition): the lemma's guarantee
    needs at least this k. Returns inf beyond 2^200."""
    c = max(c, 1)
    V = S**c
    logD = math.log1p(-((q / S) ** c)) * eta * C / (c * c) if q > 0 else 0.0
    k = 1.0
    while k < 2.0**200:
        A = 1 / (k * k)
        f = (V * V / eta) * c * c * k * k * H / C
        rhs = (math.log(A) + math.log(0.5) + f * math.log1p(-A)) / k if A < 1 else -math.inf
        if logD <= rhs and V * c / k <= eta * C:
            return k
        k *= 2
    return math.inf


K_SCHEDULE = (0, 1, 2, 4, 8)


_Avoiding = tuple[tuple[int, ...], frozenset[Any]] | None


def _tuple_event(
    X: ActivationLayer,
    t: TupleInfo,
    var_of: dict[int, int],
    read: dict[tuple[int, bytes], _Avoiding] | None = None,
) -> lll.Event:
    """The bad event X^(z)_{i,h} of an unsatisfied tuple: none of its k-dependencies is fixed
    (by the random restriction ``a``, over the free positions ``var_of``) to a value attaining
    its maximum score. Each k-dependency j is read once, here, into the tuples of symbols of
    its inputs that give it such a value (kept in ``read`` for the other events of the same
    restriction); the test is then a set lookup per j (Moser–Tardos runs it up to thousands
    of times)."""
    name = f"X(h={t.head},i={t.position},z={t.z})"
    vars_ = sorted({var_of[int(p)] for j in t.kdeps for p in X.dep(j) if int(p) in var_of})
    read = {} if read is None else read
    reads = []
    for j, mv in zip(t.kdeps, t.maxvals):
        key = (int(j), np.asarray(mv, dtype=np.int64).tobytes())
        if key not in read:
            read[key] = _avoiding(X, j, mv, var_of)
        act = read[key]
        if act is None:
            return lll.Event(tuple(vars_), _never, name)
        if act[0]:
            reads.append((operator.itemgetter(*act[0]), act[1]))

    def occurs(a: Sequence[int | None]) -> bool:
        return not any(get(a) in avoid for get, avoid in reads)

    return lll.Event(tuple(vars_), occurs, name)


def _avoiding(X: ActivationLayer, j: int, maxvals: np.ndarray, var_of: dict[int, int]) -> _Avoiding:
    """Activation j's inputs (as variables of ``var_of``) and the assignments of them (a tuple
    of symbol indices; a bare index for one input) that give j a value in ``maxvals``. None
    when j has no input and its one value is such a value: the event can never occur. An
    input outside ``var_of`` is never assigned, so j then never avoids the event (no
    assignment is listed)."""
    dep = X.dep(j)
    hit = np.flatnonzero(np.isin(X.table(j), maxvals))
    if len(dep) == 0:
        return None if len(hit) else ((), frozenset())
    if any(int(p) not in var_of for p in dep):
        return (), frozenset()
    vs = tuple(var_of[int(p)] for p in dep)
    digits = np.stack(np.unravel_index(hit, (X.S,) * len(dep)), axis=1).tolist()
    avoid = frozenset(d[0] for d in digits) if len(vs) == 1 else frozenset(map(tuple, digits))
    return vs, avoid


def _never(a: Sequence[int | None]) -> bool:
    return False


def _expected_independent(X: ActivationLayer, unsat: list[TupleInfo], q: float) -> float:
    """Σ P/(1 − P) over the events, with P(X_t) as if the k-dependencies' inputs were
    disjoint: each activation j is fixed to a maximising value with probability
    q^|D_j| · (#maximising rows) / S^|D_j|."""
    S = X.S
    p_hat = []
    for t in unsat:
        p_avoid_not = 1.0
        for j, mv in zip(t.kdeps, t.maxvals):
            d = len(X.dep(j))
            hit = float(np.isin(X.table(j), mv).sum()) / (S**d)
            p_avoid_not *= 1.0 - (q**d) * hit
        p_hat.append(p_avoid_not)
    return float(sum(p / (1 - p) if p < 1 else math.inf for p in p_hat))


class _Builder:
    """Holds the engine model and the activations under the current restriction, computing
    each layer once per restriction (recent ones kept in a :class:`LayerCache`)."""

    def __init__(
        self, model: Transformer, restriction: Restriction, params: Params, memo: bool = True
    ) -> None:
        check_unique_hard(model)
        self.model = engine_model(model)
        self.sym = symbol_ids(self.model, restriction.alphabet)
        self.rho = restriction
        self.auto_k = params.k is None
        self.p = params
        self.rng = np.random.default_rng(params.seed)
        self.S = len(restriction.alphabet)
        self.L = len(self.model.blocks)
        self.memo = memo  # False: recompute everything (the plain path the tests compare with)
        self._layers = LayerCache(CACHE_BYTES if memo else 0)
        self._tuples: tuple[tuple[object, ...], list[TupleInfo]] | None = None
        self.logs: list[LayerLog] = []

    # The resolved parameters (``Params.resolved`` fills every one; k is set per attempt).
    @property
    def k(self) -> int:
        assert self.p.k is not None
        return self.p.k

    @property
    def eta(self) -> float:
        assert self.p.eta is not None
        return self.p.eta

    @property
    def q(self) -> float:
        assert self.p.q is not None
        return self.p.q

    @property
    def delta(self) -> float:
        assert self.p.delta is not None
        return self.p.delta

    # ------------------------------------------------------------------ activations
    def layer_input(self, ell: int) -> ActivationLayer:
        """``x^(ell)`` at every position under the current restriction (from the highest
        layer below it already computed under this restriction)."""
        key = self.rho.symbols
        start = ell
        X = self._layers.get((key, start, True))
        while X is None and start > 0:
            start -= 1
            X = self._layers.get((key, start, True))
        if X is None:
            X = embed_layer(self.model, self.rho, self.sym)
            self._layers.put((key, 0, True), X)
        for b in range(start, ell):
            X = self._after(b, X, None)
            self._layers.put((key, b + 1, True), X)
        return X

    def _after(self, ell: int, X: ActivationLayer, qpos: np.ndarray | None) -> ActivationLayer:
        """The activations after layer ``ell`` (at ``qpos``; None: every position)."""
        sets = [
            analyse_head(self.model, ell, h, X, query_positions=qpos)
            for h in range(len(self.model.blocks[ell].heads))
        ]
        return next_layer(self.model, ell, X, sets, positions=qpos, max_rows=self.p.max_rows)

    def query_positions(self, ell: int) -> np.ndarray | None:
        return np.array([self.rho.n - 1]) if ell == self.L - 1 else None

    def tuples(self, ell: int, X: ActivationLayer, c: int) -> list[TupleInfo]:
        """Stage 2's tuples of every head of layer ``ell`` (``X``: its input under the current
        restriction); asked again, unchanged, after a round that fixed nothing."""
        key = (self.rho.symbols, ell, self.k, c)
        if self.memo and self._tuples is not None and self._tuples[0] == key:
            return self._tuples[1]
        out: list[TupleInfo] = []
        for h in range(len(self.model.blocks[ell].heads)):
            hs = analyse_head(
                self.model,
                ell,
                h,
                X,
                query_positions=self.query_positions(ell),
                want_sets=False,
                want_tuples=True,
                k=self.k,
                c=c,
            )
            out.extend(hs.tuples)
        self._tuples = (key, out)
        return out

    def fix(self, assignment: dict[int, int]) -> None:
        if assignment:
            self.rho = self.rho.fix({p: self.rho.alphabet[s] for p, s in assignment.items()})

    # ------------------------------------------------------------------ stages
    def stage1(self, X: ActivationLayer, log: LayerLog, c: int) -> None:
        counts = np.zeros(self.rho.n, dtype=np.int64)
        for j in range(X.n):
            counts[X.dep(j)] += 1
        C_cur = max(self.rho.free_fraction, 1e-12)
        thr = c / (self.eta * C_cur) if c else math.inf
        log.stage1_threshold = thr
        hubs = [int(p) for p in np.nonzero(counts > thr)[0] if self.rho.symbols[p] is None]
        self.fix({p: int(self.rng.integers(self.S)) for p in hubs})
        log.stage1_fixed = len(hubs)

    def _fix_activation(self, X: ActivationLayer, j: int, value: int) -> dict[int, int] | None:
        """An assignment of j's still-free inputs giving j the value ``value`` (local id)."""
        dep = X.dep(j)
        assign = assignments(self.S, len(dep))
        ok = self._compatible(dep, assign) & (X.table(j) == value)
        rows = np.nonzero(ok)[0]
        if len(rows) == 0:
            return None
        row = assign[rows[0]]
        return {int(p): int(row[t]) for t, p in enumerate(dep) if self.rho.symbols[int(p)] is None}

    def _compatible(self, dep: np.ndarray, assign: np.ndarray) -> np.ndarray:
        """Which rows of ``assign`` (assignments of ``dep``) agree with the restriction."""
        ok = np.ones(len(assign), dtype=np.bool_)
        idx = {a: i for i, a in enumerate(self.rho.alphabet)}
        for t, p in enumerate(dep):
            s = self.rho.symbols[int(p)]
            if s is not None:
                ok = ok & (assign[:, t] == idx[s])
        return ok

    def _attainable(self, X: ActivationLayer, j: int) -> set[int]:
        dep = X.dep(j)
        ok = self._compatible(dep, assignments(self.S, len(dep)))
        return set(int(v) for v in np.unique(X.table(j)[ok]))

    def stage2_round(
        self,
        ell: int,
        X: ActivationLayer,
        tuples: list[TupleInfo],
        log: LayerLog,
        zero_threshold: bool = False,
    ) -> int:
        """One round of Definition 16 with lazy updates; returns the number of fixes.
        ``zero_threshold``: fix while any unsatisfied tuple remains (greedy hitting set)."""
        H = max(1, len(self.model.blocks[ell].heads))
        unsat = [t for t in tuples if not t.satisfied]
        dep_index: dict[int, list[int]] = {}
        for ti, t in enumerate(unsat):
            for j in t.kdeps:
                dep_index.setdefault(j, []).append(ti)
        live = np.ones(len(unsat), dtype=bool)
        count = {j: len(v) for j, v in dep_index.items()}
        done: set[int] = set()
        fixes = 0
        while True:
            best, best_c = -1, -1
            for j, cnt in count.items():
                if j in done:
                    continue
                thr = 0 if zero_threshold else X.num_values(j) * self.k * H
                if cnt > thr and cnt > best_c:
                    best, best_c = j, cnt
            if best < 0:
                break
            j = best
            done.add(j)
            votes: dict[int, int] = {}
            for ti in dep_index[j]:
                if not live[ti]:
                    continue
                t = unsat[ti]
                for v in t.maxvals[t.kdeps.index(j)]:
                    votes[int(v)] = votes.get(int(v), 0) + 1
            attainable = self._attainable(X, j)
            choices = [(c, v) for v, c in votes.items() if v in attainable]
            if not choices:
                continue
            _, v = max(choices)
            assignment = self._fix_activation(X, j, v)
            if assignment is None:
                continue
            self.fix(assignment)
            fixes += 1
            log.stage2_positions += len(assignment)
            for ti in dep_index[j]:
                if not live[ti]:
                    continue
                t = unsat[ti]
                if v in set(int(x) for x in t.maxvals[t.kdeps.index(j)]):
                    live[ti] = False
                    for j2 in t.kdeps:
                        count[j2] -= 1
        return fixes

    def stage3(self, ell: int, X: ActivationLayer, tuples: list[TupleInfo], log: LayerLog) -> None:
        """Lemmas 21–23: a random restriction (each free position fixed with probability q),
        resampled by Moser–Tardos until no bad event occurs; kept only if it converged."""
        unsat = [t for t in tuples if not t.satisfied]
        log.stage3_events = len(unsat)
        if not unsat:
            log.notes.append("stage 3 skipped: no unsatisfied tuple after stage 2")
            return
        free = [int(p) for p in self.rho.free_positions()]
        var_of = {p: v for v, p in enumerate(free)}
        q, S = self.q, self.S
        limit = (1 + self.delta) * q * len(free)

        def sample(rng: np.random.Generator, v: int) -> int | None:
            return int(rng.integers(S)) if rng.random() < q else None

        read: dict[tuple[int, bytes], _Avoiding] = {}
        events = [_tuple_event(X, t, var_of, read) for t in unsat]
        log.mt_expected_independent = _expected_independent(X, unsat, q)
        events.append(
            lll.Event(
                tuple(range(len(free))),
                lambda a: len(a) - a.count(None) > limit,
                "X_0",
            )
        )
        k = max(self.k, 1)
        x = [1 / (k * k)] * len(unsat) + [0.5]
        log.mt_bound = lll.mt_expected_bound(x)
        nbrs = lll.dependency_graph(events[:-1])
        c = max(1, log.c_in)
        p_x = (1 - (q / S) ** c) ** max(1.0, k / ((c * c) / (self.eta * max(log.free_start, 1e-9))))
        probs = [p_x] * len(unsat)
        log.lll_condition = lll.asymmetric_lll_holds(
            probs, [s | {len(unsat)} for s in nbrs], x[:-1] + [0.5]
        )
        res = lll.moser_tardos(
            len(free), sample, events, self.rng, max_resamplings=self.p.max_resamplings
        )
        log.resamplings = res.resamplings
        log.mt_converged = res.converged
        if not res.converged:
            log.notes.append(
                f"Moser-Tardos did not converge within {self.p.max_resamplings} resamplings; "
                "stage 3 discarded, remaining tuples satisfied greedily (stage-2 rounds with "
                "threshold 0)"
            )
            return
        self.fix({free[v]: s for v, s in enumerate(res.assignment) if s is not None})

    # ------------------------------------------------------------------ one layer
    def reduce_layer(self, ell: int) -> LayerLog:
        """Run the three stages at layer ``ell``. With ``k=None`` (auto) try k = 0, 1, 2, 4,
        8 in turn and keep the first attempt that stays above the per-layer target free
        fraction with enumerable activations (else the attempt keeping most positions free)."""
        if self.auto_k is False:
            return self._attempt(ell)
        start = self.rho
        ratio = self.p.C ** (1.0 / max(1, self.L))
        best: tuple[float, LayerLog, Restriction] | None = None
        tried = []
        for k in K_SCHEDULE:
            self.rho = start
            self.p.k = k
            try:
                log = self._attempt(ell)
            except HardsoftError as exc:
                tried.append(f"k={k}: {exc}")
                continue
            tried.append(f"k={k}: free {log.free_after_stage3:.3f}, c {log.c_out}")
            if best is None or log.free_after_stage3 > best[0]:
                best = (log.free_after_stage3, log, self.rho)
            if log.free_after_stage3 >= ratio * log.free_start - 1e-12:
                break
        if best is None:
            raise HardsoftError(
                f"layer {ell + 1}: every k in {K_SCHEDULE} exceeded the enumeration cap; "
                "raise --max-rows"
            )
        _, log, self.rho = best
        self.p.k = log.k
        if len(tried) > 1:
            log.notes.append("auto k: " + "; ".join(tried))
        return log

    def _attempt(self, ell: int) -> LayerLog:
        t0 = time.perf_counter()
        n = self.rho.n
        log = LayerLog(layer=ell + 1, free_start=self.rho.free_fraction, k=self.k)
        X = self.layer_input(ell)
        c = X.max_dep()
        log.c_in = c
        H = len(self.model.blocks[ell].heads)
        log.paper_k = paper_k(c, max(H, 1), self.eta, max(log.free_start, 1e-9), self.q, self.S)
        self.stage1(X, log, c)
        log.free_after_stage1 = self.rho.free_fraction
        tuples: list[TupleInfo] = []
        if H:
            for _ in range(self.p.max_rounds):
                X = self.layer_input(ell)
                tuples = self.tuples(ell, X, c)
                log.stage2_rounds += 1
                fixes = self.stage2_round(ell, X, tuples, log)
                log.stage2_fixes += fixes
                if fixes == 0:
                    break
            else:
                log.notes.append(f"stage 2 stopped after {self.p.max_rounds} rounds")
            log.tuples = len(tuples)
            log.unsatisfied_after_stage2 = sum(not t.satisfied for t in tuples)
        log.free_after_stage2 = self.rho.free_fraction
        if H and log.unsatisfied_after_stage2:
            self.stage3(ell, X, tuples, log)
            X = self.layer_input(ell)
            tuples = self.tuples(ell, X, c)
            if not log.mt_converged or any(not t.satisfied for t in tuples):
                for _ in range(self.p.max_rounds):
                    X = self.layer_input(ell)
                    tuples = self.tuples(ell, X, c)
                    if self.stage2_round(ell, X, tuples, log, zero_threshold=True) == 0:
                        break
                X = self.layer_input(ell)
                tuples = self.tuples(ell, X, c)
        log.free_after_stage3 = self.rho.free_fraction
        ratio = self.p.C ** (1.0 / max(1, self.L))
        if log.free_after_stage3 < ratio * log.free_start - 1e-12:
            log.notes.append(
                f"free fraction {log.free_after_stage3:.3f} is below the lemma's per-layer "
                f"target C'/C * {log.free_start:.3f} = {ratio * log.free_start:.3f}"
            )
        log.unsatisfied_final = sum(not t.satisfied for t in tuples)
        nxt = self._next(ell)
        log.c_out = nxt.max_dep()
        log.seconds = time.perf_counter() - t0
        del n
        return log

    def _next(self, ell: int) -> ActivationLayer:
        """The activations after layer ``ell`` under the current restriction (at the output
        position only after the last layer)."""
        qpos = self.query_positions(ell)
        key = (self.rho.symbols, ell + 1, qpos is None)
        X = self._layers.get(key)
        if X is None:
            X = self._after(ell, self.layer_input(ell), qpos)
            self._layers.put(key, X)
        return X

    def analysis(self) -> Analysis:
        """The exact analysis (:func:`~hardsoft.limits.dependency.analyse`) under the current
        restriction, from the layers already computed under it."""
        layers = [self.layer_input(b) for b in range(max(self.L, 1))]
        if self.L:
            layers.append(self._next(self.L - 1))
        return analysis_of(self.model, self.rho, layers)


def _reduce(
    model: Transformer, restriction: Restriction, params: Params | None, memo: bool
) -> _Builder:
    """Run the lemma layer by layer; the builder holds the final restriction and its logs."""
    params = (params or Params()).resolved(len(model.spec.layers))
    b = _Builder(model, restriction, params, memo)
    with torch.no_grad():
        for ell in range(b.L):
            b.logs.append(b.reduce_layer(ell))
    if b.auto_k:
        params.k = None
    return b


def reduce_depth(
    model: Transformer, restriction: Restriction, params: Params | None = None, memo: bool = True
) -> tuple[Restriction, list[LayerLog], Params]:
    """Apply the Depth Reduction Lemma layer by layer; returns the final restriction, the
    per-layer log and the resolved parameters. ``memo=False`` recomputes every layer and
    every tuple list when asked (slower, the same result: the reference for the tests)."""
    b = _reduce(model, restriction, params, memo)
    return b.rho, b.logs, b.p


def reduce_and_analyse(
    model: Transformer, restriction: Restriction, params: Params | None = None
) -> tuple[Restriction, list[LayerLog], Params, Analysis]:
    """:func:`reduce_depth` and the exact analysis of the final restriction, the same as
    :func:`~hardsoft.limits.dependency.analyse` with the resolved ``max_rows``, reusing the
    layers the lemma already computed under that restriction."""
    b = _reduce(model, restriction, params, True)
    with torch.no_grad():
        analysis = b.analysis()
    return b.rho, b.logs, b.p, analysis

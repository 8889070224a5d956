"""The generic Moser–Tardos / Lovász Local Lemma module, on k-SAT instances where an
independent checker (evaluating every clause) is the ground truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hardsoft.limits import lll


def _ksat(num_vars, num_clauses, k, rng):
    clauses = []
    for _ in range(num_clauses):
        vs = rng.choice(num_vars, size=k, replace=False)
        signs = rng.integers(0, 2, size=k)
        clauses.append(list(zip(vs.tolist(), signs.tolist())))
    return clauses


def _events(clauses):
    # the bad event of a clause: every literal false (variable == sign means "false" here)
    return [
        lll.Event(tuple(v for v, _ in cl), lambda a, cl=cl: all(a[v] == s for v, s in cl))
        for cl in clauses
    ]


def _sample(rng, v):
    return int(rng.integers(0, 2))


def test_moser_tardos_finds_a_satisfying_assignment():
    rng = np.random.default_rng(0)
    clauses = _ksat(200, 300, 6, rng)
    res = lll.moser_tardos(200, _sample, _events(clauses), rng)
    assert res.converged
    for cl in clauses:
        assert any(res.assignment[v] != s for v, s in cl)


def test_resamplings_within_the_bound_when_the_lll_holds():
    rng = np.random.default_rng(1)
    k = 8
    clauses = _ksat(400, 200, k, rng)
    events = _events(clauses)
    nbrs = lll.dependency_graph(events)
    d = max(len(s) for s in nbrs)
    p = 2.0**-k
    x = [1.0 / (d + 1)] * len(events)
    assert lll.symmetric_lll_holds(p, d)
    assert lll.asymmetric_lll_holds([p] * len(events), nbrs, x)
    bound = lll.mt_expected_bound(x)
    counts = [
        lll.moser_tardos(400, _sample, events, np.random.default_rng(s)).resamplings
        for s in range(30)
    ]
    assert np.mean(counts) <= bound


def test_dependency_graph_shares_variables():
    evs = [
        lll.Event((0, 1), lambda a: False),
        lll.Event((1, 2), lambda a: False),
        lll.Event((3,), lambda a: False),
    ]
    assert lll.dependency_graph(evs) == [{1}, {0}, set()]


def test_conditions_by_hand():
    # one event, no neighbours: holds iff p <= x
    assert lll.asymmetric_lll_holds([0.3], [set()], [0.3])
    assert not lll.asymmetric_lll_holds([0.31], [set()], [0.3])
    # two neighbouring events: p <= x (1 - x) = 0.25 at x = 1/2
    assert lll.asymmetric_lll_holds([0.25, 0.25], [{1}, {0}], [0.5, 0.5])
    assert not lll.asymmetric_lll_holds([0.26, 0.25], [{1}, {0}], [0.5, 0.5])
    assert lll.symmetric_lll_holds(1 / (math.e * 3), 2)
    assert not lll.symmetric_lll_holds(0.2, 2)
    assert lll.mt_expected_bound([0.5, 0.5]) == pytest.approx(2.0)
    assert lll.mt_expected_bound([1.0]) == math.inf


def test_gives_up_after_the_cap():
    # an event that always occurs can never be avoided
    evs = [lll.Event((0,), lambda a: True)]
    res = lll.moser_tardos(1, _sample, evs, np.random.default_rng(0), max_resamplings=5)
    assert not res.converged and res.resamplings == 5


def _plain_moser_tardos(num_vars, sample, events, rng, max_resamplings):
    """The textbook loop, every event tested after every resampling: the reference the lazy
    implementation must match step for step."""
    assign = [sample(rng, v) for v in range(num_vars)]
    bad = {e for e, ev in enumerate(events) if ev.occurs(assign)}
    count, per = 0, {}
    while bad:
        if count >= max_resamplings:
            return assign, False, count, per
        e = min(bad)
        for v in events[e].variables:
            assign[v] = sample(rng, v)
        count += 1
        per[e] = per.get(e, 0) + 1
        bad = {t for t, ev in enumerate(events) if ev.occurs(assign)}
    return assign, True, count, per


@pytest.mark.parametrize("seed", range(12))
def test_lazy_testing_resamples_exactly_as_the_plain_loop(seed):
    # dense instances (many never converge within the cap) and sparse ones; the same events,
    # the same resamplings and the same random numbers drawn
    rng = np.random.default_rng(100 + seed)
    num_vars = int(rng.integers(5, 40))
    k = int(rng.integers(1, 4))
    clauses = _ksat(num_vars, int(rng.integers(1, 4 * num_vars)), min(k, num_vars), rng)
    events = _events(clauses)
    cap = int(rng.integers(1, 300))
    mine, ref = np.random.default_rng(seed), np.random.default_rng(seed)
    res = lll.moser_tardos(num_vars, _sample, events, mine, max_resamplings=cap)
    assert (res.assignment, res.converged, res.resamplings, res.per_event) == (
        _plain_moser_tardos(num_vars, _sample, events, ref, cap)
    )
    assert mine.bit_generator.state == ref.bit_generator.state

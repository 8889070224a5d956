"""The restriction engine's shortcuts change nothing: the Depth Reduction Lemma with its layers
and tuple lists kept (the fast path) against the same lemma recomputing everything and the
plain :func:`~hardsoft.limits.dependency.analyse` (the plain path), on the random models the
atlas's DYCK restriction illustrations try; and the Stage-3 bad events read from precomputed
sets against the activation tables read directly."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from hardsoft.atlas import illustrate
from hardsoft.atlas.evidence import Budget, row_language
from hardsoft.atlas.table import column, row
from hardsoft.limits import depth_reduction as dr
from hardsoft.limits.dependency import analyse
from hardsoft.limits.restrict import initial_restriction

N = 16  # small: the plain path recomputes every layer at every step


def _log(log: dr.LayerLog) -> dict:
    d = log.to_dict()
    d.pop("seconds")
    return d


def _layers_equal(a, b) -> bool:
    if len(a.deps) != len(b.deps) or not torch.equal(a.values, b.values):
        return False
    pairs = itertools.chain(zip(a.deps, b.deps), zip(a.tables, b.tables))
    same = all((x is None) == (y is None) and (x is None or np.array_equal(x, y)) for x, y in pairs)
    return same and np.array_equal(a.offset, b.offset)


def _candidates(row_id: str, col_id: str, count: int):
    r, c = row(row_id), column(col_id)
    lang = row_language(r)
    for seed, shape, mask in itertools.islice(illustrate._candidates(c, Budget(quick=True)), count):
        model, _ = illustrate._random_hard(r, c, seed, shape, mask)
        yield model, initial_restriction(N, lang, lang.restriction_alphabet()), seed


CELLS = (("dyck1", "uhat-strict", 4), ("dyck1", "uhat-pe", 4), ("dyck2", "uhat-pe", 3))


def test_fast_path_equals_plain_path_on_the_dyck_illustration_models():
    seen = set()  # (Moser-Tardos converged, the answer varies): every combination is met
    for row_id, col_id, count in CELLS:
        for model, rho0, seed in _candidates(row_id, col_id, count):
            rho, logs, params, an = dr.reduce_and_analyse(model, rho0, dr.Params(seed=seed))
            plain = dr.reduce_depth(model, rho0, dr.Params(seed=seed), memo=False)
            rho_p, logs_p, params_p = plain
            ref = analyse(model, rho_p, max_rows=params_p.max_rows)
            assert rho == rho_p and params == params_p
            assert [_log(x) for x in logs] == [_log(x) for x in logs_p]
            assert np.array_equal(an.output_deps, ref.output_deps)
            assert np.array_equal(an.output_values, ref.output_values)
            assert np.array_equal(an.accept_table, ref.accept_table)
            assert len(an.layers) == len(ref.layers)
            assert all(_layers_equal(x, y) for x, y in zip(an.layers, ref.layers))
            ran = [x.mt_converged for x in logs if x.stage3_events]
            seen.update((ok, not an.output_constant) for ok in ran)
    assert seen == {(True, True), (True, False), (False, True), (False, False)}


def _direct_occurs(X, t, var_of, a) -> bool:
    """The bad event read from the activation tables one assignment at a time."""
    for j, mv in zip(t.kdeps, t.maxvals):
        row_ = 0
        for p in X.dep(j):
            s = a[var_of[int(p)]] if int(p) in var_of else None
            if s is None:
                break
            row_ = row_ * X.S + s
        else:
            if int(X.table(j)[row_]) in {int(x) for x in mv}:
                return False
    return True


def test_stage3_events_agree_with_the_tables_read_directly():
    rng = np.random.default_rng(0)
    checked = 0
    for model, rho0, seed in _candidates("dyck2", "uhat-pe", 4):
        params = dr.Params(seed=seed).resolved(len(model.spec.layers))
        params.k = 1
        b = dr._Builder(model, rho0, params)
        X = b.layer_input(0)
        tuples = [t for t in b.tuples(0, X, X.max_dep()) if not t.satisfied]
        free = [int(p) for p in b.rho.free_positions()]
        var_of = {p: v for v, p in enumerate(free[1:])}  # one free position left unassigned
        read: dict = {}  # shared by the events, as Stage 3 shares it
        for t in tuples:
            event = dr._tuple_event(X, t, var_of, read)
            for _ in range(20):
                q = rng.random()
                a = [int(rng.integers(b.S)) if rng.random() < q else None for _ in var_of]
                assert event.occurs(a) == _direct_occurs(X, t, var_of, a)
                checked += 1
    assert checked > 100

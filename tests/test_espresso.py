"""Espresso-style cover improvement (classes/espresso.py): every cover it returns lies
between the lower and upper bounds (exact), and it is never larger than the cover it got."""

from __future__ import annotations

import random

import pytest

from hardsoft.classes import espresso
from hardsoft.classes.boolean import Predicates
from hardsoft.logic.syntax import Sym


def _random_function(p: Predicates, atoms: list, rng: random.Random):
    """A random disjunction of random cubes over ``atoms``."""
    out = p.false
    for _ in range(rng.randint(1, 6)):
        cube = p.true
        for u in rng.sample(atoms, rng.randint(1, 4)):
            cube = cube & (u if rng.random() < 0.5 else ~u)
        out = out | cube
    return out


@pytest.mark.parametrize("seed", range(4))
def test_improved_covers_are_exact_and_no_larger(seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    p = Predicates()
    atoms = [p.atom(Sym(a)) for a in "abcdef"]
    ops = espresso.Cover(p.bdd, p._cube, p._cost, p._atom_size)
    for _ in range(15):
        f, dc = _random_function(p, atoms, rng), _random_function(p, atoms, rng)
        lower, upper = f & ~dc, f | dc
        improved = p._cover(lower, upper, p.true)
        monkeypatch.setattr(espresso, "improve", lambda cubes, lo, up, o: cubes)
        plain = p._cover(lower, upper, p.true)
        monkeypatch.undo()
        cover = ops.union(improved)
        assert (lower & ~cover) == p.false and (cover & ~upper) == p.false
        assert ops.total(improved) <= ops.total(plain)


def test_reduce_expand_leaves_a_poor_prime() -> None:
    """On ``a&b | !a&c | b&c`` with ``b&c`` the redundant consensus cube, the rounds drop it
    and keep a cover of the on-set."""
    p = Predicates()
    a, b, c = (p.atom(Sym(x)) for x in "abc")
    va, vb, vc = (str(u.var) for u in (a, b, c))
    f = (a & b) | (~a & c)
    cubes = [((va, True), (vb, True)), ((va, False), (vc, True)), ((vb, True), (vc, True))]
    ops = espresso.Cover(p.bdd, p._cube, p._cost, p._atom_size)
    out = espresso.improve(cubes, f, f, ops)
    assert ops.union(out) == f and len(out) == 2

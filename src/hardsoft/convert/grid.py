"""Certified gaps: the grid every residual coordinate provably lies on.

A coordinate is on the grid ``(1/D) Z`` with ``D = 2^t · Π_a a(i, n)^{e_a}`` over the atoms
``a ∈ {i, i−1, n−i+1, n−i, n}`` evaluated at the coordinate's own position ``i``. The grids
are propagated through the model exactly as it computes (docs/soften.md, "Certified gaps"):

* **inputs**: a weight must be *dyadic* (``w·2^t`` an integer for some t <= 40, exact in
  float64); features: ``1, i, n, i^2, (-1)^i, [i=1], [i=n], [i mod m = r], learned:L`` are
  integers, ``i/n`` and ``1/n`` have ``D = n``, ``(i/n)^2`` ``n^2``, ``1/i`` ``i``; products
  multiply. Sinusoidal features have no grid.
* **linear maps** (W_Q, W_K, W_V, W_O, the FFN, biases): ``t`` adds the weight's exponent,
  atoms take the maximum over the coordinates read; ReLU and sums keep a common grid.
* **scores** ``σ q_i·k_j``: the keys' grid must not depend on the key position (only ``n``
  atoms), else the row has no common grid. Distinct scores in a row then differ by at least
  ``σ / (2^t · Π atoms) >= σ 2^{−t} / n^{Σ e}`` (every atom is <= n): that is the certified gap.
* **head outputs**: a unique-hard head copies one value (the value grid must not depend on the
  key position); a *uniform* average head (no scores) divides a sum by the number of allowed
  keys — ``i, i−1, n−i+1, n−i`` or ``n`` for the masks future, strict-future, past,
  strict-past, none — which becomes an atom. A scored average head divides by an unknown tie
  count, so its output is off the grid unless the model declares that its tied keys always
  carry one value (hints below). Softmax heads are off the grid.

Hints the compilers declare (never guessed): programs declare tieless heads
(``meta["heads"][k]["kind"] == "tieless"``); the LTL compiler's ``lookup-*`` heads are tieless
(the score ``C² − (j − C)²`` has one maximum), its ``sign-*`` heads' tied keys are one
parity class, all carrying the same value ``[j even]``, and the coordinates it rounds
(``meta["rounded"]``) hold exact Booleans (its gated steps saturate, which a grid cannot see).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from hardsoft.convert.norms import bilinear_norm, blocks_of
from hardsoft.model.spec import Mask
from hardsoft.model.transformer import Transformer

ATOMS = ("i", "i-1", "n-i+1", "n-i", "n")
_N = ATOMS.index("n")
_MASK_ATOM = {
    Mask.FUTURE: "i",
    Mask.STRICT_FUTURE: "i-1",
    Mask.PAST: "n-i+1",
    Mask.STRICT_PAST: "n-i",
    Mask.NONE: "n",
}
_FEATURE_ATOMS = {"i/n": {"n": 1}, "1/n": {"n": 1}, "(i/n)^2": {"n": 2}, "1/i": {"i": 1}}
_INTEGER_FEATURES = {"1", "i", "n", "i^2", "(-1)^i", "[i=1]", "[i=n]"}
MAX_EXPONENT = 40


@dataclass
class Grid:
    """Per coordinate: ``t`` (log2 of the dyadic denominator), ``atoms [d, 5]`` exponents and
    ``ok`` (False: no grid known)."""

    t: np.ndarray
    atoms: np.ndarray
    ok: np.ndarray

    @staticmethod
    def integers(d: int) -> Grid:
        return Grid(np.zeros(d, np.int64), np.zeros((d, len(ATOMS)), np.int64), np.ones(d, bool))

    def combine(self, other: Grid) -> Grid:
        """The grid of a sum of a coordinate on each grid."""
        return Grid(
            np.maximum(self.t, other.t), np.maximum(self.atoms, other.atoms), self.ok & other.ok
        )

    def key_free(self) -> np.ndarray:
        """Coordinates whose grid does not depend on their own position (only ``n`` atoms)."""
        pos = np.delete(self.atoms, _N, axis=1)
        return self.ok & (pos.sum(axis=1) == 0)


def dyadic_exponents(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest t <= 40 with ``w·2^t`` an integer (exactly), and whether one exists."""
    exp = np.zeros(w.shape, np.int64)
    done = w == 0
    for t in range(MAX_EXPONENT + 1):
        scaled = w * (2.0**t)
        hit = ~done & (scaled == np.round(scaled)) & (np.abs(scaled) < 2.0**53)
        exp[hit] = t
        done |= hit
    return exp, done


def linear(g: Grid, w: torch.Tensor, bias: torch.Tensor | None = None) -> Grid:
    """The grid of ``x W (+ b)`` for x on ``g``."""
    W = w.detach().cpu().double().numpy()
    exp, dyadic = dyadic_exponents(W)
    nz = W != 0
    ok = ~(nz & ~(g.ok[:, None] & dyadic)).any(axis=0)
    t = np.where(nz, g.t[:, None] + exp, 0).max(axis=0, initial=0)
    atoms = np.where(nz[..., None], g.atoms[:, None, :], 0).max(axis=0, initial=0)
    if bias is not None:
        b = bias.detach().cpu().double().numpy()
        b_exp, b_ok = dyadic_exponents(b)
        ok &= b_ok
        t = np.maximum(t, b_exp)
    return Grid(t.astype(np.int64), atoms.astype(np.int64), ok)


def feature_grid(name: str) -> tuple[bool, np.ndarray]:
    """``(ok, atoms)`` of one raw position feature (see the module docstring)."""
    from hardsoft.model.features import parse_feature

    atoms = np.zeros(len(ATOMS), np.int64)
    for part in "".join(parse_feature(name).name.split()).split("*"):
        if part in _FEATURE_ATOMS:
            for a, e in _FEATURE_ATOMS[part].items():
                atoms[ATOMS.index(a)] += e
        elif not (part in _INTEGER_FEATURES or part.startswith(("[imod", "learned:"))):
            return False, atoms
    return True, atoms


def embedding_grid(model: Transformer) -> Grid:
    """The grid of ``x^(0) = W_E[w_i] + PE(i, n) W_pos``."""
    from hardsoft.model.features import parse_feature

    d = model.spec.d_model
    cols_ok, cols_atoms = [], []
    for name in model.spec.position_features:
        ok, atoms = feature_grid(name)
        for _ in range(parse_feature(name).dim):
            cols_ok.append(ok)
            cols_atoms.append(atoms)
    P = len(cols_ok)
    feats = Grid(
        np.zeros(P, np.int64),
        np.array(cols_atoms, np.int64).reshape(P, len(ATOMS)),
        np.array(cols_ok, bool).reshape(P),
    )
    tok = linear(Grid.integers(len(model.spec.alphabet)), model.W_E)  # one-hot token rows
    return tok.combine(linear(feats, model.W_pos)) if P else tok.combine(Grid.integers(d))


@dataclass
class GridGap:
    """A head's certified gap ``coef / n**power``, or why there is none."""

    coef: float | None
    power: int
    reason: str = ""


def _score_gap(head: Any, g: Grid) -> GridGap:
    """The certified gap of one head's scores on residual grid ``g``."""
    q, k = linear(g, head.W_Q), linear(g, head.W_K)
    wq, wk = head.W_Q.detach(), head.W_K.detach()
    live = (wq != 0).any(0).cpu().numpy() & (wk != 0).any(0).cpu().numpy()
    if not live.any():
        return GridGap(None, 0, "uniform")
    if not (q.ok[live].all() and k.ok[live].all()):
        return GridGap(None, 0, "its query or key reads a coordinate with no known grid")
    if not k.key_free()[live].all():
        return GridGap(None, 0, "its keys' grid depends on the key position")
    t = int((q.t + k.t)[live].max())
    atoms = (q.atoms + k.atoms)[live].max(axis=0)
    sigma = 1.0 / float(np.sqrt(head.spec.d_head)) if head.spec.scale else 1.0
    return GridGap(sigma * 2.0**-t, int(atoms.sum()))


def _head_output(head: Any, g: Grid, copies_one: bool) -> Grid:
    """The grid of the head's contribution to the residual (after W_O)."""
    spec = head.spec
    v = linear(g, head.W_V)
    d = head.W_O.shape[1]
    off = Grid(np.zeros(d, np.int64), np.zeros((d, len(ATOMS)), np.int64), np.zeros(d, bool))
    writes = (head.W_O.detach() != 0).any(0).cpu().numpy()
    if spec.weighting == "softmax":
        return _mark(off, writes)
    reads = (head.W_O.detach() != 0).any(1).cpu().numpy()
    v.ok = v.ok & (v.key_free() | ~reads)
    if spec.weighting.is_unique_hard or copies_one:
        return linear(v, head.W_O)
    if bilinear_zero(head):  # uniform average: divide by the number of allowed keys
        v.atoms[:, ATOMS.index(_MASK_ATOM[spec.mask])] += 1
        return linear(v, head.W_O)
    return _mark(off, writes)


def _mark(off: Grid, writes: np.ndarray) -> Grid:
    """Off the grid where the head writes, the zero grid elsewhere."""
    off.ok = ~writes
    return off


def bilinear_zero(head: Any) -> bool:

    return head.spec.d_head == 0 or bilinear_norm(head.W_Q, head.W_K) == 0.0


def grid_gaps(
    model: Transformer, copies_one: set[tuple[int, int]], integral: set[int] | None = None
) -> dict[tuple[int, int], GridGap]:
    """Every hard head's certified gap from the grid propagation. ``copies_one``: average
    heads (layer, head) declared to output a single key's value (tieless, or tied keys that
    always carry one value); ``integral``: residual coordinates declared to hold exact 0/1
    values once written (a compiler's rounded Booleans)."""
    out: dict[tuple[int, int], GridGap] = {}
    exact = np.array(sorted(integral or ()), dtype=np.int64)
    with torch.no_grad():
        g = embedding_grid(model)
        for ell, block in enumerate(blocks_of(model)):
            att = g
            for h, head in enumerate(block.heads):
                if head.spec.weighting.is_hard:
                    out[(ell, h)] = _score_gap(head, g)
                att = att.combine(_head_output(head, g, (ell, h) in copies_one))
            g = att
            if block.spec.d_ff:
                hidden = linear(g, block.W_in, block.b_in)
                g = g.combine(linear(hidden, block.W_out, block.b_out))
            g.t[exact], g.atoms[exact], g.ok[exact] = 0, 0, True
    return out

"""Hand-built hard-attention models for the contrast of Hahn (2020) §5 ("languages that can be
modeled"), plus a PARITY model that is only correct for short inputs.

* :func:`ones_star_model` recognises ``1*`` exactly at every length: one rightmost head scores
  ``[x_j = 0]`` and so finds a 0 if there is one; accept iff the attended symbol is not 0.
* :func:`anbn_model` recognises ``a^m b^m`` exactly at every length: one head finds the
  rightmost ``a`` (score ``2[a] + j/n``), one the leftmost ``b`` (score ``2[b] - j/n``); with
  the integer features ``i`` and ``n`` the feed-forward computes ``ReLU(2 p_a - n)`` and
  ``ReLU(n + 1 - 2 p_b)`` exactly, and ``(-1)^n`` rejects odd lengths.
* :func:`parity_lookup_model` is correct on PARITY for every n <= ``max_n``: head p attends to
  position ``min(p, n)`` (score ``-(j - p)^2``), reads ``b_j + 2 j``, and the feed-forward keeps
  ``ReLU(v - 2p)`` (= ``b_p`` if p <= n, else 0) and sums them; a second layer computes the
  parity of the sum with a ReLU sawtooth. It ignores positions beyond ``max_n``.

All weights are small integers or exact binary fractions, so the float64 arithmetic is exact and
the designed ties are exact ties.
"""

from __future__ import annotations

import torch

from hardsoft.model.spec import HeadSpec, LayerSpec, Mask, ModelSpec, Weighting
from hardsoft.model.transformer import Transformer


def _zero_model(spec: ModelSpec) -> Transformer:
    model = Transformer(spec, dtype=torch.float64)
    return model


def ones_star_model() -> Transformer:
    """1* over ``01``. Coordinates: 0 = [x=0], 1 = [x=1], 2 = constant 1, 3 = head output."""
    head = HeadSpec(weighting=Weighting.RIGHTMOST, mask=Mask.NONE, d_head=1, d_value=1)
    spec = ModelSpec(
        alphabet=("0", "1"),
        d_model=4,
        layers=(LayerSpec(heads=(head,), d_ff=0),),
        position_features=("1",),
        name="ones-star-hard",
    )
    m = _zero_model(spec)
    with torch.no_grad():
        m.W_E[0, 0] = 1.0
        m.W_E[1, 1] = 1.0
        m.W_pos[0, 2] = 1.0
        h = m.blocks[0].heads[0]
        h.W_Q[2, 0] = 1.0  # constant query
        h.W_K[0, 0] = 1.0  # score = [x_j = 0]
        h.W_V[0, 0] = 1.0  # value = [x_j = 0]
        h.W_O[0, 3] = 1.0
        m.W_U[2, 0] = 1.0  # y = 1 - [attended symbol is 0]
        m.W_U[3, 0] = -1.0
    m.meta = {"origin": "contrast_models.ones_star_model", "language": "ones-star"}
    return m


def anbn_model() -> Transformer:
    """a^m b^m over ``ab``. Features: 1, i/n, i, n, (-1)^i.

    Coordinates: 0 [a], 1 [b], 2 one, 3 i/n, 4 i, 5 n, 6 (-1)^i, 7 p_a, 8 p_b, 9 bad.
    """
    head = HeadSpec(weighting=Weighting.RIGHTMOST, mask=Mask.NONE, d_head=1, d_value=1)
    spec = ModelSpec(
        alphabet=("a", "b"),
        d_model=10,
        layers=(LayerSpec(heads=(head, head), d_ff=2),),
        position_features=("1", "i/n", "i", "n", "(-1)^i"),
        name="anbn-hard",
    )
    m = _zero_model(spec)
    with torch.no_grad():
        m.W_E[0, 0] = 1.0
        m.W_E[1, 1] = 1.0
        for f, coord in enumerate((2, 3, 4, 5, 6)):
            m.W_pos[f, coord] = 1.0
        ha, hb = m.blocks[0].heads
        ha.W_Q[2, 0] = 1.0
        ha.W_K[0, 0] = 2.0  # 2[a] + j/n: the rightmost a, if any
        ha.W_K[3, 0] = 1.0
        ha.W_V[4, 0] = 1.0  # its position j
        ha.W_O[0, 7] = 1.0
        hb.W_Q[2, 0] = 1.0
        hb.W_K[1, 0] = 2.0  # 2[b] - j/n: the leftmost b, if any
        hb.W_K[3, 0] = -1.0
        hb.W_V[4, 0] = 1.0
        hb.W_O[0, 8] = 1.0
        blk = m.blocks[0]
        blk.W_in[7, 0] = 2.0  # ReLU(2 p_a - n)
        blk.W_in[5, 0] = -1.0
        blk.W_in[5, 1] = 1.0  # ReLU(n + 1 - 2 p_b)
        blk.W_in[2, 1] = 1.0
        blk.W_in[8, 1] = -2.0
        blk.W_out[0, 9] = 1.0
        blk.W_out[1, 9] = 1.0
        m.W_U[2, 0] = 0.5  # y = 1/2 + (-1)^n / 2 - bad
        m.W_U[6, 0] = 0.5
        m.W_U[9, 0] = -1.0
    m.meta = {"origin": "contrast_models.anbn_model", "language": "anbn"}
    return m


def parity_lookup_model(max_n: int = 8, odd: bool = False) -> Transformer:
    """PARITY (even, or odd with ``odd=True``) over ``01``, correct for n <= ``max_n`` only.

    Coordinates: 0 [x=1], 1 one, 2 i, 3 i^2, 4..4+max_n-1 head values, s = 4+max_n (sum of
    bits), r = s+1 (parity of the sum).
    """
    P = max_n
    s_c, r_c = 4 + P, 5 + P
    head = HeadSpec(weighting=Weighting.RIGHTMOST, mask=Mask.NONE, d_head=3, d_value=1)
    spec = ModelSpec(
        alphabet=("0", "1"),
        d_model=6 + P,
        layers=(LayerSpec(heads=(head,) * P, d_ff=P), LayerSpec(heads=(), d_ff=P)),
        position_features=("1", "i", "i^2"),
        name=f"parity-lookup-{P}",
    )
    m = _zero_model(spec)
    with torch.no_grad():
        m.W_E[1, 0] = 1.0
        m.W_pos[0, 1] = 1.0
        m.W_pos[1, 2] = 1.0
        m.W_pos[2, 3] = 1.0
        b0 = m.blocks[0]
        for p in range(1, P + 1):
            h = b0.heads[p - 1]
            # q = (-1, 2p, -p^2) on (j^2, j, 1): score -(j - p)^2, maximal at j = min(p, n)
            h.W_Q[1, 0] = -1.0
            h.W_Q[1, 1] = 2.0 * p
            h.W_Q[1, 2] = -float(p * p)
            h.W_K[3, 0] = 1.0
            h.W_K[2, 1] = 1.0
            h.W_K[1, 2] = 1.0
            h.W_V[0, 0] = 1.0  # b_j + 2 j
            h.W_V[2, 0] = 2.0
            h.W_O[0, 3 + p] = 1.0
            b0.W_in[3 + p, p - 1] = 1.0  # ReLU(v - 2p) = b_p if p <= n else 0
            b0.b_in[p - 1] = -2.0 * p
            b0.W_out[p - 1, s_c] = 1.0
        b1 = m.blocks[1]
        # parity(s) = s + sum_k 2 (-1)^k ReLU(s - k) on the integers 0..P
        b1.W_out[:, r_c] = 0.0
        for kk in range(1, P + 1):
            b1.W_in[s_c, kk - 1] = 1.0
            b1.b_in[kk - 1] = -float(kk)
            b1.W_out[kk - 1, r_c] = 2.0 * (-1) ** kk
        b1.b_out[r_c] = 0.0
        # the residual already carries s in s_c; r_c = s + ... needs s copied: fold into W_U
        if odd:
            m.W_U[s_c, 0] = 1.0  # y = parity
            m.W_U[r_c, 0] = 1.0
        else:
            m.W_U[1, 0] = 1.0  # y = 1 - parity
            m.W_U[s_c, 0] = -1.0
            m.W_U[r_c, 0] = -1.0
    m.meta = {"origin": "contrast_models.parity_lookup_model", "max_n": P, "odd": odd}
    return m

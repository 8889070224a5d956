"""Models the atlas builds by hand (over named coordinates, :mod:`hardsoft.craft`) where no
compiler reaches the cell.

:func:`anbn_unique_hard`: aⁿbⁿ with unique-hard attention and position features, after the
sketch of Hahn (2020) §5 (Discussion after Corollary 2: "attend to any b at position < n/2 or
any a at position ≥ n/2"), here for every prefix so that it is checked at every position as
the compiled rows are. The prefix w_1..w_i is in aⁿbⁿ iff it is in a*b*, i is even, and
w_{i/2} = a, w_{i/2+1} = b. Position i finds position i/2 with one rightmost-hard head whose
score (k/n)·(i/n) − (k/n)² = (k/n)(i/n − k/n) peaks exactly at k = i/2 (the next integer
scores 1/n² less), and i/2 + 1 with the query i/n + 2/n. Every position feature is bounded
(i/n, 1/n, (i/n)², (−1)^i); every head is unique-hard (rightmost).
"""

from __future__ import annotations

import torch

from hardsoft.craft import AttentionHead, CraftLayer, Neuron, assemble, standard_residual
from hardsoft.model.transformer import Transformer

ANBN_FEATURES = ("1", "i/n", "1/n", "(i/n)^2", "(-1)^i")


def _peak_head(offset: float, output: dict[str, dict[str, float]]) -> AttentionHead:
    """A rightmost-hard head (j ≤ i) on position k = i/2 + offset: score
    (k/n)·(i/n + 2·offset/n) − (k/n)²."""
    query = {"pos:i/n": 1.0}
    if offset:
        query["pos:1/n"] = 2.0 * offset
    return AttentionHead(
        weighting="rightmost",
        mask="future",
        query=[query, {"pos:1": 1.0}],
        key=[{"pos:i/n": 1.0}, {"pos:(i/n)^2": -1.0}],
        output=output,
    )


def anbn_unique_hard(dtype: torch.dtype = torch.float64) -> Transformer:
    """aⁿbⁿ membership of every prefix by a two-layer unique-hard transformer with bounded
    position features (see the module docstring)."""
    res = standard_residual("ab", ANBN_FEATURES)
    for name in ("seen_b", "mid_a", "next_b", "bad", "any_bad", "accept"):
        res.add(name)
    layer1 = CraftLayer(
        heads=[
            AttentionHead(  # some b strictly before i: the rightmost b, if any
                weighting="rightmost",
                mask="strict-future",
                query=[{"pos:1": 1.0}],
                key=[{"tok:b": 1.0}],
                output={"seen_b": {"tok:b": 1.0}},
            ),
            _peak_head(0.0, {"mid_a": {"tok:a": 1.0}}),  # w_{i/2} = a
            _peak_head(1.0, {"next_b": {"tok:b": 1.0}}),  # w_{i/2+1} = b
        ],
        neurons=[Neuron({"tok:a": 1.0, "seen_b": 1.0}, -1.0, {"bad": 1.0})],  # an a after a b
    )
    layer2 = CraftLayer(
        heads=[
            AttentionHead(  # some bad position j <= i
                weighting="rightmost",
                mask="future",
                query=[{"pos:1": 1.0}],
                key=[{"bad": 1.0}],
                output={"any_bad": {"bad": 1.0}},
            )
        ],
        # even(i) = ((-1)^i + 1)/2; accept = ReLU(even + mid_a + next_b - 2 - any_bad)
        neurons=[
            Neuron(
                {"pos:(-1)^i": 0.5, "mid_a": 1.0, "next_b": 1.0, "any_bad": -1.0},
                -1.5,
                {"accept": 1.0},
            )
        ],
    )
    return assemble(
        alphabet="ab",
        position_features=ANBN_FEATURES,
        residual=res,
        layers=[layer1, layer2],
        outputs=["accept"],
        name="anbn-unique-hard",
        meta={
            "construction": "aⁿbⁿ by unique-hard attention with bounded position features "
            "(hardsoft.atlas.crafted.anbn_unique_hard; after Hahn (2020) §5, Discussion)"
        },
        dtype=dtype,
    )

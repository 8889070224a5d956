"""One attention head read on the classes of its layer: scores per (query class, key class)
and what the head writes per key class. Shared by the propagation that builds the tables
(:mod:`hardsoft.classes.propagation`) and the reachability that reads them
(:mod:`hardsoft.classes.reach`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardsoft.model.spec import Mask, Weighting


@dataclass
class HeadTable:
    """One head read on the classes of its layer (see the module docstring)."""

    layer: int
    head: int
    weighting: Weighting
    mask: Mask
    scores: np.ndarray
    outputs: np.ndarray

    @property
    def name(self) -> str:
        return f"blocks.{self.layer}.attn.{self.head}"

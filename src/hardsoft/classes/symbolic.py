"""The shared pieces of symbolic class propagation (:mod:`.counting`): the classes of a
layer, a block's context, a head read on symbolic classes, and the refusal."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hardsoft.classes.algebra import SymVec
from hardsoft.classes.boolean import Function, Predicates
from hardsoft.classes.conditions import Vars, Where
from hardsoft.classes.propagation import HeadTable, LayerClasses
from hardsoft.errors import HardsoftError
from hardsoft.logic.syntax import First, Last
from hardsoft.model.spec import Mask
from hardsoft.model.transformer import Block, Head


class Unsupported(HardsoftError):
    """The model is outside what counting decompilation reads (one line, naming the head)."""


@dataclass
class SymClasses(LayerClasses):
    """The symbolic classes entering a block (or the final ones): ``vectors`` are
    :class:`~.algebra.SymVec` (``union`` and ``domain`` as in :class:`LayerClasses`)."""

    vectors: list[SymVec]  # type: ignore[assignment]


@dataclass
class Ctx:
    """One block's shared state while its heads are read."""

    p: Predicates
    vars: Vars
    classes: SymClasses
    name: str
    max_classes: int

    def where(self, c: int) -> Where:
        return Where.of(self.p, self.classes.predicates[c])


Outcome = tuple[SymVec, Function]


def add_outcome(out: dict[bytes, Outcome], vec: SymVec, pred: Function) -> None:
    key = vec.key()
    old = out.get(key)
    out[key] = (vec, pred if old is None else old[1] | pred)


@dataclass
class HeadSym:
    """A head read on the symbolic classes of its layer."""

    head: Head
    table: HeadTable
    queries: list[SymVec]
    keys: list[SymVec]
    values: list[SymVec]

    def scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return self.head.scores(q, k, 1)  # hard and average heads: no n in the scale


def read_head(block: Block, head: Head, classes: SymClasses, ell: int, h: int) -> HeadSym:
    d_head, width = head.spec.d_head, classes.vectors[0].width if classes.vectors else 0
    queries = [v.apply(head.query, d_head) for v in classes.vectors]
    keys = [v.apply(head.key, d_head) for v in classes.vectors]
    values = [v.apply(lambda t: head.result(head.value(t)), width) for v in classes.vectors]
    table = HeadTable(ell, h, head.spec.weighting, head.spec.mask, np.zeros((0, 0)), np.zeros(0))
    return HeadSym(head, table, queries, keys, values)


def empty_window(ctx: Ctx, mask: Mask) -> Function | None:
    if mask is Mask.STRICT_FUTURE:
        return ctx.p.atom(First())
    if mask is Mask.STRICT_PAST:
        return ctx.p.atom(Last())
    return None

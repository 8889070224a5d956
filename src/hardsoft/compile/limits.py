"""Size limits, checked before anything is built: a formula whose model would not fit gets a
one-line error at once instead of minutes of work (or an exhausted memory).

Three things can blow up: the number of distinct subformulas (residual width grows with it),
the residues of a table lookup (``MOD(m, r)`` of a count reads ``m`` residue flags), and the
residue combinations of ``MOD`` of several counts (``m^K`` neurons). The last check, on the
parameter count, runs on the craft description, before any weight is allocated.
"""

from __future__ import annotations

import math

from hardsoft.compile.ir import BMod, BNode, Count
from hardsoft.craft import CraftLayer
from hardsoft.errors import HardsoftError

MAX_IR_NODES = 20_000
"""Distinct subformulas (IR nodes) of one compilation."""

MAX_RESIDUES = 2_048
"""Residue flags read by all table lookups together (Σ over counts and moduli of m)."""

MAX_MOD_NEURONS = 20_000
"""Neurons of one ``MOD`` of counts (m^K residue combinations for K counts and ``i``)."""

MAX_PARAMETERS = 50_000_000
"""Parameters of the assembled model (400 MB in float64)."""


def check_ir(nodes: list[BNode]) -> None:
    """Refuse formulas whose IR is too large, before any gadget is built."""
    if len(nodes) > MAX_IR_NODES:
        raise HardsoftError(
            f"the formula has {len(nodes)} distinct subformulas; the compiler takes at most "
            f"{MAX_IR_NODES}"
        )
    residues: dict[Count, set[int]] = {}
    for node in nodes:
        if not isinstance(node, BMod):
            continue
        m = node.modulus
        if node.term.counts and m > MAX_RESIDUES:
            raise HardsoftError(
                f"MOD({m}, {node.residue}) of a count reads {m} residues by table lookup "
                f"(at most {MAX_RESIDUES} for all lookups together); use a smaller modulus"
            )
        k = len(node.term.counts) + (1 if node.term.pos else 0)
        if k > 1 and k * math.log(m) > math.log(MAX_MOD_NEURONS):
            raise HardsoftError(
                f"MOD({m}, {node.residue}) of a term with {len(node.term.counts)} count(s)"
                f"{' and i' if node.term.pos else ''} needs {m}^{k} residue combinations "
                f"(at most {MAX_MOD_NEURONS} neurons); use a smaller modulus or split the term"
            )
        for c, _ in node.term.counts:
            residues.setdefault(c, set()).add(m)
    total = sum(sum(ms) for ms in residues.values())
    if total > MAX_RESIDUES:
        raise HardsoftError(
            f"MOD of counts reads {total} residues by table lookup (at most {MAX_RESIDUES}: "
            "the sum of the moduli over the counts); use smaller moduli"
        )


def parameter_count(
    alphabet_size: int, position_dim: int, d_model: int, layers: list[CraftLayer], d_out: int
) -> int:
    """The parameter count :func:`hardsoft.craft.assemble` will allocate (see the weight
    shapes of :class:`hardsoft.model.Transformer`)."""
    total = (alphabet_size + position_dim) * d_model + d_model * d_out + d_out
    for layer in layers:
        for head in layer.heads:
            total += 2 * d_model * len(head.query) + 2 * d_model * len(head.output)
        d_ff = len(layer.neurons)
        total += 2 * d_model * d_ff + d_ff + d_model
    return total


def check_parameters(count: int) -> None:
    """Refuse a model with more than :data:`MAX_PARAMETERS` parameters (before allocation)."""
    if count > MAX_PARAMETERS:
        raise HardsoftError(
            f"the compiled model would have {count} parameters (at most {MAX_PARAMETERS})"
        )

"""Softmax → hard attention with the same weights: the hard counterpart of a trained model.

:func:`harden` replaces every softmax head's weighting by leftmost-, rightmost- or
average-hardmax (its temperature dropped: the hard maximum does not depend on it) and keeps
every weight, layer norm and readout. The result is what Hahn (2020) §5's restriction engine
(``hardsoft restrict``) analyses: a verified witness for the hardened model shows two inputs its
hard counterpart cannot tell apart; running the original softmax model on the same pair shows
whether the trained network itself separates them.
"""

from __future__ import annotations

import copy
import dataclasses

from hardsoft.errors import HardsoftError
from hardsoft.model.spec import LayerSpec, ModelSpec, Weighting
from hardsoft.model.transformer import Transformer


def harden(model: Transformer, weighting: Weighting | str = Weighting.LEFTMOST) -> Transformer:
    """The same model with every softmax head made ``weighting`` (leftmost, rightmost or
    average); a model with no softmax head, or a non-hard weighting, is a one-line error."""
    target = Weighting.parse(weighting, "weighting")
    if not target.is_hard:
        raise HardsoftError(f"--weighting must be leftmost, rightmost or average, got {target}")
    spec = model.spec
    if not any(h.weighting == Weighting.SOFTMAX for layer in spec.layers for h in layer.heads):
        raise HardsoftError("the model has no softmax heads: nothing to harden")
    layers = tuple(
        LayerSpec(
            heads=tuple(
                dataclasses.replace(h, weighting=target, tau=None)
                if h.weighting == Weighting.SOFTMAX
                else h
                for h in layer.heads
            ),
            d_ff=layer.d_ff,
        )
        for layer in spec.layers
    )
    name = f"hardened[{target}]({spec.name})" if spec.name else f"hardened[{target}]"
    new_spec = dataclasses.replace(spec, layers=layers, name=name, extra=dict(spec.extra))
    ModelSpec.validate(new_spec)
    hard = Transformer(new_spec, dtype=model.dtype).to(model.device)
    hard.load_state_dict(model.state_dict())
    hard.meta = copy.deepcopy(model.meta)
    hard.meta["hardened"] = {
        "weighting": str(target),
        "from": spec.name,
        "temperatures_dropped": sorted(
            {str(h.tau) for layer in spec.layers for h in layer.heads if h.tau is not None}
        ),
    }
    return hard

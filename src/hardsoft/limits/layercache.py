"""The activation layers the Depth Reduction Lemma's builder has computed under recent
restrictions (:mod:`hardsoft.limits.depth_reduction`), so that none is computed twice.

A layer is a function of the restriction alone (the model and the enumeration cap are the
builder's, fixed), so an entry found here is exactly the layer the analysis would compute
again: the auto-k attempts of one layer all start from the same restriction, the next layer
of a finished attempt is the following layer's input, and the final analysis reads the layers
of the final restriction. Entries are kept least recently used first, within a byte budget
(the newest entry is always kept, as the builder's single entry was before); a budget of 0
keeps nothing (every layer recomputed: the plain path).
"""

from __future__ import annotations

from collections import OrderedDict

from hardsoft.limits.activation import ActivationLayer

CACHE_BYTES = 64 << 20

Key = tuple[tuple[str | None, ...], int, bool]
"""(the restriction's symbols, the layer index, whether every position was computed)."""


def layer_bytes(X: ActivationLayer) -> int:
    """What a layer holds: its values, tables and dependency sets."""
    arrays = [a for a in (*X.tables, *X.deps) if a is not None]
    return X.values.element_size() * X.values.numel() + sum(int(a.nbytes) for a in arrays)


class LayerCache:
    """Layers by :data:`Key`, least recently used first, within ``budget`` bytes."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        self.budget = budget
        self._layers: OrderedDict[Key, tuple[ActivationLayer, int]] = OrderedDict()
        self._bytes = 0

    def get(self, key: Key) -> ActivationLayer | None:
        entry = self._layers.get(key)
        if entry is None:
            return None
        self._layers.move_to_end(key)
        return entry[0]

    def put(self, key: Key, X: ActivationLayer) -> None:
        if self.budget <= 0:
            return
        if key in self._layers:
            self._bytes -= self._layers.pop(key)[1]
        size = layer_bytes(X)
        self._layers[key] = (X, size)
        self._bytes += size
        while self._bytes > self.budget and len(self._layers) > 1:
            _, (_, dropped) = self._layers.popitem(last=False)
            self._bytes -= dropped

"""hardsoft in the interpretability ecosystem: TransformerLens export and import, and the
files ``hardsoft export`` writes. nnsight needs no adapter: see docs/interop.md."""

from hardsoft.interop.files import load_transformer_lens, save_transformer_lens
from hardsoft.interop.transformer_lens import (
    TLExport,
    build_hooked,
    from_transformer_lens,
    to_transformer_lens,
    transformer_lens_weights,
)

__all__ = [
    "TLExport",
    "build_hooked",
    "from_transformer_lens",
    "load_transformer_lens",
    "save_transformer_lens",
    "to_transformer_lens",
    "transformer_lens_weights",
]

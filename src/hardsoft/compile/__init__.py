"""The compiler from temporal logic with counting (LTL[C,+]) to hard- and soft-attention
transformers (Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §4): :func:`compile_formula` and
its certificate. See docs/compiler.md.

>>> from hardsoft.compile import compile_formula
>>> model = compile_formula("MOD(2, 1)(#<['1'])", "01", target="soft-temperature")
>>> model.meta["certificate"]["tau_order"]
'Theta(1/n^3) (table lookup of counts with bounded position features)'
"""

from hardsoft.compile.compiler import compile_formula, named_outputs
from hardsoft.compile.targets import ALL_TARGETS, MASK_MODES, TARGETS, MaskMode, Target

__all__ = [
    "ALL_TARGETS",
    "MASK_MODES",
    "TARGETS",
    "MaskMode",
    "Target",
    "compile_formula",
    "named_outputs",
]

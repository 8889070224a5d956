"""hardsoft: what transformers with hard and soft attention can and cannot compute.

Subpackages: ``model`` (the exact transformer), ``languages`` (oracles, samplers, Hahn's
processes), ``logic`` (temporal logic with counting), ``compile`` (formulas to transformers),
``programs`` (average-hard programs and their softmax simulation), ``limits`` (restrictions,
sensitivity), ``learn`` (training), ``convert`` (soften any hard model, harden softmax heads: also
``hardsoft.soften`` and ``hardsoft.harden``), ``decompile`` (transformers back to formulas:
``hardsoft.decompile``), ``experiments`` and ``report`` (the reproduce
pipeline).
"""

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "soften": "hardsoft.convert",
    "harden": "hardsoft.convert",
    "decompile": "hardsoft.decompile",
}


def __getattr__(name: str) -> Any:
    """``hardsoft.soften`` and ``hardsoft.harden`` (docs/soften.md) and ``hardsoft.decompile``
    (docs/decompile.md), imported on first use so that ``import hardsoft`` stays light."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hardsoft' has no attribute {name!r}")

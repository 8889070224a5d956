"""Decompile: a unique-hard transformer back to formulas of hardsoft's logic, exact at every
length (docs/decompile.md). :func:`decompile` is the entry point; :func:`propagate` is the
exact class propagation it rests on (a stable API, see :mod:`hardsoft.classes.propagation`)."""

import sys
import types
from typing import Any

from hardsoft.classes.propagation import (
    ClassTable,
    HeadTable,
    LayerClasses,
    candidates,
    propagate,
    unsupported,
)
from hardsoft.decompile.decompiler import Decompiled, Output, decompile

__all__ = [
    "ClassTable",
    "Decompiled",
    "HeadTable",
    "LayerClasses",
    "Output",
    "candidates",
    "decompile",
    "propagate",
    "unsupported",
]


class _CallableModule(types.ModuleType):
    """``hardsoft.decompile`` names both this package and the function: importing the package
    binds the name on ``hardsoft`` to the module, so the module calls the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Decompiled:
        return decompile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

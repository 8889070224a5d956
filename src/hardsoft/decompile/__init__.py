"""Decompile: a unique-hard transformer back to formulas of hardsoft's logic, exact at every
length (docs/decompile.md). :func:`decompile` is the entry point; :func:`propagate` is the
exact class propagation it rests on (a stable API, see :mod:`hardsoft.decompile.classes`)."""

from hardsoft.decompile.classes import ClassTable, HeadTable, LayerClasses, propagate, unsupported
from hardsoft.decompile.decompiler import Decompiled, Output, decompile

__all__ = [
    "ClassTable",
    "Decompiled",
    "HeadTable",
    "LayerClasses",
    "Output",
    "decompile",
    "propagate",
    "unsupported",
]

"""Exact class propagation through a unique-hard transformer: the finitely many residual vectors
("classes") positions can carry, layer by layer, each with the formula that says where it is
carried, and each head's exact score table over them (:mod:`hardsoft.classes.propagation`).

Two engines read it: ``decompile`` (formulas from the classes) and ``convert`` (the attention
gap of ``soften``, certified for every length). It sits below both, reading only ``model`` and
``logic``.
"""

from hardsoft.classes.propagation import (
    DEFAULT_MAX_CLASSES,
    ClassTable,
    HeadTable,
    LayerClasses,
    candidates,
    propagate,
    unsupported,
)

__all__ = [
    "DEFAULT_MAX_CLASSES",
    "ClassTable",
    "HeadTable",
    "LayerClasses",
    "candidates",
    "propagate",
    "unsupported",
]

"""The expressivity atlas: which transformer class computes which language, each cell backed by
evidence run here (a compiled model checked exactly, a restriction witness, a sensitivity slope,
a decision procedure, or training runs). See docs/atlas.md.

The package sits above :mod:`hardsoft.experiments` (beside :mod:`hardsoft.report`) and uses the
engines below it: the compiler and ``check``, the programs, the restriction engine and Lemma 5's
sensitivity, the learning code.
"""

"""Hahn's limits of attention (Hahn (2020) §5–§6, supplement S1).

Hard attention (this package's restriction part): input restrictions as objects
(:mod:`~hardsoft.limits.restriction`), the exact dependency analysis of a unique-hard-attention
model under a restriction (:mod:`~hardsoft.limits.dependency`), the Depth Reduction Lemma as an
algorithm (:mod:`~hardsoft.limits.depth_reduction`, with the Moser–Tardos resampling of
:mod:`~hardsoft.limits.lll`), checkable witnesses (:mod:`~hardsoft.limits.witness`) and the
top-level :func:`hardsoft.limits.restrict.restrict`.

This module imports nothing heavy, so sibling modules (e.g. ``sensitivity``) can live beside it;
import the submodules directly.
"""

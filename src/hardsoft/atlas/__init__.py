"""The expressivity atlas: which transformer class computes which language, and what backs each
cell — a *proof* run here (a model built and checked exactly, a decision procedure, or a
theorem whose hypotheses were checked here), an *illustration* (a restriction witness or a
Lemma 5 slope on one model, training runs), or a *citation*. See docs/atlas.md.

Modules: :mod:`.table` (the claims, as data), :mod:`.construct` and :mod:`.crafted` (models
built and checked), :mod:`.checks` (applicability checks), :mod:`.illustrate`,
:mod:`.learned` (the training protocol), :mod:`.starfree` and :mod:`.ltl_search` (user rows,
:mod:`.rows`), :mod:`.build` (cells stored and reused, the table), :mod:`.html`.

The package sits just below :mod:`hardsoft.experiments` and uses the engines below it: the
compiler and ``check``, the programs, the restriction engine and Lemma 5's sensitivity, the
learning code.
"""

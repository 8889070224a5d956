"""Regular languages into transformers exact at every length (docs/regular.md).

The syntactic monoid of the minimal DFA (:mod:`~hardsoft.regular.monoid`) decides the class
(:mod:`~hardsoft.regular.classify`: star-free, solvable, non-solvable, by its groups,
:mod:`~hardsoft.regular.groups`); the local-divisor and cyclic translation
(:mod:`~hardsoft.regular.translate`) gives a past formula, proved equal to the DFA at every
length (:mod:`~hardsoft.regular.verify`) and compiled (:mod:`~hardsoft.regular.compile`,
``hardsoft compile --regex/--dfa``). A non-solvable language is refused (Barrington 1989).
Submodules are imported where they are used (this package's tier sits between the engines and
``atlas | rasp`` in the import contract).
"""

"""Programs written in the theory's notations, compiled into transformers and checked against
their own interpreters.

One package per notation: :mod:`.ahat` (average-hard attention programs, Yang, Strobl, Chiang
& Angluin (arXiv:2412.09925v1): a DSL built in Python, its interpreter and compiler, Theorem 26's
softmax conversion and the §6 programs), :mod:`.crasp` (C-RASP files, ``.cr``), :mod:`.brasp`
(B-RASP files, ``.brasp``) and :mod:`.rasp` (Tracr's RASP, ``FILE.py:NAME``, lowered into the
average-hard DSL). The notations never import each other, except RASP's lowering into
:mod:`.ahat`; they share the modules here: the contract every file notation implements and
the one alphabet rule (:mod:`.source`), reading a compiled program's outputs by their encodings
(:mod:`.readout`), checking a model against its program (:mod:`.reference`,
:mod:`.check_source`) and traces of runs (:mod:`.trace`)."""

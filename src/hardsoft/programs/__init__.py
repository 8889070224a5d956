"""Average-hard attention programs: a small DSL (:mod:`.dsl`), its reference interpreter
(:mod:`.interpret`), compilation to an AHAT (:mod:`.compile`), the uniform–tieless checker
(:mod:`.tieless`), the softmax conversion with its certificate (:mod:`.soften`) and the named
programs of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §6 (:mod:`.library`). Program files
in a notation: the contract (:mod:`.source`) and B-RASP (:mod:`.brasp`)."""

"""Average-hard attention programs: a small DSL (:mod:`.dsl`), its reference interpreter
(:mod:`.interpret`), compilation to an AHAT (:mod:`.compile`), the uniform–tieless checker
(:mod:`.tieless`), the softmax conversion with its certificate (:mod:`.soften`) and the named
programs of seed 003 §6 (:mod:`.library`)."""

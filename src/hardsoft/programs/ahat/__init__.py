"""Average-hard attention programs (AHAT), the notation of Yang, Strobl, Chiang & Angluin
(TACL 2026): a small embedded DSL (:mod:`.dsl`), its reference interpreter (:mod:`.interpret`),
compilation to an average-hard transformer (:mod:`.compile`), the uniform–tieless checker
(:mod:`.tieless`), the softmax conversion of their Theorem 26 with its certificate
(:mod:`.soften`), the §6 programs (:mod:`.library`) and the two routes that build them
(:mod:`.routes`: the tieless program, or the logic route's formulas, :mod:`.logic_route`)."""

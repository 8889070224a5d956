// The first symbol is 1. Position 1 is the one where #true (the position) is 1.
// alphabet: 01

at_start = #true == 1
starts_with_one = #(at_start && "1") >= 1

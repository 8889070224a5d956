// a^n b^n c^n (n >= 1): the counting program of Yang & Chiang (COLM 2024) for COUNT(3).
// Every b comes before every c, every a before every b and c, and the three counts agree.
// alphabet: abc

b_before_c = #("b" && #"c" == 0) == #"b"
a_before_bc = #("a" && #("b" || "c") == 0) == #"a"
same_counts = #"a" == #"b" && #"b" == #"c"
anbncn = b_before_c && a_before_bc && same_counts

// Some a is directly followed by b (the factor ab), with the local predicate pred
// (j = i - 1) of Huang et al. (ICLR 2025).
// alphabet: ab
#import pred

a_before = #[pred] "a"
ab_ends_here = "b" && a_before >= 1
ab_so_far = #ab_ends_here
contains_ab = ab_so_far >= 1

// (aa)*: an even number of a's and no other symbol, with the periodic predicate pos_even of
// Huang et al. (ICLR 2025). C-RASP files count positions from 0, so the last position of an
// even-length word is odd: !pos_even. With conventional precedence, !pos_even && only_as
// is (!pos_even) && only_as.
// alphabet: ab
#import pos_even

not_a = #!"a"
only_as = not_a == 0
aa_star = !pos_even && only_as

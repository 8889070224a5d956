// The last symbol is 1: the output at each position is the symbol there, and a word is
// accepted by its value at the last position.
// alphabet: 01

ends_with_one = "1"

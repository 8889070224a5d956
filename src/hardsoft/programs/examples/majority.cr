// MAJORITY: strictly more 1s than 0s so far (a tie is rejected).
// alphabet: 01

ones = #"1"
zeros = #"0"
majority = ones > zeros

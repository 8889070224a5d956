// Dyck-1: balanced brackets over ( and ), the C-RASP program of Yang & Chiang (COLM 2024).
// A prefix is balanced iff no prefix of it has more ) than ( and the counts are equal.
// alphabet: ()

opens = #"("
closes = #")"
too_many_closes = opens < closes
bad_prefixes = #too_many_closes
never_bad = bad_prefixes == 0
balanced = opens == closes
dyck1 = never_bad && balanced

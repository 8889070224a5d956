"""Tracr's library (``tracr/compiler/lib.py``), one program per function, written for
hardsoft's RASP: ``hardsoft program compile tracr_lib.py:NAME`` compiles one.

The functions compute what Tracr's do (same names, same arguments, same results under
``rasp.evaluate``), written so that the compiler can see them: where Tracr writes a lambda
for an affine map or a comparison we use the operator (``indices - offset``), and the counts
and fractions that should be numbers at every length are declared ``numerical``. The
module-level SOps below are the instances the benchmark and the ``tracr-lib`` experiment
compile; ``vocab`` and ``max_len`` give each one's vocabulary and, for the two sorts whose
keys are made unique with ``i / max_seq_len``, the bound they are built for.
"""

from collections.abc import Callable
from typing import Any

from hardsoft import rasp

# ---- the library ----------------------------------------------------------------------------


def make_length() -> rasp.SOp:
    """The length, at every position: the width of a selector that selects everything."""
    everything = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE).named("all_true")
    return rasp.numerical(rasp.SelectorWidth(everything)).named("length")


def make_reverse(sop: rasp.SOp) -> rasp.SOp:
    """``sop`` reversed: position i reads position n − 1 − i."""
    opp_idx = (make_length() - rasp.indices - 1).named("opp_idx")
    flip = rasp.Select(rasp.indices, opp_idx, rasp.Comparison.EQ).named("reverse_selector")
    return rasp.Aggregate(flip, sop).named("reverse")


def make_pair_balance(sop: rasp.SOp, open_token: str, close_token: str) -> rasp.SOp:
    """The fraction of open tokens so far minus the fraction of close tokens so far."""
    opens = rasp.numerical(make_frac_prevs(sop == open_token)).named("opens")
    closes = rasp.numerical(make_frac_prevs(sop == close_token)).named("closes")
    return rasp.numerical(rasp.LinearSequenceMap(opens, closes, 1, -1)).named("pair_balance")


def make_shuffle_dyck(pairs: list[str]) -> rasp.SOp:
    """True (at every position) iff every bracket type is balanced and never negative."""
    balances = [make_pair_balance(rasp.tokens, p[0], p[1]).named(f"balance_{p}") for p in pairs]
    any_negative = balances[0] < 0
    for b in balances[1:]:
        any_negative = any_negative | (b < 0)
    any_negative = rasp.numerical(rasp.Map(lambda x: x, any_negative)).named("any_negative")
    everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
    has_neg = rasp.numerical(rasp.Aggregate(everything, any_negative, default=0)).named("has_neg")
    all_zero = balances[0] == 0
    for b in balances[1:]:
        all_zero = all_zero & (b == 0)
    last = rasp.Select(rasp.indices, make_length() - 1, rasp.Comparison.EQ).named("select_last")
    last_zero = rasp.Aggregate(last, all_zero).named("last_zero")
    return (last_zero & ~has_neg).named("shuffle_dyck")


def make_shuffle_dyck2() -> rasp.SOp:
    return make_shuffle_dyck(["()", "{}"]).named("shuffle_dyck2")


def make_hist() -> rasp.SOp:
    """How often each position's token occurs in the input."""
    same_tok = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ).named("same_tok")
    return rasp.numerical(rasp.SelectorWidth(same_tok)).named("hist")


def make_sort_unique(vals: rasp.SOp, keys: rasp.SOp) -> rasp.SOp:
    """``vals`` sorted by ``keys`` (which must be unique): position p reads the value whose
    key has p smaller keys."""
    smaller = rasp.Select(keys, keys, rasp.Comparison.LT).named("smaller")
    target_pos = rasp.SelectorWidth(smaller).named("target_pos")
    sel_new = rasp.Select(target_pos, rasp.indices, rasp.Comparison.EQ).named("sel_new")
    return rasp.Aggregate(sel_new, vals).named("sort")


def make_sort(vals: rasp.SOp, keys: rasp.SOp, *, max_seq_len: int, min_key: float) -> rasp.SOp:
    """``vals`` sorted by non-unique numerical ``keys``, made unique as Tracr does:
    ``key + min_key · i / max_seq_len``. That orders equal keys by position only while
    i < max_seq_len, so the program itself is a sort only up to that length."""
    unique_keys = (keys + min_key * rasp.indices / max_seq_len).named("unique_keys")
    return make_sort_unique(vals, unique_keys)


def make_sort_freq(max_seq_len: int) -> rasp.SOp:
    """The tokens sorted by how often they occur (most frequent first)."""
    hist = (-1 * make_hist()).named("neg_hist")
    return make_sort(rasp.tokens, hist, max_seq_len=max_seq_len, min_key=1).named("sort_freq")


def make_frac_prevs(bools: rasp.SOp) -> rasp.SOp:
    """The fraction of positions so far where ``bools`` is true."""
    bools = rasp.numerical(bools)
    prevs = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ).named("prevs")
    return rasp.numerical(rasp.Aggregate(prevs, bools, default=0)).named("frac_prevs")


def shift_by(offset: int, /, sop: rasp.SOp) -> rasp.SOp:
    """``sop`` shifted right by ``offset`` positions, None where nothing is shifted in."""
    select_off_by_offset = rasp.Select(rasp.indices, rasp.indices - offset, rasp.Comparison.EQ)
    out = rasp.Aggregate(select_off_by_offset, sop, default=None)
    return out.named(f"shift_by({offset})")


def detect_pattern(sop: rasp.SOp, pattern: str) -> rasp.SOp:
    """True at the last position of each occurrence of ``pattern`` (None before len − 1)."""
    detectors = []
    for i, element in enumerate(reversed(pattern)):
        detector = sop == element
        if i != 0:
            detector = shift_by(i, detector)
        detectors.append(detector)
    pattern_detected = detectors.pop()
    while detectors:
        pattern_detected = pattern_detected & detectors.pop()
    return pattern_detected.named(f"detect_pattern({pattern})")


def make_count_less_freq(n: int) -> rasp.SOp:
    """How many positions hold a token that occurs at most ``n`` times (Tracr's code tests
    ``x <= n``; its docstring says "fewer than")."""
    hist = make_hist()
    rare = (hist <= n).named("rare")
    select_rare = rasp.Select(rare, rasp.Full(True), rasp.Comparison.EQ).named("select_less")
    return rasp.numerical(rasp.SelectorWidth(select_rare)).named("count_less_freq")


def make_count(sop: rasp.SOp, token: str) -> rasp.SOp:
    """How many positions hold ``token``."""
    is_token = rasp.Select(sop, sop, lambda k, q: k == token)
    return rasp.numerical(rasp.SelectorWidth(is_token)).named(f"count_{token}")


def make_nary_sequencemap(f: Callable[..., Any], *sops: rasp.SOp) -> rasp.SOp:
    """``f`` of several SOps, through SequenceMaps building tuples (as Tracr does)."""
    values, *rest = sops
    for sop in rest:
        values = rasp.SequenceMap(
            lambda x, y: (*x, y) if isinstance(x, tuple) else (x, y), values, sop
        )
    return rasp.Map(lambda args: f(*args), values)


# ---- the instances compiled by the benchmark and the `tracr-lib` experiment -----------------

length = make_length()
reverse = make_reverse(rasp.tokens)
hist = make_hist()
sort_unique = make_sort_unique(rasp.tokens, rasp.tokens)
digit = rasp.numerical(rasp.Map(int, rasp.tokens)).named("digit")
sort = make_sort(rasp.tokens, digit, max_seq_len=10, min_key=1)
sort_freq = make_sort_freq(max_seq_len=10)
frac_prevs = make_frac_prevs(rasp.tokens == "x")
pair_balance = make_pair_balance(rasp.tokens, "(", ")")
shuffle_dyck = make_shuffle_dyck(["()"])
shuffle_dyck2 = make_shuffle_dyck2()
shifted = shift_by(2, rasp.tokens)
pattern = detect_pattern(rasp.tokens, "abc")
count = make_count(rasp.tokens, "a")
count_less_freq = make_count_less_freq(2)
majority3 = make_nary_sequencemap(
    lambda a, b, c: int(a) + int(b) + int(c) >= 2,
    rasp.tokens,
    shift_by(1, rasp.tokens),
    shift_by(2, rasp.tokens),
).named("majority3")
count_is_two = (
    rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)) == 2
).named("count_is_two")

PROGRAMS = {
    "make_length": "length",
    "make_reverse": "reverse",
    "make_hist": "hist",
    "make_sort_unique": "sort_unique",
    "make_sort": "sort",
    "make_sort_freq": "sort_freq",
    "make_frac_prevs": "frac_prevs",
    "make_pair_balance": "pair_balance",
    "make_shuffle_dyck": "shuffle_dyck",
    "make_shuffle_dyck2": "shuffle_dyck2",
    "shift_by": "shifted",
    "detect_pattern": "pattern",
    "make_count": "count",
    "make_count_less_freq": "count_less_freq",
    "make_nary_sequencemap": "majority3",
}
"""Each function of Tracr's lib and the instance here that exercises it."""

vocab = {
    "length": "abc",
    "reverse": "abc",
    "hist": "abc",
    "sort_unique": "abcdefghijklmnopqrstuvwxyz",
    "sort": "0123",
    "sort_freq": "abc",
    "frac_prevs": "xy",
    "pair_balance": "()x",
    "shuffle_dyck": "()",
    "shuffle_dyck2": "(){}",
    "shifted": "abc",
    "pattern": "abc",
    "count": "abc",
    "count_less_freq": "abc",
    "majority3": "01",
    "count_is_two": "abc",
}

max_len = {"sort": 10, "sort_freq": 10}

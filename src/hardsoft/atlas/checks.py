"""The checks that a cited theorem applies to a row: what turns a citation into a proof.

A theorem says what a model class can or cannot do for languages with some property; each
check here tests that property of the row's language against its oracle (or decides it):

* ``not-star-free`` — the star-free decision of the row's regular expression
  (:mod:`hardsoft.regular.starfree`): a witness word of period > 1 in the syntactic monoid;
* ``not-regular`` — a Myhill–Nerode fooling set: the prefixes u^i are pairwise separated by
  the suffixes v^i (every pair i < j ≤ N checked with the oracle);
* ``same-language`` — the row's oracle is the theorem's language (PARITY, MAJORITY, DYCK-1),
  compared with an independent definition on every word up to a length;
* ``dyck1-projection`` — on words over ``()`` the row's language is DYCK-1 (so DYCK-1
  reduces to it by the identity map, and Hahn's 1DYCK argument and DYCK-1 ∉ AC⁰ transfer);
* ``one-symbol`` — at every tested length n (or n + 1 where n has words of one kind only), two
  words differing in one position i < n with different answers at the last position
  ("acceptance hinges on one symbol", the hypothesis under which Lemma 5 rules out a fixed
  margin);
* ``counting`` — the row's K_t[#] definition (prefix counts ``#<`` only) is in that
  fragment and defines the row's language: the logic evaluator against the oracle on every
  word up to a length and on random members and near misses of longer lengths;
* :func:`check_theorem26` — the hypothesis of Theorem 26 for a cell of the column "softmax,
  τ(n), any PE": the average-hard program the softmax model was converted from is
  uniform–tieless with the program's gap (read from the model's stored tieless check).

A check checks a property at the lengths it runs; the general statement (for every n) is the
argument stated in its summary, the same one for every length.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hardsoft.atlas.table import Row
from hardsoft.errors import HardsoftError
from hardsoft.languages import Language
from hardsoft.languages.base import all_words


@dataclass
class Check:
    """The outcome of one check: whether the property holds, one line saying what was checked,
    and the numbers (stored as the cell's ``check.json``)."""

    name: str
    passed: bool
    summary: str
    numbers: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "summary": self.summary, **self.numbers}


@dataclass(frozen=True)
class Sizes:
    """How far a check looks: exhaustive lengths by alphabet size, fooling-set size, and the
    lengths of the one-symbol and counting checks."""

    quick: bool

    def exhaustive(self, k: int) -> int:
        table = {2: 10, 3: 7, 4: 6} if self.quick else {2: 14, 3: 9, 4: 7}
        return table.get(k, 4 if self.quick else 5)

    @property
    def fooling(self) -> int:
        return 12 if self.quick else 40

    @property
    def lengths(self) -> list[int]:
        return [16, 64, 256] if self.quick else [16, 64, 256, 1024, 4096]


# ------------------------------------------------------------------ star-free decision
def check_not_star_free(row: Row, lang: Language, sizes: Sizes) -> Check:
    from hardsoft.atlas.evidence import decision_record

    if row.regex is None:
        raise HardsoftError(f"row {row.id} has no regular expression to decide")
    rec = decision_record(row)
    if rec["star_free"]:
        summary = f"star-free (aperiodic syntactic monoid of {rec['monoid_size']} elements)"
    else:
        w = rec["witness"]
        summary = (
            f"not star-free (decided on the {rec['monoid_size']}-element syntactic monoid): "
            f"{w['claim']}"
        )
    return Check("not-star-free", not rec["star_free"], summary, {"decision": rec})


# ------------------------------------------------------------------ Myhill–Nerode
def check_not_regular(row: Row, lang: Language, sizes: Sizes) -> Check:
    """Every pair i < j ≤ N: one of the suffixes v^i, v^j tells u^i from u^j."""
    if row.fooling is None:
        raise HardsoftError(f"row {row.id} has no fooling set")
    u, v = row.fooling
    n = sizes.fooling
    bad = []
    for i, j in itertools.combinations(range(1, n + 1), 2):
        if not any(lang.member(u * i + v * s) != lang.member(u * j + v * s) for s in (i, j)):
            bad.append((i, j))
    summary = (
        f"not regular (Myhill–Nerode): the prefixes {u}^i are pairwise inequivalent, u^i and "
        f"u^j told apart by the suffix {v}^i or {v}^j — checked with the oracle for every "
        f"pair i < j ≤ {n}; the same words work for every i, so there are infinitely many "
        "classes"
    )
    if bad:
        summary = f"NOT shown: {u}^{bad[0][0]} and {u}^{bad[0][1]} are not separated"
    return Check("not-regular", not bad, summary, {"prefix": u, "suffix": v, "pairs_to": n})


# ------------------------------------------------------------------ the theorem's language
def _count(symbol: str) -> Callable[[str], int]:
    return lambda w: w.count(symbol)


def _balanced(pairs: str) -> Callable[[str], bool]:
    """Balanced over the bracket pairs ``pairs`` (e.g. "()[]"), by a stack."""
    close = {pairs[k + 1]: pairs[k] for k in range(0, len(pairs), 2)}

    def member(word: str) -> bool:
        stack: list[str] = []
        for c in word:
            if c in close:
                if not stack or stack.pop() != close[c]:
                    return False
            else:
                stack.append(c)
        return not stack

    return member


DEFINITIONS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "parity-even": ("PARITY: an even number of 1s", lambda w: w.count("1") % 2 == 0),
    "majority": ("MAJORITY: more 1s than 0s", lambda w: w.count("1") > w.count("0")),
    "dyck1": ("1DYCK: balanced brackets ()", _balanced("()")),
}
"""The languages the hard-attention theorems name, defined independently of the oracles."""


def check_same_language(row: Row, lang: Language, sizes: Sizes) -> Check:
    if row.language not in DEFINITIONS:
        raise HardsoftError(f"no definition of {row.language} to compare with")
    name, member = DEFINITIONS[row.language]
    n = sizes.exhaustive(len(row.alphabet))
    words = [w for m in range(n + 1) for w in all_words(row.alphabet, m)]
    wrong = [w for w in words if lang.member(w) != member(w)]
    summary = (
        f"the row's oracle is {name}, on all {len(words)} words up to n = {n}"
        if not wrong
        else f"the row's oracle is NOT {name}: {wrong[0]!r}"
    )
    return Check("same-language", not wrong, summary, {"words": len(words), "to_n": n})


def check_dyck1_projection(row: Row, lang: Language, sizes: Sizes) -> Check:
    n = sizes.exhaustive(2) + 4
    member = _balanced("()")
    words = [w for m in range(n + 1) for w in all_words("()", m)]
    wrong = [w for w in words if lang.member(w) != member(w)]
    summary = (
        f"on words over () the row's language is DYCK-1 (all {len(words)} words up to n = {n}):"
        " DYCK-1 reduces to it by the identity map, so Hahn's 1DYCK argument and "
        "DYCK-1 ∉ AC⁰ apply"
        if not wrong
        else f"on words over () the row's language is NOT DYCK-1: {wrong[0]!r}"
    )
    return Check("dyck1-projection", not wrong, summary, {"words": len(words), "to_n": n})


# ------------------------------------------------------------------ one symbol
def flip_pair(lang: Language, n: int, rng: np.random.Generator) -> dict[str, Any] | None:
    """Two words of length ``n`` differing at one position i < n (1-based) whose answers at
    the last position differ (membership, or a task's target), found with the oracle; None if
    none was found."""
    for _ in range(20):
        words: list[str] = []
        if lang.kind == "language":
            if lang.has_nonmembers(n) and lang.has_members(n):
                words += lang.sample_negative(n, 1, rng, hard=True)
            if lang.has_members(n):
                words += lang.sample_positive(n, 1, rng)
        words += lang.sample_uniform(n, 1, rng)
        for word in words:
            base = int(lang.prefix_reference(word)[-1])
            # positions 1..n-1 (Lemma 5's i < n): the 32 just before the last (where a task's
            # answer usually hinges: an induction head's previous occurrence), then 32 at random
            near = range(n - 2, max(-1, n - 34), -1)
            for p in dict.fromkeys([*near, *rng.permutation(n - 1)[:32].tolist()]):
                for s in lang.alphabet:
                    if s == word[p]:
                        continue
                    other = word[:p] + s + word[p + 1 :]
                    answer = int(lang.prefix_reference(other)[-1])
                    if answer != base:
                        return {
                            "x": word,
                            "x_prime": other,
                            "position": int(p) + 1,
                            "answers": [base, answer],
                        }
    return None


def _both_kinds(lang: Language, n: int) -> int:
    """``n``, or ``n + 1`` where a language has no members or no non-members of length n (its
    members may all have odd length, as FLaRe's modular arithmetic's do): acceptance hinging
    on one symbol at infinitely many lengths is what Lemma 5's argument needs."""
    if lang.kind != "language" or (lang.has_members(n) and lang.has_nonmembers(n)):
        return n
    return n + 1


def check_one_symbol(row: Row, lang: Language, sizes: Sizes) -> Check:
    rng = np.random.default_rng(0)
    pairs = {m: flip_pair(lang, m, rng) for m in (_both_kinds(lang, n) for n in sizes.lengths)}
    missing = [n for n, p in pairs.items() if p is None]
    what = "membership" if lang.kind == "language" else "the task's answer"
    summary = (
        f"{what} at the last position hinges on one symbol: at every n in "
        f"{', '.join(map(str, pairs))} two words differing at one position i < n get "
        "different answers from the oracle"
        if not missing
        else f"no one-symbol change of the answer found at n = {missing[0]}"
    )
    stored = {str(n): p for n, p in pairs.items()}
    return Check("one-symbol", not missing, summary, {"lengths": list(pairs), "pairs": stored})


# ------------------------------------------------------------------ K_t[#]
COUNTING_OPERATORS = frozenset(
    {"sym", "const", "int", "!", "&", "|", "#<", "<", "<=", ">", ">=", "=", "+", "-", "*"}
)
"""The operators of the counting logic K_t[#] of Yang & Chiang (2024) as hardsoft writes them:
symbols, Boolean connectives, prefix counts ``#<[φ]`` (j ≤ i) and linear comparisons of them;
no Y, P, S, no suffix counts, no positions or numerical predicates."""


def check_counting(row: Row, lang: Language, sizes: Sizes) -> Check:
    from hardsoft.logic import evaluate, parse
    from hardsoft.logic.structure import operators

    if row.counting is None:
        raise HardsoftError(f"row {row.id} has no K_t[#] definition")
    formula = parse(row.counting, alphabet=row.alphabet)
    outside = sorted(operators(formula) - COUNTING_OPERATORS)
    n = sizes.exhaustive(len(row.alphabet))
    words = [w for m in range(1, n + 1) for w in all_words(row.alphabet, m)]
    rng = np.random.default_rng(0)
    for m in sizes.lengths[:2]:
        sample, _ = lang.sample_balanced(m, 16, rng, allow_one_class=True)
        words += list(sample)
    wrong = None
    for m in sorted({len(w) for w in words}):  # one evaluation per length
        batch = [w for w in words if len(w) == m]
        values = evaluate(formula, batch, row.alphabet).astype(np.int64)
        bad = [w for w, v in zip(batch, values) if not np.array_equal(v, lang.prefix_reference(w))]
        if bad:
            wrong = bad[0]
            break
    ok = not outside and wrong is None
    summary = (
        f"{row.counting} is a K_t[#] formula (prefix counts only) and defines the row at every "
        f"prefix: the logic evaluator agrees with the oracle on all words up to n = {n} and "
        f"on random members and near misses of lengths {', '.join(map(str, sizes.lengths[:2]))}"
    )
    if outside:
        summary = f"{row.counting} is NOT a K_t[#] formula: it uses {', '.join(outside)}"
    elif wrong is not None:
        summary = f"{row.counting} does NOT define the row: it differs on {wrong!r}"
    return Check(
        "counting",
        ok,
        summary,
        {"formula": row.counting, "words": len(words), "exhaustive_to_n": n},
    )


# ------------------------------------------------------------------ Theorem 26
def check_theorem26(meta: dict[str, Any]) -> Check:
    """Theorem 26 applies to a tieless program's softmax model: the build's uniform–tieless
    check of the average-hard program (``meta["tieless_check"]``) passed, every head's measured
    gap at least its declared gap, at the lengths it was run (all words up to a length, sampled
    words beyond)."""
    rep = meta.get("tieless_check") or {}
    lengths = rep.get("lengths") or {}
    exhaustive = max((int(n) for n, v in lengths.items() if v.get("exhaustive")), default=0)
    sampled = sorted(int(n) for n, v in lengths.items() if not v.get("exhaustive"))
    violations = rep.get("declared_violations") or []
    ok = bool(rep.get("uniform_tieless")) and not violations and bool(lengths)
    summary = (
        f"Theorem 26's hypothesis: the average-hard program is uniform–tieless with gap "
        f"{rep.get('program_gap')} (every head uniform or with a unique maximum at least that "
        f"far ahead) on all words up to n = {exhaustive} and on sampled words of lengths "
        f"{', '.join(map(str, sampled)) or 'none'}"
    )
    if not ok:
        why = violations[0] if violations else "no uniform–tieless check stored in the model"
        summary = f"Theorem 26's hypothesis NOT shown: {why}"
    numbers = {"exhaustive_to_n": exhaustive, "sampled_lengths": sampled}
    return Check("theorem26", ok, summary, {**numbers, "gap": rep.get("program_gap")})


CHECKS: dict[str, Callable[[Row, Language, Sizes], Check]] = {
    "not-star-free": check_not_star_free,
    "not-regular": check_not_regular,
    "same-language": check_same_language,
    "dyck1-projection": check_dyck1_projection,
    "one-symbol": check_one_symbol,
    "counting": check_counting,
}


def run_check(name: str, row: Row, lang: Language, quick: bool) -> Check:
    """Run the check called ``name`` on ``row`` (its oracle ``lang``)."""
    return CHECKS[name](row, lang, Sizes(quick))

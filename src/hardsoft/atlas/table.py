"""The atlas as data: rows (languages and tasks), columns (model classes) and, for every cell,
the claimed status with its citation and how its evidence is produced. This module is the one
source of every cell's claim; :mod:`hardsoft.atlas.evidence` runs the evidence and
:mod:`hardsoft.atlas.build` compares the two.

Statuses (what each proves is in docs/atlas.md):

* ``constructed``: a compiled or programmed model of the column's class, checked exactly
  against the language oracle at every position up to a recorded n;
* ``impossible``: the cited theorem, and evidence run here (a restriction witness that fools a
  concrete model of the class, or the star-free decision);
* ``decided``: a decision procedure run here (star-freeness of a regular row);
* ``learned``: accuracy of trained models at the training lengths and beyond;
* ``open``: not settled by a result we could verify; where it is discussed is cited;
* ``cited``: settled by the cited publication, but no evidence is produced here (yet);
* ``pending``: an empirical cell whose runs are not part of this atlas yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    """A cell's status."""

    CONSTRUCTED = "constructed"
    IMPOSSIBLE = "impossible"
    DECIDED = "decided"
    LEARNED = "learned"
    OPEN = "open"
    CITED = "cited"
    PENDING = "pending"

    def __str__(self) -> str:
        return self.value

    @property
    def needs_evidence(self) -> bool:
        """Whether the status is backed by a run here (not just by a citation)."""
        return self in (Status.CONSTRUCTED, Status.IMPOSSIBLE, Status.DECIDED, Status.LEARNED)


@dataclass(frozen=True)
class Column:
    """A model class. ``weightings`` the head weightings its models may use, ``features``:
    whether position features are allowed (``none``: only the constant 1; ``bounded``;
    ``any``), ``target`` the compiler / program target that builds its models."""

    id: str
    title: str
    description: str
    weightings: tuple[str, ...] = ()
    features: str = "any"
    target: str = ""
    tau_one: bool = False
    empirical: bool = False


COLUMNS: tuple[Column, ...] = (
    Column(
        "uhat-strict",
        "unique-hard, strict masks, no PE",
        "unique-hard attention (leftmost/rightmost), strict masks, no position features: "
        "the star-free languages (Yang, Chiang & Angluin 2024)",
        ("leftmost", "rightmost"),
        "none",
        "hard",
    ),
    Column(
        "uhat-pe",
        "unique-hard + PE",
        "unique-hard attention with position features (any masks)",
        ("leftmost", "rightmost"),
        "any",
        "hard",
    ),
    Column(
        "ahat",
        "average-hard",
        "average-hard attention (the compiler's hard target: average-hard heads where the "
        "formula counts, unique-hard heads elsewhere), position features allowed",
        ("average", "leftmost", "rightmost"),
        "any",
        "hard",
    ),
    Column(
        "soft-tau",
        "softmax, τ(n), bounded PE",
        "softmax attention with temperature τ(n) → 0 and bounded position features",
        ("softmax",),
        "bounded",
        "soft-temperature",
    ),
    Column(
        "soft-pe",
        "softmax, τ = 1, unbounded PE",
        "softmax attention with τ = 1 and unbounded position features (e.g. i, n·(−1)^i)",
        ("softmax",),
        "any",
        "soft-pe",
        tau_one=True,
    ),
    Column(
        "soft-margin",
        "softmax, τ = 1, bounded PE, fixed margin",
        "Hahn's §6 setting: softmax with τ = 1, bounded position features, no layer norm, and "
        "acceptance with a margin ε > 0 that does not shrink with n",
        ("softmax",),
        "bounded",
        tau_one=True,
    ),
    Column(
        "soft-ln",
        "softmax + layer norm",
        "softmax attention with layer normalisation (Chiang & Cholak 2022)",
        ("softmax",),
        "any",
    ),
    Column(
        "trained-transformer",
        "trained softmax transformer",
        "a softmax transformer trained on short strings, tested on longer ones (empirical)",
        empirical=True,
    ),
    Column(
        "trained-lstm",
        "trained LSTM",
        "an LSTM trained on short strings, tested on longer ones (empirical baseline)",
        empirical=True,
    ),
)
COLUMN_IDS = tuple(c.id for c in COLUMNS)


@dataclass(frozen=True)
class Row:
    """A language or per-position task. ``language``: its registry name (the oracle);
    ``formula``: a past-only formula whose value at position i is the membership of the
    prefix of length i (compile routes); ``program``: a §6 program ``(name, k)`` (program
    routes); ``regex``: a regular expression of the language (star-free decision)."""

    id: str
    title: str
    language: str
    alphabet: str
    formula: str | None = None
    program: tuple[str, int | None] | None = None
    regex: str | None = None
    restriction_n: int = 24


ROWS: tuple[Row, ...] = (
    Row("parity", "PARITY", "parity-even", "01", "MOD(2, 0)(#<['1'])", regex="0*(10*10*)*"),
    Row("majority", "MAJORITY", "majority", "01", "#<['1'] > #<['0']"),
    Row("first", "FIRST", "first", "01", "('1' & !P true) | P ('1' & !P true)", regex="1.*"),
    Row("dyck1", "DYCK-1", "dyck1", "()", "#<['('] = #<[')'] & !P (#<['('] < #<[')'])"),
    Row("dyck2", "DYCK-2", "dyck2", "()[]", program=("dyck", 2), restriction_n=24),
    Row("dyck3", "DYCK-3", "dyck3", "()[]{}", program=("dyck", 3), restriction_n=24),
    Row("anbn", "aⁿbⁿ", "anbn", "ab", "#<['a'] = #<['b'] & !('a' & P 'b') & !P ('a' & P 'b')"),
    Row("aa-star", "(aa)*", "aa-star", "ab", "'a' & !P 'b' & MOD(2, 0)(i)", regex="(aa)*"),
    Row(
        "contains-ab",
        "Σ*abΣ* (star-free)",
        "contains-ab",
        "ab",
        "('b' & Y 'a') | P ('b' & Y 'a')",
        regex=".*ab.*",
    ),
    Row("ones-star", "1*", "ones-star", "01", "'1' & !P '0'", regex="1*"),
    Row(
        "induction-head",
        "induction head",
        "induction-head",
        "abcd",
        program=("induction-head", None),
    ),
    Row("khop2", "2-hop induction", "khop2", "abcd", program=("khop", 2)),
    Row("khop3", "3-hop induction", "khop3", "abcd", program=("khop", 3)),
    Row("flipflop", "flip-flop", "flipflop", "wri01", program=("flipflop", None)),
)
ROW_IDS = tuple(r.id for r in ROWS)


@dataclass(frozen=True)
class Claim:
    """A cell's claimed status, its citation, and how its evidence is produced: ``how`` is one
    of ``compile`` (the row's formula for the column's target), ``program-logic`` /
    ``program-tieless`` (the row's program on that route), ``restrict`` (a restriction witness
    on a seeded random model of the column), ``decide`` (star-freeness of ``row.regex``),
    ``learn`` (training runs), or ``none``."""

    status: Status
    citation: str
    how: str = "none"
    note: str = ""
    params: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ citations
HAHN = "Hahn (2020) §5, Theorem 1 and its corollaries (PARITY, DYCK; any position embeddings)"
YCA = "Yang, Chiang & Angluin (2024): strict-masked unique-hard transformers ⇔ LTL ⇔ star-free"
YCA_PE = "Yang, Chiang & Angluin (2024) §7: position embeddings add numerical predicates"
HAF = (
    "Hao, Angluin & Frank (2022): unique-hard transformers (any position embeddings) are in "
    "AC⁰; MAJORITY is not (Furst, Saxe & Sipser 1984)"
)
Y26 = "Yang, Strobl, Chiang & Angluin (TACL 2026)"
CC22 = "Chiang & Cholak (2022) §5: layer norm restores confidence (PARITY, FIRST)"
SURVEY = "surveyed in Strobl, Merrill, Weiss, Chiang & Angluin (TACL 2024)"
LEMMA5 = (
    "Hahn (2020) §6, Lemma 5 (with the supplement's correction): with τ = 1, bounded position "
    "features and no layer norm, one symbol change moves the last activation by O(1/n), so no "
    "fixed margin where one change changes the answer; Theorem 6 for PARITY and 2DYCK"
)
MARGIN_NOTE = (
    "exact acceptance with a margin shrinking like 1/n is possible for PARITY and FIRST "
    "(Chiang & Cholak 2022); layer norm removes the limit"
)
LN_OPEN = (
    "no construction with layer norm known to us for this row; Chiang & Cholak (2022) treat "
    "PARITY and FIRST; " + SURVEY
)
LEARN = (
    "train short, test long, as recognizers: Butoi et al. (ICLR 2025, FLaRe protocol); "
    "Delétang et al. (ICLR 2023)"
)
TASK_ROWS = ("induction-head", "khop2", "khop3")
QUICK_LEARN_ROWS = ("parity", "first", "dyck1")
"""The rows whose learned cells the quick atlas trains (all language rows in --full)."""


def _learned(row_id: str) -> Claim:
    """A learned cell: recognizer runs for a language row, pending for a per-position task
    (the recognizer objective classifies whole strings)."""
    if row_id in TASK_ROWS:
        return Claim(
            Status.PENDING,
            LEARN,
            "none",
            "a per-position task: the recognizer objective needs a language",
        )
    return Claim(Status.LEARNED, LEARN, "learn", params={"quick": row_id in QUICK_LEARN_ROWS})


def _con(citation: str, how: str = "compile", **params: Any) -> Claim:
    return Claim(Status.CONSTRUCTED, citation, how, params=params)


def _imp(citation: str, how: str = "restrict", note: str = "") -> Claim:
    return Claim(Status.IMPOSSIBLE, citation, how, note)


def _open(citation: str, note: str = "") -> Claim:
    return Claim(Status.OPEN, citation, "none", note)


def _cited(citation: str, note: str = "") -> Claim:
    return Claim(Status.CITED, citation, "none", note)


def _soft(row: Row, thm: str) -> dict[str, Claim]:
    """The two softmax construction columns for a formula row."""
    return {
        "soft-tau": _con(f"{Y26} {thm} (a): softmax with τ(n) and bounded position features"),
        "soft-pe": _con(f"{Y26} {thm} (b): softmax with τ = 1 and unbounded position features"),
    }


def _claims() -> dict[tuple[str, str], Claim]:
    c: dict[str, dict[str, Claim]] = {}
    c["parity"] = {
        "uhat-strict": _imp(HAHN + "; not star-free: " + YCA),
        "uhat-pe": _imp(HAHN),
        "ahat": _con(f"{Y26} Thm 21 (MOD counting, average-hard)"),
        **_soft(ROWS[0], "Thm 21"),
        "soft-ln": _cited(CC22, "Chiang & Cholak's construction is not built here"),
    }
    c["majority"] = {
        "uhat-strict": _imp(HAF),
        "uhat-pe": _imp(HAF),
        "ahat": _con(f"{Y26} Thm 20 (TL[C,+], average-hard)"),
        **_soft(ROWS[1], "Thm 20"),
        "soft-ln": _open(LN_OPEN),
    }
    c["first"] = {
        "uhat-strict": _con(YCA + " (FIRST is in LTL)"),
        "uhat-pe": _con(YCA + " (a model without position features is one with them)"),
        "ahat": _con(f"{Y26} Cor 17 (LTL, hard target)"),
        **_soft(ROWS[2], "Cor 17"),
        "soft-ln": _cited(CC22, "Chiang & Cholak's construction is not built here"),
    }
    c["dyck1"] = {
        "uhat-strict": _imp(HAHN),
        "uhat-pe": _imp(HAHN),
        "ahat": _con(f"{Y26} Cor 23 (past LTL[C,+], average-hard)"),
        **_soft(ROWS[3], "Cor 23"),
        "soft-ln": _open(LN_OPEN),
    }
    c["dyck2"] = {
        "uhat-strict": _imp(HAHN),
        "uhat-pe": _imp(HAHN),
        "ahat": _con(f"{Y26} §6 (DYCK-k average-hard program)", "program-tieless"),
        "soft-tau": _open(
            f"{Y26} Thm 26 simulates the average-hard program with τ(n), but with unbounded "
            "position features (i, i²); with bounded ones it is not settled here",
            "the tieless program's softmax model uses unbounded position features",
        ),
        "soft-pe": _open(f"{Y26} §6 conjecture DYCK-2 is not definable in LTL[C,+]; {SURVEY}"),
        "soft-ln": _open(LN_OPEN),
    }
    c["dyck3"] = {
        "uhat-strict": _imp(HAHN),
        "uhat-pe": _imp(HAHN),
        "ahat": _con(f"{Y26} §6 (DYCK-k average-hard program)", "program-tieless"),
        "soft-tau": _open(c["dyck2"]["soft-tau"].citation, c["dyck2"]["soft-tau"].note),
        "soft-pe": _open(c["dyck2"]["soft-pe"].citation),
        "soft-ln": _open(LN_OPEN),
    }
    c["anbn"] = {
        "uhat-strict": _cited(YCA + " (aⁿbⁿ is not regular, so not star-free)"),
        "uhat-pe": _open(f"unique-hard with position features on aⁿbⁿ: {SURVEY}"),
        "ahat": _con(f"{Y26} Thm 20 (TL[C,+], average-hard)"),
        **_soft(ROWS[5], "Thm 20"),
        "soft-ln": _open(LN_OPEN),
    }
    c["aa-star"] = {
        "uhat-strict": Claim(
            Status.DECIDED, YCA + "; Schützenberger (1965)", "decide", params={"star_free": False}
        ),
        "uhat-pe": _con(YCA_PE + " (MOD(2,0)(i) is a position feature)"),
        "ahat": _con(f"{Y26} Thm 21 (hard target)"),
        **_soft(ROWS[6], "Thm 21"),
        "soft-ln": _open(LN_OPEN),
    }
    for rid, cor in (("contains-ab", "Cor 17"), ("ones-star", "Thm 16")):
        row = next(r for r in ROWS if r.id == rid)
        c[rid] = {
            "uhat-strict": _con(YCA + "; star-free, decided here too"),
            "uhat-pe": _con(YCA + " (a model without position features is one with them)"),
            "ahat": _con(f"{Y26} {cor} (hard target)"),
            **_soft(row, cor),
            "soft-ln": _open(LN_OPEN),
        }
    for rid in ("induction-head", "khop2", "khop3", "flipflop"):
        c[rid] = {
            "uhat-strict": _con(
                f"{Y26} §6 logic route (Cor 18): past LTL, rightmost-hard, strict masks",
                "program-logic",
            ),
            "uhat-pe": _con(
                f"{Y26} §6 logic route (a model without position features is one with them)",
                "program-logic",
            ),
            "ahat": _con(f"{Y26} §6 average-hard program", "program-tieless"),
            "soft-tau": _con(f"{Y26} Cor 17 (a): the logic route, τ(n) = 1/(8n)", "program-logic"),
            "soft-pe": _con(f"{Y26} Cor 17 (b): the logic route, τ = 1", "program-logic"),
            "soft-ln": _open(LN_OPEN),
        }
    for cells in c.values():
        cells["soft-margin"] = Claim(Status.IMPOSSIBLE, LEMMA5, "sensitivity", MARGIN_NOTE)
    out: dict[tuple[str, str], Claim] = {}
    for rid, cells in c.items():
        for cid, claim in cells.items():
            out[(rid, cid)] = claim
        for cid in ("trained-transformer", "trained-lstm"):
            out[(rid, cid)] = _learned(rid)
    return out


CLAIMS: dict[tuple[str, str], Claim] = _claims()


def row(row_id: str) -> Row:
    """The row called ``row_id``."""
    return next(r for r in ROWS if r.id == row_id)


def column(column_id: str) -> Column:
    """The column called ``column_id``."""
    return next(c for c in COLUMNS if c.id == column_id)

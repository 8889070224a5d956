"""The atlas as data: rows (languages and tasks), columns (model classes) and, for every cell,
the claimed status, the theorem or publication behind it, and how its evidence is produced.
This module is the one source of every cell's claim; :mod:`hardsoft.atlas.evidence` runs the
evidence and :mod:`hardsoft.atlas.build` compares the two.

A cell has a *status* (what it claims) and, once built, an *evidence kind* (what backs it):

* statuses: ``constructed`` (a model of the class built and checked here), ``possible`` (a
  theorem says a model exists; none is built here), ``impossible`` (a theorem says no model of
  the class exists), ``learned`` / ``not-learned`` (what trained models did under a stated
  protocol), ``open`` (not settled by a result we could verify) and ``pending`` (an empirical
  cell not run in this mode);
* evidence kinds: ``proof`` (a construction checked here, a decision procedure, or a theorem
  whose hypotheses were checked here), ``illustration`` (a witness on one model, a measured
  slope, training runs) and ``citation`` (the publication only).

What each proves is in docs/atlas.md; :func:`columns_markdown` is its table of model classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    """A cell's status: what it claims."""

    CONSTRUCTED = "constructed"
    POSSIBLE = "possible"
    IMPOSSIBLE = "impossible"
    LEARNED = "learned"
    NOT_LEARNED = "not-learned"
    OPEN = "open"
    PENDING = "pending"

    def __str__(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        """How the page shows the status: what trained runs did is said of our runs only."""
        return {
            Status.LEARNED: "learned in our runs",
            Status.NOT_LEARNED: "not learned in our runs",
        }.get(self, self.value)

    @property
    def empirical(self) -> bool:
        return self in (Status.LEARNED, Status.NOT_LEARNED, Status.PENDING)


class EvidenceKind(str, Enum):
    """What backs a cell (docs/atlas.md, "Evidence kinds")."""

    PROOF = "proof"
    ILLUSTRATION = "illustration"
    CITATION = "citation"

    def __str__(self) -> str:
        return self.value


class Features(str, Enum):
    """Which position features a column's models may use (the constant 1 is a bias)."""

    NONE = "none"
    BOUNDED = "bounded"
    ANY = "any"


class Masks(str, Enum):
    """Which attention masks a column's models may use."""

    STRICT = "strict"  # strict-future / strict-past only
    NONE = "none"  # no mask (Hahn's §6 setting)
    ANY = "any"


class LayerNorm(str, Enum):
    """Layer norm in a column's models: none, with ε = 0, or with a fixed ε > 0."""

    NONE = "none"
    EPS_ZERO = "eps0"
    EPS_FIXED = "eps"


@dataclass(frozen=True)
class Column:
    """A model class: the head weightings, position features, masks, layer norm and
    temperature its models may use, whether acceptance needs a fixed margin, and the compiler
    / program target that builds its models."""

    id: str
    title: str
    description: str
    weightings: tuple[str, ...] = ()
    features: Features = Features.ANY
    masks: Masks = Masks.ANY
    layer_norm: LayerNorm = LayerNorm.NONE
    temperature: str = "none (hard attention)"
    fixed_margin: bool = False
    target: str = ""
    empirical: bool = False

    @property
    def tau_one(self) -> bool:
        return self.temperature == "τ = 1"

    def model_class(self) -> dict[str, str]:
        """The exact class, one entry per axis (docs/atlas.md's column table)."""
        if self.empirical:
            return {"class": self.description}
        heads = " / ".join(self.weightings)
        features = {
            Features.NONE: "none (the constant 1 is a bias)",
            Features.BOUNDED: "bounded only",
            Features.ANY: "any (bounded or unbounded)",
        }[self.features]
        masks = {
            Masks.STRICT: "strict only (j < i or j > i)",
            Masks.NONE: "none (every head sees every position)",
            Masks.ANY: "any",
        }[self.masks]
        ln = {
            LayerNorm.NONE: "none",
            LayerNorm.EPS_ZERO: "with ε = 0",
            LayerNorm.EPS_FIXED: "with a fixed ε > 0 (hardsoft's default ln_eps = 1e-5)",
        }[self.layer_norm]
        accept = (
            "with a fixed margin (not shrinking with n)"
            if self.fixed_margin
            else "y_n > 1/2 (any margin)"
        )
        return {
            "heads": heads,
            "masks": masks,
            "position features": features,
            "layer norm": ln,
            "temperature": self.temperature,
            "acceptance": accept,
        }


HARD = ("leftmost", "rightmost")
COLUMNS: tuple[Column, ...] = (
    Column(
        "uhat-strict",
        "unique-hard, strict masks, no PE",
        "unique-hard attention (leftmost/rightmost), strict masks, no position features: "
        "the star-free languages (Yang, Chiang & Angluin 2024)",
        HARD,
        Features.NONE,
        Masks.STRICT,
        target="hard",
    ),
    Column(
        "uhat-pe",
        "unique-hard + PE",
        "unique-hard attention with any masks and any position features",
        HARD,
        Features.ANY,
        Masks.ANY,
        target="hard",
    ),
    Column(
        "ahat",
        "average-hard + PE",
        "average-hard attention in every head (ties averaged), any masks and position features",
        ("average",),
        Features.ANY,
        Masks.ANY,
        target="hard",
    ),
    Column(
        "soft-tau",
        "softmax, τ(n), bounded PE",
        "softmax attention with a temperature τ(n) → 0 and bounded position features",
        ("softmax",),
        Features.BOUNDED,
        temperature="τ(n) → 0",
        target="soft-temperature",
    ),
    Column(
        "soft-tau-pe",
        "softmax, τ(n), any PE",
        "softmax attention with a temperature τ(n) → 0 and any position features (bounded or "
        "unbounded): the class of Yang et al.'s Theorem 26 simulations",
        ("softmax",),
        Features.ANY,
        temperature="τ(n) → 0",
        target="soft-temperature",
    ),
    Column(
        "soft-pe",
        "softmax, τ = 1, unbounded PE",
        "softmax attention with τ = 1 and unbounded position features (e.g. i, n·(−1)^i)",
        ("softmax",),
        Features.ANY,
        temperature="τ = 1",
        target="soft-pe",
    ),
    Column(
        "soft-margin",
        "softmax, τ = 1, bounded PE, no LN, fixed margin",
        "Hahn's §6 setting: softmax with τ = 1, bounded position features, no layer norm, "
        "acceptance with a margin that does not shrink with n; any masks (Hahn's Lemma 5 is "
        "stated without masks; masked models by our extension of it, docs/atlas.md)",
        ("softmax",),
        Features.BOUNDED,
        Masks.ANY,
        temperature="τ = 1",
        fixed_margin=True,
    ),
    Column(
        "soft-ln",
        "softmax + layer norm, ε = 0, fixed margin",
        "softmax with τ = 1, bounded or no position features, layer norm without ε (ε = 0: "
        "Chiang & Cholak 2022), acceptance with a fixed margin",
        ("softmax",),
        Features.BOUNDED,
        Masks.ANY,
        LayerNorm.EPS_ZERO,
        temperature="τ = 1",
        fixed_margin=True,
    ),
    Column(
        "soft-ln-eps",
        "softmax + layer norm, fixed ε > 0, fixed margin",
        "as the fixed-margin column, with layer norm whose ε > 0 is fixed (hardsoft's default "
        "ln_eps = 1e-5): layer norm is then Lipschitz and Lemma 5's limit returns; any masks "
        "(our extension of Lemma 5, docs/atlas.md)",
        ("softmax",),
        Features.BOUNDED,
        Masks.ANY,
        LayerNorm.EPS_FIXED,
        temperature="τ = 1",
        fixed_margin=True,
    ),
    Column(
        "trained-transformer",
        "trained softmax transformer",
        "a softmax transformer trained as a recognizer on short strings, tested on longer "
        "ones (empirical; Butoi et al. 2025's protocol)",
        empirical=True,
    ),
    Column(
        "trained-lstm",
        "trained LSTM",
        "an LSTM trained the same way (empirical baseline)",
        empirical=True,
    ),
)
COLUMN_IDS = tuple(c.id for c in COLUMNS)


@dataclass(frozen=True)
class Row:
    """A language or per-position task. ``language``: its registry name (the oracle);
    ``formula``: a past-only formula whose value at position i is the membership of the
    prefix of length i (compile routes); ``program``: a §6 program ``(name, k)`` (program
    routes); ``regex``: a regular expression of the language (star-free decision);
    ``counting``: a definition in the counting logic K_t[#] of Yang & Chiang (2024) (prefix
    counts ``#<`` only; C-RASP), which the layer-norm column checks; ``fooling``: two symbols
    ``(u, v)`` such that the prefixes u^i are pairwise inequivalent, separated by the suffixes
    v^i (a Myhill–Nerode check that the language is not regular).

    A *regular row* (``regular``) takes its construction columns (:data:`REGULAR_COLUMNS`)
    from the regular-row machinery of ``atlas add-row --dfa`` run on its language's own DFA
    (:meth:`~hardsoft.languages.Language.automaton`, tested against the oracle), so they
    settle what that machinery settles; ``star_free`` is the answer the theory gives for the
    row (its syntactic monoid, by hand), which the decision run here must reproduce, and
    ``source`` cites where the language is defined. ``quick``: whether ``--quick`` builds the
    row unless ``--only`` names it (every row is built in ``--full``)."""

    id: str
    title: str
    language: str
    alphabet: str
    formula: str | None = None
    program: tuple[str, int | None] | None = None
    regex: str | None = None
    counting: str | None = None
    fooling: tuple[str, str] | None = None
    restriction_n: int = 24
    layernorm: str | None = None
    """The formula the soft-ln column compiles where it is not ``counting`` (a counting
    definition with a periodic predicate of Huang et al. (ICLR 2025), outside K_t[#])."""
    regular: bool = False
    star_free: bool | None = None
    source: str = ""
    quick: bool = True


TOMITA = (
    "Tomita (1982), as listed by Weiss, Goldberg & Yahav (ICML 2018) and Bhattamishra, Ahuja "
    "& Goyal (EMNLP 2020)"
)
FLARE = (
    "Butoi, Khalighinejad, Svete, Valvoda, Cotterell & DuSell (ICLR 2025), Table 1 (FLaRe's "
    "regular languages)"
)
BARRINGTON = (
    "Barrington (1989), main theorem: the word problem of a non-solvable group such as A5 is "
    "NC¹-complete"
)
YAO = (
    "Yao, Peng, Papadimitriou & Narasimhan (ACL 2021): Dyck-(k, D), k bracket types nested at "
    "most D deep"
)


FULL_ONLY = ("tomita7", "even-pairs", "dyck2-depth2", "dyck2-depth3")
"""Regular rows left out of ``--quick`` (docs/atlas.md, "The regular rows"): star-free rows
whose bounded formula search spends its whole budget and finds nothing, to show "possible"
(about 4 s of CPU each, most of what the regular rows added to the quick atlas)."""


def _regular(
    rid: str, title: str, language: str, alphabet: str, star_free: bool, source: str
) -> Row:
    """A regular row (its construction columns from the regular-row machinery)."""
    return Row(
        rid,
        title,
        language,
        alphabet,
        regular=True,
        star_free=star_free,
        source=source,
        quick=rid not in FULL_ONLY,
    )


ROWS: tuple[Row, ...] = (
    Row("parity", "PARITY", "parity-even", "01", "MOD(2, 0)(#<['1'])", regex="0*(10*10*)*"),
    Row(
        "majority",
        "MAJORITY",
        "majority",
        "01",
        "#<['1'] > #<['0']",
        counting="#<['1'] > #<['0']",
        fooling=("0", "1"),
    ),
    Row(
        "first",
        "FIRST",
        "first",
        "01",
        "('1' & !P true) | P ('1' & !P true)",
        regex="1.*",
        counting="#<['1' & #<[true] = 1] > 0",
    ),
    Row(
        "dyck1",
        "DYCK-1",
        "dyck1",
        "()",
        "#<['('] = #<[')'] & !P (#<['('] < #<[')'])",
        program=("dyck", 1),  # the τ(n), any-PE column: Theorem 26 on the DYCK-k program
        counting="#<['('] = #<[')'] & #<[#<['('] < #<[')']] = 0",
        fooling=("(", ")"),
    ),
    Row("dyck2", "DYCK-2", "dyck2", "()[]", program=("dyck", 2), fooling=("(", ")")),
    Row("dyck3", "DYCK-3", "dyck3", "()[]{}", program=("dyck", 3), fooling=("(", ")")),
    Row(
        "anbn",
        "aⁿbⁿ",
        "anbn",
        "ab",
        "#<['a'] = #<['b'] & !('a' & P 'b') & !P ('a' & P 'b')",
        counting="#<['a'] = #<['b'] & #<['a' & #<['b'] > 0] = 0",
        fooling=("a", "b"),
    ),
    Row(
        "aa-star",
        "(aa)*",
        "aa-star",
        "ab",
        "'a' & !P 'b' & MOD(2, 0)(i)",
        regex="(aa)*",
        layernorm="#<['b'] = 0 & MOD(2, 0)(i)",
    ),
    Row(
        "contains-ab",
        "Σ*abΣ* (star-free)",
        "contains-ab",
        "ab",
        "('b' & Y 'a') | P ('b' & Y 'a')",
        regex=".*ab.*",
        counting="#<['b' & #<['a'] > 0] > 0",
    ),
    Row(
        "ones-star",
        "1* (Tomita 1)",
        "ones-star",
        "01",
        "'1' & !P '0'",
        regex="1*",
        counting="#<['0'] = 0",
    ),
    *(
        _regular(f"tomita{k}", f"Tomita {k}", f"tomita{k}", "01", star_free, TOMITA)
        for k, star_free in ((2, True), (3, False), (4, True), (5, False), (6, False), (7, True))
    ),
    _regular("even-pairs", "even pairs", "even-pairs", "01", True, FLARE),
    _regular("repeat-01", "(01)* (repeat 01)", "repeat-01", "01", True, FLARE),
    _regular("cycle-navigation", "cycle navigation", "cycle-navigation", "<>=01234", False, FLARE),
    _regular(
        "modular-arithmetic",
        "modular arithmetic",
        "modular-arithmetic-simple",
        "01234+-*=",
        False,
        FLARE,
    ),
    _regular("dyck2-depth2", "DYCK-(2, 2)", "dyck2-depth2", "()[]", True, YAO),
    _regular("dyck2-depth3", "DYCK-(2, 3)", "dyck2-depth3", "()[]", True, f"{FLARE}; {YAO}"),
    _regular("a5-identity", "A5 word problem", "a5-identity", "ab", False, BARRINGTON),
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
REGULAR_COLUMNS = ("uhat-strict", "uhat-pe", "ahat", "soft-tau", "soft-tau-pe", "soft-pe")
"""The columns whose cells a regular row takes from the regular-row machinery (no claim of
its own there: the machinery settles what it can, the rest shows no cell)."""


@dataclass(frozen=True)
class Claim:
    """A cell's claimed status and what backs it.

    ``citation``: the theorem or publication (authors, year, section); ``how``: the evidence
    producer (``compile``, ``harden``, ``program-logic``, ``program-tieless``,
    ``crafted-anbn``, ``crasp-ln``, ``parity-ln``, ``learn`` or ``none``); ``check``: the
    check, run here, that the cited theorem applies to the row (:mod:`hardsoft.atlas.checks`;
    None: none can be run); ``illustrate``: an illustration run beside a proof
    (``restrict``: a restriction witness on one model; ``sensitivity`` / ``sensitivity-ln``:
    Lemma 5 measured on one model; ``ln-eps``: the row's soft-ln model run with ε = 1e-5)."""

    status: Status
    citation: str
    how: str = "none"
    check: str | None = None
    illustrate: str | None = None
    note: str = ""
    params: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ citations
Y26 = "Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1)"
YCA = (
    "Yang, Chiang & Angluin (NeurIPS 2024), main theorem: masked unique-hard transformers "
    "with strict masks and no position embeddings recognise exactly the star-free languages"
)
SCHUTZENBERGER = "Schützenberger (1965): star-free ⇔ aperiodic syntactic monoid"
HAHN_HARD = (
    "Hahn (2020) §5, Theorem 1 and Corollary 2 (PARITY, 2DYCK; the proof treats 1DYCK, so "
    "every DYCK-k; any position embeddings)"
)
HAF = (
    "Hao, Angluin & Frank (TACL 2022), main theorem: unique-hard transformers (any masks "
    "and position embeddings) recognise only languages in AC⁰; PARITY and MAJORITY are not in "
    "AC⁰ (Furst, Saxe & Sipser 1984), nor is DYCK-1"
)
BKLP = (
    "Barceló, Kozachinskiy, Lin & Podolskii (ICLR 2024), main theorems: unique-hard "
    "encoders with position encodings recognise first-order logic with unary numerical "
    "predicates; average-hard encoders recognise LTL(C,+)"
)
CC22 = (
    "Chiang & Cholak (ACL 2022), abstract and layer-norm section: exact PARITY and FIRST "
    "(position features i/n, (−1)^i), with layer norm without ε bringing the cross-entropy "
    "to 0 at every length"
)
YC24_LN = (
    "Yang & Chiang (COLM 2024), main theorem: every K_t[#] (C-RASP) formula compiles into a "
    "future-masked softmax transformer whose comparisons use layer norm; built here by the "
    "soft-ln target (own construction after theirs: τ = 1, post layer norm with ε = 0, the "
    "feature [i = 1] in place of their BOS symbol; docs/compiler.md, soft-ln)"
)
YC24_LN_PERIODIC = (
    f"{YC24_LN}; (aa)* also uses the periodic predicate MOD(2, 0)(i) (Huang et al., ICLR "
    "2025), a bounded position feature outside K_t[#]"
)
CC22_LN = (
    f"{CC22}; built here after their exact PARITY construction (own construction: no CLS "
    "symbol, [i = n] gives 1/n, one uniform head reads the parity of the spike's position), "
    "an unmasked encoder read at the last position"
)
MASKED = (
    'masked models: our extension of the proof (own argument, docs/atlas.md, "Lemma 5 with '
    'masks"): with any masks the last activation moves by O((log n)^(L−1)/n), so the '
    "fixed-margin limit holds for them too"
)
LEMMA5 = (
    "Hahn (2020) §6, Lemma 5 (with the supplement's correction): with τ = 1, bounded position "
    "features, Lipschitz position-wise maps and no masks, one symbol change at i < n moves the "
    "last activation by O(1/n); so no fixed margin where acceptance can hinge on one symbol "
    "(the general form in Chiang & Cholak (2022), abstract); Theorem 6 for PARITY and 2DYCK; "
    f"{MASKED}"
)
LEMMA5_LN = (
    "Hahn (2020) §6, Lemma 5 (corrected), whose proof needs only Lipschitz position-wise "
    "maps: layer norm with a fixed ε > 0 is Lipschitz (constant ≤ max|γ|/√ε; our remark, "
    "docs/atlas.md), so the fixed-margin limit returns; Chiang & Cholak (2022, their "
    f"layer-norm section) escape it with ε = 0; {MASKED}"
)
MARGIN_NOTE = (
    "PARITY and FIRST are recognised exactly with a margin shrinking like 1/n (Chiang & "
    "Cholak 2022); layer norm with ε = 0 removes the limit (next column), with a fixed ε > 0 "
    "it does not (the column after)"
)
TASK_MARGIN_NOTE = (
    "at the last position, for masked models by our extension of Lemma 5 (docs/atlas.md); "
    "the task's own constructions need τ(n) or unbounded position features, outside this class"
)
LOGIC_ROUTE = (
    f"{Y26} §6 logic route: the task as past LTL formulas compiled with future masks, Cor. 18 "
    "(the future-masked form of Cor. 17, which §6 cites)"
)
SURVEY = "surveyed in Strobl, Merrill, Weiss, Chiang & Angluin (TACL 2024), summary tables"
LN_OPEN = (
    "no construction with layer norm (ε = 0) known to us: Yang & Chiang (COLM 2024), main "
    "theorem, needs a K_t[#] definition (none known to us for this row), and Chiang & Cholak "
    f"(2022, abstract) treat PARITY and FIRST only; {SURVEY}"
)
LEARN = (
    "Butoi, Khalighinejad, Svete, Valvoda, Cotterell & DuSell (ICLR 2025), experimental "
    "setup: recognizers trained on lengths 0–40 and tested on longer strings; our threshold "
    'for "learned" is in docs/atlas.md'
)
TASK_ROWS = ("induction-head", "khop2", "khop3")
QUICK_LEARN_ROWS = ("parity", "first")
"""The rows whose learned cells the quick atlas trains (every language row in --full)."""


def _con(citation: str, how: str = "compile", **params: Any) -> Claim:
    return Claim(Status.CONSTRUCTED, citation, how, params=params)


def _imp(citation: str, check: str, illustrate: str | None = None, note: str = "") -> Claim:
    return Claim(Status.IMPOSSIBLE, citation, "none", check, illustrate, note)


def _possible(citation: str, check: str | None = None, note: str = "") -> Claim:
    return Claim(Status.POSSIBLE, citation, "none", check, note=note)


def _open(citation: str, note: str = "") -> Claim:
    return Claim(Status.OPEN, citation, "none", note=note)


def _learned(row_id: str) -> Claim:
    """A learned cell: recognizer runs for a language row (the status, learned or not, is
    decided by the protocol), pending for a per-position task."""
    if row_id in TASK_ROWS:
        return Claim(
            Status.PENDING,
            LEARN,
            note="a per-position task: the recognizer objective needs a language",
        )
    return Claim(Status.LEARNED, LEARN, "learn", params={"quick": row_id in QUICK_LEARN_ROWS})


def _formula_row(row: Row) -> dict[str, Claim]:
    """The construction columns of a formula row: the hard target (unique-hard columns), the
    soft-temperature model read as average-hard attention, and the two softmax targets. The
    theorem labels come from each model's certificate (compile/results.py), not from here."""
    return {
        "ahat": _con(
            f"{BKLP}; construction: {Y26} §4 (the soft-temperature model below)", "harden"
        ),
        "soft-tau": _con(f"{Y26} §4, part (a): softmax with τ(n) and bounded position features"),
        "soft-tau-pe": _con(
            f"{Y26} §4, part (a) (the soft-tau model: bounded position features are among any)"
        ),
        "soft-pe": _con(f"{Y26} §4, part (b): softmax with τ = 1 and unbounded position features"),
    }


def _theorem26(what: str) -> Claim:
    """A cell of the τ(n), any-PE column built by Theorem 26 from a uniform–tieless
    average-hard program (``hardsoft program NAME --route tieless --target
    soft-temperature``)."""
    return _con(
        f"{Y26} §5, Theorem 26 (a uniform–tieless average-hard transformer is simulated by "
        f"softmax with a temperature τ(n)), applied to {what}",
        "program-tieless",
    )


_NOT_SF = f"{YCA}; {SCHUTZENBERGER}"
_NOT_REG = f"{YCA}; a star-free language is regular"


def _counting_claims(by: dict[str, Any]) -> dict[str, dict[str, Claim]]:
    """PARITY, MAJORITY and FIRST: the rows the compiled formulas settle."""
    c: dict[str, dict[str, Claim]] = {}
    c["parity"] = {
        "uhat-strict": _imp(_NOT_SF, "not-star-free", "restrict"),
        "uhat-pe": _imp(f"{HAHN_HARD}; {HAF}", "same-language", "restrict"),
        **_formula_row(by["parity"]),
        "soft-ln": _con(CC22_LN, "parity-ln"),
    }
    c["majority"] = {
        "uhat-strict": _imp(_NOT_REG, "not-regular", "restrict"),
        "uhat-pe": _imp(HAF, "same-language", "restrict"),
        **_formula_row(by["majority"]),
        "soft-ln": _con(YC24_LN, "crasp-ln"),
    }
    c["first"] = {
        "uhat-strict": _con(YCA + " (FIRST is star-free: decided here too)"),
        "uhat-pe": _con(YCA + " (a model without position features is one with them)"),
        **_formula_row(by["first"]),
        "soft-ln": _con(f"{YC24_LN}; also {CC22}", "crasp-ln"),
    }
    return c


def _dyck_claims(by: dict[str, Any]) -> dict[str, dict[str, Claim]]:
    """DYCK-1, -2, -3: Hahn's limits for hard attention, the §6 program for soft."""
    c: dict[str, dict[str, Claim]] = {}
    for rid in ("dyck1", "dyck2", "dyck3"):
        c[rid] = {
            "uhat-strict": _imp(_NOT_REG, "not-regular", "restrict"),
            "uhat-pe": _imp(
                f"{HAHN_HARD}; {HAF}",
                "same-language" if rid == "dyck1" else "dyck1-projection",
                "restrict",
            ),
        }
    c["dyck1"].update(_formula_row(by["dyck1"]))
    for rid in ("dyck1", "dyck2", "dyck3"):
        c[rid]["soft-tau-pe"] = _theorem26(
            f"the DYCK-k program of {Y26} Appendix E (after Yao et al. 2021), with our own "
            "same-depth test; its position features i, i², i//⌈√n⌉ are unbounded"
        )
    c["dyck1"]["soft-ln"] = _con(YC24_LN, "crasp-ln")
    for rid in ("dyck2", "dyck3"):
        c[rid].update(
            {
                "ahat": _con(
                    f"{Y26} Appendix E (the DYCK-k program after Yao et al. 2021), "
                    "average-hard and uniform–tieless",
                    "program-tieless",
                ),
                "soft-tau": _open(
                    f"{Y26} Thm. 26 simulates the average-hard program with τ(n), but with its "
                    "unbounded position features (i, i², i//⌈√n⌉: constructed in the column "
                    f"softmax, τ(n), any PE); with bounded ones it is not settled; {SURVEY}",
                    "the tieless program's softmax model uses unbounded position features",
                ),
                "soft-pe": _open(
                    "no construction with τ = 1 is known to us: the τ = 1 results of "
                    f"{Y26} §4 (part (b)) compile LTL[C,+] formulas, and no LTL[C,+] "
                    "definition of DYCK-2 is known (§6 conjectures there is none); Thm. 26 "
                    f"needs a temperature τ(n); {SURVEY}",
                    "no τ = 1 construction is known (a statement about constructions, not a "
                    "claim about the logic)",
                ),
                "soft-ln": _open(LN_OPEN),
            }
        )
    return c


def _regular_claims(by: dict[str, Any]) -> dict[str, dict[str, Claim]]:
    """aⁿbⁿ and the small rows given by a regular expression (star-free or not)."""
    c: dict[str, dict[str, Claim]] = {}
    c["anbn"] = {
        "uhat-strict": _imp(_NOT_REG, "not-regular"),
        "uhat-pe": _con(
            "Hahn (2020) §5, Discussion after Corollary 2 (aⁿbⁿ with suitable position "
            f"embeddings), own construction; the class result: {BKLP}",
            "crafted-anbn",
        ),
        **_formula_row(by["anbn"]),
        "soft-ln": _con(YC24_LN, "crasp-ln"),
    }
    c["aa-star"] = {
        "uhat-strict": _imp(_NOT_SF, "not-star-free"),
        "uhat-pe": _con(f"{BKLP} (MOD(2, 0)(i) is a position feature)"),
        **_formula_row(by["aa-star"]),
        "soft-ln": _con(YC24_LN_PERIODIC, "crasp-ln"),
    }
    for rid in ("contains-ab", "ones-star"):
        c[rid] = {
            "uhat-strict": _con(YCA + " (star-free: decided here too)"),
            "uhat-pe": _con(YCA + " (a model without position features is one with them)"),
            **_formula_row(by[rid]),
            "soft-ln": _con(YC24_LN, "crasp-ln"),
        }
    return c


def _task_claims() -> dict[str, dict[str, Claim]]:
    """The §6 tasks: the logic route and the tieless program."""
    c: dict[str, dict[str, Claim]] = {}
    for rid in ("induction-head", "khop2", "khop3", "flipflop"):
        c[rid] = {
            "uhat-strict": _con(f"{YCA}; construction: {LOGIC_ROUTE}", "program-logic"),
            "uhat-pe": _con(
                f"{LOGIC_ROUTE} (a model without position features is one with them)",
                "program-logic",
            ),
            "ahat": _con(f"{Y26} §6: an average-hard, uniform–tieless program", "program-tieless"),
            "soft-tau": _con(f"{LOGIC_ROUTE}, part (a): τ(n)", "program-logic"),
            "soft-tau-pe": _theorem26("our uniform–tieless average-hard program for the task"),
            "soft-pe": _con(f"{LOGIC_ROUTE}, part (b): τ = 1", "program-logic"),
            "soft-ln": _open(LN_OPEN),
        }
    return c


def _claims() -> dict[tuple[str, str], Claim]:
    by = {r.id: r for r in ROWS}
    c = {**_counting_claims(by), **_dyck_claims(by), **_regular_claims(by), **_task_claims()}
    for r in ROWS:
        if r.regular:  # the construction columns come from the regular-row machinery
            c[r.id] = {"soft-ln": _open(LN_OPEN)}
    for rid, cells in c.items():
        task = rid in TASK_ROWS
        note = TASK_MARGIN_NOTE if task else MARGIN_NOTE
        cells["soft-margin"] = _imp(LEMMA5, "one-symbol", "sensitivity", note)
        eps_shown = "ln-eps" if cells["soft-ln"].status is Status.CONSTRUCTED else None
        cells["soft-ln-eps"] = _imp(LEMMA5_LN, "one-symbol", eps_shown, note)
    out: dict[tuple[str, str], Claim] = {}
    for rid, cells in c.items():
        for cid in COLUMN_IDS:
            if by[rid].regular and cid in REGULAR_COLUMNS:
                continue
            if cid in ("trained-transformer", "trained-lstm"):
                out[(rid, cid)] = _learned(rid)
            else:
                out[(rid, cid)] = cells[cid]
    return out


CLAIMS: dict[tuple[str, str], Claim] = _claims()


def row(row_id: str) -> Row:
    """The row called ``row_id``."""
    return next(r for r in ROWS if r.id == row_id)


def column(column_id: str) -> Column:
    """The column called ``column_id``."""
    return next(c for c in COLUMNS if c.id == column_id)


def columns_markdown() -> str:
    """The table of docs/atlas.md ("The columns: exact model classes"), generated from
    :data:`COLUMNS` (a test compares the two)."""
    axes = ("heads", "masks", "position features", "layer norm", "temperature", "acceptance")
    lines = ["| column | " + " | ".join(axes) + " |", "|---|" + "---|" * len(axes)]
    for col in COLUMNS:
        cls = col.model_class()
        if col.empirical:
            lines.append(f"| `{col.id}` | {cls['class']} |" + " |" * (len(axes) - 1))
        else:
            lines.append(f"| `{col.id}` | " + " | ".join(cls[a] for a in axes) + " |")
    return "\n".join(lines)

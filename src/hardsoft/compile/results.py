"""Constructions ↔ results of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §4: the single
source of every theorem label.

Every head the compiler builds, every row of the ``compiler`` experiment, the logic route's
certificate and the table in docs/compiler.md read their labels from :data:`CONSTRUCTIONS`
(a test checks that the doc table is :func:`markdown_table`). A label says what a head is:

* ``Yang et al. (arXiv:2412.09925v1) Thm. 12 (as stated)`` only where the construction is the
  paper's (its masks, weighting and resources);
* ``own construction (strict mask; cf. Yang et al. (arXiv:2412.09925v1) Thm. 12)`` otherwise, naming
  what differs. The paper's theorems are about softmax transformers, so a head of the ``hard``
  target is never "as stated".

Theorem 16(a) is not built: :data:`NOT_BUILT` states why and names the runnable check.
"""

from __future__ import annotations

from dataclasses import dataclass

from hardsoft.logic.structure import Fragment

CITE = "Yang et al. (arXiv:2412.09925v1)"
AS_STATED = "as stated"
OWN = "own construction"
SOFT = ("soft-temperature", "soft-pe")
TEMPERATURE_ONLY = frozenset({"Thm. 21", "Cor. 23"})
"""Results the preprint states with a temperature τ(n) only (no part with τ = 1 and unbounded
position features): a ``soft-pe`` model is never their construction as stated."""


def outside_hypotheses(result: str, target: str) -> str:
    """Why a ``target`` model lies outside ``result``'s hypotheses ("" when it does not)."""
    if target == "soft-pe" and result in TEMPERATURE_ONLY:
        return f"τ = 1 with unbounded position features, where {result} is stated with τ(n) only"
    return ""


@dataclass(frozen=True)
class Construction:
    """One construction: its certificate gadget names, the result it relates to (``causal``:
    with future masks only), where it is the paper's construction (``paper``: a set of
    ``(target, masks, causal)``), and what differs elsewhere."""

    name: str
    gadgets: tuple[str, ...]
    what: str
    result: str
    causal_result: str
    paper: frozenset[tuple[str, str, bool]]
    differs: str
    causal_differs: str = ""

    def result_for(self, target: str, causal: bool) -> str:
        if not causal:
            return self.result
        if self.causal_result == "Thm. 16" and target == "soft-temperature":
            return "Cor. 18"  # τ(n) depends on n: not Theorem 16's n-independent setting
        return self.causal_result

    def is_paper(self, target: str, masks: str, causal: bool) -> bool:
        """The paper's construction, inside its result's hypotheses."""
        outside = outside_hypotheses(self.result_for(target, causal), target)
        return (target, masks, causal) in self.paper and not outside

    def label(self, target: str, masks: str, causal: bool) -> str:
        result = self.result_for(target, causal)
        if self.is_paper(target, masks, causal):
            return f"{CITE} {result} ({AS_STATED})"
        whys = (self.differs, self.causal_differs if causal else "")
        why = ", ".join(w for w in (*whys, outside_hypotheses(result, target)) if w)
        if target == "hard":
            why = "hard attention" + (f", {why}" if why else "")
        return f"{OWN} ({why}; cf. {CITE} {result})"


def _on(targets: tuple[str, ...], masks: tuple[str, ...], causal: tuple[bool, ...]):
    return frozenset((t, m, c) for t in targets for m in masks for c in causal)


CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction(
        "first", ("first",), "[i = 1]: uniform future head averaging (-1)^j, ramp",
        "Prop. 11a", "Prop. 11a", _on(SOFT, ("nonstrict",), (False, True)), "",
    ),
    Construction(
        "last", ("last",), "[i = n]: uniform past head averaging (-1)^j, two ramps",
        "Prop. 11b", "Prop. 11b", _on(SOFT, ("nonstrict",), (False,)), "",
    ),
    Construction(
        "inverse-suffix", ("inverse-suffix-length",),
        "1/(n - i + 1): uniform past head on [j = n]",
        "Prop. 11 (remark)", "Prop. 11 (remark)", _on(SOFT, ("strict", "nonstrict"), (False,)),
        "",
    ),
    Construction(
        "strict-shift-yx", ("shift-past", "shift-future"),
        "Y / X: one strict-mask head (j < i / j > i) on the nearest position",
        "Thm. 12", "Thm. 13", frozenset(), "strict mask",
    ),
    Construction(
        "strict-shift-su", ("shift-past", "shift-future"),
        "S / U / P / F: one strict-mask head on the nearest position where psi or not phi holds",
        "Thm. 15", "Thm. 16", frozenset(), "strict mask",
    ),
    Construction(
        "parity-pair", ("prev-even", "prev-odd", "next-even", "next-odd"),
        "Y / X: two non-strict heads on the nearest even and odd position ((-1)^i scores)",
        "Thm. 12", "Thm. 13", _on(SOFT, ("nonstrict",), (False,)), "",
        "Thm. 12's heads, future-masked side only, not Lemma 8a's",
    ),
    Construction(
        "nonstrict-shift", ("shift-past-nonstrict", "shift-future-nonstrict"),
        "S / U / P / F / E: a non-strict shift head (j <= i), then Y (X) of it",
        "Thm. 15", "Thm. 16", frozenset(), "non-strict shift, then Thm. 12's Y",
    ),
    Construction(
        "count", ("count-pre", "count-suf"),
        "#< / #>: uniform head, the count over the number of positions",
        "Thm. 20", "Thm. 21", _on(SOFT, ("strict", "nonstrict"), (False, True)), "",
    ),
    Construction(
        "sign", ("sign-pre", "sign-suf", "sign-glob"),
        "comparison of counts: one attention head amplifies the sign of D/i",
        "Thm. 20", "Thm. 21", frozenset(), "sign test by one head",
    ),
    Construction(
        "lookup", ("lookup-pre", "lookup-suf"),
        "MOD of a count: table lookup with a quadratic score (tau = Theta(1/n^3) on "
        "soft-temperature)",
        "Thm. 20", "Thm. 21", frozenset(), "table lookup, not the paper's two retrievals",
    ),
    Construction(
        "select", ("select-leftmost", "select-rightmost"),
        "B-RASP attention: one head per operation, the program's mask, a 0/1 score "
        "(exclusive query classes times keys) and a tie-break +-j/(2n)",
        "Lemma 8", "Lemma 8", frozenset(),
        "B-RASP attention with query classes and Lemma 8's tie-break",
    ),
)  # fmt: skip

NOT_BUILT = {
    "Thm. 16(a)": (
        "not built: under our reading (future masks, bounded position features that do not "
        "depend on n, a temperature that does not depend on n), a weight on one key is at most "
        "e^(2A/tau)/i, so P '1' cannot be computed; runnable check: "
        "hardsoft.limits.theorem16a.theorem16a_obstruction"
    )
}

_BY_NAME = {c.name: c for c in CONSTRUCTIONS}


def construction(name: str) -> Construction:
    return _BY_NAME[name]


def head_label(name: str, target: str, masks: str, causal: bool) -> str:
    """The label of a head built by construction ``name``."""
    return _BY_NAME[name].label(target, masks, causal)


FRAGMENT_RESULTS: dict[str, tuple[str, str]] = {
    "TL[Y,X]": ("Thm. 12", "Thm. 13"),
    "TL[S,U]": ("Thm. 15", "Thm. 16"),
    "LTL": ("Cor. 17", "Cor. 18"),
    "TL[C,+]": ("Thm. 20", "Thm. 21"),
    "LTL[C,+]": ("Cor. 22", "Cor. 23"),
}
"""The result of Yang et al. (arXiv:2412.09925v1) §4 that covers a whole formula, by its fragment's
base (:func:`hardsoft.logic.structure.fragment`): ``(result, result for a future-masked model)``."""


def formula_result(base: str, causal: bool, target: str) -> str:
    """The result covering a formula of fragment ``base`` compiled for ``target`` (causal: a
    future-masked model; soft-temperature's causal TL[S] is Cor. 18, as for a head)."""
    result, causal_result = FRAGMENT_RESULTS[base]
    if causal and causal_result == "Thm. 16" and target == "soft-temperature":
        return "Cor. 18"
    return causal_result if causal else result


def certificate_label(certificate: dict) -> str:
    """A compiled model's label from its certificate: the result covering its formula's
    fragment, as stated only if every head is the paper's construction (:func:`model_label`).
    The atlas labels its cells with it, so a cell and its model's certificate cannot
    disagree."""
    names = {Fragment(base, past).name: base for base in FRAGMENT_RESULTS for past in (False, True)}
    base = names[certificate["fragment"]]
    result = formula_result(base, bool(certificate["causal"]), certificate["target"])
    return model_label(result, [h["theorem"] for h in certificate["heads"]])


def model_label(result: str, labels: list[str]) -> str:
    """A whole model's label for ``result`` (e.g. Cor. 17): as stated only if every head is."""
    if labels and all(lab.endswith(f"({AS_STATED})") for lab in labels):
        return f"{CITE} {result} ({AS_STATED})"
    own = [lab for lab in labels if lab.startswith(OWN)]
    found = {lab[len(OWN) + 2 : lab.index("; cf.")] for lab in own}
    parts = [p for r in sorted(found) for p in r.split(", ")]  # each difference once
    what = ", ".join(dict.fromkeys(parts)) if parts else "no attention head"
    return f"{OWN} ({what}; cf. {CITE} {result})"


def markdown_table() -> str:
    """The table of docs/compiler.md ("Constructions and results"), generated from
    :data:`CONSTRUCTIONS` (a test compares the two)."""
    rows = [
        "| construction | gadgets | what | result (causal) | the paper's construction on |",
        "|---|---|---|---|---|",
    ]
    for c in CONSTRUCTIONS:
        on = sorted(key for key in c.paper if c.is_paper(*key))
        where = (
            "; ".join(f"{t} {m}{' causal' if ca else ''}" for t, m, ca in on)
            if on
            else f"nowhere ({c.differs or c.causal_differs})"
        )
        gadgets = ", ".join(f"`{g}`" for g in c.gadgets)
        causal = c.causal_result
        if causal == "Thm. 16":
            causal += "; soft-temperature: Cor. 18"
        rows.append(f"| {c.name} | {gadgets} | {c.what} | {c.result} ({causal}) | {where} |")
    for result, why in NOT_BUILT.items():
        rows.append(f"| — | — | {result} | {result} | {why} |")
    return "\n".join(rows)


# ---------------------------------------------------------------------------- Theorem 16(a)

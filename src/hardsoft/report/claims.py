"""Which claim of which paper each experiment tests, and how its stored metrics decide.

One registry, keyed by experiment name: the claim in words, the paper and section, what was
run, and a function from the experiment's stored metrics to a verdict and the key number. The
report's summary table is built from it. An experiment without an entry shows "no claim
registered"; metrics a judge cannot read give the verdict "undetermined" with the reason.
Neither makes the report fail.

Verdicts: **reproduced** (the paper's claim holds on what was run), **deviates** (it does not,
or only with a correction), **extends** (the experiment goes beyond what the paper states,
for example a measured constant or a construction the paper only proves exists),
**inconclusive** (what was run cannot decide: too few seeds for an interval, or an interval
that neither confirms nor contradicts the predicted trend).

The papers: Hahn, *Theoretical Limitations of Self-Attention in Neural Sequence Models* (TACL
2020) and its supplement; Yang, Strobl, Chiang & Angluin, *Simulating Hard Attention Using Soft
Attention* (TACL 2026, vol. 14, pp. 147–166).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hardsoft.experiments.verdicts import (
    DEVIATES,
    EXTENDS,
    INCONCLUSIVE,
    REPRODUCED,
    finite_values,
    theorem6_trend,
)

__all__ = ["DEVIATES", "EXTENDS", "INCONCLUSIVE", "REPRODUCED", "theorem6_trend"]

UNDETERMINED, NO_CLAIM = "undetermined", "no claim registered"

Judge = Callable[[Mapping[str, Any]], tuple[str, str]]


@dataclass(frozen=True)
class Claim:
    """A paper's claim as one experiment tests it."""

    claim: str
    paper: str
    what_ran: str
    judge: Judge


@dataclass(frozen=True)
class Verdict:
    """One row of the report's summary table."""

    experiment: str
    title: str
    claim: str
    paper: str
    what_ran: str
    verdict: str
    key_number: str


CLAIMS: dict[str, Claim] = {}


def claim(name: str, *, claim: str, paper: str, what_ran: str) -> Callable[[Judge], Judge]:
    """Register the claim experiment ``name`` tests, with ``judge`` deciding the verdict."""

    def deco(judge: Judge) -> Judge:
        CLAIMS[name] = Claim(claim, paper, what_ran, judge)
        return judge

    return deco


def verdict_for(record: Mapping[str, Any]) -> Verdict:
    """The summary row of a stored experiment record (never raises on odd metrics)."""
    name, title = record["name"], record.get("title", record["name"])
    entry = CLAIMS.get(name)
    if entry is None:  # the experiment's own reference, if it gives one
        return Verdict(name, title, NO_CLAIM, record.get("seed_ref", ""), "", NO_CLAIM, "")
    try:
        verdict, key = entry.judge(record.get("metrics") or {})
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        verdict, key = UNDETERMINED, f"metrics unreadable ({type(exc).__name__}: {exc})"
    return Verdict(name, title, entry.claim, entry.paper, entry.what_ran, verdict, key)


# ----------------------------------------------------------------------------------------------
# the experiments on main; other experiments register here too (one entry each)


@claim(
    "softmax-to-hardmax",
    claim="Softmax with temperature τ → 0 approaches hardmax, within 2(m−1)·exp(−γ/τ) for a "
    "score gap γ over m positions",
    paper="Yang et al. (arXiv:2412.09925v1) §3.2 (Lemmas 6–7)",
    what_ran="64 random score rows per length, τ from 1 to 10⁻⁴; a 2-layer random model with "
    "its hard heads made softmax",
)
def _sanity(m: Mapping[str, Any]) -> tuple[str, str]:
    ok = bool(m["rows_within_gap_bound"])
    key = f"largest L1 gap at the smallest τ: {m['final_row_gap']:.2g}"
    return (REPRODUCED if ok else DEVIATES), key + ("" if ok else " (bound violated)")


@claim(
    "hahn-processes",
    claim="Next-symbol cross-entropy of the PARITY and 2DYCK processes: the optimum and unigram "
    "chance, and the gap Theorem 6 says soft attention cannot close",
    paper="Hahn (2020) §6, Theorem 6",
    what_ran="exact dynamic programs over n, checked against Monte Carlo samples",
)
def _processes(m: Mapping[str, Any]) -> tuple[str, str]:
    z = float(m["mc_max_z"])
    # |z| < 4 over a few dozen estimates: the exact values agree with sampling
    return (EXTENDS if z < 4 else DEVIATES), f"exact vs Monte Carlo: largest |z| = {z:.2f}"


@claim(
    "hard-attention-restrictions",
    claim="Every hard-attention transformer has a restriction under which its output depends on "
    "c inputs, so it cannot recognise PARITY or 2DYCK",
    paper="Hahn (2020) §5, Theorem 1 and the Depth Reduction Lemma; supplement S1",
    what_ran="restrictions built for random hard models, counterexample pairs verified by "
    "running the models",
)
def _restrictions(m: Mapping[str, Any]) -> tuple[str, str]:
    total, ok = int(m["witnesses"]), int(m["verified"])
    verdict = REPRODUCED if total > 0 and ok == total else DEVIATES
    return verdict, f"{ok}/{total} witnesses verified"


@claim(
    "compiler",
    claim="Temporal logic with counting is computed exactly by softmax transformers, with "
    "temperature τ(n) or unbounded position embeddings",
    paper="Yang et al. (arXiv:2412.09925v1) §4",
    what_ran="formulas compiled to hard, soft-temperature and soft-pe models, every position "
    "compared with the logic evaluator; many heads are our own constructions, not the "
    "paper's (each row's label says which; MOD of a count needs τ = Θ(1/n³)); Theorem "
    "16(a) is not built",
)
def _compiler(m: Mapping[str, Any]) -> tuple[str, str]:
    bad, largest = int(m["mismatches"]), int(m["largest_n_checked"])
    verdict = REPRODUCED if bad == 0 else DEVIATES
    return verdict, f"{bad} mismatching positions up to n = {largest}"


@claim(
    "long-inputs",
    claim="The compiled softmax transformers are exact at every length, not only the short "
    "ones a dense n × n attention reaches",
    paper="Yang et al. (arXiv:2412.09925v1) §4",
    what_ran="compiled PARITY, MAJORITY and DYCK-1 (full: also counting PARITY, n = 10⁶ and the "
    "DYCK-2 program at 10⁵) in float64 through the fast attention paths, every position "
    "against the logic evaluator; the dense path where it fits, timed beside them",
)
def _long_inputs(m: Mapping[str, Any]) -> tuple[str, str]:
    bad, largest = int(m["mismatches"]), int(m["largest_n"])
    speedups = finite_values(list(m["speedup_at_dense_max_n"].values()))
    key = f"{bad} mismatching positions up to n = {largest:,}"
    if speedups:
        key += (
            f"; fast paths {min(speedups):.0f}–{max(speedups):.0f}× the dense path at "
            f"n = {int(m['dense_max_n']):,}"
        )
    return (EXTENDS if bad == 0 else DEVIATES), key


@claim(
    "float-horizon",
    claim="Compiled models are exact at every length in exact arithmetic; in floating point the "
    "certificate's derived float limit is a length below which no position is wrong",
    paper="Yang et al. (arXiv:2412.09925v1) §4 (exactness); the limits are ours (docs/compiler.md)",
    what_ran="compiled PARITY (MOD and counting), MAJORITY, a MOD-3 lookup and the DYCK programs "
    "in float32 (full: PARITY also in float64, streamed), bisection on n for the first wrong "
    "position against the logic evaluator or the oracle",
)
def _float_horizon(m: Mapping[str, Any]) -> tuple[str, str]:
    worst = {k: float(v) for k, v in m["min_ratio_by_model"].items()}
    below = list(m["failures_below_derived"])
    if not worst:
        return INCONCLUSIVE, "no failure found below the largest n tried"
    key = (
        f"first failure / derived limit {min(worst.values()):.2g}–{max(worst.values()):.2g} "
        f"over {len(worst)} models; {len(below)} failed below their limit"
    )
    streamed = m.get("stream_check")
    wrong = int(streamed["mismatched_positions"]) if streamed else 0
    if streamed:
        key += f"; check --stream at n = {int(streamed['n']):,}: {wrong} mismatches"
    return (EXTENDS if not below and not wrong else DEVIATES), key


@claim(
    "ahat-programs",
    claim="Uniform–tieless average-hard attention programs are simulated by softmax attention "
    "with temperature τ(n)",
    paper="Yang et al. (arXiv:2412.09925v1) §5, Theorem 26; §6",
    what_ran="DYCK, induction-head and flip-flop programs: interpreter, hard model and softened "
    "model against the oracles; certified vs largest exact τ",
)
def _ahat(m: Mapping[str, Any]) -> tuple[str, str]:
    bad = int(m["mismatches"])
    ratios = [
        float(prog["tau_largest_exact"][n]) / float(prog["tau_certified"][n])
        for prog in m["programs"].values()
        for n in prog["tau_certified"]
    ]
    key = f"{bad} mismatches; largest exact τ is {min(ratios):.3g}–{max(ratios):.3g}× the certified"
    return (REPRODUCED if bad == 0 else DEVIATES), key


@claim(
    "tracr-lib",
    claim="Tracr's library programs compile to one softmax transformer each, exact at every "
    "length (or, where the program itself depends on its maximum length, up to it)",
    paper="Yang et al. (arXiv:2412.09925v1) §5, Theorem 26, "
    "applied to RASP programs (Lindner et al. 2023)",
    what_ran="the 15 functions of Tracr's lib and a Boolean map of a count, compiled for "
    "soft-temperature and checked against rasp.evaluate at every position",
)
def _tracr_lib(m: Mapping[str, Any]) -> tuple[str, str]:
    bad = int(m["mismatches"])
    total = len(m["programs"])
    key = f"{m['length_general']} of {total} length-general; {bad} mismatches"
    return (EXTENDS if bad == 0 else DEVIATES), key


@claim(
    "regular-compiled",
    claim="A regular language compiles into a transformer exact at every length in the class "
    "its syntactic monoid allows: star-free with unique-hard heads only, solvable groups with "
    "counting (MOD over counts); a non-solvable group makes it NC¹-complete and it is refused "
    "(hardsoft builds within its size limits: 12,000 formula nodes)",
    paper="Yang, Chiang & Angluin (2024) §5–6 (star-free languages = masked unique-hard "
    "attention); Straubing, Thérien & Barrington (1988) (FO with modular counting); "
    "Barrington (1989) (NC¹-completeness)",
    what_ran="regular expressions and registered languages' DFAs: monoid, class, the "
    "local-divisor translation into a past formula proved equal to the DFA, the hard model "
    "checked against the DFA; the A5 word problem refused",
)
def _regular_compiled(m: Mapping[str, Any]) -> tuple[str, str]:
    bad = int(m["mismatches"])
    unique = m["star_free_unique_only"] == m["star_free"]
    refused_right = all(g == "A5" for g in m["refused_groups"]) and bool(m["refused_groups"])
    ok = bad == 0 and unique and refused_right and m["proved_every_length"]
    key = (
        f"{m['compiled']} compiled, {bad} mismatches; {m['star_free_unique_only']} of "
        f"{m['star_free']} star-free models unique-hard only; refused: "
        f"{', '.join(m['refused_groups']) or 'none'}"
    )
    return (EXTENDS if ok else DEVIATES), key


@claim(
    "soft-attention-sensitivity",
    claim="Changing one input symbol moves a softmax transformer's last activation by O(1/n) "
    "(bounded position embeddings); models with τ(n) → 0 or unbounded ones escape",
    paper="Hahn (2020) §6, Lemma 5; supplement S2",
    what_ran="random soft models: max single-symbol influence by n, log-log slope, checked "
    "against a corrected bound; compiled PARITY/MAJORITY models for contrast",
)
def _sensitivity(m: Mapping[str, Any]) -> tuple[str, str]:
    randoms = {k: v for k, v in m.items() if k.startswith("random") and isinstance(v, dict)}
    slopes = finite_values([v["slope_max"] for v in randoms.values()])
    if not slopes:
        raise ValueError("no random-model slopes")
    violations = int(m["violations"])
    ok = violations == 0 and max(slopes) <= -0.9
    key = f"slopes {min(slopes):.2f} to {max(slopes):.2f} (Lemma 5: −1); {violations} violations"
    return (REPRODUCED if ok else DEVIATES), key


@claim(
    "learning-theorem6",
    claim="One fixed soft-attention transformer's cross-entropy gap on PARITY tends to unigram "
    "chance as n grows, and on 2DYCK stays a constant above optimal; an LSTM can be optimal",
    paper="Hahn (2020) §6, Theorem 6 (and Lemma 5 for the unmasked variant)",
    what_ran="transformers (future-masked and unmasked, no layer norm) and LSTMs trained once on "
    "n ≤ 40, each evaluated at growing n; verdict from 95% t-intervals over seeds of the "
    "trend (PARITY: gap/chance starts ≤ 0.8, rises and ends ≥ 0.8; 2DYCK: gap above Hahn's "
    "bound beyond 40)",
)
def _learning(m: Mapping[str, Any]) -> tuple[str, str]:
    trend = theorem6_trend(m["fixed"])
    short = {"tf-none": "masked", "tf-bidir": "unmasked", "lstm": "LSTM"}
    key = "; ".join(
        f"{k.split('/')[0].replace('parity', 'PARITY').replace('dyck2', '2DYCK')} "
        f"{short[k.split('/')[1]]}: {p['verdict']} ({p['numbers']})"
        for k, p in trend["parts"].items()
    )
    return trend["verdict"], key


@claim(
    "soften",
    claim="Softmax with temperature simulates general (unique- and average-) hard attention, "
    "τ set by the attention gap; the hard counterpart of a trained softmax model fails PARITY",
    paper="Yang et al. (2026), general hard attention (published version); Hahn (2020) §5",
    what_ran="random UHAT/AHAT models (gap measured on a word list: the bound covers those "
    "words only) and compiled hard formulas "
    "(certified gap, n = 200) softened, against the bound and the logic evaluator; a trained "
    "PARITY transformer hardened and restricted at n = 256",
)
def _soften(m: Mapping[str, Any]) -> tuple[str, str]:
    bad, mism = int(m["bound_violations"]), int(m["compiled_mismatches"])
    witness = bool(m["trained"]["witness_verified"])
    slack = m["largest_theta_over_certified"]
    ok = bad == 0 and mism == 0 and witness
    key = (
        f"{bad} bound violations, {mism} mismatches; largest θ within ε "
        f"{float(slack['min']):.3g}–{float(slack['max']):.3g}× the certified; witness "
        f"{'verified' if witness else 'not verified'}"
    )
    return (REPRODUCED if ok else DEVIATES), key


@claim(
    "decompile-roundtrip",
    claim="Masked unique-hard attention transformers compute exactly the LTL-definable "
    "(star-free) functions, effectively in both directions: a transformer can be turned back "
    "into a formula that holds at every length",
    paper="Yang, Chiang & Angluin (2024), as restated in Yang et al. (arXiv:2412.09925v1) §1",
    what_ran="formulas compiled to hard models (strict and non-strict masks) decompiled back "
    "and compared with the source by the logic evaluator, counting formulas (average-hard "
    "heads) to count comparisons; random unique-hard and random counting models decompiled "
    "and compared with the model at every position",
)
def _decompile(m: Mapping[str, Any]) -> tuple[str, str]:
    counting_bad = int(m.get("counting_mismatches", 0))
    counting_ok = int(m.get("counting_models_ok", 0))
    counting_all = int(m.get("counting_models", 0))
    ok = (
        bool(m["all_equivalent"])
        and int(m["model_mismatches"]) == 0
        and int(m["random_mismatches"]) == 0
        and counting_bad == 0
    )
    key = (
        f"{int(m['decompiled'])} round trips G = F ({int(m.get('counting_decompiled', 0))} "
        f"counting, {int(m['refused'])} refused); |G|/|F| median "
        f"{float(m['ratio_median']):.2g}, max {float(m['ratio_max']):.2g}; "
        f"{int(m['random_models'])} random unique-hard models, "
        f"{int(m['random_mismatches'])} mismatches; {counting_ok} of {counting_all} random "
        f"counting models, {counting_bad} mismatches"
    )
    return (EXTENDS if ok else DEVIATES), key


@claim(
    "atlas",
    claim="Each cell's published status (what the model class can or cannot compute) holds "
    "on the evidence run here: a construction checked exactly, or the check that the cited "
    "theorem applies to the row",
    paper="Hahn (2020) §5, §6; Yang, Chiang & Angluin (2024); Yang et al. (arXiv:2412.09925v1) "
    "§4, §6; Hao, Angluin & Frank (2022); Barceló et al. (2024); Yang & Chiang (2024); Chiang & "
    "Cholak (2022); Schützenberger (1965)",
    what_ran="compiled (layer norm with ε = 0 for the soft-ln column), programmed and crafted "
    "models checked exactly against the oracles; the star-free decision, Myhill–Nerode, "
    "language-identity, one-symbol and K_t[#] checks of the cited theorems' hypotheses; "
    "restriction witnesses, Lemma 5 slopes and layer norm with ε > 0 on single models and "
    "training runs as illustrations (counted apart)",
)
def _atlas(m: Mapping[str, Any]) -> tuple[str, str]:
    bad = list(m["disagreements"])
    kinds = dict(m.get("kinds") or {})
    key = (
        f"{int(m.get('cells_proved', 0))} of {int(m['cells_total'])} cells proved here, "
        f"{int(kinds.get('illustration', 0))} illustrated only, "
        f"{int(kinds.get('citation', 0))} cited only; {len(bad)} disagree"
    )
    return (EXTENDS if not bad else DEVIATES), key


@claim(
    "decompile-trained",
    claim="A masked unique-hard transformer with finitely many position values computes a "
    "language definable in LTL with position classes: a hardened trained recognizer "
    "decompiles to a formula exact at every length, which is then decided against the task "
    "(equal at every length, or a shortest counterexample); it does not claim the training "
    "finds the task",
    paper="Yang, Chiang & Angluin (2024), as restated in Yang et al. (arXiv:2412.09925v1) "
    "§1; the training "
    "protocol of Butoi et al. (ICLR 2025)",
    what_ran="small softmax recognizers of six star-free languages (several seeds), hardened "
    "(leftmost), decompiled, the formula run against the model and decided against the task's "
    "own formula at every length",
)
def _decompile_trained(m: Mapping[str, Any]) -> tuple[str, str]:
    """Extends only when every model decompiled, every formula matches its model and every
    formula was decided against the task; the key number says how many equal their task (a
    proof) and how many differ (a counterexample), and no more."""
    cells = list(m["cells"])
    done = [c for c in cells if c["decompile"]["status"] == "decompiled"]
    if not done:
        return UNDETERMINED, f"no model decompiled ({cells[0]['decompile']['status']})"
    exact = sum(c["decompile"]["model_mismatch"] is None for c in done)
    proofs = sum(bool(c["decompile"].get("equal_at_every_length")) for c in done)
    differ = sum(c["decompile"].get("equal_at_every_length") is False for c in done)
    undecided = len(done) - proofs - differ
    key = (
        f"{len(done)}/{len(cells)} decompiled, {exact} formulas match their model; "
        f"{proofs} proved equal to the task at every length, {differ} differ from it "
        "(a shortest counterexample)"
    )
    if undecided:
        key += f", {undecided} undecided"
    refused = sum(c["decompile"]["status"] == "refused" for c in cells)
    if refused:
        key += f"; {refused} refused (too many classes)"
    if exact < len(done):  # a formula that differs from its own model
        return DEVIATES, key
    if refused or undecided:  # part of what was run shows nothing
        return INCONCLUSIVE, key
    return EXTENDS, key


@claim(
    "programs",
    claim="Programs in the theory's own notations compile to transformers exact at every "
    "length (or up to a stated bound): C-RASP (counting) and B-RASP (masked unique-hard) "
    "programs to hard attention, to softmax with τ(n) and to τ = 1 with unbounded position "
    "features; Tracr's RASP programs to average-hard attention and softmax with τ(n)",
    paper="Yang & Chiang (COLM 2024), C-RASP; Yang, Chiang & Angluin (NeurIPS 2024), B-RASP; "
    "Yang et al. (arXiv:2412.09925v1) §4 "
    "(counting formulas) and Theorem 26; Lindner et al. (2023), RASP",
    what_ran="every shipped example program (C-RASP: Dyck-1 and a^n b^n c^n of Yang & Chiang, "
    "majority, first/last symbol, Huang et al.'s (aa)* and contains-ab; B-RASP: Dyck-1 of depth "
    "2, (ab)+, first/last symbol, a-then-b, flip-flop; RASP: Tracr's library, a subset in quick "
    "mode) compiled to each target its notation offers, every output checked against the "
    "program's own interpreter",
)
def _programs(m: Mapping[str, Any]) -> tuple[str, str]:
    bad = int(m["mismatches"])
    key = (
        f"{int(m['models'])} models from {int(m['programs'])} programs "
        f"({', '.join(m['notations'])}); {bad} mismatches in "
        f"{int(m['checked_positions']):,} positions"
    )
    if int(m["refused"]):
        key += f"; {int(m['refused'])} target(s) refused"
    return (EXTENDS if bad == 0 and bool(m["all_exact"]) else DEVIATES), key

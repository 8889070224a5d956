"""A regular language (a regular expression or a DFA) into a transformer exact at every length,
or the reason no construction is known.

The steps, each checked before the next:

1. the minimal DFA (:mod:`hardsoft.languages.regular`) and its transition monoid,
   the syntactic monoid (:mod:`hardsoft.regular.monoid`), refused past :data:`MAX_MONOID`;
2. the class (:mod:`hardsoft.regular.classify`); a non-solvable one is refused, with the group;
3. the translation into a past formula true at position i iff ``w_1..w_i`` is in the language
   (:mod:`hardsoft.regular.translate`), refused past :data:`MAX_NODES` distinct nodes;
4. the formula against the DFA: its minimal DFA, built bottom-up, equal to the input's on
   every non-empty word (:func:`hardsoft.regular.verify.product_check`: a proof at every
   length), and the logic evaluator on every word up to a length and on random words;
5. for a formula without counting and small enough, the decompiler's proved shrinking
   (:func:`hardsoft.decompile.shrink.shrink_counted`), the result checked again by step 4;
6. the compiler (:func:`hardsoft.compile.compile_formula`, past formula, causal); its
   certificate says what each head is and why the model is exact at every length;
7. the model against the DFA at every position of every word up to a length and of random
   words (:func:`hardsoft.check.check_language`).

A model has no output for the empty word (it has no position): its membership is reported
beside the model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA, RegularLanguage
from hardsoft.logic.printer import shared_text
from hardsoft.logic.syntax import Const, First, Formula, Not, Prev, operators, size
from hardsoft.model.transformer import Transformer
from hardsoft.regular.classify import Classification, RegularClass, classify
from hardsoft.regular.formulas import dag_size
from hardsoft.regular.monoid import monoid_of
from hardsoft.regular.translate import TooLarge, translate
from hardsoft.regular.verify import evaluator_check, product_check

MAX_MONOID = 2_000
"""Most elements of the syntactic monoid the translation takes (its tables are |M|² and the
formula grows with |M|; benchmarks/results/regular.md measures where it stops paying)."""
MAX_NODES = 6_000
"""Most distinct nodes of the formula: the model's width grows with them and its parameters
with their square (6,000 nodes: about 30 million parameters)."""
MAX_BUILT = 12_000
"""Most distinct nodes the translation may build on the way (it builds some it drops); the
bound that refuses a blow-up within seconds."""
SHRINK_WORK = 300_000
"""The counted work of the decompiler's shrinking (its unit: one subformula value computed);
about half a second of one core."""
CHECK_WORDS = 500
"""The model is checked on every word up to the length where there are this many of them
(the formula is already equal to the DFA at every length, and the compiler's certificate
proves the model computes it: this check is the independent last look, and the largest
part of the pipeline's time for deep models)."""
CHECK_RANDOM_N = (64, 256)
CHECK_SAMPLES = 4
ONE_LETTER_LENGTH = 100
"""Over a one-letter alphabet every length has one word: the checks take lengths up to this."""
EVALUATOR_WORDS = 4_000
"""The logic evaluator checks the formula on every word up to the length with this many."""


def exhaustive_length(k: int, words: int = CHECK_WORDS) -> int:
    """The longest n with at most ``words`` words of each length up to n (at least 1); over
    one letter (one word per length), 100 or ``words`` if fewer."""
    if k == 1:
        return min(words, ONE_LETTER_LENGTH)
    n = 1
    while k ** (n + 1) <= words:
        n += 1
    return n


@dataclass
class Compiled:
    """The outcome: ``model`` None when refused (``reason`` says why); ``record`` is the
    JSON the CLI prints (without the model)."""

    classification: Classification
    model: Transformer | None
    formula: Formula | None
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        return self.model is None


def empty_word(dfa: DFA) -> dict[str, Any]:
    member = dfa.accepts("")
    return {
        "member": member,
        "note": (
            f"the empty word is {'in' if member else 'not in'} the language; the model has no "
            "output for it (it has no position)"
        ),
    }


def formula_for(dfa: DFA) -> tuple[Classification, Formula | None, dict[str, Any]]:
    """Steps 1–5 of the module docstring: the class, the checked (and shrunk) formula (None
    for a non-solvable language) and the record of how it was made."""
    started = time.perf_counter()
    tm = monoid_of(dfa, MAX_MONOID)
    cls = classify(tm)
    record: dict[str, Any] = {**cls.to_json(), "empty_word": empty_word(dfa)}
    if cls.cls is RegularClass.NON_SOLVABLE:
        return cls, None, record
    try:
        tr = translate(
            tm.monoid, list(zip(dfa.alphabet, tm.letters)), tm.accepting().tolist(), MAX_BUILT
        )
    except TooLarge as exc:
        raise HardsoftError(f"{exc} (monoid of {tm.size} elements)") from None
    built = tr.formula
    if dag_size(built) > MAX_NODES:
        raise HardsoftError(
            f"the formula has {dag_size(built)} distinct nodes (at most {MAX_NODES}; monoid of "
            f"{tm.size} elements)"
        )
    translated = time.perf_counter() - started
    formula, shrunk = _shrink(built, dfa)  # every kept step proved; the result checked below
    shrunk["seconds"] = round(time.perf_counter() - started - translated, 3)
    checked_at = time.perf_counter()
    checks = _checks(formula, dfa)
    checks["seconds"] = round(time.perf_counter() - checked_at, 3)
    record.update(
        {
            "formula": shared_text(formula),
            "formula_size": {
                "dag_before": dag_size(built),
                "tree_before": size(built),
                "dag_after": dag_size(formula),
                "tree_after": size(formula),
            },
            "translation": {**tr.to_json(), "seconds": round(translated, 3)},
            "shrink": shrunk,
            "formula_check": checks,
        }
    )
    return cls, formula, record


def use_formula(
    formula: Formula, dfa: DFA, record: dict[str, Any], source: str
) -> tuple[Formula, dict[str, Any]]:
    """A formula found elsewhere (the atlas's bounded search) in place of the translation's,
    checked as the translation's is (step 4); ``record`` updated to say so."""
    formula = without_first(formula)
    sizes = {**record["formula_size"], "dag_after": dag_size(formula), "tree_after": size(formula)}
    return formula, {
        **record,
        "formula": shared_text(formula),
        "formula_source": source,
        "formula_size": sizes,
        "formula_check": _checks(formula, dfa),
    }


def _require_exact(formula: Formula, dfa: DFA, what: str) -> dict[str, Any]:
    """The product check (a proof at every length); a difference is a bug of ours."""
    result = product_check(formula, dfa)
    if not result.equal:
        raise RuntimeError(
            f"{what} is wrong on {result.counterexample!r}: please report it (the formula "
            "differs from the DFA)"
        )
    return result.to_json()


def _checks(formula: Formula, dfa: DFA) -> dict[str, Any]:
    product = _require_exact(formula, dfa, "the formula")
    words = evaluator_check(formula, dfa, exhaustive_length(len(dfa.alphabet), EVALUATOR_WORDS))
    if words["mismatch"] is not None:
        raise RuntimeError(
            f"the logic evaluator and the DFA differ on {words['mismatch']!r}, though the "
            "product check found them equal: please report it"
        )
    return {"product": product, "evaluator": words}


def _shrink(formula: Formula, dfa: DFA) -> tuple[Formula, dict[str, Any]]:
    """The decompiler's proved shrinking for formulas without counting and within its size
    bound; every step it keeps is an equivalence decided by an automaton."""
    from hardsoft.decompile.shrink import MAX_NODES as SHRINK_NODES
    from hardsoft.decompile.shrink import shrink_counted

    if "MOD" in operators(formula):
        return formula, {"ran": False, "why": "the formula counts (the shrinking is for LTL)"}
    if size(formula) > SHRINK_NODES:
        return formula, {
            "ran": False,
            "why": f"the syntax tree has {size(formula)} nodes (the shrinking takes at most "
            f"{SHRINK_NODES})",
        }
    result = shrink_counted(formula, dfa.alphabet, SHRINK_WORK)
    return without_first(result.formula), {"ran": True, **result.to_dict()}


def without_first(formula: Formula) -> Formula:
    """``first`` (which the shrinking may introduce) written as ``!Y true``: the same
    positions, with no position feature (the star-free class has none)."""
    from hardsoft.logic.structure import rewrite

    return rewrite(formula, lambda n: Not(Prev(Const(True))) if isinstance(n, First) else n)


def model_for(
    formula: Formula,
    cls: Classification,
    dfa: DFA,
    target: str,
    *,
    masks: str = "strict",
    n: int = 1000,
    name: str = "",
) -> Transformer:
    """Step 6: the checked formula compiled for ``target`` (a past formula, so causal)."""
    from hardsoft.compile import compile_formula

    model = compile_formula(
        formula, dfa.alphabet, target, True, masks=masks, n=n,
        name=name or f"regular language ({cls.cls}, monoid of {cls.monoid_size})",
    )  # fmt: skip
    model.meta["regular"] = {
        "class": cls.cls.value,
        "monoid_size": cls.monoid_size,
        "empty_word": empty_word(dfa),
    }
    return model


def check_against(
    model: Transformer, dfa: DFA, random_n: tuple[int, ...] = CHECK_RANDOM_N
) -> dict[str, Any]:
    """Step 7: the model against the DFA at every position (every word up to a length, random
    words of the ``random_n`` lengths)."""
    from hardsoft.check import check_language

    k = exhaustive_length(len(dfa.alphabet))
    rep = check_language(
        model, RegularLanguage("regular", dfa), exhaustive_max_n=k, random_n=list(random_n),
        samples=CHECK_SAMPLES,
    )  # fmt: skip
    keys = ("mismatches", "checked_strings", "checked_positions", "max_n", "max_abs_error",
            "first_mismatch")  # fmt: skip
    return {**{key: rep[key] for key in keys}, "exhaustive_to_n": k}


def compile_regular(
    dfa: DFA,
    target: str = "hard",
    *,
    masks: str = "strict",
    n: int = 1000,
    check: bool = True,
    name: str = "",
) -> Compiled:
    """The language of ``dfa`` compiled for ``target`` (module docstring), or refused."""
    started = time.perf_counter()
    cls, formula, record = formula_for(dfa)
    if formula is None:
        record["refused"] = True
        return Compiled(cls, None, None, record)
    model = model_for(formula, cls, dfa, target, masks=masks, n=n, name=name)
    record["certificate"] = model.meta["certificate"]
    if check:
        checked_at = time.perf_counter()
        record["model_check"] = check_against(model, dfa)
        record["model_check"]["seconds"] = round(time.perf_counter() - checked_at, 3)
        if record["model_check"]["mismatches"]:
            raise RuntimeError(
                f"the compiled model differs from the DFA on "
                f"{record['model_check']['first_mismatch']}: please report it"
            )
    record["seconds"] = round(time.perf_counter() - started, 3)
    record["refused"] = False
    return Compiled(cls, model, formula, record)

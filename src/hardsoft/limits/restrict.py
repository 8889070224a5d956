"""The restriction engine end to end: build a restriction for a concrete model (Depth Reduction
Lemma), certify the output's dependency set (exact analysis), and hand back a verified witness.

>>> import torch
>>> from hardsoft.model import random_model
>>> from hardsoft.limits.restrict import restrict
>>> m = random_model(weighting="rightmost", layers=2, heads=2, d_model=16, seed=0,
...                  dtype=torch.float64)
>>> r = restrict(m, 64, "parity-even")
>>> r.witness.verified
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.languages import Language, get_language
from hardsoft.limits.dependency import Analysis
from hardsoft.limits.depth_reduction import LayerLog, Params, reduce_and_analyse
from hardsoft.limits.restriction import Restriction
from hardsoft.limits.witness import Witness, build_witness, verify
from hardsoft.model.transformer import Transformer


@dataclass
class RestrictResult:
    """Everything the engine produced; ``to_dict`` is the CLI's JSON shape."""

    model_name: str
    n: int
    language: str | None
    restriction: Restriction
    initial: Restriction
    analysis: Analysis
    layers: list[LayerLog]
    params: Params
    witness: Witness | None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def dependency_set(self) -> list[int]:
        """The output's certified dependency set, 0-based."""
        return [int(p) for p in self.analysis.output_deps]

    def to_dict(self) -> dict:
        return {
            "model": self.model_name,
            "n": self.n,
            "language": self.language,
            "restriction": str(self.restriction),
            "free_fraction": self.restriction.free_fraction,
            "free_fraction_of_initial": self.restriction.num_free / max(1, self.initial.num_free),
            "dependency_set": [p + 1 for p in self.dependency_set],
            "c": len(self.dependency_set),
            "output_constant": self.analysis.output_constant,
            "witness": None if self.witness is None else self.witness.to_dict(),
            "layers": [log.to_dict() for log in self.layers],
            "params": {
                "C": self.params.C,
                "k": self.params.k,
                "eta": self.params.eta,
                "q": self.params.q,
                "delta": self.params.delta,
                "seed": self.params.seed,
            },
            "seconds": self.seconds,
            "notes": self.notes,
        }


def initial_restriction(
    n: int, language: Language | None, alphabet: tuple[str, ...]
) -> Restriction:
    """All free over ``alphabet``, except the positions the language fixes at the start
    (``Language.initial_fixes``: for DYCK the first and last ⌊0.2 n⌋ positions, Hahn (2020) §5,
    proof of Corollary 2)."""
    rho = Restriction.free(n, alphabet)
    return rho.fix(language.initial_fixes(n)) if language is not None else rho


def _witness(
    model: Transformer, rho: Restriction, analysis: Analysis, lang: Language, seed: int
) -> tuple[Witness, list[str]]:
    """The verified witness pair for ``lang``, with notes for the report. Where no free
    position lies outside the output's dependency set, the acceptance bit's (possibly smaller)
    set is tried."""
    notes: list[str] = []
    rng = np.random.default_rng(seed)
    witness = build_witness(rho, analysis.output_deps, lang, rng)
    if witness.x is None and "no free position" in witness.reason:
        acc_deps = analysis.accept_deps()
        if len(acc_deps) < len(analysis.output_deps):
            witness = build_witness(rho, acc_deps, lang, rng)
            notes.append(
                "no free position outside the output's dependency set; the witness uses "
                f"the acceptance bit's smaller set {[int(p) + 1 for p in acc_deps]}"
            )
    witness = verify(model, witness, lang, analysis)
    note = lang.witness_note(rho.n)
    if note is not None:
        notes.append(note)
    return witness, notes


def restrict(
    model: Transformer,
    n: int,
    language: str | None = None,
    *,
    C: float = 0.5,
    seed: int = 0,
    params: Params | None = None,
    initial: Restriction | None = None,
) -> RestrictResult:
    """Build a restriction under which ``model``'s output at length ``n`` depends on few
    positions, and (for a target language) a verified witness pair.

    ``language``: a restriction target (:func:`hardsoft.languages.restriction_targets`:
    ``parity-even, parity-odd, dyck<k>``; another registered language is allowed too: the
    engine then looks for a pair the model cannot separate), or None for the restriction only.
    ``C``: target free fraction of the initially free positions.
    """
    if n < 1:
        raise HardsoftError(f"--n must be >= 1, got {n}")
    seed = validate.seed(seed)
    # coarse: per-position restriction and analysis arrays for every layer, plus one forward pass
    memory.require(
        64 * n * (len(model.spec.layers) + 2)
        + memory.forward_bytes(model.spec, 1, n, model.W_E.element_size()),
        f"restricting inputs of length {n}",
    )
    t0 = time.perf_counter()
    lang = get_language(language) if language else None
    alphabet = lang.restriction_alphabet() if lang else tuple(model.spec.alphabet)
    missing = [a for a in alphabet if a not in model.spec.alphabet]
    if missing:
        raise HardsoftError(
            f"the language's symbol {missing[0]!r} is not in the model's alphabet "
            f"{''.join(model.spec.alphabet)!r}"
        )
    rho0 = initial if initial is not None else initial_restriction(n, lang, alphabet)
    p = params or Params(C=C, seed=seed)
    rho, logs, resolved, analysis = reduce_and_analyse(model, rho0, p)
    witness, notes = _witness(model, rho, analysis, lang, seed) if lang else (None, [])
    return RestrictResult(
        model_name=model.spec.name or "model",
        n=n,
        language=lang.name if lang else None,
        restriction=rho,
        initial=rho0,
        analysis=analysis,
        layers=logs,
        params=resolved,
        witness=witness,
        seconds=time.perf_counter() - t0,
        notes=notes,
    )


def flip_test(
    model: Transformer, result: RestrictResult, trials: int = 1000, seed: int = 0, batch: int = 250
) -> dict:
    """The soundness check: random completions x, and x' re-randomising random free positions
    outside the dependency set; counts trials where the model's output changed."""
    rng = np.random.default_rng(seed)
    rho = result.restriction
    D = set(result.dependency_set)
    outside = np.array([int(p) for p in rho.free_positions() if int(p) not in D])
    alphabet = rho.alphabet
    batch = max(1, min(batch, (1 << 22) // (rho.n * rho.n)))  # attention is [B, n, n]
    changed = 0
    max_diff = 0.0
    done = 0
    while done < trials:
        b = min(batch, trials - done)
        xs, ys = [], []
        for _ in range(b):
            x = rho.random_completion(rng)
            w = list(x)
            if len(outside):
                kflip = int(rng.integers(1, len(outside) + 1))
                for pos in rng.choice(outside, size=kflip, replace=False):
                    w[int(pos)] = alphabet[int(rng.integers(len(alphabet)))]
            xs.append(x)
            ys.append("".join(w))
        with torch.no_grad():
            a = model(model.encode(xs))
            c = model(model.encode(ys))
        changed += int((a.accept != c.accept).sum())
        max_diff = max(max_diff, float((a.outputs[:, -1] - c.outputs[:, -1]).abs().max()))
        done += b
    return {"trials": trials, "changed": changed, "max_output_difference": max_diff}


def contrast_check(
    model: Transformer, language: str, n: int, *, samples: int = 200, seed: int = 0
) -> dict:
    """Hahn (2020) §5's contrast: run the engine on a model that recognises ``language`` and check
    that the restriction it builds forces the answer — the output is constant over the
    dependency set, and every sampled completion of the restriction has the same membership
    (so no witness can exist)."""
    result = restrict(model, n, language, seed=seed)
    lang = get_language(language)
    rng = np.random.default_rng(seed)
    words = [result.restriction.random_completion(rng) for _ in range(samples)]
    members = [bool(lang.member(w)) for w in words]
    with torch.no_grad():
        acc = model(model.encode(words)).accept.cpu().numpy()
    fixed = {int(p) + 1: s for p, s in enumerate(result.restriction.symbols) if s is not None}
    return {
        "language": language,
        "n": n,
        "restriction": str(result.restriction),
        "fixed": fixed,
        "free_fraction": result.restriction.free_fraction,
        "output_constant": result.analysis.output_constant,
        "constant_accept": bool(result.analysis.accept_table[0]),
        "completions_all_same_membership": len(set(members)) == 1,
        "completions_in_language": int(sum(members)),
        "model_correct_on_completions": bool(np.all(acc == np.array(members))),
        "witness_verified": bool(result.witness and result.witness.verified),
    }

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

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.limits.dependency import Analysis, analyse
from hardsoft.limits.depth_reduction import LayerLog, Params, reduce_depth
from hardsoft.limits.restriction import Restriction
from hardsoft.limits.witness import Witness, build_witness, verify

TARGETS = ("parity-even", "parity-odd", "dyck1", "dyck2")
DYCK_FIX_FRACTION = 0.2


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


def initial_restriction(n: int, language: str | None, alphabet: tuple[str, ...]) -> Restriction:
    """All free, except for DYCK: the first and last ⌊0.2 n⌋ positions fixed to the first
    bracket pair's opener and closer (Hahn (2020) §5, proof of Corollary 2)."""
    rho = Restriction.free(n, alphabet)
    if language and language.startswith("dyck"):
        m = int(math.floor(DYCK_FIX_FRACTION * n))
        fix = {i: alphabet[0] for i in range(m)}
        fix.update({n - 1 - i: alphabet[1] for i in range(m)})
        rho = rho.fix(fix)
    return rho


def restrict(
    model,
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

    ``language``: one of ``parity-even, parity-odd, dyck1, dyck2`` (another registered
    language is allowed too: the engine then looks for a pair the model cannot separate), or
    None for the restriction only. ``C``: target free fraction of the initially free positions.
    """
    from hardsoft.languages import get_language

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
    alphabet = tuple(lang.alphabet) if lang else tuple(model.spec.alphabet)
    if lang is not None and lang.name.startswith("dyck"):
        # Hahn (2020) §5, Corollary 2: DYCK-k restricted to its first bracket pair is 1DYCK, so the
        # engine works over that pair only (free positions range over "(" and ")").
        alphabet = alphabet[:2]
    missing = [a for a in alphabet if a not in model.spec.alphabet]
    if missing:
        raise HardsoftError(
            f"the language's symbol {missing[0]!r} is not in the model's alphabet "
            f"{''.join(model.spec.alphabet)!r}"
        )
    rho0 = initial if initial is not None else initial_restriction(n, language, alphabet)
    p = params or Params(C=C, seed=seed)
    rho, logs, resolved = reduce_depth(model, rho0, p)
    analysis = analyse(model, rho, max_rows=resolved.max_rows)
    notes: list[str] = []
    witness = None
    if lang is not None:
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
        if lang.name.startswith("dyck") and n % 2:
            notes.append("odd n: no DYCK word has odd length, so no witness can exist")
    result = RestrictResult(
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
    return result


def flip_test(
    model, result: RestrictResult, trials: int = 1000, seed: int = 0, batch: int = 250
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


def contrast_check(model, language: str, n: int, *, samples: int = 200, seed: int = 0) -> dict:
    """The contrast of Hahn (2020) §5: run the engine on a model that recognises ``language``
    and check that the restriction it builds forces the answer — the output is constant over the
    dependency set, and every sampled completion of the restriction has the same membership
    (so no witness can exist)."""
    from hardsoft.languages import get_language

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

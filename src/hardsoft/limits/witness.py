"""Checkable witnesses (Hahn (2020) §5, Corollary 2): two inputs the model cannot tell apart
although exactly one of them is in the language.

Given the final restriction and the certified dependency set D of the output, the witness is a
pair x, x' that agree with the restriction and on D and differ only at free positions outside D.
The analysis proves the model's output is the same on both; :func:`verify` checks it by running
the model, and checks membership with the language's oracle.

* PARITY: x is any completion, x' flips one free position outside D.
* DYCK-k: x is a completion inside the language (see :func:`complete_dyck`); x' changes one free
  position outside D. A single substitution always leaves DYCK-k: it either changes the
  difference between openers and closers, or turns a matched pair into a mismatched one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from hardsoft.limits.restriction import Restriction


@dataclass
class Witness:
    """The pair, the model's outputs and the oracle's verdicts; ``verified`` only if the model
    accepts both or neither and exactly one is in the language."""

    x: str | None
    x_prime: str | None
    changed: list[int]  # 0-based positions where x and x' differ
    accept: bool | None = None
    accept_prime: bool | None = None
    in_language: tuple[bool, bool] | None = None
    predicted_accept: bool | None = None
    verified: bool = False
    reason: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["changed"] = [p + 1 for p in self.changed]
        d["in_language"] = list(self.in_language) if self.in_language else None
        return d


def _pairs(alphabet: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(alphabet[2 * t], alphabet[2 * t + 1]) for t in range(len(alphabet) // 2)]


def _assign_types(shape: list[int], syms: list[str | None], pairs) -> list[str] | None:
    """Given opener(+1)/closer(-1) for every position, match pairs with a stack and choose
    bracket types; None if two fixed symbols are mismatched or the shape is invalid."""
    opener = {o: t for t, (o, _) in enumerate(pairs)}
    closer = {c: t for t, (_, c) in enumerate(pairs)}
    out: list[str | None] = [None] * len(shape)
    stack: list[int] = []
    for i, s in enumerate(shape):
        if s > 0:
            stack.append(i)
            continue
        if not stack:
            return None
        j = stack.pop()
        tj = opener.get(syms[j]) if syms[j] is not None else None
        ti = closer.get(syms[i]) if syms[i] is not None else None
        if tj is not None and ti is not None and tj != ti:
            return None
        t = tj if tj is not None else (ti if ti is not None else 0)
        out[j], out[i] = pairs[t]
    if stack:
        return None
    return out  # type: ignore[return-value]


def _greedy_shape(syms: list[str | None], pairs, skip: set[int]) -> list[int] | None:
    """Openers as early as possible among free positions (maximises every prefix depth), over
    the positions not in ``skip``; None if no valid shape exists."""
    opens = {o for o, _ in pairs}
    pos = [i for i in range(len(syms)) if i not in skip]
    if len(pos) % 2:
        return None
    fixed_open = sum(1 for i in pos if syms[i] is not None and syms[i] in opens)
    need = len(pos) // 2 - fixed_open
    shape = [0] * len(syms)
    depth = 0
    for i in pos:
        s = syms[i]
        if s is None:
            if need > 0:
                shape[i], need = 1, need - 1
            else:
                shape[i] = -1
        else:
            shape[i] = 1 if s in opens else -1
        depth += shape[i]
        if depth < 0:
            return None
    if need != 0 or depth != 0:
        return None
    return shape


def complete_dyck(restriction: Restriction, alphabet: tuple[str, ...]) -> str | None:
    """A word in DYCK-k compatible with ``restriction``, or None if none was found.

    For one bracket type the greedy shape (openers as early as possible) is complete. For more
    types, fixed middle symbols are first paired with an adjacent free position (a
    self-contained matched pair), then the rest is shaped greedily and typed by stack matching;
    if that fails the plain greedy is tried. Both results are checked by the caller's oracle.
    """
    pairs = _pairs(alphabet)
    syms = list(restriction.symbols)
    n = len(syms)
    if n % 2:
        return None
    opens = {o: c for o, c in pairs}
    closes = {c: o for o, c in pairs}
    attempts = []
    if len(pairs) > 1:
        fixed = list(syms)
        used: set[int] = set()
        for i, s in enumerate(syms):
            if s is None or i in used:
                continue
            if s in closes and i - 1 >= 0 and syms[i - 1] is None and i - 1 not in used:
                # only pair if the closer is not the type the prefix/suffix already serves
                fixed[i - 1] = closes[s]
                used.update({i - 1, i})
            elif s in opens and i + 1 < n and syms[i + 1] is None and i + 1 not in used:
                fixed[i + 1] = opens[s]
                used.update({i, i + 1})
        attempts.append((fixed, used))
    attempts.append((syms, set()))
    for base, used in attempts:
        shape = _greedy_shape(base, pairs, used)
        if shape is None:
            continue
        sub = [i for i in range(n) if i not in used]
        typed = _assign_types([shape[i] for i in sub], [base[i] for i in sub], pairs)
        if typed is None:
            continue
        out = list(base)
        for i, s in zip(sub, typed):
            out[i] = s
        return "".join(out)  # type: ignore[arg-type]
    return None


def _pick_outside(restriction: Restriction, deps: np.ndarray, rng: np.random.Generator):
    dset = set(int(p) for p in deps)
    cands = [int(p) for p in restriction.free_positions() if int(p) not in dset]
    if not cands:
        return None
    return cands[int(rng.integers(len(cands)))]


def build_witness(
    restriction: Restriction, deps: np.ndarray, language, rng: np.random.Generator
) -> Witness:
    """Construct (not yet verify) the pair for ``language`` (a hardsoft Language)."""
    p = _pick_outside(restriction, deps, rng)
    if p is None:
        return Witness(None, None, [], reason="no free position outside the dependency set")
    name = language.name
    if name.startswith("parity"):
        x = restriction.random_completion(rng)
        flip = {"0": "1", "1": "0"}[x[p]]
    elif name.startswith("dyck"):
        x = complete_dyck(restriction, tuple(language.alphabet))
        if x is None:
            return Witness(
                None,
                None,
                [],
                reason="no DYCK word compatible with the restriction was found",
            )
        others = [a for a in restriction.alphabet if a != x[p]]
        flip = others[int(rng.integers(len(others)))]
    else:
        x = restriction.random_completion(rng)
        others = [a for a in restriction.alphabet if a != x[p]]
        flip = others[int(rng.integers(len(others)))]
    x_prime = x[:p] + flip + x[p + 1 :]
    return Witness(x, x_prime, [p])


def verify(model, witness: Witness, language, analysis=None) -> Witness:
    """Run the model and the oracle on both inputs; set ``verified`` and ``reason``."""
    if witness.x is None or witness.x_prime is None:
        witness.verified = False
        return witness
    with torch.no_grad():
        out = model(model.encode([witness.x, witness.x_prime]))
    acc = out.accept.cpu().numpy()
    witness.accept, witness.accept_prime = bool(acc[0]), bool(acc[1])
    mem = (bool(language.member(witness.x)), bool(language.member(witness.x_prime)))
    witness.in_language = mem
    if analysis is not None:
        witness.predicted_accept = analysis.predicted_accept(witness.x)
    same = witness.accept == witness.accept_prime
    one = mem[0] != mem[1]
    witness.verified = same and one
    if not same:
        witness.reason = "the model's outputs differ (the dependency analysis was unsound)"
    elif not one:
        witness.reason = "both or neither input is in the language"
    else:
        wrong = witness.x if mem[0] != witness.accept else witness.x_prime
        witness.reason = f"the model is wrong on the {'first' if wrong == witness.x else 'second'}"
    return witness

"""The attention gap of every hard head: certified, measured on inputs, or given.

A hard head's *gap* γ_h is, over the rows it covers, the smallest difference between the
maximal score and a score below it (ties with the maximum do not count: they are the tie set
T). Yang, Strobl, Chiang & Angluin (TACL 2026) set the softmax temperature by this gap. Each
head gets a lower bound ``γ_h(n) >= coef / n**power``:

* **measured** — exactly, on the rows of given inputs (the hard model is run with its trace and
  the scores recomputed as the model computes them; a tie is exact float equality, as in the
  hard model). The bound then covers those inputs only. For unique-hard heads a second pass
  measures the gap *after* the tie-break term (:func:`tiebreak`) on the same rows.
* **given** — one gap (a number or an expression in n) for every scored head, on trust.
* **certified** — from a grid the scores provably lie on (:mod:`hardsoft.convert.grid`), or
  declared by a compiled program and checked by its uniform–tieless checker.

Unique-hard heads are simulated with a position tie-break ``∓δ(n)·j/n`` added to the score,
``δ(n) = γ_h(n)/2``; the leftmost (rightmost) maximum then wins by ``≥ γ_h(n)/(2n)``
(docs/soften.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from hardsoft.convert.norms import bilinear_norm, blocks_of
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import Weighting, eval_tau
from hardsoft.model.transformer import Transformer

INF = math.inf
_MONOMIAL_PROBES = (2, 3, 5, 10, 100, 1000)


@dataclass
class HeadGap:
    """What is known about one head's scores. ``γ_h(n) >= coef / n**power`` (``coef = inf``:
    no row has a key below its maximum); ``tieless``: the maximum is never tied (so the tie
    set is one key); ``effective``: the measured gap after the tie-break (unique-hard heads,
    measured mode), else derived by :meth:`effective_gap`."""

    layer: int
    head: int
    weighting: Weighting
    uniform: bool
    coef: float = INF
    power: int = 0
    tieless: bool = False
    source: str = ""
    effective: float | None = None
    rows: int = 0
    tied_rows: int = 0

    @property
    def label(self) -> str:
        return f"layer {self.layer + 1} head {self.head + 1}"

    @property
    def needs_tiebreak(self) -> bool:
        return self.weighting.is_unique_hard and not self.tieless

    def tiebreak(self) -> tuple[float, int]:
        """``δ(n) = coef/n**power`` of the tie-break term (1 if the head has no gap bound)."""
        if self.coef == INF:
            return 1.0, 0
        return self.coef / 2.0, self.power

    def effective_gap(self) -> tuple[float, int]:
        """Lower bound ``coef/n**power`` on the gap softmax sees: after the tie-break for
        unique-hard heads (γ/(2n) where ties may occur), the hard gap otherwise."""
        if self.effective is not None:
            return self.effective, 0
        if self.needs_tiebreak:
            c, p = self.tiebreak()
            return c, p + 1  # min(γ − δ(n−1)/n, δ/n) = δ/n for δ = γ/2
        return self.coef, self.power

    def temperature_gap(self, fallback: tuple[float, int]) -> tuple[float, int]:
        """The gap the head's temperature is set by, ``τ_h(n) = θ·coef/n**power``: its
        effective gap, or ``fallback`` (the model's smallest) if no row has a key below the
        maximum; uniform average heads need no temperature (``(1, 0)``)."""
        if self.uniform and not self.weighting.is_unique_hard:
            return 1.0, 0
        c, p = self.effective_gap()
        return fallback if c == INF else (c, p)

    def gap_text(self) -> str | None:
        return _monomial_text(self.coef, self.power)

    def to_dict(self) -> dict[str, Any]:
        c, p = self.effective_gap()
        return {
            "layer": self.layer + 1,
            "head": self.head + 1,
            "weighting": str(self.weighting),
            "uniform": self.uniform,
            "tieless": self.tieless,
            "gap": self.gap_text(),
            "effective_gap": _monomial_text(c, p),
            "tiebreak": _monomial_text(*self.tiebreak()) if self.needs_tiebreak else None,
            "source": self.source,
            "rows": self.rows,
            "tied_rows": self.tied_rows,
        }


def _monomial_text(coef: float, power: int) -> str | None:
    if coef == INF:
        return None
    return f"{coef!r}" if power == 0 else f"{coef!r}/n**{power}"


def is_uniform(head: Any) -> bool:
    """Every allowed key scores 0 (``W_Q W_Kᵀ = 0`` exactly)."""
    return head.spec.d_head == 0 or bilinear_norm(head.W_Q, head.W_K) == 0.0


def hard_heads(model: Transformer) -> list[HeadGap]:
    """A blank :class:`HeadGap` per hard head (softmax heads are kept as they are)."""
    out = []
    for ell, block in enumerate(blocks_of(model)):
        for h, head in enumerate(block.heads):
            if head.spec.weighting.is_hard:
                out.append(HeadGap(ell, h, head.spec.weighting, is_uniform(head)))
    if not out:
        raise HardsoftError("the model has no hard attention heads: nothing to soften")
    return out


# ---------------------------------------------------------------------------- given
def parse_gap(text: str, n_max: int) -> tuple[float, int, str]:
    """A given gap (a number or an expression in n) as ``(coef, power, note)`` with
    ``gap(n) >= coef/n**power`` for n <= n_max; a gap <= 0 is a one-line error."""
    text = str(text).strip()
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is not None:
        if not (math.isfinite(value) and value > 0):
            raise HardsoftError(f"--gap must be a positive number, got {text}")
        return value, 0, "given"

    def at(n: int) -> float:
        try:
            return eval_tau(text, n)
        except HardsoftError as exc:
            msg = str(exc).replace("temperature expression", "gap").replace("temperature", "gap")
            raise HardsoftError(msg.replace("it must be positive", "a gap must be > 0")) from None

    c = at(1)
    for p in range(0, 9):
        if all(abs(at(n) * n**p - c) <= 1e-9 * c for n in _MONOMIAL_PROBES if n <= 10**6):
            return c, p, "given"
    ns = range(1, n_max + 1) if n_max <= 100_000 else np.unique(np.geomspace(1, n_max, 20000))
    low = min(at(int(n)) for n in ns)
    return low, 0, f"given; not of the form c/n^p, so its minimum over n <= {n_max} is used"


def given_gaps(model: Transformer, text: str, n_max: int) -> list[HeadGap]:
    coef, power, note = parse_gap(text, n_max)
    heads = hard_heads(model)
    for g in heads:
        if not g.uniform:
            g.coef, g.power, g.source = coef, power, note
        else:
            g.source = "uniform (every allowed key scores 0)"
    return heads


# ---------------------------------------------------------------------------- measured
@dataclass
class Measurement:
    """Measured gaps plus what else the bound can use on the same inputs: per coordinate, the
    largest |residual| entering each layer and after the last (``activations``), and the
    inputs' description."""

    heads: list[HeadGap]
    activations: list[torch.Tensor]
    inputs: dict[str, Any] = field(default_factory=dict)


def _full_allowed(head: Any, n: int, device: torch.device) -> torch.Tensor:
    """The head's allowed pairs ``[n, n]`` as a tensor (all true for the mask ``none``)."""
    allowed = head.allowed(torch.arange(n, device=device), n)
    return torch.ones(n, n, dtype=torch.bool, device=device) if allowed is None else allowed


def _head_rows(model: Transformer, tr: dict, g: HeadGap, n: int, delta: float | None):
    """Per-row (top, gap to the best key outside the tie set, tie count, has a key) of one
    head on one traced batch; with ``delta`` the gap after the tie-break ``∓delta·j/n``."""
    head = blocks_of(model)[g.layer].heads[g.head]
    pre = f"blocks.{g.layer}.attn.{g.head}"
    q, k = tr[f"{pre}.q"], tr[f"{pre}.k"]
    s = head.scores(q, k, n)  # as attention computes it
    allowed = _full_allowed(head, n, s.device)
    has = allowed.any(-1)[None, :].expand(s.shape[0], n)
    sm = s.masked_fill(~allowed, -INF)
    if g.weighting.is_unique_hard:
        pattern = tr.get(f"{pre}.pattern")  # absent where a fast path ran: the same rule
        if pattern is None:
            pattern = head.weights_from_scores(s, head.allowed(None, n))
        pick = pattern.argmax(-1, keepdim=True)  # the hard model's own choice
        top = sm.gather(-1, pick)
    else:
        top = sm.amax(-1, keepdim=True)
    tied = (sm == top) & allowed
    if delta is None:
        second = sm.masked_fill(tied, -INF).amax(-1)
        return has, (top[..., 0] - second), tied.sum(-1)
    sign = -1.0 if g.weighting == Weighting.LEFTMOST else 1.0
    j = torch.arange(1, n + 1, dtype=s.dtype, device=s.device) / n
    s2 = (s + sign * delta * j).masked_fill(~allowed, -INF)
    top2 = s2.gather(-1, pick)
    others = s2.scatter(-1, pick, -INF).amax(-1)
    return has, (top2[..., 0] - others), tied.sum(-1)


def _batches(words: list[str], cost_per_word):
    by_len: dict[int, list[str]] = {}
    for w in words:
        by_len.setdefault(len(w), []).append(w)
    for n, group in sorted(by_len.items()):
        size = max(1, (1 << 23) // max(1, cost_per_word(n)))
        for s in range(0, len(group), size):
            yield n, group[s : s + size]


@torch.no_grad()
def _measure_pass(model, words, heads, deltas, acts) -> None:
    n_heads = max(1, sum(len(b.heads) for b in model.blocks))
    for n, part in _batches(words, lambda n: n * n * (n_heads + 2)):
        tr = model(model.encode(part), trace=True).trace
        assert tr is not None
        if acts is not None:
            for ell in range(len(model.blocks) + 1):
                seen = tr[f"resid.{ell}"].detach().abs().amax((0, 1)).to("cpu", torch.float64)
                acts[ell] = seen if acts[ell] is None else torch.maximum(acts[ell], seen)
        for g in heads:
            key = (g.layer, g.head)
            if deltas is not None and key not in deltas:
                continue
            delta = None if deltas is None else deltas[key]
            has, gap, n_tied = _head_rows(model, tr, g, n, delta)
            gap = torch.where(has, gap, torch.full_like(gap, INF))
            value = float(gap.min()) if gap.numel() else INF
            if delta is None:
                g.coef = min(g.coef, value)
                g.rows += int(has.sum())
                g.tied_rows += int(((n_tied > 1) & has).sum())
            else:
                g.effective = min(INF if g.effective is None else g.effective, value)


def measured_gaps(model: Transformer, words: list[str], inputs: dict[str, Any]) -> Measurement:
    """Measure every hard head's gap exactly on ``words`` (two passes: the hard gaps, then the
    gaps after the tie-break for unique-hard heads) and the activations entering each layer."""
    if not words or not any(words):
        raise HardsoftError("no inputs to measure the gap on")
    words = [w for w in words if w]
    heads = hard_heads(model)
    acts: list[torch.Tensor | None] = [None] * (len(model.blocks) + 1)
    _measure_pass(model, words, heads, None, acts)
    for g in heads:
        g.tieless = g.tied_rows == 0
        g.source = f"measured on {inputs.get('description', 'the given inputs')}"
    deltas = {(g.layer, g.head): g.tiebreak()[0] for g in heads if g.needs_tiebreak}
    if deltas:
        _measure_pass(model, words, heads, deltas, None)
    for g in heads:
        if g.needs_tiebreak and g.effective is not None and g.effective <= 0:
            raise HardsoftError(
                f"{g.label}: the tie-break left a gap of {g.effective:g} on the inputs "
                "(scores too close for float64); no temperature can be certified"
            )
    return Measurement(heads, [a for a in acts if a is not None], inputs)


def read_words(path: str, alphabet: tuple[str, ...]) -> list[str]:
    """The words of a ``--gap-inputs`` file, one per line (blank lines skipped); a symbol
    outside the model's alphabet is a one-line error naming the line."""
    from hardsoft import validate

    text = validate.read_text(path, "--gap-inputs")  # names a non-UTF-8 line
    allowed = set(alphabet)
    words = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        w = line.strip()
        if not w:
            continue
        bad = next((a for a in w if a not in allowed), None)
        if bad is not None:
            raise HardsoftError(
                f"--gap-inputs line {line_no}: symbol {bad!r} is not in the model's alphabet "
                f"{''.join(alphabet)!r}"
            )
        words.append(w)
    if not words:
        raise HardsoftError(f"--gap-inputs file {str(path)!r} has no words")
    return words


def sample_words(
    alphabet: tuple[str, ...], n_max: int, count: int, seed: int
) -> tuple[list[str], dict[str, Any]]:
    """The stated sample used when no gap is given and none can be certified: ``count``
    uniform random words at each length 1, 2, 3, 4, 6, 8, 12, ... up to and including n_max."""
    rng = np.random.default_rng(seed)
    lengths = sorted({n for k in range(0, 64) for n in (2**k, 3 * 2 ** max(k - 1, 0))} | {n_max})
    lengths = [n for n in lengths if n <= n_max]
    words = []
    for n in lengths:
        codes = rng.integers(0, len(alphabet), size=(count, n))
        words += ["".join(alphabet[c] for c in row) for row in codes]
    info = {
        "kind": "sample",
        "count_per_length": count,
        "lengths": lengths,
        "seed": seed,
        "description": f"{count} uniform random words at each of the lengths {lengths} "
        f"(seed {seed})",
    }
    return words, info


# ---------------------------------------------------------------------------- certified
def declared_hints(model: Transformer) -> tuple[dict[tuple[int, int], str], set, set, set]:
    """What the model's compiler declares: program heads' gaps (``meta["heads"]``), tieless
    heads, average heads whose tied keys carry one value, and residual coordinates holding
    exact Booleans (the LTL compiler's ``meta["rounded"]``)."""
    meta = model.meta or {}
    gaps: dict[tuple[int, int], str] = {}
    tieless: set[tuple[int, int]] = set()
    one_value: set[tuple[int, int]] = set()
    for h in meta.get("heads") or []:
        key = (int(h.get("layer", -1)), int(h.get("head", -1)))
        if h.get("kind") == "tieless" and h.get("gap"):
            gaps[key] = str(h["gap"])
            tieless.add(key)
    cert = meta.get("certificate") or {}
    if cert.get("target") == "hard":
        for h in cert.get("heads") or []:
            key = (int(h.get("layer", -1)), int(h.get("head", -1)))
            gadget = str(h.get("gadget", ""))
            if gadget.startswith("lookup-"):
                tieless.add(key)
            elif gadget.startswith("sign-"):
                one_value.add(key)
    names = meta.get("residual") or []
    rounded = set((meta.get("rounded") or {}).values()) if cert.get("target") == "hard" else set()
    integral = {k for k, name in enumerate(names) if name in rounded}
    return gaps, tieless, one_value | tieless, integral


def certified_gaps(model: Transformer, n_max: int) -> list[HeadGap]:
    """Every hard head's gap from its declaration (programs) or the grid propagation
    (:mod:`hardsoft.convert.grid`); a head with neither is a one-line error."""
    from hardsoft.convert.grid import grid_gaps

    heads = hard_heads(model)
    declared, tieless, one_value, integral = declared_hints(model)
    grid = grid_gaps(model, one_value, integral)
    checked = (model.meta or {}).get("tieless_check") or {}
    for g in heads:
        key = (g.layer, g.head)
        g.tieless = key in tieless
        if g.uniform:
            g.source = "uniform (every allowed key scores 0)"
        elif key in declared:
            g.coef, g.power, _ = parse_gap(declared[key], n_max)
            verdict = "checked" if checked.get("uniform_tieless") else "not checked"
            g.source = f"declared by the program ({declared[key]}); {verdict} by its tieless check"
        elif grid[key].coef is not None:
            g.coef, g.power = float(grid[key].coef), grid[key].power  # type: ignore[arg-type]
            g.source = "grid: the scores lie on a known grid (docs/soften.md)"
        else:
            raise HardsoftError(
                f"cannot certify the gap of {g.label}: {grid[key].reason}; measure it with "
                "--gap-inputs FILE or give it with --gap G"
            )
    return heads


# ---------------------------------------------------------------------------- class propagation
CLASS_LIMIT = 20_000
"""Most residual classes per layer the class-propagation certificate builds."""


def class_gaps(model: Transformer, limit: int = CLASS_LIMIT) -> Measurement:
    """Certified gaps for every length n, for unique-hard models whose position features take
    finitely many values: the residual at any position of any word is one of finitely many
    class vectors (:func:`hardsoft.classes.propagation.propagate`), so every score a head can
    compute is an entry of its class score table. At a query of class c the maximum and the
    best score below it are two distinct entries of row c (at least the query's own score
    where the mask includes the query), so the smallest difference between consecutive
    distinct entries at or above that level bounds the gap from below, for every n. The
    activations are the class vectors' exact maxima. A model it does not apply to is a
    one-line error naming why."""
    from hardsoft.classes.propagation import propagate, unsupported

    reason = unsupported(model)
    if reason is not None:
        raise HardsoftError(reason)
    table = propagate(model, max_classes=limit)
    heads = hard_heads(model)
    for g in heads:
        ht = table.layers[g.layer].heads[g.head]
        g.coef = min((_row_gap(row, c, ht.mask.is_strict) for c, row in enumerate(ht.scores)),
                     default=INF)  # fmt: skip
        g.source = (
            f"class propagation: {len(ht.scores)} residual classes at layer {g.layer + 1}, "
            "gap over their exact score table (every n)"
        )
        g.rows = len(ht.scores)
    acts = [
        torch.from_numpy(np.abs(layer.vectors).max(axis=0)).to(torch.float64)
        for layer in table.layers
    ]
    info = {"kind": "classes", "classes": table.counts}
    return Measurement(heads, acts, info)


def _row_gap(row: np.ndarray, c: int, strict: bool) -> float:
    """Smallest difference between consecutive distinct scores of a row whose upper score can
    be a row maximum (at least the query's own score when the window contains the query)."""
    values = np.unique(row)[::-1]  # descending
    floor = -INF if strict else float(row[c])
    diffs = [float(a - b) for a, b in zip(values[:-1], values[1:]) if a >= floor]
    return min(diffs, default=INF)

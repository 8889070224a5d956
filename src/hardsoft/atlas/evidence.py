"""What a cell's evidence is, and the pieces every producer shares: the :class:`Evidence`
record, the :class:`Budget`, the row's oracle, the model-class check and the star-free
decision of a regular row.

The producers live beside this module, one job each: :mod:`.construct` (models built and
checked exactly: proofs), :mod:`.checks` (the checks that a cited theorem applies: proofs),
:mod:`.illustrate` (a restriction witness or Lemma 5 measured on one model: illustrations)
and :mod:`.learned` (training runs under a stated protocol: illustrations).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hardsoft.atlas.table import Column, EvidenceKind, Features, LayerNorm, Masks, Row, Status
from hardsoft.errors import HardsoftError
from hardsoft.languages import Language, get_language
from hardsoft.languages.regular import RegularLanguage, dfa_from_regex
from hardsoft.model.transformer import Transformer
from hardsoft.regular.starfree import decide_star_free

MODEL_FILE = "model.safetensors"
CHECK_FILE = "check.json"


@dataclass
class Evidence:
    """What a producer established for one cell: the status it supports (None: nothing), its
    kind, whether it agrees with the claim, one line with the numbers, the artefacts and the
    commands that regenerate and re-check them. ``check``: the applicability check (a proof
    that a cited theorem applies); ``illustration``: a witness or measurement on one model,
    shown beside the proof and never counted as one; ``decision``: the star-free decision of a
    regular row on the star-free column."""

    status: Status | None
    kind: EvidenceKind
    agrees: bool
    summary: str
    artefacts: dict[str, str] = field(default_factory=dict)  # name -> file (relative to out)
    commands: list[str] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)
    decision: dict[str, Any] | None = None
    check: dict[str, Any] | None = None
    illustration: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["status"] = None if self.status is None else self.status.value
        d["kind"] = self.kind.value
        return d


@dataclass(frozen=True)
class Budget:
    """How hard the evidence is checked: exhaustive lengths by alphabet size, random lengths
    and samples, and the seeds and models an illustration may try."""

    quick: bool

    def exhaustive(self, k: int) -> int:
        table = {2: 8, 3: 6, 4: 5} if self.quick else {2: 12, 3: 8, 4: 7}
        return table.get(k, 4 if self.quick else 5)

    @property
    def random_n(self) -> list[int]:
        return [64] if self.quick else [256, 1024, 4096]

    @property
    def samples(self) -> int:
        return 16 if self.quick else 64

    @property
    def seeds(self) -> int:
        return 4 if self.quick else 12

    @property
    def models(self) -> int:
        """Most random models an illustration tries."""
        return 16 if self.quick else 32


def rel(path: Path, out: Path) -> str:
    """``path`` relative to the atlas folder (artefacts are stored that way)."""
    return str(path.relative_to(out))


def row_language(row: Row) -> Language:
    """The row's oracle: the registered language, or (for a regular row whose language is not
    registered in this build) the language of its regular expression."""
    try:
        return get_language(row.language)
    except HardsoftError:
        if row.regex is None:
            raise
        return RegularLanguage(row.language, dfa_from_regex(row.regex, row.alphabet))


def registered(name: str) -> bool:
    """Whether ``name`` is a language of the registry (its oracle can be named on the CLI)."""
    try:
        get_language(name)
    except HardsoftError:
        return False
    return True


# ------------------------------------------------------------------ the model class
def class_violations(model: Transformer, col: Column) -> list[str]:
    """Where ``model`` leaves ``col``'s class (weightings, masks, position features, τ, layer
    norm); empty when it is a model of the class."""
    from hardsoft.model.features import parse_feature

    bad: list[str] = []
    heads = [h for b in model.blocks for h in b.heads]
    weightings = sorted({str(h.spec.weighting) for h in heads})
    extra = [w for w in weightings if col.weightings and w not in col.weightings]
    if extra:
        bad.append(f"uses {', '.join(extra)} attention")
    features = [f for f in model.spec.position_features if f != "1"]
    if col.features is Features.NONE and features:
        bad.append(f"uses position features {', '.join(features)}")
    if col.features is Features.BOUNDED:
        unbounded = [f for f in features if not parse_feature(f).bounded]
        if unbounded:
            bad.append(f"uses unbounded position features {', '.join(unbounded)}")
    if col.tau_one and any(h.spec.tau not in (None, "1") for h in heads):
        bad.append("uses a temperature τ(n) ≠ 1")
    masks = sorted({str(h.spec.mask) for h in heads})
    if col.masks is Masks.STRICT:
        loose = [m for m in masks if m not in ("strict-future", "strict-past")]
        if loose:
            bad.append(f"uses non-strict masks {', '.join(loose)}")
    if col.masks is Masks.NONE and any(m != "none" for m in masks):
        bad.append(f"uses masks {', '.join(m for m in masks if m != 'none')}")
    bad += _layer_norm_violations(model, col.layer_norm)
    return bad


def margin_violations(model: Transformer) -> list[str]:
    """Empty when the model's certificate states an output margin of ½ at every n it lists
    (the fixed margin of the layer-norm columns); else why not."""
    ln = ((model.meta or {}).get("certificate") or {}).get("layer_norm") or {}
    values = (ln.get("margin") or {}).get("values") or {}
    if not values:
        return ["its certificate states no margin"]
    low = min(float(v["margin"]) for v in values.values())
    return [] if low >= 0.5 else [f"its certified margin falls to {low:.3g}"]


def _layer_norm_violations(model: Transformer, want: LayerNorm) -> list[str]:
    has = str(model.spec.layer_norm) != "none"
    eps = float(model.spec.ln_eps)
    if want is LayerNorm.NONE and has:
        return ["has layer norm"]
    if want is LayerNorm.EPS_ZERO and has and eps != 0:
        return [f"has layer norm with ε = {eps:g}, not 0"]
    if want is LayerNorm.EPS_FIXED and has and eps <= 0:
        return ["has layer norm with ε = 0"]
    return []


# ------------------------------------------------------------------ star-free decision
def decision_record(row: Row) -> dict[str, Any]:
    """The star-free decision of the row's regular expression (JSON)."""
    if row.regex is None:
        raise HardsoftError(f"row {row.id} has no regular expression")
    dfa = dfa_from_regex(row.regex, row.alphabet)
    return {"regex": row.regex, "alphabet": row.alphabet, **decide_star_free(dfa).to_json()}

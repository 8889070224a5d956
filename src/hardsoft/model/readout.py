"""How a model's acceptance bit is read from its output at the last position.

Two readouts, declared per model (never guessed from its name):

* ``coordinate`` (the default, Hahn 2020 §3): accept iff output coordinate ``index`` (0) at the
  last position is > ``threshold`` (1/2). Compiled formulas, programs and random models use it.
* ``eos``: for a next-symbol predictor with ``d_out = |Σ| + 1`` logits (``hardsoft train``),
  accept iff the predicted probability of END-OF-SEQUENCE, ``softmax(y_n)[index]``, is
  > ``threshold``. Hahn's processes (Hahn 2020 §6, Theorem 6) can stop after a prefix exactly
  when the prefix is in the language (PARITY: an even number of 1s; 2DYCK: balanced), and
  then with a fixed probability ``P(EOS | ε)`` (the empty prefix is in both languages); after
  any other prefix the probability is 0. The threshold is the midpoint ``P(EOS | ε) / 2``, so
  a model that predicts the process exactly accepts exactly the language (``parity-even`` for
  the PARITY process, ``dyck2`` for 2DYCK).

A model declares its readout in ``meta["acceptance"]`` (``{"kind", "index", "threshold",
"language", "positions"}``); ``hardsoft train`` writes the ``eos`` readout of its process there (see
:mod:`hardsoft.learn.readout`, which also fills it in, by the process's declared name, for a
model file written before the readout was stored). A model that declares none gets the default.

``positions`` says where the readout means something: ``every`` (the default: the output at
position i decides the prefix of length i, as every future-masked or compiled model does) or
``last`` (an unmasked encoder that decides the whole word, read at its last position only,
Chiang & Cholak (2022)'s setting); ``hardsoft check`` compares only those positions.
This module asks no other layer: the readout is data on the model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch

from hardsoft.errors import HardsoftError

KINDS = ("coordinate", "eos")
POSITIONS = ("every", "last")


@dataclass(frozen=True)
class Acceptance:
    """``accept(y)`` for output rows ``y [..., d_out]`` (see the module docstring)."""

    kind: str = "coordinate"
    index: int = 0
    threshold: float = 0.5
    language: str | None = None  # the language the readout decides, where known
    positions: str = "every"  # where the readout decides a prefix: every position, or last

    def accept(self, y: torch.Tensor) -> torch.Tensor:
        """Boolean ``[...]``: the acceptance bit of each output row ``y [..., d_out]``."""
        if self.kind == "eos":
            return torch.softmax(y.to(torch.float64), dim=-1)[..., self.index] > self.threshold
        return y[..., self.index] > self.threshold

    def value(self, y: torch.Tensor) -> torch.Tensor:
        """The number the rule compares with its threshold: ``P(EOS)`` or the coordinate."""
        if self.kind == "eos":
            return torch.softmax(y.to(torch.float64), dim=-1)[..., self.index]
        return y[..., self.index]

    def describe(self) -> str:
        where = " (the last position only: the whole word)" if self.last_only else ""
        if self.kind == "eos":
            return f"P(EOS) = softmax(y_n)[{self.index}] > {self.threshold:g}{where}"
        return f"y_n[{self.index}] > {self.threshold:g}{where}"

    @property
    def last_only(self) -> bool:
        """Whether only the last position's output decides anything (an unmasked encoder)."""
        return self.positions == "last"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any], d_out: int) -> Acceptance:
        """Validate a declared readout against the model's output width."""
        try:
            acc = Acceptance(
                kind=str(d.get("kind", "coordinate")),
                index=int(d.get("index", 0)),
                threshold=float(d.get("threshold", 0.5)),
                language=d.get("language"),
                positions=str(d.get("positions", "every")),
            )
        except (TypeError, ValueError) as exc:
            raise HardsoftError(f"malformed acceptance readout {d!r} ({exc})") from None
        if acc.kind not in KINDS:
            raise HardsoftError(f"unknown acceptance readout {acc.kind!r} (one of {KINDS})")
        if acc.positions not in POSITIONS:
            raise HardsoftError(
                f"unknown acceptance positions {acc.positions!r} (one of {POSITIONS})"
            )
        if not 0 <= acc.index < d_out:
            raise HardsoftError(f"acceptance index {acc.index} is outside the {d_out} outputs")
        return acc


DEFAULT = Acceptance()


def eos_midpoint(index: int, p_end: float, language: str | None = None) -> Acceptance:
    """The ``eos`` readout at output ``index`` of a process that stops after a member prefix
    with probability ``p_end`` (``P(EOS | ε)``): accept iff ``P(EOS) > p_end / 2``."""
    return Acceptance("eos", index, p_end / 2.0, language)


def acceptance_of(model: Any) -> Acceptance:
    """The readout ``model`` declares (``meta["acceptance"]``), or the default coordinate-0
    readout."""
    meta = getattr(model, "meta", None) or {}
    declared = meta.get("acceptance")
    if declared:
        return Acceptance.from_dict(declared, model.spec.d_out)
    return DEFAULT


def output_names(model: Any) -> tuple[str, ...]:
    """The model's output names: ``spec.output_names``, or ``out0, out1, ...`` when unnamed."""
    names = tuple(getattr(model.spec, "output_names", ()) or ())
    return names or tuple(f"out{k}" for k in range(model.spec.d_out))

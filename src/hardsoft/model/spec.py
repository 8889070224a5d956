"""The model's configuration: plain frozen dataclasses, serialisable to JSON.

``ModelSpec`` fixes everything about a transformer except its weights: the alphabet, the width,
the position features, and per layer the heads (weighting function, mask, temperature τ(n)) and
the feed-forward width. Weights never depend on n; only position features and τ(n) may.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, TypeVar

from hardsoft.errors import HardsoftError


class _Option(str, Enum):
    """An option value that is also its plain string (``Mask.FUTURE == "future"``), so specs
    stay JSON and comparisons with literals keep working; printed as its value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def parse(cls: type[_E], value: object, what: str) -> _E:
        """The member whose value is ``value``; anything else is a one-line HardsoftError."""
        try:
            return cls(value)
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise HardsoftError(f"unknown {what} {value!r} (one of {known})") from None


_E = TypeVar("_E", bound=_Option)


class Weighting(_Option):
    """The attention weighting function of a head (Hahn 2020 §3; Yang et al. 2026 Def. 2)."""

    SOFTMAX = "softmax"
    LEFTMOST = "leftmost"
    RIGHTMOST = "rightmost"
    AVERAGE = "average"

    @property
    def is_hard(self) -> bool:
        """Exact hard attention (unique-hard or average-hard), no temperature."""
        return self is not Weighting.SOFTMAX

    @property
    def is_unique_hard(self) -> bool:
        """Leftmost or rightmost hardmax: one attended position (UHAT)."""
        return self in (Weighting.LEFTMOST, Weighting.RIGHTMOST)


class Mask(_Option):
    """Which key positions j a query position i may attend to. This is the one mask table of
    the model; analysis code asks :meth:`allows` instead of keeping its own copy."""

    NONE = "none"
    FUTURE = "future"  # j <= i
    STRICT_FUTURE = "strict-future"  # j < i
    PAST = "past"  # j >= i
    STRICT_PAST = "strict-past"  # j > i

    def allows(self, i: Any, j: Any) -> Any:
        """Whether key ``j`` is allowed for query ``i``: ints give a bool; numpy arrays or
        tensors broadcast to a Boolean array (``NONE`` gives all-true of the broadcast shape)."""
        if self is Mask.FUTURE:
            return j <= i
        if self is Mask.STRICT_FUTURE:
            return j < i
        if self is Mask.PAST:
            return j >= i
        if self is Mask.STRICT_PAST:
            return j > i
        return (j <= i) | (j > i)

    @property
    def is_strict(self) -> bool:
        """Excludes the query's own position (not a mask of a GPT-style decoder)."""
        return self in (Mask.STRICT_FUTURE, Mask.STRICT_PAST)

    @property
    def looks_right(self) -> bool:
        """Allows some key to the right of the query (not causal)."""
        return self in (Mask.NONE, Mask.PAST, Mask.STRICT_PAST)

    def block_may_be_allowed(self, q_start: int, q_end: int, k_start: int, k_end: int) -> bool:
        """Whether any pair of the block [q_start, q_end) × [k_start, k_end) is allowed."""
        return bool(self.allows(q_end - 1, k_start) or self.allows(q_start, k_end - 1))

    def block_fully_allowed(self, q_start: int, q_end: int, k_start: int, k_end: int) -> bool:
        """Whether every pair of the block is allowed (the corners decide, the masks being
        monotone in i − j)."""
        return all(self.allows(i, j) for i in (q_start, q_end - 1) for j in (k_start, k_end - 1))


class LayerNormPlacement(_Option):
    """Where layer normalisation sits: nowhere, before each sublayer, or after the residual."""

    NONE = "none"
    PRE = "pre"
    POST = "post"


WEIGHTINGS = tuple(w.value for w in Weighting)
HARD_WEIGHTINGS = tuple(w.value for w in Weighting if w.is_hard)
MASKS = tuple(m.value for m in Mask)
LAYER_NORMS = tuple(x.value for x in LayerNormPlacement)

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_FUNCS = {"log": math.log, "log2": math.log2, "sqrt": math.sqrt, "exp": math.exp}


def _check_expr(node: ast.AST, text: str) -> None:
    """Allow only numbers, ``n``, + - * / ** and log/log2/sqrt/exp calls."""
    if isinstance(node, ast.Expression):
        _check_expr(node.body, text)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _check_expr(node.left, text)
        _check_expr(node.right, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        _check_expr(node.operand, text)
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        pass
    elif isinstance(node, ast.Name) and node.id == "n":
        pass
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and len(node.args) == 1
        and not node.keywords
    ):
        _check_expr(node.args[0], text)
    else:
        raise HardsoftError(
            f"bad temperature expression {text!r}: use numbers, n, + - * / ** and log/sqrt/exp"
        )


def _eval_expr(node: ast.AST, n: float) -> float:
    if isinstance(node, ast.Expression):
        return _eval_expr(node.body, n)
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval_expr(node.left, n), _eval_expr(node.right, n))
    if isinstance(node, ast.UnaryOp):
        v = _eval_expr(node.operand, n)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, (int, float))  # _check_expr admits nothing else
        return float(node.value)
    if isinstance(node, ast.Name):
        return float(n)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _FUNCS[node.func.id](_eval_expr(node.args[0], n))


def parse_tau(text: str) -> ast.Expression:
    """Parse a temperature expression in ``n`` such as ``"1/(4*n)"``; errors are one line."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise HardsoftError(f"bad temperature expression {text!r}") from None
    _check_expr(tree, text)
    return tree


def eval_tau(text: str | None, n: int) -> float:
    """τ(n) for the expression ``text`` (None means τ = 1). Must be finite and positive."""
    if text is None:
        return 1.0
    try:
        value = _eval_expr(parse_tau(text), n)
    except (ZeroDivisionError, ValueError, OverflowError):
        raise HardsoftError(f"temperature {text!r} is undefined at n = {n}") from None
    if not (math.isfinite(value) and value > 0):
        raise HardsoftError(f"temperature {text!r} is {value} at n = {n}; it must be positive")
    return value


def _plain(obj: Any) -> Any:
    """``obj`` with option enums replaced by their string values (recursively)."""
    if isinstance(obj, _Option):
        return obj.value
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def validate_output_names(names: tuple[str, ...], d_out: int | None = None) -> None:
    """Output names are strings, non-empty, distinct and (given ``d_out``) one per output
    coordinate; an empty tuple means the outputs are unnamed."""
    if not names:
        return
    for name in names:
        if not isinstance(name, str):
            raise HardsoftError(f"an output name must be a string, got {name!r}")
        if not name.strip():
            raise HardsoftError("an output name is empty")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise HardsoftError(f"the output name {name!r} is given twice")
        seen.add(name)
    if d_out is not None and len(names) != d_out:
        raise HardsoftError(f"{len(names)} output names for {d_out} output coordinates")


def _names_field(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise HardsoftError(f"malformed model spec: output_names must be a list, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class HeadSpec:
    """One attention head.

    ``weighting``: softmax | leftmost | rightmost | average (hardmax variants are exact).
    ``mask``: none | future (j <= i) | strict-future (j < i) | past (j >= i) | strict-past (j > i).
    ``tau``: softmax temperature τ(n) as an expression in n (None: τ = 1); scores are divided
    by τ(n). ``scale``: also multiply scores by 1/sqrt(d_head).
    """

    weighting: Weighting = Weighting.SOFTMAX
    mask: Mask = Mask.NONE
    tau: str | None = None
    d_head: int = 8
    d_value: int | None = None
    scale: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "weighting", Weighting.parse(self.weighting, "weighting"))
        object.__setattr__(self, "mask", Mask.parse(self.mask, "mask"))

    @property
    def value_dim(self) -> int:
        return self.d_head if self.d_value is None else self.d_value

    @property
    def is_hard(self) -> bool:
        return self.weighting.is_hard

    def validate(self) -> None:
        if self.d_head < 0 or self.value_dim < 0:
            raise HardsoftError("head dimensions must be non-negative")
        if self.tau is not None:
            if self.weighting != "softmax":
                raise HardsoftError("a temperature only applies to softmax heads")
            parse_tau(self.tau)


@dataclass(frozen=True)
class LayerSpec:
    """One layer: attention heads (may be empty) then a ReLU feed-forward of width ``d_ff``
    (0 means no feed-forward sublayer). Both sublayers are residual."""

    heads: tuple[HeadSpec, ...] = ()
    d_ff: int = 0


@dataclass(frozen=True)
class ModelSpec:
    """A whole transformer: alphabet, width, position features, layers, layer norm, outputs.

    ``layer_norm``: none | pre (x + f(LN(x))) | post (LN(x + f(x))), with ``ln_eps`` (0 allowed).
    ``d_out``: width of the output map ``W_U``; coordinate 0 is the designated acceptance
    output, read at the last position (accept iff > 1/2).
    ``output_names``: names of the output coordinates (one per coordinate, non-empty and
    distinct), e.g. the named outputs of a compiled formula mapping; empty means unnamed.
    """

    alphabet: tuple[str, ...]
    d_model: int
    layers: tuple[LayerSpec, ...] = ()
    position_features: tuple[str, ...] = ()
    layer_norm: LayerNormPlacement = LayerNormPlacement.NONE
    ln_eps: float = 1e-5
    d_out: int = 1
    name: str = ""
    output_names: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        placement = LayerNormPlacement.parse(self.layer_norm, "layer_norm")
        object.__setattr__(self, "layer_norm", placement)
        object.__setattr__(self, "output_names", tuple(self.output_names))

    def validate(self) -> None:
        from hardsoft.model.features import parse_feature

        if not self.alphabet:
            raise HardsoftError("the alphabet is empty")
        if any(not isinstance(a, str) or len(a) != 1 for a in self.alphabet):
            raise HardsoftError("alphabet symbols must be single characters")
        if len(set(self.alphabet)) != len(self.alphabet):
            raise HardsoftError(f"the alphabet {''.join(self.alphabet)!r} repeats a symbol")
        if self.d_model < 1 or self.d_out < 1:
            raise HardsoftError("d_model and d_out must be positive")
        if self.ln_eps < 0:
            raise HardsoftError("ln_eps must be >= 0")
        validate_output_names(self.output_names, self.d_out)
        for f in self.position_features:
            parse_feature(f)
        for layer in self.layers:
            if layer.d_ff < 0:
                raise HardsoftError("d_ff must be >= 0")
            for head in layer.heads:
                head.validate()

    @property
    def position_dim(self) -> int:
        from hardsoft.model.features import parse_feature

        return sum(parse_feature(f).dim for f in self.position_features)

    @property
    def bounded_positions(self) -> bool:
        """True iff every position feature is bounded (Hahn's Lemma 5 assumption)."""
        from hardsoft.model.features import parse_feature

        return all(parse_feature(f).bounded for f in self.position_features)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (options as their strings)."""
        d = _plain(asdict(self))
        d["alphabet"] = list(self.alphabet)
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> ModelSpec:
        try:
            layers = tuple(
                LayerSpec(
                    heads=tuple(HeadSpec(**h) for h in layer.get("heads", [])),
                    d_ff=int(layer.get("d_ff", 0)),
                )
                for layer in d.get("layers", [])
            )
            spec = ModelSpec(
                alphabet=tuple(d["alphabet"]),
                d_model=int(d["d_model"]),
                layers=layers,
                position_features=tuple(d.get("position_features", ())),
                layer_norm=d.get("layer_norm", "none"),
                ln_eps=float(d.get("ln_eps", 1e-5)),
                d_out=int(d.get("d_out", 1)),
                name=d.get("name", ""),
                output_names=_names_field(d.get("output_names", ())),
                extra=dict(d.get("extra", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise HardsoftError(f"malformed model spec: {exc}") from None
        spec.validate()
        return spec

"""The model's configuration: plain frozen dataclasses, serialisable to JSON.

``ModelSpec`` fixes everything about a transformer except its weights: the alphabet, the width,
the position features, and per layer the heads (weighting function, mask, temperature τ(n)) and
the feed-forward width. Weights never depend on n; only position features and τ(n) may.
"""

from __future__ import annotations

import ast
import functools
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

TAU_MAX_LENGTH = 1000
"""Longest temperature expression accepted (characters)."""
TAU_MAX_DEPTH = 50
"""Deepest nesting accepted: evaluation is recursive, so depth is bounded before it starts."""
TAU_GRID = tuple(range(1, 65)) + tuple(2**k for k in range(7, 25)) + (10**3, 10**4, 10**5, 10**6)
"""The lengths n at which a temperature is checked when a model is built: τ(n) must be finite
and positive at each (1..64 and powers of two up to 2^24 = 16,777,216)."""


def _check_expr(tree: ast.AST, text: str) -> None:
    """Allow only numbers, ``n``, + - * / ** and log/log2/sqrt/exp calls, nested at most
    :data:`TAU_MAX_DEPTH` deep (checked without recursion, so 1000 unary minuses are a clean
    error instead of a RecursionError)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > TAU_MAX_DEPTH:
            raise HardsoftError(
                f"temperature expression {text[:40]!r}... is nested more than {TAU_MAX_DEPTH} deep"
            )
        if isinstance(node, ast.Expression):
            children = [node.body]
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            children = [node.left, node.right]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            children = [node.operand]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)
        ):
            children = []
        elif isinstance(node, ast.Name) and node.id == "n":
            children = []
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS
            and len(node.args) == 1
            and not node.keywords
        ):
            children = [node.args[0]]
        else:
            raise HardsoftError(
                f"bad temperature expression {text!r}: use numbers, n, + - * / ** and "
                "log/log2/sqrt/exp"
            )
        stack.extend((child, depth + 1) for child in children)


def _pow(a: float, b: float) -> float:
    """Real powers only: a negative base with a fractional exponent has no real value
    (Python would return a complex number)."""
    if a < 0 and not float(b).is_integer():
        raise ValueError("negative base with a fractional exponent")
    return float(operator.pow(a, b))


def _eval_expr(node: ast.AST, n: float) -> float:
    if isinstance(node, ast.Expression):
        return _eval_expr(node.body, n)
    if isinstance(node, ast.BinOp):
        left, right = _eval_expr(node.left, n), _eval_expr(node.right, n)
        if isinstance(node.op, ast.Pow):
            return _pow(left, right)
        return float(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        v = _eval_expr(node.operand, n)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, (int, float))  # _check_expr admits nothing else
        return float(node.value)
    if isinstance(node, ast.Name):
        return float(n)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return float(_FUNCS[node.func.id](_eval_expr(node.args[0], n)))


def parse_tau(text: str) -> ast.Expression:
    """Parse a temperature expression in ``n`` such as ``"1/(4*n)"``; errors are one line."""
    if not isinstance(text, str):
        raise HardsoftError(f"a temperature must be an expression string, got {text!r}")
    return _parse_tau(text)


@functools.lru_cache(maxsize=1024)
def _parse_tau(text: str) -> ast.Expression:
    if len(text) > TAU_MAX_LENGTH:
        raise HardsoftError(
            f"temperature expression is {len(text)} characters long (at most {TAU_MAX_LENGTH})"
        )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise HardsoftError(f"bad temperature expression {text[:60]!r}") from None
    _check_expr(tree, text)
    return tree


def eval_tau(text: str | None, n: int) -> float:
    """τ(n) for the expression ``text`` (None means τ = 1). Must be finite and positive."""
    if text is None:
        return 1.0
    try:
        value = _eval_expr(parse_tau(text), n)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        raise HardsoftError(f"temperature {text!r} is undefined at n = {n}") from None
    if not (math.isfinite(value) and value > 0):
        raise HardsoftError(f"temperature {text!r} is {value} at n = {n}; it must be positive")
    return value


def check_tau(text: str) -> None:
    """Refuse a temperature that is not finite and positive at every n of :data:`TAU_GRID`,
    so a model that could never run is rejected when it is built, not at its first input."""
    parse_tau(text)
    _check_tau_grid(text)


@functools.lru_cache(maxsize=1024)
def _check_tau_grid(text: str) -> None:
    for n in TAU_GRID:
        eval_tau(text, n)


def _require_int(value: Any, what: str, lo: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HardsoftError(f"{what} must be an integer, got {value!r}")
    if value < lo:
        raise HardsoftError(f"{what} must be >= {lo}, got {value}")


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
        _require_int(self.d_head, "d_head", 0)
        if self.d_value is not None:
            _require_int(self.d_value, "d_value", 0)
        if not isinstance(self.scale, bool):
            raise HardsoftError(f"scale must be true or false, got {self.scale!r}")
        if self.tau is not None:
            if self.weighting != "softmax":
                raise HardsoftError("a temperature only applies to softmax heads")
            check_tau(self.tau)


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
        from hardsoft import validate as checks
        from hardsoft.model.features import parse_feature

        checks.alphabet(self.alphabet)
        _require_int(self.d_model, "d_model", 1)
        _require_int(self.d_out, "d_out", 1)
        if isinstance(self.ln_eps, bool) or not isinstance(self.ln_eps, (int, float)):
            raise HardsoftError(f"ln_eps must be a number, got {self.ln_eps!r}")
        if not (math.isfinite(self.ln_eps) and self.ln_eps >= 0):
            raise HardsoftError(f"ln_eps must be finite and >= 0, got {self.ln_eps!r}")
        if not isinstance(self.name, str) or not isinstance(self.extra, dict):
            raise HardsoftError("a model's name must be a string and its extra a dict")
        validate_output_names(self.output_names, self.d_out)
        for f in self.position_features:
            if not isinstance(f, str):
                raise HardsoftError(f"a position feature must be a name, got {f!r}")
            parse_feature(f)
        for layer in self.layers:
            if not isinstance(layer, LayerSpec):
                raise HardsoftError(f"a layer must be a LayerSpec, got {layer!r}")
            _require_int(layer.d_ff, "d_ff", 0)
            for head in layer.heads:
                if not isinstance(head, HeadSpec):
                    raise HardsoftError(f"a head must be a HeadSpec, got {head!r}")
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
        """The spec stored in a model file's metadata. Types are checked, not coerced: a
        ``d_head`` of ``"8"`` or a ``tau`` of ``5`` is a malformed file, not a guess."""
        if not isinstance(d, dict):
            raise HardsoftError(f"malformed model spec: expected an object, got {_kind(d)}")
        try:
            layers = tuple(_layer_from_dict(layer) for layer in _list(d, "layers", []))
            spec = ModelSpec(
                alphabet=tuple(_list(d, "alphabet")),
                d_model=d["d_model"],
                layers=layers,
                position_features=tuple(_list(d, "position_features", [])),
                layer_norm=d.get("layer_norm", "none"),
                ln_eps=d.get("ln_eps", 1e-5),
                d_out=d.get("d_out", 1),
                name=d.get("name", ""),
                output_names=_names_field(d.get("output_names", ())),
                extra=d.get("extra", {}),
            )
        except KeyError as exc:
            raise HardsoftError(f"malformed model spec: missing {exc}") from None
        except (TypeError, ValueError) as exc:
            raise HardsoftError(f"malformed model spec: {exc}") from None
        spec.validate()
        return spec


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _list(d: dict[str, Any], key: str, default: Any = None) -> list | tuple:
    value = d[key] if default is None else d.get(key, default)
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{key!r} must be a list, got {_kind(value)}")
    return value


def _layer_from_dict(layer: Any) -> LayerSpec:
    if not isinstance(layer, dict):
        raise TypeError(f"a layer must be an object, got {_kind(layer)}")
    heads = []
    for h in _list(layer, "heads", []):
        if not isinstance(h, dict):
            raise TypeError(f"a head must be an object, got {_kind(h)}")
        heads.append(HeadSpec(**h))
    return LayerSpec(heads=tuple(heads), d_ff=layer.get("d_ff", 0))

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
from typing import Any

from hardsoft.errors import HardsoftError

WEIGHTINGS = ("softmax", "leftmost", "rightmost", "average")
HARD_WEIGHTINGS = ("leftmost", "rightmost", "average")
MASKS = ("none", "future", "strict-future", "past", "strict-past")
LAYER_NORMS = ("none", "pre", "post")

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


@dataclass(frozen=True)
class HeadSpec:
    """One attention head.

    ``weighting``: softmax | leftmost | rightmost | average (hardmax variants are exact).
    ``mask``: none | future (j <= i) | strict-future (j < i) | past (j >= i) | strict-past (j > i).
    ``tau``: softmax temperature τ(n) as an expression in n (None: τ = 1); scores are divided
    by τ(n). ``scale``: also multiply scores by 1/sqrt(d_head).
    """

    weighting: str = "softmax"
    mask: str = "none"
    tau: str | None = None
    d_head: int = 8
    d_value: int | None = None
    scale: bool = False

    @property
    def value_dim(self) -> int:
        return self.d_head if self.d_value is None else self.d_value

    @property
    def is_hard(self) -> bool:
        return self.weighting in HARD_WEIGHTINGS

    def validate(self) -> None:
        if self.weighting not in WEIGHTINGS:
            raise HardsoftError(f"unknown weighting {self.weighting!r} (one of {WEIGHTINGS})")
        if self.mask not in MASKS:
            raise HardsoftError(f"unknown mask {self.mask!r} (one of {MASKS})")
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
    """

    alphabet: tuple[str, ...]
    d_model: int
    layers: tuple[LayerSpec, ...] = ()
    position_features: tuple[str, ...] = ()
    layer_norm: str = "none"
    ln_eps: float = 1e-5
    d_out: int = 1
    name: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

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
        if self.layer_norm not in LAYER_NORMS:
            raise HardsoftError(f"unknown layer_norm {self.layer_norm!r} (one of {LAYER_NORMS})")
        if self.ln_eps < 0:
            raise HardsoftError("ln_eps must be >= 0")
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
        d = asdict(self)
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
                extra=dict(d.get("extra", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise HardsoftError(f"malformed model spec: {exc}") from None
        spec.validate()
        return spec

"""Craft: transformers written over *named* residual coordinates (Tracr's "craft" stage).

Compilers describe each layer as heads and neurons over names such as ``"tok:a"``,
``"pos:i/n"`` or ``"phi:3"``; :func:`assemble` turns that description into the weights of a
:class:`~hardsoft.model.Transformer`. Conventions:

* ``tok:<symbol>`` holds the one-hot of the input symbol, ``pos:<feature>`` the raw value of a
  scalar position feature (``pos:<feature>:<k>`` for coordinate k of a vector feature).
* a head's ``query``/``key`` are lists of linear forms (one per head dimension), so the score
  is ``Σ_d query[d](x_i) · key[d](x_j)``; ``output`` maps a target name to the linear form of
  the *key-side* residual whose attention-weighted average is added to that target.
* a :class:`Neuron` adds ``weight · ReLU(inputs(x) + bias)`` to each of its output names.

The residual is additive, so a target coordinate must be 0 before a gadget writes to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.features import parse_feature
from hardsoft.model.spec import HeadSpec, LayerNormPlacement, LayerSpec, Mask, ModelSpec, Weighting
from hardsoft.model.transformer import Block, Transformer

LinearForm = dict[str, float]


class Residual:
    """An ordered set of named residual coordinates."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._index: dict[str, int] = {}

    def add(self, name: str) -> str:
        if name in self._index:
            raise ValueError(f"residual coordinate {name!r} allocated twice")
        self._index[name] = len(self.names)
        self.names.append(name)
        return name

    def __contains__(self, name: str) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no residual coordinate named {name!r}") from None

    @property
    def dim(self) -> int:
        return len(self.names)


@dataclass
class AttentionHead:
    """One head over named coordinates (see the module docstring)."""

    weighting: str
    mask: str
    query: list[LinearForm]
    key: list[LinearForm]
    output: dict[str, LinearForm]
    tau: str | None = None


@dataclass
class Neuron:
    """``weight · ReLU(inputs·x + bias)`` added to every ``outputs`` name."""

    inputs: LinearForm
    bias: float
    outputs: dict[str, float]


@dataclass
class Embedding:
    """Layer 0, the output biases and the layer norm of an assembled model. By default token
    ``a`` writes 1 to ``tok:a`` and a raw feature coordinate ``pos:f`` writes its value to
    itself; ``tokens`` / ``features`` replace that per symbol / per raw feature coordinate by
    a linear form over residual names (e.g. a ±1 pair); ``output_bias`` is ``b_U``."""

    tokens: dict[str, LinearForm] = field(default_factory=dict)
    features: dict[str, LinearForm] = field(default_factory=dict)
    output_bias: tuple[float, ...] = ()
    layer_norm: LayerNormPlacement = LayerNormPlacement.NONE
    ln_eps: float = 1e-5

    def token_form(self, symbol: str) -> LinearForm:
        return self.tokens.get(symbol, {token_name(symbol): 1.0})

    def feature_form(self, raw: str) -> LinearForm:
        return self.features.get(raw, {raw: 1.0})


@dataclass
class CraftLayer:
    heads: list[AttentionHead] = field(default_factory=list)
    neurons: list[Neuron] = field(default_factory=list)
    output_bias: LinearForm = field(default_factory=dict)


def token_name(symbol: str) -> str:
    return f"tok:{symbol}"


def feature_names(feature: str) -> list[str]:
    """Residual names of a position feature's coordinates."""
    f = parse_feature(feature)
    return [f"pos:{f.name}"] if f.dim == 1 else [f"pos:{f.name}:{k}" for k in range(f.dim)]


def standard_residual(alphabet: Iterable[str], features: Iterable[str]) -> Residual:
    """A residual with ``tok:<a>`` for every symbol and ``pos:<f>`` for every feature."""
    res = Residual()
    for a in alphabet:
        res.add(token_name(a))
    for f in features:
        for name in feature_names(f):
            res.add(name)
    return res


def _fill_form(weight: torch.Tensor, col: int, form: LinearForm, res: Residual) -> None:
    for name, coef in form.items():
        weight[res[name], col] += coef


def _fill_layer(block: Block, layer: CraftLayer, residual: Residual) -> None:
    """Write one craft layer's heads and neurons into ``block``'s (zero) weights."""
    for head, h in zip(block.heads, layer.heads):
        for d, (qf, kf) in enumerate(zip(h.query, h.key)):
            _fill_form(head.W_Q, d, qf, residual)
            _fill_form(head.W_K, d, kf, residual)
        for m, (target, vf) in enumerate(h.output.items()):
            _fill_form(head.W_V, m, vf, residual)
            head.W_O[m, residual[target]] = 1.0
    for u, neuron in enumerate(layer.neurons):
        _fill_form(block.W_in, u, neuron.inputs, residual)
        block.b_in[u] = neuron.bias
        for target, w in neuron.outputs.items():
            block.W_out[u, residual[target]] += w
    for target, b in layer.output_bias.items():
        block.b_out[residual[target]] += b


def assemble(
    *,
    alphabet: Iterable[str],
    position_features: Iterable[str],
    residual: Residual,
    layers: list[CraftLayer],
    outputs: Sequence[str | LinearForm],
    output_names: tuple[str, ...] = (),
    name: str = "",
    meta: dict | None = None,
    dtype: torch.dtype = torch.float64,
    embedding: Embedding | None = None,
) -> Transformer:
    """Build the Transformer whose weights realise ``layers``. ``outputs`` are what ``W_U``
    reads, one per output (output 0 is the acceptance coordinate): a residual coordinate's
    name, or a linear form of the residual (a constant term through the feature ``pos:1``);
    ``output_names`` optionally names the outputs. ``embedding`` (default: one-hot tokens
    and raw features, no layer norm) sets the layer-0 forms, the output biases and the
    layer norm."""
    emb = embedding or Embedding()
    alphabet = tuple(alphabet)
    features = tuple(position_features)
    spec_layers = []
    for layer in layers:
        heads = tuple(
            HeadSpec(
                weighting=Weighting.parse(h.weighting, "weighting"),
                mask=Mask.parse(h.mask, "mask"),
                tau=h.tau,
                d_head=len(h.query),
                d_value=len(h.output),
            )
            for h in layer.heads
        )
        for h in layer.heads:
            if len(h.query) != len(h.key):
                raise HardsoftError("craft head: query and key need the same number of forms")
        spec_layers.append(LayerSpec(heads=heads, d_ff=len(layer.neurons)))
    spec = ModelSpec(
        alphabet=alphabet,
        d_model=residual.dim,
        layers=tuple(spec_layers),
        position_features=features,
        d_out=len(outputs),
        name=name,
        output_names=tuple(output_names),
        layer_norm=emb.layer_norm,
        ln_eps=emb.ln_eps,
    )
    model = Transformer(spec, dtype=torch.float64)
    with torch.no_grad():
        for a_idx, a in enumerate(alphabet):
            for target, w in emb.token_form(a).items():
                if target in residual:
                    model.W_E[a_idx, residual[target]] += w
        row = 0
        for f in features:
            for nm in feature_names(f):
                for target, w in emb.feature_form(nm).items():
                    if target in residual:
                        model.W_pos[row, residual[target]] += w
                row += 1
        for block, layer in zip(model.blocks, layers):
            _fill_layer(block, layer, residual)
        for k, out in enumerate(outputs):
            for name, coef in ({out: 1.0} if isinstance(out, str) else out).items():
                model.W_U[residual[name], k] += coef
        for k, b in enumerate(emb.output_bias):
            model.b_U[k] += b
    model.meta = dict(meta or {})
    model.meta.setdefault("residual", list(residual.names))
    return model.to(dtype)


# ---- feed-forward gadgets on exact Booleans / integers ------------------------------------


def round_bool(src: LinearForm | str, dst: str) -> list[Neuron]:
    """``dst += round(x)`` with ``round(x) = ReLU(3x − 1) − ReLU(3x − 2)``: maps an approximate
    Boolean (x in [0, 1/3] or [2/3, 1]) to exactly 0 or 1 (Yang et al.
    (arXiv:2412.09925v1) Lemma 9)."""
    form = {src: 1.0} if isinstance(src, str) else src
    three = {k: 3.0 * v for k, v in form.items()}
    return [Neuron(three, -1.0, {dst: 1.0}), Neuron(three, -2.0, {dst: -1.0})]


def ramp(form: LinearForm, lo: float, hi: float, dst: str) -> list[Neuron]:
    """``dst += clip((x − lo)/(hi − lo), 0, 1)``: exactly 0 for ``x <= lo`` and exactly 1 for
    ``x >= hi`` (two ReLUs); the step that reads a value known to avoid ``(lo, hi)``."""
    width = hi - lo
    if width <= 0:
        raise ValueError(f"ramp needs lo < hi, got {lo} >= {hi}")
    return [
        Neuron(dict(form), -lo, {dst: 1.0 / width}),
        Neuron(dict(form), -hi, {dst: -1.0 / width}),
    ]

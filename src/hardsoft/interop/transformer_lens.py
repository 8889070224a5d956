"""hardsoft models as TransformerLens ``HookedTransformer`` s, and back.

**Export** (:func:`transformer_lens_weights`, :func:`to_transformer_lens`). A hardsoft model
becomes TransformerLens's config and state dict, weight for weight:

* tokens are alphabet indices (``W_E`` row k is symbol k) and there is no BOS token;
* the position features at positions ``1..n_ctx`` are computed and projected once, giving the
  table ``W_pos [n_ctx, d_model]`` (TransformerLens's "standard" positional embedding);
* each head's score factor (1/τ(n) and 1/sqrt(d_head)) is folded into ``W_Q`` for the exported
  length, so the config sets ``use_attn_scale=False``;
* heads of different ``d_head`` / value widths are zero-padded to one ``d_head``; layers with
  fewer heads or no feed-forward get zero weights (a zero head adds exactly zero);
* hardsoft's pre layer norm is TransformerLens's ``"LN"`` (with ``ln_final``).

So ``logits[..., k]`` is hardsoft's output coordinate k at every position. Position features
or a temperature that depend on n (``i/n``, ``[i=n]``, τ(n) = 1/n, ...) make the export exact
for inputs of length exactly ``n_ctx`` only: :attr:`TLExport.length_dependent` says so, with the
reasons, and :func:`to_transformer_lens` warns.

What TransformerLens cannot express is a one-line :class:`HardsoftError` naming the head: hard
heads (TransformerLens has only softmax), strict or ``past`` masks, a model mixing ``none`` and
``future`` masks (TransformerLens has one ``attention_dir`` per model), post layer norm.

**Import** (:func:`from_transformer_lens`): a ``HookedTransformer`` built in Python (standard
positions, ReLU MLPs, LN / LNPre / no norm, causal or bidirectional attention) becomes a hardsoft
:class:`Transformer` with the position feature ``learned:n_ctx``, so ``sensitivity``, ``check``
and the other engines run on it. Nonzero attention biases (``b_Q, b_K, b_V, b_O``) are refused:
hardsoft heads have none, and a constant residual coordinate would change what a layer norm
computes.
"""

from __future__ import annotations

import math
import string
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.features import feature_matrix, parse_feature
from hardsoft.model.spec import (
    HeadSpec,
    LayerNormPlacement,
    LayerSpec,
    Mask,
    ModelSpec,
    Weighting,
    eval_tau,
)
from hardsoft.model.transformer import Block, Head, Transformer

if TYPE_CHECKING:  # the interop extra is optional
    from transformer_lens import HookedTransformer

__all__ = [
    "TLExport",
    "from_transformer_lens",
    "to_transformer_lens",
    "transformer_lens_weights",
]

INSTALL_HINT = "install the interop extra: pip install 'hardsoft[interop]'"


@dataclass
class TLExport:
    """TransformerLens's view of a hardsoft model at context length ``n_ctx``.

    ``config``: keyword arguments of ``HookedTransformerConfig`` (``dtype`` as its name, e.g.
    ``"float64"``, so the dict is JSON). ``state_dict``: the parameters under TransformerLens's
    names. ``length_dependent``: position features or τ change with n, so the export is exact for
    inputs of length ``n_ctx`` only (``reasons`` says which); otherwise for every n <= n_ctx.
    """

    config: dict[str, Any]
    state_dict: dict[str, torch.Tensor]
    n_ctx: int
    length_dependent: bool
    reasons: list[str] = field(default_factory=list)

    @property
    def exact_lengths(self) -> str:
        """The input lengths on which the export computes hardsoft's function, in words."""
        if self.length_dependent:
            return f"n = {self.n_ctx} only"
        return f"1 <= n <= {self.n_ctx}"

    def torch_config(self) -> dict[str, Any]:
        """``config`` with ``dtype`` as a torch dtype (what ``HookedTransformerConfig`` takes)."""
        return {**self.config, "dtype": getattr(torch, self.config["dtype"])}


def _head_name(layer: int, head: int) -> str:
    return f"head {head} of layer {layer} (blocks.{layer}.heads.{head})"


def _attention_dir(spec: ModelSpec) -> str:
    """TransformerLens's one ``attention_dir`` for the model, or an error naming the head."""
    seen: tuple[Mask, str] | None = None
    for ell, layer in enumerate(spec.layers):
        for h, head in enumerate(layer.heads):
            where = _head_name(ell, h)
            if head.weighting is not Weighting.SOFTMAX:
                raise HardsoftError(
                    f"{where} uses {head.weighting} attention; TransformerLens has only softmax"
                )
            if head.mask not in (Mask.NONE, Mask.FUTURE):
                raise HardsoftError(
                    f"{where} has the {head.mask} mask; TransformerLens has only causal "
                    "(future: j <= i) and bidirectional (none) attention"
                )
            if seen is None:
                seen = (head.mask, where)
            elif head.mask is not seen[0]:
                raise HardsoftError(
                    f"{where} has the {head.mask} mask but {seen[1]} has {seen[0]}; "
                    "TransformerLens has one attention direction per model"
                )
    return "bidirectional" if seen is not None and seen[0] is Mask.NONE else "causal"


def _length_dependence(model: Transformer, n_ctx: int) -> list[str]:
    """Why the model's function at length m < n_ctx differs from the table at n_ctx, if it does:
    position features whose values at positions 1..m change with n, temperatures τ(n) that are
    not constant on 1..n_ctx (both checked exactly, length by length)."""
    reasons = []
    for name in model.spec.position_features:
        feature = parse_feature(name)  # n_ctx²/2 values in all: the check is quadratic
        full = feature.compute(n_ctx, torch.float64)
        if any(
            not torch.equal(full[:m], feature.compute(m, torch.float64)) for m in range(1, n_ctx)
        ):
            reasons.append(f"position feature {name!r} depends on n")
    for ell, layer in enumerate(model.spec.layers):
        for h, head in enumerate(layer.heads):
            if head.tau is None:
                continue
            top = eval_tau(head.tau, n_ctx)
            try:
                constant = all(eval_tau(head.tau, m) == top for m in range(1, n_ctx))
            except HardsoftError:
                constant = False
            if not constant:
                reasons.append(f"{_head_name(ell, h)} has temperature τ(n) = {head.tau}")
    return reasons


def _tl_config(model: Transformer, n_ctx: int, attention_dir: str) -> dict[str, Any]:
    spec = model.spec
    if spec.layer_norm is LayerNormPlacement.POST:
        raise HardsoftError(
            "the model uses post layer norm (LN(x + f(x))); TransformerLens has only pre-norm"
        )
    widths = [max(h.d_head, h.value_dim) for layer in spec.layers for h in layer.heads]
    d_mlp = max([layer.d_ff for layer in spec.layers], default=0)
    return {
        "n_layers": len(spec.layers),
        "d_model": spec.d_model,
        "n_ctx": n_ctx,
        "d_head": max([1, *widths]),
        "n_heads": max([1, *(len(layer.heads) for layer in spec.layers)]),
        "d_mlp": d_mlp if d_mlp else None,
        "attn_only": d_mlp == 0,
        "act_fn": "relu",
        "d_vocab": len(spec.alphabet),
        "d_vocab_out": spec.d_out,
        "normalization_type": "LN" if spec.layer_norm is LayerNormPlacement.PRE else None,
        "eps": spec.ln_eps,
        "attention_dir": attention_dir,
        "positional_embedding_type": "standard",
        "use_attn_scale": False,
        "default_prepend_bos": False,
        "init_weights": False,
        "model_name": spec.name or "hardsoft-model",
        "dtype": str(model.dtype).removeprefix("torch."),
        "device": "cpu",
    }


def _blocks(model: Transformer) -> list[Block]:
    return cast("list[Block]", list(model.blocks))


def _block_weights(model: Transformer, cfg: dict[str, Any], n_ctx: int) -> dict[str, torch.Tensor]:
    """Attention, MLP and layer-norm tensors of every block, zero-padded to the config's sizes."""
    d, H, dh, dt = cfg["d_model"], cfg["n_heads"], cfg["d_head"], model.dtype
    sd: dict[str, torch.Tensor] = {}
    for ell, block in enumerate(_blocks(model)):
        p = f"blocks.{ell}"
        W = {k: torch.zeros(H, d, dh, dtype=dt) for k in ("W_Q", "W_K", "W_V")}
        W_O = torch.zeros(H, dh, d, dtype=dt)
        for h, head in enumerate(cast("list[Head]", list(block.heads))):
            k, v = head.spec.d_head, head.spec.value_dim
            W["W_Q"][h, :, :k] = head.W_Q.detach() * head.score_scale(n_ctx)
            W["W_K"][h, :, :k] = head.W_K.detach()
            W["W_V"][h, :, :v] = head.W_V.detach()
            W_O[h, :v] = head.W_O.detach()
        sd.update({f"{p}.attn.{k}": t for k, t in W.items()})
        sd[f"{p}.attn.W_O"] = W_O
        for b in ("b_Q", "b_K", "b_V"):
            sd[f"{p}.attn.{b}"] = torch.zeros(H, dh, dtype=dt)
        sd[f"{p}.attn.b_O"] = torch.zeros(d, dtype=dt)
        if not cfg["attn_only"]:
            m, f = cfg["d_mlp"], block.spec.d_ff
            sd[f"{p}.mlp.W_in"] = torch.zeros(d, m, dtype=dt)
            sd[f"{p}.mlp.b_in"] = torch.zeros(m, dtype=dt)
            sd[f"{p}.mlp.W_out"] = torch.zeros(m, d, dtype=dt)
            sd[f"{p}.mlp.W_in"][:, :f] = block.W_in.detach()
            sd[f"{p}.mlp.b_in"][:f] = block.b_in.detach()
            sd[f"{p}.mlp.W_out"][:f] = block.W_out.detach()
            # a layer without feed-forward never adds its (unused) b_out in hardsoft
            sd[f"{p}.mlp.b_out"] = block.b_out.detach().clone() if f else torch.zeros(d, dtype=dt)
        if cfg["normalization_type"] == "LN":
            for ln in ("ln1", "ln2"):
                sd[f"{p}.{ln}.w"] = getattr(block, ln).weight.detach().clone()
                sd[f"{p}.{ln}.b"] = getattr(block, ln).bias.detach().clone()
    return sd


def transformer_lens_weights(model: Transformer, n_ctx: int) -> TLExport:
    """TransformerLens's config and state dict for ``model`` at context length ``n_ctx``
    (pure torch: TransformerLens itself is not needed). See the module docstring for the
    mapping; anything TransformerLens cannot express is a one-line HardsoftError."""
    if n_ctx < 1:
        raise HardsoftError(f"--n-ctx must be >= 1, got {n_ctx}")
    cfg = _tl_config(model, n_ctx, _attention_dir(model.spec))
    positions = feature_matrix(model.spec.position_features, n_ctx, torch.float64)
    sd: dict[str, torch.Tensor] = {
        "embed.W_E": model.W_E.detach().clone(),
        "pos_embed.W_pos": (positions @ model.W_pos.detach().double()).to(model.dtype),
    }
    sd.update(_block_weights(model, cfg, n_ctx))
    if cfg["normalization_type"] == "LN":
        sd["ln_final.w"] = model.ln_final.weight.detach().clone()
        sd["ln_final.b"] = model.ln_final.bias.detach().clone()
    sd["unembed.W_U"] = model.W_U.detach().clone()
    sd["unembed.b_U"] = model.b_U.detach().clone()
    reasons = _length_dependence(model, n_ctx)
    return TLExport(cfg, sd, n_ctx, bool(reasons), reasons)


def _import_tl() -> Any:
    try:
        import transformer_lens
    except ImportError:
        raise HardsoftError(f"TransformerLens is not installed ({INSTALL_HINT})") from None
    if not hasattr(transformer_lens, "HookedTransformer") or _tl_major() >= 4:
        raise HardsoftError(
            "this TransformerLens has no HookedTransformer (removed in 4.0); "
            "install transformer_lens>=2.16,<4"
        )
    return transformer_lens


def _tl_major() -> int:
    from importlib.metadata import version

    return int(version("transformer_lens").split(".")[0])


def build_hooked(export: TLExport) -> HookedTransformer:
    """A ``HookedTransformer`` from an export (its buffers from TransformerLens, its
    parameters from the export; a parameter the export lacks is an error)."""
    tl = _import_tl()
    with warnings.catch_warnings():  # 3.x deprecates HookedTransformer in favour of 4.0's bridge
        warnings.simplefilter("ignore", DeprecationWarning)
        cfg = tl.HookedTransformerConfig(**export.torch_config())
        hooked = tl.HookedTransformer(cfg)
    params = dict(hooked.named_parameters())
    missing = sorted(set(params) - set(export.state_dict))
    unexpected = sorted(set(export.state_dict) - set(params))
    if missing or unexpected:
        raise HardsoftError(
            f"TransformerLens {_tl_version()} expects other weights (missing {missing[:3]}, "
            f"unexpected {unexpected[:3]})"
        )
    hooked.load_state_dict(export.state_dict, strict=False)
    hooked.eval()
    return hooked


def _tl_version() -> str:
    from importlib.metadata import version

    return version("transformer_lens")


def to_transformer_lens(model: Transformer, n_ctx: int) -> HookedTransformer:
    """``model`` as a TransformerLens ``HookedTransformer`` for inputs of length <= ``n_ctx``
    (exactly ``n_ctx`` when position features or τ depend on n: a warning says so).
    ``hooked(tokens)[..., k]`` is hardsoft's output coordinate k at every position."""
    export = transformer_lens_weights(model, n_ctx)
    if export.length_dependent:
        warnings.warn(
            f"exported for inputs of length exactly {n_ctx}: {'; '.join(export.reasons)}",
            stacklevel=2,
        )
    return build_hooked(export)


# ----------------------------------------------------------------------------------------------
# import

# Config fields whose value must be one of these for the model to be a hardsoft transformer
# (read with getattr, so fields a TransformerLens version lacks count as their default).
_TL_REQUIRED: dict[str, tuple[Any, ...]] = {
    "positional_embedding_type": ("standard",),
    "act_fn": ("relu",),
    "normalization_type": (None, "LN", "LNPre"),
    "attention_dir": ("causal", "bidirectional"),
    "gated_mlp": (False, None),
    "parallel_attn_mlp": (False, None),
    "n_key_value_heads": (None,),
    "num_experts": (None,),
    "final_rms": (False, None),
    "post_embedding_ln": (False, None),
    "use_local_attn": (False, None),
    "scale_attn_by_inverse_layer_idx": (False, None),
    "use_qk_norm": (False, None),
    "clip_qkv": (None,),
    "use_logn_attn": (False, None),
    "use_attention_sinks": (False, None),
    "use_normalization_before_and_after": (False, None),
    "attn_scores_soft_cap": (-1.0, None),
    "output_logits_soft_cap": (-1.0, None),
}


def _check_tl_config(cfg: Any) -> None:
    for name, allowed in _TL_REQUIRED.items():
        value = getattr(cfg, name, allowed[0])
        if value not in allowed:
            raise HardsoftError(
                f"the TransformerLens model has {name}={value!r}; hardsoft transformers need "
                f"{' or '.join(repr(a) for a in allowed)}"
            )


def _tl_alphabet(d_vocab: int, alphabet: str | None) -> tuple[str, ...]:
    symbols = alphabet if alphabet is not None else (string.digits + string.ascii_letters)
    if alphabet is None and d_vocab > len(symbols):
        raise HardsoftError(
            f"d_vocab = {d_vocab} exceeds the default alphabet (0-9, a-z, A-Z): pass alphabet="
        )
    if len(symbols) < d_vocab or (alphabet is not None and len(alphabet) != d_vocab):
        raise HardsoftError(f"the alphabet needs {d_vocab} symbols (d_vocab), got {len(symbols)}")
    return tuple(symbols[:d_vocab])


def _tl_spec(cfg: Any, alphabet: tuple[str, ...], scale: bool) -> ModelSpec:
    mask = Mask.FUTURE if cfg.attention_dir == "causal" else Mask.NONE
    head = HeadSpec(weighting=Weighting.SOFTMAX, mask=mask, d_head=cfg.d_head, scale=scale)
    d_ff = 0 if cfg.attn_only else int(cfg.d_mlp)
    norm = LayerNormPlacement.NONE if cfg.normalization_type is None else LayerNormPlacement.PRE
    return ModelSpec(
        alphabet=alphabet,
        d_model=cfg.d_model,
        layers=tuple(
            LayerSpec(heads=(head,) * cfg.n_heads, d_ff=d_ff) for _ in range(cfg.n_layers)
        ),
        position_features=(f"learned:{cfg.n_ctx}",),
        layer_norm=norm,
        ln_eps=float(cfg.eps),
        d_out=cfg.d_vocab_out,
        name=f"transformer-lens:{getattr(cfg, 'model_name', '') or 'model'}",
    )


def _refuse_attention_biases(hooked: Any) -> None:
    for ell, block in enumerate(hooked.blocks):
        for bias in ("b_Q", "b_K", "b_V", "b_O"):
            t = getattr(block.attn, bias)
            if torch.any(t != 0):
                h = int(torch.nonzero(t.reshape(t.shape[0], -1) if t.dim() > 1 else t)[0][0])
                where = f"head {h} of layer {ell}" if t.dim() > 1 else f"layer {ell}"
                raise HardsoftError(
                    f"blocks.{ell}.attn.{bias} is nonzero ({where}); hardsoft heads have no "
                    "attention biases"
                )


def from_transformer_lens(hooked: Any, alphabet: str | None = None) -> Transformer:
    """A hardsoft :class:`Transformer` computing what the ``HookedTransformer`` computes:
    ``model(tokens).outputs`` equals ``hooked(tokens)`` (logits) for inputs up to ``n_ctx``.
    Token k is ``alphabet[k]`` (default ``0-9a-zA-Z``). Unsupported configurations and nonzero
    attention biases are a one-line HardsoftError (see the module docstring)."""
    cfg = hooked.cfg
    _check_tl_config(cfg)
    _refuse_attention_biases(hooked)
    attn_scale = float(getattr(cfg, "attn_scale", math.sqrt(cfg.d_head)))
    uses_scale = bool(getattr(cfg, "use_attn_scale", True))
    scale = uses_scale and attn_scale == math.sqrt(cfg.d_head)
    q_factor = 1.0 / attn_scale if uses_scale and not scale else 1.0
    spec = _tl_spec(cfg, _tl_alphabet(cfg.d_vocab, alphabet), scale)
    model = Transformer(spec, dtype=cfg.dtype)
    with torch.no_grad():
        model.W_E.copy_(hooked.W_E)
        model.W_pos.copy_(hooked.W_pos)
        for ell, (block, tl_block) in enumerate(zip(_blocks(model), hooked.blocks)):
            for h, head in enumerate(cast("list[Head]", list(block.heads))):
                head.W_Q.copy_(tl_block.attn.W_Q[h] * q_factor)
                head.W_K.copy_(tl_block.attn.W_K[h])
                head.W_V.copy_(tl_block.attn.W_V[h])
                head.W_O.copy_(tl_block.attn.W_O[h])
            if spec.layers[ell].d_ff:
                for name in ("W_in", "b_in", "W_out", "b_out"):
                    getattr(block, name).copy_(getattr(tl_block.mlp, name))
            if cfg.normalization_type == "LN":
                for ln in ("ln1", "ln2") if spec.layers[ell].d_ff else ("ln1",):
                    getattr(block, ln).weight.copy_(getattr(tl_block, ln).w)
                    getattr(block, ln).bias.copy_(getattr(tl_block, ln).b)
        if cfg.normalization_type == "LN":
            model.ln_final.weight.copy_(hooked.ln_final.w)
            model.ln_final.bias.copy_(hooked.ln_final.b)
        model.W_U.copy_(hooked.W_U)
        model.b_U.copy_(hooked.b_U)
    model.meta = {"origin": "transformer_lens", "n_ctx": cfg.n_ctx}
    return model

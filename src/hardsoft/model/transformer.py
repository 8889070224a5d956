"""The transformer of Hahn (2020) §3 and Yang et al. (arXiv:2412.09925v1) §3.1 as one readable
``nn.Module``.

    x_i^(0) = W_E[w_i] + PE(i, n) · W_pos
    layer:   h = x + Σ_heads Att_h(x) · W_O,      x' = h + ReLU(h W_in + b_in) W_out + b_out
    output:  y = x^(L) W_U + b_U;   accept = y_n[0] > 1/2 (or the model's declared readout)

Weight names and shapes are explicit (TransformerLens-style), and ``trace=True`` returns every
activation and every head's attention weights under stable names (see :class:`ModelOutput`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast, overload

import numpy as np
import torch
from torch import nn

from hardsoft import memory, validate
from hardsoft.errors import HardsoftError
from hardsoft.memory import auto_chunk
from hardsoft.model import fastpath
from hardsoft.model.attention import attend, attend_chunked, pair_scores, weights_from_scores
from hardsoft.model.features import feature_rows
from hardsoft.model.readout import acceptance_of
from hardsoft.model.spec import (
    HeadSpec,
    LayerNormPlacement,
    LayerSpec,
    Mask,
    ModelSpec,
    eval_tau,
)

_M = TypeVar("_M", bound=nn.Module)


class ModuleSeq(nn.ModuleList, Generic[_M]):
    """An ``nn.ModuleList`` whose items have one known type, so that iterating over
    ``model.blocks`` or ``block.heads`` gives a type checker :class:`Block` / :class:`Head`
    (not ``Module``). Parameter names and the state dict are those of a plain ModuleList."""

    def __init__(self, modules: Iterable[_M] = ()) -> None:
        super().__init__(modules)

    def __iter__(self) -> Iterator[_M]:
        return cast(Iterator[_M], super().__iter__())

    @overload
    def __getitem__(self, idx: slice) -> ModuleSeq[_M]: ...

    @overload
    def __getitem__(self, idx: int) -> _M: ...

    def __getitem__(self, idx: int | slice) -> _M | ModuleSeq[_M]:
        return cast("_M | ModuleSeq[_M]", super().__getitem__(idx))


@dataclass
class ModelOutput:
    """``outputs``: ``[B, n, d_out]``; ``accept``: ``[B]`` bool (the model's acceptance
    readout at the last position, by default coordinate 0 > 1/2: see
    :mod:`hardsoft.model.readout`); ``trace``: name -> tensor when requested. Trace names::

        embed.tokens, embed.positions, resid.0            [B, n, d]  the input layer
        blocks.L.attn.H.q / .k / .v                        [B, n, d_head]
        blocks.L.attn.H.pattern                            [B, n, n]  (not in chunked mode)
        blocks.L.attn.H.out                                [B, n, d]  (after W_O)
        blocks.L.resid_mid                                 [B, n, d]  after attention
        blocks.L.ffn.hidden                                [B, n, d_ff] after the ReLU
        blocks.L.resid_post = resid.(L+1)                  [B, n, d]  after the layer
        outputs                                            [B, n, d_out]
    """

    outputs: torch.Tensor
    accept: torch.Tensor
    trace: dict[str, torch.Tensor] | None = None
    paths: dict[str, str] | None = None
    """Per head (``blocks.L.attn.H``), the attention path that ran: dense, chunked, or a fast
    path of :mod:`hardsoft.model.fastpath` (uniform, scan, window, classes)."""


def thin_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w``; for a ``w`` with one row (a one-wide head value or feed-forward) as the
    broadcast product ``x * w[0]``, the same numbers bitwise (one product per entry, no sum)
    at a quarter of the time: a BLAS matmul with inner dimension 1 is slow over 10⁷ rows."""
    return x * w[0] if w.shape[0] == 1 else x @ w


def positionwise(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` for a product applied at every position (``x [..., n, k]``: a head's ``W_O``,
    the feed-forward, the position projection, the unembedding), computed as one BLAS call
    per block of :func:`fused_rows` positions (counted from position 0), each on the block as
    one ``[rows, k]`` matrix. The fused pass (:meth:`Block._fused`) calls it on exactly these
    blocks, so both passes hand the BLAS the same calls on the same numbers: a BLAS may round
    a row differently by the call's shape (MKL's AVX2 kernels do, docs/model.md)."""
    if w.shape[0] == 1 or x.dim() < 2:
        return thin_matmul(x, w)
    n, step = x.shape[-2], fused_rows(x.device)
    if n <= step:
        return _rows_matmul(x, w)
    parts = [_rows_matmul(x[..., s : s + step, :], w) for s in range(0, n, step)]
    return torch.cat(parts, dim=-2)


def _rows_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w`` as one matrix product of ``x`` flattened to ``[rows, k]`` (contiguous, rows
    in batch-major order): ``torch.matmul`` would split a strided ``x`` into other calls."""
    flat = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    return (flat @ w).view(*x.shape[:-1], w.shape[-1])


class LayerNorm(nn.Module):
    """Layer normalisation with a settable ``eps`` (0 allowed: exact normalisation)."""

    def __init__(self, d: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.eps) * self.weight + self.bias


class Head(nn.Module):
    """One attention head: ``W_Q, W_K: [d_model, d_head]``, ``W_V: [d_model, d_value]``,
    ``W_O: [d_value, d_model]``."""

    def __init__(self, spec: HeadSpec, d_model: int) -> None:
        super().__init__()
        self.spec = spec
        self.W_Q = nn.Parameter(torch.zeros(d_model, spec.d_head))
        self.W_K = nn.Parameter(torch.zeros(d_model, spec.d_head))
        self.W_V = nn.Parameter(torch.zeros(d_model, spec.value_dim))
        self.W_O = nn.Parameter(torch.zeros(spec.value_dim, d_model))
        # identity hook point (TransformerLens's name) on the materialised pattern [B, n, n]:
        # a submodule, so nnsight and forward hooks can read and patch it (trace=True path)
        self.hook_pattern = nn.Identity()
        self.position_source: fastpath.PositionSource | None = None  # set by the Transformer
        self.last_path = fastpath.Path.DENSE
        self.last_reason = ""  # why no fast path ran (fastpath.attend_fast), "" if one did

    def score_scale(self, n: int) -> float:
        """The factor on ``q·k``: 1/sqrt(d_head) if scaled, and 1/τ(n) for softmax."""
        s = 1.0 / math.sqrt(self.spec.d_head) if self.spec.scale and self.spec.d_head else 1.0
        if self.spec.weighting == "softmax":
            s /= eval_tau(self.spec.tau, n)
        return s

    # The analysis API: the pieces of :meth:`forward`, one at a time, for engines that run them
    # on their own rows (activation values, chosen query positions) instead of a whole input.
    def query(self, x: torch.Tensor) -> torch.Tensor:
        """Queries ``x W_Q`` of head inputs ``x [..., d_model]`` (the block's
        :meth:`Block.attn_input`, not the raw residual)."""
        return x @ self.W_Q

    def key(self, x: torch.Tensor) -> torch.Tensor:
        """Keys ``x W_K`` of head inputs ``x [..., d_model]``."""
        return x @ self.W_K

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """Values ``x W_V`` of head inputs ``x [..., d_model]``."""
        return x @ self.W_V

    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values of head inputs ``x [..., d_model]``."""
        return self.query(x), self.key(x), self.value(x)

    def scores(self, q: torch.Tensor, k: torch.Tensor, n: int) -> torch.Tensor:
        """Scaled scores ``(q · kᵀ) · score_scale(n)`` ``[..., rows, keys]`` for query rows ``q``
        and keys ``k`` at input length ``n`` (the temperature τ(n) depends on n, not on how
        many rows are asked for)."""
        return pair_scores(q, k, self.spec.weighting) * self.score_scale(n)

    def allowed(self, rows: torch.Tensor | None, n: int) -> torch.Tensor | None:
        """Boolean ``[len(rows), n]``: which keys 0..n-1 each query position in ``rows``
        (0-based; None: all n) may attend to, by :meth:`Mask.allows`; None if all may."""
        if self.spec.mask is Mask.NONE:
            return None
        device = self.W_Q.device if rows is None else rows.device
        i = torch.arange(n, device=device) if rows is None else rows
        return self.spec.mask.allows(i[:, None], torch.arange(n, device=device)[None, :])

    def weights_from_scores(
        self, scores: torch.Tensor, allowed: torch.Tensor | None
    ) -> torch.Tensor:
        """Attention weights from :meth:`scores` (disallowed pairs get weight 0; a row with no
        allowed key gets all zeros) under this head's weighting."""
        return weights_from_scores(scores, allowed, self.spec.weighting)

    def result(self, z: torch.Tensor) -> torch.Tensor:
        """What the head writes to the residual stream for mixed values ``z``: ``z W_O``. For
        unique-hard attention ``z`` is the attended position's value ``v_j``."""
        return positionwise(z, self.W_O)

    def output(self, weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The head's output ``(weights · v) W_O`` from attention weights and values."""
        return self.result(weights @ v)

    def attend(
        self, x: torch.Tensor, *, chunk_size: int | str | None = None, keep: bool = False
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        """The mixed values ``z [B, n, d_value]`` of head inputs ``x`` (before ``W_O``), by a
        fast path where one applies (:mod:`hardsoft.model.fastpath`), else the chunked or
        dense path; with ``keep``, also ``(q, k, v)`` and the weights where materialised."""
        n = x.shape[1]
        q, k, v = self.qkv(x)
        scale = self.score_scale(n)
        chunk: int | None
        if chunk_size == "auto":
            chunk = None if keep else auto_chunk(self.spec.weighting, n)
        else:
            chunk = None if isinstance(chunk_size, str) else chunk_size
        fast = fastpath.attend_fast(self, x, q, k, v, scale, keep)
        weights = None
        if fast is not None:
            mixed, self.last_path = fast
        elif chunk is not None and n > chunk:
            progress = fastpath.slow_progress(self)
            mixed = attend_chunked(
                q, k, v, self.spec.weighting, self.spec.mask, scale, chunk, progress
            )
            self.last_path = fastpath.Path.CHUNKED
        else:
            mixed, weights = attend(
                q, k, v, self.spec.weighting, self.spec.mask, scale, return_weights=keep
            )
            if weights is not None:
                weights = self.hook_pattern(weights)
                mixed = weights @ v
            self.last_path = fastpath.Path.DENSE
        if not keep:
            return mixed, ()
        return mixed, (q, k, v) if weights is None else (q, k, v, weights)

    def forward(
        self,
        x: torch.Tensor,
        *,
        chunk_size: int | str | None = None,
        trace: dict[str, torch.Tensor] | None = None,
        prefix: str = "",
    ) -> torch.Tensor:
        mixed, parts = self.attend(x, chunk_size=chunk_size, keep=trace is not None)
        out = self.result(mixed)
        if trace is not None:
            trace[f"{prefix}.q"], trace[f"{prefix}.k"], trace[f"{prefix}.v"] = parts[:3]
            if len(parts) > 3:
                trace[f"{prefix}.pattern"] = parts[3]
            trace[f"{prefix}.out"] = out
        return out


def _hooked(module: nn.Module) -> bool:
    """Whether a forward (pre-)hook, the module's own or a global one, watches its calls."""
    from torch.nn.modules import module as nn_module

    return bool(
        module._forward_hooks
        or module._forward_pre_hooks
        or nn_module._global_forward_hooks
        or nn_module._global_forward_pre_hooks
    )


class Block(nn.Module):
    """One layer: residual attention (all heads summed) then a residual ReLU feed-forward."""

    def __init__(self, spec: LayerSpec, d_model: int, layer_norm: str, eps: float) -> None:
        super().__init__()
        self.spec = spec
        self.layer_norm = LayerNormPlacement.parse(layer_norm, "layer_norm")
        self.heads: ModuleSeq[Head] = ModuleSeq(Head(h, d_model) for h in spec.heads)
        self.W_in = nn.Parameter(torch.zeros(d_model, spec.d_ff))
        self.b_in = nn.Parameter(torch.zeros(spec.d_ff))
        self.W_out = nn.Parameter(torch.zeros(spec.d_ff, d_model))
        self.b_out = nn.Parameter(torch.zeros(d_model))
        if layer_norm != "none":
            self.ln1 = LayerNorm(d_model, eps)
            self.ln2 = LayerNorm(d_model, eps)

    def attn_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the heads read from the residual ``x``: ``LN(x)`` for pre-norm, else ``x``."""
        return self.ln1(x) if self.layer_norm is LayerNormPlacement.PRE else x

    def ffn_in(self, x: torch.Tensor, bias: bool = True) -> torch.Tensor:
        """The feed-forward's pre-activations ``x W_in (+ b_in)`` of its inputs ``x``."""
        out = positionwise(x, self.W_in)
        return out.add_(self.b_in) if bias else out

    def ffn_out(self, hidden: torch.Tensor, bias: bool = True) -> torch.Tensor:
        """What the feed-forward adds to the residual: ``hidden W_out (+ b_out)`` of the
        post-ReLU ``hidden``."""
        out = positionwise(hidden, self.W_out)
        return out.add_(self.b_out) if bias else out

    def after_attention(
        self,
        x: torch.Tensor,
        *,
        trace: dict[str, torch.Tensor] | None = None,
        prefix: str = "",
    ) -> torch.Tensor:
        """The rest of the layer applied to ``x`` = residual + attention output: the post-norm
        LN, the residual feed-forward (reading ``LN(x)`` for pre-norm) and its post-norm LN."""
        post = self.layer_norm is LayerNormPlacement.POST
        if post:
            x = self.ln1(x)
        if trace is not None:
            trace[f"{prefix}.resid_mid"] = x
        if self.spec.d_ff:
            f_in = self.ln2(x) if self.layer_norm is LayerNormPlacement.PRE else x
            hidden = torch.relu_(self.ffn_in(f_in))
            # (x + hidden W_out) + b_out, bitwise; accumulated in the fresh product, not in
            # new n x d_model tensors (at n = 10^7 each is 1.4 GB of page faults)
            x = self.ffn_out(hidden, bias=False).add_(x).add_(self.b_out)
            if trace is not None:
                trace[f"{prefix}.ffn.hidden"] = hidden
        if post:
            x = self.ln2(x)
        if trace is not None:
            trace[f"{prefix}.resid_post"] = x
        return x

    def forward(
        self,
        x: torch.Tensor,
        *,
        chunk_size: int | str | None = None,
        trace: dict[str, torch.Tensor] | None = None,
        prefix: str = "",
    ) -> torch.Tensor:
        if trace is None and _fusable(self):
            return self._fused(x, chunk_size, torch.empty_like(x))
        if self.heads:
            a_in = self.attn_input(x)
            att: torch.Tensor | None = None
            for h, head in enumerate(self.heads):
                out = head(a_in, chunk_size=chunk_size, trace=trace, prefix=f"{prefix}.attn.{h}")
                # x + ((out_0 + out_1) ...), summed in one fresh tensor: a head's own output
                # is written to only when nothing else can hold it (no trace, no hook), else
                # it is copied first (0 + out_0: the same numbers up to the sign of a zero)
                if att is None:
                    att = out if trace is None and not _hooked(head) else out + 0.0
                else:
                    att.add_(out)
            assert att is not None
            x = att.add_(x)
        return self.after_attention(x, trace=trace, prefix=prefix)

    def _fused(
        self, x: torch.Tensor, chunk_size: int | str | None, out: torch.Tensor
    ) -> torch.Tensor:
        """:meth:`forward` without autograd, trace or hooks, into ``out`` (``x`` itself when
        the caller owns it): the heads' mixed values first, then everything position-wise
        (``W_O``, the sum of the heads, the residual, the feed-forward, the layer norms) in
        blocks of :data:`FUSED_ROWS` positions, so the ``[n, d_model]`` stream is read and
        written once per layer instead of ~10 times. Each value is computed by the same
        operations in the same order as in the unfused path, and every product by the same
        BLAS call (:func:`positionwise` on the same blocks), so the outputs are bitwise equal
        on any CPU (docs/model.md, "What is bitwise")."""
        zs = []
        if self.heads:
            a_in = self.attn_input(x)
            zs = [head.attend(a_in, chunk_size=chunk_size)[0] for head in self.heads]
        step = fused_rows(x.device)
        for s in range(0, x.shape[1], step):
            rows = slice(s, s + step)
            h = x[:, rows]
            if zs:
                att = self.heads[0].result(zs[0][:, rows])
                for head, z in zip(self.heads[1:], zs[1:]):
                    att.add_(head.result(z[:, rows]))
                h = att.add_(h)
            out[:, rows] = self.after_attention(h)
        return out


def _fusable(module: nn.Module) -> bool:
    """Whether ``module`` (a block or the model) may run :meth:`Block._fused`: no autograd
    (its in-place writes), and no forward hook on it or below it that could miss a call or
    keep an output that is written to later."""
    if torch.is_grad_enabled():
        return False
    return not any(_hooked(m) for m in module.modules() if isinstance(m, (Head, Block)))


FUSED_ROWS = 8192
"""Positions per block of the fused position-wise pass (:meth:`Block._fused`) on a CPU: 8192 ×
18 float64 residual entries are 1.2 MB, within a core's cache."""


def fused_rows(device: torch.device) -> int:
    """Positions per block on ``device``: :data:`FUSED_ROWS` on a CPU; 2^20 on an
    accelerator, where each block costs a dozen kernel launches and memory is fast."""
    return FUSED_ROWS if device.type == "cpu" else max(FUSED_ROWS, 1 << 20)


class Transformer(nn.Module):
    """The whole model. Parameters (all zero at construction; see ``random_model`` for a
    random initialisation and the compiler for constructed weights)::

        W_E    [|Σ|, d_model]        token embedding
        W_pos  [P, d_model]          projection of the raw position features (P = spec.position_dim)
        blocks.L.heads.H.{W_Q,W_K,W_V,W_O}, blocks.L.{W_in,b_in,W_out,b_out}, blocks.L.ln1/ln2
        ln_final (pre-norm models only), W_U [d_model, d_out], b_U [d_out]

    ``meta`` is a free JSON-serialisable dict saved with the model (certificates, provenance).
    """

    def __init__(self, spec: ModelSpec, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        spec.validate()
        itemsize = torch.empty((), dtype=dtype).element_size()
        count = memory.parameter_count(spec)
        memory.require(count * (4 + itemsize), f"a model with {count:,} parameters")
        self.spec = spec
        self.meta: dict = {}
        d = spec.d_model
        self.symbol_index = {a: i for i, a in enumerate(spec.alphabet)}
        self.W_E = nn.Parameter(torch.zeros(len(spec.alphabet), d))
        self.W_pos = nn.Parameter(torch.zeros(spec.position_dim, d))
        self.blocks: ModuleSeq[Block] = ModuleSeq(
            Block(layer, d, spec.layer_norm, spec.ln_eps) for layer in spec.layers
        )
        if spec.layer_norm == "pre":
            self.ln_final = LayerNorm(d, spec.ln_eps)
        self.W_U = nn.Parameter(torch.zeros(d, spec.d_out))
        self.b_U = nn.Parameter(torch.zeros(spec.d_out))
        self.to(dtype)
        fastpath.attach(self)

    @property
    def dtype(self) -> torch.dtype:
        return self.W_E.dtype

    @property
    def device(self) -> torch.device:
        return self.W_E.device

    def encode(self, words: Sequence[str]) -> torch.Tensor:
        """Token ids ``[B, n]`` for words of one common length; unknown symbols are an error."""
        if not words:
            return torch.zeros(0, 0, dtype=torch.long, device=self.device)
        n = len(words[0])
        if any(len(w) != n for w in words):
            raise HardsoftError("encode() needs words of one length; use run_words() for mixed")
        ids = np.empty((len(words), n), dtype=np.int64)
        symbols = sorted((ord(a), i) for a, i in self.symbol_index.items() if len(a) == 1)
        codes = np.array([c for c, _ in symbols] or [-1], dtype=np.int64)
        index = np.array([i for _, i in symbols] or [0], dtype=np.int64)
        for b, w in enumerate(words):  # vectorised: n = 10⁷ in a fraction of a second
            chars = np.frombuffer(w.encode("utf-32-le"), dtype="<u4").astype(np.int64)
            at = np.searchsorted(codes, chars).clip(0, len(codes) - 1)
            bad = codes[at] != chars
            if bool(bad.any()):
                i = int(np.argmax(bad))
                raise HardsoftError(
                    f"symbol {w[i]!r} at position {i + 1} is not in the model's alphabet "
                    f"{''.join(self.spec.alphabet)!r}"
                )
            ids[b] = index[at]
        return torch.from_numpy(ids).to(self.device)

    def position_embedding(self, n: int, positions: torch.Tensor | None = None) -> torch.Tensor:
        """``PE(i, n) · W_pos`` for i = 1..n: ``[n, d_model]``; with ``positions`` (1-based
        int64), only those rows of a length-n input (a chunk of a streamed input)."""
        features = self.spec.position_features
        if positions is None:  # the heads' shared cache: the features are computed once per n
            source = fastpath.position_source(self)
            return self.project_features(source.raw(n, self.dtype, self.device))
        raw = feature_rows(features, positions.to(self.device), n, self.dtype)
        return self.project_features(raw)

    def project_features(self, raw: torch.Tensor) -> torch.Tensor:
        """Raw position feature values ``[..., P]`` (``spec.position_features`` concatenated)
        projected to the residual stream: ``raw W_pos``."""
        return positionwise(raw, self.W_pos)

    def embed(
        self, tokens: torch.Tensor, trace: dict | None = None, *, offset: int = 0, n: int = 0
    ) -> torch.Tensor:
        """The layer-0 residual ``W_E[w_i] + PE(i, n) W_pos`` of token ids ``[B, n]``; with
        ``n`` given, ``tokens`` are the positions ``offset + 1 ..`` of a longer length-n input
        (a chunk of a streamed input)."""
        tok = self.W_E[tokens]
        if n:
            rows = torch.arange(offset + 1, offset + tokens.shape[1] + 1, device=self.device)
            pos = self.position_embedding(n, rows)
        else:
            pos = self.position_embedding(tokens.shape[1])
        if trace is not None:
            trace["embed.tokens"], trace["embed.positions"] = tok, pos.expand_as(tok)
            return tok + pos
        return tok.add_(pos)  # tok is a fresh gather: no second n x d_model tensor

    def _embed_blocks(self, tokens: torch.Tensor) -> torch.Tensor:
        """:meth:`embed` (same numbers) computed in blocks of positions into one buffer."""
        b, n = tokens.shape
        raw = fastpath.position_source(self).raw(n, self.dtype, self.device)
        x = torch.empty(b, n, self.spec.d_model, dtype=self.dtype, device=self.device)
        step = fused_rows(x.device)
        for s in range(0, n, step):
            rows = slice(s, s + step)
            x[:, rows] = self.W_E[tokens[:, rows]].add_(self.project_features(raw[rows]))
        return x

    def readout(self, x: torch.Tensor) -> torch.Tensor:
        """The outputs ``LN_final(x) W_U + b_U`` (``ln_final`` only for pre-norm models) of
        final residual vectors ``x [..., d_model]``: ``[..., d_out]``."""
        if self.spec.layer_norm == "pre":
            x = self.ln_final(x)
        return self.unembed(x)

    def unembed(self, x: torch.Tensor, bias: bool = True) -> torch.Tensor:
        """``x W_U (+ b_U)``: the readout without the final layer norm."""
        out = positionwise(x, self.W_U)
        return out.add_(self.b_U) if bias else out

    def accepts(self, outputs: torch.Tensor) -> torch.Tensor:
        """The acceptance bit of outputs ``[..., d_out]`` read at the last position, by the
        model's declared readout (:func:`hardsoft.model.readout.acceptance_of`: coordinate 0
        > 1/2 by default, Hahn (2020) §3)."""
        return acceptance_of(self).accept(outputs)

    def forward(
        self, tokens: torch.Tensor, *, trace: bool = False, chunk_size: int | str | None = "auto"
    ) -> ModelOutput:
        """Run on token ids ``[B, n]`` (n >= 1). ``chunk_size`` streams attention in blocks
        (memory O(chunk^2 + n·d) per layer): an int, None (never), or "auto" (per head, see
        :func:`auto_chunk`; never while tracing). ``trace`` records every activation."""
        if tokens.dim() != 2 or tokens.shape[1] < 1:
            raise HardsoftError("the model needs a batch of inputs of length >= 1")
        chunk_size = validate.chunk_size(chunk_size)
        batch, n = tokens.shape
        memory.require(
            memory.forward_bytes(self.spec, batch, n, self.W_E.element_size(), chunk_size, trace),
            f"a forward pass on {batch} input(s) of length {n}",
            str(self.device),
        )
        tr: dict[str, torch.Tensor] | None = {} if trace else None
        fastpath.attach(self)
        if tr is None and _fusable(self):  # the residual stream: one buffer, blockwise
            x = self._embed_blocks(tokens)
            for block in self.blocks:
                x = block._fused(x, chunk_size, x)
        else:
            x = self.embed(tokens, tr)
            if tr is not None:
                tr["resid.0"] = x
            for ell, block in enumerate(self.blocks):
                x = block(x, chunk_size=chunk_size, trace=tr, prefix=f"blocks.{ell}")
                if tr is not None:
                    tr[f"resid.{ell + 1}"] = x
        y = self.readout(x)
        if tr is not None:
            tr["outputs"] = y
        paths = fastpath.head_paths(self)
        return ModelOutput(outputs=y, accept=self.accepts(y[:, -1]), trace=tr, paths=paths)

    @torch.no_grad()
    def run_words(
        self,
        words: Sequence[str],
        *,
        chunk_size: int | str | None = "auto",
        batch_size: int = 64,
    ) -> list[np.ndarray]:
        """Per-position outputs ``[n, d_out]`` (numpy) for each word, any mix of lengths.

        Words are grouped by length (position features depend on n). The empty word has no
        position to read, so it gets an empty ``[0, d_out]`` array.
        """
        batch_size = validate.positive_int(batch_size, "batch_size")
        chunk_size = validate.chunk_size(chunk_size)
        results: list[np.ndarray | None] = [None] * len(words)
        by_len: dict[int, list[int]] = {}
        for idx, w in enumerate(words):
            by_len.setdefault(len(w), []).append(idx)
        for n, idxs in by_len.items():
            if n == 0:
                for idx in idxs:
                    results[idx] = np.zeros((0, self.spec.d_out))
                continue
            for s in range(0, len(idxs), batch_size):
                part = idxs[s : s + batch_size]
                out = self(self.encode([words[i] for i in part]), chunk_size=chunk_size).outputs
                arr = out.detach().cpu().numpy()
                for row, idx in enumerate(part):
                    results[idx] = arr[row]
        return [r for r in results if r is not None]

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

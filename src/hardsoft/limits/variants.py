"""The residual streams of one word and of its single-symbol variants at long n, computed with
the model's own pieces (:meth:`Block.attn_input`, :meth:`Head.qkv`, :meth:`Head.scores`, ...)
without redoing what a variant cannot change. Used by the sensitivity engine from
``LONG_N`` on; below that it runs whole forward passes (:func:`full_residuals`).

* **First layer.** A variant changes one position i, so its first-layer queries, keys and
  values differ from the word's only at i. A softmax head without a fast path keeps the word's
  per-row statistics (:func:`hardsoft.model.attention.attention_state`) and updates each row
  for the one changed key (:func:`~hardsoft.model.attention.softmax_one_key_changed`): O(n·d)
  per variant instead of O(n²). Row i, and any row where the removed key carried more than
  half of the softmax mass (the subtraction would cancel), is recomputed in full. Other heads
  run as usual (fast paths, or dense).
* **Middle layers** run whole (every position has changed).
* **Last layer.** Only the rows asked for are computed (the last position, whose residual is
  the model's output; the supplement's rows; the flipped positions): each row's attention is
  exactly the dense row, O(rows·n·d). Other rows of the last layer are NaN ("not measured").

The results equal whole forward passes up to float64 rounding (tests compare them).
"""

from __future__ import annotations

import torch

from hardsoft.model import fastpath
from hardsoft.model.attention import attention_state, softmax_one_key_changed
from hardsoft.model.spec import Weighting
from hardsoft.model.transformer import Block, Head, Transformer

LONG_N = 8192
"""From this length on, the sensitivity engine uses :class:`VariantRunner`."""


def full_residuals(model: Transformer, ids: torch.Tensor, chunk: int) -> list[torch.Tensor]:
    """The residual stream after k = 0..L layers, by whole forward passes."""
    n = ids.shape[1]
    x = model.embed(ids)
    out = [x]
    for block in model.blocks:
        x = block(x, chunk_size=chunk if n > chunk else None)
        out.append(x)
    return out


def block_rows(block: Block, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The layer's output at the positions ``rows`` only (``[B, n, d]``, NaN elsewhere): each
    row's attention is the dense row, then the position-wise rest of the layer."""
    n = x.shape[1]
    a_in = block.attn_input(x)
    mid = x[:, rows]
    for head in block.heads:
        q, k, v = head.query(a_in[:, rows]), head.key(a_in), head.value(a_in)
        w = head.weights_from_scores(head.scores(q, k, n), head.allowed(rows, n))
        mid = mid + head.result(w @ v)
    out = torch.full_like(x, float("nan"))
    out[:, rows] = block.after_attention(mid)
    return out


class _Incremental:
    """One first-layer softmax head's view of the word: its queries, keys, values and the
    per-row statistics, from which a variant's outputs are updated."""

    def __init__(self, head: Head, a_in: torch.Tensor, chunk: int) -> None:
        self.head = head
        self.n = a_in.shape[1]
        self.q, self.k, self.v = head.qkv(a_in)
        self.scale = head.score_scale(self.n)
        self.state = attention_state(
            self.q, self.k, self.v, "softmax", head.spec.mask, self.scale, chunk
        )

    def word_output(self) -> torch.Tensor:
        m, norm, acc = self.state
        mixed = acc / norm.clamp_min(torch.finfo(acc.dtype).tiny)[..., None] * (norm > 0)[..., None]
        return self.head.result(mixed)

    def variant_output(self, a_var: torch.Tensor, flip: torch.Tensor) -> torch.Tensor:
        """The head's output on variants ``a_var [B, n, d]`` (head inputs), variant b differing
        from the word at position ``flip[b]`` only."""
        head, k0, v0 = self.head, self.k[0], self.v[0]
        b = torch.arange(len(flip), device=flip.device)
        k_new, v_new = head.key(a_var[b, flip]), head.value(a_var[b, flip])
        out, redo = softmax_one_key_changed(
            self.state, self.q, k0[flip], v0[flip], k_new, v_new, flip, head.spec.mask, self.scale
        )
        for r in range(len(flip)):
            rows = redo[r].nonzero().flatten()
            kr, vr = k0.clone(), v0.clone()
            kr[flip[r]], vr[flip[r]] = k_new[r], v_new[r]
            w = head.weights_from_scores(
                head.scores(head.query(a_var[r, rows]), kr, self.n), head.allowed(rows, self.n)
            )
            out[r, rows] = w @ vr
        return head.result(out)


class VariantRunner:
    """Residuals ``[B, n, d]`` per layer 0..L of a word and of its variants (module docstring).
    ``last_rows``: the positions of the last layer to compute."""

    def __init__(
        self, model: Transformer, word: torch.Tensor, last_rows: torch.Tensor, chunk: int
    ) -> None:
        self.model, self.rows, self.chunk = model, last_rows, chunk
        self.layers = len(model.blocks)
        x = model.embed(word)
        self.base = [x]
        self.first: list[_Incremental | None] = []
        if self.layers >= 2:
            x = self._first_layer_word(x)
            self.base.append(x)
        self.base += self._rest(x, start=len(self.base) - 1)

    def _first_layer_word(self, x: torch.Tensor) -> torch.Tensor:
        block = self.model.blocks[0]
        a_in = block.attn_input(x)
        att = torch.zeros_like(x)
        for head in block.heads:
            inc = None
            if head.spec.weighting is Weighting.SOFTMAX and not self._has_fast_path(head, a_in):
                inc = _Incremental(head, a_in, self.chunk)
            self.first.append(inc)
            att = att + (inc.word_output() if inc else head(a_in, chunk_size=self._chunk(x)))
        return block.after_attention(x + att)

    def _has_fast_path(self, head: Head, a_in: torch.Tensor) -> bool:
        q, k, v = head.qkv(a_in)
        scale = head.score_scale(a_in.shape[1])
        return fastpath.attend_fast(head, a_in, q, k, v, scale) is not None

    def _chunk(self, x: torch.Tensor) -> int | None:
        return self.chunk if x.shape[1] > self.chunk else None

    def _rest(self, x: torch.Tensor, start: int) -> list[torch.Tensor]:
        """Layers ``start..L−1`` on residual ``x``: whole, except the last (rows only)."""
        out = []
        for ell in range(start, self.layers):
            block = self.model.blocks[ell]
            last = ell == self.layers - 1
            x = block_rows(block, x, self.rows) if last else block(x, chunk_size=self._chunk(x))
            out.append(x)
        return out

    def variants(self, var: torch.Tensor, flip: torch.Tensor) -> list[torch.Tensor]:
        """Residuals of the variants ``var [B, n]``, variant b changing position ``flip[b]``."""
        x = self.model.embed(var)
        res = [x]
        if self.layers >= 2:
            block = self.model.blocks[0]
            a_var = block.attn_input(x)
            att = torch.zeros_like(x)
            for head, inc in zip(block.heads, self.first):
                if inc is not None:
                    att = att + inc.variant_output(a_var, flip)
                else:
                    att = att + head(a_var, chunk_size=self._chunk(x))
            x = block.after_attention(x + att)
            res.append(x)
        return res + self._rest(x, start=len(res) - 1)

"""Memory estimates before allocation, and a clear refusal when a request cannot fit.

A transformer's forward pass, a batch of sampled strings, a model's parameters: each caller
estimates the bytes it is about to allocate and calls :func:`require`, which compares them with
the memory the operating system reports as available (``MemAvailable`` in ``/proc/meminfo``,
or the free CUDA memory) and raises a one-line :class:`~hardsoft.errors.HardsoftError` instead
of letting the allocation fail half-way (a traceback) or the machine start swapping (a hang).

The estimates are upper-bound-minded, not exact: they count the large tensors (activations,
attention scores, sampled token ids) and ignore small ones. ``HARDSOFT_MAX_MEMORY`` (bytes, or
with a suffix: ``512M``, ``8G``) lowers the limit, e.g. on a shared machine or in tests.
"""

from __future__ import annotations

import os

from hardsoft.errors import HardsoftError

SMALL = 64 << 20
"""Requests below 64 MiB are never checked (no OS query on every forward pass)."""

USABLE = 0.8
"""The fraction of the available memory a request may take: the estimates count the large
tensors only, and the rest of the process (and the machine) needs some too."""

# The "auto" chunking policy, from benchmarks/results/chunked_hard.md and a side-by-side run on
# 2 CPU cores: exact hard heads are 2-4x faster streamed in blocks of 512 once n > 512 (the full
# path builds several n x n temporaries: 7 GB at n = 16384); softmax through SDPA is as fast as
# the streamed path up to n = 4096, and is streamed beyond to keep memory O(n·d). It lives here,
# below the model, because both the forward pass (hardsoft.model.transformer) and the memory
# estimate of a forward pass (forward_elements) follow it.
AUTO_CHUNK_HARD = (512, 512)  # (block size, from length)
AUTO_CHUNK_SOFT = (1024, 4096)


def auto_chunk(weighting: str, n: int) -> int | None:
    """The block size the "auto" policy uses for a head of ``weighting`` at length ``n``."""
    size, start = AUTO_CHUNK_SOFT if weighting == "softmax" else AUTO_CHUNK_HARD
    return size if n > start else None


_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def fmt_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def _env_limit() -> int | None:
    text = os.environ.get("HARDSOFT_MAX_MEMORY", "").strip().upper().removesuffix("B")
    if not text:
        return None
    suffix = text[-1] if text[-1] in _SUFFIX else ""
    number = text[: len(text) - len(suffix)].removesuffix("I")
    try:
        return int(float(number) * _SUFFIX[suffix])
    except ValueError:
        raise HardsoftError(f"HARDSOFT_MAX_MEMORY={text!r} is not a size such as 512M") from None


def _os_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def available_bytes(device: str = "cpu") -> int | None:
    """The memory a new allocation on ``device`` can use (None when unknown)."""
    if str(device).startswith("cuda"):
        import torch

        try:
            free, _ = torch.cuda.mem_get_info(torch.device(device))
        except (RuntimeError, AssertionError, ValueError):
            return None
        found: int | None = int(free)
    else:
        found = _os_available()
    limit = _env_limit()
    if limit is not None:
        found = limit if found is None else min(found, limit)
    return found


def require(nbytes: float, what: str, device: str = "cpu") -> None:
    """Refuse (HardsoftError) if ``what`` needs more than the available memory."""
    if nbytes < SMALL:
        return
    available = available_bytes(device)
    if available is not None and nbytes > USABLE * available:
        where = f" on {device}" if device != "cpu" else ""
        raise HardsoftError(
            f"{what} needs about {fmt_bytes(nbytes)} of memory; {fmt_bytes(available)} is "
            f"available{where} (at most {USABLE:.0%} of it is used)"
        )


def parameter_count(spec) -> int:
    """The number of parameters of a :class:`~hardsoft.model.Transformer` with ``spec``,
    from the shapes alone (nothing allocated)."""
    d = spec.d_model
    total = len(spec.alphabet) * d + spec.position_dim * d + d * spec.d_out + spec.d_out
    norms = 0 if spec.layer_norm == "none" else 2
    for layer in spec.layers:
        for h in layer.heads:
            total += 2 * d * h.d_head + 2 * d * h.value_dim
        total += 2 * d * layer.d_ff + layer.d_ff + d + norms * 2 * d
    if spec.layer_norm == "pre":
        total += 2 * d
    return total


def _attention_bytes(weighting: str, n: int, batch: int, chunk: int | None, masked: bool) -> int:
    """Elements of the largest attention temporaries of one head (scores, weights, masks)."""
    if chunk is None or n <= chunk:
        return 4 * batch * n * n + (n * n if masked else 0)
    return 4 * batch * chunk * chunk + chunk * chunk


def forward_elements(
    spec, batch: int, n: int, chunk_size: int | str | None = "auto", trace: bool = False
) -> int:
    """Elements alive at the peak of a forward pass on ``batch`` inputs of length ``n``.

    The residual stream and its copies, the per-head q/k/v/out, the attention temporaries of
    one head at a time (``n²`` per input on the full path, ``chunk²`` when streamed) and the
    feed-forward hidden layer; with ``trace`` every activation and pattern is kept."""
    d = spec.d_model
    embed = batch * n * (3 * d + spec.position_dim) + n * spec.position_dim
    layers = []
    for layer in spec.layers:
        heads = [batch * n * (2 * h.d_head + h.value_dim + d) for h in layer.heads]
        attn = []
        for h in layer.heads:
            if chunk_size == "auto":
                chunk = None if trace else auto_chunk(h.weighting, n)
            else:
                chunk = None if isinstance(chunk_size, str) else chunk_size
            attn.append(_attention_bytes(h.weighting, n, batch, chunk, h.mask != "none"))
        ffn = 2 * batch * n * layer.d_ff
        if trace:
            layers.append(sum(heads) + sum(attn) + ffn + 2 * batch * n * d)
        else:
            layers.append(sum(heads) + max(attn, default=0) + ffn)
    body = sum(layers) if trace else max(layers, default=0)
    return embed + body + batch * n * spec.d_out


def forward_bytes(
    spec,
    batch: int,
    n: int,
    itemsize: int,
    chunk_size: int | str | None = "auto",
    trace: bool = False,
) -> int:
    """:func:`forward_elements` times the dtype's size."""
    return forward_elements(spec, batch, n, chunk_size, trace) * itemsize

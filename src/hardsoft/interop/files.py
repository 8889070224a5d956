"""The folder ``hardsoft export --to transformer-lens`` writes, and reading it back.

``DIR/config.json``: the keyword arguments of TransformerLens's ``HookedTransformerConfig``
(``dtype`` by name). ``DIR/model.safetensors``: the ``HookedTransformer`` state dict, with the
SHA-256 of ``config.json`` and the export's provenance in its metadata. Each file is written
atomically (weights first); :func:`load_transformer_lens` checks the hash, so a folder whose two
files come from different exports is an error rather than a silently wrong model. Loading by
hand::

    cfg = json.load(open("DIR/config.json")); cfg["dtype"] = getattr(torch, cfg["dtype"])
    hooked = HookedTransformer(HookedTransformerConfig(**cfg))
    hooked.load_state_dict(safetensors.torch.load_file("DIR/model.safetensors"))
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import torch

from hardsoft.errors import HardsoftError
from hardsoft.model.io import atomic_write
from hardsoft.model.transformer import Transformer

FORMAT = "hardsoft-transformer-lens/1"
CONFIG, WEIGHTS = "config.json", "model.safetensors"


def verify_export(
    model: Transformer, hooked: Any, n_ctx: int, length_dependent: bool, samples: int = 8
) -> dict[str, Any]:
    """Run both models on the same seeded random inputs (at n_ctx, and at 1 and n_ctx/2 unless
    the export is for n_ctx only) and return the largest |logit − hardsoft output|."""
    gen = torch.Generator().manual_seed(0)
    lengths = [n_ctx] if length_dependent else sorted({1, max(1, n_ctx // 2), n_ctx})
    worst = 0.0
    with torch.no_grad():
        for n in lengths:
            tokens = torch.randint(0, len(model.spec.alphabet), (samples, n), generator=gen)
            diff = (model(tokens).outputs - hooked(tokens)).abs().max().item()
            worst = max(worst, diff)
    return {"lengths": lengths, "samples_per_length": samples, "max_abs_diff": worst}


def save_transformer_lens(
    model: Transformer, n_ctx: int, out_dir: str | Path, source: str = ""
) -> dict[str, Any]:
    """Export ``model`` for TransformerLens into ``out_dir`` and verify it by running both.
    Returns a JSON-ready summary (files, exact lengths, the verification's max |diff|)."""
    from safetensors.torch import save_file

    from hardsoft.interop.transformer_lens import build_hooked, transformer_lens_weights

    export = transformer_lens_weights(model, n_ctx)
    hooked = build_hooked(export)
    check = verify_export(model, hooked, n_ctx, export.length_dependent)
    config_text = json.dumps(export.config, indent=2) + "\n"
    provenance = {
        "source": source,
        "n_ctx": n_ctx,
        "exact_lengths": export.exact_lengths,
        "length_dependent": export.length_dependent,
        "reasons": export.reasons,
    }
    metadata = {
        "format": FORMAT,
        "config_sha256": hashlib.sha256(config_text.encode()).hexdigest(),
        "hardsoft": json.dumps(provenance),
    }
    tensors = {k: v.detach().contiguous().cpu() for k, v in hooked.state_dict().items()}
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise HardsoftError(f"{str(out)!r} exists and is not a folder")
    atomic_write(out / WEIGHTS, lambda tmp: save_file(tensors, tmp, metadata=metadata))
    atomic_write(out / CONFIG, lambda tmp: Path(tmp).write_text(config_text))
    return {
        "out": str(out),
        "files": [str(out / CONFIG), str(out / WEIGHTS)],
        **provenance,
        "config": export.config,
        "verification": check,
    }


def load_transformer_lens(path: str | Path) -> Any:
    """The ``HookedTransformer`` saved by :func:`save_transformer_lens` in ``path``."""
    from safetensors import SafetensorError, safe_open
    from safetensors.torch import load_file

    from hardsoft.interop.transformer_lens import _import_tl

    folder = Path(path)
    cfg_path, w_path = folder / CONFIG, folder / WEIGHTS
    if not (cfg_path.is_file() and w_path.is_file()):
        raise HardsoftError(f"{str(folder)!r} has no {CONFIG} and {WEIGHTS} (not an export)")
    text = cfg_path.read_text()
    try:
        with safe_open(str(w_path), framework="pt") as f:
            md = f.metadata() or {}
        tensors = load_file(str(w_path))
        cfg = json.loads(text)
    except (SafetensorError, OSError, ValueError) as exc:
        raise HardsoftError(f"cannot read the export in {str(folder)!r} ({exc})") from None
    if md.get("format") != FORMAT:
        raise HardsoftError(f"{str(w_path)!r} is not a hardsoft TransformerLens export")
    if md.get("config_sha256") != hashlib.sha256(text.encode()).hexdigest():
        raise HardsoftError(f"{str(cfg_path)!r} does not belong to {str(w_path)!r} (hash differs)")
    tl = _import_tl()
    cfg["dtype"] = getattr(torch, cfg["dtype"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        hooked = tl.HookedTransformer(tl.HookedTransformerConfig(**cfg))
    hooked.load_state_dict(tensors)
    hooked.eval()
    return hooked

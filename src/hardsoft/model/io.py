"""Save and load a model as one ``.safetensors`` file: the weights, plus the spec and the
``meta`` dict (certificates, provenance) as JSON in the file's metadata. Writes are atomic
(temporary file + rename), so an interrupted save never leaves a half-written model."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from hardsoft import __version__
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import ModelSpec
from hardsoft.model.transformer import Transformer

FORMAT = "hardsoft-model/1"


def atomic_write(path: Path, write) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_model(model: Transformer, path: str | Path) -> None:
    """Write ``model`` (weights in their dtype, spec and meta as JSON metadata) to ``path``."""
    tensors = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    metadata = {
        "format": FORMAT,
        "hardsoft_version": __version__,
        "spec": json.dumps(model.spec.to_dict()),
        "meta": json.dumps(model.meta),
    }
    atomic_write(Path(path), lambda tmp: save_file(tensors, tmp, metadata=metadata))


def read_metadata(path: str | Path) -> dict:
    """The file's hardsoft metadata (format, spec, meta) without loading the weights."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise HardsoftError(f"cannot read model file {str(path)!r}: no such file")
    try:
        with safe_open(str(path), framework="pt") as f:
            md = f.metadata() or {}
    except (SafetensorError, OSError, ValueError) as exc:
        raise HardsoftError(f"{str(path)!r} is not a valid safetensors file ({exc})") from None
    if md.get("format") != FORMAT:
        raise HardsoftError(f"{str(path)!r} is a safetensors file but not a hardsoft model")
    try:
        return {
            "format": md["format"],
            "spec": json.loads(md["spec"]),
            "meta": json.loads(md.get("meta", "{}")),
        }
    except (KeyError, json.JSONDecodeError) as exc:
        raise HardsoftError(f"{str(path)!r} has corrupt hardsoft metadata ({exc})") from None


def load_model(path: str | Path, device: str | torch.device = "cpu") -> Transformer:
    """Load a model saved by :func:`save_model`; a corrupt or foreign file is a HardsoftError."""
    md = read_metadata(path)
    spec = ModelSpec.from_dict(md["spec"])
    try:
        tensors = load_file(str(path), device=str(device))
    except (SafetensorError, OSError, ValueError) as exc:
        raise HardsoftError(f"cannot read the weights in {str(path)!r} ({exc})") from None
    dtypes = {t.dtype for t in tensors.values()}
    dtype = dtypes.pop() if len(dtypes) == 1 else torch.float32
    model = Transformer(spec, dtype=dtype).to(device)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(tensors))
    extra = sorted(set(tensors) - set(expected))
    if missing or extra:
        raise HardsoftError(
            f"{str(path)!r} does not match its spec (missing {missing[:3]}, unexpected {extra[:3]})"
        )
    for k, v in tensors.items():
        if v.shape != expected[k].shape:
            raise HardsoftError(
                f"{str(path)!r}: weight {k} has shape {tuple(v.shape)}, "
                f"the spec needs {tuple(expected[k].shape)}"
            )
    model.load_state_dict(tensors)
    model.meta = md["meta"]
    return model

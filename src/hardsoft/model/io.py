"""Save and load a model as one ``.safetensors`` file: the weights, plus the spec and the
``meta`` dict (certificates, provenance) as JSON in the file's metadata. Writes are atomic
(temporary file + rename), so an interrupted save never leaves a half-written model."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from hardsoft import __version__, validate
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import ModelSpec
from hardsoft.model.transformer import Transformer

FORMAT = "hardsoft-model/1"


def _umask() -> int:
    """The process's umask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:6]
_TEMP = re.compile(r"^\..+\.hardsoft-([0-9a-f]{6})-([0-9]+)-[^/]*\.tmp$")
STALE_ELSEWHERE_S = 86_400
"""A temporary file of a process on another machine (a shared folder) is stale after a day."""


def temp_prefix(path: Path) -> str:
    """The name every temporary file of ``path`` starts with: hidden, and naming this machine
    and process, so that one left by a killed process is known as such
    (:func:`clean_stale_temps`)."""
    return f".{path.name}.hardsoft-{_HOST}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def clean_stale_temps(folder: Path) -> None:
    """Remove the temporary files that killed hardsoft processes left in ``folder`` (SIGKILL
    mid-write once left one of 96 MB): those of a process of this machine that is gone, and
    those of another machine older than :data:`STALE_ELSEWHERE_S`. Only names of the form
    :func:`temp_prefix` writes are touched."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        found = _TEMP.match(entry.name)
        if found is None or not entry.is_file(follow_symlinks=False):
            continue
        host, pid = found.group(1), int(found.group(2))
        with contextlib.suppress(OSError):
            if host == _HOST:
                stale = pid != os.getpid() and not _alive(pid)
            else:
                stale = time.time() - entry.stat().st_mtime > STALE_ELSEWHERE_S
            if stale:
                os.unlink(entry.path)


def atomic_write(path: Path, write: Callable[[str], object], name: str = "output") -> None:
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``.

    ``path`` is validated first (not empty, not a folder, in a writable folder, not an input
    of the running command: see :func:`hardsoft.validate.output_file`); the file gets the usual
    permissions of a new file (0666 minus the umask), not mkstemp's private 0600; on any
    failure the temporary file is removed and what was at ``path`` before is untouched. OS
    errors become one-line errors. Stale temporary files of killed runs in the folder are
    removed first (:func:`clean_stale_temps`)."""
    path = validate.output_file(path, name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_temps(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise HardsoftError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise HardsoftError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
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
    """The file's hardsoft metadata (format, spec, meta) without loading the weights.

    Every field is type-checked here: a file whose ``spec`` is a list or null, or whose
    ``meta`` is not an object, is a one-line error naming the file."""
    from safetensors import safe_open

    path = validate.input_file(path, "model file")
    try:
        with safe_open(str(path), framework="pt") as f:
            md = f.metadata() or {}
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise HardsoftError(f"{str(path)!r} is not a valid safetensors file ({exc})") from None
    if md.get("format") != FORMAT:
        raise HardsoftError(f"{str(path)!r} is a safetensors file but not a hardsoft model")
    try:
        spec = json.loads(md["spec"])
        meta = json.loads(md.get("meta", "{}"))
    except (KeyError, json.JSONDecodeError, RecursionError) as exc:
        raise HardsoftError(f"{str(path)!r} has corrupt hardsoft metadata ({exc})") from None
    for key, value in (("spec", spec), ("meta", meta)):
        if not isinstance(value, dict):
            kind = "null" if value is None else f"a {type(value).__name__}"
            raise HardsoftError(
                f"{str(path)!r} has corrupt hardsoft metadata ({key} is {kind}, not an object)"
            )
    return {"format": md["format"], "spec": spec, "meta": meta}


_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def load_model(path: str | Path, device: str | torch.device = "cpu") -> Transformer:
    """Load a model saved by :func:`save_model`; a corrupt or foreign file is a HardsoftError
    (wrong metadata types, missing or misshapen weights, non-float or non-finite weights)."""
    device = validate.device(device)
    md = read_metadata(path)
    try:
        spec = ModelSpec.from_dict(md["spec"])
    except HardsoftError as exc:
        raise HardsoftError(f"{str(path)!r}: {exc}") from None
    try:
        tensors = load_file(str(path), device="cpu")
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise HardsoftError(f"cannot read the weights in {str(path)!r} ({exc})") from None
    dtypes = {t.dtype for t in tensors.values()}
    if dtypes - set(_DTYPES):
        raise HardsoftError(f"{str(path)!r} holds non-float weights ({sorted(map(str, dtypes))})")
    dtype = dtypes.pop() if len(dtypes) == 1 else torch.float32
    with torch.device("cpu"):  # built and filled on the host, then moved in one step
        model = Transformer(spec, dtype=dtype)
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
        if not bool(torch.isfinite(v).all()):
            raise HardsoftError(f"{str(path)!r}: weight {k} has non-finite values (NaN or inf)")
    model.load_state_dict(tensors)
    model.meta = md["meta"]
    return model.to(device)

"""Helpers shared by the command modules: consoles, JSON output, ``--formula`` values, and the
option-validation layer.

**Options.** Every numeric, seed, device and path option of every command is declared through
the factories below (``seed_option()``, ``int_option(..., lo=1)``, ``float_option(...)``,
``output_file_option()``, ...). Each attaches a callback that runs the matching check of
:mod:`hardsoft.validate` (the same checks the Python API runs) while the command line is parsed,
so a bad value is one line ``error: --chunk-size must be >= 0, got -1`` and exit code 2 before
any work starts. A new command gets the same behaviour by using the factories.

**Printing.** ``console`` and ``err_console`` never interpret rich markup: user text (an
alphabet ``[/]``, a path, a formula) is printed as it is. Style with ``style=`` instead.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.console import Console

from hardsoft import validate
from hardsoft.errors import HardsoftError

console = Console(markup=False, highlight=False)
err_console = Console(stderr=True, markup=False, highlight=False)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else (1e308 if obj > 0 else -1e308)
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):
        return _jsonable(obj.tolist())
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    return obj


LARGE_ARRAY = 4096
"""numpy arrays with at least this many entries are formatted by :func:`array_json`."""
_MARK = re.compile(r'"\\u0000hardsoft-array-(\d+)\\u0000"')


def array_json(arr: np.ndarray) -> str:
    """``json.dumps`` of ``arr.tolist()`` (through :func:`_jsonable`: NaN null, ±inf ±1e308),
    character for character, vectorised: each distinct value is formatted once and the text
    is joined in C. At n = 10⁷ outputs this is what keeps ``run --json`` from taking minutes
    (benchmarks/results/run_output.md)."""
    a = np.asarray(arr)
    if a.ndim == 0 or a.ndim > 2 or a.dtype.kind not in "biuf" or a.size == 0:
        return json.dumps(_jsonable(a.tolist()))
    values, inverse = np.unique(a.reshape(-1), return_inverse=True)
    words = np.array([json.dumps(_jsonable(v)) for v in values.tolist()] or [""], dtype=object)
    text = words[inverse.reshape(-1)]
    if a.ndim == 1:
        return "[" + ", ".join(text) + "]"
    n, d = a.shape
    if d == 0:
        return "[" + ", ".join(["[]"] * n) + "]"
    parts = np.empty((n, 2 * d + 1), dtype=object)  # "[" v0 ", " v1 ... "], " per row
    parts[:, 0], parts[:, 1::2] = "[", text.reshape(n, d)
    parts[:, 2:-1:2], parts[:, -1] = ", ", "], "
    parts[-1, -1] = "]"
    return "[" + "".join(parts.reshape(-1)) + "]"


def refuse_empty_check(report: dict[str, Any], why: str) -> None:
    """A check that compared no position does not pass: one line saying so (exit 2)."""
    if not report.get("checked_positions"):
        raise HardsoftError(
            f"the check compared nothing ({report.get('checked_strings', 0)} strings, 0 "
            f"positions): {why}; a check that checked nothing does not pass"
        )


def precision_line(precision: dict[str, Any]) -> str | None:
    """One line for a check's text output: what the certificate proves in this dtype."""
    limit, bound = precision.get("certified_max_n"), precision.get("length_bound")
    parts = []
    if limit is not None:
        parts.append(f"exact for n <= {limit:,}" if limit else "no length proven exact")
    if bound is not None:
        parts.append(f"compiled for n <= {bound:,}")
    if not parts:
        return None
    return f"precision: {precision['dtype']}, {', '.join(parts)} (certificate)"


def past_limit_note(n: int, precision: dict[str, Any]) -> str:
    """`` (past the certified ... limit)`` when a mismatch lies past what the model's
    certificate proves (its float limit for the dtype, or its length bound)."""
    limit, bound = precision.get("certified_max_n"), precision.get("length_bound")
    if bound is not None and n > bound:
        return f" (n is past the length the model was compiled for, n <= {bound:,})"
    if limit is not None and n > limit:
        return f" (n is past the certified {precision['dtype']} limit n <= {limit:,})"
    return ""


def print_json(obj: Any) -> None:
    """Print one machine-readable JSON object on stdout (NaN/inf mapped to valid JSON); large
    numpy arrays in it are formatted by :func:`array_json` (the same text, much faster)."""
    large: list[np.ndarray] = []

    def mark(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.size >= LARGE_ARRAY:
            large.append(value)
            return f"\x00hardsoft-array-{len(large) - 1}\x00"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [mark(v) for v in value]
        return value

    text = json.dumps(_jsonable(mark(obj)), indent=None, sort_keys=False)
    if large:
        text = _MARK.sub(lambda m: array_json(large[int(m.group(1))]), text)
    sys.stdout.write(text + "\n")


# ------------------------------------------------------------------ list options


MAX_LIST = 10_000
"""Most values a comma-separated list option (or an 'a,b,...,c' range) may expand to."""


def parse_int_list(text: str, option: str, *, lo: int | None = None) -> list[int]:
    """Parse ``"16,32,64"`` into integers (each >= ``lo``); a bad entry is a one-line error
    naming ``option``."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if len(parts) > MAX_LIST:
        raise HardsoftError(f"{option} has {len(parts)} values (at most {MAX_LIST})")
    try:
        values = [int(part) for part in parts]
    except ValueError:
        raise HardsoftError(f"{option} expects comma-separated integers, got {text!r}") from None
    if not values:
        raise HardsoftError(f"{option} is empty")
    for v in values:
        validate.integer(v, option, lo=lo)
    return values


# ------------------------------------------------------------------ formula options


def formula_options(values: list[str], names: tuple[str, ...]) -> str | dict[str, str]:
    """The ``--formula`` values as one formula, or a mapping from output names to formulas.

    A model with one output takes one formula (``NAME=`` before it is dropped when NAME is
    that output's name); a model with several named outputs takes ``NAME=FORMULA`` per
    output, split at the first ``=`` (formulas may contain ``=``, names may not)."""
    if len(names) <= 1 and len(values) == 1:
        text = values[0]
        if names and text.partition("=")[0].strip() == names[0]:
            text = text.partition("=")[2]
        return text.strip()
    if len(names) <= 1:
        raise HardsoftError(f"the model has one output: give one --formula, not {len(values)}")
    out: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        name = name.strip()
        if not sep or name not in names:
            raise HardsoftError(
                f"--formula expects NAME=FORMULA with NAME one of the model's outputs "
                f"({', '.join(names)}), got {value!r}"
            )
        if name in out:
            raise HardsoftError(f"--formula: output {name!r} is given twice")
        out[name] = text.strip()
    return out


def expand_named(given: str | dict[str, str]) -> str | dict[str, str]:
    """``@NAME`` stands for a named formula, as in ``hardsoft eval``."""
    from hardsoft.logic.library import get_formula

    def one(text: str) -> str:
        return get_formula(text[1:]).text if text.startswith("@") else text

    if isinstance(given, str):
        return one(given)
    return {name: one(text) for name, text in given.items()}


# ------------------------------------------------------------------ the option factories


def option_name(param: Any) -> str:
    """How the user spelled a parameter: its long option (``--chunk-size``) or, for an
    argument, its metavar (``MODEL``)."""
    if getattr(param, "param_type_name", "") == "argument":
        return str(param.metavar or param.name.upper())
    opts = list(getattr(param, "opts", ()))
    long = [o for o in opts if o.startswith("--")]
    return (long or opts or [str(param.name)])[0]


def checked(check: Callable[..., Any], **kwargs: Any) -> Callable[[Any, Any, Any], Any]:
    """A typer callback running ``check(value, option_name, **kwargs)`` (None passes)."""

    def callback(ctx: Any, param: Any, value: Any) -> Any:
        if value is None or getattr(ctx, "resilient_parsing", False):
            return value
        return check(value, option_name(param), **kwargs)

    return callback


def seed_option(default: int = 0, help: str = "Random seed (0 <= seed < 2^64).") -> Any:
    """``--seed``: an integer in [0, 2^64)."""
    return typer.Option(default, "--seed", help=help, callback=checked(validate.seed))


def device_option(help: str = "cpu, cuda or cuda:K (must exist on this machine).") -> Any:
    """``--device``: cpu, or a CUDA device that exists here."""
    return typer.Option("cpu", "--device", help=help, callback=checked(validate.device))


def chunk_size_option(
    help: str = "Attention block size (default: auto; 0: never stream).",
) -> Any:
    """``--chunk-size``: None (auto), 0 (never) or a block size >= 1; see :func:`chunk_arg`."""
    return typer.Option(None, "--chunk-size", help=help, callback=checked(validate.nonneg_int))


def chunk_arg(value: int | None) -> int | str | None:
    """The library's ``chunk_size`` for the CLI's ``--chunk-size``: unset -> "auto", 0 -> None
    (never stream), k -> k."""
    if value is None:
        return validate.AUTO
    return value or None


def int_option(
    default: Any, *names: str, lo: int | None = None, hi: int | None = None, help: str = ""
) -> Any:
    """An integer option in ``[lo, hi]`` (either bound optional)."""
    return typer.Option(
        default, *names, help=help, callback=checked(validate.integer, lo=lo, hi=hi)
    )


def float_option(
    default: Any,
    *names: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    help: str = "",
) -> Any:
    """A finite float option in the given interval (NaN and inf are always refused)."""
    check = checked(validate.real, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)
    return typer.Option(default, *names, help=help, callback=check)


def output_file_option(
    *names: str,
    required: bool = True,
    suffix: str | None = None,
    help: str = "Where to write the file.",
) -> Any:
    """An output file (``-o``): not empty, not a folder, in a writable place, ending with
    ``suffix`` where one is given. The raw text is checked (``parser=str``), so ``-o ""`` is
    named as empty rather than read as ``.``."""
    return typer.Option(
        ... if required else None,
        *(names or ("-o", "--out")),
        help=help,
        parser=str,
        callback=checked(validate.output_file, suffix=suffix),
    )


def output_dir_option(
    *names: str, default: Any = ..., help: str = "The output folder (created if needed)."
) -> Any:
    """An output folder: not empty, not an existing file, writable."""
    return typer.Option(
        default if default is ... or default is None else str(default),
        *(names or ("-o", "--out")),
        help=help,
        parser=str,
        callback=checked(validate.output_dir),
    )


def input_file_option(*names: str, help: str = "A file with one input per line.") -> Any:
    """An input file: exists, is a file (not a folder), readable."""
    return typer.Option(
        None,
        *(names or ("--input-file",)),
        help=help,
        parser=str,
        callback=checked(validate.input_file),
    )


def path_argument(metavar: str, help: str) -> Any:
    """A required path argument (a model file, a run folder): not empty. Existence and kind
    are checked by the loader, which names the file."""
    return typer.Argument(..., metavar=metavar, help=help, parser=str, callback=checked(_path_arg))


def _path_arg(value: Any, name: str) -> Path:
    return Path(validate.path_text(value, name))


def load_model(path: str | Path, device: str = "cpu") -> Any:
    """:func:`hardsoft.model.load_model`, plus the acceptance readout of a model written by
    ``hardsoft train`` before it stored one (resolved by its declared process name:
    :func:`hardsoft.learn.readout.declare_readout`); a compiled program's ``meta["program"]``
    is checked (:func:`hardsoft.programs.readout.check_program_meta`)."""
    from hardsoft.model import load_model as _load

    model = _load(path, device=device)
    if "program" in model.meta:
        from hardsoft.programs.readout import check_program_meta

        try:
            check_program_meta(model.meta, model.spec.d_out)
        except HardsoftError as exc:
            raise HardsoftError(f"{str(path)!r}: {exc}") from None
    if "acceptance" in model.meta or "config" not in model.meta:
        return model  # nothing to resolve: skip importing the learning package
    from hardsoft.learn.readout import declare_readout

    return declare_readout(model)

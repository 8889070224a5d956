"""RASP programs as :class:`~hardsoft.programs.source.SourceProgram`: ``FILE.py[:NAME]``.

Loading a ``.py`` file **runs it**, as ``python FILE.py`` would (with ``__name__`` set to
``"__rasp__"``, so a ``if __name__ == "__main__":`` block does not run): load only files you
trust. ``NAME`` (default ``program``) must be an SOp of ``hardsoft.rasp`` — or of
``tracr.rasp`` with Tracr installed (converted by :func:`~.tracr.from_tracr`) — or a function
of no arguments returning one (``make_length``).

The file may also declare, for the command line's defaults:

* ``vocab``: the vocabulary (a string of symbols, a list of values, or a dict from NAME to
  either); ``--vocab`` overrides it;
* ``max_len``: the bound for programs that need one (an int, or a dict from NAME to an int);
  ``--max-len`` overrides it.
"""

from __future__ import annotations

import contextlib
import runpy
import sys
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hardsoft import validate
from hardsoft.errors import HardsoftError, syntax_error
from hardsoft.model.spec import Mask
from hardsoft.model.transformer import Transformer
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp.compile import compile_rasp, symbols_for
from hardsoft.programs.rasp.evaluate import RaspError, evaluate_all
from hardsoft.programs.rasp.graph import statements
from hardsoft.programs.source import (
    Notation,
    ProgramRun,
    program_alphabet,
    require_symbols,
    source_file,
)

DEFAULT_NAME = "program"
LIBRARY = Path(__file__).resolve().parents[1] / "examples" / "tracr_lib.py"


def library_path() -> Path:
    """Our versions of Tracr's ``lib`` (package data)."""
    return LIBRARY


def library_programs() -> dict[str, str]:
    """Tracr's lib function -> the SOp in :func:`library_path` that exercises it."""
    ns = _run_file(LIBRARY)
    return dict(ns["PROGRAMS"])


NONSTRICT_MASKS = {Mask.NONE, Mask.FUTURE, Mask.PAST}


@dataclass
class RaspProgram:
    """A RASP program with its vocabulary: runs on words of symbols (one per value)."""

    sop: R.SOp
    name: str
    vocab: tuple[Any, ...]
    alphabet: tuple[str, ...]
    source: str = ""
    max_len: int | None = None
    notation: Notation = Notation.RASP
    causal: bool = False  # Tracr's causal_eval semantics (selectors restricted to j <= i)
    statements: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self._table = statements(self.sop)
        self.statements = tuple(nm for nm, _ in self._table)
        self._value = dict(zip(self.alphabet, self.vocab))

    def values_of(self, word: str) -> list[Any]:
        """The vocabulary values a word of symbols stands for (a symbol outside the alphabet:
        the compiled model's error, :func:`~hardsoft.programs.source.require_symbols`)."""
        require_symbols(word, self.alphabet)
        return [self._value[ch] for ch in word]

    def run(self, word: str) -> ProgramRun:
        """Every statement's values on ``word`` (:func:`~.evaluate.evaluate`, Tracr's
        semantics)."""
        xs = self.values_of(word)
        values = evaluate_all(self.sop, xs, [s for _, s in self._table], causal=self.causal)
        named = {nm: [_plain(v) for v in vals] for (nm, _), vals in zip(self._table, values)}
        out = named[self.statements[-1]]
        accept = bool(out) and out[-1] is not None and out[-1] == True  # noqa: E712
        return ProgramRun(word, named, accept)

    def compile(
        self,
        target: str,
        *,
        masks: str = "strict",
        outputs: Sequence[str] | None = None,
        max_len: int | None = None,
    ) -> Transformer:
        if masks not in ("strict", "nonstrict"):
            raise HardsoftError(f"unknown --masks {masks!r} (strict or nonstrict)")
        bound = max_len if max_len is not None else self.max_len
        res = compile_rasp(
            self.sop,
            self.vocab,
            target=target,
            max_len=bound,
            outputs=outputs,
            name=self.name,
            source=self.source,
            causal=self.causal,
        )
        if masks == "nonstrict":
            strict = [
                f"layer {ell + 1} head {h + 1} ({head.mask})"
                for ell, layer in enumerate(res.model.spec.layers)
                for h, head in enumerate(layer.heads)
                if head.mask not in NONSTRICT_MASKS
            ]
            if strict:
                raise HardsoftError(
                    f"--masks nonstrict: {self.name} needs a strict mask ({strict[0]}); the "
                    "RASP compiler builds strict masks for j < i and j > i"
                )
        return res.model


def _plain(v: Any) -> Any:
    """A value as the contract's ``Value``: tuples as lists (JSON)."""
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def _per_name(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return value


_RUNS: dict[tuple[str, int, int], dict[str, Any]] = {}
"""Files already run in this process, by (path, mtime, size): a file holding many programs
(``program list``, the ``programs`` experiment) runs once, as a module is imported once; an
edited file runs again."""


def _prints_to_stderr() -> contextlib.AbstractContextManager:
    """What the user's file prints goes to stderr: stdout is the command's (``--json`` prints
    exactly one JSON object there)."""
    return contextlib.redirect_stdout(sys.stderr)


def _run_file(path: Path) -> dict[str, Any]:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _RUNS:
        _RUNS[key] = _execute(path)
    return _RUNS[key]


def _execute(path: Path) -> dict[str, Any]:
    source_file(path)  # a regular file of at most 1 MiB, checked before Python reads it
    try:
        with _prints_to_stderr():
            return runpy.run_path(str(path), run_name="__rasp__")
    except SyntaxError as exc:  # the one form of every notation's syntax errors
        text = path.read_text(encoding="utf-8", errors="replace")
        before = text.splitlines(keepends=True)[: max((exc.lineno or 1) - 1, 0)]
        pos = sum(map(len, before)) + max((exc.offset or 1) - 1, 0)
        raise syntax_error(text, pos, exc.msg, where=f"{str(path)!r}: ") from None
    except SystemExit as exc:
        raise HardsoftError(f"running {path} called exit({exc.code})") from None
    except Exception as exc:  # the user's file: any exception is theirs
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        where = f" (line {frames[-1].lineno})" if frames else ""
        raise HardsoftError(f"running {path} raised {type(exc).__name__}: {exc}{where}") from None


def _as_sop(obj: Any, name: str, path: Path) -> R.SOp:
    if isinstance(obj, R.SOp):
        return obj
    if _is_tracr(obj):
        from hardsoft.programs.rasp.tracr import from_tracr

        return from_tracr(obj)
    if callable(obj) and not isinstance(obj, type):
        try:
            with _prints_to_stderr():
                made = obj()
        except TypeError as exc:
            raise HardsoftError(
                f"{name} in {path} is a function that needs arguments ({exc}); give an SOp or a "
                "function of no arguments"
            ) from None
        except Exception as exc:
            raise HardsoftError(f"{name}() in {path} raised {type(exc).__name__}: {exc}") from None
        return _as_sop(made, f"{name}()", path)
    raise HardsoftError(
        f"{name} in {path} is {type(obj).__name__} {obj!r:.60}, not an SOp of hardsoft.rasp"
    )


def _is_tracr(obj: Any) -> bool:
    return any(c.__module__.startswith("tracr.") for c in type(obj).__mro__)


def programs_in(path: Path) -> list[str]:
    """The programs a Python file offers (running it), sorted: its top-level SOps that have a
    vocabulary (where ``vocab`` is a dict, its keys name the programs; the other SOps are
    parts)."""
    ns = _run_file(validate.input_file(path, "program file"))
    sops = [k for k, v in ns.items() if isinstance(v, R.SOp) and not k.startswith("_")]
    return sorted(k for k in sops if _per_name(ns.get("vocab"), k) is not None)


def load(
    path: Path,
    *,
    alphabet: str | Sequence[Any] | None = None,
    name: str | None = None,
) -> RaspProgram:
    """The SOp ``name`` (default ``program``) of the Python file ``path``, with its
    vocabulary (``alphabet``: a string of symbols or a list of values; default the file's
    ``vocab``)."""
    path = validate.input_file(path, "program file")
    nm = name or DEFAULT_NAME
    ns = _run_file(path)
    if nm not in ns:
        sops = sorted(k for k, v in ns.items() if isinstance(v, R.SOp) and not k.startswith("_"))
        hint = f" (its SOps: {', '.join(sops)})" if sops else ""
        raise HardsoftError(f"{path} defines no {nm!r}{hint}; name the SOp as FILE.py:NAME")
    sop = _as_sop(ns[nm], nm, path)
    declared = _per_name(ns.get("vocab"), nm)
    if isinstance(declared, str):
        declared = validate.alphabet(declared, f"vocab in {path.name}")
    missing = f"no vocabulary for {nm}: give --vocab SYMBOLS (or define vocab in {path.name})"
    vocab = program_alphabet(alphabet, declared, missing=missing)
    values, symbols = symbols_for(list(vocab))
    max_len = _per_name(ns.get("max_len"), nm)
    if max_len is not None:
        max_len = validate.positive_int(max_len, f"max_len in {path.name}")
    return RaspProgram(sop, nm, values, symbols, source=path.name, max_len=max_len)


__all__ = ["DEFAULT_NAME", "RaspError", "RaspProgram", "load", "programs_in"]

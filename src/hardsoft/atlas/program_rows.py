"""Rows a user brings as a program (``atlas add-row --program FILE``): the language a C-RASP
(``.cr``), B-RASP (``.brasp``) or RASP (``FILE.py:NAME``) program accepts (its last statement
true at the last position) becomes a row, and its cells are settled by the models the program
compiles to.

For every target of the program's notation (:data:`TARGETS`) the program is compiled without
a length bound, and the model is checked against the program's own interpreter at every
position (every word to a length, random words of a few hundred symbols: :data:`CHECK`). A
column is settled — **constructed**, evidence kind **proof** — only by a model that had 0
mismatches *and* lies in the column's class as :func:`hardsoft.atlas.evidence.class_violations`
reads it from the model itself (never from the target's name). A target that refuses is
recorded with its one-line reason; a column that no checked model fits gets no cell (no
claim: "—" on the page), and the row's record says why for each model. The fixed-margin
columns are never settled here: an exact check at finite lengths shows no margin that stays
fixed as n grows.

Stored under ``DIR/rows/``: ``NAME.json`` (the record) and ``NAME/TARGET.safetensors`` and
``NAME/TARGET.check.json`` (each model and its check report), beside the regex rows of
:mod:`hardsoft.atlas.rows`.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hardsoft.atlas.evidence import class_violations
from hardsoft.atlas.row_files import check_row_name, write_json
from hardsoft.atlas.table import COLUMNS, Column, EvidenceKind, Status
from hardsoft.errors import HardsoftError
from hardsoft.programs.source import (
    Notation,
    SourceProgram,
    load_program,
    resolve_program,
)

TARGETS: dict[Notation, tuple[str, ...]] = {
    Notation.CRASP: ("hard", "soft-temperature", "soft-pe"),
    Notation.BRASP: ("hard", "soft-temperature", "soft-pe"),
    Notation.RASP: ("average-hard", "soft-temperature", "hard"),
}
"""The targets each notation compiles to (each may still refuse a given program)."""

RANDOM_N = (100, 400)
"""Lengths of the random words of the check (``CHECK_SAMPLES`` words each)."""
CHECK_SAMPLES = 8
SEED = 0
MARGIN_REASON = (
    "the class needs acceptance with a fixed margin, which an exact check at finite lengths "
    "does not show"
)


def exhaustive_length(k: int) -> int:
    """Every word up to this length is checked: 8 over two symbols, 6 over three, fewer over
    more (about 500–1,000 words)."""
    return {1: 12, 2: 8, 3: 6, 4: 5}.get(k, 4)


def _file_of(program_arg: str) -> tuple[Path, str | None]:
    """The program file (``@NAME`` resolved) and the name after ``FILE.py:``."""
    path = resolve_program(program_arg)
    head, sep, tail = str(path).rpartition(":")
    if sep and head.endswith(".py") and tail and "/" not in tail:
        return Path(head), tail
    return path, None


def _identity(program: SourceProgram, file: Path, inner: str | None) -> dict[str, Any]:
    """What makes two program rows the same language here: the notation, the file's bytes,
    the program inside a ``.py`` file and the alphabet."""
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    return {
        "notation": program.notation.value,
        "sha256": digest,
        "program": inner,
        "alphabet": "".join(program.alphabet),
    }


def _boolean_output(program: SourceProgram) -> None:
    """The last statement must be Boolean: a word is accepted when it is true at the last
    position, so a count or a symbol defines no language."""
    last = program.statements[-1]
    for word in program.alphabet:
        try:
            value = program.run(word).values[last][-1]
        except HardsoftError:  # undefined on this word (RASP): the check counts such words
            continue
        if value is not None and not isinstance(value, (bool, np.bool_)):
            raise HardsoftError(
                f"the program's output {last!r} is not Boolean (it is {value!r} on "
                f"{word!r}), so it accepts no language: end the program with a Boolean statement"
            )


def _check(model: Any, program: SourceProgram) -> dict[str, Any]:
    """The model against the program's interpreter, as ``check --program`` does it (RASP by
    its own reference, which counts words where the interpreter is undefined)."""
    k = exhaustive_length(len(program.alphabet))
    if program.notation is Notation.RASP:
        from hardsoft.programs.check_source import check_program

        return check_program(
            model,
            program,
            exhaustive_max_n=k,
            random_n=RANDOM_N,
            samples=CHECK_SAMPLES,
            seed=SEED,
        )
    from hardsoft.check import check_model
    from hardsoft.programs.reference import program_reference

    reference, numeric, _ = program_reference(model, program)
    return check_model(
        model,
        reference,
        readout="outputs",
        numeric=numeric,
        exhaustive_max_n=k,
        random_n=list(RANDOM_N),
        samples=CHECK_SAMPLES,
        seed=SEED,
    )


def _fits(model: Any, col: Column) -> list[str]:
    """Why ``model`` does not settle ``col`` (empty: it is in the column's class)."""
    bad = class_violations(model, col)
    if col.fixed_margin:
        bad.append(MARGIN_REASON)
    return bad


def _portable(program_arg: str) -> str:
    """The program as the stored commands name it: ``@NAME`` as given, a file by its
    absolute path (the commands run from the atlas folder)."""
    if program_arg.startswith("@"):
        return program_arg
    file, inner = _file_of(program_arg)
    return str(file.resolve()) + (f":{inner}" if inner else "")


def _one_target(
    program: SourceProgram, target: str, folder: Path, out: Path, program_arg: str
) -> dict[str, Any]:
    """Compile, check and place one target's model (a JSON-ready record; the commands name
    the model relative to ``out``, where they are run)."""
    from hardsoft.model.io import save_model

    try:
        model = program.compile(target)
    except HardsoftError as exc:
        return {"target": target, "refused": str(exc).splitlines()[0]}
    bound = (model.meta.get("program") or {}).get("max_len")
    if bound is not None:  # a RASP file's max_len: exact only up to it
        return {
            "target": target,
            "refused": f"the model is built for inputs of length at most {bound} (the "
            "program's max_len), and an atlas column is about every length",
        }
    report = _check(model, program)
    folder.mkdir(parents=True, exist_ok=True)
    model_path = folder / f"{target}.safetensors"
    check_path = folder / f"{target}.check.json"
    save_model(model, model_path)
    write_json(check_path, report)
    undefined = int(report.get("undefined_strings", 0))
    exact = report["mismatches"] == 0 and undefined == 0
    placed = {c.id: _fits(model, c) for c in COLUMNS if not c.empirical}
    cert = model.meta.get("certificate") or {}
    k = exhaustive_length(len(program.alphabet))
    rel_model = str(model_path.relative_to(out))
    return {
        "target": target,
        "model": rel_model,
        "check": str(check_path.relative_to(out)),
        "theorem": cert.get("theorem"),
        "mismatches": report["mismatches"],
        "undefined_strings": undefined,
        "first_mismatch": report.get("first_mismatch"),
        "checked_strings": report["checked_strings"],
        "checked_positions": report["checked_positions"],
        "max_n": report["max_n"],
        "exhaustive_to_n": k,
        "exact": exact,
        "columns": sorted(c for c, why in placed.items() if not why) if exact else [],
        "outside": {c: why for c, why in placed.items() if why},
        "commands": [
            f"hardsoft program compile {shlex.quote(program_arg)} --target {target} "
            f"-o {shlex.quote(rel_model)}",
            f"hardsoft check {shlex.quote(rel_model)} --program {shlex.quote(program_arg)} "
            f"--exhaustive-max-n {k} --random-n {','.join(map(str, RANDOM_N))} "
            f"--samples {CHECK_SAMPLES} --seed {SEED} --json",
        ],
    }


def load_row_program(
    program_arg: str, alphabet: str | None
) -> tuple[SourceProgram, Path, str | None]:
    """The program of a row (``@NAME`` a shipped example), with its file and inner name."""
    program = load_program(program_arg, alphabet=alphabet)
    file, inner = _file_of(program_arg)
    _boolean_output(program)
    return program, file, inner


def add_program_row(
    out: Path,
    name: str,
    program_arg: str,
    alphabet: str | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Add the program's language as a row under ``out/rows/`` and return its record: every
    target compiled, checked and placed (artefacts under ``out/rows/NAME/``). Bad input (the
    name, the file, its syntax, a non-Boolean output) and a name stored for another program
    (without ``force``) are refused before anything is written."""
    check_row_name(name)
    program, file, inner = load_row_program(program_arg, alphabet)
    identity = _identity(program, file, inner)
    rows = Path(out) / "rows"
    if not force:
        refuse_reuse(rows, name, identity, program_arg)
    folder = rows / name
    targets = []
    for target in TARGETS[program.notation]:
        if progress is not None:
            progress(f"{name}: compiling and checking the {target} model")
        targets.append(_one_target(program, target, folder, Path(out), _portable(program_arg)))
    _drop_stale(folder, targets, Path(out))
    settled = sorted({c for t in targets for c in t.get("columns", [])})
    alpha = "".join(program.alphabet)
    regen = f"hardsoft atlas add-row --program {shlex.quote(_portable(program_arg))} --name {name}"
    if alphabet is not None:
        regen += f" --alphabet {shlex.quote(alphabet)}"
    record = {
        "kind": "program",
        "name": name,
        "program": program_arg,
        "program_name": program.name,
        "notation": program.notation.value,
        "identity": identity,
        "alphabet": alpha,
        "statements": list(program.statements),
        "output": program.statements[-1],
        "targets": targets,
        "settled": settled,
        "status": "constructed" if settled else "open",
        "command": regen,
        "evidence_path": str(rows / f"{name}.json"),
    }
    write_json(rows / f"{name}.json", record)
    return record


def _drop_stale(folder: Path, targets: list[dict[str, Any]], out: Path) -> None:
    """Remove models and check reports an earlier version of the row left in its folder
    (a target that now refuses, another notation's targets): the folder holds what the
    record names."""
    if not folder.is_dir():
        return
    named = {out / t[k] for t in targets for k in ("model", "check") if k in t}
    for path in folder.iterdir():
        stale = path.name.endswith((".safetensors", ".check.json")) and path not in named
        if stale and path.is_file():
            path.unlink()


def refuse_reuse(rows: Path, name: str, identity: dict[str, Any], program_arg: str) -> None:
    """A stored row of this name must be this program (same notation, file bytes, inner
    name and alphabet); another row is replaced only with ``--force``."""
    import json

    path = rows / f"{name}.json"
    if not path.is_file():
        return
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return  # an unreadable record is replaced
    if old.get("kind") == "program" and old.get("identity") == identity:
        return
    was = old.get("program") or old.get("regex") or old.get("dfa_file") or "another row"
    raise HardsoftError(
        f"row {name!r} already exists in {str(rows)!r} for {was!r}, not the program "
        f"{program_arg!r} as given; choose another --name, or pass --force to replace it"
    )


# ------------------------------------------------------------------ the row's cells
def describe(rec: dict[str, Any]) -> str:
    """One paragraph for the row's header: each target's fate."""
    parts = []
    for t in rec["targets"]:
        if "refused" in t:
            parts.append(f"{t['target']}: refused ({t['refused']})")
        elif not t["exact"]:
            parts.append(
                f"{t['target']}: {t['mismatches']} mismatches, {t['undefined_strings']} "
                "undefined words: settles nothing"
            )
        elif t["columns"]:
            parts.append(f"{t['target']}: exact, in {', '.join(t['columns'])}")
        else:
            parts.append(f"{t['target']}: exact, in no column's class")
    notation = Notation(rec["notation"]).display
    return f"{notation} program {rec['program']}; " + "; ".join(parts)


def program_cells(rec: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    """The row's cells: one per column a checked model settles (constructed, proof)."""
    cells = []
    for col in COLUMNS:
        models = [t for t in rec["targets"] if col.id in t.get("columns", [])]
        if models:
            cells.append(_cell(rec, col, models, out))
    return cells


def _cell(rec: dict[str, Any], col: Column, models: list[dict[str, Any]], out: Path) -> dict:
    shown = models[0]
    checks = "; ".join(
        f"{t['target']} model: {t['mismatches']} mismatches on {t['checked_strings']} words "
        f"(every word to n = {t['exhaustive_to_n']}, random to n = {t['max_n']})"
        for t in models
    )
    notation = Notation(rec["notation"]).display
    summary = (
        f"the {notation} program {rec['program']} compiled and checked against its interpreter "
        f"at every position: {checks}; the model is in this column's class (read from the model)"
    )
    artefacts = {"row": str(Path("rows") / f"{rec['name']}.json")}
    commands = []
    for t in models:
        artefacts[f"{t['target']} model"] = t["model"]
        artefacts[f"{t['target']} check"] = t["check"]
        commands += t["commands"]
    theorem = shown.get("theorem")
    return {
        "row": rec["name"],
        "row_title": rec["name"],
        "row_source": f"{rec['program']} ({notation})",
        "language": rec["name"],
        "column": col.id,
        "column_title": col.title,
        "status": Status.CONSTRUCTED.value,
        "evidence_kind": EvidenceKind.PROOF.value,
        "citation": (
            f"the {notation} program compiled here for "
            f"{', '.join(t['target'] for t in models)}"
            + (f"; the model's certificate: {theorem}" if theorem else "")
        ),
        "theorem": theorem,
        "note": describe(rec),
        "verdict": "agrees",
        "evidence": {
            "status": Status.CONSTRUCTED.value,
            "kind": EvidenceKind.PROOF.value,
            "agrees": True,
            "summary": summary,
            "artefacts": artefacts,
            "commands": [rec["command"] + f" --out {out}", *commands],
            "numbers": {
                t["target"]: {
                    "mismatches": t["mismatches"],
                    "checked_strings": t["checked_strings"],
                    "checked_positions": t["checked_positions"],
                    "max_n": t["max_n"],
                }
                for t in models
            },
            "decision": None,
            "check": None,
            "illustration": None,
        },
        "evidence_path": str(Path("rows") / f"{rec['name']}.json"),
        "user_row": True,
        "program_row": True,
    }

"""Rows a user brings: a regular language (a regular expression or a DFA file) whose
star-freeness is *decided* (:mod:`hardsoft.atlas.starfree`), which by Yang, Chiang & Angluin
(2024) settles the column "unique-hard, strict masks, no position features".

``add_row`` writes ``DIR/rows/NAME.json`` (the expression, the minimal DFA, the decision) and
``DIR/rows/NAME.dfa.json`` (the minimal DFA as a DFA file); the atlas reads every stored row.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from hardsoft.atlas.starfree import decide_star_free
from hardsoft.errors import HardsoftError
from hardsoft.languages.regular import DFA, dfa_from_file, dfa_from_regex
from hardsoft.model.io import atomic_write

STAR_FREE_COLUMN = "uhat-strict"
DECISION_CITATION = (
    "Schützenberger (1965): star-free ⇔ aperiodic syntactic monoid; Yang, Chiang & Angluin "
    "(2024) §5–6: masked unique-hard attention transformers without position features are "
    "equivalent to LTL, i.e. recognise exactly the star-free languages"
)


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    atomic_write(path, lambda tmp: Path(tmp).write_text(text + "\n"), str(path))


def check_row_name(name: str) -> str:
    """A row name: lower-case letters, digits and dashes (it names files)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,47}", name or ""):
        raise HardsoftError(f"row name {name!r} must be 1-48 lower-case letters, digits or dashes")
    return name


def decide_row(
    name: str, regex: str | None = None, dfa_file: Path | None = None, alphabet: str | None = None
) -> dict[str, Any]:
    """Build the minimal DFA of the row and decide its star-freeness (a JSON-ready record)."""
    check_row_name(name)
    if (regex is None) == (dfa_file is None):
        raise HardsoftError("give exactly one of --regex and --dfa")
    if regex is not None:
        dfa: DFA = dfa_from_regex(regex, alphabet)
        source = {"regex": regex}
    else:
        assert dfa_file is not None
        dfa = dfa_from_file(dfa_file)
        if alphabet and tuple(dict.fromkeys(alphabet)) != dfa.alphabet:
            raise HardsoftError(
                f"--alphabet {alphabet!r} is not the DFA file's {''.join(dfa.alphabet)!r}"
            )
        source = {"dfa_file": str(dfa_file)}
    decision = decide_star_free(dfa)
    regen = (
        f"hardsoft atlas add-row --regex {shlex.quote(regex)} --name {name} --alphabet "
        f"{shlex.quote(''.join(dfa.alphabet))}"
        if regex is not None
        else f"hardsoft atlas add-row --dfa {shlex.quote(str(dfa_file))} --name {name}"
    )
    return {
        "name": name,
        **source,
        "alphabet": "".join(dfa.alphabet),
        "dfa": dfa.to_json(),
        **decision.to_json(),
        "column": STAR_FREE_COLUMN,
        "status": "decided",
        "transformer_verdict": (
            "recognised by a masked unique-hard transformer without position features"
            if decision.star_free
            else "not recognised by any masked unique-hard transformer without position features"
        ),
        "citation": DECISION_CITATION,
        "command": regen,
    }


def add_row(
    out: Path,
    name: str,
    regex: str | None = None,
    dfa_file: Path | None = None,
    alphabet: str | None = None,
) -> dict[str, Any]:
    """Decide the row and store it under ``out/rows/`` (see the module docstring)."""
    record = decide_row(name, regex, dfa_file, alphabet)
    rows = Path(out) / "rows"
    write_json(rows / f"{name}.dfa.json", record["dfa"])
    record["evidence_path"] = str(rows / f"{name}.json")
    write_json(rows / f"{name}.json", record)
    return record


def stored_rows(out: Path) -> list[dict[str, Any]]:
    """Every row stored under ``out/rows/`` (sorted by name)."""
    folder = Path(out) / "rows"
    if not folder.is_dir():
        return []
    rows = []
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".dfa.json"):
            continue
        try:
            rows.append(json.loads(path.read_text()))
        except (OSError, ValueError) as exc:
            raise HardsoftError(f"cannot read the stored row {path}: {exc}") from None
    return rows

"""``hardsoft program run FILE`` and ``hardsoft program compile FILE``: programs written in a
notation (``.brasp`` B-RASP files; the other notations plug in through
:func:`hardsoft.programs.source.load_program`), and the program reference of
``hardsoft check --program FILE``. The ``program`` command (cli/program_cmds.py) dispatches
here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hardsoft.cli.common import console, print_json
from hardsoft.errors import HardsoftError

MAX_GRID = 40
"""Words up to this length are shown as a grid of statements × positions (longer: accept)."""


def _load(file: str | None, alphabet: str | None, what: str) -> Any:
    from hardsoft.programs.source import load_program

    if not file:
        raise HardsoftError(f"give the program file: hardsoft program {what} FILE")
    return load_program(Path(file), alphabet=alphabet)


def run_file(file: str | None, inputs: list[str], alphabet: str | None, as_json: bool) -> None:
    """Run the interpreter on each ``--input``; ``--json``: ``{"results": [{"input",
    "accept", "values": {NAME: [one value per position]}}]}``."""
    program = _load(file, alphabet, "run")
    if not inputs:
        raise HardsoftError("give at least one --input WORD")
    runs = [program.run(w) for w in inputs]
    if as_json:
        results = [{"input": r.input, "accept": r.accept, "values": r.values} for r in runs]
        print_json({"results": results})
        return
    for r in runs:
        console.print(f"{r.input!r}: {'accept' if r.accept else 'reject'}", markup=False)
        if 0 < len(r.input) <= MAX_GRID:
            console.print(grid(r.input, r.values), markup=False, soft_wrap=True)


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return "-" if v is None else str(v)


def grid(word: str, values: dict[str, list[Any]]) -> str:
    """The trace as text: one row per statement, one column per position."""
    width = max(len(nm) for nm in values)
    cols = [max(1, *(len(_cell(v[k])) for v in values.values())) for k in range(len(word))]
    head = " " * width + "  " + " ".join(c.rjust(w) for c, w in zip(word, cols))
    rows = [
        nm.ljust(width) + "  " + " ".join(_cell(x).rjust(w) for x, w in zip(v, cols))
        for nm, v in values.items()
    ]
    return "\n".join([head, *rows])


def compile_file(
    file: str | None,
    target: str | None,
    masks: str | None,
    statements: list[str] | None,
    output: Path | None,
    alphabet: str | None,
    n: int,
    as_json: bool,
) -> None:
    """Compile a program file and write the model (``-o``)."""
    from hardsoft.model.io import save_model

    program = _load(file, alphabet, "compile")
    if output is None:
        raise HardsoftError("give the output file with -o FILE")
    model = program.compile(
        target or "hard", masks=masks or "strict", outputs=statements or None, max_len=n
    )
    save_model(model, output)
    cert = model.meta["certificate"]
    summary = {
        "program": program.name,
        "notation": str(program.notation.value),
        "target": cert["target"],
        "masks": cert["masks_mode"],
        "output": str(output),
        "alphabet": "".join(model.spec.alphabet),
        "output_names": list(model.spec.output_names),
        "layers": cert["layers"],
        "heads": cert["heads_total"],
        "width": cert["residual_width"],
        "parameters": cert["parameters"],
        "certificate": cert,
    }
    if as_json:
        print_json(summary)
        return
    console.print(
        f"{program.name} -> {output} ({summary['target']}, masks {summary['masks']}): "
        f"{summary['layers']} layers, {summary['heads']} heads, width {summary['width']}, "
        f"{summary['parameters']} parameters; outputs {', '.join(summary['output_names'])}",
        markup=False,
        soft_wrap=True,
    )
    for s in cert.get("statements", []):
        heads = ", ".join(s["heads"]) or "-"
        console.print(
            f"  {s['statement']}: heads {heads}: {'; '.join(s['theorem'])}",
            markup=False,
            soft_wrap=True,
        )
    if cert.get("tau"):
        taus = ", ".join(t["expression"] for t in cert["tau"])
        console.print(
            f"certificate: tau(n) = {taus}; max attention error bound "
            f"{cert['max_error_bound']:.3g} (rounded by the feed-forward)",
            markup=False,
        )


def program_reference(model: Any, file: str) -> tuple[Any, dict[str, Any]]:
    """The reference of ``check --program FILE``: the program's interpreter, one output
    coordinate per output of ``model.meta["program"]`` (or, for a model without it, the
    statements named by its outputs, or the last statement for one unnamed output)."""
    from hardsoft.programs.source import load_program

    alphabet = "".join(model.spec.alphabet)
    program = load_program(Path(file), alphabet=alphabet)
    declared = (model.meta or {}).get("program", {}).get("outputs")
    names = tuple(model.spec.output_names)
    if declared:
        outputs = [(o["statement"], o.get("encoding", "bool")) for o in declared]
    elif names:
        outputs = [(nm, "bool") for nm in names]
    else:
        outputs = [(program.statements[-1], "bool")]
    if len(outputs) != model.spec.d_out:
        raise HardsoftError(
            f"the model has {model.spec.d_out} outputs and the program reference {len(outputs)}"
        )
    for statement, encoding in outputs:
        if statement not in program.statements:
            raise HardsoftError(
                f"the model's output {statement!r} is not a statement of {file!r} (its "
                f"statements: {', '.join(program.statements)})"
            )
        if encoding != "bool":
            raise HardsoftError(f"output {statement!r}: encoding {encoding!r} is not checked here")
    letters = model.spec.alphabet

    def reference(ids: np.ndarray) -> np.ndarray:
        out = np.zeros((*ids.shape, len(outputs)), dtype=np.int64)
        for b, row in enumerate(ids):
            run = program.run("".join(letters[int(c)] for c in row))
            for k, (statement, _) in enumerate(outputs):
                out[b, :, k] = np.asarray(run.values[statement], dtype=np.int64)
        return out

    return reference, {"program": file, "outputs": [s for s, _ in outputs]}

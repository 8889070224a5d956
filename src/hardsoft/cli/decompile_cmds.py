"""``hardsoft decompile``: a unique-hard transformer back to formulas, exact at every length."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    err_console,
    float_option,
    int_option,
    output_file_option,
    path_argument,
    print_json,
)
from hardsoft.errors import HardsoftError
from hardsoft.model.spec import _Option


class DecompileAs(_Option):
    """The notation ``decompile`` writes (``--as``)."""

    LTL = "ltl"
    BRASP = "brasp"
    CRASP = "crasp"


@app.command("decompile")
def decompile_cmd(
    model_path: Path = path_argument(
        "MODEL", "A model file with unique-hard and/or average-hard heads."
    ),
    out: Path = output_file_option(
        required=False,
        help="Write the formulas: one per line (a .json name writes the whole report).",
    ),
    max_classes: int = int_option(
        100_000, "--max-classes", lo=1, help="Refuse a block estimated to have more classes."
    ),
    verify_n: int = int_option(
        8, "--verify-n", lo=0, hi=64, help="Check every word up to this length (0: none)."
    ),
    random_words: int = int_option(
        200, "--random-words", lo=0, help="Also check this many random words ..."
    ),
    random_max_n: int = int_option(1000, "--random-max-n", lo=1, help="... up to this length."),
    harden: bool = typer.Option(
        False, "--harden", help="Harden softmax heads first (leftmost); describes that model."
    ),
    notation: str = typer.Option(
        "ltl",
        "--as",
        help="ltl: hardsoft's logic (default); brasp: a B-RASP program (program run and the "
        "b-rasp.github.io simulator read it; unique-hard models without counting); crasp: a "
        "C-RASP program, where the formulas lie in C-RASP. -o writes the program file.",
    ),
    budget: float = float_option(
        None,
        "--budget",
        lo=0,
        lo_open=True,
        help="Stop after this many seconds with one line naming the stage (default: none).",
    ),
    language: str = typer.Option(
        None,
        "--language",
        help="Compare the first output (at the last position) with this language's oracle "
        "on every word up to --language-n; name the shortest difference.",
    ),
    language_n: int = int_option(12, "--language-n", lo=1, hi=64, help="See --language."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Decompile a hard-attention transformer into one formula per output, exact at every length.

    Exact class propagation (Yang, Chiang & Angluin 2024): the residual vectors a position can
    carry form finitely many classes, each with a formula; a leftmost/rightmost head becomes
    an S/U/P/F/E/Y/X formula over them, and the readout a disjunction. Average-hard heads and
    unbounded position features (1/i, i/n, ...) give counting terms: classes whose vectors
    are polynomials in i, n and counts #<[phi], #>[phi], and feed-forward signs and readout
    thresholds that are linear count comparisons (LTL[C,+], Yang, Strobl, Chiang & Angluin,
    TACL 2026). The formulas (hardsoft's logic syntax: `hardsoft eval`, `compile`,
    `check --formula` read them; `--as brasp|crasp` writes them as a B-RASP or C-RASP program
    instead) are then checked against the model on every word up to --verify-n and on random
    words. Softmax heads (without --harden), layer norm on counting models and non-linear
    count comparisons are refused with one line. On a terminal, without --json, stderr shows
    the stage (block and query class, writing, checking); --budget stops a run that takes
    longer, naming the stage. Exit code 1 when the check finds the model disagreeing with the
    formulas (its own rounding decides a tie or a comparison differently; the output says so),
    or when --language finds a word where the formula and the language differ. See
    docs/decompile.md."""
    from hardsoft.decompile import decompile
    from hardsoft.model import load_model

    written_as = DecompileAs.parse(notation, "--as notation")
    validate.protect_inputs({"MODEL": model_path}, {"-o": out})
    model = load_model(model_path)
    if written_as is DecompileAs.BRASP:
        _require_unique_hard(model)
    if random_words:  # a word of up to --random-max-n symbols, and the model run on it
        _require_random_memory(model, random_max_n)
    status = err_console.status("decompiling", spinner="dots")
    show = err_console.is_terminal and not as_json
    if show:
        status.start()
    try:
        result = decompile(
            model,
            max_classes=max_classes,
            verify_n=verify_n,
            random_words=random_words,
            random_max_n=random_max_n,
            harden=harden,
            progress=(lambda stage: status.update(f"decompiling: {stage}")) if show else None,
            budget=budget,
            language=language,
            language_n=language_n,
        )
    finally:
        if show:
            status.stop()
    info = result.to_dict()
    if info["verified"].get("exhaustive_limited"):
        err_console.print(f"warning: {info['verified']['exhaustive_limited']}", soft_wrap=True)
    program = _written_program(written_as, model, result, model_path, info)
    if out is not None:
        _write_out(out, info, program, result)
    _report(info, program, out, written_as, result, as_json)


def _require_random_memory(model, random_max_n: int) -> None:
    """Refuse before decompiling when a random word and the model run on it would not fit."""
    from hardsoft import memory

    need = 64 * random_max_n + memory.forward_bytes(
        model.spec, 1, random_max_n, model.W_E.element_size()
    )
    memory.require(need, f"verifying on random words of length up to {random_max_n:,}")


def _written_program(written_as, model, result, model_path: Path, info: dict) -> str | None:
    """``--as crasp|brasp``: the program text (also put into ``info``), read back over the
    model's alphabet; None for ``--as ltl``."""
    program = None
    if written_as is DecompileAs.CRASP:
        program = _as_crasp(model, result, model_path)
        info["notation"], info["program"] = "crasp", program
    elif written_as is DecompileAs.BRASP:
        from hardsoft.programs.brasp.from_ltl import decompiled_program

        program = decompiled_program(result.outputs, model.spec.alphabet)
        info["notation"] = "brasp"
        info["program"] = program
    if program is not None:
        _reads_back_over_the_models_alphabet(program, written_as, model)
    return program


def _write_out(out: Path, info: dict, program: str | None, result) -> None:
    """``-o OUT``: the report (``.json``), the program, or one formula per line, atomically."""
    from hardsoft.logic.syntax import to_text
    from hardsoft.model.io import atomic_write

    if out.suffix == ".json":
        text = json.dumps(info, indent=2) + "\n"
    elif program is not None:
        text = program
    else:
        text = "".join(to_text(f) + "\n" for f in result.formulas)
    atomic_write(out, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    info["path"] = str(out)


def _report(info: dict, program: str | None, out: Path | None, written_as, result, as_json: bool):
    """Print the result (JSON, the program alone on stdout, or the text report) and exit 1
    where the check or the language comparison is negative."""
    if as_json:
        print_json(info)
    elif program is not None and out is None:
        print(program, end="")  # the program alone on stdout (redirect it to a file)
        v = info["verified"]
        agree = v["positions"] - v["mismatches"]
        title = "B-RASP" if written_as is DecompileAs.BRASP else "C-RASP"
        err_console.print(
            f"decompiled to {title}; the formulas agree with the model at {agree:,} of "
            f"{v['positions']:,} checked positions",
            markup=False,
        )
    else:
        _print(info, result.hardened)
    if result.agrees is False:  # the check against the model failed: not a success
        raise typer.Exit(1)
    if result.language is not None and not result.language["equal_to_n"]:
        raise typer.Exit(1)  # the formula is not the language: a negative result


def _as_crasp(model, result, model_path: Path) -> str:
    """The decompiled formulas as a C-RASP program (one-line refusal naming the output and
    the operator where a formula is not in C-RASP)."""
    from hardsoft.model.readout import output_names
    from hardsoft.programs.crasp.emit import to_crasp

    names = list(output_names(model))
    outputs = list(zip(names, result.formulas))
    header = f"decompiled by hardsoft from {model_path.name}"
    return to_crasp(outputs, model.spec.alphabet, header=header)


def _reads_back_over_the_models_alphabet(text: str, written_as, model) -> None:
    """The written program declares the model's alphabet: read back as every command reads a
    program (:func:`hardsoft.programs.source.program_alphabet`), it runs over exactly the
    symbols the model takes, so ``program run`` refuses what the model refuses."""
    if written_as is DecompileAs.CRASP:
        from hardsoft.programs.crasp.program import from_text

        alphabet = from_text(text).alphabet
    else:
        from hardsoft.programs.brasp import read_program

        alphabet = read_program(text).alphabet
    if tuple(alphabet) != tuple(model.spec.alphabet):  # a bug: exit 3
        raise RuntimeError(
            f"the written program's alphabet {''.join(alphabet)!r} is not the model's "
            f"{''.join(model.spec.alphabet)!r}"
        )


def _require_unique_hard(model) -> None:
    """``--as brasp`` is for models whose formulas need no counting: refused at once (one
    line) for average-hard heads and position features with unboundedly many values."""
    from hardsoft.model.features import parse_feature
    from hardsoft.model.spec import Weighting

    heads = [h for layer in model.spec.layers for h in layer.heads]
    unbounded = [f for f in model.spec.position_features if parse_feature(f).cases is None]
    if any(h.weighting is Weighting.AVERAGE for h in heads) or unbounded:
        what = f"position feature {unbounded[0]!r}" if unbounded else "average-hard heads"
        raise HardsoftError(
            f"--as brasp: the model's {what} make its formulas count, which B-RASP cannot "
            "express; decompile it to formulas (--as ltl)"
        )


def _print(info: dict, hardened: bool) -> None:
    model = info["model"]
    if hardened:
        print("note: softmax heads were hardened (leftmost); the formulas describe that model")
    print(
        f"model: {model['layers']} layers, {model['heads']} heads, d_model {model['d_model']}, "
        f"{model['parameters']:,} parameters; classes per layer {info['classes']}"
    )
    for o in info["outputs"]:
        print(f"{o['name']} ({o['readout']}):  {o['formula']}")
        print(f"  size {o['size']}{_size_history(o)}, temporal depth {o['temporal_depth']}")
    v = info["verified"]
    if v["positions"]:
        print(
            f"verified: {v['mismatches']} mismatches in {v['positions']:,} positions of "
            f"{v['strings']:,} words (all words up to n = {v['exhaustive_n']}, random up to "
            f"n = {v['max_n']})"
        )
    else:
        print("verified: not checked against the model (--verify-n 0, --random-words 0)")
    if "first_mismatch" in v:
        print(f"first mismatch: {v['first_mismatch']!r}")
    how = "class propagation"
    if info.get("method") == "counting":
        how = "symbolic class propagation with counting terms"
    if info.get("agrees") is False:
        print(f"exact at every length for the class vectors as computed here ({how}), not")
        print("for this model's forward pass, which the check above contradicts")
    else:
        print(f"exact at every length: {how} (see docs/decompile.md)")
    for caution in info.get("cautions", []):
        print(f"caution: {caution}")
    if "language" in info:
        print(_language_line(info["language"], info["outputs"][0]["name"]))
    if "path" in info:
        print(f"wrote {info['path']}")


def _size_history(o: dict) -> str:
    """`` (before simplification 42, before shrinking 20: 3 proved steps); 7 as named
    definitions`` -- the parts that differ from the final size."""
    size, parts = o["size"], []
    before, written = o.get("size_before_simplification"), o.get("size_before_shrinking")
    if before not in (None, size):
        parts.append(f"before simplification {before}")
    if written not in (None, size):
        steps = (o.get("shrink") or {}).get("steps", 0)
        parts.append(f"before shrinking {written}: {steps} proved steps")
    out = f" ({', '.join(parts)})" if parts else ""
    shared = o.get("size_shared")
    if shared is not None and shared < size:
        out += f"; {shared} with repeated subformulas named once"
    return out


def _language_line(lang: dict, output: str) -> str:
    """One line: the formula of ``output`` against the language's oracle."""
    head = (
        f"language {lang['name']}: {output} (at the last position) against its oracle on all "
        f"{lang['words']:,} words up to n = {lang['max_n']}: "
    )
    if lang["equal_to_n"]:
        return head + "equal on every one (not a proof beyond n)"
    verdict = "accepts" if lang["formula_accepts"] else "rejects"
    member = "a member" if lang["language_accepts"] else "not a member"
    return head + (
        f"differs on {lang['differences']:,}; shortest {lang['shortest_difference']!r} "
        f"(the formula {verdict} it, it is {member})"
    )

"""Theorem labels come from one table (hardsoft.compile.results, docs/compiler.md): every
certificate head, every row of the compiler experiment, the logic route's certificate, the
report's claims and the doc examples agree with it, and nothing is labelled "as stated" that is
not the paper's construction. Doc examples of ``hardsoft program`` are run and compared."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hardsoft.compile import compile_formula
from hardsoft.compile.results import (
    AS_STATED,
    CONSTRUCTIONS,
    NOT_BUILT,
    OWN,
    construction,
    head_label,
    markdown_table,
    model_label,
)
from hardsoft.limits.theorem16a import theorem16a_obstruction

ROOT = Path(__file__).resolve().parents[1]
FORMULAS = [
    ("first | last | Y '1' | X '0' | '0' S '1' | '1' U '0' | #<['1'] > 2 | MOD(2, 0)(#<['0'])",
     False),
    ("Y '1' | '0' S '1' | P '1' | #<['1'] > #<['0'] | MOD(2, 1)(#<['1'])", True),
]  # fmt: skip
TARGETS = ("hard", "soft-temperature", "soft-pe")
MASKS = ("strict", "nonstrict")


def _doc_table() -> str:
    text = (ROOT / "docs" / "compiler.md").read_text()
    m = re.search(r"<!-- results-table:start -->\n(.*?)\n<!-- results-table:end -->", text, re.S)
    assert m, "docs/compiler.md lost its generated results table"
    return m.group(1)


def test_doc_table_is_the_code_table() -> None:
    assert _doc_table() == markdown_table()


def _check_label(label: str, name: str, target: str, masks: str, causal: bool, mask: str) -> None:
    c = construction(name)
    assert label == head_label(name, target, masks, causal)
    result = c.result_for(target, causal)
    if label.endswith(f"({AS_STATED})"):
        assert c.is_paper(target, masks, causal) and target != "hard"
        assert mask not in ("strict-future", "strict-past")  # the paper's masks are non-strict
        assert label == f"Yang et al. (arXiv:2412.09925v1) {result} ({AS_STATED})"
    else:
        assert label.startswith(f"{OWN} (") and label.endswith(
            f"cf. Yang et al. (arXiv:2412.09925v1) {result})"
        )
        assert not c.is_paper(target, masks, causal)


@pytest.mark.parametrize("target, masks", list(itertools.product(TARGETS, MASKS)))
def test_every_certificate_label_is_its_constructions(target: str, masks: str) -> None:
    for text, causal in FORMULAS:
        model = compile_formula(text, "01", target, causal, masks=masks, n=64)
        heads = model.meta["certificate"]["heads"]
        assert heads
        for h in heads:
            assert h["gadget"] in construction(h["construction"]).gadgets
            _check_label(h["theorem"], h["construction"], target, masks, causal, h["mask"])


def test_strict_and_hard_heads_are_never_as_stated() -> None:
    model = compile_formula("Y '1' & ('0' S '1')", "01", "soft-temperature", masks="strict")
    labels = [h["theorem"] for h in model.meta["certificate"]["heads"]]
    assert labels and all(lab.startswith(OWN) and "strict mask" in lab for lab in labels)
    hard = compile_formula("Y '1' | first", "01", "hard", masks="nonstrict")
    assert all("hard attention" in h["theorem"] for h in hard.meta["certificate"]["heads"])
    assert model_label("Cor. 17", labels).startswith(f"{OWN} (strict mask")


PREPRINT_TAU_ONLY = {"Thm. 21", "Cor. 23"}
"""Read from the preprint (arXiv:2412.09925v1) §4.4–4.5, not from results.py: Theorem 21 and
Corollary 23 (future-masked counting) are stated with a temperature τ(n) only; the other §4
results also have a part with τ = 1 and unbounded position features."""


def _inside_hypotheses(result: str, target: str) -> bool:
    return target != "hard" and not (target == "soft-pe" and result in PREPRINT_TAU_ONLY)


def test_no_label_is_as_stated_outside_its_results_hypotheses() -> None:
    """Every construction on every target, mask mode and masking: "as stated" only inside the
    result's hypotheses; a causal soft-pe counting model's count heads are own constructions
    (cf. Thm. 21), the soft-temperature ones are Thm. 21 as stated."""
    from hardsoft.compile.results import certificate_label

    for c, target, masks, causal in itertools.product(CONSTRUCTIONS, TARGETS, MASKS, (False, True)):
        label = c.label(target, masks, causal)
        if label.endswith(f"({AS_STATED})"):
            assert _inside_hypotheses(c.result_for(target, causal), target), (c.name, label)
    for text in ("#<['1'] > #<['0']", "MOD(2, 1)(#<['1'])", "#<['1'] > 0"):
        for target in ("soft-pe", "soft-temperature"):
            model = compile_formula(text, "01", target, True, masks="nonstrict", n=64)
            cert = model.meta["certificate"]
            counts = [h["theorem"] for h in cert["heads"] if h["construction"] == "count"]
            assert counts, text
            stated = {lab.endswith(f"Thm. 21 ({AS_STATED})") for lab in counts}
            assert stated == {target == "soft-temperature"}, (text, target, counts)
            if target == "soft-pe":
                assert all(lab.startswith(OWN) and "τ = 1" in lab for lab in counts)
                assert all(lab.endswith("Thm. 21)") for lab in counts)
                assert AS_STATED not in certificate_label(cert)


def test_theorem13_is_not_relabelled_theorem12() -> None:
    """Causal Y reuses Thm. 12's heads: labelled as such, not as Thm. 13 as stated."""
    for target in ("soft-temperature", "soft-pe"):
        model = compile_formula("Y '1'", "01", target, True, masks="nonstrict")
        labels = {h["theorem"] for h in model.meta["certificate"]["heads"]}
        assert labels == {
            "own construction (Thm. 12's heads, future-masked side only, not Lemma 8a's; "
            "cf. Yang et al. (arXiv:2412.09925v1) Thm. 13)"
        }


def test_compiler_experiment_rows_use_the_table() -> None:
    from hardsoft.experiments import compiler as E

    thm, _, text, alphabet, causal = E.THEOREMS[0]
    model = compile_formula(text, alphabet, "soft-temperature", causal, masks="nonstrict")
    labels = [h["theorem"] for h in model.meta["certificate"]["heads"]]
    assert all(re.fullmatch(r"(Thm|Cor)\. \d+", row[0]) for row in E.THEOREMS)
    assert (
        model_label(thm, labels) == f"{OWN} (non-strict shift, then Thm. 12's Y; cf. "
        "Yang et al. (arXiv:2412.09925v1) Thm. 12)"
    )  # E = P | . | F: non-strict shifts


def test_model_label_names_each_difference_once() -> None:
    model = compile_formula("E ('a' & X 'b')", "ab", "hard", masks="nonstrict")
    label = model_label("Thm. 12", [h["theorem"] for h in model.meta["certificate"]["heads"]])
    assert label.count("hard attention") == 1 and label.startswith(f"{OWN} (hard attention")


def test_logic_route_label() -> None:
    from hardsoft.programs.ahat.routes import build

    cert = build("flipflop", None, "soft-temperature", route="logic").certificate
    labels = [h["theorem"] for h in cert["heads"]]
    assert cert["theorem"] == model_label("Cor. 18", labels)
    assert cert["theorem"].startswith(OWN)


_LABEL = re.compile(r"(Thm\.|Thms\.|Cor\.|Prop\.|Theorem|Corollary) ?(\d+)[a-d]?")


def test_report_claims_name_no_construction_result() -> None:
    """The report's claims cite §4 by section: a claim naming a §4 result number would have to
    come from the table, which holds no whole-experiment verdicts."""
    from hardsoft.report.claims import CLAIMS

    results = {c.result for c in CONSTRUCTIONS} | {c.causal_result for c in CONSTRUCTIONS}
    numbers = {re.sub(r"\D", "", r) for r in results} | {"16"}
    for name, c in CLAIMS.items():
        if "Yang" not in c.paper:
            continue
        for _, number in _LABEL.findall(c.paper + " " + c.claim):
            assert number not in numbers, (name, c.paper)


def test_docs_say_as_stated_only_for_paper_constructions() -> None:
    """A doc sentence "<result> (as stated)" names a result some construction realises as the
    paper does."""
    stated = {c.result_for(t, ca) for c in CONSTRUCTIONS for t, _, ca in c.paper}
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for m in re.finditer(r"((?:Thm|Cor|Prop)\. \d+[a-d]?) \(as stated\)", path.read_text()):
            assert m.group(1) in stated or m.group(1) == "Thm. 16", (path.name, m.group(0))


def cli(*args: str) -> subprocess.CompletedProcess:
    """``hardsoft ARGS`` through the CLI's own ``main``, in this process."""
    from hardsoft.cli import main

    out, err = io.StringIO(), io.StringIO()
    old, code = sys.argv, 0
    sys.argv = ["hardsoft", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = old
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def _console_examples(path: Path, command: str) -> list[tuple[str, list[str]]]:
    """``$ COMMAND ...`` lines of the console blocks and the output lines after each."""
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", path.read_text(), re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            first, *rest = chunk.rstrip("\n").split("\n")
            if first.startswith(command):
                out.append((first, rest))
    return out


@pytest.mark.parametrize(
    "line, expected",
    _console_examples(ROOT / "docs" / "programs.md", "hardsoft program "),
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_programs_doc_examples_are_the_output(line, expected, tmp_path, monkeypatch) -> None:
    """Every ``hardsoft program ... -o`` example of docs/programs.md prints what the doc shows
    (khop 2 by the logic route once read 8 layers, width 199, 128,601 parameters)."""
    monkeypatch.chdir(tmp_path)
    res = cli(*shlex.split(line)[1:])
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip("\n").split("\n") == expected


def test_programs_doc_size_table_is_the_models() -> None:
    """The logic rows of the size table in docs/programs.md are the built models' sizes."""
    from hardsoft.programs.ahat.routes import build

    text = (ROOT / "docs" / "programs.md").read_text()
    rows = re.findall(r"^\| (\S+) \| logic \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|", text, re.M)
    assert len(rows) == 4
    for task, *numbers in rows:
        name, k = (task[:-1], int(task[-1])) if task.startswith("khop") else (task, None)
        sizes = build(name, k, "soft-temperature", route="logic").sizes
        got = [sizes["layers"], sizes["heads"], sizes["width"], sizes["parameters"]]
        assert got == [int(x) for x in numbers], task


def _frozen(model, tau: float):
    from hardsoft.model.transformer import Transformer

    layers = tuple(
        dataclasses.replace(
            layer,
            heads=tuple(
                dataclasses.replace(h, tau=repr(tau) if h.tau else None) for h in layer.heads
            ),
        )
        for layer in model.spec.layers
    )
    frozen = Transformer(dataclasses.replace(model.spec, layers=layers), dtype=model.dtype)
    frozen.load_state_dict(model.state_dict())
    return frozen


def test_theorem16a_obstruction() -> None:
    """Theorem 16(a) is not built (NOT_BUILT); the obstruction runs: the soft-temperature
    P '1' with every τ frozen to a constant (n-independent) gives one key at most w(i) of the
    weight, w(i) falls like 1/i, and the model is then wrong on 1 0^(i-1)."""
    import numpy as np

    assert "Thm. 16(a)" in NOT_BUILT and "theorem16a_obstruction" in NOT_BUILT["Thm. 16(a)"]
    model = compile_formula("P '1'", "01", "soft-temperature", True, masks="nonstrict", n=64)
    frozen = _frozen(model, 2.0)
    lengths = [16, 64, 256, 1024]
    rows = theorem16a_obstruction(frozen, lengths)
    for r in rows:
        assert r["max_weight"] <= r["weight_bound"] < 1
    bounds = np.array([r["weight_bound"] for r in rows])
    assert (np.diff(bounds) < 0).all() and bounds[-1] * 1024 == pytest.approx(
        bounds[-2] * 256, rel=0.1
    )
    outs = frozen.run_words(["1" + "0" * (i - 1) for i in lengths])
    assert all(out[-1, 0] < 0.5 for out in outs)  # P '1' holds there: wrong

"""docs/rasp.md's tutorial runs as written: a Tracr program in, one model for every n out,
checked against rasp.evaluate, opened in TransformerLens."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "rasp.md"


def _tutorial() -> str:
    text = DOC.read_text()
    section = text.split("## Tutorial", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)
    return code


def test_the_tutorial_runs() -> None:
    pytest.importorskip("transformer_lens", reason="the interop extra is not installed")
    ns: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the export warns that it is exact at length n_ctx only
        exec(compile(_tutorial(), str(DOC), "exec"), ns)  # noqa: S102 - our own documentation
    assert ns["cert"]["exact_for"] == "every length n"
    assert ns["cert"]["gadgets"][-1]["text"].startswith("table lookup of position q(i)")
    assert ns["report"]["mismatches"] == 0 and ns["report"]["max_n"] == 1000
    read = "".join("abc"[int(k)] for k in ns["logits"][0].argmax(-1))
    assert read == ns["word"][::-1]

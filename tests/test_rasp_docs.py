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


def _console_examples() -> list[tuple[str, list[str], dict[str, str]]]:
    """``$ hardsoft program compile|run ...`` lines of docs/rasp.md's console blocks, the
    output the doc shows after each (up to a ``...`` line), and the files a ``$ cat FILE``
    before it in the same block shows."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", DOC.read_text(), re.S):
        files: dict[str, str] = {}
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            first, *rest = chunk.rstrip("\n").split("\n")
            if first.startswith("cat "):
                files[first.split()[1]] = "\n".join(rest) + "\n"
            elif first.startswith(("hardsoft program compile", "hardsoft program run")):
                if "|" not in first:  # not a synopsis (--target a|b|c)
                    shown = rest[: rest.index("  ...")] if "  ..." in rest else rest
                    out.append((first, shown, dict(files)))
    return out


EXAMPLES = _console_examples()


@pytest.mark.parametrize(("command", "shown", "files"), EXAMPLES, ids=[c for c, _, _ in EXAMPLES])
def test_the_console_examples_print_what_the_doc_shows(
    command: str,
    shown: list[str],
    files: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import shlex

    from tests._cli import run_cli

    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = shlex.split(command.split("  #")[0])[1:]
    res = run_cli(*args)
    printed = (res.out + res.err).rstrip("\n").split("\n")
    assert printed[: len(shown)] == shown


def test_the_doc_has_console_examples() -> None:
    assert len(EXAMPLES) >= 5

"""docs/tutorial.ipynb executes from top to bottom, and its results are the right ones."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook extra is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebook extra is not installed")
pytest.importorskip("transformer_lens", reason="the interop extra is not installed")

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "tutorial.ipynb"


def test_tutorial_executes_and_its_checks_hold(tmp_path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:  # run what a reader runs, not the stored outputs
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    text = "\n".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )
    assert "(at most 1e-9: True )" in text
    assert "'mismatches': 0" in text
    assert "verified by running the model: True" in text
    assert "bound violations: 0" in text
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 1

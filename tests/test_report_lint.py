"""The rendered report reads well: no Python reprs in tables, numbers at a sensible number of
significant digits, unique panel labels per figure, every plotted line named in a legend.

The lint itself (:mod:`hardsoft.report.lint`) is tested on planted slips; then experiments are
run in quick mode with every figure inspected before it is saved, and their rendered report is
checked (the cheap experiments here, all of them in the slow test)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from hardsoft.experiments.text import expression, fmt  # noqa: E402
from hardsoft.report.lint import figure_problems, significant_digits, table_problems  # noqa: E402
from hardsoft.report.render import render_markdown  # noqa: E402


def _md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["**A table**", "", "| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


@pytest.mark.parametrize(
    "cell,kind",
    [
        ("[False, True]", "Python value"),
        ("None", "Python value"),
        ("soft_right_on_pair", "identifier"),
        ("0.07564510952019236/n**3", "Python power"),
        ("0.07564510952019236", "significant digits"),
        ("1.234567e-05", "significant digits"),
    ],
)
def test_table_lint_catches_each_kind(cell: str, kind: str) -> None:
    problems = table_problems(_md(["a", "b"], [["x", cell]]))
    assert problems and any(kind in p for p in problems), problems


@pytest.mark.parametrize(
    "cell", ["0.0757/n³", "yes", "1/(4n³)", "#<['1'] > #<['0']", "11111111****…",
             "-1.03 [-1.06, -1]", "tf-none", "`Y Y '1' & X '0'`", "2.5e+03", "123456"],
)  # fmt: skip
def test_table_lint_passes_clean_cells(cell: str) -> None:
    assert table_problems(_md(["a", "b"], [["x", cell]])) == []


def test_table_lint_catches_an_empty_header_row() -> None:
    assert any("empty header" in p for p in table_problems(_md(["", ""], [["a", "1"]])))


def test_cells_and_expressions_are_formatted_for_readers() -> None:
    assert fmt([False, True]) == "no, yes" and fmt(None) == "–" and fmt(0.123456789) == "0.1235"
    assert expression("0.07564510952019236/n**3") == "0.07565/n³"
    assert expression("1/(4*n**3)") == "1/(4n³)" and expression("0.25/n**1") == "0.25/n"
    assert significant_digits("0.0756") == 3 and significant_digits("-1.50e-3") == 3


def test_figure_lint_catches_repeated_panel_labels_and_unnamed_lines() -> None:
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1, 2], [1, 2], label="x")
    a.plot([1, 2], [2, 1])  # not named
    a.legend()
    b.plot([1, 2], [1, 3])
    b.plot([1, 2], [3, 1])  # two lines, no legend
    a.set_title("(a) one")
    b.set_title("(a) two")
    problems = figure_problems(fig)
    plt.close(fig)
    assert any("panel label (a) appears 2 times" in p for p in problems)
    assert sum("unlabelled line is not in the legend" in p for p in problems) == 3
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 3])
    ax.plot([1, 2], [3, 1])
    assert any("2 lines and no legend" in p for p in figure_problems(fig))
    plt.close(fig)
    fig, (a, b) = plt.subplots(1, 2)  # one legend for the series both panels share
    for ax, t in ((a, "(a) one"), (b, "(b) two")):
        ax.plot([1, 2], [1, 2], label="x")
        ax.plot([1, 2], [2, 1], label="y")
        ax.set_title(t)
    b.legend()
    assert figure_problems(fig) == []
    plt.close(fig)


def _lint_experiments(names: list[str], tmp_path, monkeypatch) -> list[str]:
    """Run experiments (quick), inspecting every figure as it is saved; returns every problem
    of the figures and of the rendered report's tables."""
    from hardsoft.experiments import Context
    from hardsoft.reproduce import run_experiment, select

    problems: list[str] = []
    save = Figure.savefig

    def inspecting_save(fig, fname, *args, **kwargs):
        problems.extend(f"{getattr(fname, 'name', fname)}: {p}" for p in figure_problems(fig))
        return save(fig, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", inspecting_save)
    ctx = Context(quick=True, figures_dir=tmp_path / "figures")
    records = [run_experiment(exp, ctx, "quick") for exp in select(names)]
    assert all(r["figures"] for r in records)
    return problems + table_problems(render_markdown(records, "lint"))


def test_cheap_experiments_render_a_clean_report(tmp_path, monkeypatch) -> None:
    names = ["softmax-to-hardmax", "hahn-processes", "soft-attention-sensitivity"]
    assert _lint_experiments(names, tmp_path, monkeypatch) == []


@pytest.mark.slow
def test_every_experiment_renders_a_clean_report(tmp_path, monkeypatch) -> None:
    from hardsoft.experiments import all_experiments

    names = [e.name for e in all_experiments()]
    assert _lint_experiments(names, tmp_path, monkeypatch) == []

"""The house kept small (docs/architecture.md, "Keeping the house small"): no function in src/
over 100 lines, and at most 2 import circles inside a package, so that the rule holds after
other branches merge. The import graph is grimp's (the library import-linter reads), lazy and
``TYPE_CHECKING`` imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

SRC = Path(__file__).resolve().parents[1] / "src" / "hardsoft"
MAX_FUNCTION_LINES = 100
MAX_CIRCLES = 2


def long_functions(root: Path = SRC) -> list[str]:
    """``path:name (lines)`` of every function or method over :data:`MAX_FUNCTION_LINES`,
    counted from ``def`` to its last line (decorators not counted)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(root.parent)}:{node.name} ({lines} lines)")
    return found


def _child(package: str, module: str) -> str | None:
    """The child of ``package`` (module or subpackage) that holds ``module``, if any."""
    if not module.startswith(package + "."):
        return None
    return f"{package}.{module[len(package) + 1 :].split('.')[0]}"


def _strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (mutual reachability)."""
    nodes = sorted(set(edges).union(*edges.values()))

    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for b in edges.get(todo.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    reachable = {a: reach(a) for a in nodes}
    components: list[set[str]] = []
    for a in nodes:
        comp = {b for b in reachable[a] if a in reachable[b]}
        if len(comp) > 1 and comp not in components:
            components.append(comp)
    return components


def import_circles() -> list[set[str]]:
    """Every import circle inside a package: for each package, its children (modules and
    subpackages, a subpackage standing for everything under it) that import each other in a
    circle."""
    graph = grimp.build_graph("hardsoft", cache_dir=None)
    modules = graph.modules
    packages = {m.rpartition(".")[0] for m in modules} - {""}
    circles = []
    for package in sorted(packages):
        edges: dict[str, set[str]] = {}
        for m in modules:
            a = _child(package, m)
            if a is None:
                continue
            for imported in graph.find_modules_directly_imported_by(m):
                b = _child(package, imported)
                if b is not None and b != a:
                    edges.setdefault(a, set()).add(b)
        circles += _strongly_connected(edges)
    return circles


def test_no_function_is_over_100_lines() -> None:
    assert long_functions() == [], "split these along their seams (docs/architecture.md)"


def test_at_most_two_import_circles_inside_packages() -> None:
    circles = import_circles()
    shown = [" <-> ".join(sorted(c)) for c in circles]
    assert len(circles) <= MAX_CIRCLES, (
        "break the new circles with a shared lower module (docs/architecture.md):\n"
        + "\n".join(shown)
    )


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """The counters themselves: a 101-line function is found; a circle of two modules and one
    through a subpackage are found, a one-way import is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(99))
    (tmp_path / "m.py").write_text(f"def f():\n{body}\n    return 0\n\ndef g():\n    return 1\n")
    assert long_functions(tmp_path) == [f"{tmp_path.name}/m.py:f (101 lines)"]
    edges = {"p.a": {"p.b"}, "p.b": {"p.a", "p.c"}, "p.c": set()}
    assert _strongly_connected(edges) == [{"p.a", "p.b"}]
    assert _child("p", "p.sub.x") == "p.sub" and _child("p", "q.x") is None

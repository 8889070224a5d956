"""Every package that hardsoft's code imports is one a user's install has (issue #32).

A user installs ``pip install hardsoft``: the runtime dependencies of pyproject.toml and nothing
else. The dev venv holds far more (pytest, mypy, the extras and their dependencies), so an
import of an undeclared package passes every other test and breaks the CLI for the user: an
earlier change imported ``click``, which typer >= 0.22 vendors and no longer installs, and only
a fresh-clone ``make reproduce`` caught it. This scan catches that class of bug in milliseconds:

* an import outside a guard (module level or inside a function) names a runtime dependency;
* anything else (an extra, Tracr) sits under ``if TYPE_CHECKING:`` or inside a ``try`` that
  catches ImportError, so a user without it gets a message, not a traceback.

Imports are read from the AST (lazy ones inside functions too, and ``importlib.import_module``
with a literal name); an import name is mapped to its distribution by
``importlib.metadata.packages_distributions`` (``yaml`` -> PyYAML).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "hardsoft"


@dataclass(frozen=True)
class Import:
    top: str  # the top-level module name: "scipy" for ``from scipy.optimize import milp``
    where: str  # FILE:LINE
    guarded: bool  # under TYPE_CHECKING or in a try that catches ImportError


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(req: str) -> str:
    return _normal(re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0])


def runtime_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {_requirement_name(r) for r in project["dependencies"]}


def _catches_import_error(node: ast.Try) -> bool:
    names = {"ImportError", "ModuleNotFoundError"}
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(k, ast.Name) and k.id in names for k in kinds):
            return True
    return False


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    if (  # importlib.import_module("dd.cudd")
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


@cache
def distributions() -> dict[str, list[str]]:
    """Import name -> the distributions that provide it (a scan of every installed one)."""
    return dict(metadata.packages_distributions())


def imports_of(path: Path) -> list[Import]:
    """Every absolute import in ``path`` outside the standard library and hardsoft."""
    found: list[Import] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        for name in _imported_names(node):
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top != "hardsoft":
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
                found.append(Import(top, where, guarded))
        if isinstance(node, ast.Try) and _catches_import_error(node):
            for child in node.body:
                visit(child, True)
            for rest in (*node.handlers, *node.orelse, *node.finalbody):
                visit(rest, guarded)
            return
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, guarded)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


@cache
def all_imports() -> list[Import]:
    return [imp for path in sorted(SRC.rglob("*.py")) for imp in imports_of(path)]


def test_unguarded_imports_are_runtime_dependencies() -> None:
    declared = runtime_dependencies()
    wrong = []
    for imp in all_imports():
        if imp.guarded:
            continue
        dists = {_normal(d) for d in distributions().get(imp.top, [])}
        if not dists & declared:
            owner = ", ".join(sorted(dists)) or "not installed here"
            wrong.append(f"{imp.where}: imports {imp.top} ({owner}), not in [project].dependencies")
    assert not wrong, "\n".join(wrong)


def test_the_scan_sees_lazy_guarded_and_literal_imports(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scan itself: a lazy import in a function counts, a guarded one is marked guarded,
    and ``importlib.import_module("x.y")`` is read as an import of x."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    mod = tmp_path / "m.py"
    mod.write_text(
        "import os\nimport importlib\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import transformer_lens\n"
        "def f():\n    import click\n    return importlib.import_module('dd.cudd')\n"
        "def g():\n    try:\n        import ray\n    except ImportError:\n        import numpy\n"
        "from hardsoft.model import Transformer\n"
    )
    got = {(i.top, i.guarded) for i in imports_of(mod)}
    assert got == {
        ("transformer_lens", True),
        ("click", False),
        ("dd", False),
        ("ray", True),
        ("numpy", False),
    }


def test_every_runtime_dependency_is_used() -> None:
    """A declared dependency nothing imports is a download every user pays for."""
    used = {_normal(d) for imp in all_imports() for d in distributions().get(imp.top, [imp.top])}
    assert runtime_dependencies() - used == set()

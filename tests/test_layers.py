"""The house (docs/architecture.md): every import in ``hardsoft`` runs downward through the
layers that pyproject.toml's import-linter contract lists. Lazy imports (inside functions) and
``if TYPE_CHECKING:`` imports count like any other, so none can hide an upward edge."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "hardsoft"


def _lint(src: Path, config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    cmd = [str(exe)] if exe.is_file() else [shutil.which("lint-imports") or "lint-imports"]
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run(
        [*cmd, "--no-cache", "--config", str(config)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _contract(name: str) -> dict:
    from importlinter.api import read_configuration

    contracts = read_configuration(str(ROOT / "pyproject.toml"))["contracts_options"]
    (contract,) = [c for c in contracts if c["name"] == name]
    return contract


def _layer_modules(name: str = "hardsoft layers: every import runs downward") -> set[str]:
    return {m.strip() for layer in _contract(name)["layers"] for m in layer.split("|")}


def test_every_import_runs_downward() -> None:
    res = _lint(ROOT / "src", ROOT / "pyproject.toml", ROOT)
    assert res.returncode == 0, f"an import runs upward (docs/architecture.md):\n{res.stdout}"
    assert "0 broken" in res.stdout


def test_every_top_level_module_sits_in_a_layer() -> None:
    """A module in no layer would be unchecked: a new package gets its layer in the contract."""
    found = {
        f"hardsoft.{p.stem if p.is_file() else p.name}"
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()
    }
    assert found - _layer_modules() == set(), "add these to a layer in pyproject.toml"
    assert _layer_modules() - found == set(), "the contract names modules that do not exist"


def test_every_module_of_programs_sits_in_a_notation_layer() -> None:
    """programs/ has a layer per notation and for its shared modules: a new one gets its own."""
    found = {
        p.stem if p.is_file() else p.name
        for p in (PACKAGE / "programs").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()
    }
    named = _layer_modules("programs: the notations never import each other")
    assert found == named, "add these to a layer of the programs contract in pyproject.toml"


def test_the_notations_never_import_each_other(tmp_path: Path) -> None:
    """Plant a B-RASP import in C-RASP and a notation import in the shared contract: the
    programs contract breaks on both."""
    copy = tmp_path / "src" / "hardsoft"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "programs" / "crasp" / "emit.py", "a") as f:
        f.write("\n\ndef _planted():\n    from hardsoft.programs.brasp import syntax  # noqa\n")
    with open(copy / "programs" / "readout.py", "a") as f:
        f.write("\n\ndef _planted():\n    from hardsoft.programs.ahat import dsl  # noqa\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    res = _lint(tmp_path / "src", tmp_path / "pyproject.toml", tmp_path)
    assert res.returncode != 0 and "BROKEN" in res.stdout
    assert "hardsoft.programs.crasp.emit -> hardsoft.programs.brasp.syntax" in res.stdout
    assert "hardsoft.programs.readout -> hardsoft.programs.ahat.dsl" in res.stdout


def test_the_contract_catches_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """Plant a lazy and a TYPE_CHECKING upward import in a copy: the contract breaks on both."""
    copy = tmp_path / "src" / "hardsoft"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "memory.py", "a") as f:
        f.write("\n\ndef _planted():\n    from hardsoft.model import transformer  # noqa\n")
    with open(copy / "languages" / "base.py", "a") as f:
        f.write("\nif TYPE_CHECKING:\n    from hardsoft.limits import restrict  # noqa\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    res = _lint(tmp_path / "src", tmp_path / "pyproject.toml", tmp_path)
    assert res.returncode != 0 and "BROKEN" in res.stdout
    assert "hardsoft.memory -> hardsoft.model.transformer" in res.stdout
    assert "hardsoft.languages.base -> hardsoft.limits.restrict" in res.stdout

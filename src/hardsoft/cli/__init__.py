"""The ``hardsoft`` command. Each command group lives in its own module of this package and
registers itself on :data:`app`; :func:`main` turns user errors into one-line messages."""

from __future__ import annotations

import importlib
import sys

import typer

from hardsoft.errors import HardsoftError

app = typer.Typer(
    name="hardsoft",
    help="What transformers with hard and soft attention can and cannot compute.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

# Modules that add commands to ``app``; a missing optional module is skipped silently only if it
# does not exist (ImportError from inside a module is a real bug and propagates).
_COMMAND_MODULES = (
    "model_cmds",
    "language_cmds",
    "logic_cmds",
    "compile_cmds",
    "check_cmd",
    "program_cmds",
    "limits_cmds",
    "sensitivity_cmds",
    "learn_cmds",
    "sweep_cmds",
    "convert_cmds",
    "reproduce_cmd",
    "export_cmds",
)


def _load_commands() -> None:
    for name in _COMMAND_MODULES:
        module = f"hardsoft.cli.{name}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


_load_commands()


def main() -> None:
    """Entry point: run the app; user errors become one line ``error: ...`` and exit code 2."""
    try:
        rc = app(standalone_mode=False)
    except HardsoftError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except (typer.Exit, typer.Abort) as exc:
        sys.exit(getattr(exc, "exit_code", 1))
    except Exception as exc:
        # click's usage errors (bad option, missing argument): one line, exit code 2
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            print(f"error: {exc.format_message()}", file=sys.stderr)
            sys.exit(exc.exit_code or 2)
        raise
    sys.exit(rc if isinstance(rc, int) else 0)

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
    "learn_cmds",
    "reproduce_cmd",
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
    """Entry point: run the app, turning :class:`HardsoftError` into ``error: ...`` and exit 2."""
    try:
        app(standalone_mode=False)
    except HardsoftError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            print(f"error: {exc.format_message()}", file=sys.stderr)
            sys.exit(exc.exit_code or 2)
        raise

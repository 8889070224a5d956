"""The ``hardsoft`` command. Each command group lives in its own module of this package and
registers itself on :data:`app`; :func:`main` turns user errors into one-line messages."""

from __future__ import annotations

import os

from hardsoft.runtime import prepare_environment

# Before torch loads: transparent huge pages for large tensors (4-6x faster fresh allocations
# at n = 10^6) and OpenMP threads that sleep at a barrier rather than spin against other jobs
# (hardsoft.runtime). An explicit setting in the environment wins.
prepare_environment()

import contextlib  # noqa: E402
import importlib  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import NoReturn  # noqa: E402

import typer  # noqa: E402

from hardsoft import validate  # noqa: E402
from hardsoft.errors import HardsoftError, Interrupted, on_interrupt  # noqa: E402

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
    "atlas_cmds",
    "inspect_cmds",
    "decompile_cmds",
    "source_cmds",
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


EXIT_OK = 0
EXIT_NEGATIVE = 1
"""A negative result: check found a mismatch, a sensitivity bound was violated, an experiment
failed. The command ran correctly; its answer is "no"."""
EXIT_USAGE = 2
"""Bad input: an option, a file, a formula, a size that cannot fit. One line ``error: ...``."""
EXIT_INTERNAL = 3
"""A bug in hardsoft (an exception no check anticipated). One line; HARDSOFT_DEBUG=1 shows the
traceback."""
EXIT_INTERRUPTED = 130


def _fail(message: str, code: int) -> NoReturn:
    lines = message.strip().splitlines() or [""]
    print(f"error: {lines[0]}" if lines[0] else "error: bad usage", file=sys.stderr)
    for line in lines[1:]:
        print(line, file=sys.stderr)
    sys.exit(code)


NO_COMMAND = "give a command (the list is above; --help shows it again)"


def _usage_message(exc: Exception) -> str:
    """click's usage errors (a bad option, a missing argument, a missing command), one line."""
    text = str(exc.format_message()).strip()  # type: ignore[attr-defined]
    if not text:
        return NO_COMMAND
    return " ".join(text.split())


def _out_of_memory(exc: BaseException) -> bool:
    """numpy's MemoryError, torch's CPU allocator failure or a CUDA out-of-memory error:
    what the memory estimates (hardsoft.memory) did not foresee."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)


_SIZE = re.compile(
    r"(?:allocate|Tried to allocate)\s+([0-9.]+)\s*(B|KiB|MiB|GiB|TiB|PiB|bytes)", re.IGNORECASE
)
_UNITS = {"b": 1, "bytes": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50}


def _oom_message(exc: BaseException) -> str:
    """One line for an allocation that failed: the size asked for (numpy, torch and CUDA name
    it in their messages) and what this machine has available."""
    from hardsoft import memory

    text = " ".join(str(exc).split())
    found = _SIZE.search(text)
    asked = ""
    if found:
        nbytes = float(found.group(1)) * _UNITS[found.group(2).lower()]
        asked = f": one step needed {memory.fmt_bytes(nbytes)}"
    device = "cuda" if "CUDA" in text else "cpu"
    try:
        available = memory.available_bytes(device)
    except HardsoftError:
        available = None
    has = "" if available is None else f"; {memory.fmt_bytes(available)} is available"
    where = " on the GPU" if device == "cuda" else ""
    return (
        f"out of memory{where}{asked}{has} (smaller lengths, counts or batches fit; "
        "HARDSOFT_MAX_MEMORY caps what hardsoft plans to use)"
    )


def _bare_group(args: list[str]) -> bool:
    """Whether ``args`` names a command group that needs a command (``hardsoft language``)
    and nothing else; a group that runs by itself (``hardsoft atlas``) is not one."""
    if len(args) != 1:
        return False
    for group in app.registered_groups:
        callback = group.typer_instance.registered_callback if group.typer_instance else None
        if group.name == args[0]:
            return not (callback is not None and callback.invoke_without_command is True)
    return False


@contextlib.contextmanager
def _interrupts() -> Iterator[None]:
    """Ctrl-C raises :class:`~hardsoft.errors.Interrupted` while a command runs (typer and
    click intercept a KeyboardInterrupt and drop the ``error: interrupted`` line); the
    previous handler comes back after, for callers in-process (the tests). A SIGINT that is
    ignored (a background job) stays ignored; off the main thread nothing changes."""
    try:
        previous = signal.getsignal(signal.SIGINT)
        if previous is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, on_interrupt)
    except ValueError:  # not the main thread: signals cannot be handled here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def main(argv: list[str] | None = None) -> None:
    """Entry point. Exit codes (docs/errors.md): 0 success, 1 a negative result, 2 a usage
    error (one line ``error: ...``), 3 an internal error, 130 interrupted."""
    try:
        with _interrupts():
            _run(argv)
    except (Interrupted, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        validate.clear_inputs()  # the files this command read (validate.protect_inputs)


def _run(argv: list[str] | None) -> None:
    """One command, its errors turned into one line and an exit code."""
    try:
        from hardsoft.runtime import configure_threads

        configure_threads()
        given = sys.argv[1:] if argv is None else argv
        if not given or _bare_group(given):
            # the help, then a usage error: click 8.2 does this itself, click 8.1 (typer
            # 0.15.4's, the floor) would exit 0
            app(args=[*given, "--help"], prog_name="hardsoft", standalone_mode=False)
            _fail(NO_COMMAND, EXIT_USAGE)
        rc = app(args=argv, prog_name="hardsoft", standalone_mode=False)
    except HardsoftError as exc:
        _fail(str(exc), EXIT_USAGE)
    except (typer.Exit, typer.Abort) as exc:
        sys.exit(getattr(exc, "exit_code", EXIT_NEGATIVE))
    except BrokenPipeError:
        # the reader went away (| head): not an error of ours; silence the flush at exit
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        sys.exit(EXIT_OK)
    except Exception as exc:
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            _fail(_usage_message(exc), exc.exit_code or EXIT_USAGE)
        if os.environ.get("HARDSOFT_DEBUG"):
            raise  # also what the memory estimates missed: the tests want to see it
        if _out_of_memory(exc):
            _fail(_oom_message(exc), EXIT_USAGE)
        _fail(
            f"internal error, please report it: {type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:300]} (HARDSOFT_DEBUG=1 shows the traceback)",
            EXIT_INTERNAL,
        )
    sys.exit(rc if isinstance(rc, int) else EXIT_OK)

"""The ``hardsoft`` command's entry point (the console script, and ``python -m hardsoft``).

It sits above the whole package (the top layer of the import contract) and imports the command
line only once Ctrl-C is handled: the command's modules take seconds to load (torch), and a
Ctrl-C then printed a KeyboardInterrupt traceback; now it is one line ``error: interrupted``
and exit code 130 at any time after Python itself has started (docs/errors.md)."""

from __future__ import annotations

import signal
import sys

from hardsoft.errors import Interrupted, on_interrupt


def command() -> None:
    """Run ``hardsoft`` with the process's arguments (:func:`hardsoft.cli.main`)."""
    try:
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a background job keeps it
            signal.signal(signal.SIGINT, on_interrupt)
        from hardsoft.cli import main
    except (Interrupted, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
    main()


if __name__ == "__main__":
    command()

"""User-facing errors: the CLI prints their message on one line and exits non-zero."""

from __future__ import annotations


class HardsoftError(Exception):
    """An error caused by the user's input (bad file, bad option, bad formula, unknown symbol).

    The message must be self-contained and fit on one line, except for formula syntax errors,
    which may add the offending line and a caret under the bad character.
    """

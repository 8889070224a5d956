"""User-facing errors: the CLI prints their message on one line and exits non-zero."""

from __future__ import annotations


class HardsoftError(Exception):
    """An error caused by the user's input (bad file, bad option, bad formula, unknown symbol).

    The message must be self-contained and fit on one line, except for formula syntax errors,
    which may add the offending line and a caret under the bad character.
    """


def syntax_error(text: str, pos: int, message: str, *, where: str = "") -> HardsoftError:
    """The one form of a syntax error in every notation (formulas, C-RASP, B-RASP):

        'p.cr': syntax error at line 2, column 10: the line ends early; expected an expression
          y = (x ||
                   ^

    ``pos`` is the 0-based offset of the offending character in ``text``; ``where`` names the
    file as the notation's other messages do (``"'p.cr': "``). A one-line text read from no
    file (a formula on the command line) says only its column."""
    pos = max(0, min(pos, len(text.rstrip("\n"))))
    line_no = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end >= 0 else len(text)].rstrip("\r")
    column = pos - start + 1
    at = f"line {line_no}, column {column}" if where or "\n" in text else f"column {column}"
    return HardsoftError(
        f"{where}syntax error at {at}: {message}\n  {line}\n  {' ' * (column - 1)}^"
    )


class Interrupted(BaseException):
    """Ctrl-C, raised by :func:`on_interrupt` (the ``hardsoft`` command's SIGINT handler).

    Not a KeyboardInterrupt on purpose: typer turns a KeyboardInterrupt into a silent exit 130
    and click 8.1 into an ``Abort``, so the command's ``error: interrupted`` line was lost. A
    BaseException, so that no ``except Exception`` swallows it."""


def on_interrupt(signum: int, frame: object) -> None:
    """The SIGINT handler of the ``hardsoft`` command: raise :class:`Interrupted`."""
    raise Interrupted

"""Symbols inside the program notations' double quotes (C-RASP ``"a"``, B-RASP ``Q_"a"``,
the ``// alphabet: "..."`` comment), so that every alphabet the compiler accepts (any single
characters: quotes, brackets, backslash, space, newline, unicode) can be written and read back.

The escapes are ``\\"`` (a double quote), ``\\\\`` (a backslash), ``\\n``, ``\\t``, ``\\r``
and ``\\uXXXX`` / ``\\UXXXXXXXX`` (any other character that does not print). A backslash
before anything else stands for itself, so a file written before these escapes, with a lone
``"\\"`` for the backslash, still reads the same.
"""

from __future__ import annotations

import re

_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_READ = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|["\\ntr])')

STRING = r'"(?:\\.|[^"\n])*"'
"""A quoted symbol (or alphabet) as a regular expression: escapes, or any character except
a double quote and a newline."""


def escape(text: str) -> str:
    """``text`` with every character that cannot stand inside the quotes escaped."""
    out = []
    for c in text:
        if c in _NAMED:
            out.append(_NAMED[c])
        elif not c.isprintable():
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return "".join(out)


def unescape(text: str) -> str:
    """The characters ``text`` (between the quotes) stands for."""

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        return _READ[code] if code in _READ else chr(int(code[1:], 16))

    return _ESCAPE.sub(one, text)


def quoted(symbol: str) -> str:
    """``symbol`` in double quotes, escaped."""
    return f'"{escape(symbol)}"'


def needs_quotes(text: str) -> bool:
    """Whether ``text`` (an alphabet) must be quoted to survive a line of a program file:
    whitespace, a double quote, a backslash or a character that does not print."""
    return any(c.isspace() or c in '"\\' or not c.isprintable() for c in text)


__all__ = ["STRING", "escape", "needs_quotes", "quoted", "unescape"]

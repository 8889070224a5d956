"""The lark grammar of ``.cr`` files (the coli-saar/c-rasp form) and the parser to
:mod:`hardsoft.programs.crasp.syntax`.

One statement per line: ``NAME = expr`` or ``#import PRED``; ``//`` starts a comment. The
precedence is conventional (docs/programs.md): ``!`` and ``#`` bind tightest, then ``K *``,
``+ -``, the comparisons, ``&&``, ``||``, and ``c1 if b else c2`` loosest. Syntax errors name
the line and column and draw a caret under the offending character.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from hardsoft import validate
from hardsoft.errors import HardsoftError, syntax_error
from hardsoft.programs.crasp.syntax import (
    Arith,
    BoolLit,
    Compare,
    Count,
    Expr,
    Extreme,
    IfElse,
    Import,
    Int,
    Logic,
    Not,
    Scale,
    Statement,
    Sym,
    Var,
    children,
)
from hardsoft.programs.quoting import unescape

__all__ = ["GRAMMAR", "parse_expr", "parse_program"]

GRAMMAR = r"""
start: (line? _NL)*
line: NAME _ASSIGN expr                -> assign
    | _IMPORT NAME                     -> import_

?expr: or_expr
     | or_expr _IF or_expr _ELSE expr  -> ifelse
?or_expr: and_expr (_OR and_expr)+     -> or_
        | and_expr
?and_expr: cmp_expr (_AND cmp_expr)+   -> and_
         | cmp_expr
?cmp_expr: sum CMP sum                 -> compare
         | sum
?sum: sum _PLUS product                -> add
    | sum _MINUS product               -> sub
    | product
?product: INT _TIMES product           -> scale
        | unary
?unary: _NOT unary                     -> not_
      | _COUNT unary                   -> count
      | _COUNT _LBRACK NAME _RBRACK unary  -> guarded_count
      | atom
?atom: STRING                          -> sym
     | _TRUE                           -> true
     | _FALSE                          -> false
     | INT                             -> int_
     | NAME                            -> var
     | _MIN _LPAR expr _COMMA expr _RPAR  -> min_
     | _MAX _LPAR expr _COMMA expr _RPAR  -> max_
     | _LPAR expr _RPAR

_IMPORT: /#import(?![A-Za-z0-9_])/
_COUNT: "#"
_TRUE: "true"
_FALSE: "false"
_IF: "if"
_ELSE: "else"
_MIN: "min"
_MAX: "max"
NAME: /[A-Za-z_][A-Za-z_0-9]*/
STRING: /"(\\.|[^"\n])*"/
INT: /[0-9]+/
CMP: "==" | "!=" | "<=" | ">=" | "<" | ">"
_ASSIGN: "="
_AND: "&&"
_OR: "||"
_NOT: "!"
_PLUS: "+"
_MINUS: "-"
_TIMES: "*"
_LPAR: "("
_RPAR: ")"
_LBRACK: "["
_RBRACK: "]"
_COMMA: ","
_NL: /(\r?\n)+/
COMMENT: /\/\/[^\n]*/
%ignore COMMENT
%ignore /[ \t\f\r]+/
"""

LEFT_NESTED = 16
"""Chains of ``&&`` (or ``||``) up to this many operands nest to the left as written."""

MAX_DIGITS = 18
"""Longest integer literal (18 digits stay below 2^63; hardsoft's counts are int64)."""

_NAMES = {
    "NAME": "a name",
    "STRING": 'a symbol like "a"',
    "INT": "an integer",
    "CMP": "a comparison (== != < > <= >=)",
    "_ASSIGN": "'='",
    "_AND": "'&&'",
    "_OR": "'||'",
    "_NOT": "'!'",
    "_COUNT": "'#'",
    "_PLUS": "'+'",
    "_MINUS": "'-'",
    "_TIMES": "'*'",
    "_LPAR": "'('",
    "_RPAR": "')'",
    "_LBRACK": "'['",
    "_RBRACK": "']'",
    "_COMMA": "','",
    "_IF": "'if'",
    "_ELSE": "'else'",
    "_IMPORT": "'#import'",
    "_TRUE": "true",
    "_FALSE": "false",
    "_MIN": "min(",
    "_MAX": "max(",
    "_NL": "the end of the line",
    "$END": "the end of the file",
}
_EXPR_START = {"STRING", "INT", "NAME", "_TRUE", "_FALSE", "_MIN", "_MAX", "_LPAR", "_NOT"}


def _int(token: Any) -> int:
    text = str(token)
    if len(text.lstrip("0")) > MAX_DIGITS:
        raise HardsoftError(f"the integer {text[:24]}... has more than {MAX_DIGITS} digits")
    return int(text)


@v_args(inline=True)
class _Build(Transformer):
    """Parse tree → syntax tree, built by the LALR parser as it reduces (no recursive walk of
    a tree: a deeply nested expression cannot overflow Python's stack here)."""

    def start(self, *lines: Any) -> list[Statement | Import]:
        return list(lines)

    def assign(self, name: Token, expr: Expr) -> Statement:
        return Statement(str(name), expr, name.line or 0)

    def import_(self, name: Token) -> Import:
        return Import(str(name), name.line or 0)

    def ifelse(self, then: Expr, cond: Expr, other: Expr) -> Expr:
        return IfElse(then, cond, other)

    def or_(self, *operands: Expr) -> Expr:
        return chain("||", operands)

    def and_(self, *operands: Expr) -> Expr:
        return chain("&&", operands)

    def compare(self, a: Expr, op: Token, b: Expr) -> Expr:
        return Compare(str(op), a, b)

    def add(self, a: Expr, b: Expr) -> Expr:
        return Arith("+", a, b)

    def sub(self, a: Expr, b: Expr) -> Expr:
        return Arith("-", a, b)

    def scale(self, k: Token, e: Expr) -> Expr:
        return Scale(_int(k), e)

    def not_(self, e: Expr) -> Expr:
        return Not(e)

    def count(self, e: Expr) -> Expr:
        return Count(e)

    def guarded_count(self, guard: Token, e: Expr) -> Expr:
        return Count(e, str(guard))

    def sym(self, token: Token) -> Expr:
        return Sym(unescape(str(token)[1:-1]))

    def true(self) -> Expr:
        return BoolLit(True)

    def false(self) -> Expr:
        return BoolLit(False)

    def int_(self, token: Token) -> Expr:
        return Int(_int(token))

    def var(self, token: Token) -> Expr:
        return Var(str(token))

    def min_(self, a: Expr, b: Expr) -> Expr:
        return Extreme("min", a, b)

    def max_(self, a: Expr, b: Expr) -> Expr:
        return Extreme("max", a, b)


def chain(op: str, operands: Sequence[Expr]) -> Expr:
    """``a && b && ...`` (or ``||``): left-nested as written up to :data:`LEFT_NESTED`
    operands, balanced beyond (the same value: both are associative), so that a long chain
    does not count as deep nesting (:data:`MAX_NESTING`)."""
    if len(operands) <= LEFT_NESTED:
        out = operands[0]
        for e in operands[1:]:
            out = Logic(op, out, e)
        return out
    half = (len(operands) + 1) // 2
    return Logic(op, chain(op, operands[:half]), chain(op, operands[half:]))


@cache
def _parser(start: str) -> Lark:
    return Lark(
        GRAMMAR,
        parser="lalr",
        start=start,
        propagate_positions=True,
        maybe_placeholders=False,
        transformer=_Build(),
    )


def _accepts(exc: UnexpectedInput) -> set[str]:
    """The terminals the parser could take at the error (lark's ``expected`` set
    over-approximates after LALR default reductions)."""
    interactive = getattr(exc, "interactive_parser", None)
    accepts: set[str] = set()
    if interactive is not None:
        try:
            accepts = set(interactive.accepts())
        except Exception:  # pragma: no cover - lark's own approximation below
            accepts = set()
    return accepts or set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())


def _expected(accepts: set[str]) -> str:
    if accepts & _EXPR_START and len(accepts & _EXPR_START) >= 4:
        rest = sorted(_NAMES.get(a, a) for a in accepts - _EXPR_START - {"_COUNT"})
        words = ["an expression", *rest]
    else:
        words = sorted({_NAMES.get(a, a) for a in accepts})
    if not words:
        return "something else"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _syntax_error(text: str, exc: UnexpectedInput, where: str) -> HardsoftError:
    hint = ""
    accepts = _accepts(exc)
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        char = text[pos]
        problem = f"unexpected character {char!r}; "
        if char == "'":
            hint = ' (symbols are written in double quotes, like "a")'
        elif char == "&" or char == "|":
            hint = f" (write {char * 2})"
    else:
        token = exc.token if isinstance(exc, UnexpectedToken) else None
        problem = ""
        if token is None or token.type == "$END" or token.start_pos is None:
            pos = len(text.rstrip())
        else:
            pos = token.start_pos
            if token.type == "_NL":
                problem = "the line ends early; "
            elif token.type == "_ASSIGN" and "CMP" in accepts:
                hint = " (a comparison is written ==)"
    message = f"{problem}expected {_expected(accepts)}{hint}"
    return syntax_error(text, pos, message, where=where)


def parse_program(text: str, where: str = "") -> list[Statement | Import]:
    """The statements and imports of a ``.cr`` file, in order (syntax only: names and types
    are checked by :mod:`hardsoft.programs.crasp.checker`); ``where`` names the file in a
    syntax error (``"'p.cr': "``)."""
    if not text.endswith("\n"):
        text += "\n"
    try:
        items: list[Statement | Import] = _parser("start").parse(text)  # type: ignore[assignment]
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc, where) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, HardsoftError):
            raise exc.orig_exc from None
        raise
    for item in items:
        if isinstance(item, Statement):
            head = f"{where}statement {item.name} (line {item.line})"
            validate.nesting(item.expr, children, head)
    return items


def parse_expr(text: str) -> Expr:
    """One expression (for tests and the Python API): ``parse_expr('#"a" > 2')``."""
    items = parse_program(f"x = {text}\n")
    if len(items) != 1 or not isinstance(items[0], Statement):
        raise HardsoftError(f"expected one expression, got {text!r}")
    return items[0].expr

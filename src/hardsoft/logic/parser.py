"""Parser for the concrete syntax of LTL[C,+] (see docs/logic.md for the grammar).

An LALR(1) grammar for lark; the AST is built while parsing (no recursive tree walk, so very long
formulas such as ``'a' & 'a' & ... & 'a'`` parse fine). Syntax errors become a
:class:`~hardsoft.errors.HardsoftError` naming the column, what was expected, and showing the
source line with a caret under the offending character.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from hardsoft.errors import HardsoftError, syntax_error
from hardsoft.logic.syntax import (
    Add,
    And,
    Compare,
    Const,
    CountFuture,
    CountPast,
    First,
    Formula,
    Future,
    Implies,
    IntConst,
    Last,
    Length,
    Mod,
    Next,
    Node,
    Not,
    Or,
    Past,
    Position,
    Prev,
    Scale,
    Since,
    Somewhere,
    Sub,
    Sym,
    Term,
    Until,
    symbols,
)

__all__ = ["parse", "parse_term", "GRAMMAR"]

GRAMMAR = r"""
?start: formula

?formula: implies
?implies: or_expr _IMPLIES implies     -> implies
        | or_expr
?or_expr: or_expr _OR and_expr         -> or_
        | and_expr
?and_expr: and_expr _AND cmp_expr      -> and_
         | cmp_expr
?cmp_expr: term CMP term               -> compare
         | since_expr
?since_expr: unary _S since_expr       -> since
           | unary _U since_expr       -> until
           | unary
?unary: _NOT unary                     -> not_
      | _Y unary                       -> prev
      | _X unary                       -> next_
      | _P unary                       -> past
      | _F unary                       -> future
      | _E unary                       -> somewhere
      | atom
?atom: SYMBOL                          -> sym
     | _TRUE                           -> true
     | _FALSE                          -> false
     | _FIRST                          -> first
     | _LAST                           -> last
     | _MOD _LPAR INT _COMMA INT _RPAR _LPAR term _RPAR  -> mod
     | _LPAR formula _RPAR

?term: term _PLUS product              -> add
     | term _MINUS product             -> sub
     | product
?product: INT _TIMES product           -> scale
        | _MINUS product               -> neg
        | tatom
?tatom: INT                            -> int_
      | _I                             -> position
      | _N                             -> length
      | _CPAST _LBRACK formula _RBRACK -> count_past
      | _CFUT _LBRACK formula _RBRACK  -> count_future
      | _LPAR term _RPAR

SYMBOL: /'(\\['\\]|[^'\\\n])'/
INT: /[0-9]+/
CMP: "<=" | ">=" | "!=" | "<" | ">" | "=" | "≤" | "≥" | "≠"
_IMPLIES: "->" | "→"
_OR: "|" | "∨"
_AND: "&" | "∧"
_NOT: "!" | "¬"
_PLUS: "+"
_MINUS: "-"
_TIMES: "*"
_S: "S"
_U: "U"
_Y: "Y"
_X: "X"
_P: "P"
_F: "F"
_E: "E"
_TRUE: "true" | "⊤"
_FALSE: "false" | "⊥"
_FIRST: "first"
_LAST: "last"
_MOD: "MOD"
_I: "i"
_N: "n"
_CPAST: "#<"
_CFUT: "#>"
_LPAR: "("
_RPAR: ")"
_LBRACK: "["
_RBRACK: "]"
_COMMA: ","

%import common.WS
%ignore WS
"""

_UNICODE_CMP = {"≤": "<=", "≥": ">=", "≠": "!="}


def _unquote(token: str) -> str:
    inner = token[1:-1]
    return inner[1] if inner.startswith("\\") else inner


MAX_DIGITS = 4000
"""Longest integer literal accepted (Python itself refuses to read more than 4300 digits)."""


def _int(token: Token | str) -> int:
    """An integer literal, exactly (Python ints: no int64 limit); absurdly long ones are a
    one-line error rather than a ValueError from ``int()``."""
    text = str(token)
    if len(text) > MAX_DIGITS:
        raise HardsoftError(f"an integer literal has {len(text)} digits (at most {MAX_DIGITS})")
    return int(text)


def _neg(t: Term) -> Term:
    """Unary minus, folded so that printing and re-parsing gives back the same AST."""
    if isinstance(t, IntConst):
        return IntConst(-t.value)
    if isinstance(t, Scale):
        return Scale(-t.factor, t.arg)
    return Scale(-1, t)


class _Build(Transformer):
    """Callbacks turning each grammar rule into an AST node, applied during LALR parsing."""

    def implies(self, c: list) -> Formula:
        return Implies(c[0], c[1])

    def or_(self, c: list) -> Formula:
        return Or(c[0], c[1])

    def and_(self, c: list) -> Formula:
        return And(c[0], c[1])

    def compare(self, c: list) -> Formula:
        op = str(c[1])
        return Compare(_UNICODE_CMP.get(op, op), c[0], c[2])

    def since(self, c: list) -> Formula:
        return Since(c[0], c[1])

    def until(self, c: list) -> Formula:
        return Until(c[0], c[1])

    def not_(self, c: list) -> Formula:
        return Not(c[0])

    def prev(self, c: list) -> Formula:
        return Prev(c[0])

    def next_(self, c: list) -> Formula:
        return Next(c[0])

    def past(self, c: list) -> Formula:
        return Past(c[0])

    def future(self, c: list) -> Formula:
        return Future(c[0])

    def somewhere(self, c: list) -> Formula:
        return Somewhere(c[0])

    def sym(self, c: list) -> Formula:
        return Sym(_unquote(str(c[0])))

    def true(self, c: list) -> Formula:
        return Const(True)

    def false(self, c: list) -> Formula:
        return Const(False)

    def first(self, c: list) -> Formula:
        return First()

    def last(self, c: list) -> Formula:
        return Last()

    def mod(self, c: list) -> Formula:
        return Mod(_int(c[0]), _int(c[1]), c[2])

    def add(self, c: list) -> Term:
        return Add(c[0], c[1])

    def sub(self, c: list) -> Term:
        return Sub(c[0], c[1])

    def scale(self, c: list) -> Term:
        return Scale(_int(c[0]), c[1])

    def neg(self, c: list) -> Term:
        return _neg(c[0])

    def int_(self, c: list) -> Term:
        return IntConst(_int(c[0]))

    def position(self, c: list) -> Term:
        return Position()

    def length(self, c: list) -> Term:
        return Length()

    def count_past(self, c: list) -> Term:
        return CountPast(c[0])

    def count_future(self, c: list) -> Term:
        return CountFuture(c[0])


@cache
def _parser(start: str) -> Lark:
    grammar = GRAMMAR if start == "formula" else GRAMMAR.replace("?start: formula", "?start: term")
    return Lark(grammar, parser="lalr", transformer=_Build(), maybe_placeholders=False)


# ------------------------------------------------------------------ error messages

_FORMULA_START = {
    "SYMBOL",
    "_TRUE",
    "_FALSE",
    "_FIRST",
    "_LAST",
    "_MOD",
    "_NOT",
    "_Y",
    "_X",
    "_P",
    "_F",
    "_E",
}
_TERM_START = {"INT", "_I", "_N", "_CPAST", "_CFUT", "_MINUS"}
_FORMULA_OPS = {"_AND", "_OR", "_IMPLIES", "_S", "_U"}
_TERM_OPS = {"_PLUS", "_MINUS", "_TIMES"}
_PUNCT = {
    "_RPAR": "')'",
    "_RBRACK": "']'",
    "_LPAR": "'('",
    "_LBRACK": "'['",
    "_COMMA": "','",
    "INT": "an integer",
}


def _describe_expected(expected: Iterable[str], want: str) -> str:
    exp = set(expected)
    parts: list[str] = []
    if exp & _FORMULA_START:
        parts.append("a formula")
    elif exp & {"_I", "_N", "_CPAST", "_CFUT"}:
        parts.append("a term")
    else:
        parts += [text for name, text in _PUNCT.items() if name in exp]
        if "CMP" in exp:
            parts.append("a comparison (< <= = != >= >)")
        if exp & _FORMULA_OPS or exp & _TERM_OPS:
            parts.append("an operator")
        if "$END" in exp:
            parts.append("the end of the formula")
    if not parts:
        parts.append(want)
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _previous_token(text: str, pos: int, start: str) -> str | None:
    try:
        tokens = list(_parser(start).lex(text[:pos]))
    except UnexpectedInput:
        return None
    return str(tokens[-1]) if tokens else None


def _acceptable(exc: UnexpectedInput) -> set[str]:
    """The terminals the parser could really take at the error (lark's own ``expected`` set
    over-approximates after LALR default reductions)."""
    interactive = getattr(exc, "interactive_parser", None)
    if interactive is not None:
        try:
            return set(interactive.accepts())
        except Exception:  # pragma: no cover - fall back to lark's approximation
            pass
    return set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())


def _syntax_error(text: str, exc: UnexpectedInput, start: str) -> HardsoftError:
    want = "a formula" if start == "formula" else "a term"
    expected = _describe_expected(_acceptable(exc), want)
    hint = ""
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        char = text[pos]
        problem = f"unexpected character {char!r}; "
        if char == "'":
            hint = " (a symbol is one character between quotes, like 'a'; write '\\'' for ')"
        elif char.isalpha() and expected.startswith("a formula"):
            hint = f" (symbols are written in quotes, like '{char}')"
    else:
        token = exc.token if isinstance(exc, UnexpectedToken) else None
        problem = ""
        if token is None or token.type == "$END" or token.start_pos is None:
            pos = len(text.rstrip())
        else:
            pos = token.start_pos
            if token.type in _TERM_START - {"_MINUS"} and expected == "a formula":
                hint = " (a comparison of terms needs parentheses here)"
    prev = _previous_token(text, pos, start)
    where = f" after {prev!r}" if prev is not None else ""
    return syntax_error(text, pos, f"{problem}expected {expected}{where}{hint}")


def _check_alphabet(text: str, node: Node, alphabet: Iterable[str]) -> None:
    allowed = set(alphabet)
    outside = symbols(node) - allowed
    if not outside:
        return
    shown = "".join(sorted(allowed))
    try:  # locate the first offending symbol for the message
        for token in _parser("formula").lex(text):
            if isinstance(token, Token) and token.type == "SYMBOL":
                symbol = _unquote(str(token))
                if symbol in outside:
                    raise HardsoftError(
                        f"symbol {symbol!r} (column {token.column}) is not in the alphabet "
                        f"{shown!r}"
                    )
    except UnexpectedInput:
        pass
    raise HardsoftError(f"symbol {sorted(outside)[0]!r} is not in the alphabet {shown!r}")


def _run(text: str, start: str, alphabet: Iterable[str] | None) -> Node:
    if not isinstance(text, str):
        raise HardsoftError(f"expected formula text, got {type(text).__name__}")
    try:
        node: Node = _parser(start).parse(text)  # type: ignore[assignment]  # the transformer builds Nodes
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc, start) from None
    except HardsoftError as exc:  # e.g. MOD(0, 1)(i): a well-formed but invalid node
        raise HardsoftError(f"invalid formula: {exc}") from None
    if alphabet is not None:
        _check_alphabet(text, node, list(alphabet))
    return node


def parse(text: str, alphabet: Iterable[str] | None = None) -> Formula:
    """Parse a formula. With ``alphabet`` (a string or iterable of symbols), a quoted symbol
    outside it is an error naming the symbol."""
    node = _run(text, "formula", alphabet)
    assert isinstance(node, Formula)
    return node


def parse_term(text: str, alphabet: Iterable[str] | None = None) -> Term:
    """Parse a counting term such as ``#<['a'] - 2 * i``."""
    node = _run(text, "term", alphabet)
    assert isinstance(node, Term)
    return node

"""Reading B-RASP text: a lark LALR grammar for the form the b-rasp.github.io simulator prints,
and the checks that make a list of statements a program.

One statement per line; blank lines and ``#`` comments (a hardsoft extension: the simulator
reads neither) are skipped. Names are letters, digits, ``_`` and ``?`` (as in the
simulator's ``Y_?``), starting with a letter or ``_``; a symbol that is none of these is
declared quoted, ``Q_"("`` (escaped as :mod:`hardsoft.programs.quoting` says; a hardsoft
extension). ``not`` is read as ``!``. Every
problem is one :class:`~hardsoft.errors.HardsoftError`: syntax errors give the line, column
and a caret under the offending character; the other checks name the statement and its line.
"""

from __future__ import annotations

from functools import cache

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from hardsoft import validate
from hardsoft.errors import HardsoftError, syntax_error
from hardsoft.programs.brasp.syntax import (
    And,
    Atom,
    Attend,
    BMask,
    Const,
    Declare,
    Define,
    Expr,
    Not,
    Or,
    Program,
    Statement,
    Tie,
    Var,
    atoms,
    uses,
)
from hardsoft.programs.quoting import unescape
from hardsoft.programs.source import program_alphabet

GRAMMAR = r"""
start: _NL? (stmt (_NL stmt)* _NL?)?

stmt: NAME _LPAR VAR _RPAR                                                   -> declare
    | NAME _LPAR VAR _RPAR _DEF expr                                         -> define
    | NAME _LPAR VAR _RPAR _DEF TIE _LBRACK MASK _COMMA expr _RBRACK expr _COLON expr -> attend

?expr: conj (_OR conj)+                 -> or_
     | conj
?conj: unary (_AND unary)+              -> and_
     | unary
?unary: NOT unary                       -> not_
      | atom
?atom: NAME _LPAR VAR _RPAR             -> atom
     | ZERO                             -> false
     | ONE                              -> true
     | _LPAR expr _RPAR

TIE.2: /(leftmost|rightmost)(?![A-Za-z0-9_?])/
NOT.2: /!|not(?![A-Za-z0-9_?])/
NAME: /Q_"(\\.|[^"\n])*"|[A-Za-z_][A-Za-z0-9_?]*/
VAR: /[ij]/
MASK: /j[ \t]*<=[ \t]*i|i[ \t]*<=[ \t]*j|j[ \t]*<[ \t]*i|i[ \t]*<[ \t]*j|1/
ZERO: "0"
ONE: "1"
_DEF: ":="
_OR: "|"
_AND: "&"
_LPAR: "("
_RPAR: ")"
_LBRACK: "["
_RBRACK: "]"
_COMMA: ","
_COLON: ":"
_NL: /([ \t]*(#[^\n]*)?\r?\n)+/

%ignore /[ \t]+/
%ignore /#[^\n]*/
"""

_EXPECTED = {
    "NAME": "a name",
    "VAR": "i or j",
    "TIE": "leftmost or rightmost",
    "NOT": "an expression",
    "ZERO": "an expression",
    "ONE": "an expression",
    "MASK": "a mask (j<i, i<j, j<=i, i<=j or 1)",
    "_DEF": "':='",
    "_OR": "an operator",
    "_AND": "an operator",
    "_LPAR": "'('",
    "_RPAR": "')'",
    "_LBRACK": "'['",
    "_RBRACK": "']'",
    "_COMMA": "','",
    "_COLON": "':'",
    "_NL": "the end of the line",
    "$END": "the end of the file",
}


class _Raw:
    """A statement as parsed, before the checks: ``(kind, head name, head var, parts, line,
    column)``."""

    def __init__(self, kind: str, name: Token, var: Token, parts: list) -> None:
        self.kind, self.name, self.var, self.parts = kind, str(name), str(var), parts
        self.line, self.column = name.line or 0, name.column or 0


class _Build(Transformer):
    """Parse tree → statements, built by the LALR parser as it reduces (no recursive walk of
    a tree: a deeply nested expression cannot overflow Python's stack here)."""

    def start(self, c: list) -> list:
        return [x for x in c if isinstance(x, _Raw)]

    def declare(self, c: list) -> _Raw:
        return _Raw("declare", c[0], c[1], [])

    def define(self, c: list) -> _Raw:
        return _Raw("define", c[0], c[1], [c[2]])

    def attend(self, c: list) -> _Raw:
        return _Raw("attend", c[0], c[1], c[2:])

    def or_(self, c: list) -> Expr:
        return _chain(Or, c)

    def and_(self, c: list) -> Expr:
        return _chain(And, c)

    def not_(self, c: list) -> Expr:
        return Not(c[1])

    def atom(self, c: list) -> Expr:
        return Atom(str(c[0]), Var(str(c[1])))

    def false(self, c: list) -> Expr:
        return Const(False)

    def true(self, c: list) -> Expr:
        return Const(True)


RESERVED = frozenset({"not", "leftmost", "rightmost"})
"""Names the grammar reads as keywords wherever a statement is used."""

LEFT_NESTED = 16
"""Chains of ``&`` (or ``|``) up to this many operands nest to the left as written."""


def _chain(op: type[And] | type[Or], operands: list[Expr]) -> Expr:
    """``a & b & ...`` (or ``|``): left-nested as written up to :data:`LEFT_NESTED` operands,
    balanced beyond (the same value), so that a long chain is not deep nesting."""
    if len(operands) <= LEFT_NESTED:
        out = operands[0]
        for e in operands[1:]:
            out = op(out, e)
        return out
    half = (len(operands) + 1) // 2
    return op(_chain(op, operands[:half]), _chain(op, operands[half:]))


def _children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Not):
        return (e.arg,)
    if isinstance(e, (And, Or)):
        return (e.left, e.right)
    return ()


@cache
def _parser() -> Lark:
    return Lark(
        GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=False, transformer=_Build()
    )


def _expected(exc: UnexpectedInput) -> str:
    interactive = getattr(exc, "interactive_parser", None)
    names: set[str] = set()
    if interactive is not None:
        try:
            names = set(interactive.accepts())
        except Exception:  # pragma: no cover - lark's own approximation below
            names = set()
    if not names:
        names = set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    if "NOT" in names:  # an expression may start here: do not list its first tokens
        names = (names - {"NAME", "ZERO", "ONE", "_LPAR"}) | {"NOT"}
    wanted = sorted({_EXPECTED.get(n, n) for n in names})
    if not wanted:
        return "a statement"
    return wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]


def _syntax_error(text: str, exc: UnexpectedInput, where: str) -> HardsoftError:
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        problem = f"unexpected character {text[pos]!r}; "
    else:
        token = exc.token if isinstance(exc, UnexpectedToken) else None
        if token is None or token.type == "$END" or token.start_pos is None:
            pos = len(text.rstrip())
            problem = "unexpected end of file; "
        else:
            pos = token.start_pos
            shown = "end of line" if token.type == "_NL" else repr(str(token))
            problem = f"unexpected {shown}; "
    return syntax_error(text, pos, f"{problem}expected {_expected(exc)}", where=where)


def _statement(raw: _Raw, where: str) -> Statement:
    head = f"{where}line {raw.line}: "
    if raw.var != "i":
        raise HardsoftError(
            f"{head}statement {raw.name!r} is written {raw.name}({raw.var}); a statement defines "
            f"{raw.name}(i)"
        )
    if raw.kind == "declare":
        symbol = declared_symbol(raw.name)
        if symbol is None:
            raise HardsoftError(
                f"{head}{raw.name}(i) alone is a declaration, which must be Q_<symbol>(i) with "
                f'one symbol, or Q_"<symbol>"(i) quoted (define a statement with '
                f"{raw.name}(i) := ...)"
            )
        return Declare(raw.name, raw.line, symbol)
    if raw.kind == "define":
        return Define(raw.name, raw.line, raw.parts[0])
    tie, mask, score, value, default = raw.parts
    compact = "".join(str(mask).split())
    return Attend(raw.name, raw.line, Tie(str(tie)), BMask(compact), score, value, default)


def declared_symbol(name: str) -> str | None:
    """The symbol a declaration ``Q_a`` or ``Q_"a"`` (quoted, escaped) tests; None if the name
    declares no single symbol."""
    if name.startswith('Q_"') and name.endswith('"') and len(name) >= 4:
        symbol = unescape(name[3:-1])
        return symbol if len(symbol) == 1 else None
    return name[2] if name.startswith("Q_") and len(name) == 3 else None


def parse_statements(text: str, where: str = "") -> list[Statement]:
    """The statements of ``text`` in order (syntax only; :func:`check` does the rest).
    ``where`` prefixes every message (e.g. the file name and ``: ``)."""
    try:
        raws: list[_Raw] = _parser().parse(  # type: ignore[assignment]
            text + ("" if text.endswith("\n") else "\n")
        )
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc, where) from None
    for raw in raws:
        for part in raw.parts:
            if isinstance(part, Expr):
                head = f"{where}line {raw.line}: statement {raw.name!r}"
                validate.nesting(part, _children, head)
    return [_statement(r, where) for r in raws]


def check(
    statements: list[Statement], alphabet: tuple[str, ...] | None, where: str = ""
) -> Program:
    """The checks that make statements a program (one-line errors naming the statement):
    no statement, a name defined twice, an undefined name, ``X(j)`` outside a score or value,
    a default that reads ``j``, a symbol outside ``alphabet``, a cycle."""
    if not statements:
        raise HardsoftError(f"{where}the program has no statements")
    first: dict[str, Statement] = {}
    for s in statements:
        if s.name in RESERVED:
            raise HardsoftError(
                f"{where}line {s.line}: {s.name!r} is a keyword of B-RASP, not a statement name "
                "(a use of it would never read the statement); rename it"
            )
        if s.name in first:
            raise HardsoftError(
                f"{where}line {s.line}: statement {s.name!r} is defined twice (first on line "
                f"{first[s.name].line})"
            )
        first[s.name] = s
    for s in statements:
        _check_statement(s, first, f"{where}line {s.line}: statement {s.name!r}")
    declared = tuple(s.symbol for s in statements if isinstance(s, Declare))
    missing = f"{where}the program declares no symbol (Q_a(i)); give the alphabet (--alphabet)"
    alphabet = program_alphabet(alphabet, declared or None, missing=missing)
    for s in statements:
        if isinstance(s, Declare) and s.symbol not in alphabet:
            raise HardsoftError(
                f"{where}line {s.line}: {s.name}(i) declares the symbol {s.symbol!r}, which is "
                f"not in the alphabet {''.join(alphabet)!r}"
            )
    _check_cycles(statements, first, where)
    return Program(tuple(statements), tuple(alphabet))


def _check_statement(s: Statement, defined: dict[str, Statement], head: str) -> None:
    for a in uses(s):
        if a.name not in defined:
            raise HardsoftError(f"{head} uses {a.name}({a.var.value}), which is not defined")
    if isinstance(s, Define):
        js = [a for a in atoms(s.expr) if a.var is Var.J]
        if js:
            raise HardsoftError(
                f"{head} reads {js[0].name}(j); j exists only in an attention's score and "
                "value (a Boolean definition reads position i)"
            )
    if isinstance(s, Attend):
        js = [a for a in atoms(s.default) if a.var is Var.J]
        if js:
            raise HardsoftError(
                f"{head}: the default reads {js[0].name}(j); a default reads only position i "
                "(it applies when no j qualifies)"
            )


def _check_cycles(statements: list[Statement], defined: dict[str, Statement], where: str) -> None:
    """A statement may use any other (in any order), but not itself through a chain."""
    deps = {s.name: list(dict.fromkeys(a.name for a in uses(s))) for s in statements}
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for root in deps:
        if root in state:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path = [root]
        state[root] = 1
        while stack:
            name, k = stack.pop()
            if k < len(deps[name]):
                stack.append((name, k + 1))
                nxt = deps[name][k]
                if state.get(nxt) == 1:
                    cycle = path[path.index(nxt) :] + [nxt]
                    s = defined[nxt]
                    raise HardsoftError(
                        f"{where}line {s.line}: statement {nxt!r} depends on itself: "
                        f"{' -> '.join(cycle)}"
                    )
                if nxt not in state:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, 0))
            else:
                state[name] = 2
                path.pop()


def parse_program(text: str, alphabet: tuple[str, ...] | None = None, where: str = "") -> Program:
    """Parse and check a B-RASP program (see the module docstring)."""
    return check(parse_statements(text, where), alphabet, where)

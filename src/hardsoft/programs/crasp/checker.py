"""Static checks of a C-RASP program: names, order, types, predicates and symbols.

Every refusal is one line naming the statement (and its line): an undefined or repeated name,
a statement used before the line that defines it (or a cycle), a count used as a Boolean or a
Boolean as a count, an unknown or unimported predicate, a predicate of the wrong arity, a
symbol that is not one character or lies outside the alphabet, an empty program, and a count
as the last statement (the program's output must be Boolean).
"""

from __future__ import annotations

from dataclasses import dataclass

from hardsoft.errors import HardsoftError
from hardsoft.programs.crasp.predicates import (
    FAMILIES,
    BinaryPredicate,
    Predicate,
    UnaryPredicate,
    builtin,
)
from hardsoft.programs.crasp.syntax import (
    KEYWORDS,
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
    Type,
    Var,
    to_text,
    walk,
)

__all__ = ["Checked", "check_program"]

BUILTIN_NAMES = ", ".join(name for name, _ in FAMILIES)


@dataclass(frozen=True)
class Checked:
    """A checked program: its statements in order, each one's type, the imported predicates
    and the symbols it mentions (in order of first use)."""

    statements: tuple[Statement, ...]
    types: dict[str, Type]
    predicates: dict[str, Predicate]
    symbols: tuple[str, ...]


def _short(e: Expr, limit: int = 40) -> str:
    text = to_text(e)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Context:
    """Checks one statement; errors name it. ``later``: the statements after it (shared by
    every statement's context and shrunk as the check moves down: the check is linear in the
    program's length; a copy per statement made it quadratic, 97 s for 44,000 statements)."""

    def __init__(
        self,
        stmt: Statement,
        types: dict[str, Type],
        predicates: dict[str, Predicate],
        later: dict[str, Statement],
        symbols: list[str],
    ) -> None:
        self.stmt, self.types, self.predicates = stmt, types, predicates
        self.later, self.symbols = later, symbols

    def fail(self, message: str) -> HardsoftError:
        return HardsoftError(f"statement {self.stmt.name} (line {self.stmt.line}): {message}")

    def expect(self, e: Expr, want: Type, where: str) -> None:
        got = self.infer(e)
        if got is want:
            return
        if want is Type.BOOL:
            raise self.fail(
                f"{_short(e)} is a count, used as a Boolean ({where}); compare it, e.g. "
                f"{_short(e, 24)} > 0"
            )
        raise self.fail(
            f"{_short(e)} is a Boolean, used as a count ({where}); count it with #, or write "
            "1 if ... else 0"
        )

    def infer(self, e: Expr) -> Type:
        """The type of ``e``, checking its subexpressions."""
        if isinstance(e, Sym):
            self.symbol(e.symbol)
            return Type.BOOL
        if isinstance(e, BoolLit):
            return Type.BOOL
        if isinstance(e, Int):
            return Type.COUNT
        if isinstance(e, Var):
            return self.variable(e.name)
        if isinstance(e, Not):
            self.expect(e.operand, Type.BOOL, "operand of !")
            return Type.BOOL
        if isinstance(e, Logic):
            self.expect(e.left, Type.BOOL, f"operand of {e.op}")
            self.expect(e.right, Type.BOOL, f"operand of {e.op}")
            return Type.BOOL
        if isinstance(e, Compare):
            self.expect(e.left, Type.COUNT, f"operand of {e.op}")
            self.expect(e.right, Type.COUNT, f"operand of {e.op}")
            return Type.BOOL
        if isinstance(e, Count):
            if e.guard is not None:
                self.guard(e.guard)
            self.expect(e.operand, Type.BOOL, "operand of #")
            return Type.COUNT
        if isinstance(e, Arith):
            self.expect(e.left, Type.COUNT, f"operand of {e.op}")
            self.expect(e.right, Type.COUNT, f"operand of {e.op}")
            return Type.COUNT
        if isinstance(e, Scale):
            self.expect(e.operand, Type.COUNT, f"operand of {e.factor} *")
            return Type.COUNT
        if isinstance(e, Extreme):
            self.expect(e.left, Type.COUNT, f"argument of {e.op}")
            self.expect(e.right, Type.COUNT, f"argument of {e.op}")
            return Type.COUNT
        if isinstance(e, IfElse):
            self.expect(e.cond, Type.BOOL, "condition of if")
            self.expect(e.then, Type.COUNT, "branch of if-else")
            self.expect(e.other, Type.COUNT, "branch of if-else")
            return Type.COUNT
        raise TypeError(f"not a C-RASP expression: {e!r}")

    def symbol(self, symbol: str) -> None:
        if len(symbol) != 1:
            raise self.fail(
                f'"{symbol}" is not one symbol (hardsoft\'s symbols are single characters)'
            )
        if symbol not in self.symbols:
            self.symbols.append(symbol)

    def variable(self, name: str) -> Type:
        if name == self.stmt.name:
            raise self.fail(f"{name} uses itself (a cycle: statements are evaluated in order)")
        if name in self.types:
            return self.types[name]
        pred = self.predicates.get(name)
        if isinstance(pred, UnaryPredicate):
            return Type.BOOL
        if isinstance(pred, BinaryPredicate):
            raise self.fail(
                f"{name} is a binary predicate: it guards a count, #[{name}] b, and is no Boolean"
            )
        if name in self.later:
            raise self.fail(self._later(name))
        if builtin_or_none(name) is not None:
            raise self.fail(f"{name} is a built-in predicate that is not imported (#import {name})")
        raise self.fail(f"name {name} is not defined")

    def _later(self, name: str) -> str:
        """A forward reference: a cycle back to this statement, or only the wrong order."""
        path = [self.stmt.name, name]
        seen = {name}
        stack = [(name, path)]
        while stack:
            cur, trail = stack.pop()
            for used in _names(self.later[cur].expr) if cur in self.later else ():
                if used == self.stmt.name:
                    cycle = " -> ".join([*trail, used])
                    return f"a cycle {cycle} (a statement cannot depend on itself)"
                if used in self.later and used not in seen:
                    seen.add(used)
                    stack.append((used, [*trail, used]))
        line = self.later[name].line
        return (
            f"uses {name}, which is defined later (line {line}); statements are evaluated in "
            f"order: move {name} above {self.stmt.name}"
        )

    def guard(self, name: str) -> None:
        pred = self.predicates.get(name)
        if isinstance(pred, BinaryPredicate):
            return
        if isinstance(pred, UnaryPredicate):
            raise self.fail(
                f"{name} is a unary predicate; a guard #[...] takes a binary one "
                "(pred, predK, prevK)"
            )
        if name in self.types or name in self.later or name == self.stmt.name:
            raise self.fail(f"{name} is a statement; a guard #[...] takes a binary predicate")
        if builtin_or_none(name) is not None:
            raise self.fail(f"predicate {name} is not imported (add #import {name})")
        raise self.fail(f"unknown predicate {name} (built-in: {BUILTIN_NAMES})")


def builtin_or_none(name: str) -> Predicate | None:
    """The built-in predicate ``name``; None for no such name or a bad parameter."""
    try:
        return builtin(name)
    except HardsoftError:
        return None


def _names(e: Expr) -> list[str]:
    return [x.name for x in walk(e) if isinstance(x, Var)]


def _imports(items: list[Statement | Import]) -> dict[str, Predicate]:
    predicates: dict[str, Predicate] = {}
    for item in items:
        if not isinstance(item, Import):
            continue
        try:
            pred = builtin(item.name)
        except HardsoftError as exc:
            raise HardsoftError(f"line {item.line}: #import {item.name}: {exc}") from None
        if pred is None:
            raise HardsoftError(
                f"line {item.line}: #import {item.name}: unknown predicate (built-in: "
                f"{BUILTIN_NAMES}; a file never runs code)"
            )
        predicates[item.name] = pred
    return predicates


def check_program(
    items: list[Statement | Import], *, alphabet: tuple[str, ...] | None, where: str
) -> Checked:
    """Check a parsed program (``where`` names the file in messages); ``alphabet`` None
    accepts any one-character symbol."""
    predicates = _imports(items)
    statements = [s for s in items if isinstance(s, Statement)]
    if not statements:
        raise HardsoftError(
            f"{where} has no statements (a C-RASP program is NAME = expr lines; the last is "
            "the output)"
        )
    first_line: dict[str, int] = {}
    for s in statements:
        if s.name in KEYWORDS:
            raise HardsoftError(
                f"statement {s.name} (line {s.line}): {s.name} is a keyword of C-RASP, not a "
                f"statement name (where the program says {s.name} it means the keyword, never "
                "this statement); rename it"
            )
        if s.name in first_line:
            raise HardsoftError(
                f"statement {s.name} (line {s.line}) repeats the name defined on line "
                f"{first_line[s.name]}"
            )
        if s.name in predicates:
            raise HardsoftError(
                f"statement {s.name} (line {s.line}) has the name of an imported predicate"
            )
        first_line[s.name] = s.line
    types: dict[str, Type] = {}
    symbols: list[str] = []
    later = {s.name: s for s in statements}
    for s in statements:
        del later[s.name]
        ctx = _Context(s, types, predicates, later, symbols)
        known = len(symbols)
        types[s.name] = ctx.infer(s.expr)
        if alphabet is not None:
            outside = [a for a in symbols[known:] if a not in alphabet]
            if outside:
                raise ctx.fail(
                    f'symbol "{outside[0]}" is not in the alphabet {"".join(alphabet)!r}'
                )
    last = statements[-1]
    if types[last.name] is Type.COUNT:
        raise HardsoftError(
            f"the last statement {last.name} (line {last.line}) is a count: a program's output "
            f"(its last statement) must be Boolean; compare it, e.g. {last.name} > 0"
        )
    return Checked(tuple(statements), types, predicates, tuple(symbols))

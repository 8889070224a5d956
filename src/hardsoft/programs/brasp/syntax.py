"""B-RASP programs as data: expressions, the three kinds of statement, and their text.

B-RASP (Yang, Chiang & Angluin, NeurIPS 2024, "Masked hard-attention transformers recognize
exactly the star-free languages") is a sequence of Boolean vectors over the positions of a
word. A program is a list of statements, each defining one vector:

* ``Q_a(i)`` declares the symbol ``a``: true where the input has ``a``;
* ``P(i) := EXPR`` is a Boolean combination of earlier vectors at the same position;
* ``P(i) := leftmost|rightmost [MASK, SCORE] VALUE : DEFAULT`` attends, at each position i,
  to the leftmost (rightmost) position j allowed by MASK (``j<i``, ``i<j``, ``j<=i``,
  ``i<=j`` or ``1``) where SCORE holds, and takes VALUE there; DEFAULT if there is none.
  SCORE and VALUE may read vectors at i and at j, DEFAULT only at i.

The text form is the one the b-rasp.github.io simulator prints (``stringify``): ``!`` for
negation, ``&``, ``|``, ``0``, ``1``, parentheses, atoms ``X(i)`` and ``X(j)``. Printing
(:func:`expr_text`, :meth:`Program.text`) adds parentheses only where the precedence
(``!`` > ``&`` > ``|``) needs them, so printing and reading back gives the same program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from hardsoft.model.spec import Mask, Weighting
from hardsoft.programs.quoting import quoted


class Var(str, Enum):
    """Which position an atom reads: the query position ``i`` or the attended ``j``."""

    I = "i"  # noqa: E741 (the paper's name)
    J = "j"


class BMask(str, Enum):
    """The five masks of B-RASP, as written in programs."""

    BEFORE = "j<i"
    AFTER = "i<j"
    UPTO = "j<=i"
    FROM = "i<=j"
    ALL = "1"

    @property
    def model_mask(self) -> Mask:
        """The model's mask with the same allowed pairs."""
        return _MASKS[self]


_MASKS = {
    BMask.BEFORE: Mask.STRICT_FUTURE,
    BMask.AFTER: Mask.STRICT_PAST,
    BMask.UPTO: Mask.FUTURE,
    BMask.FROM: Mask.PAST,
    BMask.ALL: Mask.NONE,
}


class Tie(str, Enum):
    """Which of the qualifying positions an attention operation takes."""

    LEFTMOST = "leftmost"
    RIGHTMOST = "rightmost"

    @property
    def weighting(self) -> Weighting:
        return Weighting.LEFTMOST if self is Tie.LEFTMOST else Weighting.RIGHTMOST


# ---------------------------------------------------------------------------- expressions


class Expr:
    """A Boolean expression over atoms ``X(i)`` / ``X(j)``."""


@dataclass(frozen=True)
class Const(Expr):
    value: bool


@dataclass(frozen=True)
class Atom(Expr):
    name: str
    var: Var


@dataclass(frozen=True)
class Not(Expr):
    arg: Expr


@dataclass(frozen=True)
class And(Expr):
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Or(Expr):
    left: Expr
    right: Expr


def atoms(e: Expr) -> list[Atom]:
    """The distinct atoms of ``e`` in the order they first appear."""
    seen: dict[Atom, None] = {}
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Atom):
            seen.setdefault(x, None)
        elif isinstance(x, Not):
            stack.append(x.arg)
        elif isinstance(x, (And, Or)):
            stack += [x.right, x.left]
    return list(seen)


def expr_text(e: Expr, parent: int = 0) -> str:
    """``e`` as B-RASP text. ``!`` binds tightest, then ``&``, then ``|`` (both
    left-associative, as in the simulator's math.js); parentheses are added where precedence
    needs them and, for the reader, around a conjunction inside a disjunction."""
    if isinstance(e, Const):
        return "1" if e.value else "0"
    if isinstance(e, Atom):
        return f"{e.name}({e.var.value})"
    if isinstance(e, Not):
        return "!" + expr_text(e.arg, 4)
    if isinstance(e, Or):
        left = expr_text(e.left, 3 if isinstance(e.left, And) else 1)
        right = expr_text(e.right, 3 if isinstance(e.right, And) else 2)
        return f"({left} | {right})" if parent > 1 else f"{left} | {right}"
    assert isinstance(e, And)
    text = f"{expr_text(e.left, 2)} & {expr_text(e.right, 3)}"
    return f"({text})" if parent > 2 else text


# ---------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Statement:
    """One line of a program: it defines the vector ``name``; ``line`` is its line in the
    source (1-based; 0 for statements built in code)."""

    name: str
    line: int


@dataclass(frozen=True)
class Declare(Statement):
    """``Q_a(i)``: true where the input symbol is ``symbol``."""

    symbol: str


_PLAIN = re.compile(r"[A-Za-z0-9_?]")


def declaration_name(symbol: str) -> str:
    """The name that declares ``symbol``: ``Q_a``, or ``Q_"("`` where the symbol cannot be
    part of a name (quoted and escaped, :mod:`hardsoft.programs.quoting`)."""
    return f"Q_{symbol}" if _PLAIN.fullmatch(symbol) else f"Q_{quoted(symbol)}"


@dataclass(frozen=True)
class Define(Statement):
    """``NAME(i) := EXPR`` (EXPR reads only position i)."""

    expr: Expr


@dataclass(frozen=True)
class Attend(Statement):
    """``NAME(i) := TIE [MASK, SCORE] VALUE : DEFAULT``."""

    tie: Tie
    mask: BMask
    score: Expr
    value: Expr
    default: Expr


def statement_text(s: Statement) -> str:
    """The statement as one line of B-RASP (the simulator's ``stringify``)."""
    if isinstance(s, Declare):
        return f"{s.name}(i)"
    if isinstance(s, Define):
        return f"{s.name}(i) := {expr_text(s.expr)}"
    assert isinstance(s, Attend)
    return (
        f"{s.name}(i) := {s.tie.value} [{s.mask.value}, {expr_text(s.score)}] "
        f"{expr_text(s.value)} : {expr_text(s.default)}"
    )


def uses(s: Statement) -> list[Atom]:
    """The atoms a statement reads (score, value, default or expression)."""
    if isinstance(s, Define):
        return atoms(s.expr)
    if isinstance(s, Attend):
        out = dict.fromkeys(atoms(s.score) + atoms(s.value) + atoms(s.default))
        return list(out)
    return []


@dataclass(frozen=True)
class Program:
    """A checked B-RASP program: statements in program order (the last is the output),
    every name defined once, no cycles, every atom defined."""

    statements: tuple[Statement, ...]
    alphabet: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.statements)

    def statement(self, name: str) -> Statement:
        for s in self.statements:
            if s.name == name:
                return s
        raise KeyError(name)

    def text(self) -> str:
        """The program as B-RASP text, one statement per line (what the simulator reads)."""
        return "".join(statement_text(s) + "\n" for s in self.statements)

"""LTL[C,+] formulas → a C-RASP program (``decompile --as crasp``).

A formula lies in C-RASP when it uses only what C-RASP can say at a position from the prefix
up to it: symbols, Boolean connectives, counts of the past ``#<[φ]`` (C-RASP's ``# φ``),
linear comparisons of them, the position ``i`` (``# true``), ``Y^d φ``
(``#[pred_d] φ == 1``), ``P φ`` (``# φ > (1 if φ else 0)``), ``first`` (``# true == 1``)
and ``MOD(m, r)(i)`` (the periodic ``pos_mod_m_r'`` with r' = (r − 1) mod m, since C-RASP
counts positions from 0). Anything else (``X S U F E last #> n``, ``MOD`` of a count) is
refused with one line naming the output and the operator.

The program names every count ``C1, C2, ...`` (``C_a`` for ``# "a"``) and every Boolean that
is counted and is not a symbol ``B1, B2, ...``, in dependency order, so it reads like the
papers' programs; output 0 is the last statement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hardsoft.errors import HardsoftError
from hardsoft.logic import syntax as L
from hardsoft.programs.crasp.syntax import (
    KEYWORDS,
    Arith,
    BoolLit,
    Compare,
    Count,
    Expr,
    IfElse,
    Int,
    Logic,
    Not,
    Scale,
    Sym,
    Var,
    alphabet_comment,
    to_text,
)

__all__ = ["to_crasp"]

_OP = {"=": "==", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _operator(f: L.Node) -> str:
    from hardsoft.logic.structure import operators

    ops = sorted(operators(f) - {"sym", "const", "int", "#<", "Y", "P", "first", "i", "MOD"})
    return ops[0] if ops else type(f).__name__


class _Emitter:
    def __init__(self) -> None:
        self.lines: list[tuple[str, Expr]] = []
        self.names: set[str] = set()
        self.counts: dict[L.Formula, str] = {}
        self.booleans: dict[L.Formula, str] = {}
        self.imports: list[str] = []
        self.output = ""

    def fail(self, what: str, f: L.Node) -> HardsoftError:
        text = L.to_text(f)
        text = text if len(text) <= 60 else text[:57] + "..."
        return HardsoftError(
            f"output {self.output}: {what} (in {text}) is not in C-RASP, which sees only the "
            "prefix up to each position (counts #<, Y, P, first, MOD(m, r)(i)); decompile "
            "--as ltl prints the formula"
        )

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.names or name in KEYWORDS or name in self.imports:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def define(self, base: str, expr: Expr) -> str:
        name = self.fresh(base)
        self.lines.append((name, expr))
        return name

    def need(self, pred: str) -> None:
        if pred not in self.imports:
            self.imports.append(pred)

    # -------------------------------------------------------------- Booleans

    def boolean(self, f: L.Formula) -> Expr:
        if isinstance(f, L.Sym):
            return Sym(f.symbol)
        if isinstance(f, L.Const):
            return BoolLit(f.value)
        if isinstance(f, L.Not):
            return Not(self.boolean(f.arg))
        if isinstance(f, L.And):
            return Logic("&&", self.boolean(f.left), self.boolean(f.right))
        if isinstance(f, L.Or):
            return Logic("||", self.boolean(f.left), self.boolean(f.right))
        if isinstance(f, L.Implies):
            return Logic("||", Not(self.boolean(f.left)), self.boolean(f.right))
        if isinstance(f, L.First):
            return Compare("==", self.count(L.Const(True)), Int(1))
        if isinstance(f, L.Prev):
            d, inner = 0, f.arg
            while isinstance(inner, L.Prev):
                d, inner = d + 1, inner.arg
            d += 1
            pred = "pred" if d == 1 else f"pred{d}"
            self.need(pred)
            return Compare("==", Count(self.counted(inner), pred), Int(1))
        if isinstance(f, L.Past):
            arg = self.counted(f.arg)
            here = IfElse(Int(1), arg, Int(0))
            return Compare(">", self.count(f.arg), here)
        if isinstance(f, L.Mod):
            if not isinstance(f.term, L.Position):
                raise self.fail("MOD of a count", f)
            m, r = f.modulus, (f.residue - 1) % f.modulus
            pred = "pos_even" if (m, r) == (2, 0) else f"pos_mod_{m}_{r}"
            self.need(pred)
            return Var(pred)
        if isinstance(f, L.Compare):
            return self.compare(f)
        raise self.fail(f"the operator {_operator(f)}", f)

    def counted(self, f: L.Formula) -> Expr:
        """A Boolean that is counted: inline when it is a symbol or a literal, else named."""
        if isinstance(f, (L.Sym, L.Const)) or (
            isinstance(f, L.Not) and isinstance(f.arg, (L.Sym, L.Const))
        ):
            return self.boolean(f)
        if f not in self.booleans:
            expr = self.boolean(f)  # its own named parts first, so names number in order
            self.booleans[f] = self.define(f"B{len(self.booleans) + 1}", expr)
        return Var(self.booleans[f])

    # -------------------------------------------------------------- counts

    def count(self, f: L.Formula) -> Expr:
        if f not in self.counts:
            arg = self.counted(f)
            base = f"C{len(self.counts) + 1}"
            if isinstance(f, L.Sym) and _IDENT.fullmatch(f"C_{f.symbol}"):
                base = f"C_{f.symbol}"
            elif f == L.Const(True):
                base = "length"
            self.counts[f] = self.define(base, Count(arg))
        return Var(self.counts[f])

    def linear(self, t: L.Term, sign: int, coef: dict[L.Formula, int], const: list[int]) -> None:
        if isinstance(t, L.IntConst):
            const[0] += sign * t.value
        elif isinstance(t, L.Scale):
            self.linear(t.arg, sign * t.factor, coef, const)
        elif isinstance(t, (L.Add, L.Sub)):
            self.linear(t.left, sign, coef, const)
            self.linear(t.right, sign if isinstance(t, L.Add) else -sign, coef, const)
        elif isinstance(t, (L.CountPast, L.Position)):
            arg = t.arg if isinstance(t, L.CountPast) else L.Const(True)
            coef[arg] = coef.get(arg, 0) + sign
        else:
            raise self.fail(f"the term {_operator(t)}", t)

    def side(self, parts: list[tuple[L.Formula, int]], const: int) -> Expr:
        expr: Expr | None = None
        for f, c in parts:
            term = self.count(f)
            t = term if c == 1 else Scale(c, term)
            expr = t if expr is None else Arith("+", expr, t)
        if const or expr is None:
            expr = Int(const) if expr is None else Arith("+", expr, Int(const))
        return expr

    def compare(self, f: L.Compare) -> Expr:
        coef: dict[L.Formula, int] = {}
        const = [0]
        self.linear(f.left, 1, coef, const)
        self.linear(f.right, -1, coef, const)
        order = [g for g in coef if coef[g]]
        left = [(g, coef[g]) for g in order if coef[g] > 0]
        right = [(g, -coef[g]) for g in order if coef[g] < 0]
        k = const[0]
        return Compare(_OP[f.op], self.side(left, max(k, 0)), self.side(right, max(-k, 0)))


def _identifier(name: str, k: int) -> str:
    text = re.sub(r"[^A-Za-z_0-9]", "_", name) or f"out{k}"
    if text[0].isdigit():
        text = f"_{text}"
    return text


def to_crasp(
    outputs: Sequence[tuple[str, L.Formula]], alphabet: Sequence[str], *, header: str = ""
) -> str:
    """The C-RASP program (text of a ``.cr`` file) whose statement per output equals that
    output's formula at every position; output 0 is the last statement. A formula outside
    C-RASP is a one-line error naming the output and the operator."""
    em = _Emitter()
    finals: list[tuple[str, Expr]] = []
    for k, (name, f) in enumerate(outputs):
        em.output = name or f"out{k}"
        finals.append((_identifier(em.output, k), em.boolean(f)))
    # output 0 last, every output a statement of its own
    ordered = finals[1:] + finals[:1]
    for name, expr in ordered:
        if name in em.names:
            name = em.fresh(name)
        em.names.add(name)
        em.lines.append((name, expr))
    out = [f"// {line}" for line in header.splitlines()]
    out.append(alphabet_comment(alphabet))
    out += [f"#import {p}" for p in em.imports]
    out += [f"{name} = {to_text(expr)}" for name, expr in em.lines]
    return "\n".join(out) + "\n"

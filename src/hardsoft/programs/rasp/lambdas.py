"""Reading a user's lambda as a structured operation, where that is certain.

Tracr's programs are full of lambdas on positions: ``lambda k, q: q == k + offset`` (Tracr's
own ``shift_by``), ``lambda x: x + 1``, ``lambda x: 0``. A lambda is opaque to the compiler
— a function of an unbounded SOp is a table only up to a bound — unless its meaning is read
exactly. :func:`read_map` and :func:`read_predicate` do that, and only when it is certain:

1. the lambda's source is found in its file (``inspect``/``linecache``) and parsed;
2. every lambda on its first line is compiled again, with the function's free variables as
   the free variables of an enclosing function, and its bytecode, names, constants and
   variables must equal the function's own (``__code__``): the AST read is exactly the
   function that runs;
3. the body must be in a tiny grammar: the arguments, int/float constants (literals, or the
   closure's and globals' values), ``+``, ``-``, ``*`` and ``/`` by a constant, ``%`` and
   ``//`` by a positive integer constant, and (for predicates) one comparison of two such
   expressions.

Anything else returns None and the lambda stays a Python function. On numbers, the reading
computes what Python computes (the same operations in the same order up to exact integer
algebra); tests compare both.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import types
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hardsoft.programs.rasp.ops import (
    Affine,
    Compare,
    Compose,
    ElementOp,
    FloorDiv,
    Modulo,
    Pack,
    Relation,
    Unpack,
)

_RELATIONS = {
    ast.Eq: Relation.EQ,
    ast.NotEq: Relation.NEQ,
    ast.Lt: Relation.LT,
    ast.LtE: Relation.LEQ,
    ast.Gt: Relation.GT,
    ast.GtE: Relation.GEQ,
}


@dataclass(frozen=True)
class Linear:
    """``Σ coef[v] · v + const`` over the lambda's arguments (exact rationals)."""

    coefs: dict[str, Fraction]
    const: Fraction

    def plus(self, other: Linear, sign: int = 1) -> Linear:
        coefs = dict(self.coefs)
        for v, c in other.coefs.items():
            coefs[v] = coefs.get(v, Fraction(0)) + sign * c
        return Linear({v: c for v, c in coefs.items() if c}, self.const + sign * other.const)

    def scaled(self, c: Fraction) -> Linear:
        return Linear({v: k * c for v, k in self.coefs.items() if k * c}, self.const * c)


@dataclass(frozen=True)
class Reading:
    """A predicate ``a·k + b·q + c REL 0`` (``a``, ``b``, ``c`` exact)."""

    a: Fraction
    b: Fraction
    c: Fraction
    relation: Relation


def _lambda_node(f: types.FunctionType) -> ast.Lambda | None:
    """The AST of ``f``, proven to be ``f`` by recompiling it (None if not found or unsure)."""
    code = f.__code__
    if code.co_name != "<lambda>":
        return None
    try:
        filename = inspect.getsourcefile(f)
    except TypeError:
        return None
    if not filename:
        return None
    source = "".join(linecache.getlines(filename))
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
    ]
    matches = [node for node in found if _same_code(node, code, filename)]
    if len(matches) != 1 and not (matches and all(ast.dump(m) == ast.dump(matches[0])
                                                   for m in matches)):  # fmt: skip
        return None
    return matches[0]


def _same_code(node: ast.Lambda, code: types.CodeType, filename: str) -> bool:
    free = list(code.co_freevars)
    fields: dict[str, Any] = {
        "name": "_outer",
        "args": ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=v) for v in free],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        "body": [ast.Return(value=node)],
        "decorator_list": [],
        "returns": None,
    }
    if "type_params" in ast.FunctionDef._fields:  # Python >= 3.12
        fields["type_params"] = []
    outer = ast.FunctionDef(**fields)
    module = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        compiled = compile(module, filename, "exec")
    except (SyntaxError, ValueError, TypeError):
        return False
    outer_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = [c for c in outer_code.co_consts if isinstance(c, types.CodeType)]
    if len(inner) != 1:
        return False
    got = inner[0]
    plain = lambda c: tuple(x for x in c.co_consts if not isinstance(x, types.CodeType))  # noqa: E731
    return (
        got.co_code == code.co_code
        and got.co_names == code.co_names
        and got.co_varnames == code.co_varnames
        and got.co_freevars == code.co_freevars
        and plain(got) == plain(code)
    )


def _value_of(name: str, f: types.FunctionType) -> Any:
    code = f.__code__
    if name in code.co_freevars and f.__closure__:
        return f.__closure__[code.co_freevars.index(name)].cell_contents
    if name in f.__globals__:
        return f.__globals__[name]
    return None


def _number(v: Any) -> Fraction | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return Fraction(v)


def _linear(node: ast.expr, args: tuple[str, ...], f: types.FunctionType) -> Linear | None:
    """An affine expression of the arguments, or None."""
    if isinstance(node, ast.Constant):
        c = _number(node.value)
        return None if c is None else Linear({}, c)
    if isinstance(node, ast.Name):
        if node.id in args:
            return Linear({node.id: Fraction(1)}, Fraction(0))
        c = _number(_value_of(node.id, f))
        return None if c is None else Linear({}, c)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _linear(node.operand, args, f)
        if inner is None:
            return None
        return inner.scaled(Fraction(-1)) if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left, right = _linear(node.left, args, f), _linear(node.right, args, f)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left.plus(right)
        if isinstance(node.op, ast.Sub):
            return left.plus(right, -1)
        if isinstance(node.op, ast.Mult):
            if not left.coefs:
                return right.scaled(left.const)
            if not right.coefs:
                return left.scaled(right.const)
    return None


def _body(f: Any, arity: int) -> tuple[ast.expr, tuple[str, ...]] | None:
    if not isinstance(f, types.FunctionType) or f.__code__.co_argcount != arity:
        return None
    if f.__code__.co_kwonlyargcount or f.__defaults__:
        return None
    node = _lambda_node(f)
    if node is None:
        return None
    return node.body, tuple(a.arg for a in node.args.args)


def _integral(lin: Linear) -> bool:
    return all(c.denominator == 1 for c in (*lin.coefs.values(), lin.const))


def read_map(f: Any, arity: int = 1) -> ElementOp | None:
    """A lambda of ``arity`` arguments as an affine map (integer coefficients: integers stay
    integers), or (one argument) an affine map compared with a constant, or (two) ``x REL y``;
    None otherwise."""
    found = _body(f, arity)
    if found is None:
        return None
    body, args = found
    lin = _linear(body, args, f)
    if lin is not None:
        return _affine(lin, args)
    if arity == 2:
        if (
            isinstance(body, ast.Compare)
            and len(body.ops) == 1
            and type(body.ops[0]) in _RELATIONS
            and isinstance(body.left, ast.Name)
            and isinstance(body.comparators[0], ast.Name)
            and (body.left.id, body.comparators[0].id) == args
        ):
            return Compare(_RELATIONS[type(body.ops[0])], binary=True)
        return None
    (x,) = args
    modular = _modular(body, x, f)
    if modular is not None:
        return modular
    if isinstance(body, ast.IfExp):
        return _conditional(body, x, f)
    if isinstance(body, ast.Compare) and len(body.ops) == 1 and type(body.ops[0]) in _RELATIONS:
        right = _linear(body.comparators[0], (x,), f)
        inner = _modular(body.left, x, f)
        if inner is None:
            left = _linear(body.left, (x,), f)
            inner = None if left is None else _affine(left, (x,))
        if inner is None or right is None or right.coefs:
            return None
        compare = Compare(_RELATIONS[type(body.ops[0])], _plain(right.const))
        return Compose(inner, compare)
    return None


def _modular(node: ast.expr, x: str, f: types.FunctionType) -> ElementOp | None:
    """``aff(x) % m`` or ``aff(x) // m`` with integer coefficients and a positive integer
    constant ``m`` (a literal or a closure's value); None otherwise."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.FloorDiv))):
        return None
    left, right = _linear(node.left, (x,), f), _linear(node.right, (x,), f)
    if left is None or right is None or right.coefs:
        return None
    m = right.const
    if m.denominator != 1 or m <= 0 or not isinstance(_constant_value(node.right, f), int):
        return None
    inner = _affine(left, (x,))
    if inner is None:
        return None
    op = Modulo(int(m)) if isinstance(node.op, ast.Mod) else FloorDiv(int(m))
    return op if inner == Affine((1,), 0) else Compose(inner, op)


def _constant_value(node: ast.expr, f: types.FunctionType) -> Any:
    """The Python value of a constant operand (a literal or a name), to tell 2 from 2.0."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return _value_of(node.id, f)
    return None


def _conditional(node: ast.IfExp, x: str, f: types.FunctionType) -> ElementOp | None:
    """``A if aff(x) REL c else B`` with constant branches: the comparison, then a table of
    the two constants (``lambda x: 1 if x > 0 else 0``)."""
    test = node.test
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _RELATIONS
    ):
        return None
    yes, no = _constant(node.body, f), _constant(node.orelse, f)
    left, right = _linear(test.left, (x,), f), _linear(test.comparators[0], (x,), f)
    if yes is None or no is None or left is None or right is None:
        return None
    rel = _RELATIONS[type(test.ops[0])]
    if right.coefs and not left.coefs:  # c REL aff(x): swap
        left, right, rel = right, left, rel.flipped
    if right.coefs:
        return None
    inner = _affine(left, (x,))
    if inner is None:
        return None
    pick = _Pick(yes[0], no[0])
    return Compose(Compose(inner, Compare(rel, _plain(right.const))), pick)


@dataclass(frozen=True)
class _Pick:
    """``yes if t else no`` (the branches of a conditional, constants)."""

    yes: Any
    no: Any

    def __call__(self, t: Any) -> Any:
        return self.yes if t else self.no


def _constant(node: ast.expr, f: types.FunctionType) -> tuple[Any] | None:
    """A constant branch (a literal or a closure's value that is a plain value), boxed."""
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.Name):
        value = _value_of(node.id, f)
    else:
        return None
    if value is not None and not isinstance(value, (int, float, str, bool)):
        return None
    return (value,)


def _affine(lin: Linear, args: tuple[str, ...]) -> Affine | None:
    if not _integral(lin):
        return None  # x / 2 and 0.5 * x are not read: Python's float rounding differs
    return Affine(tuple(int(lin.coefs.get(a, 0)) for a in args), int(lin.const))


def _plain(c: Fraction) -> int | float:
    return int(c) if c.denominator == 1 else float(c)


def read_predicate(f: Any) -> Reading | None:
    """A two-argument lambda ``(key, query)`` as ``a·key + b·query + c REL 0``; None
    otherwise (only integer coefficients: the comparison is then exact on integers)."""
    found = _body(f, 2)
    if found is None:
        return None
    body, (k, q) = found
    if not (isinstance(body, ast.Compare) and len(body.ops) == 1):
        return None
    rel = _RELATIONS.get(type(body.ops[0]))
    left = _linear(body.left, (k, q), f)
    right = _linear(body.comparators[0], (k, q), f)
    if rel is None or left is None or right is None:
        return None
    diff = left.plus(right, -1)
    if not _integral(diff):
        return None
    return Reading(diff.coefs.get(k, Fraction(0)), diff.coefs.get(q, Fraction(0)), diff.const, rel)


def _is_builtin(name: str, f: types.FunctionType) -> bool:
    """Whether ``name`` in ``f`` is the builtin of that name (not shadowed)."""
    code = f.__code__
    return name not in code.co_freevars and name not in f.__globals__


def _pair(node: ast.expr, x: str, y: str, star: bool) -> bool:
    """Whether ``node`` is ``(x, y)`` (``(*x, y)`` with ``star``)."""
    if not (isinstance(node, ast.Tuple) and len(node.elts) == 2):
        return False
    first, second = node.elts
    if star:
        ok = isinstance(first, ast.Starred) and isinstance(first.value, ast.Name)
        first = first.value if ok else first  # type: ignore[attr-defined]
    return (
        isinstance(first, ast.Name)
        and first.id == x
        and isinstance(second, ast.Name)
        and second.id == y
    )


def read_pack(f: Any) -> Pack | None:
    """``lambda x, y: (x, y)``, or Tracr's ``make_nary_sequencemap`` step ``lambda x, y: (*x,
    y) if isinstance(x, tuple) else (x, y)`` (``isinstance`` and ``tuple`` the builtins)."""
    found = _body(f, 2)
    if found is None:
        return None
    body, (x, y) = found
    if _pair(body, x, y, star=False):
        return Pack(flatten=False)
    if not isinstance(body, ast.IfExp):
        return None
    test = body.test
    is_check = (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and not test.keywords
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
        and test.args[0].id == x
        and isinstance(test.args[1], ast.Name)
        and test.args[1].id == "tuple"
        and _is_builtin("isinstance", f)
        and _is_builtin("tuple", f)
    )
    if is_check and _pair(body.body, x, y, star=True) and _pair(body.orelse, x, y, star=False):
        return Pack(flatten=True)
    return None


def read_unpack(f: Any, size: int) -> Unpack | None:
    """``lambda args: g(*args)`` with ``g`` a lambda of ``size`` arguments read by
    :func:`read_map` (Tracr's ``make_nary_sequencemap`` final step)."""
    found = _body(f, 1)
    if found is None:
        return None
    body, (args,) = found
    if not (
        isinstance(body, ast.Call)
        and isinstance(body.func, ast.Name)
        and not body.keywords
        and len(body.args) == 1
        and isinstance(body.args[0], ast.Starred)
        and isinstance(body.args[0].value, ast.Name)
        and body.args[0].value.id == args
    ):
        return None
    inner = read_map(_value_of(body.func.id, f), size) if size <= 2 else _read_affine(
        _value_of(body.func.id, f), size
    )  # fmt: skip
    return None if inner is None else Unpack(inner, size)


def _read_affine(f: Any, arity: int) -> Affine | None:
    """A lambda of ``arity`` arguments whose body is an affine map with integer coefficients."""
    found = _body(f, arity)
    if found is None:
        return None
    body, args = found
    lin = _linear(body, args, f)
    return None if lin is None else _affine(lin, args)


def unread_reason(f: Any) -> str:
    """Why :func:`read_map` did not read ``f`` (for refusals)."""
    if not isinstance(f, types.FunctionType) or f.__code__.co_name != "<lambda>":
        return "it is not a lambda"
    node = _lambda_node(f)
    if node is None:
        return "its source was not found (or does not compile to the function)"
    if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in ast.walk(node)):
        return "it divides with /, whose float rounding is not an exact operation on integers"
    return "its body is not an affine map, a % or // by a constant, or one comparison"

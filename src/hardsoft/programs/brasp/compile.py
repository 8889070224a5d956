"""B-RASP → the compiler's IR → a transformer, with a certificate.

Each statement becomes one IR node, in dependency order: a declaration ``Q_a`` the symbol's
embedding, a Boolean definition ``mk_not``/``mk_and``/``mk_or`` of earlier nodes (no layer:
the builder folds Booleans into feed-forwards), and an attention statement one unique-hard
operation (:func:`hardsoft.compile.select.mk_attention`: one head with the program's own
mask, a score that is any Boolean function of the i-side and j-side atoms, the value read at
the witness and the default). Nothing here builds weights: the IR goes through the same
builder, targets and certificate as compiled formulas (:func:`hardsoft.compile.compiler.
build_model`), so a new target or a better gadget serves both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hardsoft.compile.certificate import model_certificate
from hardsoft.compile.compiler import build_model
from hardsoft.compile.ir import (
    BAnd,
    BAtom,
    BConst,
    BNode,
    BSum,
    const,
    mk_and,
    mk_not,
    mk_or,
    mk_sum,
    node,
)
from hardsoft.compile.select import mk_attention
from hardsoft.compile.targets import MaskMode, Target
from hardsoft.errors import HardsoftError
from hardsoft.model.transformer import Transformer
from hardsoft.programs.brasp.interpret import order
from hardsoft.programs.brasp.syntax import (
    And,
    Atom,
    Attend,
    Const,
    Declare,
    Define,
    Expr,
    Not,
    Or,
    Program,
    Statement,
    Var,
    atoms,
)

DEFAULT_N = 1000
"""The length at which the certificate evaluates τ(n) and the bounds (``max_len``)."""


def lower_expr(e: Expr, at_i: Mapping[str, BNode], at_j: Mapping[str, BNode]) -> BNode:
    """An expression as an IR node, ``X(i)`` from ``at_i`` and ``X(j)`` from ``at_j``."""
    if isinstance(e, Const):
        return const(e.value)
    if isinstance(e, Atom):
        return (at_i if e.var is Var.I else at_j)[e.name]
    if isinstance(e, Not):
        return mk_not(lower_expr(e.arg, at_i, at_j))
    if isinstance(e, Or):
        return _disjunction([lower_expr(d, at_i, at_j) for d in _disjuncts(e)])
    assert isinstance(e, And)
    left, right = lower_expr(e.left, at_i, at_j), lower_expr(e.right, at_i, at_j)
    symbols = _symbols(left), _symbols(right)
    if symbols[0] is not None and symbols[1] is not None:
        return mk_sum(*(symbols[0] & symbols[1]))  # one symbol per position
    return mk_and(left, right)


def _disjuncts(e: Expr) -> list[Expr]:
    return [*_disjuncts(e.left), *_disjuncts(e.right)] if isinstance(e, Or) else [e]


def _disjunction(nodes: list[BNode]) -> BNode:
    """``∨`` of ``nodes``: disjuncts that provably exclude each other are added (a sum costs
    no layer, and sums of attention results stay in their head's feed-forward); the groups
    are joined by ``mk_or``."""
    groups: list[list[BNode]] = []
    for x in nodes:
        for g in groups:
            if all(_exclusive(x, y) for y in g):
                g.append(x)
                break
        else:
            groups.append([x])
    return mk_or(*(mk_sum(*g) if len(g) > 1 else g[0] for g in groups))


def _literals(x: BNode) -> tuple[BNode, ...]:
    return x.args if isinstance(x, BAnd) else (x,)


def _exclusive(x: BNode, y: BNode) -> bool:
    """Whether ``x`` and ``y`` can never hold together: a conjunct of one is a different
    symbol than a conjunct of the other (one symbol per position), or its negation."""
    if x == y:
        return False
    for a in _literals(x):
        for b in _literals(y):
            sa, sb = _symbols(a), _symbols(b)
            if sa is not None and sb is not None and not sa & sb:
                return True
            if mk_not(a) == b:
                return True
    return False


def _symbols(x: BNode) -> set[BNode] | None:
    """The symbols of a node that is one symbol or a sum of symbols (else None)."""
    if isinstance(x, BAtom):
        return {x}
    if isinstance(x, BSum) and all(isinstance(a, BAtom) for a in x.args):
        return set(x.args)
    return None


def _attention(s: Attend, nodes: Mapping[str, BNode], nonstrict: bool) -> BNode:
    """One attention statement: the query bits are the distinct non-constant nodes its score
    and value read at i; for each assignment of them, score and value are j-side nodes."""
    names = list(dict.fromkeys(a.name for a in atoms(s.score) + atoms(s.value) if a.var is Var.I))
    bits = list(dict.fromkeys(nodes[nm] for nm in names if not isinstance(nodes[nm], BConst)))

    def side(e: Expr) -> Callable[[tuple[bool, ...]], BNode]:
        def at(u: tuple[bool, ...]) -> BNode:
            fixed = dict(zip(bits, u))
            at_i = {nm: const(fixed[x]) if x in fixed else x for nm in names for x in [nodes[nm]]}
            return lower_expr(e, at_i, nodes)

        return at

    return mk_attention(
        mask=s.mask.model_mask,
        tie=s.tie.weighting,
        query_bits=bits,
        score=side(s.score),
        value=side(s.value),
        default=lower_expr(s.default, nodes, {}),
        nonstrict=nonstrict,
        label=s.name,
    )


def lower_statement(s: Statement, nodes: Mapping[str, BNode], nonstrict: bool) -> BNode:
    if isinstance(s, Declare):
        return node(BAtom, s.symbol)
    if isinstance(s, Define):
        return lower_expr(s.expr, nodes, {})
    assert isinstance(s, Attend)
    return _attention(s, nodes, nonstrict)


def lower_program(program: Program, nonstrict: bool, where: str = "") -> dict[str, BNode]:
    """Every statement's IR node (errors name the statement and its line)."""
    nodes: dict[str, BNode] = {}
    for s in order(program):
        try:
            nodes[s.name] = lower_statement(s, nodes, nonstrict)
        except HardsoftError as exc:
            raise HardsoftError(f"{where}line {s.line}: statement {s.name!r}: {exc}") from None
    return nodes


def output_statements(program: Program, outputs: Sequence[str] | None) -> list[str]:
    """The statements the model outputs: the last one by default, else ``outputs`` (each a
    statement of the program, each once)."""
    if not outputs:
        return [program.names[-1]]
    chosen = list(outputs)
    for name in chosen:
        if name not in program.names:
            raise HardsoftError(
                f"--output {name!r} is not a statement of the program (its statements: "
                f"{', '.join(program.names)})"
            )
    twice = [nm for k, nm in enumerate(chosen) if nm in chosen[:k]]
    if twice:
        raise HardsoftError(f"--output {twice[0]!r} is given twice")
    return chosen


def compile_program(
    program: Program,
    target: str = "hard",
    *,
    masks: str = "strict",
    outputs: Sequence[str] | None = None,
    max_len: int | None = None,
    name: str = "",
    source: str = "",
    where: str = "",
) -> Transformer:
    """Compile ``program``: output coordinate k is the k-th of ``outputs`` (default: the last
    statement), exactly 0/1 at every position of every word. ``target``: hard |
    soft-temperature | soft-pe; ``masks``: strict (the program's own masks) or nonstrict
    (only none, j <= i, j >= i). ``max_len``: the n at which the certificate evaluates τ(n)
    and the error bounds (default 1000; the model itself is for every length)."""
    started = time.perf_counter()
    tgt = Target.parse(target, "target")
    mode = MaskMode.parse(masks, "mask mode (--masks)")
    n = DEFAULT_N if max_len is None else int(max_len)
    if n < 1:
        raise HardsoftError(f"max_len must be >= 1, got {max_len}")
    chosen = output_statements(program, outputs)
    nodes = lower_program(program, mode is MaskMode.NONSTRICT, where)
    title = name or "program"
    built = build_model(
        [nodes[s] for s in chosen],
        program.alphabet,
        tgt,
        mode,
        False,
        tuple(chosen),
        f"brasp[{tgt}, {mode}]: {title}",
    )
    model, b = built.model, built.builder
    model.meta["certificate"] = {
        "program": title,
        "notation": "brasp",
        "outputs": [
            {"name": s, "statement": s, "output_coordinate": k, "readout": dict(form)}
            for k, (s, form) in enumerate(zip(chosen, built.forms))
        ],
        "alphabet": "".join(program.alphabet),
        "target": str(tgt),
        "masks_mode": str(mode),
        "causal": False,
        "statements": statement_heads(program, b.head_info),
        **model_certificate(
            model=model,
            target=tgt,
            masks=mode,
            head_info=b.head_info,
            features=list(b.features),
            n=n,
            ir_size=built.ir_size,
        ),
        "compile_seconds": round(time.perf_counter() - started, 4),
    }
    model.meta["program"] = {
        "notation": "brasp",
        "name": title,
        "source": source or program.text(),
        "outputs": [
            {"name": s, "statement": s, "encoding": "bool", "value": None, "unit": None}
            for s in chosen
        ],
    }
    model.meta["kind"] = "compiled-program"
    model.meta["rounded"] = dict(b.rounded)
    return model


def statement_heads(program: Program, head_info: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each attention statement, the heads that implement it (``layer.head``, gadget,
    construction label): one head on ``hard`` and ``soft-temperature``; one per query class
    on ``soft-pe``; with non-strict masks a strict mask adds Thm. 12's ``Y``/``X`` heads,
    shared by the layer (not listed here)."""
    out = []
    for s in program.statements:
        if not isinstance(s, Attend):
            continue
        heads = [h for h in head_info if h.get("implements") == s.name]
        out.append(
            {
                "statement": s.name,
                "line": s.line,
                "heads": [f"{h['layer']}.{h['head']}" for h in heads],
                "gadgets": sorted({h["gadget"] for h in heads}),
                "theorem": sorted({h["theorem"] for h in heads}),
            }
        )
    return out

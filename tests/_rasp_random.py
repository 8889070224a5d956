"""Random RASP programs over ``hardsoft.rasp``, and a literal reference evaluator.

:func:`random_program` builds a program from the operations the compiler handles and the
ones it must refuse or bound: tables on finite values, affine maps and comparisons of
``indices``/``length``/counts, lookups, order and table selectors, categorical and numerical
Aggregates, SelectorWidth, Python functions of finite values. :func:`naive` evaluates a
program the way Tracr's evaluator is written (nested loops, no vectorisation, no memo), as an
independent reference for :func:`hardsoft.rasp.evaluate`.
"""

from __future__ import annotations

import random
from typing import Any

from hardsoft import rasp

VOCABS = ("ab", "abc", "01")


def _table_fn(rng: random.Random, domain: list[Any], codomain: list[Any]) -> Any:
    table = {v: rng.choice(codomain) for v in domain}
    return lambda v: table.get(v, codomain[0])


def random_program(seed: int) -> tuple[rasp.SOp, str]:
    """A random program and its vocabulary."""
    rng = random.Random(seed)
    vocab = rng.choice(VOCABS)
    finite: list[tuple[rasp.SOp, list[Any]]] = [(rasp.tokens, list(vocab))]
    ints: list[rasp.SOp] = [rasp.indices, rasp.length]
    bools: list[rasp.SOp] = [rasp.tokens == vocab[0]]
    means: list[rasp.SOp] = []
    last: rasp.SOp = rasp.tokens
    order = list(rasp.Comparison)
    for _ in range(rng.randint(2, 5)):
        kind = rng.choice(
            ["map", "seqmap", "logic", "affine", "compare", "lookup", "pick", "width", "mean",
             "mean_cmp", "table_pick", "tied_mean"]
        )  # fmt: skip
        if kind == "map":
            x, dom = rng.choice(finite)
            codomain = ["p", "q", None] if rng.random() < 0.3 else ["p", "q"]
            out = rasp.Map(_table_fn(rng, dom, codomain), x)
            finite.append((out, ["p", "q"]))
        elif kind == "seqmap":
            (x, dx), (y, dy) = rng.choice(finite), rng.choice(finite)
            table = {(a, b): rng.choice([True, False]) for a in dx for b in dy}
            out = rasp.SequenceMap(lambda a, b, t=table: t.get((a, b), False), x, y)
            bools.append(out)
        elif kind == "logic":
            a, b = rng.choice(bools), rng.choice(bools)
            out = rng.choice([a & b, a | b, ~a])
            bools.append(out)
        elif kind == "affine":
            x = rng.choice(ints)
            out = rng.choice([x + rng.randint(-2, 2), rasp.length - x - 1, x - 1, 2 * x])
            ints.append(out)
        elif kind == "compare":
            x = rng.choice(ints)
            c = rng.randint(0, 3)
            out = rng.choice([x < c, x == c, x >= c, x != c])
            if len(ints) > 1 and rng.random() < 0.3:
                out = ints[0] < rng.choice(ints[1:])
            bools.append(out)
        elif kind == "lookup":
            x, dom = rng.choice(finite)
            q = rng.choice(ints)
            out = rasp.Aggregate(rasp.Select(rasp.indices, q, rasp.Comparison.EQ), x)
            finite.append((out, dom))
        elif kind == "pick":
            x, dom = rng.choice(finite)
            cmp = rng.choice([c for c in order if c is not rasp.Comparison.NEQ])
            default = rng.choice([None, dom[0]])
            sel = rasp.Select(rasp.indices, rasp.indices, cmp)
            out = rasp.Aggregate(sel, x, default=default)
            finite.append((out, dom))
        elif kind == "table_pick":
            (k, _), (q, _) = rng.choice(finite), rng.choice(finite)
            x, dom = rng.choice(finite)
            sel = rasp.Select(k, q, rasp.Comparison.EQ)
            if rng.random() < 0.5:
                sel = sel & rasp.Select(rasp.indices, rasp.indices, rng.choice(order[:5]))
            out = rasp.Aggregate(sel, x)
            finite.append((out, dom))
        elif kind == "width":
            (k, _), (q, _) = rng.choice(finite), rng.choice(finite)
            cmp = rng.choice(order)
            sel = rasp.Select(k, q, cmp)
            if rng.random() < 0.4:
                sel = sel & rasp.Select(rasp.indices, rasp.indices, rng.choice(order))
            out = rasp.numerical(rasp.SelectorWidth(sel))
            ints.append(out)
        elif kind == "mean":
            b = rasp.numerical(rasp.Map(lambda v: 1 if v else 0, rng.choice(bools)))
            cmp = rng.choice([rasp.Comparison.LEQ, rasp.Comparison.LT, rasp.Comparison.TRUE,
                              rasp.Comparison.GEQ])  # fmt: skip
            out = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, cmp), b,
                                                default=0))  # fmt: skip
            means.append(out)
        elif kind == "tied_mean":  # a mean over the positions a table selects (ties)
            (k, _), (q, _) = rng.choice(finite), rng.choice(finite)
            b = rasp.numerical(rasp.Map(lambda v: 1 if v else 0, rng.choice(bools)))
            sel = rasp.Select(k, q, rasp.Comparison.EQ)
            if rng.random() < 0.5:
                sel = sel & rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
            out = rasp.numerical(rasp.Aggregate(sel, b, default=0))
        else:  # mean_cmp
            if not means:
                continue
            m = rng.choice(means)
            out = rng.choice([m < 0.5, m == 0, ~m, m > 0.25])
            bools.append(out)
        last = out
    return last.named("out"), vocab


# ---- the reference: Tracr's evaluator, written out plainly ----------------------------------


class Undefined(Exception):
    """The program has no value on this input (Tracr's evaluator raises)."""


def naive(expr: Any, xs: list[Any]) -> Any:
    n = len(xs)
    if isinstance(expr, rasp.TokensType):
        return list(xs)
    if isinstance(expr, rasp.IndicesType):
        return list(range(n))
    if isinstance(expr, rasp.LengthType):
        return [n] * n
    if isinstance(expr, rasp.Map):
        return [None if v is None else _call(expr.f, v) for v in naive(expr.inner, xs)]
    if isinstance(expr, rasp.SequenceMap):
        a, b = naive(expr.fst, xs), naive(expr.snd, xs)
        return [None if u is None or v is None else _call(expr.f, u, v) for u, v in zip(a, b)]
    if isinstance(expr, rasp.Full):
        return [expr.fill] * n
    if isinstance(expr, rasp.SelectorWidth):
        return [sum(row) for row in naive(expr.selector, xs)]
    if isinstance(expr, rasp.Aggregate):
        sel, vals = naive(expr.selector, xs), naive(expr.sop, xs)
        out = []
        for row in sel:
            picked = [v for s, v in zip(row, vals) if s]
            out.append(_mean(picked, expr.default, rasp.is_categorical(expr)))
        return out
    if isinstance(expr, rasp.Select):
        keys, queries = naive(expr.keys, xs), naive(expr.queries, xs)
        return [[bool(_call(expr.predicate, k, q)) for k in keys] for q in queries]
    if isinstance(expr, rasp.SelectorAnd):
        a, b = naive(expr.fst, xs), naive(expr.snd, xs)
        return [[u and v for u, v in zip(r, s)] for r, s in zip(a, b)]
    if isinstance(expr, rasp.SelectorOr):
        a, b = naive(expr.fst, xs), naive(expr.snd, xs)
        return [[u or v for u, v in zip(r, s)] for r, s in zip(a, b)]
    if isinstance(expr, rasp.SelectorNot):
        return [[not u for u in r] for r in naive(expr.inner, xs)]
    raise TypeError(expr)


def _call(f: Any, *args: Any) -> Any:
    try:
        return f(*args)
    except Exception as exc:
        raise Undefined(str(exc)) from exc


def _mean(picked: list[Any], default: Any, categorical: bool) -> Any:
    if not picked:
        return default
    if len(picked) == 1:
        return picked[0]
    if categorical:
        if len({(type(v), v) for v in picked}) > 1:
            raise Undefined("a categorical Aggregate averages different values")
        return picked[0]  # hardsoft: one value held by every selected position
    if not all(isinstance(v, (int, bool, float)) for v in picked):
        raise Undefined("several non-numbers")
    return sum(picked) / len(picked)

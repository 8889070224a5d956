"""Comparisons of counting terms as integer linear forms, and back: ``Σ c_t · t + k >= 0``.

``decompile`` writes its count comparisons with :func:`comparison` (positive terms on the left,
``A > B`` for ``A - B >= 1``) and merges a pair ``L >= k``, ``L <= k`` into ``L = k`` when it
prints a conjunction (:func:`as_linear` reads a comparison back)."""

from __future__ import annotations

from hardsoft.logic.nodes import Add, Compare, IntConst, Scale, Sub, Term

Coefs = dict[Term, int]


def as_linear(f: Compare) -> tuple[Coefs, int] | None:
    """``(coefficients, k)`` with ``f`` true iff ``Σ c_t t + k >= 0`` (integer terms), for the
    operators ``>=, >, <=, <``; None for ``=``, ``!=``."""
    left, right = _terms(f.left), _terms(f.right)
    if left is None or right is None:
        return None
    coefs = dict(left[0])
    for t, c in right[0].items():
        coefs[t] = coefs.get(t, 0) - c
    coefs = {t: c for t, c in coefs.items() if c}
    k = left[1] - right[1]
    if f.op == ">=":
        return coefs, k
    if f.op == ">":
        return coefs, k - 1
    if f.op == "<=":
        return {t: -c for t, c in coefs.items()}, -k
    if f.op == "<":
        return {t: -c for t, c in coefs.items()}, -k - 1
    return None


def _terms(t: Term) -> tuple[Coefs, int] | None:
    """A term as (coefficients of its non-arithmetic subterms, constant)."""
    if isinstance(t, IntConst):
        return {}, t.value
    if isinstance(t, Scale):
        inner = _terms(t.arg)
        if inner is None:
            return None
        return {s: t.factor * c for s, c in inner[0].items()}, t.factor * inner[1]
    if isinstance(t, (Add, Sub)):
        a, b = _terms(t.left), _terms(t.right)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(t, Add) else -1
        out = dict(a[0])
        for s, c in b[0].items():
            out[s] = out.get(s, 0) + sign * c
        return out, a[1] + sign * b[1]
    return {t: 1}, 0


def comparison(op: str, parts: list[tuple[Term, int]], k: int) -> Compare:
    """``Σ c_t t op -k`` written with the positive terms on the left: ``>=`` as ``A > B`` where
    that drops a constant (``A - B >= 1``), ``=`` and ``!=`` as they are."""
    left = [(c, t) for t, c in parts if c > 0]
    right = [(-c, t) for t, c in parts if c < 0]
    if op == ">=" and k < 0:  # A - B >= -k with -k > 0: A > B + (-k - 1)
        return Compare(">", _sum(left, 0), _sum(right, -k - 1))
    if op == ">=":
        return Compare(">=", _sum(left, k), _sum(right, 0))
    return Compare(op, _sum(left, max(k, 0)), _sum(right, max(-k, 0)))


def linear_term(parts: list[tuple[Term, int]], const: int) -> Term:
    """``Σ c_t t + const`` (coefficients of 1 left out)."""
    return _sum([(c, t) for t, c in parts], const)


def _sum(parts: list[tuple[int, Term]], const: int) -> Term:
    terms: list[Term] = [t if a == 1 else Scale(a, t) for a, t in parts]
    if const or not terms:
        terms.append(IntConst(const))
    out = terms[0]
    for t in terms[1:]:
        out = Add(out, t)
    return out

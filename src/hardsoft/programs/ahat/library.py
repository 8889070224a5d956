"""The named programs of Yang, Strobl, Chiang & Angluin (arXiv:2412.09925v1) §6: induction head,
k-hop induction head, flip-flop and DYCK-k (Appendix E). Each computes exactly the per-position
reference of the language or task of the same name in :mod:`hardsoft.languages`
(``prefix_reference``)."""

from __future__ import annotations

from collections.abc import Callable

from hardsoft.errors import HardsoftError
from hardsoft.programs.ahat.dsl import (
    Linear,
    Position,
    Program,
    Token,
    and_,
    attend,
    count,
    equal,
    exists,
    is_zero,
    lookup_int,
    not_,
    or_,
    prev,
    relu,
    round_bool,
    step,
    xor,
)

INDUCTION_ALPHABET = ("a", "b", "c", "d")
BRACKETS = ("()", "[]", "{}")
FLIPFLOP_ALPHABET = ("w", "r", "i", "0", "1")


def _sum(xs) -> Linear:
    total = Linear({}, 0.0)
    for x in xs:
        total = total.plus(x.lin())
    return total


def dyck(k: int) -> Program:
    """DYCK-k membership of every prefix, by the S-RASP program of Yang et al. (arXiv:2412.09925v1)
    Appendix E, with the same-depth test on small integers.

    ``l`` counts left brackets through i (exactly, by :func:`count`); the height is
    ``h = 2l − i`` (every symbol is a bracket); an error is recorded where ``h < 0``. The depth
    ``d = h + [right bracket]`` is the depth after a left / before a right bracket. One table
    lookup at position ``d + 1`` splits it as ``d + 1 = s·q + r`` with ``s = ⌈√n⌉`` (the
    position features ``i//s`` and ``i%s``, and their squares). Each position attends to the
    nearest earlier position with the same depth: score ``−(q_i − q_j)² − (r_i − r_j)²`` plus
    the rightmost tie-break ``j/(2n)``. Its terms are integers up to about 2n instead of
    ``d² ≈ n²/4``, so in float64 the tie-break (steps of 1/(2n)) stays exact to n ≈ 10⁶ and
    beyond, where ``−(d_i − d_j)²`` lost it from n ≈ 10⁵ (docs/programs.md). A right bracket
    whose partner there is not the left bracket of its type records an error. Output: no
    error through i and ``h = 0``.
    """
    if not 1 <= k <= len(BRACKETS):
        raise HardsoftError(f"dyck programs exist for k = 1..{len(BRACKETS)}, got {k}")
    pairs = BRACKETS[:k]
    alphabet = tuple(c for p in pairs for c in p)
    lefts = [Token(p[0]) for p in pairs]
    rights = [Token(p[1]) for p in pairs]
    left = _sum(lefts)
    right = _sum(rights)
    n_left = count(left, label="lcount")
    height = 2.0 * n_left - Position("i")
    depth = relu(height + right, label="depth")  # clamped at 0: below 0 is already an error
    err_height = step(-1.0 * height, 1, label="err_height")  # h <= -1
    quo, rem = Position("i//s"), Position("i%s")
    split = lookup_int(
        depth + 1.0,
        [quo, rem, Position("i//s*i//s") + Position("i%s*i%s")],
        label="depth_split",
    )
    q, r, sq = split.value(0), split.value(1), split.value(2)  # d + 1 = s·q + r, sq = q² + r²
    near = attend(
        [2.0 * q, 2.0 * r, -1.0 * sq, 1.0],
        [q, r, Linear({}, 1.0), -1.0 * sq],
        [*lefts, depth],
        mask="strict-future",
        tie="rightmost",
        label="same_depth",
    )
    type_ok = _sum(and_(r_, near.value(t), label=f"type_ok{t}") for t, r_ in enumerate(rights))
    same = equal(near.value(k), depth, label="same_level")
    matched = and_(near.found, same, type_ok, label="matched")
    err_match = and_(right, not_(matched), label="err_match")
    err = or_(err_height, err_match, label="err")
    any_err = exists(err, label="any_err")
    balanced = is_zero(height, label="balanced")
    out = round_bool(and_(not_(any_err), balanced, label="ok"), label="accept")
    return Program(
        name=f"dyck{k}" if k > 1 else "dyck1",
        alphabet=alphabet,
        outputs=[out.lin()],
        gap="1/(2*n)",
        description=f"DYCK-{k} membership of every prefix (Yang et al. (arXiv:2412.09925v1) "
        "Appendix E)",
        reference=f"dyck{k}",
    )


def induction_head(k: int = 1, alphabet: tuple[str, ...] = INDUCTION_ALPHABET) -> Program:
    """The k-hop induction head: per position, ``w_{find^k(i)}`` as an alphabet index, or −1
    when ``find^k(i) = 0``, where ``find(i)`` is the rightmost ``j <= i`` with
    ``w_{j−1} = w_i`` (0 if none), as in ``hardsoft.languages.induction``.

    One head computes find(i) for every i (matching the current symbol against the previous
    symbol of each key), retrieving the symbol there, its position and whether it matched.
    Each further hop is a table lookup by position (score ``2pj − j²``, gap 1) reading those
    same quantities at ``p = find^{h}(i)``.
    """
    if k < 1:
        raise HardsoftError(f"k-hop induction needs k >= 1, got {k}")
    toks = [Token(a) for a in alphabet]
    m = len(alphabet)
    before = prev(toks, label="prev_tok")
    prev_tok = [before.value(t) for t in range(m)]
    # values: w_j (m), j, w_{j-1} (m)
    find = attend(
        [t.lin() for t in toks],
        prev_tok,
        [*toks, Position("i"), *prev_tok],
        mask="future",
        tie="rightmost",
        label="find",
    )
    # matched(i): the selected j really has w_{j-1} = w_i (else find(i) = 0)
    matched = _sum(and_(toks[t], find.value(m + 1 + t), label=f"match{t}") for t in range(m))
    alive = matched
    sym = [find.value(t) for t in range(m)]
    pos = find.value(m)
    for hop in range(2, k + 1):
        # read matched, find and w_find at p = find^{hop-1}(i)
        at = lookup_int(
            pos, [matched, find.value(m), *[find.value(t) for t in range(m)]], label=f"hop{hop}"
        )
        alive = and_(alive, at.value(0), label=f"alive{hop}").lin()
        pos = at.value(1)
        sym = [at.value(2 + t) for t in range(m)]
    out = _sum(float(t) * and_(alive, sym[t], label=f"out{t}") for t in range(m)) + (-1.0) * not_(
        alive
    )
    return Program(
        name="induction-head" if k == 1 else f"khop{k}",
        alphabet=tuple(alphabet),
        outputs=[out],
        gap="1/(2*n)",
        description=f"{k}-hop induction head (Yang et al. (arXiv:2412.09925v1) "
        "§6): symbol index, -1 for none",
        reference="induction-head" if k == 1 else f"khop{k}",
    )


def flipflop() -> Program:
    """The flip-flop language of ``hardsoft.languages.flipflop``, per prefix.

    A position fails if it breaks the instruction/bit alternation, if it is position 1 and not
    ``w``, or if it is the bit of a read that differs from the bit after the most recent ``w``
    (a rightmost strict-future head on "the previous symbol is w"). The prefix through i is in
    the language iff nothing failed through i and i is the bit of a read (then i >= 4).
    """
    w, r, ig, b0, b1 = (Token(a) for a in FLIPFLOP_ALPHABET)
    parity = Position("(-1)^i")
    odd = 0.5 - 0.5 * parity  # instruction slots
    even = 0.5 + 0.5 * parity  # bit slots
    first = Position("[i=1]")
    before = prev([w, r], label="prev_instr")
    prev_w, prev_r = before.value(0), before.value(1)
    instr = w + r + ig
    bit = b0 + b1
    bad_slot = or_(
        and_(odd, not_(instr), label="bad_odd"),
        and_(even, not_(bit), label="bad_even"),
        and_(first, not_(w), label="bad_first"),
        label="bad_slot",
    )
    last_write = attend(
        [1.0], [prev_w], [b1, prev_w], mask="strict-future", tie="rightmost", label="last_write"
    )
    memory, wrote = last_write.value(0), last_write.value(1)
    read = and_(even, prev_r, label="is_read")
    wrong = or_(not_(wrote), xor(b1, memory, label="bit_differs"), label="wrong")
    bad_read = and_(read, wrong, label="bad_read")
    fail = or_(bad_slot, bad_read, label="fail")
    any_fail = exists(fail, label="any_fail")
    out = round_bool(and_(not_(any_fail), read, label="ok"), label="accept")
    return Program(
        name="flipflop",
        alphabet=FLIPFLOP_ALPHABET,
        outputs=[out.lin()],
        gap="1/(2*n)",
        description="the flip-flop language (Liu et al. 2023; Yang et al. (arXiv:2412.09925v1) "
        "§6), every prefix",
        reference="flipflop",
    )


PROGRAMS: dict[str, tuple[str, Callable[[int], Program], tuple[int, ...]]] = {
    "induction-head": (
        "basic induction head (per-position symbol index)",
        lambda k: induction_head(1),
        (),
    ),
    "khop": ("k-hop induction head, --k hops (2, 3, ...)", lambda k: induction_head(k), (2, 3)),
    "flipflop": ("flip-flop language membership of every prefix", lambda k: flipflop(), ()),
    "dyck": ("DYCK-k membership of every prefix, --k bracket types (1-3)", dyck, (1, 2, 3)),
}


LAYERNORM_PROGRAMS: dict[str, str] = {
    "parity": "PARITY (an even number of 1s) of the whole word, read at the last position "
    "(Chiang & Cholak 2022: layer norm with ε = 0)",
}
"""Constructions built by hand rather than from a program (``--route layernorm``)."""

PROGRAM_ROUTES: dict[str, tuple[str, ...]] = {
    "induction-head": ("tieless", "logic"),
    "khop": ("tieless", "logic"),
    "flipflop": ("tieless", "logic"),
    "dyck": ("tieless",),
    "parity": ("layernorm",),
}
"""The routes each program can be built by (``hardsoft.programs.ahat.routes``): ``tieless`` (this
module's AHAT programs, Theorem 26 of Yang, Strobl, Chiang & Angluin (TACL 2026)),
``logic`` (``hardsoft.programs.ahat.logic_route``'s formulas compiled by the logic compiler, cf.
their Corollary 17/18) and ``layernorm`` (:data:`LAYERNORM_PROGRAMS`, built by
:mod:`hardsoft.compile.parity_ln`). The first route is the default."""


def get_program(name: str, k: int | None = None) -> Program:
    """The shipped program ``name`` (``khop`` and ``dyck`` need ``k``)."""
    if name not in PROGRAMS:
        raise HardsoftError(f"unknown program {name!r}; known: {', '.join(PROGRAMS)}")
    _, make, ks = PROGRAMS[name]
    if ks:
        if k is None:
            raise HardsoftError(f"program {name} needs --k (one of {', '.join(map(str, ks))})")
        if name == "khop" and k < 1:
            raise HardsoftError("khop needs --k >= 1")
        return make(k)
    if k is not None:
        raise HardsoftError(f"program {name} takes no --k")
    return make(0)

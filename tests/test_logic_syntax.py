"""AST, parser and pretty-printer: structural equality and hashing, dependency order,
precedence and associativity, round trips, error messages, fragments."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardsoft.errors import HardsoftError
from hardsoft.logic import (
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
    Until,
    children,
    depth,
    fragment,
    is_past_only,
    operators,
    parse,
    parse_term,
    random_formula,
    size,
    subformulas,
    subnodes,
    symbols,
    temporal_depth,
    to_text,
)
from hardsoft.logic.random import ALL_OPERATORS, FRAGMENT_OPERATORS, PAST_OPERATORS

a, b, c = Sym("a"), Sym("b"), Sym("c")

# ----------------------------------------------------------------- AST


def test_equal_subtrees_compare_and_hash_equal() -> None:
    f1 = And(a, Next(And(b, Next(c))))
    f2 = And(Sym("a"), Next(And(Sym("b"), Next(Sym("c")))))
    assert f1 == f2 and hash(f1) == hash(f2)
    assert len({f1, f2}) == 1
    assert And(a, b) != And(b, a)
    assert Since(a, b) != Until(a, b)  # same fields, different operator
    assert Const(True) != IntConst(1)


def test_nodes_are_immutable_and_validated() -> None:
    with pytest.raises(AttributeError):
        a.symbol = "b"  # type: ignore[misc]
    with pytest.raises(HardsoftError):
        Sym("ab")
    with pytest.raises(HardsoftError):
        Mod(2, 2, Position())
    with pytest.raises(HardsoftError):
        Mod(0, 0, Position())
    with pytest.raises(HardsoftError):
        And(a, Position())  # type: ignore[arg-type]
    with pytest.raises(HardsoftError):
        Compare("<>", Position(), Position())


def test_subnodes_are_distinct_and_children_first() -> None:
    shared = Prev(a)
    f = Or(And(shared, Compare("<", CountPast(shared), IntConst(2))), Not(shared))
    order = subnodes(f)
    assert len(order) == len(set(order))
    assert order[-1] == f
    index = {node: k for k, node in enumerate(order)}
    for node in order:
        for child in children(node):
            assert index[child] < index[node]
    assert order.count(shared) == 1
    assert all(isinstance(x, Formula) for x in subformulas(f))
    assert CountPast(shared) not in subformulas(f) and CountPast(shared) in order


def test_size_depth_operators_symbols() -> None:
    f = parse("!E (#<[Y '1'] = #>['1'])")
    # ! E = #< Y '1' #> '1'  -> 8 tree nodes ('1' counted twice)
    assert size(f) == 8
    assert depth(f) == 5  # ! > E > = > #< > Y > '1'
    assert temporal_depth(f) == 3  # E > #< > Y
    assert operators(f) == {"!", "E", "=", "#<", "#>", "Y", "sym"}
    assert symbols(f) == {"1"}


def test_python_operator_sugar() -> None:
    assert (a & ~b) | c == Or(And(a, Not(b)), c)
    t = 2 * CountPast(a) - 3 + -Position()
    assert t == Add(Sub(Scale(2, CountPast(a)), IntConst(3)), Scale(-1, Position()))


# ----------------------------------------------------------------- parser


@pytest.mark.parametrize(
    "text, expected",
    [
        ("'a' & 'b' | 'c'", Or(And(a, b), c)),
        ("'a' | 'b' & 'c'", Or(a, And(b, c))),
        ("'a' -> 'b' -> 'c'", Implies(a, Implies(b, c))),
        ("'a' & 'b' & 'c'", And(And(a, b), c)),
        ("'a' S 'b' S 'c'", Since(a, Since(b, c))),
        ("'a' S 'b' U 'c'", Since(a, Until(b, c))),
        ("!'a' S 'b'", Since(Not(a), b)),
        ("Y X P F E 'a'", Prev(Next(Past(Future(Somewhere(a)))))),
        ("'a' S 'b' & 'c'", And(Since(a, b), c)),
        ("'a' | 'b' -> 'c'", Implies(Or(a, b), c)),
        ("true & false | first & last", Or(And(Const(True), Const(False)), And(First(), Last()))),
        (
            "#<['a'] + 1 < #>['b'] & 'c'",
            And(Compare("<", Add(CountPast(a), IntConst(1)), CountFuture(b)), c),
        ),
        ("MOD(2, 1)(i)", Mod(2, 1, Position())),
        ("MOD(3,0)(#<['a'] - n)", Mod(3, 0, Sub(CountPast(a), Length()))),
        ("2 * i - 3 >= -1", Compare(">=", Sub(Scale(2, Position()), IntConst(3)), IntConst(-1))),
        ("-i != 0", Compare("!=", Scale(-1, Position()), IntConst(0))),
        (
            "i - 1 - 1 = 0",
            Compare("=", Sub(Sub(Position(), IntConst(1)), IntConst(1)), IntConst(0)),
        ),
        ("(i + 1) * 2 = 0", None),  # `t * k` is not in the grammar: only `k * t`
        ("'Y' & 'i'", And(Sym("Y"), Sym("i"))),
        ("'\\''", Sym("'")),
        ("' '", Sym(" ")),
        ("((('a')))", a),
        ("(#<['a']) <= (3)", Compare("<=", CountPast(a), IntConst(3))),
        ("¬'a' ∧ 'b' ∨ ⊤ → #<['a'] ≤ 2", None),
    ],
)
def test_precedence_and_associativity(text: str, expected: Formula | None) -> None:
    if text.startswith("¬"):
        assert parse(text) == parse("!'a' & 'b' | true -> #<['a'] <= 2")
        return
    if expected is None:
        with pytest.raises(HardsoftError, match="syntax error"):
            parse(text)
        return
    assert parse(text) == expected


def test_parse_term() -> None:
    assert parse_term("#<['a'] - 2 * i") == Sub(CountPast(a), Scale(2, Position()))
    with pytest.raises(HardsoftError, match="syntax error"):
        parse_term("'a'")


def _error(text: str, alphabet: str | None = None) -> str:
    with pytest.raises(HardsoftError) as info:
        parse(text, alphabet=alphabet)
    return str(info.value)


def test_syntax_error_names_column_expectation_and_draws_a_caret() -> None:
    message = _error("'a' & )")
    assert message == (
        "syntax error at column 7: expected a formula after '&'\n  'a' & )\n        ^"
    )
    lines = _error("'a' S (").splitlines()
    assert lines[0].startswith("syntax error at column 8: expected a formula after '('")
    assert lines[2].index("^") == 2 + 7  # caret under column 8 of the indented source line


@pytest.mark.parametrize(
    "text, column, fragment_of_message",
    [
        ("", 1, "expected a formula"),
        ("'a' &", 6, "expected a formula after '&'"),
        ("a", 1, "symbols are written in quotes"),
        ("'ab'", 1, "one character between quotes"),
        ("'a' 'b'", 5, "expected an operator or the end of the formula"),
        ("#<['a'] <", 10, "expected a term after '<'"),
        ("#<['a'", 7, "expected ']'"),
        ("!#<['a'] < 1", 2, "needs parentheses"),
        ("MOD(2 1)(i)", 7, "expected ','"),
        ("'a' @ 'b'", 5, "unexpected character '@'"),
        ("i", 2, "expected a comparison"),
    ],
)
def test_syntax_error_messages(text: str, column: int, fragment_of_message: str) -> None:
    message = _error(text)
    first = message.splitlines()[0]
    assert first.startswith(f"syntax error at column {column}:"), message
    assert fragment_of_message in first, message
    caret_line = message.splitlines()[2]
    assert caret_line.index("^") == 2 + column - 1


def test_multiline_error_names_the_line() -> None:
    message = _error("'a' &\n  & 'b'")
    assert message.startswith("syntax error at line 2, column 3")
    assert message.splitlines()[1] == "    & 'b'"


def test_unknown_symbol_is_named() -> None:
    message = _error("'a' & X 'z'", alphabet="ab")
    assert "'z'" in message and "alphabet" in message and "\n" not in message
    assert parse("'a' & X 'b'", alphabet="ab") == And(a, Next(b))


def test_invalid_mod_is_a_hardsoft_error() -> None:
    assert "residue" in _error("MOD(2, 5)(i)")


def test_long_chains_parse_without_recursion_errors() -> None:
    text = " & ".join(["'a'"] * 3000)
    f = parse(text)
    assert size(f) == 2 * 3000 - 1
    assert len(subnodes(f)) == 3000  # 'a' and 2999 distinct left-nested conjunctions
    g = parse(text)
    assert f is not g and f == g and hash(f) == hash(g)
    assert to_text(f) == text
    deep = parse("Y " * 2000 + "'a'")
    assert parse(to_text(deep)) == deep and depth(deep) == 2000


# ----------------------------------------------------------------- printer round trip


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(0, 5))
def test_to_text_reparses_to_an_equal_ast(seed: int, depth: int) -> None:
    f = random_formula(random.Random(seed), "ab'\\ Y", depth)
    text = to_text(f)
    assert parse(text) == f, text
    assert to_text(parse(text)) == text


def test_printer_uses_few_parentheses() -> None:
    assert to_text(And(a, Or(b, c))) == "'a' & ('b' | 'c')"
    assert to_text(Or(And(a, b), c)) == "'a' & 'b' | 'c'"
    assert to_text(Since(Since(a, b), c)) == "('a' S 'b') S 'c'"
    assert to_text(Sub(Position(), Add(IntConst(1), IntConst(2)))) == "i - (1 + 2)"


# ----------------------------------------------------------------- fragments

# Fragment containment (syntactic, by operator sets): smaller <= larger.
_ORDER = {
    "TL[Y]": {"TL[Y,X]", "past LTL", "LTL", "past LTL[C,+]", "LTL[C,+]"},
    "TL[S]": {"TL[S,U]", "past LTL", "LTL", "past LTL[C,+]", "LTL[C,+]"},
    "TL[Y,X]": {"LTL", "LTL[C,+]"},
    "TL[S,U]": {"LTL", "LTL[C,+]"},
    "past LTL": {"LTL", "past LTL[C,+]", "LTL[C,+]"},
    "LTL": {"LTL[C,+]"},
    "past TL[C,+]": {"TL[C,+]", "past LTL[C,+]", "LTL[C,+]"},
    "TL[C,+]": {"LTL[C,+]"},
    "past LTL[C,+]": {"LTL[C,+]"},
    "LTL[C,+]": set(),
}


@pytest.mark.parametrize(
    "text, name, past",
    [
        ("'a' & X ('b' & X 'c')", "TL[Y,X]", False),
        ("'c' & Y ('b' & Y 'a')", "TL[Y]", True),
        ("'a' & 'b'", "TL[Y]", True),
        ("last", "TL[Y,X]", False),
        ("'a' S 'b'", "TL[S]", True),
        ("'a' U 'b' | P 'a'", "TL[S,U]", False),
        ("E 'a'", "TL[S,U]", False),
        ("Y 'a' S 'b'", "past LTL", True),
        ("X 'a' S 'b'", "LTL", False),
        ("MOD(2, 1)(#<['1'])", "past TL[C,+]", True),
        ("#<['a'] = n", "TL[C,+]", False),
        ("MOD(2, 0)(i) & first", "past TL[C,+]", True),
        ("!E (#<[Y '1'] = #>['1'])", "LTL[C,+]", False),
        ("#<[Y '1'] = 1", "past LTL[C,+]", True),
    ],
)
def test_fragment_examples(text: str, name: str, past: bool) -> None:
    f = parse(text)
    assert fragment(f).name == name
    assert fragment(f).past_only is past
    assert is_past_only(f) is past


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(sorted(FRAGMENT_OPERATORS)))
def test_formulas_built_from_a_fragment_classify_into_it(seed: int, which: str) -> None:
    f = random_formula(random.Random(seed), "ab", 4, FRAGMENT_OPERATORS[which])
    got = fragment(f).name
    if operators(f) <= {"sym", "const", "!", "&", "|", "->"}:
        # propositional formulas lie in every fragment; the classifier names the cheapest
        assert got == "TL[Y]"
        return
    assert got == which or which in _ORDER[got], (which, got, to_text(f))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_past_only_formulas_do_not_look_ahead(seed: int) -> None:
    """A past-only formula's value at i is unchanged by rewriting the suffix after i."""
    from hardsoft.logic import values

    rng = random.Random(seed)
    f = random_formula(rng, "ab", 4, PAST_OPERATORS)
    assert is_past_only(f)
    w = "".join(rng.choice("ab") for _ in range(6))
    cut = rng.randint(1, 6)
    v = "".join(rng.choice("ab") for _ in range(rng.randint(0, 4)))
    assert values(f, w)[:cut].tolist() == values(f, w[:cut] + v)[:cut].tolist()


def test_random_generator_covers_every_operator() -> None:
    rng = random.Random(7)
    seen: set[str] = set()
    for _ in range(400):
        seen |= operators(random_formula(rng, "ab", 4))
    assert seen == ALL_OPERATORS


def test_random_generator_respects_depth_and_operators() -> None:
    rng = random.Random(3)
    allowed = {"sym", "&", "Y", "#<", "<", "int"}
    for _ in range(200):
        f = random_formula(rng, "ab", 3, allowed)
        assert depth(f) <= 3
        assert operators(f) <= allowed
    with pytest.raises(HardsoftError, match="unknown operator"):
        random_formula(rng, "ab", 3, {"Q"})


_PIECES = [
    *("'a'", "'b'", "&", "|", "->", "!", "Y", "X", "S", "U", "P", "F", "E", "(", ")"),
    *("#<[", "#>[", "]", "<", "<=", "=", "!=", "i", "n", "1", "-", "+", "*", "MOD(2,1)("),
    *("MOD(", ",", "true", "first", "last", "'", "\\", "@", "a", " ", "\n", "¬", "≤", "99"),
]


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
        st.text(max_size=20),
    )
)
def test_parser_never_crashes_on_garbage(text: str) -> None:
    """Any input either parses (and round-trips) or raises a HardsoftError whose syntax-error
    form is exactly: message line, source line, caret line."""
    try:
        f = parse(text)
    except HardsoftError as exc:
        message = str(exc)
        if message.startswith("syntax error"):
            lines = message.split("\n")
            assert len(lines) == 3 and lines[2].strip() == "^", message
        else:
            assert "\n" not in message
        return
    assert parse(to_text(f)) == f

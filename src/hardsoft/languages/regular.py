"""Regular languages given by a regular expression or a DFA file: the minimal complete DFA
(built by pyformlang, not by hand) and a :class:`Language` over it.

The regular expression uses Python's syntax over single-character symbols: ``|``, ``*``, ``+``,
``?``, ``( )``, character classes ``[ab]``, ``.`` (or ``Σ``) for any symbol of the alphabet,
and bounded repetition ``x{m}`` / ``x{m,n}`` (expanded here: pyformlang misreads ``{0,n}``).
``(ab)*`` is the words ``ab`` repeated; ``.*ab.*`` is Σ*abΣ*. A DFA file is JSON::

    {"alphabet": "ab", "start": "q0", "accept": ["q0"],
     "transitions": {"q0": {"a": "q1"}, "q1": {"b": "q0"}}}

(missing transitions go to a rejecting sink). Either way the result is minimised by
pyformlang and completed with a sink where its minimal automaton is partial, so the states of
:class:`DFA` are exactly the classes of the Myhill–Nerode congruence.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hardsoft.errors import HardsoftError
from hardsoft.languages.base import Language, OneWordPerEvenLength

MAX_REGEX = 500
"""Longest regular expression accepted (characters)."""
MAX_DFA_STATES = 2000
"""Most states of a minimal DFA this module builds (the monoid can be |Q|^|Q| large)."""
_SYNTAX = set("|*+?()[]-.")
_REPEAT = re.compile(r"\{(\d*)(,?)(\d*)\}")
MAX_REPEAT = 64
"""Largest bound of a repetition ``x{m,n}``."""


@dataclass(frozen=True)
class DFA:
    """A complete DFA: states ``0..n_states-1``, start 0, ``delta[q][k]`` the state after
    symbol ``alphabet[k]`` from ``q``, ``accepting`` the accepting states."""

    alphabet: tuple[str, ...]
    delta: tuple[tuple[int, ...], ...]
    accepting: frozenset[int]

    @property
    def n_states(self) -> int:
        return len(self.delta)

    def run(self, word: str, state: int = 0) -> int:
        """The state reached from ``state`` after reading ``word``."""
        index = {s: k for k, s in enumerate(self.alphabet)}
        for ch in word:
            state = self.delta[state][index[ch]]
        return state

    def accepts(self, word: str) -> bool:
        return self.run(word) in self.accepting

    def to_json(self) -> dict[str, Any]:
        """A DFA file (the format :func:`dfa_from_file` reads)."""
        return {
            "alphabet": "".join(self.alphabet),
            "start": "0",
            "accept": [str(q) for q in sorted(self.accepting)],
            "transitions": {
                str(q): {a: str(row[k]) for k, a in enumerate(self.alphabet)}
                for q, row in enumerate(self.delta)
            },
        }


def _check_alphabet(alphabet: str, name: str = "alphabet", regex: bool = True) -> tuple[str, ...]:
    """The symbols of ``alphabet``: non-empty, none repeated (:func:`hardsoft.validate.alphabet`,
    the rule everywhere else), no whitespace, and for a regular expression none that is regex
    syntax (a DFA file may use any other symbol: ``()[]`` for bounded Dyck, ``+-*=`` for
    modular arithmetic)."""
    from hardsoft.validate import alphabet as checked

    symbols = checked(alphabet, name)
    for s in symbols:
        if not regex:
            if s.isspace():
                raise HardsoftError(f"{name}: a symbol cannot be whitespace")
            continue
        if s in _SYNTAX or s.isspace() or s in "\\^$Σ{}":
            raise HardsoftError(f"symbol {s!r} cannot be in the alphabet (it is regex syntax)")
    return symbols


def _alphabet_of_regex(regex: str) -> str:
    """The literal symbols a regex mentions (outside of syntax and repetition bounds), in
    order of appearance."""
    text = _REPEAT.sub("", regex)
    return "".join(dict.fromkeys(c for c in text if c not in _SYNTAX and c not in "Σ{}"))


def _atom_start(text: str, end: int) -> int:
    """Where the atom ending at ``end`` (a symbol, a class ``[..]`` or a group ``(..)``)
    starts."""
    close = text[end - 1]
    if close not in ")]":
        return end - 1
    opening, depth = "(" if close == ")" else "[", 0
    for k in range(end - 1, -1, -1):
        depth += {close: 1, opening: -1}.get(text[k], 0)
        if depth == 0:
            return k
    raise HardsoftError(f"unbalanced {close!r} in the regular expression")


def _expand_repeats(text: str) -> str:
    """``x{m}`` → x…x and ``x{m,n}`` → x…x(x)?…(x)? (the syntax already checked by Python's
    ``re``)."""
    while (m := _REPEAT.search(text)) is not None:
        lo_text, comma, hi_text = m.groups()
        lo = int(lo_text)
        if comma and not hi_text:
            raise HardsoftError(
                f"{m.group(0)} (at least {lo}) is not supported; write x{{{lo}}}x* instead"
            )
        hi = int(hi_text) if comma else lo
        if hi > MAX_REPEAT:
            raise HardsoftError(f"repetition {m.group(0)}: at most {MAX_REPEAT} copies")
        if hi == 0:
            raise HardsoftError(f"{m.group(0)} matches only the empty word; leave it out")
        start = _atom_start(text, m.start())
        atom = text[start : m.start()]
        text = text[:start] + atom * lo + f"({atom})?" * (hi - lo) + text[m.end() :]
    return text


def _to_python_regex(regex: str, alphabet: tuple[str, ...]) -> str:
    """Check the user's regex and rewrite ``.``/``Σ`` as the alphabet's class."""
    if len(regex) > MAX_REGEX:
        raise HardsoftError(f"the regular expression has {len(regex)} characters (at most 500)")
    if not regex.strip():
        raise HardsoftError("the regular expression is empty (write (a)? style optionals)")
    if re.search(r"\s", regex):
        raise HardsoftError("the regular expression contains whitespace; symbols are characters")
    if "{" in _REPEAT.sub("", regex) or "}" in _REPEAT.sub("", regex):
        raise HardsoftError(
            "'{' and '}' only bound a repetition: x{m} or x{m,n} (m, n non-negative integers)"
        )
    text = _REPEAT.sub("", regex)
    bad = sorted({c for c in text if c not in _SYNTAX and c != "Σ" and c not in alphabet})
    if bad:
        raise HardsoftError(
            f"symbol {bad[0]!r} of the regular expression is not in the alphabet "
            f"{''.join(alphabet)!r}"
        )
    # pyformlang drops empty alternatives ("a|", "()"): refuse them rather than misread them
    if re.search(r"\(\)|\(\||\|\)|\|\||^\||\|$", regex):
        raise HardsoftError("empty alternative in the regular expression; write (x)? instead")
    klass = "[" + "".join(alphabet) + "]"
    python = regex.replace("Σ", ".").replace(".", klass)
    try:
        re.compile(python)
    except re.error as exc:
        raise HardsoftError(f"bad regular expression {regex!r}: {exc}") from None
    return _expand_repeats(python)


def _complete(
    states: list[Any],
    start: Any,
    final: set[Any],
    table: dict[Any, dict[str, Any]],
    alphabet: tuple[str, ...],
) -> DFA:
    """Number the reachable states from ``start`` (BFS, symbol order) and send every missing
    transition to one rejecting sink (added only if some transition is missing)."""
    order: dict[Any, int] = {start: 0}
    queue = deque([start])
    rows: list[list[int | None]] = []
    while queue:
        q = queue.popleft()
        row: list[int | None] = []
        for a in alphabet:
            nxt = table.get(q, {}).get(a)
            if nxt is not None and nxt not in order:
                order[nxt] = len(order)
                queue.append(nxt)
            row.append(None if nxt is None else order[nxt])
        rows.append(row)
    accepting = frozenset(order[q] for q in final if q in order)
    if any(x is None for row in rows for x in row):
        sink = len(rows)
        rows.append([sink] * len(alphabet))
        rows = [[sink if x is None else x for x in row] for row in rows]
    delta = tuple(tuple(int(x) for x in row if x is not None) for row in rows)
    if len(delta) > MAX_DFA_STATES:
        raise HardsoftError(f"the minimal DFA has {len(delta)} states (at most {MAX_DFA_STATES})")
    return DFA(alphabet, delta, accepting)


def _from_pyformlang(automaton: Any, alphabet: tuple[str, ...]) -> DFA:
    """pyformlang's minimal DFA (possibly partial, possibly empty) as a complete :class:`DFA`."""
    minimal = automaton.minimize()
    if not minimal.states or minimal.start_state is None:
        return DFA(alphabet, (tuple(0 for _ in alphabet),), frozenset())
    table: dict[Any, dict[str, Any]] = {}
    for src, edges in minimal.to_dict().items():
        for sym, dst in edges.items():
            if str(sym) in alphabet:
                table.setdefault(src, {})[str(sym)] = dst
    return _complete(
        list(minimal.states), minimal.start_state, set(minimal.final_states), table, alphabet
    )


def dfa_from_regex(regex: str, alphabet: str | None = None) -> DFA:
    """The minimal complete DFA of ``regex`` over ``alphabet`` (default: the symbols the
    expression mentions), built by pyformlang's regex → ε-NFA → minimal DFA."""
    from pyformlang.regular_expression import PythonRegex

    if alphabet is None:
        mentioned = _alphabet_of_regex(regex)
        if not mentioned:
            raise HardsoftError(
                f"the regular expression {regex!r} mentions no symbol; give the alphabet"
            )
        symbols = _check_alphabet(mentioned)
    else:
        symbols = _check_alphabet(alphabet)
    python = _to_python_regex(regex, symbols)
    try:
        nfa = PythonRegex(python).to_epsilon_nfa()
    except Exception as exc:  # pyformlang raises bare errors on odd syntax
        raise HardsoftError(f"cannot parse the regular expression {regex!r}: {exc}") from None
    return _from_pyformlang(nfa, symbols)


def dfa_from_file(path: Path) -> DFA:
    """Read a DFA file (JSON, see the module docstring) and minimise it with pyformlang."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise HardsoftError(f"cannot read the DFA file {path}: {exc}") from None
    return dfa_from_json(data, f"DFA file {path}")


def dfa_from_json(data: Any, where: str = "DFA") -> DFA:
    """The minimal complete DFA of a DFA file's content (the dict of the module docstring),
    minimised with pyformlang; ``where`` names it in errors."""
    from pyformlang.finite_automaton import DeterministicFiniteAutomaton, State, Symbol

    try:
        symbols = _check_alphabet(str(data["alphabet"]), f"{where}: alphabet", regex=False)
        start = str(data["start"])
        accept = {str(q) for q in data["accept"]}
        transitions = {
            str(q): {str(a): str(r) for a, r in edges.items()}
            for q, edges in data["transitions"].items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise HardsoftError(f"cannot read the {where}: {exc}") from None
    named = {start} | set(transitions) | {r for e in transitions.values() for r in e.values()}
    unknown = sorted(accept - named)
    if unknown:  # a typo would silently drop an accepting state
        raise HardsoftError(f"{where}: accepting state {unknown[0]!r} is no state")
    dfa = DeterministicFiniteAutomaton()
    dfa.add_start_state(State(start))
    for q in accept:
        dfa.add_final_state(State(q))
    for q, edges in transitions.items():
        for a, r in edges.items():
            if a not in symbols:
                raise HardsoftError(f"{where}: symbol {a!r} is not in the alphabet")
            dfa.add_transition(State(q), Symbol(a), State(r))
    return _from_pyformlang(dfa, symbols)


class RegularLanguage(Language):
    """The language of a :class:`DFA` (a user's row of the atlas, or a fixed regular row)."""

    kind = "language"

    def __init__(self, name: str, dfa: DFA, description: str = "") -> None:
        self.name = name
        self.alphabet = dfa.alphabet
        self.description = description or f"regular language ({dfa.n_states}-state DFA)"
        self.dfa = dfa
        self._delta = np.array(dfa.delta, dtype=np.int64)
        self._accept = np.zeros(dfa.n_states, dtype=bool)
        self._accept[list(dfa.accepting)] = True

    def automaton(self) -> DFA:
        return self.dfa

    def _member(self, word: str) -> bool:
        return self.dfa.accepts(word)

    def prefix_reference(self, word: str) -> np.ndarray:
        codes = self.encode(word)
        out = np.zeros(len(codes), dtype=np.int64)
        q = 0
        for i, c in enumerate(codes):
            q = int(self._delta[q, c])
            out[i] = int(self._accept[q])
        return out


class RegexLanguage(RegularLanguage):
    """A named regular expression as a registered language (``aa-star``, ``contains-ab``)."""

    regex: str = ""
    regex_alphabet: str = ""

    def __init__(self) -> None:
        super().__init__(
            self.name, dfa_from_regex(self.regex, self.regex_alphabet or None), self.description
        )


class AaStar(OneWordPerEvenLength, RegexLanguage):
    """(aa)* over ``ab``: an even number of a's and no b (the classic regular language that is
    not star-free: its syntactic monoid contains the group Z/2)."""

    name = "aa-star"
    regex = "(aa)*"
    regex_alphabet = "ab"
    description = "(aa)* over ab: an even number of a's and no b (not star-free; ε is in)"

    def word_of(self, n: int) -> str:
        return "a" * n

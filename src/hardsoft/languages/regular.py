"""Regular languages given by a regular expression or a DFA file: the minimal complete DFA
(pyformlang reads the expression; the subset construction and Hopcroft's minimisation are
here, with limits: pyformlang's have none, and its minimisation grows exponentially on
``(a|b){24}``) and a :class:`Language` over it.

The regular expression uses Python's syntax over single-character symbols: ``|``, ``*``, ``+``,
``?``, ``( )``, character classes ``[ab]``, ``.`` (or ``Σ``) for any symbol of the alphabet,
and bounded repetition ``x{m}`` / ``x{m,n}`` (expanded here: pyformlang misreads ``{0,n}``).
``(ab)*`` is the words ``ab`` repeated; ``.*ab.*`` is Σ*abΣ*. A DFA file is JSON::

    {"alphabet": "ab", "start": "q0", "accept": ["q0"],
     "transitions": {"q0": {"a": "q1"}, "q1": {"b": "q0"}}}

(missing transitions go to a rejecting sink). Either way the result is minimised and
completed with a sink where it is partial, so the states of :class:`DFA` are exactly the
classes of the Myhill–Nerode congruence.
"""

from __future__ import annotations

import json
import re
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from hardsoft import validate
from hardsoft.errors import HardsoftError, syntax_error
from hardsoft.languages.base import Language, OneWordPerEvenLength
from hardsoft.languages.dfa import DFA

MAX_REGEX = 500
"""Longest regular expression accepted (characters)."""
MAX_DFA_STATES = 2000
"""Most states of a minimal DFA this module builds (the monoid can be |Q|^|Q| large)."""
MAX_BUILD_STATES = 50_000
"""Most states of the DFA built before minimisation: the subset construction of a regular
expression stops here (``(a|b)*a(a|b){64}`` needs 2^65 states and once grew past 620 MB), and
a DFA file may have at most this many states (a 100,000-state file once ran past 120 s). On
the shared 2-core machine (load 12) 100,000 states took 8 s to minimise from a file and 12 s
to reach by the subset construction."""
MAX_DFA_FILE_BYTES = 16 << 20
"""Largest DFA file read (16 MiB: a 100,000-state file over two symbols has 4 MB)."""
_SYNTAX = set("|*+?()[]-.")
_REPEAT = re.compile(r"\{(\d*)(,?)(\d*)\}")
MAX_REPEAT = 64
"""Largest bound of a repetition ``x{m,n}``."""
MAX_EXPANDED = 5_000
"""Longest regular expression once its repetitions are written out (``((a{64}){64}){64}``
has 262,144 characters then)."""


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
    ``re``); a ``?`` right after is Python's lazy mark (the same words), dropped: written out
    it would make the last copy optional."""
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
        grown = len(text) - (m.end() - start) + len(atom) * lo + (len(atom) + 3) * (hi - lo)
        if grown > MAX_EXPANDED:
            raise HardsoftError(
                f"the regular expression's repetitions, written out, pass {MAX_EXPANDED:,} "
                "characters; use fewer or smaller repetitions"
            )
        end = m.end() + (text[m.end() : m.end() + 1] == "?")  # lazy: the same words
        text = text[:start] + atom * lo + f"({atom})?" * (hi - lo) + text[end:]
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
    if empty := re.search(r"\(\)|\(\||\|\)|\|\||^\||\|$", regex):
        raise syntax_error(
            regex, empty.start() + (regex[empty.start()] == "("),
            "empty alternative in the regular expression; write (x)? instead",
        )  # fmt: skip
    for group in re.finditer(r"\[([^\]]*)\]?", regex):
        inner = [k for k, c in enumerate(group.group(1)) if c in "[.Σ"]
        if inner or not group.group(1):
            raise syntax_error(
                regex, group.start() + 1 + (inner[0] if inner else -1),
                "a class [..] holds symbols and ranges a-c only (no '.', 'Σ', '[' or empty [])",
            )  # fmt: skip
    if possessive := re.search(r"[*+?}]\+", regex):  # x*+ never gives back: other words
        raise syntax_error(
            regex, possessive.end() - 1,
            "possessive repetitions (x*+, x++, x?+, x{m}+) are not supported; write (x*)+",
        )  # fmt: skip
    try:  # Σ and . are one character each: Python's positions are the user's
        re.compile(regex.replace("Σ", "."))
    except re.error as exc:
        raise syntax_error(regex, exc.pos or 0, f"bad regular expression: {exc.msg}") from None
    klass = "[" + "".join(alphabet) + "]"
    return _expand_repeats(regex.replace("Σ", ".").replace(".", klass))


def _complete(
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


Rows = list[list[int | None]]
"""A DFA's transitions as built: ``rows[q][k]`` the state after symbol k (None: missing, to
the rejecting sink), start state 0."""


def _determinise(nfa: Any, alphabet: tuple[str, ...]) -> tuple[Rows, set[int]]:
    """pyformlang's ε-NFA as a DFA (rows, accepting states) by the subset construction,
    refused as soon as it passes :data:`MAX_BUILD_STATES` states (pyformlang's own
    construction has no limit: ``(a|b)*a(a|b){64}`` ran until memory was gone)."""
    from pyformlang.finite_automaton import Epsilon

    moves: dict[Any, dict[str, set[Any]]] = {}
    for src, edges in nfa.to_dict().items():
        for sym, dst in edges.items():
            key = "" if sym == Epsilon() else str(sym)
            targets = dst if isinstance(dst, set) else {dst}
            moves.setdefault(src, {}).setdefault(key, set()).update(targets)

    def closure(states: set[Any]) -> frozenset[Any]:
        seen, stack = set(states), list(states)
        while stack:
            for nxt in moves.get(stack.pop(), {}).get("", ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)

    subsets = [closure(set(nfa.start_states))]
    index = {subsets[0]: 0}
    rows: Rows = []
    for current in subsets:  # grows while it is read: breadth first
        row: list[int | None] = []
        for a in alphabet:
            step = {t for q in current for t in moves.get(q, {}).get(a, ())}
            target = closure(step) if step else None
            if target is not None and target not in index:
                if len(index) >= MAX_BUILD_STATES:
                    raise HardsoftError(
                        f"the regular expression's automaton passed {MAX_BUILD_STATES:,} states "
                        f"while it was determinised (its minimal DFA may have at most "
                        f"{MAX_DFA_STATES:,}); write a smaller expression"
                    )
                index[target] = len(subsets)
                subsets.append(target)
            row.append(None if target is None else index[target])
        rows.append(row)
    final = {k for k, sub in enumerate(subsets) if any(q in nfa.final_states for q in sub)}
    return rows, final


def _classes(rows: list[list[int]], final: set[int]) -> list[int]:
    """The Myhill–Nerode class of every state of a complete DFA (Hopcroft's partition
    refinement, O(k·n·log n)). pyformlang's minimisation took 85 s for the 26 states of
    ``(a|b){24}``, and grew exponentially."""
    n, k = len(rows), len(rows[0]) if rows else 0
    inverse: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(k)]
    for p, row in enumerate(rows):
        for a, q in enumerate(row):
            inverse[a][q].append(p)
    blocks = [b for b in (set(final), set(range(n)) - set(final)) if b]
    block_of = [0] * n
    for i, block in enumerate(blocks):
        for q in block:
            block_of[q] = i
    work = {(i, a) for i in range(len(blocks)) for a in range(k)}
    while work:
        i, a = work.pop()
        touched: dict[int, list[int]] = {}
        for q in list(blocks[i]):
            for p in inverse[a][q]:
                touched.setdefault(block_of[p], []).append(p)
        for j, inside in touched.items():
            part = set(inside)
            if len(part) == len(blocks[j]):
                continue
            blocks[j] -= part
            blocks.append(part)
            new = len(blocks) - 1
            for p in part:
                block_of[p] = new
            for b in range(k):
                smaller = new if len(part) <= len(blocks[j]) else j
                work.add((new, b) if (j, b) in work else (smaller, b))
    return block_of


def _minimal(rows: Rows, final: set[int], alphabet: tuple[str, ...]) -> DFA:
    """The minimal complete DFA of the DFA ``rows`` (start 0): missing transitions go to a
    sink, equivalent states are merged (:func:`_classes`), the reachable classes are numbered
    breadth first from the start in symbol order, and the rejecting sink, where one is
    reached, comes last."""
    sink = len(rows)
    full = [[sink if q is None else q for q in row] for row in rows] + [[sink] * len(alphabet)]
    cls = _classes(full, final)
    dead = cls[sink]
    table: dict[Any, dict[str, Any]] = {}
    for p, row in enumerate(full):
        if cls[p] != dead:
            table[cls[p]] = {a: cls[q] for a, q in zip(alphabet, row) if cls[q] != dead}
    if cls[0] == dead:  # the empty language: one rejecting state
        return DFA(alphabet, (tuple(0 for _ in alphabet),), frozenset())
    return _complete(cls[0], {cls[q] for q in final}, table, alphabet)


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
    rows, final = _determinise(nfa, symbols)
    return _minimal(rows, final, symbols)


def dfa_from_file(path: Path) -> DFA:
    """Read a DFA file (JSON, see the module docstring; at most :data:`MAX_DFA_FILE_BYTES`
    bytes and :data:`MAX_BUILD_STATES` states) and minimise it."""
    text = validate.read_text(path, "DFA file", limit=MAX_DFA_FILE_BYTES)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise HardsoftError(f"cannot read the DFA file {path}: {exc}") from None
    return dfa_from_json(data, f"DFA file {path}")


def dfa_from_json(data: Any, where: str = "DFA") -> DFA:
    """The minimal complete DFA of a DFA file's content (the dict of the module docstring),
    minimised by Hopcroft's algorithm; ``where`` names it in errors."""
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
    if len(named) > MAX_BUILD_STATES:  # before any work that grows with the states
        raise HardsoftError(
            f"{where} has {len(named):,} states (at most {MAX_BUILD_STATES:,}; its "
            f"minimal DFA at most {MAX_DFA_STATES:,})"
        )
    unknown = sorted(accept - named)
    if unknown:  # a typo would silently drop an accepting state
        raise HardsoftError(f"{where}: accepting state {unknown[0]!r} is no state")
    number = {q: k for k, q in enumerate([start, *sorted(named - {start})])}
    rows: Rows = [[None] * len(symbols) for _ in number]
    for q, edges in transitions.items():
        for a, r in edges.items():
            if a not in symbols:
                raise HardsoftError(f"{where}: symbol {a!r} is not in the alphabet")
            rows[number[q]][symbols.index(a)] = number[r]
    return _minimal(rows, {number[q] for q in accept}, symbols)


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

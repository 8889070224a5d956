"""B-RASP: the parser, the interpreter (against a three-loop transcription of the definition),
compiled models on every target and mask mode (against the interpreter), the decompiled
program (against the source), the certificate, every refusal and the command line."""

from __future__ import annotations

import itertools
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import torch

from hardsoft.compile import bounds as B
from hardsoft.decompile import decompile
from hardsoft.errors import HardsoftError
from hardsoft.programs.brasp import read_program
from hardsoft.programs.brasp.from_ltl import decompiled_program, ltl_to_brasp
from hardsoft.programs.brasp.interpret import run_vectors
from hardsoft.programs.brasp.parser import parse_program
from hardsoft.programs.brasp.random import random_program
from hardsoft.programs.brasp.syntax import Attend, BMask, Define, Var, expr_text
from hardsoft.programs.source import load_program
from tests._cli import run_cli

EXAMPLES = sorted(
    p for p in resources.files("hardsoft.programs.examples").iterdir() if p.name.endswith(".brasp")
)

AB_PLUS = """Q_a(i)
Q_b(i)
AB(i) := rightmost [j<i, 1] Q_a(j) & Q_b(i) : 0
BA(i) := leftmost [i<j, 1] Q_a(i) & Q_b(j) : 0
I(i) := AB(i) | BA(i)
Y(i) := rightmost [1, not I(j)] 0 : 1
"""

# --------------------------------------------------------------------------- a literal oracle


def _eval(e, at_i: dict, at_j: dict) -> bool:
    from hardsoft.programs.brasp import syntax as S

    if isinstance(e, S.Const):
        return e.value
    if isinstance(e, S.Atom):
        return bool((at_i if e.var is Var.I else at_j)[e.name])
    if isinstance(e, S.Not):
        return not _eval(e.arg, at_i, at_j)
    if isinstance(e, S.And):
        return _eval(e.left, at_i, at_j) and _eval(e.right, at_i, at_j)
    return _eval(e.left, at_i, at_j) or _eval(e.right, at_i, at_j)


_ALLOWS = {
    BMask.BEFORE: lambda i, j: j < i,
    BMask.AFTER: lambda i, j: i < j,
    BMask.UPTO: lambda i, j: j <= i,
    BMask.FROM: lambda i, j: i <= j,
    BMask.ALL: lambda i, j: True,
}


def literal_run(program, word: str) -> dict[str, list[bool]]:
    """The definition, three loops deep: for every statement, position i and key j."""
    n = len(word)
    vals: dict[str, list[bool]] = {}
    for s in program.statements:  # random programs and examples define before use
        if isinstance(s, Define):
            vals[s.name] = [_eval(s.expr, {k: v[i] for k, v in vals.items()}, {}) for i in range(n)]
        elif isinstance(s, Attend):
            row = []
            for i in range(n):
                at_i = {k: v[i] for k, v in vals.items()}
                js = [
                    j
                    for j in range(n)
                    if _ALLOWS[s.mask](i, j)
                    and _eval(s.score, at_i, {k: v[j] for k, v in vals.items()})
                ]
                if not js:
                    row.append(_eval(s.default, at_i, {}))
                    continue
                j = js[0] if s.tie.value == "leftmost" else js[-1]
                row.append(_eval(s.value, at_i, {k: v[j] for k, v in vals.items()}))
            vals[s.name] = row
        else:
            vals[s.name] = [c == s.symbol for c in word]
    return vals


def words(alphabet, max_n: int) -> list[str]:
    return ["".join(t) for n in range(1, max_n + 1) for t in itertools.product(alphabet, repeat=n)]


def model_bits(model, alphabet, ws: list[str]) -> dict[int, np.ndarray]:
    """The model's outputs on words of each length (token ids in the model's order)."""
    index = {a: k for k, a in enumerate(model.spec.alphabet)}
    out = {}
    by_len: dict[int, list[str]] = {}
    for w in ws:
        by_len.setdefault(len(w), []).append(w)
    for n, group in by_len.items():
        ids = torch.tensor([[index[c] for c in w] for w in group])
        with torch.no_grad():
            out[n] = model(ids).outputs.numpy()
    return {n: v for n, v in out.items()}, by_len  # type: ignore[return-value]


def assert_model_agrees(model, program, ws: list[str], outputs: list[str] | None = None):
    outputs = outputs or [program.names[-1]]
    got, by_len = model_bits(model, program.alphabet, ws)
    for n, group in by_len.items():
        ref = np.array(
            [[run_vectors(program, w)[s] for s in outputs] for w in group], dtype=np.float64
        ).transpose(0, 2, 1)
        err = np.abs(got[n] - ref).max()
        assert err < 1e-9, (n, err, group[int(np.abs(got[n] - ref).max(axis=(1, 2)).argmax())])


# --------------------------------------------------------------------------- parser


def test_parse_and_print_round_trip_with_precedence() -> None:
    p = parse_program(AB_PLUS)
    assert p.names == ("Q_a", "Q_b", "AB", "BA", "I", "Y")
    y = p.statement("Y")
    assert isinstance(y, Attend) and y.mask is BMask.ALL and expr_text(y.score) == "!I(j)"
    again = parse_program(p.text())
    assert again.text() == p.text()
    # ! binds tightest, then &, then |: !a & b | c is ((!a) & b) | c
    q = parse_program("Q_a(i)\nQ_b(i)\nX(i) := !Q_a(i) & Q_b(i) | Q_a(i)\n")
    x = q.statement("X")
    assert isinstance(x, Define)
    assert expr_text(x.expr) == "(!Q_a(i) & Q_b(i)) | Q_a(i)"
    assert run_vectors(q, "ab")["X"].tolist() == [True, True]
    assert run_vectors(q, "b")["X"].tolist() == [True]


def test_random_programs_print_and_parse_back() -> None:
    for seed in range(30):
        p = random_program(seed, "ab", statements=6)
        assert parse_program(p.text(), p.alphabet).text() == p.text()


def test_comments_blank_lines_not_and_spaces() -> None:
    text = (
        "# a comment\n\nQ_a(i)   # the symbol\nQ_b(i)\n"
        "Y(i) := leftmost [ j <= i , not Q_a(j)] 1 : 0\n"
    )
    p = parse_program(text)
    assert p.names == ("Q_a", "Q_b", "Y")
    assert p.statement("Y").mask is BMask.UPTO  # type: ignore[attr-defined]


REFUSALS = [
    ("", "no statements"),
    ("# nothing\n\n", "no statements"),
    ("Q_a(i)\nA(i) := B(i)\n", "line 2: statement 'A' uses B(i), which is not defined"),
    ("Q_a(i)\nQ_a(i)\n", "line 2: statement 'Q_a' is defined twice (first on line 1)"),
    ("Q_a(i)\nA(i) := B(i)\nB(i) := A(i)\n", "statement 'A' depends on itself: A -> B -> A"),
    ("Q_a(i)\nA(i) := A(i) | Q_a(i)\n", "statement 'A' depends on itself: A -> A"),
    ("Q_a(i)\nA(i) := Q_a(j)\n", "statement 'A' reads Q_a(j)"),
    ("Q_a(i)\nA(i) := leftmost [j<i, 1] 1 : Q_a(j)\n", "statement 'A': the default reads Q_a(j)"),
    ("Q_a(i)\nA(j) := Q_a(i)\n", "statement 'A' is written A(j)"),
    ("Foo(i)\n", "Foo(i) alone is a declaration"),
    ("A(i) := 1\n", "declares no symbol"),
]


@pytest.mark.parametrize("text, message", REFUSALS)
def test_refusals_name_the_statement(text: str, message: str) -> None:
    with pytest.raises(HardsoftError) as exc:
        parse_program(text)
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_symbol_outside_the_alphabet() -> None:
    with pytest.raises(HardsoftError, match=r"line 2: Q_c\(i\) declares the symbol 'c', which"):
        read_program("Q_a(i)\nQ_c(i)\n", alphabet="ab")
    p = read_program("Q_a(i)\n", alphabet="ab")  # an extra symbol is fine
    assert p.alphabet == ("a", "b") and p.run("ba").values["Q_a"] == [False, True]
    with pytest.raises(HardsoftError, match="'c' at position 2 is not in the program's alphabet"):
        p.run("ac")


@pytest.mark.parametrize(
    "text, line, column",
    [
        ("Q_a(i)\nA(i) := Q_a(i) &\n", 2, 17),
        ("Q_a(i)\nA(i) := leftmost [j<k, 1] 1 : 0\n", 2, 19),
        ("Q_a(i)\nA(i) := Q_a(i) $ 1\n", 2, 16),
        ("Q_a(i)\nA(i) := leftmost [j<i, 1] 1\n", 2, 28),
    ],
)
def test_syntax_errors_give_line_column_and_caret(text: str, line: int, column: int) -> None:
    with pytest.raises(HardsoftError) as exc:
        parse_program(text)
    msg = str(exc.value).splitlines()
    assert msg[0].startswith(f"syntax error at line {line}, column {column}:")
    assert len(msg) == 3 and msg[2].index("^") == column + 1  # two spaces of indent


# --------------------------------------------------------------------------- the interpreter


@pytest.mark.parametrize("seed", range(12))
def test_interpreter_matches_the_literal_definition(seed: int) -> None:
    p = random_program(seed, "ab" if seed % 3 else "abc", statements=6)
    for w in words(p.alphabet, 5 if len(p.alphabet) == 2 else 4):
        fast = run_vectors(p, w)
        slow = literal_run(p, w)
        assert {k: v.tolist() for k, v in fast.items()} == slow, w


def test_interpreter_on_long_words_is_linearithmic_enough() -> None:
    p = parse_program(AB_PLUS)
    w = "ab" * 50_000
    assert run_vectors(p, w)["Y"].all()
    assert not run_vectors(p, w + "a")["Y"].any()


def test_examples_accept_their_languages() -> None:
    import re

    oracles = {
        "dyck1_depth2": lambda w: _dyck2(w),
        "ab_plus": lambda w: re.fullmatch("(ab)+", w) is not None,
        "first_is_a": lambda w: w[0] == "a",
        "last_is_a": lambda w: w[-1] == "a",
        "a_then_b": lambda w: re.search("a.*b", w) is not None,
        "flipflop": lambda w: (re.sub("r", "", w) or "0")[-1] == "1",
    }
    for path in EXAMPLES:
        prog = load_program(Path(str(path)))
        member = oracles[prog.name]
        for w in words(prog.alphabet, 7 if len(prog.alphabet) == 2 else 5):
            assert prog.run(w).accept == member(w), (prog.name, w)


def _dyck2(w: str) -> bool:
    depth = 0
    for c in w:
        depth += 1 if c == "l" else -1
        if not 0 <= depth <= 2:
            return False
    return depth == 0


# --------------------------------------------------------------------------- compiled models


@pytest.mark.parametrize("masks", ["strict", "nonstrict"])
@pytest.mark.parametrize("target", ["hard", "soft-temperature", "soft-pe"])
def test_examples_compile_exactly(target: str, masks: str) -> None:
    for path in EXAMPLES:
        prog = load_program(Path(str(path)))
        model = prog.compile(target, masks=masks)
        assert_model_agrees(
            model, prog.program, words(prog.alphabet, 6 if len(prog.alphabet) == 2 else 4)
        )


@pytest.mark.parametrize("seed", range(10))
def test_random_programs_compile_exactly(seed: int) -> None:
    """Random programs (any mask and tie, scores and values over i and j, defaults) on every
    target and mask mode, every statement an output, against the interpreter."""
    p = random_program(100 + seed, "ab", statements=5)
    outputs = [s for s in p.names[2:]]
    target = ["hard", "soft-temperature", "soft-pe"][seed % 3]
    masks = "nonstrict" if seed % 2 else "strict"
    model = read_program(p.text()).compile(target, masks=masks, outputs=outputs)
    assert_model_agrees(model, p, words("ab", 6), outputs)


def test_random_programs_at_length_300_soft_temperature() -> None:
    rng = np.random.default_rng(0)
    for seed in range(3):
        p = random_program(200 + seed, "ab", statements=5)
        model = read_program(p.text()).compile("soft-temperature", outputs=list(p.names[2:]))
        ws = ["".join(rng.choice(["a", "b"], size=300)) for _ in range(3)]
        assert_model_agrees(model, p, ws, list(p.names[2:]))


def test_one_head_per_attention_with_the_programs_masks() -> None:
    prog = read_program(
        "Q_a(i)\nQ_b(i)\nQ_c(i)\n"
        "P(i) := rightmost [j<i, (Q_a(i) & Q_b(j)) | (Q_b(i) & Q_c(j)) | (Q_c(i) & Q_a(j))] "
        "Q_a(i) | Q_c(j) : Q_b(i)\n"
        "R(i) := leftmost [i<=j, P(j) & !Q_a(i)] 1 : 0\n"
    )
    for target in ("hard", "soft-temperature"):
        model = prog.compile(target)
        cert = model.meta["certificate"]
        assert [len(s["heads"]) for s in cert["statements"]] == [1, 1]
        masks = {h["implements"]: h["mask"] for h in cert["heads"]}
        assert masks == {"P": "strict-future", "R": "past"}
        assert_model_agrees(model, prog.program, words("abc", 5))
    pe = prog.compile("soft-pe").meta["certificate"]
    assert [len(s["heads"]) for s in pe["statements"]] == [3, 1]  # one head per query class


def test_certificate_labels_and_program_metadata() -> None:
    model = read_program(AB_PLUS, name="ab").compile("soft-temperature")
    cert = model.meta["certificate"]
    assert cert["notation"] == "brasp" and cert["outputs"][0]["statement"] == "Y"
    for h in cert["heads"]:
        assert h["construction"] == "select"
        assert h["theorem"].startswith("own construction") and "Lemma 8" in h["theorem"]
        assert h["tau"] == "1/(8*n)" and h["error_bound"] < cert["rounding_margin"]
    assert model.meta["program"]["outputs"] == [
        {"name": "Y", "statement": "Y", "encoding": "bool", "value": None, "unit": None}
    ]
    assert "Y(i) := rightmost [1, not I(j)] 0 : 1" in model.meta["program"]["source"]
    hard = read_program(AB_PLUS).compile("hard").meta["certificate"]
    assert {h["weighting"] for h in hard["heads"]} == {"leftmost", "rightmost"}
    assert all("(as stated)" not in h["theorem"] for h in hard["heads"])


def test_soft_select_reads_within_their_bound() -> None:
    """Every soft-temperature select head's read is within the certified ε of the hard
    model's exact read (programs whose scores read only j: one query class), n = 1 … 700."""
    prog = load_program(Path(str(next(p for p in EXAMPLES if p.name == "dyck1_depth2.brasp"))))
    soft, hard = prog.compile("soft-temperature"), prog.compile("hard")
    bound = max(h["error_bound"] for h in soft.meta["certificate"]["heads"])
    assert bound < B.ROUNDING_MARGIN / 10
    reads = [c for c in soft.meta["residual"] if c.startswith("select_att")]
    assert reads and reads == [c for c in hard.meta["residual"] if c.startswith("select_att")]
    rng = np.random.default_rng(3)
    worst = 0.0
    for n in (1, 2, 5, 17, 100, 700):
        ids = torch.from_numpy(rng.integers(0, 2, size=(3, n)))
        with torch.no_grad():
            ts, th = soft(ids, trace=True).trace, hard(ids, trace=True).trace
        for ell in range(len(soft.blocks)):
            ms, mh = ts[f"blocks.{ell}.resid_mid"], th[f"blocks.{ell}.resid_mid"]
            for c in reads:
                a = ms[..., soft.meta["residual"].index(c)]
                b = mh[..., hard.meta["residual"].index(c)]
                worst = max(worst, float((a - b).abs().max()))
    assert 0 < worst <= bound


# --------------------------------------------------------------------------- decompile


SLOW_DECOMPILE = {"dyck1_depth2.brasp"}  # about 40 s on a shared 2-core machine


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_DECOMPILE else p for p in EXAMPLES],
    ids=lambda p: p.name,
)
def test_decompile_round_trip_of_every_shipped_program(path) -> None:
    """program → hard model → LTL → B-RASP: equal to the source on every word up to 8."""
    prog = load_program(Path(str(path)))
    model = prog.compile("hard")
    result = decompile(model, verify_n=0, random_words=0)
    back = read_program(decompiled_program(result.outputs, prog.alphabet))
    out = prog.statements[-1]
    for w in words(prog.alphabet, 8 if len(prog.alphabet) == 2 else 6):
        assert (
            run_vectors(prog.program, w)[out] == run_vectors(back.program, w)[back.statements[-1]]
        ).all(), w


@pytest.mark.parametrize("seed", range(4))
def test_decompile_round_trip_of_random_programs(seed: int) -> None:
    p = random_program(300 + seed, "ab", statements=4)
    model = read_program(p.text()).compile("hard")
    back = read_program(
        decompiled_program(decompile(model, verify_n=0, random_words=0).outputs, "ab")
    )
    for w in words("ab", 7):
        assert (
            run_vectors(p, w)[p.names[-1]] == run_vectors(back.program, w)[back.statements[-1]]
        ).all()


def test_ltl_to_brasp_names_shared_subformulas_and_refuses_counting() -> None:
    from hardsoft.logic import parse

    f = parse("(Y 'a' & 'b') S ('a' | Y 'a' & 'b')", alphabet="ab")
    prog = ltl_to_brasp([("out", f)], "ab")
    text = prog.text()
    assert text.count(":= rightmost [j<i, 1] Q_a(j) : 0") == 1  # Y 'a' once
    assert prog.names[-1] == "out"
    from hardsoft.logic import evaluate

    for w in words("ab", 6):
        ids = np.array([["ab".index(c) for c in w]])
        assert run_vectors(prog, w)["out"].tolist() == evaluate(f, ids, ["a", "b"])[0].tolist()
    with pytest.raises(HardsoftError, match="output 'c' uses '>', which B-RASP cannot express"):
        ltl_to_brasp([("c", parse("#<['a'] > 2", alphabet="ab"))], "ab")


# --------------------------------------------------------------------------- command line


def test_cli_run_compile_check_decompile(tmp_path) -> None:
    src = tmp_path / "ab.brasp"
    src.write_text(AB_PLUS)
    res = run_cli("program", "run", str(src), "--input", "abab", "--input", "aba", "--json")
    assert res.rc == 0, res.err
    results = json.loads(res.out)["results"]
    assert [r["accept"] for r in results] == [True, False]
    assert results[1]["values"]["BA"] == [True, False, False]
    res = run_cli("program", "run", str(src), "-i", "ab")
    assert "accept: True" in res.out and re.search(r"^Q_a +1 0$", res.out, re.M)
    model = tmp_path / "ab.safetensors"
    res = run_cli(
        "program", "compile", str(src), "--target", "soft-temperature", "-o", str(model), "--json"
    )
    assert res.rc == 0, res.err
    summary = json.loads(res.out)
    assert summary["output_names"] == ["Y"] and summary["certificate"]["statements"]
    res = run_cli(
        "check", str(model), "--program", str(src), "--exhaustive-max-n", "6",
        "--random-n", "50", "--samples", "5", "--json",
    )  # fmt: skip
    assert res.rc == 0, res.err
    report = json.loads(res.out)
    assert report["mismatches"] == 0 and report["checked_positions"] > 0
    two = tmp_path / "two.safetensors"
    res = run_cli("program", "compile", str(src), "--output", "AB", "--output", "Y", "-o", str(two))
    assert res.rc == 0, res.err
    res = run_cli(
        "check", str(two), "--program", str(src), "--exhaustive-max-n", "5", "--random-n", ""
    )
    assert res.rc == 0, res.err + res.out
    back = tmp_path / "back.brasp"
    hard = tmp_path / "hard.safetensors"
    assert run_cli("program", "compile", str(src), "-o", str(hard)).rc == 0
    quick = ("--verify-n", "4", "--random-words", "4", "--random-max-n", "30")
    res = run_cli("decompile", str(hard), "--as", "brasp", "-o", str(back), *quick)
    assert res.rc == 0, res.err
    res = run_cli("program", "run", str(back), "-i", "abab", "-i", "abba", "--json")
    assert [r["accept"] for r in json.loads(res.out)["results"]] == [True, False]
    res = run_cli("decompile", str(hard), "--as", "brasp", *quick)
    assert res.rc == 0 and res.out == back.read_text()


def test_cli_check_program_finds_a_wrong_model(tmp_path) -> None:
    src = tmp_path / "ab.brasp"
    src.write_text(AB_PLUS)
    other = tmp_path / "other.brasp"
    other.write_text(AB_PLUS.replace("0 : 1", "1 : 0"))  # accepts where some position is bad
    model = tmp_path / "m.safetensors"
    assert run_cli("program", "compile", str(other), "-o", str(model)).rc == 0
    res = run_cli(
        "check", str(model), "--program", str(src), "--exhaustive-max-n", "4", "--random-n", ""
    )
    assert res.rc == 1 and "first mismatch" in res.out


@pytest.mark.parametrize(
    "args, message",
    [
        (["program", "run", "{src}"], "give at least one --input"),
        (["program", "run", "{src}", "-i", "abc"], "symbol 'c' at position 3"),
        (["program", "run", "{bad}", "-i", "a"], "line 2: statement 'A' uses B(i)"),
        (["program", "compile", "{src}", "-o", "{out}", "--output", "Z"], "'Z' is not a statement"),
        (["program", "compile", "{src}", "-o", "{out}", "--target", "bogus"], "unknown target"),
        (["program", "compile", "{src}"], "Missing option '-o'"),
        (["program", "run", "{tmp}/missing.brasp", "-i", "a"], "no such program file"),
        (["program", "run", "{tmp}/x.txt", "-i", "a"], "unknown program notation '.txt'"),
        (["decompile", "{out}", "--as", "bogus"], "unknown --as notation 'bogus'"),
    ],
)
def test_cli_refusals_are_one_line(tmp_path, args, message) -> None:
    src, bad = tmp_path / "ab.brasp", tmp_path / "bad.brasp"
    src.write_text(AB_PLUS)
    bad.write_text("Q_a(i)\nA(i) := B(i)\n")
    out = tmp_path / "m.safetensors"
    if args[0] == "decompile":
        assert run_cli("program", "compile", str(src), "-o", str(out)).rc == 0
    before = out.read_bytes() if out.exists() else None
    res = run_cli(*[a.format(src=src, bad=bad, out=out, tmp=tmp_path) for a in args])
    lines = res.err.strip().splitlines()
    assert res.rc == 2 and len(lines) == 1 and lines[0].startswith("error:"), res.err
    assert message in lines[0], lines[0]
    assert (out.read_bytes() if out.exists() else None) == before


def test_decompile_as_brasp_refuses_counting_models(tmp_path) -> None:
    from hardsoft.compile import compile_formula
    from hardsoft.model import save_model

    path = tmp_path / "maj.safetensors"
    save_model(compile_formula("#<['1'] > #<['0']", "01", "hard"), path)
    res = run_cli("decompile", str(path), "--as", "brasp")
    assert res.rc == 2 and "B-RASP cannot" in res.err and len(res.err.splitlines()) == 1
    soft = tmp_path / "soft.safetensors"
    save_model(compile_formula("Y '1'", "01", "soft-temperature"), soft)
    res = run_cli("decompile", str(soft), "--harden", "--as", "brasp")
    assert res.rc == 2 and "position feature 'i/n'" in res.err


def test_doc_examples_print_what_the_doc_shows(tmp_path, monkeypatch) -> None:
    """The worked example and the decompile example of docs/programs.md ("B-RASP programs"):
    each ```bash block followed by a ```text block is run from the repository root."""
    import re
    import shlex
    import shutil

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "programs.md").read_text()
    section = text[text.index("## B-RASP programs") :]
    pairs = re.findall(r"```bash\n([^`]*)```\n```text\n([^`]*)```", section)
    assert len(pairs) == 2
    shutil.copytree(root / "src" / "hardsoft" / "programs" / "examples", tmp_path / "ex")
    monkeypatch.chdir(tmp_path)
    for commands, expected in pairs:
        for line in commands.strip().splitlines():
            args = shlex.split(line.replace("src/hardsoft/programs/examples", "ex"))[1:]
            if args[0] == "decompile":  # a shorter check against the model: same stdout
                args += ["--random-words", "10", "--random-max-n", "40"]
            res = run_cli(*args)
            assert res.rc == 0, res.err
        assert res.out.splitlines() == expected.rstrip("\n").splitlines()

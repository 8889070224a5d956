"""The CLI fuzz test (issue #12): every command registered on the typer app, run in-process on
hypothesis-generated argument lists, formulas, model-file metadata and input files.

For every example it asserts that
* the exit code is 0, 1 or 2 (no exception escapes ``main``: the harness runs with
  HARDSOFT_DEBUG=1, so an unanticipated exception fails the test with its traceback);
* nothing prints a traceback;
* a usage error (exit code 2) starts stderr with ``error:``;
* ``--json`` gives one JSON object on stdout when the command ran (exit code 0 or 1);
* no file that existed before the command changed, except, on success, under the paths the
  command was asked to write (``-o``/``--out``/``--output``).

Commands are discovered from the app (``typer.main.get_command``), not listed here, so a new
command is fuzzed as soon as it is registered. Values are drawn per option *type* (ints, floats,
paths, flags) with pools of interesting strings per common option *name* (formula, alphabet,
--input, --language, --lengths, --features, --tau, --device, ...); unknown names get generic
text. Sizes stay small so valid runs are quick; HARDSOFT_MAX_MEMORY=512M makes large valid
requests refusals, and a time budget (2 s) interrupts a valid but long run, which counts as
inconclusive (a hypothesis ``event``), not as a failure.

``make test`` runs FAST_EXAMPLES per command; ``pytest -m slow`` runs SLOW_EXAMPLES (10x).
Examples are derandomized (fixed seed, no example database), so CI is reproducible.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import sys
import tempfile
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
import typer.main
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from hardsoft.cli import app
from hardsoft.model import random_model, save_model
from hardsoft.model.io import FORMAT
from tests._cli import run_cli

FAST_EXAMPLES = 20
SLOW_EXAMPLES = 10 * FAST_EXAMPLES
BUDGET_S = 2.0
MAX_MEMORY = "512M"


# ------------------------------------------------------------------ discovery


def discover() -> list[tuple[tuple[str, ...], Any]]:
    """(command path, click command) for every leaf command of the app."""
    found: list[tuple[tuple[str, ...], Any]] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, (*path, name))
        elif path:
            found.append((path, cmd))

    walk(typer.main.get_command(app), ())
    for _, cmd in found:  # each parameter's annotation, from the command's own function
        hints = typing.get_type_hints(inspect.unwrap(cmd.callback))
        for param in cmd.params:
            ANNOTATIONS[id(param)] = hints.get(param.name, str)
    return found


ANNOTATIONS: dict[int, Any] = {}
"""The annotation of every command parameter (by ``id``), read from the typer function that
defines it (``functools.wraps`` keeps it as ``__wrapped__``): public Python, not typer's
private attributes, so the test runs with every typer the floor allows."""


COMMANDS = discover()
IDS = [" ".join(path) for path, _ in COMMANDS]


def _base_type(param: Any) -> Any:
    ann = ANNOTATIONS[id(param)]
    args = [a for a in typing.get_args(ann) if a is not type(None)]
    if typing.get_origin(ann) is list:
        return list
    return args[0] if len(args) == 1 and typing.get_origin(ann) is not list else ann


def _is_output(param: Any) -> bool:
    """A path the command writes (``compile --output NAME=FORMULA`` is not one)."""
    if _base_type(param) is not Path:
        return False
    opts = set(getattr(param, "opts", ()))
    return bool(opts & {"-o", "--out", "--output"}) or param.name in ("out", "output")


# ------------------------------------------------------------------ the sandbox


@dataclass(frozen=True)
class GenModel:
    """A model file to write before the run: real weights, generated metadata."""

    spec: Any
    meta: Any
    name: str = "gen.safetensors"


@dataclass(frozen=True)
class GenFile:
    """An input file to write before the run."""

    data: bytes
    name: str = "gen.txt"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    """Pristine files every example starts from (copied per example)."""
    d = tmp_path_factory.mktemp("fuzz")
    hard = random_model(
        weighting="rightmost", layers=1, heads=1, d_model=4, seed=1, dtype=torch.float64
    )
    save_model(hard, d / "hard.safetensors")
    soft = random_model(layers=1, heads=1, d_model=4, weight_scale=0.3, dtype=torch.float64)
    save_model(soft, d / "soft.safetensors")
    from hardsoft.compile import compile_formula

    save_model(compile_formula("MOD(2,1)(#<['1'])", "01"), d / "parity.safetensors")
    shutil.copy(d / "hard.safetensors", d / "existing.safetensors")
    res = run_cli(
        "train", "-o", str(d / "run"), "--steps", "1", "--max-n", "4", "--d-model", "4",
        "--layers", "1", "--heads", "1", "--json",
    )  # fmt: skip
    assert res.rc == 0, res.err
    (d / "words.txt").write_text("0110\n\n1\n0101010\n")
    (d / "latin1.txt").write_bytes(b"01\n0\xe91\n")
    (d / "empty.txt").write_text("")
    (d / "note.txt").write_text("not a model\n")
    (d / "folder").mkdir()
    # hostile inputs (issue 41): a link to a model, deep and long programs, an endless file
    (d / "link.safetensors").symlink_to("hard.safetensors")  # relative: survives the copy
    (d / "p.cr").write_text('// alphabet: 01\nx = "1" && !"0"\n')
    (d / "deep.cr").write_text("x = " + "!" * 800 + '"1"\n')
    (d / "long.cr").write_text("x = " + " && ".join(['"1"'] * 3000) + "\n")
    (d / "deep.brasp").write_text("Q_0(i)\nQ_1(i)\nX(i) := " + "!" * 800 + "Q_1(i)\n")
    (d / "urandom.brasp").symlink_to("/dev/urandom")
    return d


# ------------------------------------------------------------------ value strategies


def mostly(good: st.SearchStrategy, bad: st.SearchStrategy) -> st.SearchStrategy:
    """``good`` about four times in five, so that most examples get far enough to do real work
    (the bad value sits in the middle of the range: hypothesis favours the ends of ranges)."""
    return st.integers(0, 9).flatmap(lambda k: bad if k in (4, 5) else good)


INTS = mostly(
    st.integers(0, 5).map(str),
    st.one_of(
        st.sampled_from([-1, -2, 2**63, 2**64, -(2**64), 10**30, 2**63 - 1]).map(str),
        st.sampled_from(["x", "1.5", "", "1e3", " 3", "0x10", "\u0663"]),
    ),
)
FLOATS = mostly(
    st.sampled_from(["0.1", "0.25", "0.3", "0.5", "1", "0.9"]),
    st.sampled_from(["0", "-1", "1e-9", "2", "1e308", "nan", "inf", "-inf", "x", "", "1e400"]),
)
ATOMS = ["'0'", "'1'", "'a'", "first", "last", "true", "false", "'['"]
TERMS = ["#<['1']", "#>['0']", "i", "n", "3", "-2", "9223372036854775808", "10" + "0" * 30]


def _formulas() -> st.SearchStrategy[str]:
    term = st.recursive(
        st.sampled_from(TERMS),
        lambda t: st.one_of(
            st.tuples(t, st.sampled_from(["+", "-"]), t).map(" ".join),
            st.tuples(st.sampled_from(["2", "9000000000000000000"]), t).map(" * ".join),
        ),
        max_leaves=3,
    )
    formula = st.recursive(
        st.one_of(
            st.sampled_from(ATOMS),
            st.tuples(term, st.sampled_from(["<", "<=", "=", "!=", ">"]), term).map(
                lambda x: f"({' '.join(x)})"
            ),
            st.tuples(st.integers(1, 4), term).map(lambda x: f"MOD({x[0]},0)({x[1]})"),
        ),
        lambda f: st.one_of(
            st.tuples(st.sampled_from(["!", "X ", "Y ", "F ", "P ", "E "]), f).map("".join),
            st.tuples(f, st.sampled_from(["&", "|", "->", "S", "U"]), f).map(
                lambda x: f"({' '.join(x)})"
            ),
        ),
        max_leaves=4,
    )
    noise = st.text(alphabet="'01ab#<>[]()!&|-+*0123456789 MODXUYPFESinfirstlaue@,", max_size=25)
    named = st.sampled_from(["@parity-mod", "@nosuch", "parity-mod", "@", "-" * 1000 + "1"])
    return st.one_of(formula, formula, formula, noise, named)


ALPHABETS = mostly(
    st.sampled_from(["01", "ab", "()[]", "[/]"]),
    st.one_of(
        st.sampled_from(["011", "", "0", "a\u00e9\u4e2d"]),
        st.text(alphabet="01ab[/]\\' ", max_size=4),
    ),
)
WORDS = st.text(alphabet="01ab()[]x/", max_size=10)
LANGUAGE_NAMES = [
    "parity-even", "parity-odd", "dyck1", "dyck2", "dyck0", "dyck3", "majority", "anbn",
    "khop2", "flipflop", "induction-head", "first", "ones-star", "parity-process",
    "dyck2-process", "parity", "nosuch", "", "[/]",
]  # fmt: skip
LENGTHS = mostly(
    st.lists(st.integers(2, 24), min_size=1, max_size=3).map(lambda xs: ",".join(map(str, xs))),
    st.one_of(
        st.lists(st.integers(-2, 24), max_size=4).map(lambda xs: ",".join(map(str, xs))),
        st.sampled_from(
            ["", "4,8,...,32", "1,2,...,10", "a,b", "8,...,4", "2,4,...,5", "4,2,...,8", ",,"]
        ),
    ),
)
FEATURES = st.lists(
    st.sampled_from(
        [
            "1",
            "i",
            "n",
            "i/n",
            "1/i",
            "(-1)^i",
            "[i=1]",
            "[i=n]",
            "[i mod 3 = 1]",
            "learned:8",
            "sinusoidal:4",
            "n*i",
            "i^7",
            "learned:0",
            "sinusoidal:3",
            "[i mod 0 = 0]",
            "",
        ]
    ),  # fmt: skip
    max_size=3,
).map(",".join)
TAUS = st.sampled_from(
    ["1", "1/n", "1/(4*n)", "-1", "0", "(-8)**(1/3)", "-" * 1000 + "1", "-" * 999 + "1",
     "exp(n)", "log(n)", "x", "", "n**0.5", "1e400", "__import__('os')", "9" * 5000]
)  # fmt: skip
DEVICES = mostly(st.just("cpu"), st.sampled_from(["cuda", "cuda:0", "cuda:x", "tpu", ""]))
EXPERIMENTS = st.sampled_from(["softmax-to-hardmax", "nosuch", "", "compiler,nosuch"])
TEXT = st.text(alphabet="01ab-_.,:[/]()é中 ", max_size=8)

BY_NAME: dict[str, st.SearchStrategy[str]] = {
    "formula": _formulas(),
    "formula_text": _formulas(),
    "alphabet": ALPHABETS,
    "word": WORDS,
    "inputs": WORDS,
    "language": mostly(st.sampled_from(LANGUAGE_NAMES[:13]), st.sampled_from(LANGUAGE_NAMES)),
    "lengths": LENGTHS,
    "random_n": LENGTHS,
    "generalization": LENGTHS,
    "features": FEATURES,
    "tau": TAUS,
    "device": DEVICES,
    "only": EXPERIMENTS,
    "weighting": st.sampled_from(["softmax", "rightmost", "leftmost", "average", "max", ""]),
    "mask": st.sampled_from(["none", "future", "strict-past", "sideways"]),
    "layer_norm": st.sampled_from(["none", "pre", "post", "mid"]),
    "target": st.sampled_from(
        ["hard", "soft-temperature", "soft-pe", "average-hard", "bogus", "parity-even"]
    ),
    "schedule": st.sampled_from(["cosine", "constant", "linear"]),
    "arch": st.sampled_from(["transformer", "lstm", "rnn"]),
    "inputs_kind": st.sampled_from(["uniform", "balanced", "x"]),
}
NAME_ARGUMENT = st.sampled_from(
    [*LANGUAGE_NAMES, "list", "parity-mod", "dyck", "khop", "flipflop", "induction-head"]
)

MODEL_FILES = mostly(
    st.sampled_from(["hard.safetensors", "soft.safetensors", "parity.safetensors", "run"]),
    st.sampled_from(
        ["missing.safetensors", "folder", "note.txt", "", "existing.safetensors",
         "link.safetensors"]
    ),
)  # fmt: skip
OUTPUT_TARGETS = mostly(
    st.sampled_from(["out.safetensors", "existing.safetensors", "new/sub/out", "run", "newdir"]),
    st.sampled_from(
        ["folder", "", "note.txt/out.safetensors", ".", "folder/", "/dev/null",
         "hard.safetensors", "link.safetensors", "words.txt", "p.cr"]
    ),  # the last four: inputs of many commands (an output must never replace one)
)  # fmt: skip
PROGRAM_FILES = mostly(
    st.sampled_from(["@dyck1", "@majority", "@ab_plus", "p.cr", "long.cr"]),
    st.sampled_from(
        ["deep.cr", "deep.brasp", "urandom.brasp", "folder", "missing.cr", "words.txt", "@nosuch"]
    ),
)
INPUT_FILES = st.sampled_from(["words.txt", "latin1.txt", "empty.txt", "folder", "missing.txt"])

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    TAUS,
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=6,
)
SPEC_KEYS = ["alphabet", "d_model", "layers", "position_features", "layer_norm", "ln_eps",
             "d_out", "name", "extra"]  # fmt: skip
HEAD_KEYS = ["weighting", "mask", "tau", "d_head", "d_value", "scale", "bogus"]


@st.composite
def gen_models(draw: st.DrawFn, base_spec: dict) -> GenModel:
    """The hard model's spec with one field (top level, layer or head) set to a generated JSON
    value or removed, or the whole spec / meta replaced."""
    spec = json.loads(json.dumps(base_spec))
    where = draw(st.sampled_from(["spec", "top", "layer", "head", "head", "meta"]))
    value = draw(JSON_VALUES)
    meta: Any = {}
    if where == "spec":
        spec = value
    elif where == "meta":
        meta = value
    else:
        target = spec
        keys = SPEC_KEYS
        if where == "layer":
            target, keys = spec["layers"][0], ["heads", "d_ff", "bogus"]
        elif where == "head":
            target, keys = spec["layers"][0]["heads"][0], HEAD_KEYS
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = value
    return GenModel(spec, meta)


GEN_TEXT = st.one_of(
    st.lists(WORDS, max_size=4).map(lambda ws: "\n".join(ws).encode()),
    st.binary(max_size=20),
)


def value_strategy(param: Any, base_spec: dict) -> st.SearchStrategy[Any]:
    """Values for one parameter (an option's value or an argument)."""
    kind = _base_type(param)
    name = param.name
    if _is_output(param):
        return OUTPUT_TARGETS
    if name == "input_file":
        return st.one_of(INPUT_FILES, GEN_TEXT.map(GenFile))
    if name == "run":  # a training run folder
        return mostly(st.just("run"), MODEL_FILES)
    if name in ("file", "program") and kind is str:  # a program file (program run, --program)
        return PROGRAM_FILES
    if kind is Path or name == "model_path":
        return mostly(MODEL_FILES, gen_models(base_spec))
    if kind is int:
        return INTS
    if kind is float:
        return FLOATS
    if name == "inputs" and kind is str:
        return BY_NAME["inputs_kind"]
    if name in BY_NAME:
        return BY_NAME[name]
    if getattr(param, "param_type_name", "") == "argument":
        return st.one_of(NAME_ARGUMENT, _formulas())
    return TEXT


@st.composite
def argument_lists(draw: st.DrawFn, path: tuple[str, ...], cmd: Any, base_spec: dict) -> list:
    """An argument list for ``cmd``: every argument, the required options, a random subset of
    the others (flags included or not), occasionally a stray token. The simplest draw (what
    hypothesis tries first) is the plainest valid-looking command line."""
    args: list[Any] = list(path)
    for param in cmd.params:
        is_option = getattr(param, "param_type_name", "") == "option"
        if is_option and getattr(param, "is_flag", False):
            if draw(st.integers(0, 2)) == 2:
                opts = list(param.opts) + list(param.secondary_opts)
                args.append(draw(st.sampled_from(opts)))
            continue
        if is_option:
            if not param.required and draw(st.integers(0, 3 if param.multiple else 1)) == 0:
                continue
            repeats = draw(st.integers(1, 2)) if param.multiple else 1
            for _ in range(repeats):
                args += [param.opts[0], draw(value_strategy(param, base_spec))]
        elif draw(st.integers(0, 15)) != 15:  # an argument, rarely left out
            args.append(draw(value_strategy(param, base_spec)))
    if draw(st.integers(0, 12)) == 12:
        args.insert(len(path), draw(st.sampled_from(["--bogus", "extra", "-", "--"])))
    return args


# ------------------------------------------------------------------ running one example


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(root))] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


def _materialize(args: list[Any], root: Path, base_weights: Path) -> list[str]:
    from safetensors import safe_open

    text = []
    for a in args:
        if isinstance(a, GenModel):
            with safe_open(str(base_weights), framework="pt") as f:
                tensors = {k: f.get_tensor(k) for k in f.keys()}
            md = {"format": FORMAT, "spec": json.dumps(a.spec), "meta": json.dumps(a.meta)}
            save_file(tensors, str(root / a.name), metadata=md)
            text.append(a.name)
        elif isinstance(a, GenFile):
            (root / a.name).write_bytes(a.data)
            text.append(a.name)
        else:
            text.append(str(a))
    return text


def _output_targets(args: list[str]) -> list[str]:
    targets = []
    for k, a in enumerate(args[:-1]):
        if a in ("-o", "--out", "--output"):
            targets.append(os.path.normpath(args[k + 1]) if args[k + 1] else "")
    return targets


def _inputs(args: list[str], root: Path) -> set[str]:
    """The files the command line names outside its output options (through links too),
    relative to ``root``."""
    found = set()
    for k, a in enumerate(args):
        if not a or a.startswith("-") or (k and args[k - 1] in ("-o", "--out", "--output")):
            continue
        path = root / a.split(":")[0]
        try:
            if path.is_file():
                found.add(str(path.resolve().relative_to(root.resolve())))
        except (OSError, ValueError):  # a name too long, or a link out of the sandbox
            continue
    return found


def _changed_allowed(rel: str, targets: list[str]) -> bool:
    return any(t and (rel == t or rel.startswith(t.rstrip("/") + "/") or t == ".") for t in targets)


def check_example(args: list[Any], sandbox: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="fuzz-"))
    cwd = os.getcwd()
    try:
        root = work / "w"
        shutil.copytree(sandbox, root, symlinks=True)  # a link to /dev/urandom stays one
        argv = _materialize(args, root, root / "hard.safetensors")
        before = _snapshot(root)
        os.chdir(root)
        started = time.perf_counter()
        res = run_cli(*argv, budget=BUDGET_S, max_memory=MAX_MEMORY)
        os.chdir(cwd)
        if os.environ.get("HARDSOFT_FUZZ_LOG"):  # a record of what ran, for tuning the pools
            with open(os.environ["HARDSOFT_FUZZ_LOG"], "a", encoding="utf-8") as log:
                line = (res.err or res.out).strip().splitlines()[:1]
                log.write(f"{res.rc}\t{time.perf_counter() - started:.2f}s\t{argv!r}\t{line}\n")
        shown = f"hardsoft {' '.join(map(repr, argv))}\nrc={res.rc}\n{res.err[-2000:]}"
        if res.rc is None:
            event("interrupted by the time budget (a valid, long request)")
            return
        event(f"exit code {res.rc}")
        assert res.rc in (0, 1, 2), shown
        assert "Traceback" not in res.out + res.err, shown
        if res.rc == 2:
            assert res.err.startswith("error:"), shown
        if "--json" in argv and res.rc in (0, 1) and "--help" not in argv:
            assert isinstance(json.loads(res.out), dict), shown
        after = _snapshot(root)
        targets = _output_targets(argv) if res.rc == 0 else []
        for rel, digest in before.items():
            if after.get(rel) != digest:
                assert _changed_allowed(rel, targets), f"{rel} changed\n{shown}"
        for rel in _inputs(argv, root):  # an input is never replaced, not even on success
            assert after.get(rel) == before.get(rel), f"the input {rel} changed\n{shown}"
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
        if "matplotlib.pyplot" in sys.modules:  # figures of an interrupted experiment
            sys.modules["matplotlib.pyplot"].close("all")


def run_fuzz(path: tuple[str, ...], cmd: Any, sandbox: Path, examples: int) -> None:
    from hardsoft.model import read_metadata

    base_spec = read_metadata(sandbox / "hard.safetensors")["spec"]

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(args=argument_lists(path, cmd, base_spec))
    def fuzz(args: list[Any]) -> None:
        check_example(args, sandbox)

    fuzz()


# ------------------------------------------------------------------ the tests


# a budget alarm can land in hypothesis's gc callback, where Python reports it as "ignored"
UNRAISABLE = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@UNRAISABLE
@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_fuzz_command(path, cmd, sandbox) -> None:
    run_fuzz(path, cmd, sandbox, FAST_EXAMPLES)


@UNRAISABLE
@pytest.mark.slow
@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_fuzz_command_slow(path, cmd, sandbox) -> None:
    run_fuzz(path, cmd, sandbox, SLOW_EXAMPLES)


def test_discovery_finds_the_commands() -> None:
    names = set(IDS)
    for expected in ("run", "check", "compile", "eval", "reproduce", "language sample"):
        assert expected in names
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_every_command_has_help_and_json(path, cmd) -> None:
    res = run_cli(*path, "--help")
    assert res.rc == 0 and "Usage" in res.out, res.err
    opts = {o for p in cmd.params for o in getattr(p, "opts", ())}
    assert "--json" in opts, f"{' '.join(path)} has no --json"


# ------------------------------------------------------------------ the hostile cases (issue 41)
#
# Inputs a hostile user would give, each with the answer it must get: nesting depth, file size
# and kind, an output that is an input, pipes, Ctrl-C. Every case also passes the fuzz checks
# (no traceback, one error line, nothing that existed changed).

DEEP_NOT = "!" * 800 + "'a'"
LONG_AND = " & ".join(["'a'"] * 3000)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """Pristine hostile files (copied per case): deep and long programs, oversized and endless
    files, links to the model files."""
    d = tmp_path_factory.mktemp("hostile")
    from hardsoft.compile import compile_formula

    save_model(compile_formula("MOD(2,1)(#<['1'])", "01", causal=True), d / "parity.safetensors")
    (d / "deep.cr").write_text("// alphabet: ab\nx = " + "!" * 800 + '"a"\n')
    (d / "deep.brasp").write_text("Q_a(i)\nQ_b(i)\nX(i) := " + "!" * 800 + "Q_a(i)\n")
    (d / "long.cr").write_text("// alphabet: ab\nx = " + " && ".join(['"a"'] * 3000) + "\n")
    (d / "long.brasp").write_text("Q_a(i)\nQ_b(i)\nX(i) := " + " & ".join(["Q_a(i)"] * 3000) + "\n")
    (d / "p.cr").write_text('// alphabet: ab\nx = "a"\n')
    (d / "big.cr").write_text('x = "a"\n' + "// padding\n" * 100_000)  # 1.1 MB
    (d / "big.brasp").write_text("Q_a(i)\n" + "# padding\n" * 120_000)
    for name in ("urandom.brasp", "urandom.cr", "urandom.py", "urandom.txt", "urandom.json"):
        (d / name).symlink_to("/dev/urandom")
    (d / "folder.cr").mkdir()
    (d / "words.npy").write_text("0110\n")
    (d / "words.txt").write_text("0110\n1\n")
    (d / "link.safetensors").symlink_to("parity.safetensors")  # relative: it survives a copy
    (d / "export").mkdir()
    soft = random_model(layers=1, heads=1, d_model=4, alphabet="01", dtype=torch.float64)
    save_model(soft, d / "export" / "model.safetensors")  # what export writes into its folder
    dfa = {"alphabet": "ab", "start": "0", "accept": ["1"],
           "transitions": {"0": {"a": "1", "b": "0"}, "1": {"a": "1", "b": "0"}}}  # fmt: skip
    (d / "atlas" / "rows").mkdir(parents=True)
    (d / "atlas" / "rows" / "ends-a.dfa.json").write_text(json.dumps(dfa))
    return d


HOSTILE: dict[str, tuple[list[str], int, str]] = {
    # nesting depth: a clean error naming the limit, or a correct answer
    "cr-800-not": (["program", "run", "deep.cr", "-i", "ab"], 2, "nesting limit"),
    "brasp-800-not": (["program", "compile", "deep.brasp", "-o", "m.safetensors"], 2, "nesting"),
    "cr-3000-and": (["program", "run", "long.cr", "-i", "aab", "--json"], 0, '"accept": false'),
    "brasp-3000-and": (["program", "run", "long.brasp", "-i", "aa", "--json"], 0, '"accept": true'),
    "formula-800-not": (["eval", DEEP_NOT, "--input", "ab", "--json"], 0, '"accept": false'),
    "formula-3000-and": (["compile", LONG_AND, "--alphabet", "ab", "-o", "m.safetensors"], 0, ""),
    # file size and kind
    "cr-over-1mib": (["program", "run", "big.cr", "-i", "a"], 2, "a program file has at most"),
    "brasp-over-1mib": (["program", "compile", "big.brasp", "-o", "m.safetensors"], 2, "at most"),
    "brasp-urandom": (["program", "run", "urandom.brasp", "-i", "a"], 2, "not a regular file"),
    "cr-urandom": (["check", "parity.safetensors", "--program", "urandom.cr"], 2, "not a regular"),
    "py-urandom": (["program", "run", "urandom.py:p", "-i", "a"], 2, "not a regular file"),
    "cr-folder": (["program", "run", "folder.cr", "-i", "a"], 2, "is a folder"),
    "dfa-urandom": (["atlas", "add-row", "--name", "x", "--dfa", "urandom.json"], 2, "larger"),
    "words-urandom": (["run", "parity.safetensors", "--input-file", "urandom.txt"], 2, "larger"),
    # an output that is an input (also through a symlink or a hard link)
    "compile-over-program": (["program", "compile", "p.cr", "-o", "p.cr"], 2, "is the input"),
    "decompile-over-model": (
        ["decompile", "parity.safetensors", "--as", "crasp", "-o", "parity.safetensors"],
        2,
        "is the input file MODEL",
    ),
    "decompile-over-symlink": (
        ["decompile", "parity.safetensors", "-o", "link.safetensors"],
        2,
        "is the input",
    ),
    "soften-over-hard-link": (
        ["soften", "parity.safetensors", "-o", "hardlink.safetensors"],
        2,
        "is the input",
    ),
    "soften-over-gap-inputs": (
        ["soften", "parity.safetensors", "--gap-inputs", "words.txt", "-o", "words.txt"],
        2,
        "is the input file --gap-inputs",
    ),
    "run-over-input-file": (
        ["run", "parity.safetensors", "--input-file", "words.npy", "-o", "words.npy"],
        2,
        "is the input file --input-file",
    ),
    "export-over-model": (
        ["export", "export/model.safetensors", "--n-ctx", "8", "-o", "export"],
        2,
        "is the input",
    ),
    "add-row-over-dfa": (
        [
            "atlas",
            "add-row",
            "--name",
            "ends-a",
            "--dfa",
            "atlas/rows/ends-a.dfa.json",
            "-o",
            "atlas",
        ],
        2,
        "is the input file --dfa",
    ),  # fmt: skip
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_case(case: str, hostile: Path, tmp_path: Path, monkeypatch) -> None:
    """One hostile input: its exit code, its one line, and nothing that existed changed."""
    from hardsoft import validate

    argv, rc, needle = HOSTILE[case]
    if argv[0] == "export":
        pytest.importorskip("transformer_lens")  # the interop extra
    root = tmp_path / "w"
    shutil.copytree(hostile, root, symlinks=True)
    os.link(root / "parity.safetensors", root / "hardlink.safetensors")  # a copy loses links
    monkeypatch.chdir(root)
    monkeypatch.setattr(validate, "MAX_INPUT_BYTES", 1 << 20)  # the endless files, quickly
    before = _snapshot(root)
    res = run_cli(*argv, budget=60, max_memory=MAX_MEMORY)
    shown = f"hardsoft {' '.join(map(repr, argv))}\nrc={res.rc}\n{res.err[-2000:]}"
    assert res.rc == rc, shown
    assert "Traceback" not in res.out + res.err, shown
    if rc == 2:
        assert res.err.startswith("error:") and len(res.err.strip().splitlines()) == 1, shown
        assert needle in res.err, shown
    else:
        assert needle in res.out, shown
    after = _snapshot(root)
    assert {k: v for k, v in after.items() if k in before} == before, shown


def _pipe_path(data: bytes) -> str:
    """A pipe holding ``data`` (written by a thread), as a path: ``/dev/fd/N``, what a shell's
    process substitution ``<(...)`` gives."""
    import threading

    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return f"/dev/fd/{read}"


@pytest.mark.parametrize("command", ["run", "check"])
def test_streams_read_pipes(command: str, hostile: Path) -> None:
    """``run --stream --input-file /dev/stdin`` from a pipe and ``check --stream`` from a
    process substitution read the pipe (they said "not seekable")."""
    model = str(hostile / "parity.safetensors")
    word = "0110" * 500
    path = _pipe_path((word + "\n").encode())
    if command == "run":
        res = run_cli("run", model, "--stream", "--input-file", path)
        summary = json.loads(res.out.strip().splitlines()[-1])["summary"]
        assert res.rc == 0 and summary["n"] == len(word), res.err
        assert summary["accept"] is (word.count("1") % 2 == 1)
    else:
        res = run_cli("check", model, "--stream", "--input-file", path,
                      "--formula", "MOD(2,1)(#<['1'])", "--json")  # fmt: skip
        report = json.loads(res.out)
        assert res.rc == 0 and report["checked_positions"] == len(word), res.err
        assert report["mismatched_positions"] == 0


@pytest.mark.parametrize(
    "data, needle",
    [(b"01\xfd", "byte b'\\xfd' at position 3"), (b"01\n01\n", "byte b'\\n' at position 3"),
     (b"", "holds the empty input"),
     (b"0" * (1 << 20) + b"\n1", "byte b'\\n' at position 1048577")],  # the line ends a block
)  # fmt: skip
def test_a_bad_pipe_is_one_line(data: bytes, needle: str, hostile: Path) -> None:
    res = run_cli("run", str(hostile / "parity.safetensors"), "--stream", "--input-file",
                  _pipe_path(data))  # fmt: skip
    assert res.rc == 2 and res.err.startswith("error:") and needle in res.err, res.err


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
def test_ctrl_c_at_start_up_is_one_line(hostile: Path) -> None:
    """Ctrl-C while the modules load (the first seconds) printed a KeyboardInterrupt
    traceback: now ``error: interrupted`` and exit code 130, as later. The signal is sent once
    torch's library is mapped (so: during the imports), to a command that then waits on its
    input (so a signal that comes late still finds it running)."""
    import signal
    import subprocess

    argv = ["run", str(hostile / "parity.safetensors"), "--stream", "--input-file", "/dev/stdin"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hardsoft", *argv],  # as the console script runs
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "libtorch" not in maps.read_text():
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err == "error: interrupted\n", (proc.returncode, err)


def test_ctrl_c_later_says_interrupted(tmp_path: Path) -> None:
    """Ctrl-C during a command exited 130 with nothing said (typer swallowed it). Run in its own
    process, signalled once training has written its config (a signal sent to the test process
    itself could land in an import, or in the test runner, rather than in the command)."""
    import signal
    import subprocess

    run = tmp_path / "run"
    argv = ["train", "--language", "parity", "--steps", "1000000", "-o", str(run)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hardsoft", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (run / "config.json").exists():
        time.sleep(0.01)
    assert (run / "config.json").exists(), "training did not start within 120 s"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip().endswith("error: interrupted"), (
        proc.returncode,
        err,
    )

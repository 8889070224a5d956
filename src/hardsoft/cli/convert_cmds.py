"""``hardsoft soften`` and ``hardsoft harden``: convert between hard and soft attention."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    float_option,
    input_file_option,
    int_option,
    output_file_option,
    path_argument,
    print_json,
    seed_option,
)


@app.command("soften")
def soften_cmd(
    model_path: Path = path_argument("MODEL", "A hard-attention model file."),
    out: Path = output_file_option(help="Where to write the softmax model."),
    n: int = int_option(
        None,
        "--n",
        lo=1,
        help="Largest length the bound covers (default: the longest --gap-inputs word, or 1000).",
    ),
    gap: str = typer.Option(
        None, "--gap", help="The attention gap of every scored head: a number or expression in n."
    ),
    gap_inputs: Path = input_file_option(
        "--gap-inputs", help="Measure the gaps exactly on these words (one per line)."
    ),
    eps: float = float_option(
        0.25,
        "--eps",
        help="Target bound on |softened − hard|, 0 < eps < 1/2.",
    ),
    samples: int = int_option(
        16, "--samples", lo=1, help="Words per length when the gap is measured on a sample."
    ),
    seed: int = seed_option(help="Seed of that sample (0 <= seed < 2^64)."),
    verify_n: int = int_option(
        None,
        "--verify-n",
        lo=1,
        help="Also run every word of length <= N through both models and report the largest "
        "|softened - hard| (at most 2^18 words).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Simulate a hard-attention model by softmax attention with temperature.

    Every unique-hard and average-hard head becomes a softmax head at a temperature τ set by
    its attention gap (Yang, Strobl, Chiang & Angluin, TACL 2026); unique-hard ties are broken
    by a position term in the score. The first output line says which inputs the error bound
    covers: *certified for all words to n* (the gap measured on every word up to `--n` when
    there are at most 2^14), *certified by grid* (scores on a known grid: compiled formulas and
    programs, dyadic weights with integer features; every word up to n), or *measured on given
    words only* (`--gap-inputs`, or a stated random sample when nothing else is possible: a
    warning on stderr, and other words may exceed the bound; check them with `--verify-n`);
    `--gap` is taken on trust. The JSON reports `case`, `covers`, `tau`, `gap`, `gap_source`,
    `error_bound` (on |softened − hard| over every output, on the inputs it covers) and `n`;
    the model file carries the same certificate in meta["softened"]. A model with no hard
    heads is written back unchanged (`heads: []`). See docs/soften.md."""
    from hardsoft.cli.common import load_model
    from hardsoft.convert import soften
    from hardsoft.convert.coverage import MEASURED, MEASURED_WARNING, verify_all
    from hardsoft.convert.gaps import read_words
    from hardsoft.model import save_model

    validate.protect_inputs({"MODEL": model_path, "--gap-inputs": gap_inputs}, {"--out": out})
    model = load_model(model_path)
    words = read_words(str(gap_inputs), model.spec.alphabet) if gap_inputs is not None else None
    result = soften(model, n=n, gap=gap, gap_inputs=words, eps=eps, samples=samples, seed=seed)
    info = result.to_dict()
    if words is not None:
        hard_out = model.run_words(words)
        soft_out = result.model.run_words(words)
        info["measured_error"] = max(float(np.abs(a - b).max()) for a, b in zip(hard_out, soft_out))
    verification = None
    if verify_n is not None:
        verification = verify_all(model, result.model, verify_n, eps)
        info["verified"] = verification.to_dict()
    save_model(result.model, out)
    info["path"] = str(out)
    if result.case == MEASURED:
        typer.echo(MEASURED_WARNING, err=True)
    if as_json:
        print_json(info)
        return
    print(f"{result.case}: error bound {info['error_bound']:.3g} on {result.coverage()}")
    print(f"{model_path} -> {out}: {len(result.heads)} hard heads softened")
    if result.heads:
        gap = "none (no scored head)" if info["gap"] is None else f"{info['gap']:.4g}"
        print(
            f"gap ({info['gap_source']}) = {gap} at n = {info['n']}; "
            f"tau = {info['tau']} (theta = {info['theta']:.4g})"
        )
    if verification is not None:
        print(verification.describe())
    if "measured_error" in info:
        print(f"measured max |softened - hard| = {info['measured_error']:.3g}")
    for note in info["notes"]:
        print(f"note: {note}")


@app.command("harden")
def harden_cmd(
    model_path: Path = path_argument("MODEL", "A model with softmax heads."),
    out: Path = output_file_option(help="Where to write the hard model."),
    weighting: str = typer.Option(
        "leftmost", "--weighting", help="leftmost, rightmost or average."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Turn every softmax head into a hard head (same weights, temperature dropped).

    The hard counterpart of a trained model (`hardsoft train`) is what `hardsoft restrict`
    analyses (Hahn 2020 §5); acceptance is read the same way in both (for a next-symbol
    predictor: P(END-OF-SEQUENCE) above half its value on in-language prefixes, see
    docs/soften.md). Run the original on the witness pair with `hardsoft run` to see whether
    the trained network itself separates it."""
    from hardsoft.cli.common import load_model
    from hardsoft.convert import harden
    from hardsoft.model import save_model
    from hardsoft.model.readout import acceptance_of

    validate.protect_inputs({"MODEL": model_path}, {"--out": out})
    model = load_model(model_path)
    hard = harden(model, weighting)
    save_model(hard, out)
    heads = sum(len(layer.heads) for layer in model.spec.layers)
    soft_heads = sum(
        1 for layer in model.spec.layers for h in layer.heads if h.weighting == "softmax"
    )
    readout = acceptance_of(hard)
    info = {
        "path": str(out),
        "weighting": hard.meta["hardened"]["weighting"],
        "heads_hardened": soft_heads,
        "heads": heads,
        "acceptance": {**readout.to_dict(), "rule": readout.describe()},
    }
    if as_json:
        print_json(info)
        return
    print(
        f"{model_path} -> {out}: {soft_heads} of {heads} heads made {info['weighting']}; "
        f"accept iff {readout.describe()}"
    )

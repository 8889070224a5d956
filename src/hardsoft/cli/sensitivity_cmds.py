"""``hardsoft sensitivity``: Lemma 5's single-symbol influence, measured and bounded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import typer
from rich.table import Table

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    MAX_LIST,
    console,
    device_option,
    err_console,
    int_option,
    path_argument,
    print_json,
    seed_option,
)
from hardsoft.errors import HardsoftError


def parse_lengths(text: str, option: str = "--lengths", lo: int | None = None) -> list[int]:
    """``"16,32,64"`` or with an ellipsis ``"a,b,...,c"``: geometric (``16,32,...,1024``) when
    ``b/a`` is an integer ``r > 1`` and ``c = a·r^k``, otherwise arithmetic with step ``b − a``.
    At most :data:`MAX_LIST` values; each at least ``lo``."""
    values = _expand_lengths(text, option)
    for v in values:
        validate.integer(v, option, lo=lo)
    return values


def _expand_lengths(text: str, option: str) -> list[int]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if "..." in parts:
        k = parts.index("...")
        if k != 2 or len(parts) != 4:
            raise HardsoftError(f"{option}: use 'a,b,...,c' for a range, got {text!r}")
        try:
            a, b, c = int(parts[0]), int(parts[1]), int(parts[3])
        except ValueError:
            raise HardsoftError(f"{option} expects integers, got {text!r}") from None
        if not a < b <= c:
            raise HardsoftError(f"{option}: 'a,b,...,c' needs a < b <= c, got {text!r}")
        values = [a]
        ratio = b // a if a > 0 and b % a == 0 else 0
        if ratio > 1:
            top = a
            while top < c:
                top *= ratio
            ratio = ratio if top == c else 0
        if ratio <= 1 and (c - a) // (b - a) + 1 > MAX_LIST:
            raise HardsoftError(f"{option}: {text!r} has more than {MAX_LIST} values")
        while True:
            nxt = values[-1] * ratio if ratio > 1 else values[-1] + (b - a)
            if nxt > c:
                break
            values.append(nxt)
        return values
    if len(parts) > MAX_LIST:
        raise HardsoftError(f"{option} has {len(parts)} values (at most {MAX_LIST})")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise HardsoftError(f"{option} expects comma-separated integers, got {text!r}") from None
    if not values:
        raise HardsoftError(f"{option} is empty")
    return values


def balanced_words(alphabet_size: int) -> Callable[[int, int, np.random.Generator], np.ndarray]:
    """A sampler of inputs with (almost) equal symbol counts: flips then decide MAJORITY-like
    functions, so their influence is not hidden by a large count margin."""

    def sample(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
        base = np.arange(n) % alphabet_size
        return np.stack([rng.permutation(base) for _ in range(count)])

    return sample


def resolve_model_path(path: Path) -> Path:
    """A model file, or a training run folder holding ``model.safetensors``."""
    path = Path(path)
    if path.is_dir():
        inner = path / "model.safetensors"
        if not inner.is_file():
            raise HardsoftError(
                f"{str(path)!r} is a folder without model.safetensors (an LSTM run has no "
                "transformer to measure)"
            )
        return inner
    return path


@app.command("sensitivity")
def sensitivity_cmd(
    model_path: Path = path_argument(
        "MODEL", "A .safetensors model, or a `hardsoft train` run folder."
    ),
    lengths: str = typer.Option(
        "16,32,...,1024", "--lengths", help="Lengths n: '16,32,64' or '16,32,...,1024'."
    ),
    samples: int = int_option(4, "--samples", lo=1, help="Random inputs per length."),
    flips: int = int_option(16, "--flips", lo=1, help="Single-symbol changes per input."),
    seed: int = seed_option(),
    inputs: str = typer.Option(
        "uniform", "--inputs", help="uniform (random symbols) or balanced (equal counts)."
    ),
    fit_min: int = int_option(None, "--fit-min", lo=2, help="Fit the slope on n >= this."),
    fit_max: int = int_option(None, "--fit-max", lo=2, help="Fit the slope on n <= this."),
    batch: int = int_option(32, "--batch", lo=1, help="Variants per forward pass."),
    long_n: int = int_option(
        8192,
        "--long-n",
        lo=2,
        help="From this n: first-layer rows updated per flip, last layer at the measured "
        "positions only (docs/sensitivity.md, long inputs).",
    ),
    device: str = device_option(),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Flip one symbol at positions i < n and measure how far the last activation moves.

    Reports the max and mean influence on the last position (final layer), the supplement's
    term, Lemma 5's corrected bound and the fitted log-log slope (−1 means O(1/n)). Exit code 1
    if a measured value exceeds the bound (each violation names its input)."""
    from hardsoft.cli.common import load_model
    from hardsoft.limits.sensitivity import measure_sensitivity

    ns = parse_lengths(lengths, lo=2)
    if inputs not in ("uniform", "balanced"):
        raise HardsoftError(f"--inputs must be uniform or balanced, got {inputs!r}")
    model = load_model(resolve_model_path(model_path), device=device)
    sampler = balanced_words(len(model.spec.alphabet)) if inputs == "balanced" else None
    report = measure_sensitivity(
        model,
        ns,
        samples=samples,
        flips=flips,
        seed=seed,
        batch=batch,
        words=sampler,
        long_n=long_n,
    )
    data = report.to_dict(fit_min, fit_max)
    data["settings"]["inputs"] = inputs
    if as_json:
        print_json(data)
    else:
        _print_table(data)
    if report.violations:
        for v in report.violations[:10]:
            err_console.print(
                f"error: bound violated at n={v.n}, layer {v.layer}, position {v.position} "
                f"(flipped {v.flipped} to {v.replacement!r}): {v.measured:.6g} > {v.bound:.6g}; "
                f"input {v.word!r}"
            )
        raise typer.Exit(1)


def _print_table(data: dict) -> None:
    table = Table(title=f"single-symbol influence on the last position: {data['model']}")
    for col in ("n", "max", "mean", "supplement max", "bound (corrected)", "log10 published"):
        table.add_column(col, justify="right")
    top = data["per_layer"][-1]
    for k, n in enumerate(data["lengths"]):
        bound = data["bound"][k]
        pub = top["published_log10_other"][k]
        table.add_row(
            str(n),
            f"{data['max_influence'][k]:.3e}",
            f"{data['mean_influence'][k]:.3e}",
            f"{data['supplement_max'][k]:.3e}",
            "n/a" if bound is None else f"{bound:.3e}",
            "n/a" if pub is None else f"{pub:.1f}",
        )
    console.print(table)
    if data["slope"] is not None:
        lo, hi = data["slope_ci"]
        interval = f"[{lo:.3f}, {hi:.3f}]" if lo is not None else f"({data['slope_ci_note']})"
        console.print(f"log-log slope of the max influence: {data['slope']:.3f} {interval}")
    if data["bound_reasons"]:
        console.print("no bound to check: " + "; ".join(data["bound_reasons"]))
    else:
        ok = data["ok"]
        console.print("bound respected" if ok else "bound violated", style=None if ok else "red")

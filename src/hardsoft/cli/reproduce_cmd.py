"""``hardsoft reproduce``: every registered experiment, a results store and a report."""

from __future__ import annotations

from pathlib import Path

import typer

from hardsoft import validate
from hardsoft.cli import app
from hardsoft.cli.common import (
    console,
    device_option,
    err_console,
    print_json,
    seed_option,
)


@app.command("reproduce")
def reproduce_cmd(
    out: Path = typer.Option(
        "reports", "--out", "-o", parser=str, help="Run folder (store + report; checked when used)."
    ),
    quick: bool = typer.Option(True, "--quick/--full", help="Quick (CPU, minutes) or full."),
    only: str = typer.Option(None, "--only", help="Comma-separated experiment names."),
    force: bool = typer.Option(
        False, "--force", help="Rerun even if the stored result is current."
    ),
    seed: int = seed_option(),
    device: str = device_option(),
    executor: str = typer.Option(
        "local", "--executor", help="local (one after another) or ray (parallel Ray tasks)."
    ),
    address: str = typer.Option(
        None, "--address", help="A Ray cluster for --executor ray (default: a local Ray)."
    ),
    list_only: bool = typer.Option(False, "--list", help="List the experiments and exit."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Run every experiment (skipping stored, current ones) and write DIR/index.html + report.md.

    Exit code 1 if any experiment failed (the others are still stored and reported)."""
    from hardsoft.reproduce import reproduce, select

    if list_only:
        exps = select(None)
        rows = [{"name": e.name, "title": e.title, "seed_ref": e.seed_ref} for e in exps]
        if as_json:
            print_json({"experiments": rows})
        else:
            width = max(len(r["name"]) for r in rows)
            for r in rows:
                print(f"{r['name']:{width}s}  {r['title']}")
        return
    out = validate.output_dir(out, "--out")
    names = [n.strip() for n in only.split(",") if n.strip()] if only else None
    summary = reproduce(
        out,
        quick=quick,
        only=names,
        force=force,
        seed=seed,
        device=device,
        show_progress=not as_json,
        executor=executor,
        address=address,
    )
    if as_json:
        print_json(summary)
    else:
        console.print(
            f"ran {len(summary['ran'])}, skipped {len(summary['skipped'])} (current), "
            f"failed {len(summary['failed'])}; report: {summary['report']}"
        )
        for f in summary["failed"]:
            err_console.print(f"failed {f['name']}: {f['error']}", style="red")
    if summary["failed"]:
        raise typer.Exit(1)

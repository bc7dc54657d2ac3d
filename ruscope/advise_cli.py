"""The `ruscope advise` command: the ranking and verdicts of `ruscope.advise` printed, and its rows written
as CSV (the one CSV writer, `analysis.report.to_csv_bytes`) when `--out` is given. Exit 2 names what was
wrong in the config or the sample; nothing is written then."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from analysis.report import to_csv_bytes
from ruscope.advise import AdviseError, advice_text, advise_from_config


def advise(
    config: Annotated[Path, typer.Option("--config", help="The ruscope.toml with an [advisor] section.")] = Path(
        "ruscope.toml"
    ),
    sample: Annotated[Path | None, typer.Option(help="Documents, one JSON per line (else [advisor] sample).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the designs and query rows as CSV here.")] = None,
) -> None:
    """Measure candidate partition keys on a document sample and the config's queries; rank them."""
    try:
        advice = advise_from_config(config, sample)
    except AdviseError as exc:
        typer.echo(f"ruscope: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(advice_text(advice))
    if out is not None:
        temp = out.with_name(f".{out.name}.tmp")  # a reader never sees half a file
        try:
            temp.write_bytes(to_csv_bytes(advice.frame))
            os.replace(temp, out)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            typer.echo(f"ruscope: {out}: cannot write: {exc.strerror or exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"{out}: {len(advice.frame)} row(s)")

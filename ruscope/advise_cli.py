"""The `ruscope advise` command: the ranking and verdicts of `ruscope.advise` printed, and its rows written
as CSV (the one CSV writer, `analysis.report.to_csv_bytes`) when `--out` is given. Exit 2 names what was
wrong in the config or the sample; nothing is written then.

The advice is also stored (`ruscope.advise_store`: the `advice_*` tables of the config's `[store]`, or
`--store`) under a new run id, for the dashboard's Advisor page; `--no-store` skips that. A store that
cannot be written is exit 1 after the advice was printed and the CSV written (nothing measured is lost).

`--from-account` reads the sample from the live `[advisor] container` of the config's account (the first,
or `--account NAME`; its first database) through the SDK (`collectors.sample`): at most `--max-documents`
spread over every physical partition, stopping before `--budget-ru`. The JSONL lands beside the config
(`advisor-sample.jsonl`, or `--sample-out`), so the next run can take it with `--sample`. An account that
cannot be read is exit 1 (the command ran; the account failed), as a failed collector run is."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from analysis.report import to_csv_bytes
from collectors.config import ConfigError, load_config
from collectors.sample import SampleError, SampleReport, sample_container
from ruscope.advise import Advice, AdviseError, advice_text, advise_from_config, read_advisor_config
from ruscope.advise_store import AdviceScope, advice_frames, store_advice
from store import store_location
from wholefile import write_whole

SAMPLE_NAME = "advisor-sample.jsonl"
EXIT_FAILED = 1


def fetch_account_sample(
    config: Path, account: str | None, out: Path | None, max_documents: int, budget_ru: float
) -> SampleReport:
    """Sample the `[advisor] container` of the config's account; AdviseError (config), SampleError (account)."""
    settings, _ = read_advisor_config(config)
    try:
        target = load_config(config).account(account)
    except (ConfigError, LookupError) as exc:
        raise AdviseError(str(exc)) from None
    return sample_container(
        target,
        target.databases[0],
        settings.container,
        max_documents=max_documents,
        budget_ru=budget_ru,
        out_path=out or config.parent / SAMPLE_NAME,
    )


def advise(
    config: Annotated[Path, typer.Option("--config", help="The ruscope.toml with an [advisor] section.")] = Path(
        "ruscope.toml"
    ),
    sample: Annotated[Path | None, typer.Option(help="Documents, one JSON per line (else [advisor] sample).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the designs and query rows as CSV here.")] = None,
    from_account: Annotated[
        bool, typer.Option("--from-account", help="Sample the [advisor] container of the live account first.")
    ] = False,
    account: Annotated[str | None, typer.Option(help="With --from-account: the account (else the first).")] = None,
    sample_out: Annotated[
        Path | None,
        typer.Option(help=f"With --from-account: where the sample goes (else {SAMPLE_NAME} by the config)."),
    ] = None,
    max_documents: Annotated[
        int, typer.Option(min=1, help="With --from-account: documents to sample at most.")
    ] = 10_000,
    budget_ru: Annotated[float, typer.Option(min=1, help="With --from-account: RU the sampling may spend.")] = 5_000,
    store: Annotated[
        str | None, typer.Option(help="Store the advice here (a directory or az:// URI; else the config's [store]).")
    ] = None,
    no_store: Annotated[
        bool, typer.Option("--no-store", help="Print (and --out) the advice; do not store it.")
    ] = False,
) -> None:
    """Measure candidate partition keys on a document sample and the config's queries; rank them."""
    if from_account and sample is not None:
        typer.echo(
            "ruscope: --from-account reads the sample from the account; drop --sample (or use it alone)", err=True
        )
        raise typer.Exit(2)
    try:
        if from_account:
            report = fetch_account_sample(config, account, sample_out, max_documents, budget_ru)
            typer.echo(report.line())
            sample = report.path
        advice = advise_from_config(config, sample)
    except AdviseError as exc:
        typer.echo(f"ruscope: {exc}", err=True)
        raise typer.Exit(2) from None
    except SampleError as exc:
        typer.echo(f"ruscope: cannot sample the account: {exc}", err=True)
        raise typer.Exit(EXIT_FAILED) from None
    typer.echo(advice_text(advice))
    if out is not None:
        write_csv(advice.frame, out)
    if not no_store:
        keep_advice(config, advice, account, store)


def keep_advice(config: Path, advice: Advice, account: str | None, store: str | None) -> None:
    """Store the advice under a new run id (module docstring); a store that fails is one line, exit 1."""
    assert advice.settings is not None  # advise_from_config made it
    try:
        cfg = load_config(config)
        scope = AdviceScope.of(cfg.account(account), advice.settings)
    except (ConfigError, LookupError) as exc:
        typer.echo(f"ruscope: {exc}", err=True)
        raise typer.Exit(2) from None
    uri = store or cfg.store.uri
    now = datetime.now(UTC)
    try:
        run_id = store_advice(store_location(uri), advice_frames(advice, scope, now), time=now)
    except Exception as exc:  # the store unreachable or refusing: one line; the advice was printed already
        typer.echo(f"ruscope: {uri}: the advice was not stored: {' '.join(str(exc).split())[:300]}", err=True)
        raise typer.Exit(EXIT_FAILED) from None
    typer.echo(f"advice stored in {uri} as run {run_id} (the dashboard's Advisor page shows it)")


def write_csv(frame: pd.DataFrame, out: Path) -> None:
    """The rows through the one CSV writer, atomically (a reader never sees half a file)."""
    try:
        write_whole(out, to_csv_bytes(frame))
    except OSError as exc:
        typer.echo(f"ruscope: {out}: cannot write: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"{out}: {len(frame)} row(s)")

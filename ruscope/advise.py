"""The `ruscope advise` command: the `[advisor]` section of the config handed to the advisor's pipeline
(`advisor.pipeline`), the ranking and verdicts printed, and its rows written as CSV (the one CSV writer,
`analysis.report.to_csv_bytes`) when `--out` is given. Exit 2 names what was wrong in the config or the
sample; nothing is written then.

The config is read once (`collectors.config.load_config`, which validates `[advisor]` with the rest);
the section's values become the advisor's plain inputs here (`advise_on`), the one place that knows both.

The advice is also stored (`advisor.tables`: the `advice_*` tables of the config's `[store]`, or
`--store`) under a new run id, for the dashboard's Advisor page; `--no-store` skips that. A store that
cannot be written is exit 1 after the advice was printed and the CSV written (nothing measured is lost).

`--from-account` reads the sample from the live `[advisor] container` of the config's account (the first,
or `--account NAME`; its first database) through the SDK (`collectors.sample`): at most `--max-documents`
in proportion to the documents across its physical partitions and over their `_ts` span, stopping
before `--budget-ru`; the sample's measured bias is printed and kept with the advice (`Advice.sample`:
the ranking's text, the stored `advice_designs.sample`, the Advisor page). The JSONL lands beside the config
(`advisor-sample.jsonl`, or `--sample-out`), so the next run can take it with `--sample`. An account that
cannot be read is exit 1 (the command ran; the account failed), as a failed collector run is. The demo
and the tests' stores do the same in one call (`advise_live`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import pandas as pd
import typer

from advisor.measure import Workload, WorkloadQuery
from advisor.pipeline import Advice, AdviseError, advice_text, advise_documents, read_sample
from advisor.tables import advice_frames
from analysis.report import to_csv_bytes
from collectors.config import Account, AdvisorSettings, Config, ConfigError, load_config
from collectors.run import new_run_id
from collectors.sample import SampleError, SampleReport, sample_container
from ruscope.options import echo
from store import StoreLocation, store_location, write_frame
from wholefile import write_whole

SAMPLE_NAME = "advisor-sample.jsonl"
EXIT_FAILED = 1
PART = "advice"  # the store part the advice's rows are committed under
FILE_SAMPLE = "{source}: a file, so its bias against the container is not measured (--from-account measures it)"


# -- the config's [advisor] as the advisor's inputs ------------------------------------------------------


def load_advisor_config(path: Path) -> tuple[Config, AdvisorSettings]:
    """The config and its `[advisor]` section; AdviseError when either is unusable."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        raise AdviseError(str(exc)) from None
    settings = config.advisor
    if settings is None:
        raise AdviseError(f"{path}: no [advisor] section (container and [[advisor.candidates]] to compare)")
    if not settings.candidates and not settings.propose:
        raise AdviseError(f"{path}: advisor: nothing to compare: add [[advisor.candidates]] or set propose above 0")
    return config, settings


def workload_of(config: Config, settings: AdvisorSettings) -> Workload:
    """The config's `[[queries]]` on the section's container, weighted by their `rate_per_s` (1 when
    unset), with the section's measuring settings."""
    queries = tuple(
        WorkloadQuery(q.name, q.sql, dict(q.parameters), q.rate_per_s if q.rate_per_s else 1.0)
        for q in config.queries
        if q.container == settings.container
    )
    return Workload(
        queries=queries,
        throughput=settings.throughput,
        growth_gb_per_day=settings.growth_gb_per_day,
        scale=settings.scale,
        max_load_copies=settings.max_load_copies,
        time_property=settings.time_property,
        recent_days=settings.recent_days,
        entity_property=settings.entity_property,
        entity_rates=settings.entity_rates,
        horizon_days=settings.horizon_days,
    )


def advise_on(config: Config, settings: AdvisorSettings, docs: list[dict[str, Any]]) -> Advice:
    """The advisor's pipeline on `docs` with the section's values."""
    return advise_documents(
        docs,
        workload_of(config, settings),
        container=settings.container,
        candidates=[(c.key, c.name) for c in settings.candidates],
        synthetic_property=settings.synthetic_property,
        proposals=settings.propose,
        new_container=settings.new_container,
    )


def advise_from_config(config_path: Path, sample: Path | None = None) -> Advice:
    """Measure every `[[advisor.candidates]]` and the proposed designs on the sample (`--sample`, else
    `advisor.sample`, relative to the config's folder) and the workload; raises `AdviseError` with one
    located message."""
    config, settings = load_advisor_config(config_path)
    return advise_file(config, settings, config_path, sample)


def advise_file(config: Config, settings: AdvisorSettings, config_path: Path, sample: Path | None) -> Advice:
    """The advice on the JSONL sample `advise_from_config` describes."""
    source = sample or (config_path.parent / settings.sample if settings.sample else None)
    if source is None:
        raise AdviseError(f"{config_path}: no sample: pass --sample docs.jsonl or set advisor.sample")
    docs = read_sample(source)
    if not docs:
        raise AdviseError(f"{source}: the document sample is empty: nothing to measure a design on")
    try:
        return replace(advise_on(config, settings, docs), sample=(FILE_SAMPLE.format(source=source),))
    except AdviseError as exc:
        raise AdviseError(f"{config_path}: {exc}") from None


# -- the live container and the store ------------------------------------------------------------------


def sample_account(
    target: Account,
    settings: AdvisorSettings,
    out_path: Path,
    *,
    max_documents: int,
    budget_ru: float,
    credential: Any = None,
) -> SampleReport:
    """Sample the section's container of `target` (its first database) into `out_path`; SampleError when
    the account cannot be read. `credential`: a key or token credential (else the account's, from the
    environment)."""
    return sample_container(
        target,
        target.databases[0],
        settings.container,
        max_documents=max_documents,
        budget_ru=budget_ru,
        out_path=out_path,
        credential=credential,
    )


def store_advice(store: StoreLocation, advice: Advice, target: Account, *, time: datetime) -> str:
    """Write the advice's rows (scoped to `target` and its first database) under one new run id; that id."""
    run_id = new_run_id(time.timestamp())
    frames = advice_frames(advice, account=target.name, database=target.databases[0], time=time)
    for table, frame in frames.items():
        write_frame(store, table, frame, run_id=run_id, part=PART)
    return run_id


def advise_live(
    config: Config,
    settings: AdvisorSettings,
    *,
    store: StoreLocation,
    sample_path: Path,
    now: datetime,
    account: str | None = None,
    max_documents: int = 2_000,
    budget_ru: float = 5_000,
    credential: Any = None,
) -> tuple[Advice, str]:
    """What `--from-account` does, as one call for a parsed config: sample the section's container of the
    account (the first, or `account`) into `sample_path`, advise on it and store the advice at `now`; the
    advice and its run id. Raises SampleError (the account) and AdviseError (the advice)."""
    target = config.account(account)
    report = sample_account(
        target, settings, sample_path, max_documents=max_documents, budget_ru=budget_ru, credential=credential
    )
    advice = replace(advise_on(config, settings, read_sample(report.path)), sample=tuple(report.bias_lines()))
    return advice, store_advice(store, advice, target, time=now)


# -- the command ---------------------------------------------------------------------------------------


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
        _fail("--from-account reads the sample from the account; drop --sample (or use it alone)")
    try:
        cfg, settings = load_advisor_config(config)
        measured: tuple[str, ...] | None = None  # the live sample's bias (a file's is not measured)
        if from_account:
            target = _account(cfg, account)
            out_path = sample_out or config.parent / SAMPLE_NAME
            report = sample_account(target, settings, out_path, max_documents=max_documents, budget_ru=budget_ru)
            echo(report.line())
            sample, measured = report.path, tuple(report.bias_lines())
        advice = advise_file(cfg, settings, config, sample)
        if measured is not None:
            advice = replace(advice, sample=measured)
    except AdviseError as exc:
        _fail(str(exc))
    except SampleError as exc:
        _fail(f"cannot sample the account: {exc}", EXIT_FAILED)
    echo(advice_text(advice))
    if out is not None:
        write_csv(advice.frame, out)
    if not no_store:
        keep_advice(store or cfg.store.uri, advice, cfg, account)


def _fail(message: str, code: int = 2) -> NoReturn:
    echo(f"ruscope: {message}", err=True)
    raise typer.Exit(code)


def _account(config: Config, name: str | None) -> Account:
    """The account `--account` names (else the first): the one sampled and the one the advice is stored for."""
    try:
        return config.account(name)
    except LookupError as exc:
        raise AdviseError(str(exc)) from None


def keep_advice(uri: str, advice: Advice, config: Config, account: str | None) -> None:
    """Store the advice under a new run id (module docstring); a store that fails is one line, exit 1."""
    try:
        target = _account(config, account)
    except AdviseError as exc:
        _fail(str(exc))
    try:
        run_id = store_advice(store_location(uri), advice, target, time=datetime.now(UTC))
    except Exception as exc:  # the store unreachable or refusing: one line; the advice was printed already
        _fail(f"{uri}: the advice was not stored: {' '.join(str(exc).split())[:300]}", EXIT_FAILED)
    echo(f"advice stored in {uri} as run {run_id} (the dashboard's Advisor page shows it)")


def write_csv(frame: pd.DataFrame, out: Path) -> None:
    """The rows through the one CSV writer, atomically (a reader never sees half a file)."""
    try:
        write_whole(out, to_csv_bytes(frame))
    except OSError as exc:
        _fail(f"{out}: cannot write: {exc.strerror or exc}")
    echo(f"{out}: {len(frame)} row(s)")

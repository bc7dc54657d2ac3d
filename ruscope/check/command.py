"""`ruscope check`: RU budgets and regressions of an application's queries, as a CI gate.

    ruscope check --config ruscope.toml [--target emulator|account] [--sample docs.jsonl]
                  [--baseline ruscope-baseline.json] [--update-baseline] [--strict]
                  [--junit check.xml] [--summary check.md] [--report check.json] [--store DIR]
    ruscope check --from-emulator http://127.0.0.1:8081/ [--since 2026-12-03T10:00:00Z] [--tag RUN]
                  [--config ruscope.toml] [--baseline ...] [--junit ...] [--summary ...]

Runs the checked queries once (`ruscope.check.run`) against the embedded emulator loaded from the
config's `[[check.containers]]` (the default when it declares any) or the config's account, and judges each
(`analysis.gate`): its budget, the baseline committed beside the config, the advisor's lint. Exit 0 when all
hold, 1 when a budget or the baseline fails (or, with --strict, a lint warning), 2 for a bad config, sample
or baseline. The check's own requests go to a temporary store unless --store keeps them (the dashboard's
Query costs page then shows the run).

With `--from-emulator` nothing is replayed: the queries a test suite of any SDK sent to a running ruscope
emulator are read from its request log (`ruscope.check.logged`) and judged the same way; the config is then
optional (it names queries by their SQL and gives their budgets).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ruscope.options import CONFIG_HELP, DEFAULT_CONFIG, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, echo, error_line, fail, load

TARGET_HELP = "emulator: the embedded one, loaded from [[check.containers]]; account: the config's. Default: emulator when [[check.containers]] are declared."


def check(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    target: Annotated[str | None, typer.Option(help=TARGET_HELP)] = None,
    sample: Annotated[
        Path | None, typer.Option(help="JSON Lines loaded into the first [[check.containers]] (overrides its sample).")
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option(help="The baseline file (default: [check] baseline, beside the config).")
    ] = None,
    update_baseline: Annotated[
        bool, typer.Option("--update-baseline", help="Write what this run measured as the new baseline.")
    ] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Lint warnings fail the check too.")] = False,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here.")] = None,
    summary: Annotated[
        Path | None, typer.Option(help="Write the Markdown summary (a pull-request comment) here.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="Write the JSON report here (the dashboard's Query costs page shows it).")
    ] = None,
    store: Annotated[Path | None, typer.Option(help="Keep the check's requests and executions in this store.")] = None,
    from_emulator: Annotated[
        str | None,
        typer.Option(help="Judge the queries a test run sent to this running ruscope emulator (its request log)."),
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="With --from-emulator: only requests from this time (ISO 8601 or epoch s).")
    ] = None,
    tag: Annotated[
        str | None, typer.Option(help="With --from-emulator: only requests sent with this x-ruscope-tag header.")
    ] = None,
    emulator_key: Annotated[
        str | None,
        typer.Option(help="With --from-emulator: its key (env RUSCOPE_EMULATOR_KEY; default: the well-known key)."),
    ] = None,
) -> None:
    """Run the configured queries and fail when one costs more than its budget or baseline allows."""
    from analysis.gate.baseline import BaselineError
    from ruscope.check.target import CheckError
    from ruscope.check.verdict import run_check

    if from_emulator is not None:
        _check_log(
            config, from_emulator, since, tag, emulator_key, baseline, update_baseline, strict, junit, summary, report
        )
    elif since is not None or tag is not None:
        fail("--since and --tag select requests of --from-emulator's log; give it")
    cfg = load(config)
    if target not in (None, "emulator", "account"):
        fail(f"--target: 'emulator' or 'account', not {target!r}")
    try:
        with tempfile.TemporaryDirectory(prefix="ruscope-check-") as scratch:
            outcome = run_check(
                cfg,
                config_dir=config.parent,
                target=target,
                sample=sample,
                baseline=baseline,
                update_baseline=update_baseline,
                strict=strict or cfg.check.strict,
                junit=junit,
                summary=summary,
                report=report,
                store_dir=store or Path(scratch) / "store",
                out=echo,
                err=error_line,
            )
    except (CheckError, BaselineError) as exc:
        fail(str(exc), EXIT_USAGE)
    raise typer.Exit(EXIT_PARTIAL if outcome.failed else EXIT_OK)


def _check_log(
    config: Path,
    url: str,
    since: str | None,
    tag: str | None,
    key: str | None,
    baseline: Path | None,
    update_baseline: bool,
    strict: bool,
    junit: Path | None,
    summary: Path | None,
    report: Path | None,
) -> NoReturn:
    """`--from-emulator`: judge a test run's queries from the emulator's request log; exits."""
    import os

    from analysis.gate.baseline import BaselineError
    from ruscope.check.logged import LogStretch, measure_log, named_queries, parse_since
    from ruscope.check.run import budgets_of
    from ruscope.check.target import CheckError
    from ruscope.check.verdict import Files, baseline_path, conclude, read_baseline

    cfg = load(config) if config != DEFAULT_CONFIG or config.exists() else None  # a config is optional here
    try:
        moment = parse_since(since) if since is not None else None
        stretch = LogStretch(url, key or os.environ.get("RUSCOPE_EMULATOR_KEY"), moment, tag)
        path = baseline_path(cfg, config.parent, baseline) if cfg is not None else baseline
        accepted = read_baseline(path)
        measurement = measure_log(cfg, stretch, err=error_line)
        outcome = conclude(
            measurement,
            budgets_of(named_queries(cfg)),
            accepted,
            cfg,
            f"the request log of {url}",
            Files(path, update_baseline, junit, summary, report),
            strict=strict or (cfg is not None and cfg.check.strict),
            out=echo,
        )
    except (CheckError, BaselineError) as exc:
        fail(str(exc), EXIT_USAGE)
    raise typer.Exit(EXIT_PARTIAL if outcome.failed else EXIT_OK)

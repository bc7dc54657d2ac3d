"""`ruscope check`: RU budgets and regressions of an application's queries, as a CI gate.

    ruscope check --config ruscope.toml [--target emulator|account] [--sample docs.jsonl]
                  [--baseline ruscope-baseline.json] [--update-baseline] [--strict]
                  [--junit check.xml] [--summary check.md] [--store DIR]

Runs the checked queries once (`ruscope.check.run`) against the embedded emulator loaded from the
config's `[[check.containers]]` (the default when it declares any) or the config's account, and judges each
(`analysis.gate`): its budget, the baseline committed beside the config, the advisor's lint. Exit 0 when all
hold, 1 when a budget or the baseline fails (or, with --strict, a lint warning), 2 for a bad config, sample
or baseline. The check's own requests go to a temporary store unless --store keeps them (the dashboard's
Query costs page then shows the run).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

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
    store: Annotated[Path | None, typer.Option(help="Keep the check's requests and executions in this store.")] = None,
) -> None:
    """Run the configured queries and fail when one costs more than its budget or baseline allows."""
    from analysis.gate.baseline import BaselineError
    from ruscope.check.target import CheckError
    from ruscope.check.verdict import run_check

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
                store_dir=store or Path(scratch) / "store",
                out=echo,
                err=error_line,
            )
    except (CheckError, BaselineError) as exc:
        fail(str(exc), EXIT_USAGE)
    raise typer.Exit(EXIT_PARTIAL if outcome.failed else EXIT_OK)

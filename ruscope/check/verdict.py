"""A check from start to verdict: the target, the measurement, the baseline, the judgement and the files CI
reads. The judgement itself is `analysis.gate`'s; this module only reads and writes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from analysis.gate import baseline as baselines
from analysis.gate.outputs import json_report, junit_xml, markdown_summary, summary_lines
from analysis.gate.verdicts import Budget, Verdict, judge
from collectors.config import Config
from collectors.config.check import DEFAULT_TOLERANCE
from ruscope.check.run import Measurement, budgets_of, checked_queries, measure
from ruscope.check.target import ACCOUNT, EMULATOR, CheckError, Target, start_embedded
from wholefile import write_whole


@dataclass(frozen=True)
class Outcome:
    verdicts: list[Verdict]
    run_id: str

    @property
    def failed(self) -> int:
        return sum(v.status == "fail" for v in self.verdicts)


def open_target(config: Config, config_dir: Path, kind: str | None, sample: Path | None) -> Target:
    """The embedded emulator (default when the config declares its containers) or the config's account."""
    chosen = kind or (EMULATOR if config.check.containers else ACCOUNT)
    if chosen == EMULATOR:
        return start_embedded(config, config_dir, sample=sample)
    if sample is not None:
        raise CheckError("--sample loads the embedded emulator; it cannot be used with --target account")
    from collectors.credentials import account_credential

    account = config.account()
    return Target(ACCOUNT, account.endpoint, account_credential(account))


def baseline_path(config: Config, config_dir: Path, given: Path | None) -> Path | None:
    if given is not None:
        return given
    return None if config.check.baseline is None else config_dir / config.check.baseline


def read_baseline(path: Path | None) -> dict[str, baselines.Accepted]:
    """The committed baseline; none yet (a first run) is an empty one."""
    if path is None or not path.exists():
        return {}
    try:
        return baselines.decode(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckError(f"{path}: cannot read the baseline ({exc})") from None
    except baselines.BaselineError as exc:
        raise CheckError(f"{path}: {exc}") from None


def run_check(
    config: Config,
    *,
    config_dir: Path,
    target: str | None,
    sample: Path | None,
    baseline: Path | None,
    update_baseline: bool,
    strict: bool,
    junit: Path | None,
    summary: Path | None,
    report: Path | None,
    store_dir: Path,
    out: Callable[[str], None],
    err: Callable[[str], None],
) -> Outcome:
    """Replay the checked queries against the target and judge them."""
    queries = checked_queries(config)  # a config with nothing to check fails before anything starts
    path = baseline_path(config, config_dir, baseline)
    accepted = read_baseline(path)
    where = open_target(config, config_dir, target, sample)
    try:
        measurement = measure(config, where, store_dir, out=lambda line: None, err=err)
    finally:
        where.close()
    files = Files(path, update_baseline, junit, summary, report)
    return conclude(measurement, budgets_of(queries), accepted, config, where.label, files, strict=strict, out=out)


@dataclass(frozen=True)
class Files:
    """What a check writes: the baseline (when asked to update it), JUnit XML, the Markdown summary."""

    baseline: Path | None
    update_baseline: bool
    junit: Path | None
    summary: Path | None
    report: Path | None = None  # the JSON report the dashboard reads


def conclude(
    measurement: Measurement,
    budgets: Mapping[str, Budget],
    accepted: Mapping[str, baselines.Accepted],
    config: Config | None,
    label: str,
    files: Files,
    *,
    strict: bool,
    out: Callable[[str], None],
) -> Outcome:
    """Judge what was measured (`analysis.gate`), print it and write the files CI reads."""
    verdicts = judge(
        measurement.measured,
        budgets,
        accepted,
        tolerance=config.check.tolerance if config is not None else DEFAULT_TOLERANCE,
        lint=measurement.lint,
        strict=strict,
    )
    for line in summary_lines(verdicts):
        out(line)
    if files.junit is not None:
        _write(files.junit, junit_xml(verdicts))
    if files.summary is not None:
        _write(files.summary, markdown_summary(verdicts, target=label))
    if files.report is not None:
        _write(files.report, json_report(verdicts, target=label))
    if files.update_baseline:
        if files.baseline is None:
            raise CheckError("--update-baseline: name the file with --baseline or [check] baseline")
        _write(files.baseline, baselines.encode(baselines.baseline_of(measurement.measured)))
        out(f"baseline written: {files.baseline} ({len(measurement.measured)} queries)")
    outcome = Outcome(verdicts, measurement.run_id)
    out(f"check: {len(verdicts) - outcome.failed} of {len(verdicts)} queries passed on {label}")
    return outcome


def _write(path: Path, text: str) -> None:
    try:
        write_whole(path, text.encode("utf-8"))
    except OSError as exc:
        raise CheckError(f"{path}: cannot write it ({exc})") from None

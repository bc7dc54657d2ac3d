"""Cached derived frames of the Query costs page: computed once per view (and the store's versions:
`tables.cached_view`), not on every rerun.

The pure numbers come from `analysis.queries.costs` and `analysis.queries.runs`; this module only wires them to
the cached loaders and caches the result (`st.cache_data` sits on these wrappers, never on the pure
functions). A widget change on the page (a run picked, a query's SQL shown) then costs a cache hit of a few
small frames instead of reading and grouping 100,000 executions again.

A run's own rows are read from its start on (`since` = the run's start), so the store opens only the date
partitions from that day on rather than every day of the time range.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from analysis.gate.reported import CheckReport, ReportError, decode_report
from analysis.queries import costs as qc
from analysis.queries import logged as ql
from analysis.queries import runs as qr
from dashboard.environment import CHECK_REPORT_ENV
from dashboard.loaders import tables
from dashboard.state import FrameState

RUN_COLUMNS = ["run_id", "start"]


@dataclass(frozen=True)
class QueryCosts:
    """Everything the page shows before a run is picked, for one view (store, time range, scope)."""

    summary: pd.DataFrame  # analysis.queries.costs.SUMMARY_COLUMNS + routing_multiplier
    series: pd.DataFrame  # analysis.queries.runs.OVER_TIME_COLUMNS
    failed: pd.DataFrame  # analysis.queries.costs.ERROR_COLUMNS
    runs: pd.DataFrame  # RUN_COLUMNS, the most recently started first
    warnings: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return self.summary.empty


@dataclass(frozen=True)
class RunDetail:
    """One run: where its RU went per query and partition, the routing multipliers, the index use."""

    breakdown: pd.DataFrame  # analysis.queries.costs.BREAKDOWN_COLUMNS
    multipliers: pd.DataFrame  # analysis.queries.runs.MULTIPLIER_COLUMNS
    index: pd.DataFrame  # analysis.queries.runs.INDEX_COLUMNS
    warnings: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class LoggedQueries:
    """The workload's queries from the diagnostic logs in the view, and what ruscope's own requests cost."""

    workload: pd.DataFrame  # analysis.queries.logged.WORKLOAD_COLUMNS, the costliest first
    own: pd.DataFrame  # analysis.queries.logged.OWN_COLUMNS
    warnings: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return self.workload.empty and self.own.empty


def load_logged_queries(view: FrameState, top: int = 50) -> LoggedQueries:
    """The `log_query_ru` rows of the view, ranked per query text (the workload's) and summed (ruscope's own);
    cached per view and the store's versions (`tables.cached_view`)."""
    return _load_logged_queries(tables.cached_view(view), top)


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Reading the logged queries...", max_entries=tables.PAGE_ENTRIES)
def _load_logged_queries(view: FrameState, top: int) -> LoggedQueries:
    loaded = tables.load_view(view, "log_query_ru", columns=ql.LOGGED_COLUMNS)
    return LoggedQueries(ql.workload_queries(loaded.frame, top), ql.own_traffic(loaded.frame), loaded.warnings)


def load_query_costs(view: FrameState) -> QueryCosts:
    """The summary (with each query's routing multiplier in its latest run), the over-time series, the
    failed executions and the runs of the view; the logical executions are computed once for all of them.
    Cached per view and the store's versions (`tables.cached_view`)."""
    return _load_query_costs(tables.cached_view(view))


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Computing query costs...", max_entries=tables.PAGE_ENTRIES)
def _load_query_costs(view: FrameState) -> QueryCosts:
    loaded = tables.load_view(view, "executions", columns=qc.EXECUTION_COLUMNS)
    executions = loaded.frame
    logical = qc.logical_executions(executions)
    starts = qc.run_starts(executions)
    summary = qc.summarize_logical(logical, starts, qc.latest_sql(executions))
    runs = starts.rename("start").reset_index().sort_values(["start", "run_id"], ascending=False, ignore_index=True)
    warnings = list(loaded.warnings)
    multipliers = []
    for run_id in summary["latest_run"].dropna().unique():
        detail = load_run_detail(view, str(run_id), starts[run_id])  # cached: the page's run pickers reuse it
        multipliers.append(detail.multipliers.assign(run_id=run_id))
        warnings.extend(detail.warnings)
    summary = qr.with_multipliers(summary, pd.concat(multipliers) if multipliers else pd.DataFrame())
    return QueryCosts(
        summary=summary,
        series=qr.ru_over_time(logical, starts),
        failed=qc.failed_executions(executions),
        runs=runs[RUN_COLUMNS],
        warnings=tuple(dict.fromkeys(warnings)),
    )


def load_run_detail(view: FrameState, run_id: str, start: dt.datetime) -> RunDetail:
    """One run's breakdown, multipliers and index use; `start` is the run's start (from `QueryCosts.runs`).
    Cached per view and the store's versions (`tables.cached_view`)."""
    return _load_run_detail(tables.cached_view(view), run_id, start)


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Reading the run...", max_entries=tables.PAGE_ENTRIES)
def _load_run_detail(view: FrameState, run_id: str, start: dt.datetime) -> RunDetail:
    return _run_detail(view, run_id, start)


def _run_detail(view: FrameState, run_id: str, start: dt.datetime, executions: pd.DataFrame | None = None) -> RunDetail:
    """The run's requests (and its executions, unless given) read from its start on, then the pure numbers."""
    mine = _from(view, start)
    requests = tables.load_view(mine, "requests", columns=qc.REQUEST_COLUMNS, run_ids=(run_id,))
    warnings = requests.warnings
    if executions is None:
        loaded = tables.load_view(mine, "executions", columns=qc.EXECUTION_COLUMNS, run_ids=(run_id,))
        executions, warnings = loaded.frame, (*warnings, *loaded.warnings)
    run_executions = executions[executions["run_id"].eq(run_id).fillna(False).astype(bool)]
    breakdown = qc.pkrange_breakdown(requests.frame, run_id, executions=run_executions)
    return RunDetail(
        breakdown=breakdown,
        multipliers=qr.routing_multiplier(breakdown),
        index=qr.index_use(requests.frame),
        warnings=warnings,
    )


def _from(view: FrameState, start: dt.datetime) -> FrameState:
    """The view narrowed to rows at or after `start` (a run's rows all are): fewer date partitions read."""
    return dataclasses.replace(view, window=view.window.from_(pd.Timestamp(start).to_pydatetime()))


@dataclass(frozen=True)
class CheckRun:
    """The `ruscope check` run the dashboard was started with (--check-report), or why it cannot be shown."""

    path: str
    report: CheckReport | None = None
    problem: str = ""


def load_check_run() -> CheckRun | None:
    """The check report named by `--check-report` (`dashboard.environment.CHECK_REPORT_ENV`), None without
    one; read again when the file changes (CI overwrites it on every run)."""
    path = os.environ.get(CHECK_REPORT_ENV)
    if not path:
        return None
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError as exc:
        return CheckRun(path, problem=f"cannot read it ({exc.strerror or exc})")
    return _read_check_run(path, stamp)


@st.cache_data(show_spinner=False, max_entries=4)
def _read_check_run(path: str, stamp: int) -> CheckRun:
    try:
        with open(path, encoding="utf-8") as handle:
            return CheckRun(path, decode_report(handle.read()))
    except (OSError, UnicodeDecodeError) as exc:
        return CheckRun(path, problem=f"cannot read it ({exc})")
    except ReportError as exc:
        return CheckRun(path, problem=str(exc))

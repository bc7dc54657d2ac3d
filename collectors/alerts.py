"""Alerts after a collect: read what the config's `[alerts]` rules need, evaluate them, store and print them.

`ruscope collect` calls `after_collect` after each pass; its exit code is DESIGN.md's 3 ("ran, and alerts
fired") when any fired, else 0 (1 when the store could not be read or written: nothing was evaluated). The
rules themselves are pure functions in `analysis.alerts`; this module is their I/O edge:

- reads only the columns each enabled rule needs, and only the days it needs: the metrics, the diagnostic
  logs' 429 counts and the replay's requests of the last `window_minutes`, storage snapshots and executions of the last `lookback_days`;
- writes one `alerts` row per (rule, subject) that fired, plus one `evaluated` row per account covered (so a
  clean evaluation closes the alerts of the one before), all with the evaluation's run id and time;
- prints one line per alert on `out` (`alert: <message>`, after `[account]` when the config has several).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import UTC, datetime, timedelta

import pandas as pd

from analysis import alerts as rules
from collectors.config import Config
from collectors.config.alerts import AlertSettings
from collectors.run import new_run_id
from cosmoscore.limits import Limits
from store import StoreLayoutError, StoreLocation, read_table, write_frame

EXIT_ALERTS = 3  # DESIGN.md: "3 ran, and alerts fired"
EXIT_PARTIAL = 1
PART = "alerts"
Line = Callable[[str], None]


def after_collect(
    cfg: Config,
    store: StoreLocation,
    *,
    now: datetime,
    out: Line,
    err: Line,
    accounts: Collection[str] | None = None,
    run_id: str | None = None,
    limits: Limits | None = None,
) -> int:
    """Evaluate `cfg.alerts` on the store at `now` for `accounts` (None: every account of the config), store
    and print what fired; the exit code (module docstring). No `[alerts]`, or no rule on: nothing, 0."""
    settings = cfg.alerts
    if settings is None or not settings.any_rule:
        return 0
    names = list(accounts) if accounts is not None else [account.name for account in cfg.all_accounts()]
    now = now if now.tzinfo is not None else now.replace(tzinfo=UTC)  # a naive time is UTC, as in the store
    run_id = run_id or new_run_id(now.timestamp())
    try:
        fired = evaluate(store, settings, now=now, accounts=names, limits=limits or Limits())
        rows = pd.concat([fired, rules.evaluated_rows(names, fired)], ignore_index=True)
        write_frame(store, "alerts", rows.assign(time=now), run_id=run_id, part=PART)
    except StoreLayoutError as exc:
        err(f"alerts: not evaluated: {exc}")
        return EXIT_PARTIAL
    except Exception as exc:  # the store (unreachable, a write refused) or a bug: one line, the collect stands
        err(f"alerts: not evaluated: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        return EXIT_PARTIAL
    labelled = len(cfg.all_accounts()) > 1
    for row in fired.itertuples():
        out(f"[{row.account}] alert: {row.message}" if labelled else f"alert: {row.message}")
    return EXIT_ALERTS if not fired.empty else 0


def evaluate(
    store: StoreLocation, settings: AlertSettings, *, now: datetime, accounts: Collection[str], limits: Limits
) -> pd.DataFrame:
    """Every enabled rule on the store's rows of `accounts` (`analysis.alerts.ALERT_COLUMNS`)."""
    rows = _Rows(store, now, list(accounts), settings)
    found = [frame for frame in (check(rows, settings, limits) for check in _CHECKS) if not frame.empty]
    return pd.concat(found, ignore_index=True) if found else rules.no_alerts()


class _Rows:
    """The store's rows of the accounts evaluated up to `now`, each table read once: the window's (metrics,
    requests) or the lookback's (snapshots, executions), only the columns the rules read."""

    def __init__(self, store: StoreLocation, now: datetime, accounts: list[str], settings: AlertSettings) -> None:
        self.store, self.now, self.accounts = store, now, accounts
        self.window = now - timedelta(minutes=settings.window_minutes)
        self.lookback = now - timedelta(days=settings.lookback_days)
        self._read: dict[str, pd.DataFrame] = {}

    def recent(self, table: str, columns: list[str]) -> pd.DataFrame:
        return self._table(table, columns, self.window)

    def since_lookback(self, table: str, columns: list[str]) -> pd.DataFrame:
        return self._table(table, columns, self.lookback)

    def _table(self, table: str, columns: list[str], since: datetime) -> pd.DataFrame:
        if table not in self._read:
            frame = read_table(self.store, table, since=since, columns=columns)
            keep = frame["account"].isin(self.accounts).fillna(False) & frame["time"].le(pd.Timestamp(self.now))
            self._read[table] = frame[keep.fillna(False).astype(bool)].reset_index(drop=True)
        return self._read[table]


def _hot(rows: _Rows, settings: AlertSettings, limits: Limits) -> pd.DataFrame:
    if settings.hot_partition_percent is None:
        return rules.no_alerts()
    metrics = rows.recent("metrics", rules.METRIC_COLUMNS)
    requests = rows.recent("requests", rules.REQUEST_COLUMNS)  # the replay's minutes are left out
    partitions = rows.since_lookback("partitions", rules.PARTITION_COLUMNS)  # the layout behind each budget
    return rules.hot_partition_alerts(
        metrics, requests, partitions, percent=settings.hot_partition_percent, minutes=settings.hot_partition_minutes
    )


def _throttled(rows: _Rows, settings: AlertSettings, limits: Limits) -> pd.DataFrame:
    if settings.throttle_rate_percent is None:
        return rules.no_alerts()
    metrics = rows.recent("metrics", rules.METRIC_COLUMNS)
    requests = rows.recent("requests", rules.REQUEST_COLUMNS)
    logged = rows.recent("log_throttles", rules.LOG_THROTTLE_COLUMNS)
    return rules.throttle_rate_alerts(
        metrics, requests, logged, percent=settings.throttle_rate_percent, window_minutes=settings.window_minutes
    )


def _key_storage(rows: _Rows, settings: AlertSettings, limits: Limits) -> pd.DataFrame:
    if settings.logical_key_percent is None:
        return rules.no_alerts()
    keys = rows.since_lookback("logical_keys", rules.KEY_COLUMNS)
    logged = rows.since_lookback("log_key_sizes", rules.KEY_COLUMNS)
    limit = limits.logical_partition_max_bytes
    return rules.logical_key_alerts(keys, logged, percent=settings.logical_key_percent, limit_bytes=limit)


def _partition_storage(rows: _Rows, settings: AlertSettings, limits: Limits) -> pd.DataFrame:
    if settings.partition_storage_percent is None:
        return rules.no_alerts()
    partitions = rows.since_lookback("partitions", rules.PARTITION_COLUMNS)
    limit = limits.physical_partition_max_bytes
    return rules.partition_storage_alerts(partitions, percent=settings.partition_storage_percent, limit_bytes=limit)


def _query_ru(rows: _Rows, settings: AlertSettings, limits: Limits) -> pd.DataFrame:
    if settings.query_ru_increase_percent is None:
        return rules.no_alerts()
    executions = rows.since_lookback("executions", rules.EXECUTION_COLUMNS)
    return rules.query_ru_alerts(
        executions, percent=settings.query_ru_increase_percent, baseline_runs=settings.baseline_runs
    )


_CHECKS = (_hot, _throttled, _key_storage, _partition_storage, _query_ru)  # in analysis.alerts.RULES' order

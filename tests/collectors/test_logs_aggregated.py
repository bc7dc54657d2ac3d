"""`[monitor] logs_tables = "aggregated-5m"` / `"aggregated-15m"` (azure-monitor.md §6.6, §7b R60-R64): the real
`LogsQueryClient` over HTTPS against the Log Analytics stand-in. `log_throttles` read from the aggregated table
holds the same requests and 429s as the default mode's, for the same traffic; the per-key and per-query
queries are not sent, and one line says so; a bad value or bin is a located config error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from collectors.config import ConfigError, parse_config
from store import read_table, store_location
from tests.collectors.test_logs_standin import (
    StandIn,
    _records,
    collect,
    config,
    stand_in,  # noqa: F401 (a fixture)
    token,  # noqa: F401 (an autouse fixture: the stand-in's bearer token)
)

THROTTLE_COLUMNS = ["container", "partition_id", "operation_name", "time", "bin_minutes", "requests", "throttled"]


def _throttles(store: Path) -> pd.DataFrame:
    frame = read_table(store_location(store), "log_throttles")[THROTTLE_COLUMNS]
    return frame.sort_values(THROTTLE_COLUMNS[:4]).reset_index(drop=True)


def _sent(stand_in: StandIn) -> list[str]:  # noqa: F811
    """Record the KQL of every query the stand-in answers from now on (the server's own method, wrapped)."""
    sent: list[str] = []
    logs = stand_in.app.logs
    answer = logs.query

    def query(workspace: str, resource_id: str, payload: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(payload.get("query")) if isinstance(payload, dict) else "")
        return answer(workspace, resource_id, payload, *args, **kwargs)

    logs.query = query  # type: ignore[method-assign]
    return sent


def test_aggregated_modes_store_the_default_modes_throttles_and_send_nothing_else(
    stand_in: StandIn,  # noqa: F811
    tmp_path: Path,
) -> None:
    stand_in.clock.advance(15 * 60)  # the workload's 5- and 15-minute intervals have ended: their rows are written
    code, _, err = collect(stand_in, tmp_path / "detailed", config(stand_in, logs_bin_minutes=15))
    assert (code, err) == (0, [])
    detailed = _throttles(tmp_path / "detailed")
    records = _records(stand_in.engine)
    assert int(detailed["requests"].sum()) == len(records)
    assert int(detailed["throttled"].sum()) == sum(r.status == 429 for r in records) > 0

    sent = _sent(stand_in)
    for tables in ("aggregated-5m", "aggregated-15m"):
        store = tmp_path / tables
        code, out, err = collect(stand_in, store, config(stand_in, logs_bin_minutes=15, logs_tables=tables))
        assert (code, err) == (0, []), err
        pd.testing.assert_frame_equal(_throttles(store), detailed)
        table = f"CDBDataPlaneRequests{tables.removeprefix('aggregated-').upper()}"
        assert sent and all(kql.startswith(f"{table}\n") for kql in sent), sent  # throttles only, there
        sent.clear()
        (line,) = [line for line in out if "not available in this mode" in line]
        for name in ("key_ru", "key_operations", "key_size", "query_stats"):
            assert name in line
        assert table in line and "no partition key and no query text" in line
        assert not any(" logs key_" in line or " logs query_stats" in line for line in out)
        for absent in ("log_key_ru", "log_key_operation_ru", "log_key_sizes", "log_query_stats"):
            assert read_table(store_location(store), absent).empty
        windows = read_table(store_location(store), "log_windows")
        assert set(windows["query"]) == {"throttles"}


def _parse(**monitor: Any) -> None:
    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": "t"}
    section = {"endpoint": "https://127.0.0.1:2", "workspace_id": "11111111-2222-3333-4444-555555555555", **monitor}
    parse_config({"accounts": [account], "monitor": section}, Path("logs.toml"))


@pytest.mark.parametrize(
    ("monitor", "message"),
    [
        ({"logs_tables": "aggregated-10m"}, "logs.toml: monitor.logs_tables: Input should be 'detailed'"),
        (
            {"logs_tables": "aggregated-15m", "logs_bin_minutes": 5},
            "logs.toml: monitor: logs_bin_minutes = 5 with logs_tables = 'aggregated-15m' (CDBDataPlaneRequests15M): "
            "the bin must be a multiple of 15 minutes",
        ),
        (
            {"logs_tables": "aggregated-5m", "logs_mode": "azure-diagnostics"},
            "logs.toml: monitor: logs_tables = 'aggregated-5m' (CDBDataPlaneRequests5M) needs logs_mode = "
            "'resource-specific'",
        ),
    ],
)
def test_a_bad_value_or_bin_is_a_located_error(monitor: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _parse(**monitor)
    assert message in str(info.value)


def test_the_default_bin_fits_the_5_minute_table() -> None:
    _parse(logs_tables="aggregated-5m")  # logs_bin_minutes defaults to 5
    _parse(logs_tables="aggregated-15m", logs_bin_minutes=60)

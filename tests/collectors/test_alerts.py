"""collectors.alerts end to end: the replay and storage collectors against the emulator fill a store, the
config's [alerts] are evaluated on it, and the `alerts` table, the lines and the exit code say what fired.
Also the [alerts] section's validation: a mistake names its key."""

from __future__ import annotations

import shutil
import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis.alerts import latest_alerts
from collectors.alerts import EXIT_ALERTS, after_collect
from collectors.config import AlertSettings, Config, ConfigError, load_config, parse_config
from collectors.registry import Options, collector, run_collector
from cosmoscore.limits import Limits
from emulator.engine.facade import Context
from store import read_table, store_location, write_frame
from tests.analysis.test_throttling import LOG_ROWS, T0
from tests.collectors.test_config import GOOD, error_of, write
from tests.collectors.test_replay import load_orders, run

QUERIES = [
    {"name": "everything", "container": "orders", "sql": "SELECT * FROM c WHERE c.n >= 0"},
    {
        "name": "one-tenant",
        "container": "orders",
        "sql": "SELECT * FROM c WHERE c.tenantId = @t",
        "parameters": {"@t": "t3"},
        "partition_key": "t3",
    },
]


def config(emu: Any, alerts: dict[str, Any] | None) -> Config:
    data: dict[str, Any] = {"cosmos": {"endpoint": emu.url, "database": "shop"}, "queries": QUERIES}
    if alerts is not None:
        data["alerts"] = alerts
    return parse_config(data, Path("alerts.toml"))


def evaluate(
    cfg: Config, store: Path, *, now: datetime | None = None, **kwargs: Any
) -> tuple[int, list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    now = now or datetime.now(UTC)
    code = after_collect(cfg, store_location(store), now=now, out=out.append, err=err.append, **kwargs)
    return code, out, err


def add_orders(emu: Any, count: int) -> None:
    """More orders, none of them tenant t3's: `everything` reads more, `one-tenant` the same."""
    emu.engine.throttle.enabled = False
    for i in range(count):
        emu.engine.create_item(
            Context(), "shop", "orders", {"id": f"x{i}", "tenantId": f"new{i % 7}", "n": i}, [f"new{i % 7}"]
        )
    emu.engine.throttle.enabled = True


def mean_ru(executions: Any, query: str) -> list[float]:
    """Each run's mean RU of a query, oldest run first."""
    mine = executions[executions["query_name"] == query]
    per_run = mine.groupby("run_id").agg(time=("time", "min"), ru=("total_ru", "mean")).sort_values("time")
    return per_run["ru"].astype(float).tolist()


def test_a_query_costing_more_than_its_baseline_and_full_partitions_fire(emulator: Any, tmp_path: Path) -> None:
    load_orders(emulator, docs=60)
    alerts = {"query_ru_increase_percent": 50, "partition_storage_percent": 1e-6, "throttle_rate_percent": 1}
    cfg = config(emulator, alerts)
    for _ in range(2):
        assert run(emulator, cfg, tmp_path)[0].exit_code == 0
    add_orders(emulator, 240)
    assert run(emulator, cfg, tmp_path)[0].exit_code == 0
    storage = run_collector(
        collector("storage"), cfg, store=store_location(tmp_path), options=Options(credential=emulator.key)
    )
    assert storage.exit_code == 0

    code, out, err = evaluate(cfg, tmp_path)

    assert (code, err) == (EXIT_ALERTS, [])
    executions = read_table(store_location(tmp_path), "executions")
    *before, latest = mean_ru(executions, "everything")
    change = (latest / statistics.median(before) - 1) * 100
    assert change >= 50, "the workload should cost more than 1.5x after the new orders"
    partitions = read_table(store_location(tmp_path), "partitions")
    full = sorted(partitions.loc[partitions["size_kb"] > 0, "pkrange_id"])
    assert full, "the orders should fill some partitions"
    stored = read_table(store_location(tmp_path), "alerts")
    assert stored["run_id"].nunique() == 1 and stored["time"].nunique() == 1
    fired = stored[stored["rule"] != "evaluated"].sort_values(["rule", "subject"])
    assert [tuple(r) for r in fired[["rule", "subject", "database", "container"]].itertuples(index=False)] == [
        *(("partition_storage", pk, "shop", "orders") for pk in full),
        ("query_ru_increase", "everything", "shop", "orders"),
    ]
    query = fired[fired["rule"] == "query_ru_increase"].iloc[0]
    assert query["value"] == pytest.approx(change, abs=1e-3) and query["threshold"] == 50
    assert query["unit"] == "%-change" and query["message"].startswith("query everything on shop/orders took ")
    assert "median of 2 previous run(s); threshold +50%" in query["message"]
    limit_gb = Limits().physical_partition_max_bytes / 1024**3
    assert all(f"of the {limit_gb:g} GB limit" in m for m in fired.loc[fired["rule"] == "partition_storage", "message"])
    evaluated = stored[stored["rule"] == "evaluated"]
    assert evaluated[["account", "value"]].values.tolist() == [["127.0.0.1", float(len(fired))]]
    assert sorted(out) == sorted(f"alert: {message}" for message in fired["message"])


def test_an_evaluation_that_fires_nothing_closes_the_earlier_alerts(emulator: Any, tmp_path: Path) -> None:
    load_orders(emulator, docs=30)
    noisy = config(emulator, {"partition_storage_percent": 1e-6})
    run_collector(collector("storage"), noisy, store=store_location(tmp_path), options=Options(credential=emulator.key))
    assert evaluate(noisy, tmp_path, run_id="e1")[0] == EXIT_ALERTS
    assert set(latest_alerts(read_table(store_location(tmp_path), "alerts"))["run_id"]) == {"e1"}

    calm = config(emulator, {"partition_storage_percent": 100})
    naive_utc = datetime.now(UTC).replace(tzinfo=None)  # a naive time is UTC, as in the store
    assert evaluate(calm, tmp_path, run_id="e2", now=naive_utc) == (0, [], [])
    stored = read_table(store_location(tmp_path), "alerts")
    assert latest_alerts(stored).empty
    assert stored.loc[stored["run_id"] == "e2", ["rule", "value"]].values.tolist() == [["evaluated", 0.0]]


def test_without_alerts_or_rules_nothing_is_read_or_written(tmp_path: Path) -> None:
    bare = parse_config({"cosmos": {"database": "shop"}}, Path("a.toml"))
    defaults_only = parse_config({"cosmos": {"database": "shop"}, "alerts": {"window_minutes": 30}}, Path("a.toml"))
    (tmp_path / "_migrating").touch()  # any read or write would refuse this store
    for cfg in (bare, defaults_only):
        out: list[str] = []
        assert after_collect(cfg, store_location(tmp_path), now=datetime.now(UTC), out=out.append, err=out.append) == 0
        assert out == []


def test_a_store_that_cannot_be_read_is_one_line_and_exit_1(tmp_path: Path) -> None:
    cfg = parse_config({"cosmos": {"database": "shop"}, "alerts": {"logical_key_percent": 80}}, Path("a.toml"))
    (tmp_path / "_migrating").touch()
    code, out, err = evaluate(cfg, tmp_path)
    assert (code, out) == (1, [])
    assert len(err) == 1 and err[0].startswith("alerts: not evaluated: store ") and "ruscope store migrate" in err[0]


def test_an_empty_store_evaluates_to_no_alerts(tmp_path: Path) -> None:
    every_rule = {
        "hot_partition_percent": 90,
        "throttle_rate_percent": 5,
        "logical_key_percent": 80,
        "partition_storage_percent": 80,
        "query_ru_increase_percent": 50,
    }
    cfg = parse_config({"cosmos": {"database": "shop"}, "alerts": every_rule}, Path("a.toml"))
    assert evaluate(cfg, tmp_path / "store") == (0, [], [])
    assert read_table(store_location(tmp_path / "store"), "alerts")["rule"].tolist() == ["evaluated"]


ALERTS = """
[alerts]
window_minutes = 60
hot_partition_percent = 90
hot_partition_minutes = 10
throttle_rate_percent = 5
logical_key_percent = 80
partition_storage_percent = 80
query_ru_increase_percent = 50
baseline_runs = 10
"""


def test_a_good_alerts_section_loads(tmp_path: Path) -> None:
    settings = load_config(write(tmp_path, GOOD + ALERTS)).alerts
    assert settings is not None and settings.any_rule
    assert (settings.hot_partition_percent, settings.hot_partition_minutes, settings.lookback_days) == (90, 10, 7)
    assert load_config(write(tmp_path, GOOD)).alerts is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("throttle_rate_percent = 5", "throttle_rate_percent = 150"), "alerts.throttle_rate_percent: Input should be less than or equal to 100"),
        (("hot_partition_percent = 90", 'hot_partition_percent = "hot"'), "alerts.hot_partition_percent: Input should be a valid number"),
        (("hot_partition_percent = 90", "hot_partiton_percent = 90"), "alerts.hot_partiton_percent: Extra inputs are not permitted"),
        (("query_ru_increase_percent = 50", "query_ru_increase_percent = 0"), "alerts.query_ru_increase_percent: Input should be greater than 0"),
        (("logical_key_percent = 80", "logical_key_percent = -1"), "alerts.logical_key_percent: Input should be greater than 0"),
        (("baseline_runs = 10", "baseline_runs = 0"), "alerts.baseline_runs: Input should be greater than or equal to 1"),
        (("hot_partition_minutes = 10", "hot_partition_minutes = 90"), "alerts: hot_partition_minutes (90) is longer than window_minutes (60)"),
    ],
)  # fmt: skip
def test_a_malformed_alerts_section_names_the_key(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    text = GOOD + ALERTS.replace(*change)
    assert change[1] in text
    message = error_of(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'ruscope.toml'}: ") and expected in message, message
    with pytest.raises(ConfigError):
        load_config(write(tmp_path, text))


def test_the_collected_shops_hot_range_and_429s_fire_from_azure_monitor(collected: Any, tmp_path: Path) -> None:
    """The store the real collectors filled (tests/collected.py): the hot tenant's pkrange, before and after
    the split, at 100% normalized RU every minute, and its 429s, as Azure Monitor's stand-in reported them."""
    store = Path(shutil.copytree(collected.store, tmp_path / "store"))
    shutil.rmtree(store / "alerts")  # the builder evaluated its own [alerts] at the same instant
    rules = {"window_minutes": 180, "hot_partition_percent": 100, "hot_partition_minutes": 60}
    cfg = collected.config.model_copy(update={"alerts": AlertSettings(**rules, throttle_rate_percent=5)})
    now = datetime.fromtimestamp(collected.end, UTC)

    code, out, err = evaluate(cfg, store, now=now)

    assert (code, err) == (EXIT_ALERTS, [])
    fired = read_table(store_location(store), "alerts").query("rule != 'evaluated'").sort_values(["rule", "subject"])
    assert fired[["account", "rule", "subject"]].values.tolist() == [
        *(["local", "hot_partition", pk] for pk in collected.hot_pkranges),
        ["local", "throttle_rate", ""],
    ]
    metrics = read_table(store_location(store), "metrics", columns=["metric", "status_code", "value"]).query(
        "metric == 'TotalRequests'"
    )
    rate = metrics.loc[metrics["status_code"] == "429", "value"].sum() / metrics["value"].sum() * 100
    throttle = fired[fired["rule"] == "throttle_rate"].iloc[0]
    assert throttle["value"] == pytest.approx(rate, abs=1e-3) and rate >= 5
    assert "from Azure Monitor TotalRequests" in throttle["message"]
    hot = fired.loc[fired["rule"] == "hot_partition", "message"].tolist()
    assert all("at >= 100% normalized RU for 60 min" in message for message in hot), hot
    # an hour later than the window of the first hour: the retired parent range is no longer hot
    last_hour = cfg.model_copy(update={"alerts": AlertSettings(**{**rules, "window_minutes": 61})})
    code, out, err = evaluate(last_hour, store, now=now)
    assert (code, err) == (EXIT_ALERTS, [])
    assert [line.split(" of ")[0] for line in out] == [f"alert: pkrange {collected.hot_pkranges[-1]}"]


def test_a_store_with_logs_but_no_metrics_fires_the_logs_429_rate_of_the_window(tmp_path: Path) -> None:
    """The rule reads the diagnostic logs' counts (`log_throttles`) of the window, as the pages read them:
    carts' 45 of 250 and orders' 1000 of 1000 at minute 0; an older bin (before the window) is not counted."""
    cfg = parse_config({"cosmos": {"database": "shop"}, "alerts": {"throttle_rate_percent": 5}}, Path("a.toml"))
    old = LOG_ROWS.iloc[[0]].assign(time=T0 - pd.Timedelta(hours=2), throttled=0)  # carts: 100 unthrottled
    rows = pd.concat([LOG_ROWS, old]).assign(account=cfg.all_accounts()[0].name)
    write_frame(store_location(tmp_path), "log_throttles", rows, run_id="l1", part="0")
    code, out, err = evaluate(cfg, tmp_path, now=(T0 + pd.Timedelta(minutes=5)).to_pydatetime())
    assert (code, err) == (EXIT_ALERTS, [])
    fired = read_table(store_location(tmp_path), "alerts").query("rule == 'throttle_rate'").sort_values("container")
    assert fired[["container", "value"]].values.tolist() == [["carts", 18.0], ["orders", 100.0]]
    assert all("in the last 1 hour" in m and "from the diagnostic logs" in m for m in fired["message"])

"""analysis.overview on frames built here: per-container numbers (a whole golden CSV), periods, changes,
the costliest queries."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis import hottest, overview, throttling
from analysis.report import to_csv_bytes
from analysis.scope import Window
from store import TABLES
from tests.analysis.queries.test_costs import T0, execution, executions_frame, request, requests_frame

GOLDEN = Path(__file__).with_name("golden")
UPDATE = os.environ.get("RUSCOPE_UPDATE_GOLDEN") == "1"  # rewrite the golden files (then review the diff)
KB_PER_GB = 1024 * 1024


def row(table: str, container: str = "orders", *, minute: float = 0, **values: Any) -> dict[str, Any]:
    """One row of a store table with every column, in 127.0.0.1/shop/<container> at T0 + minute."""
    out = dict.fromkeys(TABLES[table].columns)
    out.update(account="127.0.0.1", database="shop", container=container, run_id="m1")
    out.update(time=T0 + pd.Timedelta(minutes=minute), **values)
    return out


def frame(table: str, *rows: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=TABLES[table].columns)


def metric(name: str, value: float, *, container: str = "orders", minute: float = 0, **dims: Any) -> dict:
    aggregation = "Maximum" if name in {"NormalizedRUConsumption", "ProvisionedThroughput"} else "Total"
    return row("metrics", container, minute=minute, metric=name, aggregation=aggregation, value=value,
               unit="Count", grain="PT1M", **dims)  # fmt: skip


def shop_frames() -> dict[str, pd.DataFrame]:
    """orders: manual 1,000 RU/s, 3 minutes of 600/1200/300 RU, pkrange 1 hot (90% then 100%) against 0
    (10%), 5% of 2,000 requests throttled, two partitions and keys; a fan-out query and a point query.
    people: replay only, one query."""
    metrics = [metric("ProvisionedThroughput", 1000.0)]
    metrics += [metric("TotalRequestUnits", ru, minute=m) for m, ru in enumerate([600.0, 1200.0, 300.0])]
    metrics += [
        metric("NormalizedRUConsumption", v, minute=m, pkrange_id="1") for m, v in enumerate([90.0, 100.0, 90.0])
    ]
    metrics += [metric("NormalizedRUConsumption", 10.0, minute=m, pkrange_id="0") for m in range(3)]
    metrics += [metric("TotalRequests", 1900.0, status_code="200"), metric("TotalRequests", 100.0, status_code="429")]
    partitions = [row("partitions", pkrange_id=pk, size_kb=kb, document_count=n) for pk, kb, n in
                  [("0", 5 * KB_PER_GB, 1000), ("1", 45 * KB_PER_GB, 9000)]]  # fmt: skip
    keys = [row("logical_keys", pkrange_id="1", partition_key='["t1"]', size_kb=18 * KB_PER_GB),
            row("logical_keys", pkrange_id="0", partition_key='["=cmd"]', size_kb=KB_PER_GB)]  # fmt: skip
    executions = [
        execution("r1", "wide", ru=40.0, routing="fan-out", pkranges="0,1"),
        execution("r1", "point", minute=1, ru=2.0),
        execution("r1", "=cmd", minute=2, ru=1.0, container="people"),
    ]
    requests = [
        request("r1", "wide", "wide-0-", "page", "0", 10.0),
        request("r1", "wide", "wide-0-", "page", "1", 30.0),
        request("r1", "point", "point-0-", "page", "1", 2.0),
        request("r1", "=cmd", "=cmd-0-", "page", "0", 1.0, container="people"),
    ]
    return {
        "executions": executions_frame(*executions),
        "requests": requests_frame(*requests),
        "metrics": frame("metrics", *metrics),
        "partitions": frame("partitions", *partitions),
        "logical_keys": frame("logical_keys", *keys),
    }


def assert_golden(data: bytes, name: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_bytes(data)
    assert data.decode() == path.read_text(encoding="utf-8")


def test_containers_golden() -> None:
    containers = overview.summarize_containers(**shop_frames())
    assert containers.columns.tolist() == overview.CONTAINER_COLUMNS
    assert_golden(to_csv_bytes(containers), "overview_containers.csv")


def test_monitor_numbers_win_over_the_replay() -> None:
    orders, people = overview.summarize_containers(**shop_frames()).to_dict("records")
    assert (orders["container"], people["container"]) == ("orders", "people")
    assert orders["ru_consumed"] == 2100.0 and orders["ru_source"] == "monitor"  # not the replay's 42 RU
    assert orders["peak_ru_s"] == 20.0 and orders["provisioned_ru_s"] == 1000.0
    assert (orders["hot_pkrange"], orders["hot_normalized_ru"], orders["pkranges"]) == ("1", 100.0, 2)
    assert orders["hot_range_share"] == pytest.approx(0.9032, abs=1e-4)  # mean 93.3 of 103.3
    assert orders["throttle_rate"] == 0.05 and orders["throttle_source"] == throttling.MONITOR
    assert not orders["throttle_flag"]  # 5% is the top of the healthy band, not above it
    assert orders["largest_key_gb"] == 18.0 and orders["key_headroom"] == 0.1
    assert people["ru_consumed"] == 1.0 and people["ru_source"] == "replay"
    assert people["skew_source"] == "replay" and pd.isna(people["peak_ru_s"])


def test_a_split_parent_is_not_the_hot_range() -> None:
    """pkrange 0 split into 1 and 2 at minute 1: only the ranges of the latest interval count."""
    metrics = [metric("NormalizedRUConsumption", 100.0, pkrange_id="0")]
    metrics += [metric("NormalizedRUConsumption", v, minute=1, pkrange_id=pk) for pk, v in [("1", 60.0), ("2", 20.0)]]
    hot = hottest.hottest_range(frame("metrics", *metrics)).to_dict("records")
    assert [(h["monitor_hot"], h["hot_normalized_ru"], h["monitor_share"], h["monitor_pkranges"]) for h in hot] == [
        ("1", 60.0, 0.75, 2)
    ]


def test_the_range_with_most_ru_and_the_range_that_peaked_are_each_named() -> None:
    """pkrange 0 carries most of the RU (70, 70, 70%), pkrange 1 little but one busy second (10, 95, 10%): the
    hottest range (the skew) is 0 with its share, the peak is 1's 95%. Naming one range for both would say
    "pkrange 1 takes 22% of the RU" while 0 takes 78%, or floor a lower RU/s on 0's 70%. Ties of share: the
    first range in id order (as the Hot partitions page's skew table)."""
    series = {"0": [70.0, 70.0, 70.0], "1": [10.0, 95.0, 10.0], "2": [0.0, 0.0, 0.0]}
    rows = [
        metric("NormalizedRUConsumption", v, minute=m, pkrange_id=pk)
        for pk, vs in series.items()
        for m, v in enumerate(vs)
    ]
    hot = hottest.hottest_range(frame("metrics", *rows)).iloc[0]
    assert (hot["monitor_hot"], hot["monitor_share"], hot["monitor_pkranges"]) == (
        "0",
        pytest.approx(210 / 325, abs=1e-4),
        3,
    )
    assert (hot["monitor_peak_pkrange"], hot["hot_normalized_ru"]) == ("1", 95.0)
    tied = {"10": [50.0, 50.0], "2": [50.0, 50.0]}
    rows = [
        metric("NormalizedRUConsumption", v, minute=m, pkrange_id=pk)
        for pk, vs in tied.items()
        for m, v in enumerate(vs)
    ]
    assert hottest.hottest_range(frame("metrics", *rows)).iloc[0]["monitor_hot"] == "2"  # id order, not text order


def test_periods_of_a_bounded_range_and_of_all_time() -> None:
    now = dt.datetime(2026, 5, 8, 12, tzinfo=dt.UTC)
    day = overview.periods(Window(now - dt.timedelta(hours=24)), now + dt.timedelta(seconds=31), None)
    assert (day.shown_start, day.recent_start, day.before_start) == (
        pd.Timestamp("2026-05-07T12:00Z"),
        pd.Timestamp("2026-05-07T12:00Z"),
        pd.Timestamp("2026-05-06T12:00Z"),
    )
    assert day.note == "Changes compare this range with the 24 hours before it."
    latest = pd.Timestamp("2026-05-01T10:00Z")
    every = overview.periods(Window(), now, latest)
    assert every.shown_start is None
    assert (every.recent_start, every.before_start) == (
        pd.Timestamp("2026-04-24T10:00Z"),
        pd.Timestamp("2026-04-17T10:00Z"),
    )
    assert "the 7 days up to the newest data (2026-05-01 10:00 UTC) with the 7 days before" in every.note
    assert overview.periods(Window(), now, None) == overview.Periods(None, None, None, "")


def test_a_custom_window_is_compared_with_the_same_length_before_it() -> None:
    start = dt.datetime(2026, 5, 1, 10, tzinfo=dt.UTC)
    custom = Window(start, start + dt.timedelta(hours=3, minutes=30), "Custom")
    span = overview.periods(custom, dt.datetime(2026, 5, 9, tzinfo=dt.UTC), None)  # now: far later, unused
    assert (span.shown_start, span.recent_start, span.before_start) == (
        pd.Timestamp("2026-05-01T10:00Z"),
        pd.Timestamp("2026-05-01T10:00Z"),
        pd.Timestamp("2026-05-01T06:30Z"),
    )
    assert span.note == "Changes compare this range with the 210 minutes before it."
    hour = overview.periods(Window(start, start + dt.timedelta(hours=1), "Custom"), start, None)
    assert hour.before_start == pd.Timestamp("2026-05-01T09:00Z") and "the 1 hour before it" in hour.note


def test_changes_against_the_period_before() -> None:
    frames = shop_frames()
    before = {name: f.assign(time=f["time"] - pd.Timedelta(days=1)) for name, f in frames.items()}
    before["metrics"] = before["metrics"].assign(value=before["metrics"]["value"] / 2)
    both = {name: pd.concat([frames[name], before[name]], ignore_index=True) for name in frames}
    start = overview.periods(Window(T0.to_pydatetime()), (T0 + pd.Timedelta(days=1)).to_pydatetime(), None)
    recent = overview.summarize_containers(**{n: overview.between(f, start.recent_start) for n, f in both.items()})
    then = overview.summarize_containers(**{n: overview.between(f, start.before_start, start.recent_start) for n, f in both.items()})  # fmt: skip
    compared = overview.compare_periods(recent, recent, then)
    orders = compared.iloc[0]
    assert compared.columns.tolist()[3:7] == ["ru_consumed", "ru_consumed_change", "ru_source", "provisioned_ru_s"]
    assert orders["ru_consumed_change"] == 1050.0 and orders["peak_ru_s_change"] == 10.0
    assert orders["hot_normalized_ru_change"] == 50.0 and orders["throttle_rate_change"] == 0.0
    assert pd.isna(compared.iloc[1]["peak_ru_s_change"])  # people: no metrics on either side
    alone = overview.compare_periods(recent, recent, recent.iloc[0:0])
    assert alone["ru_consumed_change"].isna().all()


def test_costliest_queries_with_the_change_of_mean_ru() -> None:
    recent = executions_frame(
        execution("r2", "wide", ru=40.0, routing="fan-out", pkranges="0,1"),
        execution("r2", "wide", repeat=1, ru=20.0, routing="fan-out", pkranges="0,1"),
        execution("r2", "point", ru=2.0),
    )
    before = executions_frame(execution("r1", "wide", ru=20.0, routing="fan-out", pkranges="0,1"))
    top = overview.costliest_queries(recent, recent, before, top=5)
    assert top[["query_name", "executions", "total_ru", "mean_ru", "routing", "pkrange_count"]].values.tolist() == [
        ["wide", 2, 60.0, 30.0, "fan-out", 2],
        ["point", 1, 2.0, 2.0, "single", 1],
    ]
    assert top["mean_ru_change_pct"].tolist()[0] == 50.0 and pd.isna(top["mean_ru_change_pct"].tolist()[1])
    assert overview.costliest_queries(recent, recent, before, top=1)["query_name"].tolist() == ["wide"]
    assert overview.costliest_queries(executions_frame(), recent, before).empty
    every = pd.concat([recent, before], ignore_index=True)  # all time: the list of all, the change of recent
    assert overview.costliest_queries(every, recent, before)["total_ru"].tolist() == [80.0, 2.0]


def test_empty_frames_give_no_containers() -> None:
    empty = {name: f.iloc[0:0] for name, f in shop_frames().items()}
    out = overview.summarize_containers(**empty)
    assert out.empty and out.columns.tolist() == overview.CONTAINER_COLUMNS
    assert overview.latest_time(*empty.values()) is None


def test_a_tiny_partition_and_key_are_neither_0_gb_nor_an_empty_fill() -> None:
    frames = shop_frames()
    frames["partitions"] = frame("partitions", row("partitions", pkrange_id="0", size_kb=36.0, document_count=3))
    frames["logical_keys"] = frame(
        "logical_keys", row("logical_keys", pkrange_id="0", partition_key='["a"]', size_kb=231.0)
    )
    orders = overview.summarize_containers(**frames).iloc[0]
    assert (orders["largest_partition_gb"], orders["largest_key_gb"]) == (0.000034, 0.00022)  # 1 KB precision
    fills = overview.limit_fills(overview.summarize_containers(**frames)).iloc[0]
    assert fills["largest partition of 50 GB"] == 0.0001 and fills["largest key of 20 GB"] == 0.0011  # in %

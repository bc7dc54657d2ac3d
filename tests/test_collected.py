"""The collected store (tests/collected.py) holds what the dashboard's tests rely on: every table the
collectors write, a hot pkrange at 100% normalized RU before and after a split, and the split's lineage."""

from __future__ import annotations

from store import read_table, store_location
from tests.collected import REPLAY_AT, CollectedStore


def test_every_collector_wrote_its_tables(collected: CollectedStore) -> None:
    tables = ["executions", "requests", "partitions", "logical_keys", "metrics", "log_key_ru", "log_throttles"]
    sizes = {table: len(read_table(store_location(collected.store), table)) for table in tables}
    assert all(sizes.values()), sizes
    executions = read_table(store_location(collected.store), "executions")
    assert executions["run_id"].nunique() == len(REPLAY_AT) and (executions["status"] == "ok").all()
    assert executions.loc[executions["query_name"] == "hot-tenant-orders", "rate_per_s"].eq(40.0).all()


def test_the_hot_tenant_saturates_its_pkrange_before_and_after_the_split(collected: CollectedStore) -> None:
    metrics = read_table(store_location(collected.store), "metrics")
    normalized = metrics[metrics["metric"] == "NormalizedRUConsumption"]
    peak = normalized.groupby("pkrange_id")["value"].max()
    assert len(collected.hot_pkranges) == 2  # the parent it lived on, then the child
    assert all(peak[pk] >= 99 for pk in collected.hot_pkranges)
    assert (peak.drop(list(collected.hot_pkranges)) < 50).all()
    partitions = read_table(store_location(collected.store), "partitions")
    latest = partitions[partitions["run_id"] == partitions["run_id"].max()]
    assert len(latest) == 5 and (latest["parents"] != "").sum() == 2
    assert latest["min_epk"].notna().all() and (latest["min_epk"] < latest["max_epk"]).all()

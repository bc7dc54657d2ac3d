"""A two-region account: every metric but AutoscaleMaxThroughput has a `Region` dimension (azure-monitor.md
§7b R1); throughput is reserved and data stored in each region, requests are served where they are sent.
The stand-in serves it so when configured with regions; the collector splits by Region and stores the
`region` column. Through the real `MetricsClient` over real HTTPS."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.querymetrics import MetricsClient

from collectors.metrics import _is_stored, metric_filter
from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    NAMESPACE,
    NORMALIZED_RU,
    PROVISIONED,
    TOTAL_REQUEST_UNITS,
)
from emulator.engine.facade import Engine
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from tests.collectors.test_metrics import RESOURCE, StandIn, collect, config
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _hot_workload, _key_on, _range_ids, _reads, _setup
from tests.emulator.monitor.test_metrics import FixedToken
from tests.metric_series import sums_by_dimensions

REGIONS = ("West Europe", "North Europe")  # the first serves the requests


@pytest.fixture
def two_regions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    certs = ensure_certificates(tmp_path_factory.mktemp("metrics-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)  # t/c at 600 RU/s
    _hot_workload(engine, clock, minutes=2)
    clock.advance(8 * 60)  # past a whole PT5M interval, for the storage and throughput metrics
    app = MetricsApp(engine, region="westeurope", regions=REGIONS)
    running = start_in_thread(engine, app=app, tls=certs.server_context())
    yield StandIn(running, engine, clock, certs)
    running.stop()


def _series(stand_in: StandIn, metric: str, aggregation: str, filter: str) -> dict[tuple[str, ...], float]:
    client = MetricsClient(stand_in.url, FixedToken(), connection_verify=str(stand_in.certs.ca), retry_total=0)
    span = (dt.datetime.fromtimestamp(START, dt.UTC), dt.datetime.fromtimestamp(START + 300, dt.UTC))
    (result,) = client.query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[metric],
        timespan=span,
        granularity=dt.timedelta(minutes=5),
        aggregations=[aggregation],
        filter=filter,
        max_results=100,
    )
    return sums_by_dimensions(result.metrics[0], aggregation)


def test_throughput_and_storage_are_per_region_and_requests_where_served(two_regions: StandIn) -> None:
    assert _series(two_regions, PROVISIONED, "Maximum", "Region eq '*'") == {(r,): 600 for r in REGIONS}
    assert _series(two_regions, PROVISIONED, "Maximum", "CollectionName eq 'c'") == {("c",): 600}  # max of regions
    per_region = _series(two_regions, DATA_USAGE, "Total", "Region eq '*'")
    assert set(per_region) == {(r,) for r in REGIONS} and len(set(per_region.values())) == 1
    combined = _series(two_regions, DATA_USAGE, "Total", "CollectionName eq 'c'")
    assert combined == {("c",): pytest.approx(2 * per_region[(REGIONS[0],)])}  # unsplit: the sum of the copies
    assert list(_series(two_regions, TOTAL_REQUEST_UNITS, "Total", "Region eq '*'")) == [(REGIONS[0],)]
    assert _series(two_regions, TOTAL_REQUEST_UNITS, "Total", f"Region eq '{REGIONS[1]}'") == {}
    with pytest.raises(HttpResponseError) as caught:  # §5: AutoscaleMaxThroughput has no Region
        _series(two_regions, AUTOSCALE_MAX, "Maximum", "Region eq '*'")
    assert caught.value.status_code == 400


def test_the_collector_splits_by_region_and_stores_it(
    two_regions: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    assert "Region eq '*'" in metric_filter("t", NORMALIZED_RU)
    assert "Region" not in metric_filter("t", AUTOSCALE_MAX)
    cfg = config(two_regions, metrics=[PROVISIONED, TOTAL_REQUEST_UNITS, NORMALIZED_RU], backfill_hours=1)
    code, out, err = collect(two_regions, tmp_path, cfg)
    assert (code, err) == (0, []), err
    frame = read_table(store_location(tmp_path), "metrics")
    provisioned = frame[frame["metric"] == PROVISIONED]
    assert set(provisioned["region"]) == set(REGIONS) and set(provisioned["value"]) == {600}
    for metric in (TOTAL_REQUEST_UNITS, NORMALIZED_RU):
        assert set(frame[frame["metric"] == metric]["region"]) == {REGIONS[0]}


def test_a_point_stored_before_the_region_split_is_not_stored_again_per_region() -> None:
    old = ("t", "c", NORMALIZED_RU, "Maximum", 1, "0", "0", None, None, None)
    assert _is_stored((*old[:-1], "West Europe"), {old})
    assert not _is_stored((*old[:-1], "West Europe"), set())
    assert not _is_stored(old, {(*old[:-1], "West Europe")})


def test_a_store_from_before_the_region_split_gets_per_region_points_from_its_watermark_on(
    two_regions: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows without a region (stored before the split, combining the regions) are not stored again per
    region in the next run's overlap: each minute is stored one way only."""
    import pyarrow as pa

    from store import write_arrow
    from store.records import METRICS

    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    cfg = config(two_regions, metrics=[NORMALIZED_RU], backfill_hours=1)
    assert collect(two_regions, tmp_path / "new", cfg)[0] == 0
    rows = read_table(store_location(tmp_path / "new"), "metrics")
    old = pa.Table.from_pandas(rows.assign(region=None, run_id="r0"), preserve_index=False).select(METRICS.schema.names)
    assert write_arrow(store_location(tmp_path / "old"), METRICS, old.cast(METRICS.schema), run_id="r0", part="m0")
    key = _key_on(two_regions.engine, _range_ids(two_regions.engine)[0])
    for _ in range(120):  # two more minutes of reads
        _reads(two_regions.engine, key, 20)
        two_regions.clock.advance(1.0)
    code, out, err = collect(two_regions, tmp_path / "old", cfg)
    assert (code, err) == (0, []), err
    frame = read_table(store_location(tmp_path / "old"), "metrics")
    both = frame.groupby(["time", "pkrange_id"])["region"].agg(lambda r: (r.isna().any(), r.notna().any()))
    assert not any(a and b for a, b in both), "a minute stored both without and with its region"
    assert frame["region"].isna().sum() == len(rows) and frame["region"].notna().sum() > 0

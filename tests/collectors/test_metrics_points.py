"""`points_table`: the SDK's result objects (built with their public constructors) to the metrics table's
Arrow columns; points outside the chunk and empty intervals are left out."""

from __future__ import annotations

import datetime as dt

from azure.monitor.querymetrics import Metric, MetricsQueryResult, MetricValue, TimeSeriesElement

from collectors.metrics import points_table
from store.records import METRICS

T0 = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)


def _result(values: list[float | None], dims: dict[str, str]) -> MetricsQueryResult:
    data = [MetricValue(timestamp=T0 + dt.timedelta(minutes=i), maximum=v) for i, v in enumerate(values)]
    series = TimeSeriesElement(metadata_values=dims, data=data)
    metric = Metric(
        id="x", type="t", name="NormalizedRUConsumption", unit="Percent", timeseries=[series], display_description=""
    )
    return MetricsQueryResult(timespan="", metrics=[metric])


def test_points_outside_the_chunk_and_empty_intervals_are_left_out() -> None:
    results = [_result([1.0, None, 3.0, 4.0], {"collectionname": "c", "partitionkeyrangeid": "7"})]
    ids = {"account": "a", "database": "d", "aggregation": "Maximum"}
    data = points_table(results, ids, "PT1M", T0, T0 + dt.timedelta(minutes=3))
    assert data.schema.names == METRICS.schema.names
    rows = data.to_pylist()
    assert [r["value"] for r in rows] == [1.0, 3.0]  # None skipped, minute 3 is the next chunk's
    assert {(r["container"], r["pkrange_id"], r["grain"], r["unit"], r["status_code"]) for r in rows} == {
        ("c", "7", "PT1M", "Percent", None)
    }
    assert rows[1]["time"] == T0 + dt.timedelta(minutes=2)

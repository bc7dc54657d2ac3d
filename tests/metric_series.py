"""What the real `MetricsClient` answered, summed per series: the monitor stand-in's tests and the metrics
collector's tests compare an answer with the engine's history this way."""

from __future__ import annotations

from azure.monitor.querymetrics import Metric


def sums_by_dimensions(metric: Metric, aggregation: str) -> dict[tuple[str, ...], float]:
    """Each series' dimension values (in the filter's order) -> its `aggregation` (`Total`, `Maximum`, ...)
    summed over the answer's points, a point without that value counting 0."""
    key = aggregation.lower()
    return {
        tuple(series.metadata_values.values()): sum(getattr(point, key) or 0 for point in series.data)
        for series in metric.timeseries
    }

"""A metrics filter that pins a dimension to a value returns that value's series, as Azure Monitor does, for
every dimension the stand-in serves (not only the container's): through the real `MetricsClient`."""

from __future__ import annotations

import datetime as dt

import pytest

from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUESTS
from emulator.engine.facade import Engine
from emulator.rest.server import RunningEmulator
from tests.emulator.history.test_history import START
from tests.emulator.monitor.test_metrics import NAMESPACE, RESOURCE, _client, _metric, _span, stand_in
from tests.metric_series import sums_by_dimensions

__all__ = ["stand_in"]  # the module's fixture, shared
StandIn = tuple[RunningEmulator, Engine, str, list[str]]


def _series(emu: RunningEmulator, metric: str, filter: str, aggregation: str) -> dict[tuple[str, ...], float]:
    """Each series' dimension values (in filter order) -> its aggregation summed over the span."""
    (result,) = _client(emu).query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[metric],
        timespan=_span(),
        granularity=dt.timedelta(minutes=1),
        aggregations=[aggregation],
        filter=filter,
        max_results=100,
    )
    return sums_by_dimensions(_metric(result, metric), aggregation)


def _requests_by(engine: Engine, dimension: str) -> dict[str, float]:
    out: dict[str, float] = {}
    end = _span()[1].timestamp()
    for p in engine.history.series("t", "c", TOTAL_REQUESTS, START, end):
        out[p.dimensions[dimension]] = out.get(p.dimensions[dimension], 0.0) + p.value
    return out


def test_status_code_pinned_to_429_returns_the_429s(stand_in: StandIn) -> None:
    emu, engine = stand_in[0], stand_in[1]
    expected = _requests_by(engine, "StatusCode")
    assert expected.get("429", 0) > 0
    assert _series(emu, TOTAL_REQUESTS, "StatusCode eq '429'", "Count") == {("429",): expected["429"]}
    both = _series(emu, TOTAL_REQUESTS, "StatusCode eq '429' or StatusCode eq '200'", "Count")
    assert both == {("429",): expected["429"], ("200",): expected["200"]}
    everything = _series(emu, TOTAL_REQUESTS, "StatusCode eq '*'", "Count")
    assert everything[("429",)] == expected["429"]


def test_operation_type_pinned_to_a_value_returns_its_series(stand_in: StandIn) -> None:
    emu, engine = stand_in[0], stand_in[1]
    expected = _requests_by(engine, "OperationType")
    operation = max(expected, key=lambda op: expected[op])
    got = _series(emu, TOTAL_REQUESTS, f"DatabaseName eq 't' and OperationType eq '{operation}'", "Count")
    assert got == {("t", operation): pytest.approx(expected[operation])}


def test_partition_key_range_pinned_to_a_value_returns_that_range(stand_in: StandIn) -> None:
    emu, hot = stand_in[0], stand_in[2]
    got = _series(emu, NORMALIZED_RU, f"PartitionKeyRangeId eq '{hot}'", "Maximum")
    assert list(got) == [(hot,)] and got[(hot,)] > 0
    assert _series(emu, NORMALIZED_RU, "PartitionKeyRangeId eq 'no-such-range'", "Maximum") == {}

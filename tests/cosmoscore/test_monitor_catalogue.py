"""The Azure Monitor catalogue (`cosmoscore.monitor`): consistent in itself, backed by the reference document,
and what the collectors ask and the stand-in serves fits in it. The collectors and the stand-in each choose
their own subset; these tests only hold both to the catalogue's names and shapes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors import metrics as metrics_collector
from collectors.config.monitor import DEFAULT_METRICS
from collectors.logs import queries as logs_queries
from cosmoscore.monitor import logs, metrics
from emulator.monitor import definitions as stand_in_metrics
from emulator.monitor import tables as stand_in_tables
from emulator.monitor.tables import Scan

REFERENCE = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "azure-monitor.md").read_text(
    encoding="utf-8"
)
AGGREGATIONS = {metrics.TOTAL, metrics.AVERAGE, metrics.MAXIMUM, metrics.MINIMUM, metrics.COUNT}


def _section(number: str) -> str:
    start = REFERENCE.index(f"\n## {number}. ") if "." not in number else REFERENCE.index(f"\n### {number} ")
    end = REFERENCE.index("\n## ", start + 1)
    return REFERENCE[start:end]


# -- the catalogue in itself --------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", metrics.CATALOGUE.values(), ids=lambda m: m.name)
def test_each_metric_is_well_formed_and_in_the_reference(metric: metrics.MetricDefinition) -> None:
    assert metric.aggregations and set(metric.aggregations) <= AGGREGATIONS
    assert len(set(metric.dimensions)) == len(metric.dimensions)
    minutes = [metrics.GRAIN_MINUTES[g] for g in metric.grains]
    assert minutes == sorted(minutes) and metric.finest_minutes == minutes[0]
    unit, aggregations, dimensions, grains = _row(metric.name)
    assert unit == metric.unit
    assert _listed(aggregations) == list(metric.aggregations)  # the default first, as §5 lists them
    assert set(metric.dimensions) <= set(re.findall(r"\w+", dimensions))
    assert set(metric.grains) <= set(re.findall(r"\w+", grains.split("(")[0]))


def _row(name: str) -> list[str]:
    """(unit, aggregations, dimensions, time grains) of the metric's row in §5; "(same as Direct)" resolved."""
    line = next(line for line in _section("5").splitlines() if f"| `{name}` |" in line)
    cells = [c.strip() for c in line.strip("|").split("|")][2:6]
    if "(same as Direct)" in cells:
        direct = _row(metrics.LATENCY_DIRECT)
        cells = [d if c == "(same as Direct)" else c for c, d in zip(cells, direct, strict=True)]
    return cells


def _listed(cell: str) -> list[str]:
    return [a.strip() for a in re.sub(r"\(.*?\)", "", cell).split(",") if a.strip()]


def test_the_catalogue_holds_every_metric_of_the_reference() -> None:
    listed = set(re.findall(r"\| `(\w+)` \|", _section("5")))
    assert listed - {"AvailableStorage"} == set(metrics.CATALOGUE)  # removed from Azure Monitor in 2023


def test_lookup_ignores_case_as_the_service_does() -> None:
    assert metrics.find_metric("normalizedruconsumption") is metrics.CATALOGUE[metrics.NORMALIZED_RU]
    assert metrics.find_metric("AvailableStorage") is None  # removed from Azure Monitor in 2023 (§5)


@pytest.mark.parametrize("table", logs.TABLES.values(), ids=lambda t: t.name)
def test_each_table_is_in_the_reference_with_its_columns(table: logs.Table) -> None:
    section = next(s for s in ("6.1", "6.2", "6.3", "6.4") if f"`{table.name}`" in _section(s).splitlines()[1])
    text = _section(section)
    assert all(c.name in text for c in table.columns)
    assert table.column(logs.TIME_GENERATED) is not None and table.column(logs.DATABASE_NAME) is not None
    assert f"`{table.category}`" in _section("6")
    for column, legacy in table.legacy.items():  # every legacy spelling is of a column of the table
        assert table.column(column) is not None, column
        assert legacy in REFERENCE, legacy


@pytest.mark.parametrize("table", logs.AGGREGATED.values(), ids=lambda t: t.name)
def test_each_aggregated_table_is_in_the_reference_resource_specific_only(table: logs.Table) -> None:
    """§6.6: the columns of the 5M / 15M references, categories DataPlaneRequests5M / 15M, no legacy form."""
    text = _section("6.6")
    assert f"`{table.name}`" in text.splitlines()[1] and f"`{table.category}`" in text
    assert all(c.name in text for c in table.columns) and table.legacy == {}
    assert table.grain_minutes == int(table.name.removeprefix(logs.REQUESTS_TABLE).removesuffix("M"))
    assert table.column(logs.REQUEST_COUNT) == logs.Column(logs.REQUEST_COUNT, logs.REAL)
    assert table.column(logs.STATUS_CODE) == logs.Column(logs.STATUS_CODE, logs.INT)
    with pytest.raises(KeyError):
        table.spelled(logs.REQUEST_COUNT, logs.AZURE_DIAGNOSTICS)


def test_legacy_columns_are_spelled_per_category() -> None:
    """§7b R6: QueryRuntimeStatistics writes lower-case names, PartitionKeyRUConsumption camel case; KQL
    identifiers are case-sensitive, so one map for all categories misses one of them."""
    assert logs.QUERY_STATS.legacy[logs.DATABASE_NAME] == "databasename_s"
    assert logs.QUERY_STATS.legacy[logs.PARTITION_KEY_RANGE_ID] == "partitionkeyrangeid_s"
    assert logs.KEY_RU.legacy[logs.DATABASE_NAME] == "databaseName_s"
    assert logs.KEY_RU.legacy[logs.PARTITION_KEY_RANGE_ID] == "partitionKeyRangeId_s"
    assert logs.legacy_type("sizeKb_d") == logs.REAL and logs.legacy_type("partitionId_g") == logs.GUID
    assert logs.legacy_type(logs.TIME_GENERATED) == logs.DATETIME
    with pytest.raises(KeyError):
        logs.KEY_STATS.spelled(logs.QUERY_TEXT, logs.RESOURCE_SPECIFIC)


# -- what the collectors ask --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", dict.fromkeys([*DEFAULT_METRICS, *metrics_collector.SPLITS]))
def test_every_metric_the_collector_asks_is_catalogued_with_its_split(name: str) -> None:
    metric = metrics.CATALOGUE[name]
    aggregation, split = metrics_collector.spec(name)
    assert aggregation == metric.default_aggregation
    assert set(split) <= set(metric.dimensions)
    assert metrics_collector.grain_of(name, "PT1M") == max(metric.finest_grain, "PT1M", key=metrics.GRAIN_MINUTES.get)


def test_the_collector_reads_catalogued_dimensions_back() -> None:
    lowered = {d.lower() for d in metrics.DIMENSIONS}
    assert set(metrics_collector.COLUMNS) <= lowered


_KQL_WORDS = {
    "where",
    "and",
    "in",
    "summarize",
    "by",
    "bin",
    "count",
    "countif",
    "sum",
    "sumif",
    "todouble",
    "arg_max",
    "top",
    "desc",
    "isnotempty",
    "max",
    "join",
    "kind",
    "inner",
    "on",
    "extend",
    "has",
    "project",
}
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'")


def _identifiers(kql: str) -> list[str]:
    return [w for w in re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", _STRING.sub("''", kql)) if w not in _KQL_WORDS]


@pytest.mark.parametrize("mode", logs.MODES)
@pytest.mark.parametrize("name", logs_queries.SPECS)
def test_every_column_the_collector_queries_is_in_its_table(name: str, mode: str) -> None:
    spec = logs_queries.SPECS[name]
    kql = logs_queries.build(name, logs_queries.Params("db", ("c",), account="a", mode=mode))
    source, *words = _identifiers(kql)
    aliases = {result for result, _, _ in spec.aggregates if result}
    if mode == logs.RESOURCE_SPECIFIC:
        assert source == spec.table.name
        known = {c.name for c in spec.table.columns} | logs.STANDARD_NAMES
    else:
        assert source == logs.LEGACY_TABLE
        known = {c.name for c in logs.LEGACY_COMMON} | set(spec.table.legacy.values())
    assert [w for w in words if w not in known | aliases] == []
    assert set(logs_queries.result_columns(name, mode).values()) <= {c.name for c in spec.table.columns}


@pytest.mark.parametrize("mode", logs.MODES)
def test_query_ru_reads_only_columns_of_its_two_tables(mode: str) -> None:
    """The join of `query_ru` (azure-monitor.md §7b R71) names the query statistics' and the requests' columns
    (each side spelled as its category writes it, §6.5) and its own result names, nothing else."""
    kql = logs_queries.build(logs_queries.QUERY_RU, logs_queries.Params("db", ("c",), account="a", mode=mode))
    source, *words = _identifiers(kql)
    tables = (logs.QUERY_STATS, logs.REQUESTS)
    aliases = {logs_queries.OWN_TRAFFIC, logs_queries.REQUESTS, logs_queries.THROTTLED, logs.REQUEST_CHARGE}
    if mode == logs.RESOURCE_SPECIFIC:
        assert source == logs.QUERY_STATS.name and logs.REQUESTS.name in words
        known = {c.name for t in tables for c in t.columns} | {logs.REQUESTS.name}
    else:
        assert source == logs.LEGACY_TABLE
        known = {c.name for c in logs.LEGACY_COMMON} | {v for t in tables for v in t.legacy.values()}
        known |= {logs.LEGACY_TABLE}
    assert [w for w in words if w not in known | aliases] == []
    renamed = set(logs_queries.result_columns(logs_queries.QUERY_RU, mode).values())
    assert renamed <= {c.name for c in logs.QUERY_STATS.columns}


@pytest.mark.parametrize("tables", logs_queries.AGGREGATED_TABLES)
def test_the_aggregated_throttles_query_reads_its_tables_columns(tables: str) -> None:
    params = logs_queries.Params("db", ("c",), account="a", bin_minutes=15, tables=tables)
    source, *words = _identifiers(logs_queries.build(logs_queries.THROTTLES, params))
    table = logs_queries.AGGREGATED_TABLES[tables]
    assert source == table.name
    known = {c.name for c in table.columns} | {logs_queries.REQUESTS, logs_queries.THROTTLED}
    assert [w for w in words if w not in known] == []


# -- what the stand-in serves -------------------------------------------------------------------------------


def test_the_stand_in_serves_or_refuses_every_catalogued_metric() -> None:
    served = {d.name for d in stand_in_metrics.DEFINITIONS.values()}
    refused = set(stand_in_metrics.NOT_COMPUTED)
    assert served | refused == set(metrics.CATALOGUE) and not served & refused


@pytest.mark.parametrize("definition", stand_in_metrics.DEFINITIONS.values(), ids=lambda d: d.name)
def test_the_stand_in_serves_a_subset_of_each_metric(definition: stand_in_metrics.Definition) -> None:
    metric = metrics.CATALOGUE[definition.name]
    assert definition.unit == metric.unit and definition.grain == metric.finest_minutes
    assert definition.aggregations[0] == metric.default_aggregation
    assert set(definition.aggregations) <= set(metric.aggregations)
    assert set(definition.dimensions) <= set(metric.dimensions)


def test_a_served_subset_outside_the_catalogue_is_refused() -> None:
    with pytest.raises(ValueError):
        stand_in_metrics.served(metrics.NORMALIZED_RU, "x", (metrics.MINIMUM,))  # not Azure's default
    with pytest.raises(ValueError):
        stand_in_metrics.served(metrics.AUTOSCALE_MAX, "x", dimensions=(metrics.REGION,))  # §5: no Region


@pytest.mark.parametrize("table", [*logs.TABLES, *logs.AGGREGATED, logs.LEGACY_TABLE])
def test_the_stand_in_serves_catalogued_columns(table: str) -> None:
    shape = stand_in_tables.shape_of(table, Scan())
    if table == logs.LEGACY_TABLE:
        assert set(shape.columns) <= logs.legacy_columns()
    else:
        catalogued = {**logs.TABLES, **logs.AGGREGATED}[table]
        assert set(shape.columns) <= {c.name for c in catalogued.columns} | logs.STANDARD_NAMES

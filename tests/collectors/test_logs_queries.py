"""The KQL of `ruscope logs`, pure: literals quoted the Kusto way, both diagnostic modes, one shape of result."""

from __future__ import annotations

import re

import pytest

from collectors.logs.queries import (
    AGGREGATED_TABLES,
    KEY_OPERATIONS,
    KEY_RU,
    KEY_SIZE,
    QUERIES,
    QUERY_RU,
    QUERY_STATS,
    THROTTLES,
    Params,
    all_queries,
    build,
    kql_string,
    not_served_line,
    queries_for,
    result_columns,
)
from cosmoscore.monitor.logs import AZURE_DIAGNOSTICS, RESOURCE_SPECIFIC

# a Kusto single-quoted literal: anything but a quote or a backslash, or a backslash and one character
LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'")


def unquote(body: str) -> str:
    """Kusto's escapes read back, written independently of the module under test."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m.group(1), m.group(1)), body)


@pytest.mark.parametrize("value", ["db", "it's", "back\\slash", "a\\'b", "x' or 1 == 1 or 'y", "tab\tnew\nline\r", ""])
def test_a_literal_reads_back_as_the_value(value: str) -> None:
    literal = kql_string(value)
    match = LITERAL.fullmatch(literal)
    assert match is not None and unquote(match.group(1)) == value


def test_control_characters_are_refused() -> None:
    with pytest.raises(ValueError, match="control character"):
        kql_string("a\x00b")


def test_an_injection_stays_inside_its_literal() -> None:
    hostile = "shop' or DatabaseName != '"
    kql = build(KEY_RU, Params(hostile, containers=("a'", "b")))
    where = kql.splitlines()[1]
    assert [unquote(s) for s in LITERAL.findall(where)] == [hostile, "a'", "b"]
    assert (
        LITERAL.sub("L", where) == "| where DatabaseName == L and CollectionName in (L, L) and isnotempty(PartitionKey)"
    )


def test_resource_specific_key_ru_is_the_documented_query() -> None:
    """Summed per second and region first (a key's operations together, as Microsoft's hot-key query bins by
    1 s; each region spends its own RU/s), then per bin: its RU and its busiest second (azure-monitor.md §7b
    R24, R50); no count() (a row is not a request)."""
    by = "DatabaseName, CollectionName, PartitionKeyRangeId, PartitionKey"
    assert build(KEY_RU, Params("shop", bin_minutes=5)) == (
        "CDBPartitionKeyRUConsumption\n"
        "| where DatabaseName == 'shop' and isnotempty(PartitionKey)\n"
        f"| summarize RequestCharge = sum(todouble(RequestCharge)) by {by}, RegionName, bin(TimeGenerated, 1s)\n"
        "| summarize RequestCharge = sum(todouble(RequestCharge)), PeakRequestCharge = max(todouble(RequestCharge)) "
        f"by {by}, bin(TimeGenerated, 5m)"
    )


def test_key_operations_groups_by_the_operation_as_microsofts_hot_key_query_does() -> None:
    """`OperationName` in the CDB table, `operationType_s` in AzureDiagnostics (azure-monitor.md §7b R20, R51)."""
    kql = build(KEY_OPERATIONS, Params("shop"))
    by = "DatabaseName, CollectionName, PartitionKeyRangeId, PartitionKey, OperationName"
    assert f"by {by}, RegionName, bin(TimeGenerated, 1s)\n" in kql and kql.endswith(f"by {by}, bin(TimeGenerated, 5m)")
    legacy = build(KEY_OPERATIONS, Params("shop", mode=AZURE_DIAGNOSTICS))
    assert "by databaseName_s, collectionName_s, partitionKeyRangeId_s, partitionKey_s, operationType_s, " in legacy
    assert "isnotempty(partitionKey_s)" in legacy and "OperationName" not in legacy
    assert result_columns(KEY_OPERATIONS, AZURE_DIAGNOSTICS)["operationType_s"] == "OperationName"


def test_key_size_takes_the_latest_snapshot_not_a_sum() -> None:
    kql = build(KEY_SIZE, Params("shop", top=7))
    assert "arg_max(TimeGenerated, SizeKb) by DatabaseName, CollectionName, PartitionKey" in kql
    assert "sum(" not in kql and "bin(" not in kql and kql.endswith("| top 7 by SizeKb desc")


def test_legacy_mode_reads_azure_diagnostics_by_category() -> None:
    kql = build(THROTTLES, Params("shop", account="acct", bin_minutes=15, mode=AZURE_DIAGNOSTICS))
    assert kql == (
        "AzureDiagnostics\n"
        "| where Category == 'DataPlaneRequests' and Resource =~ 'acct' and databaseName_s == 'shop'\n"
        "| summarize Requests = count(), Throttled = countif(statusCode_s == '429') "
        "by databaseName_s, collectionName_s, partitionId_g, OperationName, bin(TimeGenerated, 15m)"
    )
    renames = result_columns(THROTTLES, AZURE_DIAGNOSTICS)
    assert (
        renames["partitionId_g"] == "PartitionId"
        and result_columns(KEY_SIZE, AZURE_DIAGNOSTICS)["sizeKb_d"] == "SizeKb"
    )
    assert result_columns(THROTTLES, RESOURCE_SPECIFIC) == {}


def test_legacy_query_stats_use_that_category_s_lower_case_columns() -> None:
    """QueryRuntimeStatistics writes databasename_s, not databaseName_s (azure-monitor.md §6.5, §7b R6)."""
    kql = build(QUERY_STATS, Params("shop", mode=AZURE_DIAGNOSTICS))
    assert "databasename_s == 'shop'" in kql and "databaseName_s" not in kql
    assert "by databasename_s, collectionname_s, partitionkeyrangeid_s, querytext_s," in kql
    assert result_columns(QUERY_STATS, AZURE_DIAGNOSTICS)["collectionname_s"] == "CollectionName"


def test_resource_specific_throttles_compare_the_int_status() -> None:
    assert "Throttled = countif(StatusCode == 429) by" in build(THROTTLES, Params("shop", account="acct"))
    assert "AccountName =~ 'acct'" in build(THROTTLES, Params("shop", account="acct"))  # case-insensitive


@pytest.mark.parametrize("bad", [Params("db", bin_minutes=0), Params("db", top=0), Params("db", mode="legacy")])
def test_bad_parameters_are_refused(bad: Params) -> None:
    with pytest.raises(ValueError):
        build(KEY_RU, bad)


def test_all_queries_covers_every_query_in_both_modes() -> None:
    found = all_queries()
    aggregated = 2 * len(AGGREGATED_TABLES)  # throttles over each aggregated table (resource-specific only)
    assert len({name for name, _ in found}) == len(found) == 2 * 2 * len(QUERIES) + aggregated
    legacy = [kql for _, kql in found if kql.startswith("AzureDiagnostics")]
    assert len(legacy) == (len(found) - aggregated) // 2
    assert all(not re.search(r"\bCDB", kql) for kql in legacy)
    # only the subset the stand-in understands: no let, take, parse_json or now(); a join and an extend only
    # in query_ru (Microsoft's top-queries join, §7b R48)
    assert not any(re.search(r"\b(let|take|parse_json|now)\b", kql) for _, kql in found)
    joined = [name for name, kql in found if re.search(r"\b(join|extend)\b", kql)]
    assert joined and all(name.startswith(QUERY_RU + "[") for name in joined)


def test_throttles_count_every_request_and_the_429s_among_them() -> None:
    """A row of CDBDataPlaneRequests is one request (azure-monitor.md §7b R47): the rate's denominator is
    count() over every status, so no `where` on the status; not dcount(ActivityId), which counts operations
    (an SDK's retries share one ActivityId, R46)."""
    kql = build(THROTTLES, Params("shop", bin_minutes=1))
    assert kql == (
        "CDBDataPlaneRequests\n"
        "| where DatabaseName == 'shop'\n"
        "| summarize Requests = count(), Throttled = countif(StatusCode == 429) "
        "by DatabaseName, CollectionName, PartitionId, OperationName, bin(TimeGenerated, 1m)"
    )


def test_aggregated_throttles_sum_the_rows_request_counts() -> None:
    """A row of CDBDataPlaneRequests5M sums an interval's requests (azure-monitor.md §7b R61, R62): the rate's
    terms are sums of RequestCount, over all rows and over the 429 rows."""
    kql = build(THROTTLES, Params("shop", bin_minutes=15, tables="aggregated-5m"))
    assert kql == (
        "CDBDataPlaneRequests5M\n"
        "| where DatabaseName == 'shop'\n"
        "| summarize Requests = sum(todouble(RequestCount)), Throttled = sumif(RequestCount, StatusCode == 429) "
        "by DatabaseName, CollectionName, PartitionId, OperationName, bin(TimeGenerated, 15m)"
    )
    assert queries_for("aggregated-15m") == (THROTTLES,) and queries_for("detailed") == QUERIES
    assert not_served_line("detailed") is None


@pytest.mark.parametrize(
    "bad",
    [
        Params("db", bin_minutes=5, tables="aggregated-15m"),  # a bin of a third of an interval
        Params("db", bin_minutes=15, tables="aggregated-5m", mode=AZURE_DIAGNOSTICS),  # no legacy form
    ],
)
def test_aggregated_parameters_outside_the_tables_grain_or_mode_are_refused(bad: Params) -> None:
    with pytest.raises(ValueError):
        build(THROTTLES, bad)
    with pytest.raises(KeyError, match="not served by CDBDataPlaneRequests"):
        build(KEY_RU, Params("db", bin_minutes=15, tables="aggregated-15m"))


def test_query_ru_joins_the_query_text_to_each_requests_charge_on_activity_id() -> None:
    """Microsoft's top-queries-by-RU join (azure-monitor.md §7b R48), binned: one statistics row per
    ActivityId and text before the join (so an operation is never counted twice from that side), every
    request on the other (a 429 and its retry share the id, R46), ruscope's own user agent told apart."""
    kql = build(QUERY_RU, Params("shop", containers=("orders",), account="acct", bin_minutes=5))
    assert kql == (
        "CDBQueryRuntimeStatistics\n"
        "| where AccountName =~ 'acct' and DatabaseName == 'shop' and CollectionName in ('orders')\n"
        "| summarize by ActivityId, DatabaseName, CollectionName, PartitionKeyRangeId, QueryText\n"
        "| join kind=inner (CDBDataPlaneRequests"
        " | where AccountName =~ 'acct' and DatabaseName == 'shop' and CollectionName in ('orders')"
        " | extend OwnTraffic = UserAgent has 'ruscope'"
        " | project ActivityId, RequestCharge, StatusCode, TimeGenerated, OwnTraffic) on ActivityId\n"
        "| summarize RequestCharge = sum(todouble(RequestCharge)), Requests = count(), "
        "Throttled = countif(StatusCode == 429) "
        "by DatabaseName, CollectionName, PartitionKeyRangeId, QueryText, OwnTraffic, bin(TimeGenerated, 5m)"
    )


def test_legacy_query_ru_spells_each_side_in_its_category_s_case() -> None:
    """The statistics side is lower case (databasename_s, querytext_s), the requests side camel case, the
    status a string (§6.5, §7b R6); the result's columns read back as the resource-specific names."""
    kql = build(QUERY_RU, Params("shop", mode=AZURE_DIAGNOSTICS))
    assert "Category == 'QueryRuntimeStatistics' and databasename_s == 'shop'" in kql
    assert "Category == 'DataPlaneRequests' and databaseName_s == 'shop'" in kql
    assert "userAgent_s has 'ruscope'" in kql and "on activityId_g" in kql
    assert "countif(statusCode_s == '429')" in kql
    assert result_columns(QUERY_RU, AZURE_DIAGNOSTICS)["querytext_s"] == "QueryText"

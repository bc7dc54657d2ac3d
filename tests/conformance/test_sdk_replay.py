"""Replay every conformance case (tests/conformance/cases.py) through the real azure-cosmos SDK.

One emulator per module; each dataset lives in a `/pk` container with 4 physical partitions, and the
"main" dataset also in a hierarchical (`/tenant`, `/user`, MultiHash) container with 4 partitions.
Every "main" case runs against both. The "main" containers carry the composite index (user ASC, n DESC)
that the service requires for case order_by_two_keys. Expected rows are the cases' own (never the
engine's); rows are compared as tests/sql/test_conformance_engine.py does, with the service's system
properties (`_rid`, `_ts`, ...) dropped from whole documents.

Rules, per case, in this order:

- error cases: the cross-partition query raises CosmosHttpResponseError 400 whose text contains the
  case's code and message fragment.
- queries without FROM read no documents; cross-partition the emulator evaluates them once per physical
  partition (pinned in test_sdk_routing.test_query_without_from_runs_once_per_range; believed to be
  the gateway's behaviour too, not verified against the service), so the cases' single rows only hold
  within one range: they are replayed with a partition key (the first document's) and must give the
  case's rows exactly, from the owner range only.
- cases the SDK cannot run cross-partition (`needs_single_partition`: the SQL, outside subqueries, has
  GROUP BY, or an aggregate that is not the whole `SELECT VALUE AGG(...)` expression): the
  cross-partition query must raise a 400 (the service rejects cross-partition GROUP BY; the SDK itself
  refuses non-VALUE aggregates). They then also run single-partition where that is provably
  equivalent to the whole dataset:
    R1 the WHERE clause pins exactly one partition key (or, hierarchical, one prefix that lies in one
       physical partition): run with that `partition_key`, compare with the case's expected rows;
    R2 the GROUP BY list contains the first partition-key path, so no group spans two keys (or
       prefixes): run once per key (prefix) of the dataset, compare the union with the expected rows.
  Otherwise only the 400 is checked. (Expected callables are not re-evaluated on per-key subsets: the
  one such case, group_by_with_sum_max, assumes all three tenants exist; R2 covers it on the
  hierarchical container.)
- SDK_LIMITS: cases whose documented result azure-cosmos 4.17.1's client-side operators cannot produce
  over several ranges, whatever the server answers (each entry names the SDK code). On the 4-range
  containers they run cross-partition with the routing checked, the rows compared only when the SDK
  does not hit its limitation; they also run on a one-range container (`{dataset}_one`), where ORDER BY
  merges nothing and its SDK result is compared, and where for DISTINCT and aggregates the emulator's own
  data page (before the SDK's operators) is compared with the expected rows.
- all other cases: run with `enable_cross_partition_query=True`, compare rows (ordered when
  `case.ordered`), and check routing: the pkranges that answered the data pages (response header
  `x-ms-documentdb-partitionkeyrangeid`, seen by a client-level raw_response_hook) must equal the
  ranges owning the keys the WHERE clause pins (`classify_routing`, a deliberately simple regex reading,
  with owners computed by the SDK's own EPK code), or all ranges when the WHERE clause never mentions
  the key. Where the classifier cannot decide, only: some range was called, all called ranges exist,
  and every range holding a document named by the expected rows (ids) was called.
- `test_case_paged`: the cases of the last rule again with `max_item_count=2` (continuations within and
  across ranges): same rows, same routing, no page over 2 items.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from azure.cosmos import exceptions

from tests.conformance.cases import CASES, Case
from tests.conformance.dataset import DATASETS
from tests.conformance.sdk_harness import (
    Harness,
    Target,
    assert_rows,
    classify_routing,
    doc_ids_in_rows,
    error_texts,
    group_by_expressions,
    needs_single_partition,
    root_alias,
)

MERGE = (
    "ORDER BY over several ranges: the SDK's k-way merge refuses heads of different types "
    "(document_producer._OrderByDocumentProducerComparator._validate_orderby_items: 'Expected X, but got Y.') "
    "and cannot order arrays or objects (_OrderByHelper.getTypeOrd: 'unknown type')"
)
DISTINCT = (
    "DISTINCT: the SDK de-duplicates on make_hash(), which maps every numbers.Number to float and bool is a "
    "Number in Python, so true and 1 collapse (endpoint_component._QueryExecutionDistinctUnorderedEndpointComponent)"
)
AGGREGATE = (
    "VALUE aggregate whose result is undefined: the SDK skips undefined partials ({}) and yields None when no "
    "partial is defined (endpoint_component._QueryExecutionAggregateEndpointComponent, aggregators.py), so it "
    "returns [null] or the aggregate of the defined ranges instead of no row"
)
SDK_LIMITS: dict[str, str] = {
    "E8_order_by_type_order": MERGE,
    "E8_order_by_type_order_desc": MERGE,
    "order_by_mixed_types_main": MERGE,
    "order_by_two_keys": MERGE,  # c.n is a string in d15: the second key's types differ between ranges
    "distinct_type_strict": DISTINCT,
    "E7_sum_with_non_numbers_undefined": AGGREGATE,
    "E7_avg_all_missing_empty": AGGREGATE,
    "E7_min_with_array_undefined": AGGREGATE,
    "max_empty_input_no_row": AGGREGATE,
}
ONE_RANGE_DATASETS = tuple(sorted({c.dataset for c in CASES if c.name in SDK_LIMITS}))


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    h = Harness.start(one_range=ONE_RANGE_DATASETS)
    for t in h.targets.values():
        want = 1 if t.name.endswith("_one") else 4
        assert len(t.ranges) >= want, f"{t.name}: {len(t.ranges)} partitions"
    yield h
    h.stop()


def has_from(sql: str) -> bool:
    return re.search(r"\bFROM\b", sql, re.I) is not None


def targets_of(case: Case) -> list[str]:
    if case.error is not None:
        return ["main_pk"]
    names = [f"{case.dataset}_pk"] + (["main_hier"] if case.dataset == "main" else [])
    return names + ([f"{case.dataset}_one"] if case.name in SDK_LIMITS else [])


def expected_rows(case: Case) -> list:
    return case.expected(DATASETS[case.dataset]) if callable(case.expected) else case.expected  # type: ignore[misc]


RUNS = [(case, t) for case in CASES for t in targets_of(case)]


def check_routing(h: Harness, target: Target, case: Case, expected: list) -> None:
    called = h.recorder.ranges_called(target.name)
    routing = classify_routing(case.sql, case.params, target.paths)
    want = routing.expected_ranges(target)
    if want is not None:
        assert called == want, f"routing {routing}: expected ranges {sorted(want)}, called {sorted(called)}"
        return
    assert called, "no query page was served"
    assert called <= target.all_ranges, f"unknown ranges {called - target.all_ranges}"
    by_id = {d["id"]: d for d in target.docs}
    holders = {target.range_of_doc(by_id[i]) for i in doc_ids_in_rows(expected, target.docs)}
    assert holders <= called, f"ranges holding expected rows {sorted(holders)} not all called: {sorted(called)}"


def single_partition_keys(target: Target, case: Case) -> tuple[str, list] | None:
    """("each", [key]) under rule R1, ("union", keys) under R2, None when neither applies."""
    routing = classify_routing(case.sql, case.params, target.paths)
    if len(routing.values) == 1:  # R1
        (value,) = routing.values
        key = list(value) if isinstance(value, tuple) else value
        if len(target.ranges_for(key)) == 1:
            return "each", [key]
    alias = root_alias(case.sql)
    if alias and f"{alias}.{target.paths[0]}".lower() in group_by_expressions(case.sql):  # R2
        firsts = sorted({d[target.paths[0]] for d in target.docs if target.paths[0] in d})
        keys = [[v] if target.hierarchical else v for v in firsts]
        if all(len(target.ranges_for(k)) == 1 for k in keys):
            return "union", keys
    return None


def run_single_partition_class(h: Harness, target: Target, case: Case) -> None:
    with pytest.raises(exceptions.CosmosHttpResponseError) as info:
        h.query(target, case.sql, case.params)
    assert info.value.status_code == 400, error_texts(info.value)
    assert info.value.sub_status != 1004, "the SDK's internal fan-out trigger leaked out"
    assert re.search(r"group\s*by|aggregate", error_texts(info.value), re.I), error_texts(info.value)
    plan = single_partition_keys(target, case)
    if plan is None:
        return
    mode, keys = plan
    union: list = []
    for key in keys:
        rows = h.query(target, case.sql, case.params, partition_key=key)
        assert h.recorder.ranges_called(target.name) == target.ranges_for(key), f"partition_key={key!r}"
        if mode == "each":
            assert_rows(rows, expected_rows(case), case.ordered, f"partition_key={key!r}")
        union.extend(rows)
    if mode == "union":
        assert_rows(union, expected_rows(case), case.ordered, f"union of the runs with partition_key in {keys}")


def page_values(h: Harness, target: Target) -> list:
    """The emulator's own rows on one range, with VALUE-aggregate partials `[{"item": v, ...}]` read as v
    (no row when `item` is undefined; an AVG partial {"sum", "count"} as sum / count, none when count is 0)."""
    out: list = []
    for row in [r for page in h.recorder.data_pages(target.name) for r in page.documents]:
        if isinstance(row, list) and len(row) == 1 and isinstance(row[0], dict) and set(row[0]) <= {"item", "item2"}:
            if "item" not in row[0]:
                continue  # undefined partial
            item = row[0]["item"]
            if isinstance(item, dict) and set(item) == {"sum", "count"}:
                if item["count"]:
                    out.append(item["sum"] / item["count"])
                continue
            out.append(item)
        else:
            out.append(row)
    return out


def run_sdk_limited(h: Harness, target: Target, case: Case) -> None:
    expected = expected_rows(case)
    reason = SDK_LIMITS[case.name]
    if target.name.endswith("_one"):
        rows = h.query(target, case.sql, case.params)
        assert h.recorder.ranges_called(target.name) == target.all_ranges
        if reason is MERGE:
            assert_rows(rows, expected, case.ordered, "one range: the SDK merges nothing")
        else:
            assert_rows(page_values(h, target), expected, case.ordered, "the emulator's data page on one range")
        return
    try:
        rows = h.query(target, case.sql, case.params)
    except (ValueError, TypeError) as err:  # the SDK stops merging before it has peeked every range
        assert reason is MERGE and ("Expected" in str(err) or "unknown type" in str(err)), repr(err)
        want = classify_routing(case.sql, case.params, target.paths).expected_ranges(target) or target.all_ranges
        assert h.recorder.ranges_called(target.name) <= want
        return
    if reason is MERGE:
        assert_rows(rows, expected, case.ordered)
    check_routing(h, target, case, expected)


@pytest.mark.parametrize(("case", "target_name"), RUNS, ids=[f"{t}-{case.name}" for case, t in RUNS])
def test_case(harness: Harness, case: Case, target_name: str) -> None:
    target = harness.targets[target_name]
    if case.error is not None:
        code, fragment = case.error
        with pytest.raises(exceptions.CosmosHttpResponseError) as info:
            harness.query(target, case.sql, case.params)
        text = error_texts(info.value)
        assert info.value.status_code == 400, text
        assert str(code) in text and fragment in text, f"want {code} / {fragment!r} in:\n{text}"
        return
    if not has_from(case.sql):
        key = target.key_of(target.docs[0])
        rows = harness.query(target, case.sql, case.params, partition_key=key)
        assert_rows(rows, expected_rows(case), case.ordered, f"partition_key={key!r}")
        assert harness.recorder.ranges_called(target.name) == target.ranges_for(key)
        return
    if needs_single_partition(case.sql):
        run_single_partition_class(harness, target, case)
        return
    if case.name in SDK_LIMITS:
        run_sdk_limited(harness, target, case)
        return
    expected = expected_rows(case)
    rows = harness.query(target, case.sql, case.params)
    assert_rows(rows, expected, case.ordered)
    check_routing(harness, target, case, expected)


PAGED = [
    (case, t)
    for case, t in RUNS
    if case.error is None
    and has_from(case.sql)
    and not needs_single_partition(case.sql)
    and case.name not in SDK_LIMITS
]


@pytest.mark.parametrize(("case", "target_name"), PAGED, ids=[f"{t}-{c.name}" for c, t in PAGED])
def test_case_paged(harness: Harness, case: Case, target_name: str) -> None:
    target = harness.targets[target_name]
    expected = expected_rows(case)
    rows = harness.query(target, case.sql, case.params, max_item_count=2)
    assert_rows(rows, expected, case.ordered, "max_item_count=2")
    check_routing(harness, target, case, expected)
    sizes = [len(c.documents) for c in harness.recorder.data_pages(target.name)]
    assert all(n <= 2 for n in sizes), f"page sizes {sizes} exceed max_item_count=2"


def test_every_case_is_replayed() -> None:
    assert {c.name for c, _ in RUNS} == {c.name for c in CASES}
    assert set(SDK_LIMITS) <= {c.name for c in CASES}

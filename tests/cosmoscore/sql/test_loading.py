"""What an index-served query loads (cosmoscore.sql.loading; ru-cost-model.md §3.3 bounded queries, Q11, Q20)."""

from __future__ import annotations

import pytest

from cosmoscore.indexing import IndexPolicy
from cosmoscore.sql import index_use, parse_query
from cosmoscore.sql.loading import Loading, loading

DEFAULT = IndexPolicy.from_json(None)
COMPOSITE = IndexPolicy.from_json(
    {
        "indexingMode": "consistent",
        "includedPaths": [{"path": "/*"}],
        "compositeIndexes": [[{"path": "/tenantId"}, {"path": "/createdAt", "order": "descending"}]],
    }
)
EXCLUDED = IndexPolicy.from_json(
    {"indexingMode": "consistent", "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/status/?"}]}
)
NONE = IndexPolicy.from_json({"indexingMode": "none"})


def load(sql: str, policy: IndexPolicy = DEFAULT, **params: object) -> Loading:
    query = parse_query(sql)
    return loading(query, params, index_use(query, policy.is_indexed), policy.is_indexed, policy.composites)


@pytest.mark.parametrize(
    ("sql", "cap"),
    [
        ("SELECT TOP 20 * FROM c WHERE c.tenantId = 't'", 20),
        ("SELECT * FROM c WHERE c.tenantId = 't' OFFSET 40 LIMIT 20", 60),  # Q20: the skipped ones load too
        ("SELECT TOP 5 c.id FROM c ORDER BY c.createdAt DESC", 5),
        ("SELECT * FROM c WHERE c.n > 3 ORDER BY c.n OFFSET 10 LIMIT 10", 20),
        ("SELECT * FROM c WHERE c.tenantId = 't'", None),  # unbounded: every match
        ("SELECT TOP 5 VALUE COUNT(1) FROM c", None),  # an aggregate reads all it counts
        ("SELECT DISTINCT TOP 5 c.cat FROM c", None),
        ("SELECT TOP 5 c.cat, COUNT(1) AS n FROM c GROUP BY c.cat", None),
        ("SELECT TOP 5 * FROM c WHERE UPPER(c.cat) = 'X'", None),  # a scan
        ("SELECT TOP 5 t FROM c JOIN t IN c.tags", None),  # rows are not documents
    ],
)
def test_the_cap_is_the_row_bound_of_a_query_that_can_stop_there(sql: str, cap: int | None) -> None:
    assert load(sql).cap == cap


def test_parameters_and_unindexed_paths() -> None:
    assert load("SELECT TOP @n * FROM c WHERE c.a = 1", n=7).cap == 7
    assert load("SELECT TOP @n * FROM c WHERE c.a = 1") == Loading()  # unresolved: the query reports it
    assert load("SELECT TOP 5 * FROM c WHERE c.status = 'x'", EXCLUDED).cap is None  # needs a scan
    assert load("SELECT TOP 5 * FROM c ORDER BY c.n", NONE).cap is None  # no index to read in order


def test_a_filter_and_order_by_on_other_paths_need_their_composite_index() -> None:  # Q11
    sql = "SELECT TOP 20 c.id FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC"
    missing = load(sql, t="a")
    assert missing.order_without_composite and missing.cap == 20
    assert missing.composite == ((("tenantId",), False), (("createdAt",), True))
    assert load(sql, COMPOSITE, t="a") == Loading(20, False, None)
    asc = "SELECT TOP 20 c.id FROM c WHERE c.tenantId = 'a' ORDER BY c.createdAt"
    assert not load(asc, COMPOSITE).order_without_composite  # all directions inverted: served
    both = "SELECT * FROM c WHERE c.tenantId = 'a' ORDER BY c.tenantId, c.createdAt DESC"
    assert not load(both, COMPOSITE).order_without_composite  # the filter path leads the ORDER BY (Q11's fix)


@pytest.mark.parametrize(
    ("sql", "missing"),
    [
        ("SELECT * FROM c ORDER BY c.createdAt", False),  # no filter: the range index
        ("SELECT * FROM c WHERE c.createdAt > '2026' ORDER BY c.createdAt", False),  # the same path
        ("SELECT * FROM c WHERE c.createdAt > '2026' AND true ORDER BY c.createdAt", False),  # the SDK's rewrite
        ("SELECT c.id FROM c WHERE IS_DEFINED(c.createdAt) ORDER BY c.createdAt", False),
        ("SELECT * FROM c WHERE c.tenantId = 'a' ORDER BY c.total", True),  # not the composite's paths
        ("SELECT * FROM c WHERE c.cat = 'a' ORDER BY c.createdAt DESC", True),
        ("SELECT * FROM c WHERE c.tenantId > 'a' ORDER BY c.createdAt DESC", True),  # a range: not in order
        ("SELECT * FROM c WHERE c.tenantId IN ('a', 'b') ORDER BY c.createdAt DESC", True),
        ("SELECT * FROM c WHERE CONTAINS(c.name, 'x') ORDER BY c.createdAt DESC", True),
        ("SELECT * FROM c WHERE c.tenantId = 'a' AND c.cat = 'x' ORDER BY c.createdAt DESC", True),
        ("SELECT * FROM c WHERE UPPER(c.name) = 'X' ORDER BY c.createdAt DESC", False),  # a scan: charged as one
    ],
)
def test_which_filters_a_composite_index_serves_with_the_order(sql: str, missing: bool) -> None:
    assert load(sql, COMPOSITE).order_without_composite is missing

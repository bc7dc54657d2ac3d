"""partition_key_filter (routing) and index_use (index vs scan), expectations by hand from
cosmos-wire-protocol §1.7, ru-cost-model §3.3 and cosmos-sql-semantics §5.8."""

from __future__ import annotations

import pytest

from cosmoscore.sql import index_use, parse_query, partition_key_filter

PK = [["pk"]]
HPK = [["tenantId"], ["userId"]]


def keys(where: str, key_paths: list[list[str]] = PK, params: dict | None = None):
    return partition_key_filter(parse_query(f"SELECT * FROM c WHERE {where}"), key_paths, params).keys


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("c.pk = 'x'", (("x",),)),
        ("'x' = c.pk", (("x",),)),
        ('c["pk"] = 5', ((5,),)),
        ("c.pk IN ('a', 'b')", (("a",), ("b",))),
        ("c.pk = 'a' OR c.pk = 'b'", (("a",), ("b",))),
        ("c.pk = 'a' AND c.n > 3 AND CONTAINS(c.s, 'x')", (("a",),)),
        ("(c.pk = 'a' OR c.pk = 'b') AND c.n = 1", (("a",), ("b",))),
        ("c.pk = 'a' AND c.pk = 'b'", ()),
        ("c.pk = null", ((None,),)),
    ],
)
def test_single_key_routing(where: str, expected: tuple) -> None:
    assert keys(where) == expected


@pytest.mark.parametrize(
    "where",
    [
        "c.n = 1",
        "c.pk > 'a'",
        "c.pk = 'a' OR c.n = 1",
        "NOT (c.pk = 'a')",
        "c.pk != 'a'",
        "c.pk NOT IN ('a')",
        "c.pk = c.other",
        "UPPER(c.pk) = 'A'",
        "c.pk.sub = 'a'",
        "c.pk = ['a']",
    ],
)
def test_anything_unproven_fans_out(where: str) -> None:
    assert keys(where) is None


def test_parameters_resolve() -> None:
    assert keys("c.pk = @p", PK, {"@p": "v"}) == (("v",),)
    assert keys("c.pk IN (@a, @b)", PK, {"@a": 1, "@b": 2}) == ((1,), (2,))
    assert keys("c.pk = @missing", PK, {}) is None


def test_hierarchical_prefixes() -> None:
    assert keys("c.tenantId = 't' AND c.userId = 'u'", HPK) == (("t", "u"),)
    assert keys("c.tenantId = 't'", HPK) == (("t",),)
    assert keys("c.userId = 'u' AND c.tenantId = 't'", HPK) == (("t", "u"),)
    assert keys("c.userId = 'u'", HPK) is None
    assert keys("c.tenantId = 't' AND (c.userId = 'u1' OR c.userId = 'u2')", HPK) == (
        ("t", "u1"),
        ("t", "u2"),
    )
    assert keys("(c.tenantId = 'a' AND c.userId = 'u') OR c.tenantId = 'b'", HPK) == (("a", "u"), ("b",))
    assert keys("c.tenantId = 'a' OR c.userId = 'u'", HPK) is None


def test_no_where_or_non_container_source_fans_out() -> None:
    assert partition_key_filter(parse_query("SELECT * FROM c"), PK, None).keys is None
    assert partition_key_filter(parse_query("SELECT * FROM t IN c.tags WHERE t = 'x'"), [[]], None).keys is None
    assert partition_key_filter(parse_query("SELECT * FROM r WHERE r.pk = 1"), PK, None).keys is not None


def all_indexed(path: tuple[str, ...]) -> bool:
    return True


def use(text: str, is_indexed=all_indexed):
    return index_use(parse_query(text), is_indexed)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM c",
        "SELECT * FROM c WHERE c.pk = 'a' AND c.n > 3",
        "SELECT * FROM c WHERE c.n IN (1, 2) OR c.n BETWEEN 5 AND 9",
        "SELECT * FROM c WHERE STARTSWITH(c.name, 'A') AND ARRAY_CONTAINS(c.tags, 'x') AND IS_DEFINED(c.z)",
        "SELECT * FROM c WHERE c.flag",
        "SELECT * FROM c WHERE NOT (c.n = 1)",
        "SELECT VALUE COUNT(1) FROM c WHERE c.a.b = @p",
        "SELECT * FROM c WHERE CONTAINS(c.name, 'x')",
        "SELECT c.id FROM c JOIN t IN c.tags WHERE t = 'red'",
    ],
)
def test_index_served_filters(text: str) -> None:
    result = use(text)
    assert result.served_by_index, result.scan_reasons


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("SELECT * FROM c WHERE UPPER(c.name) = 'A'", "UPPER"),
        ("SELECT * FROM c WHERE LOWER(c.name) = 'a'", "LOWER"),
        ("SELECT * FROM c WHERE CONCAT(c.a, c.b) = 'ab'", "CONCAT"),
        ("SELECT * FROM c WHERE c.a = c.b", "non-constant"),
        ("SELECT * FROM c WHERE c.a + 1 > 2", "computed"),
        ("SELECT c.pk, COUNT(1) FROM c GROUP BY c.pk", "GROUP BY"),
        ("SELECT VALUE COUNT(1) FROM c WHERE CONTAINS(c.name, 'x')", "aggregate"),
    ],
)
def test_scans(text: str, reason: str) -> None:
    result = use(text)
    assert not result.served_by_index
    assert any(reason in r for r in result.scan_reasons), result.scan_reasons


def test_unindexed_path_forces_a_scan_and_is_listed() -> None:
    result = use(
        "SELECT * FROM c WHERE c.pk = 'a' AND c.address.city = 'Oslo' ORDER BY c.ts",
        lambda p: p != ("address", "city"),
    )
    assert not result.served_by_index
    assert result.indexed_paths == (("pk",), ("ts",)) and result.unindexed_paths == (("address", "city"),)


def test_order_by_path_not_indexed_does_not_force_a_scan() -> None:
    result = use("SELECT * FROM c WHERE c.pk = 'a' ORDER BY c.ts", lambda p: p != ("ts",))
    assert result.served_by_index and result.unindexed_paths == (("ts",),)


def test_join_alias_paths_map_to_array_elements() -> None:
    result = use("SELECT c.id FROM c JOIN i IN c.items WHERE i.sku = 'A'")
    assert result.indexed_paths == (("items", "[]", "sku"),)

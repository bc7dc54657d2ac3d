"""Computed properties through the unmodified azure-cosmos SDK: kept on the container, returned by read(),
usable in every clause of a query, never stored in or returned with the item, a bad definition refused with
400 (cosmos-sql-semantics.md §5.9, CP1-CP3)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator, compact_journal, open_engine
from tests.conftest import sdk_client

LOWER = {"name": "cp_lowerName", "query": "SELECT VALUE LOWER(c.name) FROM c"}
DISCOUNT = {"name": "cp_discounted", "query": "SELECT VALUE c.price * 0.8 FROM c"}
PEOPLE = [
    {"id": "1", "pk": "p", "name": "Charlie", "price": 100},
    {"id": "2", "pk": "p", "name": "alice", "price": 300},
    {"id": "3", "pk": "q", "name": "Bob", "price": 200},
]


@pytest.fixture
def container(client: CosmosClient):
    db = client.create_database("shop")
    created = db.create_container("people", PartitionKey("/pk"), computed_properties=[LOWER, DISCOUNT])
    for person in PEOPLE:
        created.create_item(person)
    return created


def _query(container, sql: str, **kwargs) -> list:
    return list(container.query_items(sql, enable_cross_partition_query=True, **kwargs))


def test_the_container_keeps_its_computed_properties_and_read_returns_them(container) -> None:
    assert container.read()["computedProperties"] == [LOWER, DISCOUNT]


def test_a_query_filters_orders_and_projects_by_a_computed_property(container) -> None:
    assert _query(container, "SELECT VALUE c.id FROM c WHERE c.cp_lowerName = 'alice'") == ["2"]
    assert _query(container, "SELECT c.cp_lowerName FROM c ORDER BY c.cp_lowerName") == [
        {"cp_lowerName": "alice"},
        {"cp_lowerName": "bob"},
        {"cp_lowerName": "charlie"},
    ]
    assert _query(container, "SELECT c.cp_lowerName AS lowered FROM c WHERE c.id = '1'") == [{"lowered": "charlie"}]
    assert _query(container, "SELECT VALUE SUM(c.cp_discounted) FROM c") == [480]
    assert _query(container, "SELECT TOP 1 VALUE c.cp_lowerName FROM c ORDER BY c.cp_lowerName DESC") == ["charlie"]
    single = container.query_items("SELECT VALUE c.cp_lowerName FROM c", partition_key="q")
    assert list(single) == ["bob"]


def test_a_group_by_and_a_subquery_see_the_computed_property(container) -> None:
    by_name = "SELECT c.cp_lowerName, SUM(c.cp_discounted) AS total FROM c GROUP BY c.cp_lowerName"
    grouped = list(container.query_items(by_name, partition_key="p"))  # the SDK runs GROUP BY in one partition
    assert sorted(grouped, key=lambda row: row["total"]) == [
        {"cp_lowerName": "charlie", "total": 80},
        {"cp_lowerName": "alice", "total": 240},
    ]
    assert _query(container, "SELECT VALUE c.id FROM c WHERE (SELECT VALUE c.cp_lowerName) = 'bob'") == ["3"]


def test_wildcard_projections_and_point_reads_return_the_stored_item_without_them(container) -> None:
    everything = _query(container, "SELECT * FROM c WHERE c.id = '2'")
    assert "cp_lowerName" not in everything[0] and everything[0]["name"] == "alice"
    assert "cp_lowerName" not in container.read_item("2", "p")
    assert "cp_lowerName" not in _query(container, "SELECT VALUE c FROM c WHERE c.id = '2'")[0]


def test_a_computed_property_shadows_a_stored_property_of_the_same_name(client: CosmosClient) -> None:
    shadow = {"name": "name", "query": "SELECT VALUE UPPER(c.first) FROM c"}
    db = client.create_database("d")
    container = db.create_container("c", PartitionKey("/pk"), computed_properties=[shadow])
    container.create_item({"id": "1", "pk": "p", "name": "Ann", "first": "Bea"})
    assert _query(container, "SELECT VALUE c.name FROM c") == ["BEA"]  # CP3: the query reads the computed one
    assert _query(container, "SELECT * FROM c")[0]["name"] == "Ann"  # the wildcard returns the stored one


@pytest.mark.parametrize(
    ("definition", "says"),
    [
        ({"name": "id", "query": "SELECT VALUE LOWER(c.name) FROM c"}, "reserved"),
        ({"name": "cp_a", "query": "SELECT LOWER(c.name) FROM c"}, "SELECT VALUE"),
        ({"name": "cp_a", "query": "SELECT VALUE c.a FROM c WHERE c.b = 1"}, "WHERE"),
        ({"name": "cp_a", "query": "SELECT VALUE COUNT(1) FROM c"}, "COUNT"),
        ({"name": "cp_a", "query": "SELECT VALUE GetCurrentDateTime() FROM c"}, "GetCurrentDateTime"),
        ({"name": "cp_a", "query": "SELECT VALUE t FROM c JOIN t IN c.tags"}, "JOIN"),
        ({"name": "cp_a", "query": "SELECT VALUE FROM c"}, "does not parse"),
        ({"name": "cp_a"}, "exactly 'name' and 'query'"),
    ],
)
def test_a_badly_shaped_definition_is_refused_with_400_naming_it(
    client: CosmosClient, definition: dict, says: str
) -> None:
    db = client.create_database("d")
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        db.create_container("c", PartitionKey("/pk"), computed_properties=[definition])
    assert refused.value.status_code == 400
    assert says in refused.value.message
    assert [c["id"] for c in db.list_containers()] == []  # nothing was created


def test_more_than_20_or_a_repeated_name_is_refused(client: CosmosClient) -> None:
    db = client.create_database("d")
    many = [{"name": f"cp_{n}", "query": "SELECT VALUE c.a FROM c"} for n in range(21)]
    twice = [LOWER, dict(LOWER)]
    uses_other = [LOWER, {"name": "cp_b", "query": "SELECT VALUE c.cp_lowerName FROM c"}]
    for definitions, says in ((many, "at most 20"), (twice, "more than once"), (uses_other, "uses computed")):
        with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
            db.create_container("c", PartitionKey("/pk"), computed_properties=definitions)
        assert refused.value.status_code == 400 and says in refused.value.message


def test_a_replace_sets_them_as_given_and_an_invalid_replace_changes_nothing(client: CosmosClient, container) -> None:
    db = client.get_database_client("shop")
    upper = {"name": "cp_upperName", "query": "SELECT VALUE UPPER(c.name) FROM c"}
    replaced = db.replace_container(container, PartitionKey("/pk"), computed_properties=[upper])
    assert replaced.read()["computedProperties"] == [upper]
    assert _query(replaced, "SELECT VALUE c.cp_upperName FROM c WHERE c.id = '3'") == ["BOB"]
    assert _query(replaced, "SELECT VALUE c.cp_lowerName FROM c WHERE c.id = '3'") == []  # undefined: gone
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        db.replace_container(container, PartitionKey("/pk"), computed_properties=[{"name": "_ts", "query": "x"}])
    assert refused.value.status_code == 400
    assert replaced.read()["computedProperties"] == [upper]
    db.replace_container(container, PartitionKey("/pk"))
    assert "computedProperties" not in replaced.read()


def test_they_survive_a_restart_and_a_compaction(tmp_path, make_emulator: Callable[..., RunningEmulator]) -> None:
    data = tmp_path / "data"
    first = make_emulator(open_engine(data))
    db = sdk_client(first).create_database("shop")
    db.create_container("people", PartitionKey("/pk"), computed_properties=[LOWER])
    db.get_container_client("people").create_item(PEOPLE[1])
    assert compact_journal(first.engine, 0)  # the second start replays the snapshot, not the journal
    first.stop()
    second = make_emulator(open_engine(data))
    again = sdk_client(second).get_database_client("shop").get_container_client("people")
    assert again.read()["computedProperties"] == [LOWER]
    assert _query(again, "SELECT VALUE c.cp_lowerName FROM c") == ["alice"]


def test_an_indexing_policy_may_name_them_in_single_and_composite_indexes(client: CosmosClient) -> None:
    policy = {
        "includedPaths": [{"path": "/*"}, {"path": "/cp_lowerName/?"}],
        "compositeIndexes": [[{"path": "/pk", "order": "ascending"}, {"path": "/cp_lowerName", "order": "ascending"}]],
    }
    db = client.create_database("d")
    container = db.create_container("c", PartitionKey("/pk"), indexing_policy=policy, computed_properties=[LOWER])
    for person in PEOPLE:
        container.create_item(person)
    assert {"path": "/cp_lowerName/?"} in container.read()["indexingPolicy"]["includedPaths"]
    ordered = _query(container, "SELECT VALUE c.id FROM c ORDER BY c.pk, c.cp_lowerName")
    assert ordered == ["2", "1", "3"]  # p: alice, charlie; q: bob

"""Unique keys through the unmodified azure-cosmos SDK: enforced per logical partition on every kind of
write, a missing value counted once, a bad policy refused (cosmos-wire-protocol.md W50-W53)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator, open_engine
from tests.conftest import sdk_client

EMAIL = {"uniqueKeys": [{"paths": ["/email"]}, {"paths": ["/name/first", "/name/last"]}]}


@pytest.fixture
def users(client: CosmosClient):
    db = client.create_database("app")
    return db.create_container("users", PartitionKey("/tenant"), unique_key_policy=EMAIL)


def _refused(call: Callable[[], object]) -> exceptions.CosmosHttpResponseError:
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        call()
    assert refused.value.status_code == 409
    assert "Unique index constraint violation." in refused.value.message
    return refused.value


def _user(item_id: str, tenant: str, email: str | None, first: str = "A", last: str = "B") -> dict:
    doc = {"id": item_id, "tenant": tenant, "name": {"first": first, "last": last}}
    if email is not None:
        doc["email"] = email
    return doc


def test_the_policy_is_kept_and_returned(users) -> None:
    assert users.read()["uniqueKeyPolicy"] == EMAIL


def test_a_create_repeating_a_unique_value_in_its_logical_partition_is_409(users) -> None:
    users.create_item(_user("1", "t1", "a@x", "Ann", "Lee"))
    _refused(lambda: users.create_item(_user("2", "t1", "a@x", "Bob", "Ray")))
    _refused(lambda: users.create_item(_user("3", "t1", "b@x", "Ann", "Lee")))  # the pair repeats
    users.create_item(_user("4", "t1", "c@x", "Ann", "Ray"))  # one of the pair differs: allowed
    users.create_item(_user("2", "t2", "a@x", "Ann", "Lee"))  # another logical partition: allowed
    ids = sorted((d["tenant"], d["id"]) for d in users.read_all_items())
    assert ids == [("t1", "1"), ("t1", "4"), ("t2", "2")]


def test_upsert_replace_and_patch_are_checked_but_an_item_never_conflicts_with_itself(users) -> None:
    users.create_item(_user("1", "t1", "a@x", "Ann", "Lee"))
    users.create_item(_user("2", "t1", "b@x", "Bob", "Ray"))
    users.replace_item("1", _user("1", "t1", "a@x", "Ann", "Lee") | {"age": 3})  # same values: fine
    users.upsert_item(_user("1", "t1", "a@x", "Ann", "Lee") | {"age": 4})
    _refused(lambda: users.replace_item("2", _user("2", "t1", "a@x", "Bob", "Ray")))
    _refused(lambda: users.upsert_item(_user("3", "t1", "b@x", "Cy", "Day")))
    _refused(lambda: users.patch_item("2", "t1", [{"op": "set", "path": "/email", "value": "a@x"}]))
    assert users.read_item("2", "t1")["email"] == "b@x"  # nothing refused was written
    assert users.read_item("1", "t1")["age"] == 4


def test_a_missing_value_counts_as_null_so_only_one_item_may_lack_it(users) -> None:
    users.create_item(_user("1", "t1", None, "Ann", "Lee"))
    _refused(lambda: users.create_item(_user("2", "t1", None, "Bob", "Ray")))
    _refused(lambda: users.create_item(_user("3", "t1", None, "Cy", "Day") | {"email": None}))


def test_a_batch_that_breaks_a_unique_key_applies_nothing(users) -> None:
    users.create_item(_user("1", "t1", "a@x", "Ann", "Lee"))
    batch = [
        ("create", (_user("2", "t1", "b@x", "Bob", "Ray"),)),
        ("create", (_user("3", "t1", "b@x", "Cy", "Day"),)),  # repeats the batch's own earlier create
    ]
    with pytest.raises(exceptions.CosmosBatchOperationError) as failed:
        users.execute_item_batch(batch, partition_key="t1")
    assert failed.value.error_index == 1
    assert failed.value.operation_responses[1]["statusCode"] == 409
    assert sorted(d["id"] for d in users.read_all_items()) == ["1"]


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        ({"uniqueKeys": [{"paths": []}]}, "1 to 16 paths"),
        ({"uniqueKeys": [{"paths": ["email"]}]}, "invalid path"),
        ({"uniqueKeys": [{"paths": ["/tags/*"]}]}, "invalid path"),
        ({"uniqueKeys": [{"paths": [f"/p{n}"]} for n in range(11)]}, "at most 10"),
    ],
)
def test_a_bad_policy_is_400_and_creates_nothing(client: CosmosClient, policy: dict, says: str) -> None:
    db = client.create_database("app")
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        db.create_container("users", PartitionKey("/tenant"), unique_key_policy=policy)
    assert refused.value.status_code == 400 and says in refused.value.message
    assert list(db.list_containers()) == []


def test_the_policy_survives_a_restart(tmp_path, make_emulator: Callable[..., RunningEmulator]) -> None:
    data = tmp_path / "data"
    first = make_emulator(open_engine(data))
    db = sdk_client(first).create_database("app")
    db.create_container("users", PartitionKey("/tenant"), unique_key_policy=EMAIL).create_item(_user("1", "t1", "a@x"))
    first.stop()
    again = sdk_client(make_emulator(open_engine(data))).get_database_client("app").get_container_client("users")
    _refused(lambda: again.create_item(_user("2", "t1", "a@x", "Z", "Z")))

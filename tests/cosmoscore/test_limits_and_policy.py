"""Pure limit helpers and the legacy indexing-policy normalisation."""

from __future__ import annotations

import pytest

from cosmoscore.indexing import IndexPolicy, normalize_policy
from cosmoscore.limits import key_value_bytes, nesting_depth


def test_nesting_depth_is_counted_without_recursion() -> None:
    assert [nesting_depth(v, 10) for v in (1, {}, {"a": [1]}, [[[]]])] == [0, 1, 2, 3]
    deep: object = 0
    for _ in range(100_000):  # far past Python's recursion limit
        deep = [deep]
    assert nesting_depth(deep, 128) == 129  # stops counting once past the limit


def test_key_value_bytes_counts_utf8_bytes() -> None:
    assert key_value_bytes(("ab",)) == 2 and key_value_bytes(("é",)) == 2 and key_value_bytes(("a", 1.5)) == 9


def test_legacy_root_path_and_indexes_are_normalised() -> None:
    legacy = {
        "indexingMode": "consistent",
        "includedPaths": [{"path": "/", "indexes": [{"kind": "Range", "dataType": "Number", "precision": -1}]}],
        "excludedPaths": [{"path": "/secret/*"}],
    }
    normalized = normalize_policy(legacy)
    assert normalized["includedPaths"] == [{"path": "/*"}] and normalized["excludedPaths"] == [{"path": "/secret/*"}]
    policy = IndexPolicy.from_json(normalized)
    assert policy.is_indexed(("a",)) and not policy.is_indexed(("secret", "x"))
    assert legacy["includedPaths"][0]["path"] == "/"  # the caller's definition is not changed


@pytest.mark.parametrize(
    "policy",
    [[], {"includedPaths": "/"}, {"includedPaths": [{"path": "/", "indexes": [{"kind": "Vector"}]}]}],
)
def test_invalid_policies_are_refused(policy: object) -> None:
    with pytest.raises(ValueError):
        normalize_policy(policy)

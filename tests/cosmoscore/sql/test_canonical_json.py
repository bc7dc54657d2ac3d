"""`canonical_json`: the one spelling of a value as an ordering or cache key (parameters, arrays and
objects in ORDER BY): equal for equal values whatever their key order, and right-sized, since caches and
sorts keep thousands of them (orjson >= 3.12 hands back a buffer of at least 4 KB for any text)."""

from __future__ import annotations

import tracemalloc

import pytest

from cosmoscore.sql import canonical_json


def test_equal_values_give_equal_keys_whatever_the_key_order() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == b'{"a":[1,{"c":3,"d":2}],"b":1}'
    assert canonical_json({"a": 1, "b": 2}) == canonical_json({"b": 2, "a": 1})
    assert canonical_json({"a": 1}) != canonical_json({"a": 1.5})


def test_a_value_json_cannot_hold_raises_type_error() -> None:
    with pytest.raises(TypeError):
        canonical_json({"a": object()})


def test_a_kept_key_costs_its_length_not_a_buffer() -> None:
    tracemalloc.start()
    try:
        kept = [canonical_json({"@id": i, "@pk": "tenant-1"}) for i in range(1_000)]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_key = held / len(kept)
    assert per_key < 200, f"{per_key:.0f} bytes held per {len(kept[0])}-byte key"

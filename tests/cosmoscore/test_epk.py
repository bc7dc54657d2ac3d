"""EPKs must match the SDK byte for byte, or documents land on the wrong partitions."""

from __future__ import annotations

import pytest
from azure.cosmos.partition_key import PartitionKey
from hypothesis import given
from hypothesis import strategies as st

from cosmoscore.epk import (
    UNDEFINED,
    epk_for,
    epk_multihash,
    epk_v1,
    epk_v2,
    hash_version,
    prefix_range,
    v1_bound,
    v1_hash_of,
)
from cosmoscore.layout import even_boundaries, key_space_share, midpoint

# Published vectors (ru-cost-model.md E5, from the JS/Java SDK test suites).
VECTORS = [
    (["redmond"], "22E342F38A486A088463DFF7838A5963"),
    ([""], "32E9366E637A71B4E710384B2F4970A0"),
    (["aa"], "05033626483AE80D00E44FBD35362B19"),
    ([5], "19C08621B135968252FB34B4CF66F811"),
    ([True], "0E711127C5B5A8E4726AC6DD306A3E59"),
    ([None], "378867E4430E67857ACE5C908374FE16"),
    ([False], "2FE1BE91E90A3439635E0E9E37361EF2"),
    ([5.5], "0E2EE47829D1AF775EEFB6540FD1D0ED"),
    ([12313.1221], "27E7ECA8F2EE3E53424DE8D5220631C6"),
    ([123456789], "1F56D2538088EBA82CCF988F36E16760"),
    (["a" * 110], "0BA3E9CA8EE4C14538828D1612A4B652"),
    (["redmond", 50, 5.5, True, False, None, "", 12313.1221], "1A5E512F591E980E07A6D8AD5BD5AB2F"),
]


@pytest.mark.parametrize(("key", "expected"), VECTORS)
def test_v2_matches_published_vectors(key: list, expected: str) -> None:
    assert epk_v2(key) == expected


def test_multihash_concatenates_levels() -> None:
    assert epk_multihash(["redmond", "aa"]) == "22E342F38A486A088463DFF7838A5963" + "05033626483AE80D00E44FBD35362B19"
    lo, hi = prefix_range(epk_multihash(["redmond"]))
    assert lo <= epk_multihash(["redmond", "zz"]) < hi
    assert not lo <= epk_multihash(["seattle", "aa"]) < hi


components = st.one_of(
    st.text(max_size=40),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)


@given(st.lists(components, min_size=1, max_size=3))
def test_v2_equals_the_sdk_hashing(key: list) -> None:
    # Cross-check against the SDK's own (private) implementation: allowed in tests, never in product code.
    sdk = PartitionKey(path="/a")._get_effective_partition_key_for_hash_partitioning_v2(key)
    assert epk_v2(key) == sdk
    assert epk_v2(key)[0] in "0123"  # every V2 EPK sorts below 40.. (T32)


@given(st.lists(components, min_size=2, max_size=3))
def test_multihash_equals_the_sdk_hashing(key: list) -> None:
    pk = PartitionKey(path=[f"/p{i}" for i in range(len(key))], kind="MultiHash")
    assert epk_multihash(key) == pk._get_effective_partition_key_for_multi_hash_partitioning_v2(key)


def test_undefined_hashes_with_its_own_marker() -> None:
    assert epk_v2([UNDEFINED]) != epk_v2([None])
    with pytest.raises(TypeError):
        epk_v2([{"nested": 1}])


# V1 (Hash, version 1): the Java SDK's published vectors (PartitionKeyHashingTests.effectivePartitionKeyHashV1,
# cosmos-wire-protocol.md W60). They are the service's encoding: numbers hash as doubles, null keeps its 01.
V1_VECTORS = [
    ("", "05C1CF33970FF80800"),
    ("partitionKey", "05C1E1B3D9CD2608716273756A756A706F4C667A00"),
    ("a" * 1024, "05C1EB5921F70608" + "62" * 100 + "00"),
    (None, "05C1ED45D7475601"),
    (UNDEFINED, "05C1D529E345DC00"),
    (True, "05C1D7C5A903D803"),
    (False, "05C1DB857D857C02"),
    (-128, "05C1D73349F54C053FA0"),
    (127, "05C1DD539DDFCC05C05FE0"),
    (-(2**63), "05C1DB35F33D1C053C20"),
    (2**63 - 1, "05C1B799AB2DD005C3E0"),
    (-(2**31), "05C1DFBF252BCC053E20"),
    (2**31 - 1, "05C1E1F503DFB205C1DFFFFFFFFC"),
    (5e-324, "05C1E5C91F4D3005800101010101010102"),
    (1.7976931348623157e308, "05C1CBE367C53005FFEFFFFFFFFFFFFFFE"),
]


@pytest.mark.parametrize(("key", "expected"), V1_VECTORS)
def test_v1_matches_the_java_sdk_vectors(key: object, expected: str) -> None:
    assert epk_v1([key]) == expected
    assert epk_for("Hash", [key], 1) == expected


def _sdk_v1(key: list) -> str:
    """The Python SDK's own V1 EPK (private, tests only); it writes lower-case hex, which its `Range`
    upper-cases before comparing with pkrange bounds."""
    sdk = PartitionKey(path="/pk", kind="Hash", version=1)._get_effective_partition_key_string(key)
    return str(sdk).upper()


# Where azure-cosmos 4.17.1's V1 agrees with the service: strings (truncated to 100 characters, or 101
# UTF-8 bytes), floats of any sign, integers in [0, 2**32), booleans, undefined.
v1_components = st.one_of(
    st.text(max_size=140),
    st.integers(0, 2**32 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.just(UNDEFINED),
)


@given(v1_components)
def test_v1_equals_the_sdk_hashing(component: object) -> None:
    sdk_key = [{} if component is UNDEFINED else component]  # the SDK's spelling of undefined
    assert epk_v1([component]) == _sdk_v1(sdk_key)


@pytest.mark.parametrize("key", ["a" * 100, "a" * 100 + "b", "é" * 120, "日本語" * 40, "😀" * 100, "k" * 2000])
def test_v1_keys_past_100_characters_share_a_hash(key: str) -> None:
    """ "hash based on the first 101 bytes of the partition key" (large-partition-keys): V1 keys equal
    there are one logical partition; V2 tells them apart."""
    assert epk_v1([key]) == _sdk_v1([key])
    assert epk_v1([key[:100] + "zzz"]) == epk_v1([key[:100]]) != epk_v1([key[:99]])
    assert epk_v2([key[:100] + "zzz"]) != epk_v2([key[:100]])


def test_where_the_python_sdk_leaves_the_service_on_v1() -> None:
    """Two gaps of azure-cosmos 4.17.1 (W60): null loses its trailing 01 (the same hash, so the same
    partition whenever a bound does not fall inside that key), and a negative or 2**32-and-above `int`
    is hashed after a cast to unsigned 32 bits (a float of the same value is not). The emulator keeps
    the service's bytes, the Java vectors above."""
    assert epk_v1([None]) == _sdk_v1([None]) + "01"
    assert epk_v1([-128]) == epk_v1([-128.0]) == _sdk_v1([-128.0]) != _sdk_v1([-128])
    assert epk_v1([2**40]) == _sdk_v1([float(2**40)]) != _sdk_v1([2**40])


def test_v1_epks_start_with_their_hash_as_a_number() -> None:
    for key in ("", "x", "partitionKey", 42, True, None, UNDEFINED, "a" * 300):
        epk = epk_v1([key])
        assert epk.startswith("05")
        assert epk.startswith(v1_bound(v1_hash_of(epk)))  # the hash prefix decodes and re-encodes
    assert [v1_hash_of(v1_bound(h)) for h in (0, 1, 12345, 2**31, 2**32 - 1)] == [0, 1, 12345, 2**31, 2**32 - 1]
    assert v1_hash_of("") == 0 and v1_hash_of("FF") == 2**32


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_v1_bounds_sort_as_their_hashes(a: int, b: int) -> None:
    assert (v1_bound(a) < v1_bound(b)) == (a < b)


def test_hash_version_of_a_definition() -> None:
    assert hash_version({"paths": ["/k"], "kind": "Hash", "version": 2}) == 2
    assert hash_version({"paths": ["/k"], "kind": "Hash", "version": 1}) == 1
    assert hash_version({"paths": ["/k"], "kind": "Hash"}) == 1  # a legacy definition: V1
    assert hash_version({"paths": ["/a", "/b"], "kind": "MultiHash", "version": 1}) == 2  # per-level V2 (E3)


def test_v1_ranges_divide_the_hash_space() -> None:
    bounds = even_boundaries(4, version=1)
    assert [lo for lo, _ in bounds] == ["", v1_bound(2**30), v1_bound(2**31), v1_bound(3 * 2**30)]
    assert bounds[-1][1] == "FF"
    assert [key_space_share(lo, hi, 1) for lo, hi in bounds] == [0.25] * 4
    lo, hi = bounds[1]
    assert midpoint(lo, hi, 1) == v1_bound(2**30 + 2**29)
    assert midpoint("", "FF", 1) == v1_bound(2**31)
    epks = [epk_v1([f"key-{i}"]) for i in range(400)]
    counts = [sum(lo <= e < hi if hi != "FF" else lo <= e for e in epks) for lo, hi in bounds]
    assert sum(counts) == 400 and min(counts) > 60  # every range gets its share of the keys

"""Effective partition keys (EPK): the V1, V2 and MultiHash hashing the Cosmos DB SDKs and service use,
and EPK intervals (`EpkRange`).

Every document lands on the physical partition whose range holds its EPK, so these bytes must match
the SDK's exactly (cosmos-wire-protocol.md §5 and W60, ru-cost-model.md E1-E5). MurmurHash3 (x64-128
for V2, x86-32 for V1) comes from `mmh3`; only the component encodings are ours.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mmh3

MIN_EPK = ""
MAX_EPK = "FF"


class Undefined:
    """The `undefined` value: a missing property. One object serves the whole emulator, so a
    document without its key path (SDK header `[{}]`, hash marker 0x00) and the SQL engine's
    undefined are the same thing. It is never JSON and is falsy."""

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED = Undefined()

_NULL, _FALSE, _TRUE, _NUMBER, _STRING, _UNDEFINED = b"\x01", b"\x02", b"\x03", b"\x05", b"\x08", b"\x00"


def encode_component(value: Any) -> bytes:
    """Serialise one key component with its type marker (ru-cost-model.md E2)."""
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if value is None:
        return _NULL
    if isinstance(value, (int, float)):
        # Integers hash as IEEE-754 doubles, as the SDK casts them (ru-cost-model.md E6).
        return _NUMBER + struct.pack("<d", float(value))
    if isinstance(value, str):
        return _STRING + value.encode("utf-8") + b"\xff"
    if value is UNDEFINED:
        return _UNDEFINED
    raise TypeError(f"a partition key component must be a string, number, boolean or null, not {value!r}")


def _hash_hex(data: bytes) -> str:
    digest = bytearray(mmh3.hash_bytes(data, 0, True))
    digest.reverse()
    digest[0] &= 0x3F  # the top two bits are cleared so every EPK sorts below "FF" (E2)
    return digest.hex().upper()


def epk_v2(components: Sequence[Any]) -> str:
    """EPK of a Hash (V2) key: one MurmurHash over all components, 32 upper-case hex chars."""
    return _hash_hex(b"".join(encode_component(c) for c in components))


def epk_multihash(components: Sequence[Any]) -> str:
    """EPK of a MultiHash (hierarchical) key or key prefix: per-level V2 hashes concatenated (E3)."""
    return "".join(_hash_hex(encode_component(c)) for c in components)


def epk_for(kind: str, components: Sequence[Any], version: int = 2) -> str:
    """EPK for a container's partition key kind ("Hash" or "MultiHash") and hash version (`hash_version`)."""
    if kind == "MultiHash":
        return epk_multihash(components)
    return epk_v1(components) if version == 1 else epk_v2(components)


def hash_version(definition: Mapping[str, Any]) -> int:
    """The hash a partition key definition uses: 1 or 2. A definition without `version` is V1, as the
    service's legacy containers are (W60); MultiHash hashes every level with V2 whatever it says (E3)."""
    if definition.get("kind", "Hash") == "MultiHash":
        return 2
    return 1 if definition.get("version", 1) == 1 else 2


# V1 (W60, ru-cost-model.md E1): a 32-bit hash of the truncated components, then the binary encoding of
# [hash as a number, *truncated components]; that encoding sorts as the values do.
_V1_STRING_CHARS = 100  # strings are cut to their first 100 characters before anything else
_V1_STRING_BYTES = 100  # a longer UTF-8 string keeps 101 bytes and no terminator
_V1_HASH_SPACE = 1 << 32  # the hash is an unsigned 32-bit number
_SIGN = 1 << 63
_U64 = (1 << 64) - 1


def _v1_truncate(value: Any) -> Any:
    return value[:_V1_STRING_CHARS] if isinstance(value, str) else value


def _v1_hashing_bytes(value: Any) -> bytes:
    """The bytes V1 hashes: V2's component encoding, but a string ends with 0x00 rather than 0xFF."""
    if isinstance(value, str):
        return _STRING + value.encode("utf-8") + b"\x00"
    return encode_component(value)


def _ordered_bits(number: float) -> int:
    """A double's bits as an unsigned integer that sorts as the doubles do (negatives reversed)."""
    bits: int = struct.unpack("<Q", struct.pack("<d", number))[0]
    return bits ^ _SIGN if bits < _SIGN else -bits & _U64


def _number_binary(number: float) -> bytes:
    """A number's order-preserving binary encoding: the top byte, then 7-bit groups each flagged 1
    ("more follows") but the last, flagged 0."""
    payload = _ordered_bits(float(number))
    head, payload = payload >> 56, (payload << 8) & _U64
    groups = []
    while payload:
        groups.append((payload >> 56) | 0x01)
        payload = (payload << 7) & _U64
    groups = groups or [0]
    groups[-1] &= 0xFE
    return bytes([head, *groups])


def _v1_binary(value: Any) -> bytes:
    """One component's binary encoding (the EPK's bytes): type marker, then an ordered payload."""
    if value is True or value is False or value is None or value is UNDEFINED:
        return encode_component(value)
    if isinstance(value, (int, float)):
        return _NUMBER + _number_binary(value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        if len(raw) <= _V1_STRING_BYTES:
            return _STRING + bytes(b + 1 for b in raw) + b"\x00"
        return _STRING + bytes(b + 1 for b in raw[: _V1_STRING_BYTES + 1])
    raise TypeError(f"a partition key component must be a string, number, boolean or null, not {value!r}")


def epk_v1(components: Sequence[Any]) -> str:
    """EPK of a Hash V1 key: upper-case hex of [hash, *components] binary-encoded (E1, W60)."""
    truncated = [_v1_truncate(c) for c in components]
    digest = mmh3.hash(b"".join(_v1_hashing_bytes(c) for c in truncated), 0, signed=False)
    return v1_bound(digest) + b"".join(_v1_binary(c) for c in truncated).hex().upper()


def v1_bound(hash_value: int) -> str:
    """The lowest V1 EPK whose hash is `hash_value`: where a V1 range boundary falls."""
    return (_NUMBER + _number_binary(float(hash_value))).hex().upper()


def v1_hash_of(epk: str) -> int:
    """The 32-bit hash a V1 EPK (or range bound) starts with; "" is 0, "FF" the top of the space."""
    if epk == MIN_EPK:
        return 0
    if epk == MAX_EPK:
        return _V1_HASH_SPACE
    raw = bytes.fromhex(epk)
    end = next((i for i in range(2, len(raw)) if not raw[i] & 0x01), len(raw) - 1)
    payload = bytes(raw[1:2]) + _pack_groups(raw[2 : end + 1])
    return int(_number_from_ordered(int.from_bytes(payload.ljust(8, b"\x00")[:8], "big")))


def _pack_groups(groups: bytes) -> bytes:
    """The 7-bit groups of a number's encoding packed back into bytes, most significant first."""
    value, bits = 0, 0
    for group in groups:
        value, bits = (value << 7) | (group >> 1), bits + 7
    pad = (-bits) % 8
    return (value << pad).to_bytes((bits + pad) // 8, "big") if bits else b""


def _number_from_ordered(ordered: int) -> float:
    bits = ordered ^ _SIGN if ordered >= _SIGN else -ordered & _U64
    number: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return number


def prefix_range(prefix_epk: str) -> tuple[str, str]:
    """The EPK range [min, max) holding every full key that starts with a hierarchical prefix (E3)."""
    return prefix_epk, prefix_epk + "FF"


@dataclass(frozen=True, slots=True)
class EpkRange:
    """An EPK interval [min, max), or a single EPK when min == max (like the SDK's `routing_range.Range`).

    `max == MAX_EPK` ("FF") is the open top of the key space: it is above every EPK, including the longer
    hierarchical ones, so it is tested by name rather than by string comparison.
    """

    min: str
    max: str

    @classmethod
    def point(cls, epk: str) -> EpkRange:
        return cls(epk, epk)

    @property
    def is_point(self) -> bool:
        return self.min == self.max

    def contains(self, epk: str) -> bool:
        """Whether an EPK falls in the interval (equals it, for a point)."""
        if self.is_point:
            return epk == self.min
        return self.min <= epk and (self.max == MAX_EPK or epk < self.max)

    def overlaps(self, other: EpkRange) -> bool:
        """Whether the two share any EPK."""
        if other.is_point:
            return self.contains(other.min)
        if self.is_point:
            return other.contains(self.min)
        below_top = self.max == MAX_EPK or other.min < self.max
        above_bottom = other.max == MAX_EPK or other.max > self.min
        return below_top and above_bottom

    def clip(self, other: EpkRange) -> EpkRange:
        """The part of `other` inside this interval (call only when they overlap)."""
        if other.is_point:
            return other
        top = other.max if self.max == MAX_EPK else self.max if other.max == MAX_EPK else min(other.max, self.max)
        return EpkRange(max(self.min, other.min), top)

    def covers(self, other: EpkRange) -> bool:
        """Whether `other` lies wholly inside this interval."""
        return self.min <= other.min and (self.max == MAX_EPK or (other.max != MAX_EPK and other.max <= self.max))


FULL_RANGE = EpkRange(MIN_EPK, MAX_EPK)

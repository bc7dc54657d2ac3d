"""Effective partition keys (EPK): the V2 and MultiHash hashing the Cosmos DB SDKs and service use, and
EPK intervals (`EpkRange`).

Every document lands on the physical partition whose range holds its EPK, so these bytes must match
the SDK's exactly (cosmos-wire-protocol.md §5, ru-cost-model.md E2/E3/E5). MurmurHash3 x64-128 comes
from `mmh3`; only the component encoding is ours.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
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


def epk_for(kind: str, components: Sequence[Any]) -> str:
    """EPK for a container's partition key kind ("Hash" or "MultiHash")."""
    return epk_multihash(components) if kind == "MultiHash" else epk_v2(components)


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

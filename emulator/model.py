"""The emulator's resources: databases, containers, partition key ranges, logical partitions, items.

Plain mutable records held by `emulator.state`; they hold state and answer questions about it, while
the services (catalog, items, feeds, querying) decide what an operation does.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from cosmoscore.epk import epk_for
from cosmoscore.indexing import IndexPolicy
from cosmoscore.keys import extract_key, key_json, split_path
from cosmoscore.routing import RoutingMap


def make_rid(*parts: int) -> str:
    """A resource id in the service's style: base64 of packed little-endian counters."""
    raw = b"".join(p.to_bytes(size, "little") for p, size in zip(parts, (4, 4, 8)))
    return base64.b64encode(raw).decode().replace("/", "-")


@dataclass
class StoredItem:
    doc: dict[str, Any]  # with system properties
    size: int  # persisted bytes (UTF-8 JSON)
    seq: int = 0  # write order: queries scan a range in it (creation order is also memory order)


@dataclass
class LogicalPartition:
    key: tuple[Any, ...]
    epk: str
    items: dict[str, StoredItem] = field(default_factory=dict)
    size: int = 0

    @property
    def key_json(self) -> str:
        return key_json(self.key)


@dataclass
class PkRange:
    """A physical partition: a partition key range with its own storage, index and RU budget."""

    id: str
    min: str
    max: str
    parents: list[str] = field(default_factory=list)
    logical: dict[str, LogicalPartition] = field(default_factory=dict)  # by EPK
    size: int = 0
    docs: int = 0
    lsn: int = 0


@dataclass
class Offer:
    """Provisioned throughput of a database or container (cosmos-errors-and-stats.md §2.6)."""

    rid: str
    resource_link: str  # the owner's _self
    resource_rid: str
    throughput: int  # manual RU/s, or the autoscale max
    autoscale: bool
    max_ever: int
    ts: int

    def to_json(self) -> dict[str, Any]:
        content: dict[str, Any] = {
            "offerThroughput": self.throughput,
            "offerIsRUPerMinuteThroughputEnabled": False,
            "offerMinimumThroughputParameters": {
                "maxThroughputEverProvisioned": self.max_ever,
                "maxConsumedStorageEverInKB": 0,
            },
            "offerLastReplaceTimestamp": self.ts,
        }
        if self.autoscale:
            content["offerAutopilotSettings"] = {"maxThroughput": self.throughput}
        return {
            "resource": self.resource_link,
            "offerType": "Invalid",
            "offerResourceId": self.resource_rid,
            "offerVersion": "V2",
            "content": content,
            "id": self.rid,
            "_rid": self.rid,
            "_self": f"offers/{self.rid}/",
            "_etag": f'"{self.rid}-{self.ts}"',
            "_ts": self.ts,
        }


@dataclass
class Container:
    id: str
    rid: str
    db_id: str
    props: dict[str, Any]  # the JSON the service returns, system properties included
    policy: IndexPolicy
    ranges: list[PkRange]
    offer_rid: str | None
    next_range_id: int
    range_version: int = 1  # the /pkranges etag
    range_log: list[tuple[int, str]] = field(default_factory=list)  # (version, id of a range born then)
    gone: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.routing = RoutingMap(self.ranges)
        self.key_paths: list[list[str]] = [split_path(p) for p in self.props["partitionKey"]["paths"]]
        self.kind: str = self.props["partitionKey"].get("kind", "Hash")

    @property
    def self_link(self) -> str:
        return self.props["_self"]

    def reindex_ranges(self) -> None:
        self.routing = RoutingMap(self.ranges)
        self.ranges[:] = self.routing.ranges

    def range_for(self, epk: str) -> PkRange:
        return self.routing.range_for(epk)

    def range_by_id(self, range_id: str) -> PkRange | None:
        return next((r for r in self.ranges if r.id == range_id), None)

    def epk(self, key: tuple[Any, ...]) -> str:
        return epk_for(self.kind, key)

    def extract_key(self, doc: dict[str, Any]) -> tuple[Any, ...]:
        """The partition key of a document; a missing path is the undefined value."""
        return extract_key(doc, self.key_paths)

    @property
    def size(self) -> int:
        return sum(r.size for r in self.ranges)

    @property
    def docs(self) -> int:
        return sum(r.docs for r in self.ranges)


@dataclass
class Database:
    id: str
    rid: str
    props: dict[str, Any]
    offer_rid: str | None
    containers: dict[str, Container] = field(default_factory=dict)

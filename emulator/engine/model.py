"""The emulator's resources: databases, containers, partition key ranges, logical partitions, items.

Plain mutable records held by `emulator.engine.state`; they hold state and answer questions about it, while
the services (catalog, items, feeds, the query service) decide what an operation does.
"""

from __future__ import annotations

import base64
import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cosmoscore.epk import epk_for, hash_version
from cosmoscore.indexing import IndexPolicy
from cosmoscore.keys import extract_key, key_json, split_path
from cosmoscore.routing import RoutingMap
from cosmoscore.sql.computed import ComputedProperty, parse_computed
from emulator.engine.query.range_index import RangeIndexes
from emulator.engine.ttl import Expiry
from emulator.engine.unique import Paths, parse_policy


def make_rid(*parts: int) -> str:
    """A resource id in the service's style: base64 of packed little-endian counters."""
    raw = b"".join(p.to_bytes(size, "little") for p, size in zip(parts, (4, 4, 8)))
    return base64.b64encode(raw).decode().replace("/", "-")


@dataclass
class StoredItem:
    doc: dict[str, Any]  # with system properties
    size: int  # persisted bytes (UTF-8 JSON)
    seq: int = 0  # write order: queries scan a range in it (creation order is also memory order); the
    # change feed's position of the item's last write (emulator.engine.changefeed)
    epk: str = ""  # its logical partition's effective partition key


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
    # every stored item by its write sequence, kept in that order as writes happen: a query scans a range
    # in write order (creation order is also memory order), and re-sorting the range after each write cost
    # more than the query (measured: a filter 1.06 s instead of 0.315 s at 500,000 documents)
    written: dict[int, StoredItem] = field(default_factory=dict)
    indexes: RangeIndexes = field(default_factory=RangeIndexes)  # the paths its queries probe
    # the write order's sequence numbers as a sorted list, built when a change feed read needs it and
    # dropped at the next write (a drain between writes bisects it once per page, not a scan per page)
    _seqs: list[int] | None = field(default=None, repr=False)

    def record_write(self, old: StoredItem | None, new: StoredItem) -> None:
        """`new` stored (replacing `old`, if any): it moves to the end of the write order."""
        if old is not None:
            self.written.pop(old.seq, None)
        self.written[new.seq] = new
        self.indexes.record_write(old, new)
        self._seqs = None

    def record_delete(self, item: StoredItem) -> None:
        self.written.pop(item.seq, None)
        self.indexes.record_delete(item)
        self._seqs = None

    def rebuild_write_order(self) -> None:
        """The write order from the logical partitions (a split's child, once)."""
        items = sorted((item for lp in self.logical.values() for item in lp.items.values()), key=lambda i: i.seq)
        self.written = {item.seq: item for item in items}
        self.indexes.clear()
        self._seqs = None

    def written_after(self, seq: int) -> Iterator[StoredItem]:
        """The items whose last write came after sequence number `seq`, in write order."""
        if self._seqs is None:
            self._seqs = list(self.written)  # insertion order is ascending seq
        seqs, written = self._seqs, self.written
        return (written[s] for s in seqs[bisect.bisect_right(seqs, seq) :])

    def documents_in_write_order(self) -> list[dict[str, Any]]:
        return [item.doc for item in self.written.values()]


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
    increment_percent: int | None = None  # an autoscale offer's autoUpgradePolicy as sent (W80)

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
            content["offerAutopilotSettings"] = autopilot_settings(self.throughput, self.increment_percent)
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


def autopilot_settings(maximum: int, increment_percent: int | None) -> dict[str, Any]:
    """An autoscale offer's `offerAutopilotSettings`: the auto-upgrade policy only when one was sent, as the
    SDK's `get_throughput` reads `incrementPercent` from it and `replace_throughput` writes it there (W80)."""
    settings: dict[str, Any] = {"maxThroughput": maximum}
    if increment_percent is not None:
        settings["autoUpgradePolicy"] = {"throughputPolicy": {"incrementPercent": increment_percent}}
    return settings


# the container options a definition may carry besides its id, key and indexing policy: kept as given, in the
# journal and the snapshot (computed properties are checked first: emulator.engine.catalog)
CONTAINER_OPTIONS = ("defaultTtl", "uniqueKeyPolicy", "conflictResolutionPolicy", "computedProperties")


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
        self.hash_version: int = hash_version(self.props["partitionKey"])  # V1 or V2 hashing (W60)
        self.computed: tuple[ComputedProperty, ...] = parse_computed(self.props.get("computedProperties"))
        self.unique_keys: tuple[Paths, ...] = parse_policy(self.props.get("uniqueKeyPolicy"))
        self.expiry = Expiry()  # its items that will expire (emulator.engine.ttl), filled as they are written

    def set_computed(self, definitions: list[dict[str, str]] | None) -> None:
        """Its computed properties (checked when the container was created or replaced), or none."""
        if definitions:
            self.props["computedProperties"] = definitions
        else:
            self.props.pop("computedProperties", None)
        self.computed = parse_computed(definitions)

    @property
    def self_link(self) -> str:
        link: str = self.props["_self"]
        return link

    def reindex_ranges(self) -> None:
        self.routing = RoutingMap(self.ranges)
        self.ranges[:] = self.routing.ranges

    def range_for(self, epk: str) -> PkRange:
        return self.routing.range_for(epk)

    def range_by_id(self, range_id: str) -> PkRange | None:
        return next((r for r in self.ranges if r.id == range_id), None)

    def epk(self, key: tuple[Any, ...]) -> str:
        return epk_for(self.kind, key, self.hash_version)

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
class Permission:
    """A user's grant on one container (`resourcePartitionKey`: on one logical partition of it)."""

    id: str
    rid: str
    props: dict[str, Any]  # the JSON the service returns, without the `_token` minted per response
    coll_rid: str  # the container its `resource` named when it was written
    key: list[Any] | None  # the resourcePartitionKey, as JSON; None: the whole container


@dataclass
class User:
    id: str
    rid: str
    props: dict[str, Any]
    permissions: dict[str, Permission] = field(default_factory=dict)


@dataclass
class Database:
    id: str
    rid: str
    props: dict[str, Any]
    offer_rid: str | None
    containers: dict[str, Container] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)

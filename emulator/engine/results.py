"""What the engine's operations answer: domain values (documents, keys, RU, the pkrange that served),
never REST bodies or headers; `emulator.rest.wire` shapes them for the protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cosmoscore.keys import Key
from cosmoscore.sql.utilization import Utilization


@dataclass(frozen=True)
class ThroughputSpec:
    """Throughput asked for at creation: manual RU/s or an autoscale maximum."""

    throughput: int
    autoscale: bool = False
    increment_percent: int | None = None  # an autoscale offer's autoUpgradePolicy, kept as sent (W80)


def autoscale_increment(settings: Any) -> int | None:
    """The `incrementPercent` of autoscale settings (`offerAutopilotSettings` or the create header), None
    when they carry no `autoUpgradePolicy`: the service keeps it as sent and the SDK reads it back (W80).
    A shape the SDK would not send is a ValueError naming it."""
    policy = settings.get("autoUpgradePolicy") if isinstance(settings, dict) else None
    if policy is None:
        return None
    throughput_policy = policy.get("throughputPolicy") if isinstance(policy, dict) else None
    value = throughput_policy.get("incrementPercent") if isinstance(throughput_policy, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(
            "autoUpgradePolicy must be an object whose throughputPolicy holds incrementPercent, a non-negative "
            f"integer, not {policy!r}."
        )
    return value


@dataclass(frozen=True)
class AccountInfo:
    name: str
    consistency: str  # the default consistency level


@dataclass(frozen=True)
class ResourceNames:
    """The ids of the resources a chain of resource ids (a `_self` link's) names; None from the first rid
    that names nothing (a deleted or recreated resource)."""

    database: str | None = None
    container: str | None = None
    item: str | None = None


@dataclass(frozen=True)
class Resource:
    """A metadata operation's answer: the resource (or list of them) and its charge."""

    status: int
    value: Any  # a resource dict, a list of them, or None after a delete
    request_charge: float = 0.0
    owner_rid: str = ""  # the rid a listing belongs to (a database for its containers)


@dataclass(frozen=True)
class Grant:
    """What a permission grants now, for the REST layer's resource-token check: its mode, the container
    by its rid and current names (None when that container is gone) and the logical partition, if any."""

    permission_rid: str
    mode: str  # "All" or "Read"
    coll_rid: str
    key: list[Any] | None  # the resourcePartitionKey as JSON; None: the whole container
    database: str | None = None
    container: str | None = None


@dataclass(frozen=True)
class ItemResult:
    """A point operation's answer: the document (None after a delete or when unchanged) and where it ran."""

    status: int  # 201 created, 200, 204 deleted, 304 not modified
    doc: dict[str, Any] | None
    request_charge: float
    pkrange_id: str
    lsn: int  # the range's log sequence number after the operation (session consistency)


@dataclass(frozen=True)
class FeedCursor:
    """Where a read feed resumes: the EPK to start from and the last (EPK, id) already returned."""

    start: str | None = None
    after: tuple[str, ...] | None = None


@dataclass(frozen=True)
class FeedPage:
    docs: list[dict[str, Any]]
    request_charge: float
    pkrange_id: str
    lsn: int | None  # None when no range served the page
    next: FeedCursor | None
    container_rid: str


@dataclass(frozen=True)
class QueryCursor:
    """Where a query resumes: the physical partition range it was reading, [start, end), the EPK its target
    in that range begins at (`at`, None: the range's start; an IN list has a target per key) and the rows
    of it already returned (the service's token names the range and counts the rows: W76)."""

    start: str | None = None
    end: str | None = None
    offset: int = 0
    at: str | None = None


@dataclass(frozen=True)
class PageMetrics:
    retrieved_docs: int
    retrieved_bytes: int
    output_docs: int
    output_bytes: int
    execution_ms: float
    index_hit_ratio: float


@dataclass(frozen=True)
class QueryPage:
    rows: list[Any]
    request_charge: float
    pkrange_id: str
    lsn: int | None
    next: QueryCursor | None
    container_rid: str
    metrics: PageMetrics | None = None
    index_utilization: Utilization | None = None


@dataclass(frozen=True)
class QueryResult:
    """A whole query, fanned out and merged the way the SDK does it, with what its requests cost."""

    rows: list[Any]
    request_charge: float
    ru_by_pkrange: dict[str, float] = field(default_factory=dict)

    @property
    def pkranges(self) -> set[str]:
        """The partition key ranges that served a page of the query."""
        return set(self.ru_by_pkrange)


@dataclass(frozen=True)
class RangeStatistics:
    """Storage of one physical partition and its largest logical partitions (for container statistics)."""

    pkrange_id: str
    size_bytes: int
    documents: int
    distinct_keys: int
    top_keys: list[tuple[Key, int]]  # (key, bytes), largest first


@dataclass(frozen=True)
class StorageUsage:
    """A container's stored bytes and documents against its quota."""

    size_bytes: int
    documents: int
    quota_bytes: int


@dataclass(frozen=True)
class ContainerInfo:
    props: dict[str, Any]
    request_charge: float
    statistics: list[RangeStatistics] | None = None
    usage: StorageUsage | None = None


@dataclass(frozen=True)
class RangesResult:
    """The routing map, whole or only the ranges born since a version; `changed` False: nothing new."""

    ranges: list[Any]  # emulator.engine.model.PkRange
    version: int
    partitions: int  # how many ranges the container has now
    container_rid: str
    changed: bool = True


@dataclass(frozen=True)
class ChangeFeedStart:
    """Where a read starts: after a position (an etag), from now (`If-None-Match: *`), from the beginning
    (neither); `since_ts` (If-Modified-Since, epoch seconds) keeps only changes written after it."""

    after: int | None = None
    now: bool = False
    since_ts: int | None = None


@dataclass(frozen=True)
class ChangePage:
    """One change feed answer: the changed documents (each with its `_lsn`) and the position to resume at;
    no documents is the service's 304 Not Modified."""

    docs: list[dict[str, Any]]
    etag: int
    request_charge: float
    pkrange_id: str
    lsn: int | None  # the serving range's session LSN; None when no range served
    container_rid: str


@dataclass(frozen=True)
class BatchOperation:
    """One operation of a transactional batch: `kind` is Create, Upsert, Replace, Read, Delete or Patch;
    `doc` the document (create, upsert, replace), `patch` the patch operations and `condition` their filter
    predicate; `if_match` / `if_none_match` its own preconditions."""

    kind: str
    item_id: str | None = None
    doc: Any = None
    patch: Any = None
    condition: Any = None
    if_match: str | None = None
    if_none_match: str | None = None


@dataclass(frozen=True)
class OperationResult:
    """What one operation of a batch answered (424: it did not fail, another one did)."""

    status: int
    doc: dict[str, Any] | None
    request_charge: float
    substatus: int = 0
    message: str = ""


@dataclass(frozen=True)
class BatchResult:
    """A transactional batch: every operation's result, whether its writes were committed (all) or not
    (none), its charge (the sum of its operations'), and the range and LSN that served it."""

    results: list[OperationResult]
    committed: bool
    request_charge: float
    pkrange_id: str
    lsn: int

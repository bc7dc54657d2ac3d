"""The storage collector: per container, a snapshot of its physical partitions from the data plane.

For each container of the account's database(s) (`list_containers`): the container read with partition key
range statistics and quota info (per pkrange size, document count and largest logical keys in the body's
`statistics`; the collection quota and usage in the `x-ms-resource-quota`/`-usage` headers, read from the
response's public `get_response_headers()`), the provisioned throughput (`get_throughput()`; for a container
that spends its database's shared offer, the database's, read once, in `database_throughput_ru`), and the split
lineage (`parents`) of every pkrange. Rows go to the `partitions` and `logical_keys` tables.

The lineage: no public SDK call returns the `/pkranges` list with its `parents`, but the SDK reads it itself
to build its routing map (on `read_feed_ranges()`), and that response passes through the client-level
`raw_response_hook`, a public keyword. `PkrangeLog` keeps the `parents` it saw there; a range it did not see
gets "" (no lineage is guessed from the statistics' ids).

Layers: `fetch_*` talk to the service; `parse_quota`, `partition_records`, `logical_key_records` and
`storage_line` are pure; `StorageCollector.collect` walks databases and containers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlparse

from azure.cosmos import ContainerProxy, CosmosClient, DatabaseProxy
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from collectors.client import fetch_client
from collectors.config import Account, Config
from collectors.credentials import account_credential
from collectors.errors import describe_error
from collectors.registry import Options
from collectors.run import SEAL_SECONDS, Run
from cosmoscore.keys import key_text
from cosmoscore.limits import Limits
from store import LogicalKeyRecord, PartitionRecord

GB_KB = 1024 * 1024


def parse_quota(header: str | None) -> dict[str, float]:
    """An `x-ms-resource-quota`/`-usage` header (`key=value;` pairs, any order) as numbers; bad pairs skipped."""
    found: dict[str, float] = {}
    for part in (header or "").split(";"):
        name, _, value = part.partition("=")
        try:
            found[name.strip()] = float(value)
        except ValueError:
            continue
    return found


@dataclass
class PkrangeLog:
    """The client-level response hook: the `parents` of every pkrange in the `/pkranges` answers it sees,
    and the RU of every response (the run's meter)."""

    charge: Callable[[float], None] = lambda ru: None
    parents: dict[str, list[str]] = field(default_factory=dict)
    bounds: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (minInclusive, maxExclusive) EPK
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_response(self, pipeline_response: Any) -> None:
        request, response = pipeline_response.http_request, pipeline_response.http_response
        with suppress(ValueError):
            self.charge(float(response.headers.get("x-ms-request-charge") or 0.0))
        path = unquote(urlparse(request.url).path).rstrip("/")
        if response.status_code != 200 or not path.endswith("/pkranges"):
            return
        try:
            ranges = json.loads(response.text()).get("PartitionKeyRanges", [])
        except (ValueError, AttributeError):
            return
        with self._lock:
            for rng in ranges:
                self.parents[str(rng.get("id"))] = [str(p) for p in rng.get("parents") or []]
                self.bounds[str(rng.get("id"))] = (str(rng.get("minInclusive", "")), str(rng.get("maxExclusive", "")))

    def take(self) -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
        """The lineage and the EPK bounds seen since the last call (one container's routing map read)."""
        with self._lock:
            seen, self.parents = self.parents, {}
            bounds, self.bounds = self.bounds, {}
        return seen, bounds


@dataclass(frozen=True)
class Snapshot:
    """What one container read says about a container's storage."""

    statistics: list[Mapping[str, Any]]
    quota: dict[str, float]
    usage: dict[str, float]
    lineage: dict[str, list[str]]
    throughput: float | None
    bounds: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> EPK (minInclusive, maxExclusive)


def fetch_throughput(resource: ContainerProxy | DatabaseProxy) -> float | None:
    """A container's own RU/s, or a database's shared RU/s (autoscale: its max); None when it has none (a
    container of a shared-throughput database, a database without an offer: the SDK raises AttributeError
    or a 404 for an empty offer list, cosmos-errors-and-stats.md §2.6)."""
    try:
        offer = resource.get_throughput()
    except (CosmosResourceNotFoundError, AttributeError):
        return None
    value = offer.offer_throughput or offer.auto_scale_max_throughput
    return float(value) if value else None


def fetch_snapshot(container: ContainerProxy, log: PkrangeLog) -> Snapshot:
    """The container read with statistics and quota info, its throughput and its pkranges' lineage."""
    log.take()
    properties = container.read(populate_partition_key_range_statistics=True, populate_quota_info=True)
    headers = properties.get_response_headers()
    list(container.read_feed_ranges(force_refresh=True))  # the SDK reads /pkranges: `log` sees the parents
    lineage, bounds = log.take()
    return Snapshot(
        statistics=list(properties.get("statistics") or []),
        quota=parse_quota(headers.get("x-ms-resource-quota")),
        usage=parse_quota(headers.get("x-ms-resource-usage")),
        lineage=lineage,
        throughput=fetch_throughput(container),
        bounds=bounds,
    )


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


def partition_records(
    snapshot: Snapshot, ids: Mapping[str, Any], database_throughput: float | None = None
) -> list[PartitionRecord]:
    """One `partitions` record per pkrange of the statistics (pure); `ids` names run, time and container;
    `database_throughput`: the database's shared RU/s, recorded on a container without throughput of its own."""
    count = len(snapshot.statistics)
    share = snapshot.throughput / count if snapshot.throughput is not None and count else None
    return [
        PartitionRecord(
            **ids,
            pkrange_id=str(stats["id"]),
            parents=",".join(snapshot.lineage.get(str(stats["id"]), [])),
            size_kb=int(stats.get("sizeInKB") or 0),
            document_count=int(stats.get("documentCount") or 0),
            sampled_distinct_keys=_int(stats.get("sampledDistinctPartitionKeyCount")),
            quota_collection_kb=_int(snapshot.quota.get("collectionSize")),
            usage_collection_kb=_int(snapshot.usage.get("collectionSize")),
            usage_documents_kb=_int(snapshot.usage.get("documentsSize")),
            min_epk=snapshot.bounds.get(str(stats["id"]), (None, None))[0],
            max_epk=snapshot.bounds.get(str(stats["id"]), (None, None))[1],
            throughput_ru=snapshot.throughput,
            throughput_share=share,
            database_throughput_ru=database_throughput if snapshot.throughput is None else None,
        )
        for stats in snapshot.statistics
    ]


def logical_key_records(snapshot: Snapshot, ids: Mapping[str, Any]) -> list[LogicalKeyRecord]:
    """One `logical_keys` record per large logical key the statistics list, largest first per pkrange (pure)."""
    records = [
        LogicalKeyRecord(
            **ids,
            pkrange_id=str(stats["id"]),
            partition_key=key_text(key.get("partitionKey")),
            size_kb=int(key.get("sizeInKB") or 0),
        )
        for stats in snapshot.statistics
        for key in stats.get("partitionKeys") or []
    ]
    return sorted(records, key=lambda r: (r.pkrange_id, -r.size_kb))


def _share(size_kb: int, limit_bytes: int) -> str:
    return f"{100 * size_kb * 1024 / limit_bytes:.1f}% of {limit_bytes / 1024**3:g} GB"


def storage_line(
    label: str, partitions: list[PartitionRecord], keys: list[LogicalKeyRecord], limits: Limits = Limits()
) -> str:
    """One line per container: partitions, total size, the largest partition against the physical limit and
    the largest logical key against the logical limit (pure)."""
    total = sum(p.size_kb for p in partitions)
    line = f"{label}: {len(partitions)} partition(s), {total:,} KB"
    if partitions:
        big = max(partitions, key=lambda p: p.size_kb)
        line += f", largest pkrange {big.pkrange_id} {big.size_kb:,} KB ({_share(big.size_kb, limits.physical_partition_max_bytes)})"
    if keys:
        top = max(keys, key=lambda k: k.size_kb)
        shown = ", ".join(json.dumps(c) for c in json.loads(top.partition_key))
        line += f", largest key {shown} {top.size_kb:,} KB ({_share(top.size_kb, limits.logical_partition_max_bytes)})"
    return line


@dataclass
class Storage:
    """One account's storage snapshot, inside a `Run`."""

    account: Account
    run: Run
    log: PkrangeLog
    database_offers: dict[str, float | None] = field(default_factory=dict)  # database -> shared RU/s

    def describe(self, exc: BaseException) -> str:
        return describe_error(exc, self.account.endpoint, key_env=self.account.key_env)

    def collect_container(self, client: CosmosClient, database: str, name: str) -> None:
        """One container's rows and line; a failure is one line and a failed item."""
        label = name if len(self.account.databases) == 1 else f"{database}/{name}"
        try:
            container = client.get_database_client(database).get_container_client(name)
            snapshot = fetch_snapshot(container, self.log)
        except Exception as exc:  # one line, and the other containers go on
            self.run.err(f"container {label!r}: {self.describe(exc)}")
            self.run.count(failed=True)
            return
        ids = {
            "run_id": self.run.run_id,
            "time": datetime.fromtimestamp(self.run.clock(), UTC),
            "account": self.account.name,
            "database": database,
            "container": name,
        }
        shared = self.shared_throughput(client, database) if snapshot.throughput is None else None
        partitions, keys = partition_records(snapshot, ids, shared), logical_key_records(snapshot, ids)
        for record in [*partitions, *keys]:
            self.run.record(record)
        self.run.out(storage_line(label, partitions, keys))
        self.run.count(failed=False)

    def shared_throughput(self, client: CosmosClient, database: str) -> float | None:
        """The database's shared RU/s, read once per run (None: it has none, or it could not be read: the
        partitions are recorded all the same)."""
        if database not in self.database_offers:
            try:
                self.database_offers[database] = fetch_throughput(client.get_database_client(database))
            except Exception:  # the snapshot is kept without it
                self.database_offers[database] = None
        return self.database_offers[database]

    def collect_database(self, client: CosmosClient, database: str) -> None:
        """Every container of one database; an unknown database is one line and a failed item."""
        try:
            names = [c["id"] for c in client.get_database_client(database).list_containers()]
        except CosmosResourceNotFoundError:
            self.run.err(f"database {database!r} not found in account {self.account.name!r}")
            self.run.count(failed=True)
            return
        except Exception as exc:  # one line, and the other databases go on
            self.run.err(f"database {database!r}: {self.describe(exc)}")
            self.run.count(failed=True)
            return
        for name in names:
            if self.run.stop.is_set():
                return
            self.collect_container(client, database, name)
            self.run.seal(every=SEAL_SECONDS)


class StorageCollector:
    """`ruscope storage` and the storage part of `ruscope collect`."""

    name = "storage"
    item = "container"

    def budget(self, config: Config) -> float | None:
        return None

    def collect(self, config: Config, run: Run, options: Options) -> None:
        """A snapshot of every container of the account's databases. An account that cannot be reached (or
        whose key is missing) is one line naming it and one failed item."""
        account = config.account(options.account)
        log = PkrangeLog(charge=run.charge)
        storage = Storage(account, run, log)
        try:
            client = fetch_client(
                account.connection, options.credential or account_credential(account), on_response=log.on_response
            )
        except Exception as exc:  # no client: one line, one failed item
            run.err(f"account {account.name!r}: {storage.describe(exc)}")
            run.count(failed=True)
            return
        for database in account.databases:
            if run.stop.is_set():
                break
            storage.collect_database(client, database)


COLLECTOR = StorageCollector()

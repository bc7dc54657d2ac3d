"""A document sample read from a live container through the SDK, for `ruscope advise`, within an RU budget.

Why this shape:
- One `SELECT * FROM c` per feed range (`read_feed_ranges()`, one per physical partition), read a page at
  a time in turn (round robin, equal pages), so every physical partition is represented even when the
  document cap or the budget stops the read early; a range that runs out leaves its share to the others. Skipping pages would not save RU (a skipped page is still read and
  billed), so each range contributes its first pages: on Azure the feed within a partition follows write
  order, which is a bias the report states rather than hides.
- The budget counts every response the client sees (account and container reads, `/pkranges`, query
  plans, pages: the client-level response hook, as `collectors.replay.capture` does; cosmos-wire-protocol.md §3)
  and a page is not requested when the last page's charge would take the total past the budget. So the
  RU spent is at most the budget plus one page (a page larger than the ones before it).
- System properties that describe storage, not the document (`_rid`, `_self`, `_etag`, `_attachments`,
  `_lsn`), are dropped; `_ts` is kept: it is the write time in epoch seconds, which the advisor accepts
  as its `time_property` when the documents carry no time of their own.
- The JSONL is written atomically (a reader never sees half a file); an error is one line (`SampleError`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from azure.cosmos import ContainerProxy, CosmosClient
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from collectors.client import fetch_client
from collectors.config import Account
from collectors.credentials import account_credential
from collectors.errors import describe_error, no_key_line
from wholefile import write_whole

DROPPED_PROPERTIES = frozenset({"_rid", "_self", "_etag", "_attachments", "_lsn"})
SAMPLE_SQL = "SELECT * FROM c"


class SampleError(Exception):
    """The sample could not be read (no key, unreachable, rejected, no such container): one line."""


@dataclass(frozen=True)
class SampleReport:
    path: Path
    documents: int
    request_charge: float  # every response's x-ms-request-charge, metadata reads included
    partitions_covered: int  # feed ranges (physical partitions) with at least one sampled document
    partitions: int
    stopped_by: str  # "end" (everything read), "max_documents" or "budget"
    per_partition: tuple[int, ...] = ()  # documents sampled from each feed range, in EPK order of the SDK

    def line(self) -> str:
        return (
            f"{self.path}: {self.documents} document(s) from {self.partitions_covered}/{self.partitions} "
            f"physical partition(s), {self.request_charge:.1f} RU (stopped by {self.stopped_by})"
        )


class RuMeter:
    """The client-level response hook: the RU of every response, and the last page's (the next one's guess)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.last = 0.0

    def on_response(self, pipeline_response: Any) -> None:
        raw = pipeline_response.http_response.headers.get("x-ms-request-charge")
        try:
            charge = float(raw) if raw else 0.0
        except ValueError:
            charge = 0.0
        self.total += charge
        self.last = charge


def clean_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the storage system properties (`_ts` stays: a write time)."""
    return {k: v for k, v in doc.items() if k not in DROPPED_PROPERTIES}


def page_size_for(max_documents: int, ranges: int, page_size: int) -> int:
    """Pages no larger than an even share of the cap, so the last round cannot favour the first ranges."""
    return max(1, min(page_size, -(-max_documents // max(ranges, 1))))


def fetch_pages(
    container: ContainerProxy, feed_range: Mapping[str, Any], page_size: int
) -> Iterator[list[dict[str, Any]]]:
    """One feed range's documents, a page (one request) at a time."""
    pages = container.query_items(SAMPLE_SQL, feed_range=feed_range, max_item_count=page_size).by_page()
    for page in pages:
        yield list(page)


def fetch_sample(
    container: ContainerProxy, meter: RuMeter, *, max_documents: int, budget_ru: float, page_size: int
) -> tuple[list[list[dict[str, Any]]], str]:
    """The documents per feed range, read round robin a page at a time until the cap, the budget or the end.
    Equal pages in turn give every range an even share; a range that ends leaves its share to the others."""
    raw_ranges = list(container.read_feed_ranges())
    size = page_size_for(max_documents, len(raw_ranges), page_size)
    taken: list[list[dict[str, Any]]] = [[] for _ in raw_ranges]
    feeds = {i: fetch_pages(container, r, size) for i, r in enumerate(raw_ranges)}
    total = 0
    while feeds:
        for i in list(feeds):
            if meter.total + meter.last > budget_ru:
                return taken, "budget"
            page = next(feeds[i], None)
            if page is None:
                del feeds[i]
                continue
            kept = [clean_document(d) for d in page[: max_documents - total]]
            taken[i].extend(kept)
            total += len(kept)
            if total >= max_documents:
                return taken, "max_documents"
    return taken, "end"


def write_sample(docs: list[dict[str, Any]], path: Path) -> None:
    """The documents as JSONL, atomically (a temporary file beside it, then a rename)."""
    lines = ((json.dumps(doc, ensure_ascii=False) + "\n").encode() for doc in docs)
    try:
        write_whole(path, lambda out: out.writelines(lines))
    except OSError as exc:
        raise SampleError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _container(client: CosmosClient, database: str, container: str) -> ContainerProxy:
    proxy = client.get_database_client(database).get_container_client(container)
    try:
        proxy.read()
    except CosmosResourceNotFoundError:
        raise SampleError(f"container {container!r} not found in database {database!r}") from None
    return proxy


def sample_container(
    account: Account,
    database: str,
    container: str,
    *,
    max_documents: int = 10_000,
    budget_ru: float = 5_000.0,
    out_path: Path,
    page_size: int = 100,
    credential: Any = None,
) -> SampleReport:
    """Sample `container` of `account` into `out_path` (JSONL); SampleError with one line when it cannot."""
    if max_documents < 1 or budget_ru <= 0:
        raise SampleError("the sample needs max_documents >= 1 and a budget above 0 RU")
    meter = RuMeter()
    try:
        credential = credential or account_credential(account)
        if not isinstance(credential, str) and urlparse(account.endpoint).scheme == "http":
            raise SampleError(no_key_line(account.endpoint, account.key_env))  # tokens go over https only
        client = fetch_client(account.connection, credential, on_response=meter.on_response)
        proxy = _container(client, database, container)
        taken, stopped_by = fetch_sample(
            proxy, meter, max_documents=max_documents, budget_ru=budget_ru, page_size=page_size
        )
    except SampleError:
        raise
    except Exception as exc:
        raise SampleError(describe_error(exc, account.endpoint, key_env=account.key_env)) from None
    write_sample([d for docs in taken for d in docs], out_path)
    counts = tuple(len(docs) for docs in taken)
    covered = sum(1 for n in counts if n)
    return SampleReport(out_path, sum(counts), meter.total, covered, len(counts), stopped_by, counts)

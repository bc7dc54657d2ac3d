"""A document sample read from a live container through the SDK, for `ruscope advise`, within an RU budget,
proportional to where the documents are: across feed ranges and over each range's `_ts` span.

Why this shape:
- Proportional across feed ranges (`read_feed_ranges()`, one per physical partition): a first-pages read
  gives every range an even share, so a range holding 60% of the documents was a third of the sample.
  Each range's share of the sample is its share of the documents instead, from the container read with
  partition key range statistics (one metadata read for every range's `documentCount`, as the storage
  collector reads it, the pkranges' bounds seen by its `collectors.storage.PkrangeLog`;
  cosmos-errors-and-stats.md §2.2), refined by the windows' own counts below where the plan affords them.
- Proportional within a range, over its `_ts` span: the feed within a partition follows write order, so
  a range's first pages are its oldest writes (a tenant that started writing late was 0% of the "current
  writes"). Each range's `_ts` span (`SELECT VALUE MIN(c._ts)` and `MAX`) is cut into up to `WINDOWS`
  windows of equal time, each window counted (`SELECT VALUE COUNT(1) FROM c WHERE c._ts >= @lo AND
  c._ts < @hi`), and the whole sample is allotted to the (range, window) cells by their counts (largest
  remainder), so a busy hour gets its share, not a quiet day's. `_ts` is the document's last write in
  epoch seconds (cosmos-sql-semantics.md §3.7); a `_ts` range filter and the aggregates over it rely on
  the default range index (cosmos-sql-semantics.md §5.8; ru-cost-model.md W7, Q13). The aggregates are VALUE ones: the
  gateway sends an aggregate back for a query plan even on one pkrange (cosmos-wire-protocol.md §1.7), and
  a cross-partition plan takes only `VALUE <Aggregate>` (cosmos-errors-and-stats.md §1.4).
- Not OFFSET, not made-up continuations: OFFSET loads and bills the documents it skips (ru-cost-model.md
  Q20), so a deep offset costs what reading up to it would; a continuation token is the service's own
  position (`-RID:~…#RT:…`, cosmos-wire-protocol.md §1.7), and no public API makes one at a chosen point
  (ruscope's rule: none is forged).
- The plan (statistics, spans, counts) costs RU and is counted like every read: it may spend at most
  `PLAN_SHARE` of the budget, range by range; a range it could not count gets its statistics' count spread
  evenly over its windows (or, without a span, one window in write order), and the report says so.
- The budget counts every response the client sees (account and container reads, `/pkranges`, query
  plans, aggregates, pages: the client-level response hook, as `collectors.replay.capture` does;
  cosmos-wire-protocol.md §3), and a request is not sent when the last response's charge (of a page, for
  a page) would take the total past the budget. So the RU spent is at most the budget plus one response.
- The bias the sample can measure is stated, not hidden (`SampleReport.bias_lines`): each range's share
  of the sample against its share of the documents, the `_ts` windows covered, and one total-variation
  distance over the cells; what it cannot measure (the order within a window) is named.
- System properties that describe storage, not the document (`_rid`, `_self`, `_etag`, `_attachments`,
  `_lsn`), are dropped; `_ts` is kept: the advisor accepts it as its `time_property` when the documents
  carry no time of their own.
- The JSONL is written atomically (a reader never sees half a file); an error is one line (`SampleError`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from collectors.client import fetch_client
from collectors.config import Account
from collectors.credentials import account_credential
from collectors.errors import describe_error, no_key_line
from collectors.sample.plan import Cell, RangePlan, Window, allot, range_documents, window_edges, windows_for
from collectors.sample.report import SampleReport, Stratum
from collectors.storage import PkrangeLog
from wholefile import write_whole

__all__ = ["SampleError", "SampleReport", "Stratum", "clean_document", "sample_container"]

DROPPED_PROPERTIES = frozenset({"_rid", "_self", "_etag", "_attachments", "_lsn"})
WINDOWS = 8  # `_ts` windows per feed range at most (fewer when its share of the sample is smaller)
PLAN_SHARE = 0.5  # of the budget the plan may spend; the rest reads documents
IN_WINDOW = "c._ts >= @lo AND c._ts < @hi"


class SampleError(Exception):
    """The sample could not be read (no key, unreachable, rejected, no such container): one line."""


class RuMeter:
    """The RU of every response (`add`, the response hook's charge), and the last one's (the next's guess)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.last = 0.0

    def add(self, charge: float) -> None:
        self.total += charge
        self.last = charge

    def affords(self, budget: float) -> bool:
        """Whether another request fits: the last response's charge again stays within `budget`."""
        return self.total + self.last <= budget


def clean_document(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the storage system properties (`_ts` stays: a write time)."""
    return {k: v for k, v in doc.items() if k not in DROPPED_PROPERTIES}


def _window_query(window: Window, sql: str) -> tuple[str, list[dict[str, Any]]]:
    if window.lo is None or window.hi is None:
        return sql, []
    return f"{sql} WHERE {IN_WINDOW}", [{"name": "@lo", "value": window.lo}, {"name": "@hi", "value": window.hi}]


def fetch_value(container: ContainerProxy, feed_range: Mapping[str, Any], sql: str, window: Window) -> Any:
    """One VALUE aggregate over a feed range (or a window of it); None when it is undefined (no documents)."""
    query, parameters = _window_query(window, sql)
    values = list(container.query_items(query, parameters=parameters, feed_range=feed_range))
    return values[0] if values else None


def fetch_pages(
    container: ContainerProxy, feed_range: Mapping[str, Any], window: Window, page_size: int
) -> Iterator[list[dict[str, Any]]]:
    """One window's documents (of one feed range), a page (one request) at a time."""
    query, parameters = _window_query(window, "SELECT * FROM c")
    pages = container.query_items(query, parameters=parameters, feed_range=feed_range, max_item_count=page_size)
    for page in pages.by_page():
        yield list(page)


def fetch_plan(
    container: ContainerProxy, feed_range: Mapping[str, Any], documents: int | None, windows: int, meter: RuMeter,
    plan_budget: float,
) -> RangePlan:  # fmt: skip
    """A range's `_ts` windows, counted, as far as the plan's budget goes (module docstring)."""
    whole = RangePlan(documents, (Window(None, None),))
    if not meter.affords(plan_budget):
        return whole
    lo = fetch_value(container, feed_range, "SELECT VALUE MIN(c._ts) FROM c", Window(None, None))
    if lo is None or not meter.affords(plan_budget):
        return RangePlan(0 if lo is None else documents, whole.windows, counted=lo is None)
    hi = fetch_value(container, feed_range, "SELECT VALUE MAX(c._ts) FROM c", Window(None, None))
    if hi is None:
        return RangePlan(0, whole.windows, counted=True)
    edges = window_edges(int(lo), int(hi), windows)
    spans = [Window(a, b) for a, b in zip(edges, edges[1:], strict=False)]
    counted: list[Window] = []
    for span in spans:
        if not meter.affords(plan_budget):
            return RangePlan(documents, tuple(spans))
        count = fetch_value(container, feed_range, "SELECT VALUE COUNT(1) FROM c", span)
        counted.append(Window(span.lo, span.hi, int(count or 0)))
    return RangePlan(sum(w.documents or 0 for w in counted), tuple(counted), counted=True)


def fetch_cells(
    container: ContainerProxy, ranges: Sequence[Mapping[str, Any]], cells: list[Cell], meter: RuMeter, *,
    budget_ru: float, page_size: int,
) -> tuple[list[list[dict[str, Any]]], str]:  # fmt: skip
    """The documents of each cell, its first `quota` in the feed's order, read round robin a page at a time
    (so a budget stop leaves every cell its share so far) until every quota, the budget or the end."""
    taken: list[list[dict[str, Any]]] = [[] for _ in cells]
    feeds = {
        i: fetch_pages(container, ranges[c.range_index], c.window, max(1, min(page_size, c.quota)))
        for i, c in enumerate(cells)
        if c.quota > 0
    }
    ended = 0
    while feeds:
        for i in list(feeds):
            if not meter.affords(budget_ru):
                return taken, "budget"
            page = next(feeds[i], None)
            if page is None:
                ended += 1
                del feeds[i]
                continue
            taken[i].extend(clean_document(d) for d in page[: cells[i].quota - len(taken[i])])
            if len(taken[i]) >= cells[i].quota:
                del feeds[i]
    return taken, "end" if ended == sum(1 for c in cells if c.quota > 0) else "max_documents"


def fetch_sample(
    container: ContainerProxy, log: PkrangeLog, meter: RuMeter, *, max_documents: int, budget_ru: float,
    page_size: int, windows: int = WINDOWS,
) -> tuple[list[list[dict[str, Any]]], list[Cell], str, list[RangePlan]]:  # fmt: skip
    """The plan (statistics, then each range's counted `_ts` windows), the cells' quotas, their documents."""
    log.take()
    properties = container.read(populate_partition_key_range_statistics=True)
    ranges = list(container.read_feed_ranges(force_refresh=True))  # the SDK reads /pkranges: `log` sees the bounds
    statistics = range_documents(ranges, properties.get("statistics") or [], log.take()[1])
    first_guess = allot(max_documents, [float(n or 0) for n in statistics])
    plan_budget = budget_ru * PLAN_SHARE
    plans = [
        fetch_plan(container, r, n, windows_for(guess, windows), meter, plan_budget)
        for r, n, guess in zip(ranges, statistics, first_guess, strict=True)
    ]
    cells = Cell.for_plans(plans, max_documents)
    meter.last = 0.0  # an aggregate's charge is no guess for a page's: the first page goes if the total fits
    taken, stopped_by = fetch_cells(container, ranges, cells, meter, budget_ru=budget_ru, page_size=page_size)
    return taken, cells, stopped_by, plans


def write_sample(docs: list[dict[str, Any]], path: Path) -> None:
    """The documents as JSONL, atomically (a temporary file beside it, then a rename)."""
    lines = ((json.dumps(doc, ensure_ascii=False) + "\n").encode() for doc in docs)
    try:
        write_whole(path, lambda out: out.writelines(lines))
    except OSError as exc:
        raise SampleError(f"{path}: cannot write: {exc.strerror or exc}") from None


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
    log = PkrangeLog(charge=meter.add)
    try:
        credential = credential or account_credential(account)
        if not isinstance(credential, str) and urlparse(account.endpoint).scheme == "http":
            raise SampleError(no_key_line(account.endpoint, account.key_env))  # tokens go over https only
        client = fetch_client(account.connection, credential, on_response=log.on_response)
        proxy = client.get_database_client(database).get_container_client(container)
        taken, cells, stopped_by, plans = fetch_sample(
            proxy, log, meter, max_documents=max_documents, budget_ru=budget_ru, page_size=page_size
        )
    except CosmosResourceNotFoundError:  # the container read with statistics is the first request on it
        raise SampleError(f"container {container!r} not found in database {database!r}") from None
    except SampleError:
        raise
    except Exception as exc:
        raise SampleError(describe_error(exc, account.endpoint, key_env=account.key_env)) from None
    write_sample([d for docs in taken for d in docs], out_path)
    return SampleReport.of(out_path, cells, taken, plans, request_charge=meter.total, stopped_by=stopped_by)

"""The monitor stand-in's one port: Log Analytics (`/v1/...`, `logs.LogsApp`) and Azure Monitor metrics
(`/subscriptions/{sub}/metrics:getBatch`, `metrics.MetricsApp`), routed by path.

Every request is computed off the event loop (`prepare`, on the stand-in's own worker threads, so neither
the loop's TLS handshakes nor the Cosmos DB endpoint's large-query preparation wait behind a heavy query),
within its `budget.Budget` (time from `Prefer: wait=N`, result caps); `close` cancels what is running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from emulator.engine.facade import Engine
from emulator.monitor.budget import MAX_BYTES, MAX_ROWS, Budget, wait_seconds
from emulator.monitor.logs import LogsApp
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.query import MonitorRequest
from emulator.rest import offloop
from emulator.rest.request import Request
from emulator.rest.transport import TransportLimits

Response = tuple[int, dict[str, str], bytes]

# The largest request body the stand-in reads (413 beyond). Ours: the references give no figure; the
# largest legitimate body, 50 resource ids (cosmoscore.monitor.metrics.MAX_RESOURCE_IDS) or a long KQL
# query, is a few kilobytes, and a body is held whole in memory before it is parsed.
MAX_BODY_BYTES = 256 * 1024
WORKERS = 2  # requests computed at once: a heavy one leaves a worker for the next client


def transport_limits(base: TransportLimits | None = None) -> TransportLimits:
    """The transport limits of the stand-in's port: `base` (the endpoint's), with the smaller body cap."""
    return replace(base or TransportLimits(), max_body_bytes=MAX_BODY_BYTES)


class MonitorApp:
    """Both APIs of the stand-in behind one `emulator.rest.server.App`."""

    request_type = MonitorRequest

    def __init__(
        self,
        engine: Engine,
        region: str = "local",
        *,
        max_rows: int = MAX_ROWS,
        max_bytes: int = MAX_BYTES,
        regions: Sequence[str] | None = None,
    ) -> None:
        """`regions`: the account's regions for its metrics (`MetricsApp`; default: `region` alone)."""
        self.max_rows, self.max_bytes = max_rows, max_bytes  # a result's caps (Log Analytics'; tests shrink them)
        self.metrics = MetricsApp(engine, region, regions)
        self.logs = LogsApp(engine, region)
        self.stop = threading.Event()  # set by `close`: the running request ends at its next budget check
        self._pool: ThreadPoolExecutor | None = None

    def executor(self) -> ThreadPoolExecutor:
        """The stand-in's worker threads (the transport runs `prepare`'s work there)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ruscope-monitor")
        return self._pool

    def prepare(self, request: Request) -> Callable[[], object] | None:
        """The whole answer, computed on a worker thread; `handle` then sends it."""
        if not isinstance(request, MonitorRequest):
            return None

        def work() -> None:
            with offloop.collector_paused():  # its full collections would stop the endpoint's thread too
                request.answer = self._answer(request)

        return work

    def handle(self, request: Request) -> Response:
        if isinstance(request, MonitorRequest) and request.answer is not None:
            answer, request.answer = request.answer, None
            return answer
        return self._answer(request)

    def close(self) -> None:
        """Cancel the requests being computed (they answer 503) and release the workers."""
        self.stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _answer(self, request: Request) -> Response:
        budget = Budget(wait_seconds(request.header("prefer")), self.stop, self.max_rows, self.max_bytes)
        if request.segments[:1] == ["v1"]:
            return self.logs.handle(request, budget)
        return self.metrics.handle(request, budget)

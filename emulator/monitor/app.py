"""The monitor stand-in's one port: Log Analytics (`/v1/...`, `logs.LogsApp`) and Azure Monitor metrics
(`/subscriptions/{sub}/metrics:getBatch`, `metrics.MetricsApp`), routed by path."""

from __future__ import annotations

from dataclasses import replace

from emulator.engine.facade import Engine
from emulator.monitor.logs import LogsApp
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.query import MonitorRequest
from emulator.rest.request import Request
from emulator.rest.transport import TransportLimits

# The largest request body the stand-in reads (413 beyond). Ours: the references give no figure; the
# largest legitimate body, 50 resource ids (cosmoscore.monitor.metrics.MAX_RESOURCE_IDS) or a long KQL
# query, is a few kilobytes, and a body is held whole in memory before it is parsed.
MAX_BODY_BYTES = 256 * 1024


def transport_limits(base: TransportLimits | None = None) -> TransportLimits:
    """The transport limits of the stand-in's port: `base` (the endpoint's), with the smaller body cap."""
    return replace(base or TransportLimits(), max_body_bytes=MAX_BODY_BYTES)


class MonitorApp:
    """Both APIs of the stand-in behind one `emulator.rest.server.App`."""

    request_type = MonitorRequest

    def __init__(self, engine: Engine, region: str = "local") -> None:
        self.metrics = MetricsApp(engine, region)
        self.logs = LogsApp(engine, region)

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        if request.segments[:1] == ["v1"]:
            return self.logs.handle(request)
        return self.metrics.handle(request)

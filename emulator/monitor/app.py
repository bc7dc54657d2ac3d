"""The monitor stand-in's one port: Log Analytics (`/v1/...`, `logs.LogsApp`) and Azure Monitor metrics
(`/subscriptions/{sub}/metrics:getBatch`, `metrics.MetricsApp`), routed by path."""

from __future__ import annotations

from emulator.engine.facade import Engine
from emulator.monitor.logs import LogsApp
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.query import MonitorRequest
from emulator.rest.request import Request


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

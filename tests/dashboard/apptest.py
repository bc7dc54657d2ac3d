"""Helpers of the dashboard's AppTest runs: fill a temp store from a compact plan, run the app, read charts."""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from dashboard.display import MISSING_NUMBER, MISSING_TIME
from store import store_location, write_frame
from tests.analysis.queries.test_costs import T0, execution, executions_frame, request, requests_frame

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"

# (run, minute, query, repeat, mode, routing, parts); a part: [(request kind, pkrange id, RU), ...]
Part = list[tuple[str, str, float]]
GATEWAY_THEN_PAGES = [("refused", "", 1.0), ("query_plan", "", 0.5)]
PLAN: list[tuple[str, int, str, int, str, str, list[Part]]] = [
    ("r1", 0, "point", 0, "as-is", "single", [[("page", "0", 2.5)]]),
    ("r1", 1, "point", 1, "as-is", "single", [[("page", "0", 3.5)]]),
    ("r1", 2, "scan", 0, "per-feed-range", "single", [[("page", "0", 2.0)], [("page", "1", 2.0)]]),
    ("r1", 3, "wide", 0, "as-is", "fan-out", [[*GATEWAY_THEN_PAGES, ("page", "0", 3.0), ("page", "1", 4.5)]]),
    ("r2", 60, "point", 0, "as-is", "single", [[("page", "0", 3.3)]]),
    ("r2", 61, "scan", 0, "per-feed-range", "single", [[("page", "0", 2.0)], [("page", "1", 3.0)]]),
    ("r2", 63, "wide", 0, "as-is", "fan-out", [[*GATEWAY_THEN_PAGES, ("page", "0", 3.0), ("page", "1", 6.0)]]),
]

MARKDOWN = MarkdownIt("commonmark", {"html": False})  # what a page's Markdown element renders (CommonMark)


def text_of(rendered: str) -> str:
    """The text a reader sees in rendered HTML: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


def shown(markdown: str) -> str:
    """A Markdown element's source as a reader sees it once rendered, as text."""
    return text_of(MARKDOWN.render(markdown)).strip()


def store_rows(plan: list[tuple[str, int, str, int, str, str, list[Part]]]) -> tuple[list[dict], list[dict]]:
    """`executions` and `requests` rows for a plan, each execution's total_ru the sum of its requests."""
    executions: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    for run, minute, query, repeat, mode, routing, parts in plan:
        for n, part in enumerate(parts):
            execution_id = f"{query}-{repeat}-{n}"
            pages = [pk for kind, pk, _ in part if kind == "page"]
            executions.append(
                execution(
                    run,
                    query,
                    minute=minute,
                    repeat=repeat,
                    ru=round(sum(ru for *_, ru in part), 2),
                    mode=mode,
                    feed_range=f"range{n}" if mode == "per-feed-range" else "",
                    pkranges=",".join(pages),
                    routing=routing,
                    execution_id=execution_id,
                )
            )
            requests.extend(
                request(run, query, execution_id, kind, pk, ru, seq=len(requests), minute=minute)
                for kind, pk, ru in part
            )
    return executions, requests


def write_store(store: Path, executions: list[dict], requests: list[dict]) -> None:
    for run in sorted({row["run_id"] for row in executions}):
        write_frame(
            store_location(store),
            "executions",
            executions_frame(*[r for r in executions if r["run_id"] == run]),
            run_id=run,
            part="000",
        )
        write_frame(
            store_location(store),
            "requests",
            requests_frame(*[r for r in requests if r["run_id"] == run]),
            run_id=run,
            part="000",
        )


_COMPONENTS: list[object] = []  # the one registry of installed Streamlit components new_app's AppTests share


def new_app(script: Path | str = APP, *, timeout: float = 30) -> AppTest:
    """An AppTest of `script` (the dashboard) that shares the session's registry of installed Streamlit
    components: each AppTest's first run otherwise scans every installed distribution's metadata for them
    (0.4 s here, hundreds of AppTests a session) and the installed set does not change within a session.
    The registry is AppTest's private `_bidi_component_manager` (Streamlit 1.67); where a Streamlit has no
    such attribute, each AppTest scans for itself as before."""
    app = AppTest.from_file(str(script), default_timeout=timeout)
    if not hasattr(app, "_bidi_component_manager"):
        return app
    if _COMPONENTS:
        app._bidi_component_manager = _COMPONENTS[0]
    else:
        from streamlit.components.v2.component_manager import BidiComponentManager

        manager = BidiComponentManager()
        manager.discover_and_register_components(start_file_watching=False)
        _COMPONENTS.append(manager)
        app._bidi_component_manager = manager
    return app


def run_app(page: str | None = None, *, check: bool = True) -> AppTest:
    """The app run once, on `page` (a file of dashboard/, "views/cost.py") or on its default page: selected
    before the first run (the pages' URLs are their file names), so a test pays for one page, not two.
    `check`: the run raised no exception."""
    app = new_app()
    if page is not None:
        app.switch_page(page)
    app.run()
    assert not check or not app.exception, [e.message for e in app.exception]
    return app


def chart(app: AppTest, key: str) -> dict[str, Any]:
    [element] = [e for e in app.get("plotly_chart") if e.proto.id.endswith(f"-{key}")]
    return json.loads(element.proto.spec)


def values(data: Any) -> list:
    """A trace's values as plotly sends them: a list, or numpy's bytes in base64 ({"dtype", "bdata"})."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).tolist()
    return list(data)


def bars(app: AppTest, key: str = "query_costs_breakdown") -> dict[str, tuple[list[str], list[float]]]:
    """The Query costs breakdown's segments: {container/pkrange: (queries, RU)}."""
    return {t["name"]: (values(t["x"]), values(t["y"])) for t in chart(app, key)["data"]}


def minutes_ago(minutes: int) -> int:
    """The `minute` (after T0, the fixtures' origin) of the instant `minutes` before now."""
    now = pd.Timestamp(dt.datetime.now(dt.UTC))
    return int((now - T0) / pd.Timedelta(minutes=1)) - minutes


def write_plan(
    store: Path,
    plan: list,
    *,
    database: str = "shop",
    container: str = "orders",
    part: str,
    account: str = "127.0.0.1",
) -> None:
    """Add a plan's executions and requests to the store, in one account, database and container."""
    executions, requests = store_rows(plan)
    for row in executions + requests:
        row.update(database=database, container=container, account=account)
    write_rows(store, executions, requests, part=part)


def write_rows(store: Path, executions: list[dict], requests: list[dict], *, part: str) -> None:
    """Add `executions` and `requests` rows to the store, one part per run."""
    for run in sorted({row["run_id"] for row in executions}):
        mine = [r for r in executions if r["run_id"] == run]
        write_frame(store_location(store), "executions", executions_frame(*mine), run_id=run, part=part)
        asked = [r for r in requests if r["run_id"] == run]
        write_frame(store_location(store), "requests", requests_frame(*asked), run_id=run, part=part)


def table(app: AppTest, index: int = 0) -> pd.DataFrame:
    """A page's table as the user reads it: the display's blank-cell sentinels (dashboard.display) back to
    missing values, so a test compares numbers and NaN, not -inf."""
    frame = app.dataframe[index].value.copy()
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_float_dtype(column.dtype):
            frame[name] = column.replace(MISSING_NUMBER, np.nan)
        elif isinstance(column.dtype, pd.DatetimeTZDtype):
            frame[name] = column.where(column != MISSING_TIME.as_unit(column.dt.unit))
    return frame

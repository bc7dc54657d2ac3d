"""dashboard.alerts_banner through a tiny AppTest script: the latest evaluation's open alerts in the view's
scope as one banner (an error for throttling, a warning otherwise), nothing when none is open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from streamlit.testing.v1 import AppTest

from analysis import alerts
from store import store_location, write_frame

T0 = pd.Timestamp("2026-05-01T10:00:00Z")


def banner_script(store: str, database: str | None, container: str | None, since: object) -> None:
    from analysis.scope import Scope, Window
    from dashboard.alerts_banner import render_alert_banner
    from dashboard.state import FrameState

    window = Window(since)  # type: ignore[arg-type]
    render_alert_banner(FrameState(store=store, window=window, scope=Scope(database=database, container=container)))


def banner(store: Path, database: str | None = None, container: str | None = None, since: object = None) -> AppTest:
    args = (str(store), database, container, since)
    app = AppTest.from_function(banner_script, args=args, default_timeout=30).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def row(rule: str, subject: str, message: str, *, database: str = "shop", container: str = "orders") -> dict:
    where = {"account": "127.0.0.1", "database": database, "container": container}
    return where | {"rule": rule, "subject": subject, "value": 1.0, "threshold": 1.0, "unit": "%", "message": message}


def evaluation(store: Path, run: str, minute: int, rows: list[dict[str, Any]]) -> None:
    fired = pd.DataFrame(rows, columns=alerts.ALERT_COLUMNS)
    frame = pd.concat([fired, alerts.evaluated_rows(["127.0.0.1"], fired)], ignore_index=True)
    write_frame(
        store_location(store), "alerts", frame.assign(time=T0 + pd.Timedelta(minutes=minute)), run_id=run, part="alerts"
    )


def two_evaluations(store: Path) -> None:
    evaluation(
        store,
        "e1",
        0,
        [row("hot_partition", "0", "pkrange 0 of shop/orders is hot"), row("partition_storage", "1", "carts full")],
    )
    evaluation(
        store,
        "e2",
        5,
        [
            row("throttle_rate", "", "429s were 7% of requests to shop/orders"),
            row("logical_key_storage", '["a_b"]', "logical key *a_b* of crm/people holds 18 GB", database="crm"),
        ],
    )


def test_the_latest_evaluations_alerts_are_one_banner(store: Path) -> None:
    two_evaluations(store)
    app = banner(store)
    assert not app.warning
    [error] = app.error
    assert error.value == "\n".join(
        [
            "**2 alerts open** (evaluated 2026-05-01 10:05 UTC by `ruscope collect`):",
            "",
            r"- logical key \*a\_b\* of crm/people holds 18 GB",
            r"- 429s were 7% of requests to shop/orders",
        ]
    )


def test_the_banner_keeps_to_the_scope_and_warns_for_storage(store: Path) -> None:
    two_evaluations(store)
    app = banner(store, database="crm")
    assert not app.error
    [warning] = app.warning
    assert warning.value.splitlines()[0].startswith("**1 alert open**")
    assert warning.value.splitlines()[2:] == [r"- logical key \*a\_b\* of crm/people holds 18 GB"]
    quiet = banner(store, database="shop", container="carts")
    assert not quiet.error and not quiet.warning


def test_open_alerts_show_whatever_the_time_range(store: Path) -> None:
    two_evaluations(store)
    [error] = banner(store, since=(T0 + pd.Timedelta(days=1)).to_pydatetime()).error
    assert error.value.startswith("**2 alerts open** (evaluated 2026-05-01 10:05 UTC")


def test_a_clean_latest_evaluation_or_no_alerts_table_shows_nothing(store: Path) -> None:
    empty = banner(store)
    assert not empty.error and not empty.warning
    two_evaluations(store)
    evaluation(store, "e3", 10, [])
    clean = banner(store)
    assert not clean.error and not clean.warning


def test_a_long_list_is_cut_and_counted(store: Path) -> None:
    evaluation(store, "e1", 0, [row("partition_storage", str(n), f"pkrange {n} is full") for n in range(11)])
    [warning] = banner(store).warning
    lines = warning.value.splitlines()
    assert lines[0].startswith("**11 alerts open**")
    assert lines[2:] == [*(f"- pkrange {n} is full" for n in sorted(map(str, range(11)))[:8]), "- and 3 more"]

"""The Overview page of a container that spends its database's shared offer (AppTest): its hottest range is
the offer's, since Azure Monitor reports the partitions of a shared-throughput database for the database
(docs/reference/azure-monitor.md §7b R30-R31), whether the view shows every container or that one."""

from __future__ import annotations

from pathlib import Path

from tests.dashboard.test_shared_throughput_pages import frame_of, open_page, shared_store


def hottest(app: object) -> dict[str, tuple[str, float]]:
    table = frame_of(app, "overview_containers")  # type: ignore[arg-type]
    return {
        str(c): (str(p), float(v))
        for c, p, v in zip(table["container"], table["hot_pkrange"], table["hot_normalized_ru"], strict=True)
    }


def test_the_overview_shows_the_shared_offer_s_hot_range_for_its_containers(store: Path) -> None:
    shared_store(store)
    app = open_page("views/overview.py")
    assert hottest(app) == {"a": ("0", 95.0), "b": ("0", 95.0), "own": ("0", 20.0)}
    app.selectbox(key="frame_database").select("shop").run()
    app.selectbox(key="frame_container").select("a").run()
    assert not app.exception, [e.message for e in app.exception]
    assert hottest(app) == {"a": ("0", 95.0)}

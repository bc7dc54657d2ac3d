"""dashboard.loaders.tables on a temp store: a view reads only its columns, days and scope."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from analysis.queries import costs as qc
from analysis.scope import Scope, Window
from dashboard.loaders import tables
from dashboard.state import FrameState
from tests.dashboard.apptest import PLAN, store_rows, write_plan, write_store

MAY_1_1030 = dt.datetime(2026, 5, 1, 10, 30, tzinfo=dt.UTC)  # between the fixtures' r1 (10:00) and r2 (11:00)


@pytest.fixture
def two_containers(two_runs: Path) -> Path:
    write_plan(
        two_runs,
        [("r2", 70, "people", 0, "as-is", "single", [[("page", "0", 1.0)]])],
        database="crm",
        container="people",
        part="1",
    )
    return two_runs


def test_a_view_reads_only_its_columns_and_scope(two_containers: Path) -> None:
    view = FrameState(store=str(two_containers), scope=Scope(database="crm"))
    loaded = tables.load_view(view, "executions", columns=qc.EXECUTION_COLUMNS)
    assert loaded.frame.columns.tolist() == qc.EXECUTION_COLUMNS
    assert loaded.frame["query_name"].tolist() == ["people"] and loaded.frame.index.tolist() == [0]
    assert loaded.warnings == ()


def test_a_view_reads_from_its_since_on(two_containers: Path) -> None:
    view = FrameState(store=str(two_containers), window=Window(MAY_1_1030))
    loaded = tables.load_view(view, "requests", columns=qc.REQUEST_COLUMNS, run_ids=("r1", "r2"))
    assert set(loaded.frame["run_id"]) == {"r2"}
    assert loaded.frame.columns.tolist() == qc.REQUEST_COLUMNS


def test_a_view_reads_before_its_end(two_containers: Path) -> None:
    """A custom window's end: rows timed before it only, in every read (cached, uncached, scope choices),
    though the columns asked for leave out the time the cut needs."""
    before = FrameState(store=str(two_containers), window=Window(None, MAY_1_1030, "Custom"))
    loaded = tables.load_view(before, "executions", columns=["run_id", "query_name"])
    assert set(loaded.frame["run_id"]) == {"r1"} and loaded.frame.columns.tolist() == ["run_id", "query_name"]
    assert set(tables.read_view(before, "requests", columns=["run_id"]).frame["run_id"]) == {"r1"}
    assert tables.load_scope_choices(str(two_containers), before.window).values.tolist() == [
        ["127.0.0.1", "shop", "orders"]  # crm's only row (11:10) is after the end
    ]
    between = Window(MAY_1_1030, dt.datetime(2026, 5, 1, 11, 5, tzinfo=dt.UTC), "Custom")  # r2's shop rows only
    shop = tables.load_view(FrameState(store=str(two_containers), window=between), "executions", columns=["time"])
    assert not shop.frame.empty and shop.frame["time"].between(between.start, between.end, inclusive="left").all()
    assert len(shop.frame) == 4  # r2: point, scan (one execution per feed range), wide


def test_scope_choices_follow_the_time_range(two_containers: Path, tmp_path: Path) -> None:
    choices = tables.load_scope_choices(str(two_containers), Window())
    assert choices.values.tolist() == [["127.0.0.1", "crm", "people"], ["127.0.0.1", "shop", "orders"]]
    later = dt.datetime(2026, 5, 1, 11, 5, tzinfo=dt.UTC)  # only crm's run-r2 row (11:10) is after
    assert tables.load_scope_choices(str(two_containers), Window(later)).values.tolist() == [
        ["127.0.0.1", "crm", "people"]
    ]
    assert tables.load_scope_choices(str(tmp_path / "nothing"), Window()).empty


def test_the_store_warnings_come_with_the_frame(two_runs: Path) -> None:
    day = next((two_runs / "executions").iterdir())
    (day / "r3-000.parquet").write_bytes(b"not parquet")
    loaded = tables.load_view(FrameState(store=str(two_runs)), "executions", columns=["run_id", "time"])
    assert any("r3-000.parquet" in message for message in loaded.warnings)
    assert sorted(set(loaded.frame["run_id"])) == ["r1", "r2"]


def test_an_unknown_column_is_an_error(store: Path) -> None:
    write_store(store, *store_rows(PLAN[:1]))
    with pytest.raises(ValueError, match="nope"):
        tables.load_view(FrameState(store=str(store)), "executions", columns=["nope"])


def test_a_table_the_store_has_not_written_yet_reads_as_no_data_and_a_column_it_lacks_is_an_error(
    two_containers: Path,
) -> None:
    view = FrameState(store=str(two_containers), scope=Scope(database="crm"))
    absent = tables.load_view(view, "metrics", columns=["time", "metric", "value"])
    assert absent.frame.empty and absent.frame.columns.tolist() == ["time", "metric", "value"]
    with pytest.raises(ValueError, match="table 'executions' has no column.*'not_yet'"):
        tables.load_view(view, "executions", columns=["query_name", "not_yet"])


def test_a_store_uri_that_cannot_be_a_store_is_a_warning_and_no_rows() -> None:
    loaded = tables.load_view(FrameState(store="ftp://somewhere/store"), "executions", columns=["query_name"])
    assert loaded.frame.empty and loaded.frame.columns.tolist() == ["query_name"]
    assert loaded.warnings and "ftp://somewhere/store" in loaded.warnings[0]


def test_read_view_cuts_the_scope_like_load_view_but_is_never_cached(two_containers: Path) -> None:
    view = FrameState(store=str(two_containers), scope=Scope(database="crm"))
    assert tables.read_view(view, "executions", columns=["query_name"]).frame["query_name"].tolist() == ["people"]
    assert tables.load_view(view, "executions", columns=["query_name"]).frame["query_name"].tolist() == ["people"]
    later = [("r3", 80, "later", 0, "as-is", "single", [[("page", "0", 1.0)]])]
    write_plan(two_containers, later, database="crm", container="people", part="2")
    fresh = tables.read_view(view, "executions", columns=["query_name"]).frame
    assert sorted(fresh["query_name"]) == ["later", "people"]  # read again: the new run is there
    cached = tables.load_view(view, "executions", columns=["query_name"]).frame
    assert cached["query_name"].tolist() == ["people"]  # the versions are looked at once per FRESH_SECONDS
    tables.store_versions.clear()  # FRESH_SECONDS later: the commit is a new version, so a new key
    assert sorted(tables.load_view(view, "executions", columns=["query_name"]).frame["query_name"]) == [
        "later",
        "people",
    ]
    everything = tables.read_view(FrameState(store=str(two_containers)), "executions", columns=["database"])
    assert sorted(set(everything.frame["database"])) == ["crm", "shop"] and everything.frame.columns.tolist() == [
        "database"
    ]


def test_a_page_loader_computes_once_per_store_version_however_long_ago(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loaders' results are keyed by the store's table versions, not a time to live: a store that has not
    changed is not computed again (a visit after 30 s was cold before), and a commit is seen."""
    from dashboard.loaders import query_costs

    computed: list[int] = []
    grouped = qc.logical_executions

    def counted(executions: pd.DataFrame) -> pd.DataFrame:
        computed.append(len(executions))
        return grouped(executions)

    monkeypatch.setattr(qc, "logical_executions", counted)
    view = FrameState(store=str(two_runs))
    first = query_costs.load_query_costs(view)
    once = len(computed)
    tables.store_versions.clear()  # the versions looked at again, unchanged: the same key
    again = query_costs.load_query_costs(view)
    assert once and len(computed) == once and again.summary.equals(first.summary)
    later = [("r3", 80, "later", 0, "as-is", "single", [[("page", "0", 1.0)]])]
    write_plan(two_runs, later, part="2")
    assert query_costs.load_query_costs(view).summary.equals(first.summary)  # until the versions are looked at
    tables.store_versions.clear()
    fresh = query_costs.load_query_costs(view)
    assert len(computed) > once and computed[once] == computed[0] + 1  # computed again, with the new execution
    assert "later" in set(fresh.summary["query_name"]) and "later" not in set(first.summary["query_name"])


def test_the_store_versions_name_every_table_and_change_with_a_commit(two_runs: Path) -> None:
    before = dict(tables.store_versions(str(two_runs)))
    assert before["executions"] is not None and before["metrics"] is None  # never committed: None
    write_plan(two_runs, [("r3", 80, "later", 0, "as-is", "single", [[("page", "0", 1.0)]])], part="2")
    tables.store_versions.clear()
    after = dict(tables.store_versions(str(two_runs)))
    assert after["executions"] == before["executions"] + 1 and after["requests"] == before["requests"] + 1
    assert {k: v for k, v in after.items() if k not in ("executions", "requests")} == {
        k: v for k, v in before.items() if k not in ("executions", "requests")
    }

"""analysis.scope on frames built here: the time range and the scope every dashboard page applies."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from analysis import scope
from analysis.scope import Scope
from tests.analysis.queries.test_costs import execution, executions_frame

NOW = dt.datetime(2026, 5, 2, 10, 0, 42, 123, tzinfo=dt.UTC)


@pytest.fixture
def mixed() -> pd.DataFrame:
    """shop/orders at 10:00 and 11:00; crm/people and crm/x at 10:00."""
    return executions_frame(
        execution("r1", "point", minute=0),
        execution("r2", "point", minute=60),
        execution(database="crm", container="people"),
        execution(database="crm", container="x"),
    )


def test_databases_containers_and_select_scope(mixed: pd.DataFrame) -> None:
    assert scope.databases(mixed) == ["crm", "shop"]
    assert scope.containers(mixed) == ["orders", "people", "x"]
    assert scope.containers(mixed, "crm") == ["people", "x"]
    assert len(scope.select_scope(mixed, Scope(database="crm"))) == 2
    assert len(scope.select_scope(mixed, Scope(database="crm", container="x"))) == 1
    assert len(scope.select_scope(mixed, Scope())) == len(mixed)


def test_a_container_alone_matches_in_every_database() -> None:
    frame = executions_frame(execution(database="a", container="c"), execution(database="b", container="c"))
    assert scope.select_scope(frame, Scope(container="c"))["database"].tolist() == ["a", "b"]


def test_an_account_narrows_the_scope(mixed: pd.DataFrame) -> None:
    other = executions_frame(execution(database="crm", container="people")).assign(account="west")
    both = pd.concat([mixed, other], ignore_index=True)
    assert scope.accounts(both) == ["127.0.0.1", "west"]
    assert len(scope.select_scope(both, Scope(account="west"))) == 1
    assert len(scope.select_scope(both, Scope(database="crm", container="people"))) == 2
    assert len(scope.select_scope(both, Scope(database="crm", container="people", account="127.0.0.1"))) == 1
    assert scope.scope_choices([both])["account"].tolist().count("west") == 1


def test_a_missing_database_is_in_no_scope_but_all(mixed: pd.DataFrame) -> None:
    stored = mixed.astype({"database": "string"})
    stored.loc[0, "database"] = pd.NA
    assert len(scope.select_scope(stored, Scope(database="shop"))) == 1
    assert len(scope.select_scope(stored, Scope())) == 4
    assert scope.databases(stored) == ["crm", "shop"]


def test_scope_choices_are_the_distinct_pairs_of_every_frame(mixed: pd.DataFrame) -> None:
    other = executions_frame(execution(database="crm", container="x"), execution(database="hr", container="staff"))
    choices = scope.scope_choices([mixed, other])
    pairs = [["crm", "people"], ["crm", "x"], ["hr", "staff"], ["shop", "orders"]]
    assert choices.values.tolist() == [["127.0.0.1", *pair] for pair in pairs]
    assert scope.containers(choices, "crm") == ["people", "x"]
    assert scope.scope_choices([]).columns.tolist() == scope.SCOPE_COLUMNS
    assert scope.scope_choices([mixed.iloc[:0]]).empty


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Last 24 hours", dt.datetime(2026, 5, 1, 10, 0, tzinfo=dt.UTC)),
        ("Last 7 days", dt.datetime(2026, 4, 25, 10, 0, tzinfo=dt.UTC)),
        ("Last 30 days", dt.datetime(2026, 4, 2, 10, 0, tzinfo=dt.UTC)),
        ("All time", None),
    ],
)
def test_since_for_each_time_range_starts_on_a_whole_minute(name: str, expected: dt.datetime | None) -> None:
    assert scope.since_for(name, NOW) == expected


def test_since_for_is_in_utc_whatever_the_clock_zone() -> None:
    paris = NOW.astimezone(dt.timezone(dt.timedelta(hours=2)))
    since = scope.since_for("Last 24 hours", paris)
    assert since == dt.datetime(2026, 5, 1, 10, 0, tzinfo=dt.UTC) and since.utcoffset() == dt.timedelta(0)


def test_the_default_time_range_is_all_time() -> None:
    assert scope.TIME_RANGES[scope.DEFAULT_TIME_RANGE] is None


def test_the_ranges_offered_and_their_names() -> None:
    assert scope.RANGE_CHOICES == [
        "Last 1 hour", "Last 6 hours", "Last 24 hours", "Last 7 days", "Last 30 days", "All time", "Custom"
    ]  # fmt: skip
    spans = [dt.timedelta(minutes=15), dt.timedelta(minutes=90), dt.timedelta(hours=1), dt.timedelta(hours=36)]
    assert [scope.span_text(s) for s in spans] == ["15 minutes", "90 minutes", "1 hour", "36 hours"]
    assert scope.span_text(dt.timedelta(days=7)) == "7 days" and scope.span_text(dt.timedelta(minutes=1)) == "1 minute"


@pytest.mark.parametrize(
    ("name", "start"),
    [
        ("Last 1 hour", dt.datetime(2026, 5, 2, 9, 0, tzinfo=dt.UTC)),
        ("Last 6 hours", dt.datetime(2026, 5, 2, 4, 0, tzinfo=dt.UTC)),
    ],
)
def test_a_preset_window_starts_on_a_whole_minute_and_is_open_ended(name: str, start: dt.datetime) -> None:
    window = scope.window_for(name, NOW)
    assert window == scope.Window(start, None, name) and window.span is None
    assert window.text() == f"since {scope.minute_text(start)}"
    assert scope.window_for("All time", NOW) == scope.Window() and scope.Window().text() == "all the data"


def test_a_custom_window_is_floored_to_the_minute_in_utc() -> None:
    paris = dt.timezone(dt.timedelta(hours=2))
    window = scope.custom_window(dt.datetime(2026, 5, 1, 12, 0, 40, tzinfo=paris), dt.datetime(2026, 5, 1, 13, 30, 59))
    assert (window.start, window.end) == (
        dt.datetime(2026, 5, 1, 10, 0, tzinfo=dt.UTC),
        dt.datetime(2026, 5, 1, 13, 30, tzinfo=dt.UTC),  # a naive time is UTC
    )
    assert window.label == "Custom" and window.span == dt.timedelta(hours=3, minutes=30)
    assert window.text() == "2026-05-01 10:00-13:30 UTC"
    later = dt.datetime(2026, 5, 1, 11, tzinfo=dt.UTC)
    assert window.from_(later).start == later and window.from_(later).end == window.end
    assert window.from_(dt.datetime(2026, 5, 1, tzinfo=dt.UTC)) == window


def test_a_custom_window_that_ends_before_it_starts_says_so() -> None:
    start = dt.datetime(2026, 5, 1, 10, tzinfo=dt.UTC)
    with pytest.raises(scope.WindowError, match="ends .2026-05-01 09:00 UTC. before or when it starts"):
        scope.custom_window(start, start - dt.timedelta(hours=1))
    with pytest.raises(scope.WindowError):
        scope.custom_window(start, start + dt.timedelta(seconds=30))  # the same minute: nothing in it

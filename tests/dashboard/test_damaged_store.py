"""AppTest runs of the Query costs page on a damaged store: the rest of the table is shown, the damage named."""

from __future__ import annotations

from pathlib import Path

from deltalake import DeltaTable
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import shown
from tests.dashboard.test_query_costs_page import run_app


def _warning(app: AppTest) -> str:
    """The page's one store warning as the reader sees it, rendered (its Markdown marks are escaped)."""
    [warning] = {w.value for w in app.warning}  # the same read's warning may show beside each of its tables
    return shown(warning)


def test_a_missing_data_file_is_named_and_the_rest_of_the_table_shown(two_runs: Path) -> None:
    table = two_runs / "executions"
    actions = DeltaTable(table).get_add_actions(flatten=True)
    path, rows = actions.column("path")[0].as_py(), actions.column("num_records")[0].as_py()
    (table / path).unlink()
    app = run_app()
    warning = _warning(app)
    assert f"data file {table / path} is missing ({rows} row(s))" in warning
    assert "ruscope store repair" in warning and "vacuumed" not in warning
    assert not app.info  # not the empty store's "No query executions ... yet"
    assert sorted(app.dataframe[0].value["query_name"]) == ["point", "scan", "wide"]


def test_a_damaged_log_entry_is_named_and_the_commits_before_it_shown(two_runs: Path) -> None:
    entry = two_runs / "executions" / "_delta_log" / f"{1:020d}.json"  # r2's commit
    entry.write_bytes(entry.read_bytes()[:200])
    app = run_app()
    warning = _warning(app)
    assert f"log entry {entry} (version 1) is damaged" in warning and "read as of version 0" in warning
    assert "<unknown>" not in warning and "\n" not in warning
    assert not app.info
    frame = app.dataframe[0].value
    assert sorted(frame["query_name"]) == ["point", "scan", "wide"] and set(frame["latest_run"]) == {"r1"}


def test_a_table_with_nothing_readable_shows_its_damage_not_how_to_collect(two_runs: Path) -> None:
    entry = two_runs / "executions" / "_delta_log" / f"{0:020d}.json"  # the table's first commit
    entry.write_bytes(entry.read_bytes()[:100])
    app = run_app()
    warning = _warning(app)
    assert f"log entry {entry} (version 0) is damaged" in warning and "ruscope store repair" in warning
    assert not app.info and not app.dataframe  # no "No query executions in ... yet"

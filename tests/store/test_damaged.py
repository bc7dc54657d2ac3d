"""A damaged store loses only what is damaged: a missing data file, a damaged log entry; named, the rest read."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable

from store import EXECUTIONS, StoreWarning, read_table, store_location, write_frame
from store.check import check, one_line
from tests.store.test_store import T0, executions

PARTS, ROWS = 19, 13  # 247 rows in 19 commits, one data file each, over three days


def damaged_store(root: Path, parts: int = PARTS) -> Path:
    """A store whose `executions` table has `parts` commits of `ROWS` rows; returns the table's directory."""
    for i in range(parts):
        ids = tuple(f"r{i}-e{j}" for j in range(ROWS))
        frame = executions(f"r{i}", ids, T0 + pd.Timedelta(hours=3 * i))
        write_frame(store_location(root), EXECUTIONS, frame, run_id=f"r{i}", part="q0001")
    return root / "executions"


def delete_one_file(table: Path) -> str:
    """Deletes one data file (of the second day); returns its path relative to the table."""
    victim = sorted((table / "date=2024-05-02").glob("*.parquet"))[0]
    victim.unlink()
    return str(victim.relative_to(table))


def truncate_entry(table: Path, version: int, keep: int = 300) -> Path:
    entry = table / "_delta_log" / f"{version:020d}.json"
    entry.write_bytes(entry.read_bytes()[:keep])
    return entry


def test_a_missing_data_file_is_named_with_its_rows_and_the_rest_is_read(tmp_path: Path) -> None:
    lost = delete_one_file(damaged_store(tmp_path))
    with pytest.warns(StoreWarning) as record:
        back = read_table(store_location(tmp_path), "executions")
    assert len(back) == (PARTS - 1) * ROWS == 234
    (message,) = {str(w.message) for w in record}
    assert str(tmp_path / "executions" / lost) in message and "(13 row(s))" in message
    assert "ruscope store repair" in message and "vacuumed" not in message


def test_a_missing_data_file_is_skipped_for_a_date_filtered_read_too(tmp_path: Path) -> None:
    delete_one_file(damaged_store(tmp_path))
    with pytest.warns(StoreWarning, match="is missing"):
        back = read_table(store_location(tmp_path), "executions", since=pd.Timestamp("2024-05-02").date())
    assert len(back) and back["time"].min() >= pd.Timestamp("2024-05-02", tz="UTC")


@pytest.mark.parametrize("version", [5, PARTS - 1])
def test_a_truncated_log_entry_is_named_and_the_table_read_as_of_the_version_before(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUST_BACKTRACE", "1")  # delta-rs then appends a backtrace to its error text
    entry = truncate_entry(damaged_store(tmp_path), version)
    with pytest.warns(StoreWarning) as record:
        back = read_table(store_location(tmp_path), "executions")
    assert len(back) == version * ROWS  # the commits before the damaged one
    (message,) = {str(w.message) for w in record}
    assert f"log entry {entry} (version {version}) is damaged at line 1 of 1: cut short" in message
    assert f"read as of version {version - 1}" in message and "ruscope store repair" in message
    assert "\n" not in message and not re.search(r"\b\d+: <unknown>", message)


def test_an_error_text_loses_the_rust_backtrace(tmp_path: Path) -> None:
    text = "Kernel error: Json error: Truncated record whilst reading object\n   0: <unknown>\n  12: start_thread\n"
    assert one_line(ValueError(text)) == "ValueError: Kernel error: Json error: Truncated record whilst reading object"


def test_check_lists_missing_files_with_rows_and_damaged_entries(tmp_path: Path) -> None:
    lost = delete_one_file(damaged_store(tmp_path))
    (found,) = check(store_location(tmp_path))
    assert [(m.path, m.rows) for m in found.missing] == [(lost, ROWS)] and found.damaged is None
    entry = truncate_entry(
        tmp_path / "executions", 7, keep=os.path.getsize(tmp_path / "executions" / "_delta_log" / f"{7:020d}.json") - 5
    )
    (found,) = check(store_location(tmp_path))
    assert found.damaged is not None and found.damaged.path == entry and found.damaged.version == 7
    assert not found.clean and found.missing == []  # the table does not load, so its files cannot be listed


def test_a_line_that_is_not_json_is_named_as_such(tmp_path: Path) -> None:
    table = damaged_store(tmp_path, parts=3)
    entry = table / "_delta_log" / f"{1:020d}.json"
    lines = entry.read_text().splitlines()
    entry.write_text("\n".join([lines[0], "garbage", *lines[2:]]) + "\n")
    (found,) = check(store_location(tmp_path))
    assert found.damaged is not None and found.damaged.line == 2 and "not JSON" in found.damaged.reason
    assert json.loads(lines[0])  # the first line is left intact


def test_a_clean_store_checks_clean(tmp_path: Path) -> None:
    damaged_store(tmp_path, parts=2)
    (found,) = check(store_location(tmp_path))
    assert found.clean and found.lines(store_location(tmp_path)) == ["executions: clean"]
    assert DeltaTable(tmp_path / "executions").version() == 1

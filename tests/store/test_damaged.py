"""A damaged store loses only what is damaged: a missing data file, a damaged log entry; named, the rest read."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable

from store import (
    EXECUTIONS,
    CompactFailure,
    CompactReport,
    StoreWarning,
    compact,
    read_table,
    repair,
    store_location,
    write_frame,
)
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


# --- compaction and repair ---------------------------------------------------------------------------------


def test_compact_names_a_damaged_table_and_compacts_the_others(tmp_path: Path) -> None:
    delete_one_file(damaged_store(tmp_path))
    write_frame(store_location(tmp_path), "requests", pd.DataFrame({"time": [T0], "seq": [0]}), run_id="q", part="a")
    write_frame(store_location(tmp_path), "requests", pd.DataFrame({"time": [T0], "seq": [1]}), run_id="q", part="b")
    reports = {r.table: r for r in compact(store_location(tmp_path), retention_hours=168)}
    assert isinstance(reports["executions"], CompactFailure)
    line = reports["executions"].line()
    assert "is missing (13 row(s))" in line and "ruscope store repair --store" in line and "\n" not in line
    assert isinstance(reports["requests"], CompactReport) and reports["requests"].files_after == 1


def test_compact_names_a_damaged_log_entry(tmp_path: Path) -> None:
    entry = truncate_entry(damaged_store(tmp_path, parts=4), 2)
    (report,) = compact(store_location(tmp_path), retention_hours=168)
    assert isinstance(report, CompactFailure) and f"log entry {entry} (version 2)" in report.line()


def read_back(table: Path) -> tuple[int, int]:
    """The rows of the table as pyarrow and DuckDB read its current files."""
    files = [u.removeprefix("file://") for u in DeltaTable(table).file_uris()]
    import duckdb

    ((ducks,),) = duckdb.sql(f"SELECT count(*) FROM read_parquet({files!r})").fetchall()
    return DeltaTable(table).to_pyarrow_table().num_rows, int(ducks)


def test_repair_drops_a_missing_file_with_a_backup_and_is_idempotent(tmp_path: Path) -> None:
    table = damaged_store(tmp_path)
    lost = delete_one_file(table)
    before = {p.name: p.read_bytes() for p in (table / "_delta_log").iterdir()}
    (report,) = repair(store_location(tmp_path))
    assert [(m.path, m.rows) for m in report.dropped] == [(lost, ROWS)] and report.error is None
    assert report.backup is not None and {p.name: p.read_bytes() for p in report.backup.iterdir()} == before
    assert any(
        f"dropped from the table: data file {table / lost} is missing (13 row(s))" in line
        for line in report.lines(store_location(tmp_path))
    )
    assert read_back(table) == (234, 234)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert len(read_table(store_location(tmp_path), "executions")) == 234
    (again,) = repair(store_location(tmp_path))
    assert not again.changed and again.backup is None
    assert again.lines(store_location(tmp_path)) == ["executions: clean, nothing to repair"]
    assert check(store_location(tmp_path))[0].clean


def test_repair_of_a_damaged_entry_keeps_every_intact_commit_after_it(tmp_path: Path) -> None:
    table = damaged_store(tmp_path)
    entry = table / "_delta_log" / f"{5:020d}.json"
    commit_info, add, txn = entry.read_text().splitlines()
    entry.write_text(f"{commit_info}\n{add[:60]}")  # cut inside the add action's path
    (report,) = repair(store_location(tmp_path))
    assert [e.version for e in report.salvaged] == [5] and report.backup is not None
    assert len(report.lost) == 1 and report.lost[0].rows == ROWS  # the file of the cut add, found on disk
    assert (table / report.lost[0].path).exists()
    assert read_back(table) == ((PARTS - 1) * ROWS,) * 2  # commits 6..18 are read again
    assert (report.backup / entry.name).read_text() == f"{commit_info}\n{add[:60]}"
    assert not repair(store_location(tmp_path))[0].changed


def test_repair_of_a_cut_add_line_with_its_path_names_that_file(tmp_path: Path) -> None:
    table = damaged_store(tmp_path, parts=3)
    entry = table / "_delta_log" / f"{1:020d}.json"
    commit_info, add, txn = entry.read_text().splitlines()
    path = json.loads(add)["add"]["path"]
    entry.write_text(f"{commit_info}\n{add[:-20]}")
    (report,) = repair(store_location(tmp_path))
    assert [(m.path, m.rows) for m in report.lost] == [(path, ROWS)]
    assert read_back(table) == (2 * ROWS, 2 * ROWS)


def test_repair_of_a_damaged_compaction_keeps_the_table_as_before_it(tmp_path: Path) -> None:
    table = damaged_store(tmp_path, parts=6)
    compact(store_location(tmp_path), retention_hours=168)  # version 6: removes and adds; then a checkpoint
    (table / "_delta_log" / f"{6:020d}.checkpoint.parquet").unlink()  # so that version 6 is replayed
    (table / "_delta_log" / "_last_checkpoint").unlink()
    entry = table / "_delta_log" / f"{6:020d}.json"
    lines = entry.read_text().splitlines()
    entry.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:30])  # the last action cut short
    (report,) = repair(store_location(tmp_path))
    assert report.salvaged and report.error is None and not report.lost
    assert len(report.undone) == 1 and report.undone[0].rows == 5 * ROWS  # the compacted file of the first day
    assert read_back(table) == (6 * ROWS, 6 * ROWS)  # no row twice, none lost: the files before the compaction


def test_repair_of_a_cut_first_entry_gives_the_table_its_protocol_and_metadata_again(tmp_path: Path) -> None:
    table = damaged_store(tmp_path, parts=4)
    truncate_entry(table, 0, keep=100)  # the commitInfo cut: protocol, metaData, add and txn lost
    with pytest.warns(StoreWarning, match="nothing is read"):
        assert read_table(store_location(tmp_path), "executions").empty
    (report,) = repair(store_location(tmp_path))
    assert report.error is None and [(m.rows) for m in report.lost] == [ROWS]  # the first commit's file, found
    assert read_back(table) == (3 * ROWS, 3 * ROWS)
    assert check(store_location(tmp_path))[0].clean
    write_frame(store_location(tmp_path), EXECUTIONS, executions("r9"), run_id="r9", part="a")  # committable again
    assert len(read_table(store_location(tmp_path), "executions")) == 3 * ROWS + 3


def test_a_missing_file_of_a_store_in_blob_storage_is_named_skipped_and_repaired(
    azurite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azure.storage.blob import BlobServiceClient

    for name, value in {**azurite.env, "XDG_STATE_HOME": str(tmp_path / "state")}.items():
        monkeypatch.setenv(name, value)
    uri = azurite.uri_for("store")
    location = store_location(uri)
    for i in range(3):
        write_frame(location, EXECUTIONS, executions(f"r{i}", (f"e{i}a", f"e{i}b")), run_id=f"r{i}", part="a")
    container, _, prefix = uri.removeprefix("az://").partition("/")
    lost = DeltaTable(location.table_uri("executions"), storage_options=location.options()).get_add_actions(
        flatten=True
    )
    path = lost.column("path")[0].as_py()
    with BlobServiceClient.from_connection_string(azurite.connection_string) as service:
        service.get_blob_client(container, f"{prefix}/executions/{path}").delete_blob()
    with pytest.warns(StoreWarning, match=re.escape(f"data file {uri}/executions/{path} is missing (2 row(s))")):
        assert len(read_table(location, "executions")) == 4
    assert [(m.path, m.rows) for m in check(location)[0].missing] == [(path, 2)]
    (report,) = repair(location)
    assert [m.path for m in report.dropped] == [path] and report.backup is None  # FSCK only appends a commit
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert len(read_table(location, "executions")) == 4


def test_a_damaged_checkpoint_is_named_and_repaired_by_replaying_the_commits(tmp_path: Path) -> None:
    table = damaged_store(tmp_path, parts=5)
    compact(store_location(tmp_path), retention_hours=168)  # version 5 and its checkpoint
    write_frame(store_location(tmp_path), EXECUTIONS, executions("r9"), run_id="r9", part="a")  # version 6
    checkpoint = table / "_delta_log" / f"{5:020d}.checkpoint.parquet"
    checkpoint.write_bytes(checkpoint.read_bytes()[:500])
    with pytest.warns(StoreWarning, match=re.escape(f"log checkpoint {checkpoint} (version 5) is damaged")):
        assert len(read_table(store_location(tmp_path), "executions")) == 5 * ROWS  # as of version 4
    (report,) = repair(store_location(tmp_path))
    assert report.error is None and not report.lost and report.backup is not None
    assert (
        "taken out of the log (its commits are replayed) and written again" in report.lines(store_location(tmp_path))[0]
    )
    assert read_back(table) == (5 * ROWS + 3,) * 2  # nothing lost
    assert check(store_location(tmp_path))[0].clean and not repair(store_location(tmp_path))[0].changed

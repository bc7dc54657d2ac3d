"""The `azurite` fixture gives delta-rs what it needs: a Delta table on `az://` written with the fixture's
storage options in this process and with only its environment variables in two concurrent processes, and
an app transaction's version read back (the store's exactly-once recovery relies on it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from tests.azurite import RunningAzurite

COMMITS = 8
ROWS = 5
# Appends COMMITS commits of ROWS rows as writer argv[2], with no storage options: only the environment.
APPEND = """
import sys
import pyarrow as pa
from deltalake import write_deltalake

uri, writer, commits, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for commit in range(commits):
    n = [commit * rows + r for r in range(rows)]
    write_deltalake(uri, pa.table({"writer": [writer] * rows, "n": n}), mode="append")
"""


def _rows(writer: str, ns: range) -> pa.Table:
    return pa.table({"writer": [writer] * len(ns), "n": list(ns)})


def test_concurrent_appends_from_two_processes_lose_and_duplicate_nothing(azurite: RunningAzurite) -> None:
    uri = azurite.uri_for("events")
    write_deltalake(uri, _rows("seed", range(3)), storage_options=azurite.storage_options)
    env = os.environ | azurite.env
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", APPEND, uri, name, str(COMMITS), str(ROWS)], env=env, stderr=subprocess.PIPE
        )
        for name in ("a", "b")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, err.decode(errors="replace")[-2000:]

    table = DeltaTable(uri, storage_options=azurite.storage_options)
    rows = table.to_pyarrow_dataset().to_table(use_threads=False).to_pylist()
    got = sorted((r["writer"], r["n"]) for r in rows)
    expected = sorted([("seed", n) for n in range(3)] + [(w, n) for w in "ab" for n in range(COMMITS * ROWS)])
    assert got == expected
    assert table.version() == 2 * COMMITS  # version 0 is the seed; one version per append


def test_app_transaction_version_reads_back(azurite: RunningAzurite) -> None:
    uri = azurite.uri_for("requests")
    options = azurite.storage_options
    write_deltalake(uri, _rows("x", range(2)), storage_options=options)
    assert DeltaTable(uri, storage_options=options).transaction_version("run-1") is None

    commit = CommitProperties(app_transactions=[Transaction(app_id="run-1", version=7)])
    write_deltalake(uri, _rows("x", range(2, 4)), mode="append", storage_options=options, commit_properties=commit)

    table = DeltaTable(uri, storage_options=options)
    assert table.transaction_version("run-1") == 7
    assert table.to_pyarrow_dataset().to_table(use_threads=False).num_rows == 4


def test_env_reaches_azurite_in_emulator_mode_too(azurite: RunningAzurite) -> None:
    """`azure_storage_use_emulator` takes its address from AZURITE_BLOB_STORAGE_URL in the process's own
    environment (it ignores `azure_storage_endpoint`): with the fixture's env that works too. The child reads the
    log only: a threaded `to_pyarrow_table()` can abort a process at exit (delta-rs #2184), which the store's
    reader avoids and this test is not about."""
    uri = azurite.uri_for("alerts")
    write_deltalake(uri, _rows("x", range(3)), storage_options=azurite.storage_options)
    code = (
        "import sys; from deltalake import DeltaTable; "
        "table = DeltaTable(sys.argv[1], storage_options={'azure_storage_use_emulator': 'true'}); "
        "print(table.version(), len(table.file_uris()))"
    )
    env = os.environ | azurite.env
    out = subprocess.run([sys.executable, "-c", code, uri], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0", "1"]  # the first commit, one data file

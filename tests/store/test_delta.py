"""The Delta store under stress, on a local directory and on Azurite: concurrent writers, a writer killed at each
step, compaction and vacuum under readers, schema evolution; and where the store lives (StoreLocation)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from store import REQUESTS, Segment, StoreLocation, compact, read_table, recover, store_location, write_arrow
from store.delta import with_date
from store.location import AZURITE_ACCOUNT
from tests.store.test_pending import row

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["local", "azurite"])
def store_env(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, dict[str, str]]:
    """A fresh store URI and the environment a process needs to reach it (pending segments under tmp_path)."""
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    if request.param == "local":
        uri = str(tmp_path / "store")
    else:
        azurite = request.getfixturevalue("azurite")
        uri, env = azurite.uri_for("store"), {**env, **azurite.env}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return uri, env


def run_script(script: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def seqs(store: str | StoreLocation, run_id: str | None = None) -> list[int]:
    frame = read_table(store_location(store), "requests", columns=["run_id", "seq"])
    return sorted(frame[frame["run_id"].eq(run_id)]["seq"] if run_id else frame["seq"])


APPENDER = """
import dataclasses, sys
from store import Segment, store_location
from tests.store.test_pending import row
store, writer = store_location(sys.argv[1]), sys.argv[2]
for n in range(20):
    segment = Segment(store, f"w{writer}", f"p{n:03d}")
    for k in range(5):
        segment.append(dataclasses.replace(row(k, run_id=f"w{writer}"), seq=n * 5 + k))
    segment.seal()
"""


def test_concurrent_appends_from_four_processes_lose_and_duplicate_nothing(store_env) -> None:
    store, env = store_env
    writers = [
        subprocess.Popen([sys.executable, "-c", APPENDER, store, str(w)], cwd=REPO, env={**os.environ, **env})
        for w in range(4)
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0, 0]
    frame = read_table(store_location(store), "requests", columns=["run_id", "seq"])
    assert len(frame) == 400 and not frame.duplicated().any()
    assert all(seqs(store, f"w{w}") == list(range(100)) for w in range(4))


CRASHER = """
import os, signal, sys
from store import Segment, delta, pending, store_location
from tests.store.test_pending import row
store, step = store_location(sys.argv[1]), sys.argv[2]
die = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
if step == "before-commit":
    delta.write_deltalake = die
elif step == "after-commit":
    pending.shutil.rmtree = die
segment = Segment(store, "rk", "p000")
for seq in range(3):
    segment.append(row(seq, run_id="rk"))
segment.seal()
"""


@pytest.mark.parametrize("step", ["before-commit", "after-commit"])
def test_a_writer_killed_at_each_step_is_recovered_exactly_once(store_env, step: str) -> None:
    store, env = store_env
    assert run_script(CRASHER, store, step, env=env).returncode == -9
    assert seqs(store) == ([] if step == "before-commit" else [0, 1, 2])
    assert recover(store_location(store)) == 1 and recover(store_location(store)) == 0
    assert seqs(store) == [0, 1, 2]
    assert not any(p.is_dir() and not p.name.startswith("_") for p in store_location(store).pending_dir.iterdir())


READER = """
import sys
from store import read_table, store_location
store, expected = store_location(sys.argv[1]), int(sys.argv[2])
for n in range(int(sys.argv[3])):
    rows = len(read_table(store, "requests", columns=["seq"]))
    assert rows == expected, (n, rows)
print("ok", flush=True)
"""


def test_compaction_and_vacuum_while_another_process_reads(store_env) -> None:
    store, env = store_env
    for n in range(12):
        segment = Segment(store_location(store), "rc", f"p{n:03d}")
        for k in range(4):
            segment.append(dataclasses.replace(row(k, run_id="rc"), seq=n * 4 + k))
        segment.seal()
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, store, "48", "40"],
        cwd=REPO,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
    )
    reports = [compact(store_location(store), retention_hours=0) for _ in range(3)]  # an explicit 0: files go at once
    out, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0 and out == "ok\n"
    first = next(r for r in reports[0] if r.table == "requests")
    assert first.files_before == 12 and first.files_after == 1 and first.vacuumed >= 0
    assert seqs(store) == list(range(48))


def test_a_column_added_to_a_record_merges_and_old_commits_read_null(store_env) -> None:
    store, _ = store_env
    location = store_location(store)
    first = with_date(REQUESTS, pa.Table.from_pylist([dataclasses.asdict(row(0))], schema=REQUESTS.schema))
    older = first.drop_columns(["index_utilization", "index_hit_ratio"])  # the record before two columns existed
    write_deltalake(location.table_uri("requests"), older, partition_by=["date"], storage_options=location.options())
    second = pa.Table.from_pylist([dataclasses.asdict(row(1, index_utilization="{}"))], schema=REQUESTS.schema)
    assert write_arrow(store_location(store), "requests", second, run_id="r1", part="p1") == 1  # schema_mode="merge"
    frame = read_table(store_location(store), "requests")
    assert frame["seq"].tolist() == [0, 1] and frame["index_utilization"].tolist() == [pd.NA, "{}"]


# --- where the store lives -----------------------------------------------------------------------------------


def test_a_local_path_keeps_its_pending_segments_inside_the_store(tmp_path: Path) -> None:
    location = store_location(tmp_path / "s")
    assert location.local == tmp_path / "s" and location.pending_dir == tmp_path / "s" / "_pending"
    assert location.options() is None and store_location(location) is location
    assert store_location().uri == "ruscope-data"


def test_a_remote_store_uses_the_key_from_the_environment_and_never_prints_it(tmp_path: Path) -> None:
    env = {"AZURE_STORAGE_ACCOUNT_NAME": "acct", "AZURE_STORAGE_ACCOUNT_KEY": "s3cr3t=="}
    location = store_location("az://ruscope/prod", environ=env, state_dir=tmp_path)
    assert location.options() == {"azure_storage_account_name": "acct", "azure_storage_account_key": "s3cr3t=="}
    assert "s3cr3t" not in repr(location) and "s3cr3t" not in str(location)
    assert location.pending_dir.parent == tmp_path / "pending" and location.local is None
    other = store_location("az://ruscope/test", environ=env, state_dir=tmp_path)
    assert other.pending_dir != location.pending_dir  # two stores never share segments


def test_abfss_names_its_account_and_a_token_is_the_fallback(tmp_path: Path) -> None:
    uri = "abfss://data@acct2.dfs.core.windows.net/ruscope"
    location = store_location(uri, environ={}, token=lambda: "tok", state_dir=tmp_path)
    assert location.options() == {"azure_storage_account_name": "acct2", "bearer_token": "tok"}
    assert location.table_uri("requests") == f"{uri}/requests"


def test_the_emulator_and_connection_strings(tmp_path: Path) -> None:
    emulator = {"AZURE_STORAGE_USE_EMULATOR": "true"}
    assert store_location("az://c/p", environ=emulator, state_dir=tmp_path).options() == {
        "azure_storage_use_emulator": "true",
        "allow_http": "true",
    }
    custom = {**emulator, "AZURE_STORAGE_ENDPOINT": "http://127.0.0.1:1234/devstoreaccount1"}
    options = store_location("az://c/p", environ=custom, state_dir=tmp_path).options() or {}
    assert options["azure_storage_account_name"] == AZURITE_ACCOUNT and options["allow_http"] == "true"
    text = "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k==;EndpointSuffix=core.windows.net"
    connection = store_location("az://c/p", environ={"AZURE_STORAGE_CONNECTION_STRING": text}, state_dir=tmp_path)
    assert connection.options() == {"azure_storage_account_name": "a", "azure_storage_account_key": "k=="}


@pytest.mark.parametrize("uri", ["s3://bucket/x", "az://"])
def test_an_unknown_uri_is_an_error(uri: str) -> None:
    with pytest.raises(ValueError, match="az://container/path"):
        store_location(uri, environ={})


def test_without_an_account_a_remote_store_says_what_to_set() -> None:
    with pytest.raises(ValueError, match="AZURE_STORAGE_ACCOUNT_NAME"):
        store_location("az://c/p", environ={}, token=lambda: "tok")


def test_a_location_is_accepted_everywhere(tmp_path: Path) -> None:
    location = StoreLocation(str(tmp_path / "s"), tmp_path / "elsewhere")
    segment = Segment(store_location(location), "r1", "p000")
    segment.append(row(0))
    assert (tmp_path / "elsewhere" / "r1-p000").is_dir()
    segment.seal()
    assert seqs(location) == [0]

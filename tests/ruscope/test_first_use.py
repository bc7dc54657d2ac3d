"""The first ten minutes of a new user, each in a real `ruscope` process: the emulator's banner once it
listens, the default config, the account checked once, the summary lines, `collect --every`, the help."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from analysis.queries.costs import logical_executions
from emulator.engine.facade import Context, Engine
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import open_engine, start_in_thread
from store import read_table, store_location
from tests.conftest import ManualClock
from tests.emulator.child import read_until
from tests.ruscope.test_cli import query, write_config

ROOT = Path(__file__).resolve().parents[2]
RUSCOPE = str(ROOT / ".venv" / "bin" / "ruscope")


def run(*args: str, key: str | None = WELL_KNOWN_KEY, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name != "COSMOS_KEY"}
    env |= {"COSMOS_KEY": key} if key is not None else {}
    return subprocess.run([RUSCOPE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def start(*args: str, cwd: Path = ROOT) -> subprocess.Popen:
    env = {**os.environ, "COSMOS_KEY": WELL_KNOWN_KEY}
    return subprocess.Popen([RUSCOPE, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stopped_emulator_url() -> str:
    """The address of an emulator that is no longer running: nothing answers there."""
    down = start_in_thread(open_engine())
    down.stop()
    return down.url


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_emulator_prints_its_endpoint_and_key_once_it_listens() -> None:
    port = free_port()
    proc = start("emulator", "--port", str(port), "--monitor-port", "0")
    try:
        banner = read_until(proc, "export COSMOS_KEY")
        try:  # printed once it listens: a request right after the line is answered
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
        except urllib.error.HTTPError as refused:
            assert refused.code == 401  # answered (no key sent)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = (text.decode() for text in proc.communicate(timeout=30))
    assert f"listening on http://127.0.0.1:{port}/" in banner, banner + err
    assert f"export COSMOS_KEY='{WELL_KNOWN_KEY}'" in banner and proc.returncode == 0


def test_the_emulator_on_a_port_in_use_says_so_without_announcing_it_is_up() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("emulator", "--port", str(port), "--monitor-port", "0")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr == (
        f"ruscope: cannot listen on 127.0.0.1:{port}: Address already in use; "
        f"pick another port with --port (e.g. --port {port + 1})\n"
    )


@pytest.mark.parametrize("command", ["replay", "collect"])
def test_config_defaults_to_ruscope_toml_in_the_working_directory(tmp_path: Path, command: str) -> None:
    done = run(command, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "ruscope: ruscope.toml: no such file; pass --config FILE, or start from the commented example: "
        "cp workloads/chat/ruscope.toml ruscope.toml\n"
    )
    (tmp_path / "ruscope.toml").write_text("[cosmos]\n", encoding="utf-8")  # found, and read
    done = run(command, cwd=tmp_path)
    assert done.returncode == 2 and "ruscope.toml: cosmos.database: Field required" in done.stderr


@pytest.fixture
def shop(emulator):
    db = CosmosClient(emulator.url, credential=emulator.key).create_database("shop")
    db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=12_000)  # two partitions
    emulator.engine.throttle.enabled = False
    for i in range(60):
        emulator.engine.create_item(
            Context(), "shop", "orders", {"id": f"o{i}", "tenantId": f"t{i % 6}"}, [f"t{i % 6}"]
        )
    return emulator


def test_an_account_that_cannot_be_used_is_one_line_and_no_error_rows(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    queries = query("all") + query("one", partition_key="t1")
    config = write_config(tmp_path / "c.toml", shop, queries, extra=f'[store]\nuri = "{store}"')
    wrong = "d3JvbmcgYnV0IHZhbGlkIGJhc2U2NCBrZXkgb2YgYW55IGxlbmd0aA=="
    done = run("replay", "--config", str(config), key=wrong)
    assert done.returncode == 1 and done.stderr == (
        "ruscope: account '127.0.0.1': 401 unauthorized: the credential was rejected "
        "(check COSMOS_KEY or the identity's access)\n"
    )
    done = run("replay", "--config", str(config), key=None)  # the user forgot to export the key
    assert done.returncode == 1 and done.stderr == (
        f"ruscope: account '127.0.0.1': no key for {shop.url}: set COSMOS_KEY (an http:// endpoint such as the "
        "emulator takes an account key, not a token; `ruscope emulator` prints its key)\n"
    )
    down = stopped_emulator_url()
    config.write_text(config.read_text().replace(shop.url, down))
    done = run("collect", "--config", str(config))
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"ruscope: account '127.0.0.1': cannot reach {down}")
    assert "execution(s)" not in done.stdout and not (store / "executions").exists()  # no error row per query


def test_a_missing_database_is_named(shop, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", shop, query("all"), extra=f'[store]\nuri = "{tmp_path}"')
    config.write_text(config.read_text().replace('database = "shop"', 'database = "nope"'))
    done = run("replay", "--config", str(config))
    assert done.returncode == 1 and done.stderr == "ruscope: query 'all': database 'nope' not found\n"


def test_a_per_feed_range_line_counts_logical_executions_as_the_dashboard(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = write_config(tmp_path / "c.toml", shop, query("all", mode="per-feed-range", repeat=3))
    done = run("replay", "--config", str(config), "--store", str(store))
    assert done.returncode == 0, done.stderr
    logical = logical_executions(read_table(store_location(store), "executions"))
    assert len(logical) == 3 and set(logical["routing"]) == {"fan-out"}  # as the Query costs page counts
    line = done.stdout.splitlines()[0]
    assert line == (
        f"all: 3 execution(s), {logical['total_ru'].mean():.2f} RU each, fan-out over 2 range(s), "
        "one execution per feed range"
    )


def test_429s_and_the_time_waited_are_in_the_summary_line(make_emulator, tmp_path: Path) -> None:
    """The partition's budget is spent in a second that only ends once the replay met its first 429."""
    clock = ManualClock()
    emu = make_emulator(Engine(clock=clock))
    db = CosmosClient(emu.url, credential=emu.key).create_database("shop")
    db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=400)
    emu.engine.throttle.enabled = False
    for i in range(300):  # ~2,000 RU of writes in this second, against 400 RU/s
        emu.engine.create_item(Context(), "shop", "orders", {"id": f"o{i}", "tenantId": f"t{i % 10}"}, [f"t{i % 10}"])
    emu.engine.throttle.enabled = True
    stop = threading.Event()

    def next_second_after_a_429() -> None:
        while not stop.wait(0.01):
            if any(r.status == 429 for r in emu.engine.accounting.records()):
                clock.advance(1.0)
                return

    watcher = threading.Thread(target=next_second_after_a_429, daemon=True)
    watcher.start()
    store = tmp_path / "store"
    config = write_config(tmp_path / "c.toml", emu, query("tenant", partition_key="t1"))
    try:
        done = run("replay", "--config", str(config), "--store", str(store))
    finally:
        stop.set()
    assert done.returncode == 0, done.stderr
    executions = read_table(store_location(store), "executions")
    throttled, waited = int(executions["throttled"].sum()), executions["retry_after_ms_total"].sum() / 1000
    assert throttled >= 1 and waited > 0
    assert done.stdout.splitlines()[0].endswith(
        f"single over 1 pkrange(s), {throttled} throttled (429), {waited:.1f} s waited"
    ), done.stdout


def test_collect_every_stamps_each_cycle_and_fail_on_error_exits_1(shop, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.toml", shop, query("all"), extra=f'[store]\nuri = "{tmp_path / "s"}"')
    proc = start("collect", "--config", str(config), "--every", "1h")
    try:
        shown = read_until(proc, "next cycle at")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = (text.decode() for text in proc.communicate(timeout=60))
    assert proc.returncode == 0, err
    lines = (shown + out).splitlines()
    assert lines[0].startswith("cycle at 20") and lines[0].endswith("Z")
    assert [line for line in lines if line.startswith("next cycle at 20")], lines
    config.write_text(config.read_text().replace(shop.url, stopped_emulator_url()))
    done = run("collect", "--config", str(config), "--every", "1h", "--fail-on-error")  # would wait an hour
    assert done.returncode == 1 and "next cycle" not in done.stdout
    assert done.stderr.splitlines()[-1].startswith("ruscope: the cycle at 20")
    assert done.stderr.splitlines()[-1].endswith("failed; stopping (--fail-on-error)")


def test_help_shows_brackets_literally() -> None:
    dashboard, collect = run("dashboard", "--help"), run("collect", "--help")
    assert "the config's [store] uri" in " ".join(dashboard.stdout.split())
    assert "the config's [alerts]" in " ".join(collect.stdout.split()) and "--fail-on-error" in collect.stdout


def test_no_credential_anywhere_is_one_line_per_service(emulator, tmp_path: Path, monkeypatch) -> None:
    """No COSMOS_KEY and no Azure identity: one `ruscope:` line each for Cosmos DB, Azure Monitor and Log
    Analytics, never azure-identity's 15-line DefaultAzureCredential report."""
    monkeypatch.delenv("RUSCOPE_MONITOR_TOKEN", raising=False)
    monitor = (
        'monitor_resource = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/a"\n'
        '[monitor]\nendpoint = "https://127.0.0.1:1"\nworkspace_id = "11111111-2222-3333-4444-555555555555"\n'
        'logs_endpoint = "https://127.0.0.1:1"\n'
    )
    config = write_config(tmp_path / "ruscope.toml", emulator, query("all"), extra=monitor)
    done = run("collect", "--config", str(config), "--store", str(tmp_path / "store"), key=None)
    lines = done.stderr.splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 3 and all(line.startswith("ruscope: ") for line in lines), done.stderr
    assert "set COSMOS_KEY" in lines[0] and "Monitoring Reader" in lines[1] and "Log Analytics Reader" in lines[2]

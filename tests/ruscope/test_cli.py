"""`ruscope replay` / `ruscope collect` as a user runs them: real processes, exit codes, kill -9, SIGTERM,
and keys that never leak."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from emulator.engine.facade import Context
from store import StoreWarning, read_table, store_location
from tests.conftest import wait_for_sdk_background_requests

ROOT = Path(__file__).resolve().parents[2]


def ruscope(*args: str, key: str, wait: bool = True, **kwargs) -> subprocess.CompletedProcess | subprocess.Popen:
    env = {**os.environ, "COSMOS_KEY": key}
    command = [sys.executable, "-m", "ruscope", *args]
    if not wait:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, **kwargs)


# These tests are about what reaches the store (kills, overlaps, signals), not the replay's pacing
# (tests/collectors/test_replay_pacing.py): unpaced, a run takes the emulator's time, not 100 RU/s's.
UNPACED = "[replay]\nmax_ru_per_s = inf\n"


def write_config(path: Path, emu, queries: str, extra: str = "") -> Path:
    text = f'[cosmos]\nendpoint = "{emu.url}"\ndatabase = "shop"\n{extra}\n{UNPACED}{queries}'
    path.write_text(text, encoding="utf-8")
    return path


def query(name: str, sql: str = "SELECT * FROM c", **fields: object) -> str:
    lines = [f'[[queries]]\nname = "{name}"\ncontainer = "orders"\nsql = "{sql}"']
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in fields.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def shop(emulator):
    db = CosmosClient(emulator.url, credential=emulator.key).create_database("shop")
    db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=12_000)
    emulator.engine.throttle.enabled = False
    for i in range(60):
        emulator.engine.create_item(
            Context(), "shop", "orders", {"id": f"o{i}", "tenantId": f"t{i % 6}"}, [f"t{i % 6}"]
        )
    wait_for_sdk_background_requests()  # the tests count the requests this emulator receives
    return emulator


def no_key_anywhere(key: str, *texts: str, store: Path) -> None:
    for text in texts:
        assert key not in text
    for path in store.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


def test_exit_codes_and_output(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    good = write_config(tmp_path / "good.toml", shop, query("all") + query("one", partition_key="t1"))
    done = ruscope("replay", "--config", str(good), "--store", str(store), key=shop.key)
    assert done.returncode == 0, done.stderr
    assert "all: 1 execution(s)" in done.stdout and "fan-out over 2 pkrange(s)" in done.stdout
    assert "0 failed" in done.stdout and str(store) in done.stdout
    partial = write_config(tmp_path / "partial.toml", shop, query("all") + query("broken", sql="SELECT * FORM c"))
    done = ruscope("replay", "--config", str(partial), "--store", str(store), key=shop.key)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "ruscope: query 'broken': 400 SC1001 Syntax error, incorrect syntax near 'FORM'. (at 9-13)"
    ]
    only = ruscope("replay", "--config", str(partial), "--store", str(store), "--only", "all", key=shop.key)
    assert only.returncode == 0 and "broken" not in only.stdout
    no_key_anywhere(shop.key, done.stdout, done.stderr, store=store)


def test_bad_configs_exit_2_before_any_request(shop, tmp_path: Path) -> None:
    before = len(shop.engine.accounting.records())
    typo = write_config(tmp_path / "typo.toml", shop, query("q").replace("container", "contianer"))
    done = ruscope("replay", "--config", str(typo), key=shop.key)
    assert done.returncode == 2
    assert "queries.0 (q).contianer: Extra inputs are not permitted; did you mean 'container'?" in done.stderr
    assert "Traceback" not in done.stderr
    writer = write_config(tmp_path / "write.toml", shop, query("q", sql="DELETE FROM c"))
    done = ruscope("replay", "--config", str(writer), key=shop.key)
    assert done.returncode == 2 and "queries.0 (q).sql: only SELECT queries are replayed" in done.stderr
    done = ruscope("replay", "--config", str(tmp_path / "missing.toml"), key=shop.key)
    assert done.returncode == 2 and "no such file" in done.stderr
    done = ruscope("collect", "--config", str(typo.with_name("typo.toml")), "--every", "soon", key=shop.key)
    assert done.returncode == 2
    assert len(shop.engine.accounting.records()) == before  # nothing was sent


def test_a_wrong_key_is_reported_without_leaking_it(shop, tmp_path: Path) -> None:
    wrong = "d3JvbmcgYnV0IHZhbGlkIGJhc2U2NCBrZXkgb2YgYW55IGxlbmd0aA=="
    store = tmp_path / "store"
    config = write_config(tmp_path / "c.toml", shop, query("q"), extra=f'[store]\ndir = "{store}"')
    done = ruscope("replay", "--config", str(config), key=wrong)
    assert done.returncode == 1 and "401 unauthorized" in done.stderr and "Traceback" not in done.stderr
    no_key_anywhere(wrong, done.stdout, done.stderr, store=store)


def journaled(store: Path) -> list[dict]:
    """The complete rows the run on disk has captured but not yet written as Parquet."""
    entries = []
    for path in (store / "_pending").glob("*/*.jsonl"):
        for line in path.read_bytes().splitlines(keepends=True):
            if line.endswith(b"\n"):  # a torn last line was never finished
                entries.append({"table": path.stem, "row": json.loads(line)})
    return entries


def test_kill_9_mid_run_then_rerun_loses_and_duplicates_nothing(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    queries = "".join(query(f"q{i:02d}", max_item_count=10, repeat=3) for i in range(20))  # 60 executions
    config = write_config(tmp_path / "c.toml", shop, queries)
    proc = ruscope("replay", "--config", str(config), "--store", str(store), key=shop.key, wait=False)
    deadline = time.monotonic() + 60
    while sum(e["table"] == "executions" for e in journaled(store)) < 10 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    captured = journaled(store)
    killed_run = captured[0]["row"]["run_id"]
    executions_captured = sum(e["table"] == "executions" for e in captured)
    assert 10 <= executions_captured < 60
    done = ruscope("replay", "--config", str(config), "--store", str(store), key=shop.key)
    assert done.returncode == 0, done.stderr
    assert "recovered 1 unwritten part(s)" in done.stdout
    for _ in range(2):  # and a third run recovers nothing twice
        with warnings.catch_warnings():
            warnings.simplefilter("error", StoreWarning)  # nothing half-written is visible
            executions = read_table(store_location(store), "executions")
            requests = read_table(store_location(store), "requests")
        first = executions[executions["run_id"] == killed_run]
        assert len(first) == executions_captured  # every captured execution, once
        assert len(requests[requests["run_id"] == killed_run]) == len(captured) - executions_captured
        later = executions[executions["run_id"] != killed_run]
        assert sorted(set(later.groupby("run_id").size())) in ([60], [3, 60]) and (later["status"] == "ok").all()
        assert not executions.duplicated(["run_id", "execution_id"]).any()
        assert not requests.duplicated(["run_id", "seq"]).any()
        assert not list((store / "_pending").iterdir())
        done = ruscope("replay", "--config", str(config), "--store", str(store), "--only", "q00", key=shop.key)
        assert done.returncode == 0 and "recovered" not in done.stdout


def test_collect_every_stops_cleanly_on_sigterm(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = write_config(tmp_path / "c.toml", shop, query("q", repeat=2))
    proc = ruscope("collect", "--config", str(config), "--store", str(store), "--every", "1s", key=shop.key, wait=False)
    deadline = time.monotonic() + 60
    while len(list(store.rglob("executions/*/*.parquet"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopping after the current request" in err and "Traceback" not in err
    executions = read_table(store_location(store), "executions")
    assert executions["run_id"].nunique() >= 2 and set(executions["status"]) <= {"ok", "stopped"}


def test_two_runs_sharing_a_store_lose_nothing(shop, tmp_path: Path) -> None:
    """Data-loss bug 1, end to end: a second `ruscope replay` recovers pending segments at its start while
    a long run is still writing its own; the long run's rows must all reach the store, each once."""
    store = tmp_path / "store"
    long_run = write_config(tmp_path / "long.toml", shop, query("all", repeat=800) + query("one", partition_key="t1"))
    short_run = write_config(tmp_path / "short.toml", shop, query("t2", partition_key="t2", repeat=2))
    first = ruscope("replay", "--config", str(long_run), "--store", str(store), key=shop.key, wait=False)
    deadline = time.monotonic() + 60
    while not list((store / "_pending").glob("*.lock")) and time.monotonic() < deadline:
        time.sleep(0.02)
    overlapping = seconds = 0
    while first.poll() is None and overlapping < 3:
        # the second run recovers pending segments as it starts: started while the first holds its segment's
        # lock is the overlap this test is about (measured at the start, so a loaded machine that slows the
        # second run's own work does not hide it)
        writing = first.poll() is None and bool(list((store / "_pending").glob("*.lock")))
        second = ruscope("replay", "--config", str(short_run), "--store", str(store), key=shop.key)
        assert second.returncode == 0, second.stderr
        seconds += 1
        overlapping += writing
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert overlapping >= 1, "the second run never started while the first was writing"

    executions = read_table(store_location(store), "executions")
    requests = read_table(store_location(store), "requests")
    per_run = executions.groupby("run_id")["query_name"].agg(lambda names: sorted(set(names)))
    long_ids = [run for run, names in per_run.items() if names == ["all", "one"]]
    assert len(long_ids) == 1
    long_rows = executions[executions["run_id"] == long_ids[0]]
    assert sorted(long_rows["query_name"].value_counts().items()) == [("all", 800), ("one", 1)]
    assert sum(names == ["t2"] for names in per_run) == seconds  # every short run is there too
    assert (executions[executions["query_name"] == "t2"].groupby("run_id").size() == 2).all()
    served = requests[(requests["run_id"] == long_ids[0]) & (requests["request_kind"] == "page")]
    assert set(served["execution_id"]) == set(long_rows["execution_id"])  # every execution kept its requests
    assert not executions.duplicated(["run_id", "execution_id"]).any()
    assert not requests.duplicated(["run_id", "seq"]).any()
    assert not list((store / "_pending").glob("*-*/"))  # nothing left pending


def test_dashboard_serves_on_loopback_without_usage_statistics_from_any_directory(tmp_path: Path) -> None:
    """`ruscope dashboard` run outside the repository (where `.streamlit/config.toml` is not read)."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "ruscope", "dashboard", "--store", str(tmp_path / "store"), "--port", str(port)]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, health = time.monotonic() + 60, ""
        while time.monotonic() < deadline and health != "ok":
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as answer:
                    health = answer.read().decode()
            except OSError:
                time.sleep(0.2)
        assert health == "ok"
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert f"127.0.0.1:{port}" in output
    assert "usage statistics" not in output.lower() and "Network URL" not in output


def test_dashboard_passes_the_config_s_pricing_and_never_an_inherited_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ruscope dashboard --config F` gives Streamlit F's [pricing] as JSON ($RUSCOPE_PRICING, read by
    `dashboard.state.pricing`); without a config none, even if the caller's environment had one, so the
    pages price at the list price example and say so. The demo's dashboard has none either."""
    import socket

    from typer.testing import CliRunner

    import ruscope.cli
    from collectors.config.pricing import PricingSettings
    from dashboard.environment import PRICING_ENV, STORE_ENV
    from ruscope.launch import dashboard_environment

    started: list[dict[str, str]] = []
    monkeypatch.setattr(ruscope.cli.os, "execve", lambda path, argv, env: started.append(dict(env)))
    monkeypatch.setenv(PRICING_ENV, '{"currency": "GBP"}')  # a stale one in the caller's shell
    config = tmp_path / "ruscope.toml"
    config.write_text(
        f'[cosmos]\nendpoint = "http://127.0.0.1:8081/"\ndatabase = "shop"\n[store]\nuri = "{tmp_path / "store"}"\n'
        '[pricing]\ncurrency = "EUR"\nmanual_per_100_ru_s_hour = 0.01\nmulti_write_per_100_ru_s_hour = 0.02\n'
        "serverless_per_million_ru = 0.3\nstorage_per_gb_month = 0.3\n[[pricing.reservations]]\nru_s = 500\n"
        "discount = 0.3\n",
        encoding="utf-8",
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    for args in (["--config", str(config)], ["--store", str(tmp_path / "store")]):
        result = CliRunner().invoke(ruscope.cli.app, ["dashboard", *args, "--port", port])
        assert result.exit_code == 0, result.output
    with_config, without = started
    pricing = PricingSettings.model_validate_json(with_config[PRICING_ENV])
    assert pricing.prices().currency == "EUR" and not pricing.prices().list_example
    assert [(r.ru_s, r.discount) for r in pricing.held()] == [(500.0, 0.3)]
    assert with_config[STORE_ENV] == str((tmp_path / "store").resolve())
    assert PRICING_ENV not in without  # no config: the list price example
    assert PRICING_ENV not in dashboard_environment({PRICING_ENV: "{}"}, "store")  # the demo's start


def test_dashboard_on_a_port_in_use_says_so_and_how_to_pick_another(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "ruscope", "dashboard", "--store", str(tmp_path), "--port", str(port)]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and not done.stdout
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr, done.stderr
    assert "--port" in done.stderr and "Traceback" not in done.stderr


def fleet_toml(path: Path, urls: dict[str, str], store: Path) -> Path:
    """Three accounts sharing `COSMOS_KEY` (each names it), two shared queries, one store."""
    accounts = "".join(
        f'[[accounts]]\nname = "{name}"\nendpoint = "{url}"\ndatabase = "shop"\nkey_env = "COSMOS_KEY"\n\n'
        for name, url in urls.items()
    )
    fleet = f'[store]\nuri = "{store}"\n\n[fleet]\nparallelism = 2\n\n{UNPACED}\n{accounts}'
    path.write_text(fleet + query("all") + query("one", partition_key="t1"), encoding="utf-8")
    return path


@pytest.fixture
def fleet(shop, make_emulator, tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """eu-1 is the `shop` emulator, eu-3 another with its own orders, eu-2 a stopped emulator's port."""
    from emulator.rest.server import open_engine, start_in_thread

    other = make_emulator()
    CosmosClient(other.url, credential=other.key).create_database("shop").create_container(
        "orders", PartitionKey("/tenantId"), offer_throughput=6_000
    )
    other.engine.create_item(Context(), "shop", "orders", {"id": "x", "tenantId": "t1"}, ["t1"])
    down = start_in_thread(open_engine())
    down.stop()
    urls = {"eu-1": shop.url, "eu-2": down.url, "eu-3": other.url}
    store = tmp_path / "fleet-store"
    return fleet_toml(tmp_path / "fleet.toml", urls, store), urls, store


@pytest.mark.parametrize("command", ["replay", "collect"])
def test_a_fleet_with_one_account_down_collects_the_others_and_exits_1(shop, fleet, command: str) -> None:
    config, urls, store = fleet
    done = ruscope(command, "--config", str(config), key=shop.key)
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.strip().splitlines()  # `collect`: said once, though every collector met it
    assert line.startswith(f"ruscope: account 'eu-2': cannot reach {urls['eu-2']}") and "Traceback" not in line
    assert "[eu-1] all: 1 execution(s)" in done.stdout and "[eu-3] one: 1 execution(s)" in done.stdout
    # checked once at the start: no replay (or storage) run for eu-2, so no error row per query
    assert not [line for line in done.stdout.splitlines() if line.startswith("[eu-2]") and "execution(s)" in line]
    executions = read_table(store_location(store), "executions")
    ok = executions[executions["status"] == "ok"].groupby("account")["items"].sum().to_dict()
    assert ok == {"eu-1": 60 + 10, "eu-3": 1 + 1}  # each account's rows carry its name
    assert set(executions["account"]) == {"eu-1", "eu-3"} and set(executions["status"]) == {"ok"}
    no_key_anywhere(shop.key, done.stdout, done.stderr, store=store)


def test_account_picks_one_account_of_the_fleet(shop, fleet) -> None:
    config, _, store = fleet
    done = ruscope("replay", "--config", str(config), "--account", "eu-3", "--only", "one", key=shop.key)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("one: 1 execution(s)") and "[eu-3]" not in done.stdout  # alone: no prefix
    assert set(read_table(store_location(store), "executions")["account"]) == {"eu-3"}
    done = ruscope("collect", "--config", str(config), "--account", "nope", key=shop.key)
    assert done.returncode == 2 and "--account: no account named 'nope' (known: eu-1, eu-2, eu-3)" in done.stderr


def test_the_cosmos_shorthand_labels_rows_with_the_host_and_collect_compacts(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    extra = f'[store]\ndir = "{store}"\ncompact_after_collect = true'
    config = write_config(tmp_path / "c.toml", shop, query("all"), extra=extra)
    for _ in range(2):
        done = ruscope("collect", "--config", str(config), key=shop.key)
        assert done.returncode == 0 and not done.stderr, done.stderr
    assert "compacted executions: 2 -> 1 file(s)" in done.stdout and "[" not in done.stdout  # one account: no labels
    assert set(read_table(store_location(store), "executions")["account"]) == {"127.0.0.1"}


def test_sigterm_stops_every_account_of_a_fleet_cleanly(shop, fleet, tmp_path: Path) -> None:
    _, urls, _ = fleet
    store = tmp_path / "both"
    config = fleet_toml(tmp_path / "both.toml", {"eu-1": urls["eu-1"], "eu-3": urls["eu-3"]}, store)
    config.write_text(config.read_text().replace('name = "all"', 'name = "all"\nrepeat = 2000', 1))
    proc = ruscope("replay", "--config", str(config), key=shop.key, wait=False)
    deadline = time.monotonic() + 60
    while len(list((store / "_pending").glob("*.lock"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)  # both accounts are running: each holds its segment's lock
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopping after the current request" in err and "Traceback" not in err
    assert "[eu-1] run " in out and "[eu-3] run " in out and out.count("(stopped by a signal)") == 2
    executions = read_table(store_location(store), "executions")
    assert set(executions["account"]) == {"eu-1", "eu-3"} and set(executions["status"]) <= {"ok", "stopped"}
    assert len(executions) < 2 * 2001 and not list((store / "_pending").glob("*-*/"))  # stopped early, all committed


def test_storage_snapshots_each_container_and_an_unknown_database_exits_1(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = write_config(tmp_path / "c.toml", shop, query("all"))
    done = ruscope("storage", "--config", str(config), "--store", str(store), key=shop.key)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert (
        done.stdout.startswith("orders: 2 partition(s), ") and "of 50 GB" in done.stdout and "of 20 GB" in done.stdout
    )
    assert ": 1 container(s), 0 failed, " in done.stdout  # the run's closing line counts what storage reads
    assert read_table(store_location(store), "partitions")["document_count"].sum() == 60
    config.write_text(config.read_text().replace('database = "shop"', 'database = "nope"'))
    done = ruscope("storage", "--config", str(config), "--store", str(store), key=shop.key)
    assert done.returncode == 1 and done.stderr == "ruscope: database 'nope' not found in account '127.0.0.1'\n"
    no_key_anywhere(shop.key, done.stdout, done.stderr, store=store)


def test_collect_prints_the_alerts_that_fired_and_exits_3(shop, tmp_path: Path) -> None:
    store = tmp_path / "store"
    quiet = f'[store]\ndir = "{store}"\n[alerts]\npartition_storage_percent = 90\n'
    config = write_config(tmp_path / "c.toml", shop, query("all"), extra=quiet)
    done = ruscope("collect", "--config", str(config), key=shop.key)
    assert done.returncode == 0 and "alert:" not in done.stdout, done.stdout + done.stderr
    config.write_text(config.read_text().replace("= 90", "= 0.000001"))  # any stored byte crosses it
    done = ruscope("collect", "--config", str(config), key=shop.key)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("alert:")]
    assert lines and all("of the 50 GB limit" in line for line in lines), done.stdout
    fired = read_table(store_location(store), "alerts")
    assert set(fired.loc[fired["rule"] != "evaluated", "rule"]) == {"partition_storage"}


def test_a_freshly_collected_local_store_is_private_to_its_owner(shop, tmp_path: Path) -> None:
    """The store and its pending directory are created 0700, as the emulator keeps its data 0600: whatever
    mode delta-rs gives the Parquet and log files, no other user can read them through a private directory."""
    store = tmp_path / "deep" / "store"
    config = write_config(tmp_path / "c.toml", shop, query("all"))
    old = os.umask(0o022)  # the common default: files 0644, directories 0755
    try:
        done = ruscope("replay", "--config", str(config), "--store", str(store), key=shop.key)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    assert (store / "requests").is_dir()
    for directory in (store, store / "_pending"):
        assert directory.stat().st_mode & 0o777 == 0o700, (directory, oct(directory.stat().st_mode))
    assert (tmp_path / "deep").stat().st_mode & 0o777 == 0o755  # a parent that was not the store keeps the umask


HOSTILE = "ord\x1b[2J\x1b]0;owned\x07ers"  # clears the screen, retitles the terminal (the SDK refuses CR in ids)


def test_control_characters_in_names_never_reach_the_terminal(shop, tmp_path: Path) -> None:
    """A container named with ESC and BEL, a key with CR: every line ruscope prints shows them escaped."""
    db = CosmosClient(shop.url, credential=shop.key).get_database_client("shop")
    db.create_container(HOSTILE, PartitionKey("/tenantId"), offer_throughput=400)
    shop.engine.create_item(Context(), "shop", HOSTILE, {"id": "1", "tenantId": "t\x1b[31m\r"}, ["t\x1b[31m\r"])
    store = tmp_path / "store"
    config = write_config(tmp_path / "c.toml", shop, query("all").replace('"orders"', json.dumps(HOSTILE)))
    runs = [
        ruscope(command, "--config", str(config), "--store", str(store), key=shop.key)
        for command in ("storage", "replay")
    ]
    assert "ord\\x1b[2J\\x1b]0;owned\\x07ers: 1 partition(s)" in runs[0].stdout, runs[0].stdout
    for done in runs:
        printed = done.stdout + done.stderr
        assert done.returncode == 0, printed
        assert not {"\x1b", "\r", "\x07"} & set(printed), repr(printed)


def test_terminal_text_escapes_what_drives_a_terminal_and_keeps_the_rest() -> None:
    from ruscope.options import terminal_text

    assert terminal_text("a\x1b[31mb\rc\x07\x9b\u202ed\te\nf é") == "a\\x1b[31mb\\rc\\x07\\x9b\\u202ed\te\nf é"

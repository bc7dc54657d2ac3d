"""`ruscope advise --from-account` in a real process against the emulator: the live container sampled
through the SDK, the sample written beside the config, the ranking printed; failures in one line."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey

from emulator.engine.facade import Context
from store import read_table, store_location
from workloads.chat import generator as g

RUSCOPE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "ruscope"

CONFIG = """
[cosmos]
endpoint = "{url}"
database = "chat"

[[queries]]
name = "tenant-day"
container = "query-logs"
sql = "SELECT * FROM c WHERE c.tenantId = @t AND c.date = @d"
parameters = {{ "@t" = "contoso", "@d" = "2026-12-09" }}
rate_per_s = 6

[advisor]
container = "query-logs"

[[advisor.candidates]]
key = "/tenantId"

[[advisor.candidates]]
key = ["/tenantId", "/sessionId"]
"""


def load_logs(emu, docs: int = 400) -> list[dict]:
    until = dt.datetime(2026, 12, 10, tzinfo=dt.UTC).timestamp()
    size = g.Size("advise", 20, 0, 0.0, backfill_days=20, backfill_turns_per_hour=2.0)
    logs = [g.query_log_doc(t) for t in list(g.backfill_turns(g.DEFAULT_SEED, g.build_tenants(20), size, until))[:docs]]
    db = CosmosClient(emu.url, credential=emu.key).create_database("chat")
    db.create_container("query-logs", PartitionKey("/tenantId"), offer_throughput=30_000)
    emu.engine.throttle.enabled = False
    for doc in logs:
        emu.engine.create_item(Context(), "chat", "query-logs", doc, [doc["tenantId"]])
    emu.engine.throttle.enabled = True
    return logs


def run(*args: str, key: str | None, cwd: Path) -> subprocess.CompletedProcess:
    """`ruscope advise` in `cwd` (the config's relative store, ruscope-data, lands there)."""
    env = {k: v for k, v in os.environ.items() if k != "COSMOS_KEY"} | ({"COSMOS_KEY": key} if key else {})
    return subprocess.run(
        [str(RUSCOPE), "advise", *args], capture_output=True, text=True, env=env, timeout=120, cwd=cwd
    )


def test_from_account_samples_the_container_and_prints_the_ranking(emulator, tmp_path: Path) -> None:
    logs = load_logs(emulator)
    config = tmp_path / "ruscope.toml"
    config.write_text(CONFIG.format(url=emulator.url))
    out = tmp_path / "advice.csv"
    done = run(
        "--config",
        str(config),
        "--from-account",
        "--max-documents",
        "200",
        "--out",
        str(out),
        key=emulator.key,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    sample = tmp_path / "advisor-sample.jsonl"
    first, *rest = done.stdout.splitlines()
    assert first.startswith(f"{sample}: 200 document(s) from 5/5 physical partition(s), ")
    assert rest[0] == "The sample:" and rest[1].startswith("  sample vs documents per feed range: #0 ")  # its bias
    assert any(line.startswith("  total variation over feed ranges x _ts windows: ") for line in rest[:8])
    docs = [json.loads(line) for line in sample.read_text().splitlines()]
    by_id = {d["id"]: d for d in logs}
    assert len(docs) == 200 and all(d["tenantId"] == by_id[d["id"]]["tenantId"] and "_rid" not in d for d in docs)
    assert "1. /tenantId,/sessionId" in done.stdout and "2. /tenantId" in done.stdout
    assert out.read_text().startswith("rank,design,")
    designs = read_table(store_location(tmp_path / "ruscope-data"), "advice_designs")  # stored for the Advisor page
    assert designs.sort_values("rank")["design"].iloc[0] == "/tenantId,/sessionId"
    assert set(designs["account"]) == {"127.0.0.1"} and set(designs["container"]) == {"query-logs"}
    assert designs["sample"].iloc[0].startswith("sample vs documents per feed range: #0 ")
    assert f"as run {designs['run_id'].iloc[0]}" in done.stdout


def test_a_budget_and_a_sample_path_are_honoured(emulator, tmp_path: Path) -> None:
    load_logs(emulator)
    config = tmp_path / "ruscope.toml"
    config.write_text(CONFIG.format(url=emulator.url))
    sample = tmp_path / "elsewhere.jsonl"
    done = run(
        "--config",
        str(config),
        "--from-account",
        "--budget-ru",
        "15",
        "--sample-out",
        str(sample),
        key=emulator.key,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "(stopped by budget)" in done.stdout.splitlines()[0]
    assert 0 < len(sample.read_text().splitlines()) < 400


def test_an_unreachable_account_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    config = tmp_path / "ruscope.toml"
    config.write_text(CONFIG.format(url=url))
    done = run("--config", str(config), "--from-account", key="a2V5", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"ruscope: cannot sample the account: cannot reach {url}")
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "advisor-sample.jsonl").exists()


def test_usage_errors_are_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "ruscope.toml"
    config.write_text(CONFIG.format(url="http://127.0.0.1:8081/"))
    both = run(
        "--config", str(config), "--from-account", "--sample", str(tmp_path / "x.jsonl"), key="a2V5", cwd=tmp_path
    )
    assert both.returncode == 2 and "--from-account" in both.stderr and len(both.stderr.splitlines()) == 1
    named = run("--config", str(config), "--from-account", "--account", "nope", key="a2V5", cwd=tmp_path)
    assert named.returncode == 2 and "no account named 'nope'" in named.stderr


def test_no_key_for_the_emulator_says_which_variable_to_set(emulator, tmp_path: Path) -> None:
    config = tmp_path / "ruscope.toml"
    config.write_text(CONFIG.format(url=emulator.url))
    done = run("--config", str(config), "--from-account", key=None, cwd=tmp_path)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"ruscope: cannot sample the account: no key for {emulator.url}: set COSMOS_KEY")

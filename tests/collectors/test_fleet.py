"""The fleet: many accounts collected into one store with bounded parallelism, through the real SDK against
emulators on free ports; one account down never stops the others."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from collectors.config import Config, parse_config
from collectors.fleet import Lines, collect_fleet, maintain_after_collect
from collectors.registry import Options, collector
from collectors.run import Run
from emulator.engine.facade import Context
from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from store import read_table, store_location
from tests.store.test_pending import execution

QUERIES = [
    {"name": "one-tenant", "container": "orders", "sql": "SELECT * FROM c", "partition_key": "t1"},
    {"name": "count", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c"},
]


def load_shop(emu: RunningEmulator, docs: int) -> None:
    CosmosClient(emu.url, credential=emu.key).create_database("shop").create_container(
        "orders", PartitionKey("/tenantId"), offer_throughput=12_000
    )
    for i in range(docs):
        emu.engine.create_item(Context(), "shop", "orders", {"id": f"o{i}", "tenantId": f"t{i % 3}"}, [f"t{i % 3}"])


def fleet_config(urls: dict[str, str], *, parallelism: int = 4, **settings: Any) -> Config:
    accounts = [
        {"name": name, "endpoint": url, "database": "shop", "key_env": f"{name.upper().replace('-', '_')}_KEY"}
        for name, url in urls.items()
    ]
    data = {"accounts": accounts, "fleet": {"parallelism": parallelism}, "queries": QUERIES, **settings}
    return parse_config(data, Path("fleet.toml"))


@pytest.fixture
def three(make_emulator, monkeypatch) -> dict[str, str]:
    """eu-1 and eu-3 serve a shop (30 and 60 orders); eu-2 was started and stopped: its port refuses."""
    eu1, eu3 = make_emulator(), make_emulator()
    load_shop(eu1, 30)
    load_shop(eu3, 60)
    down = start_in_thread(open_engine())
    down.stop()
    for name in ("EU_1_KEY", "EU_2_KEY", "EU_3_KEY"):
        monkeypatch.setenv(name, eu1.key)
    return {"eu-1": eu1.url, "eu-2": down.url, "eu-3": eu3.url}


def test_two_accounts_collected_one_down_is_one_line_and_exit_1(three: dict[str, str], tmp_path: Path) -> None:
    out: list[str] = []
    err: list[str] = []
    outcome = collect_fleet(
        [collector("replay")], fleet_config(three), store=store_location(tmp_path), out=out.append, err=err.append
    )
    assert outcome.exit_code == 1
    assert [a.exit_code for a in outcome.accounts] == [0, 1, 0]
    assert len(err) == 1 and err[0].startswith(f"account 'eu-2': cannot reach {three['eu-2']}"), err
    assert {line.split("]")[0] + "]" for line in out} == {"[eu-1]", "[eu-3]"}  # eu-2 was checked, not run
    assert "[eu-1] one-tenant: 1 execution(s)" in "\n".join(out)

    executions = read_table(store_location(tmp_path), "executions")
    by_account = executions.groupby("account")
    assert by_account["run_id"].nunique().to_dict() == {"eu-1": 1, "eu-3": 1}  # a run each; no error rows
    counts = executions[executions["query_name"] == "count"].set_index("account")
    assert counts.loc["eu-1", "items"] == counts.loc["eu-3", "items"] == 1
    assert set(executions["status"]) == {"ok"}
    requests = read_table(store_location(tmp_path), "requests")
    assert set(requests["account"]) == {"eu-1", "eu-3"}  # eu-2 sent nothing that answered
    for account, rows in requests.groupby("account"):  # each account's requests belong to its own run
        assert set(rows["run_id"]) == set(executions[executions["account"] == account]["run_id"])


def test_one_account_alone_keeps_its_lines_unprefixed(three: dict[str, str], tmp_path: Path) -> None:
    out: list[str] = []
    config = fleet_config(three)
    outcome = collect_fleet(
        [collector("replay")], config, store=store_location(tmp_path), accounts=[config.account("eu-3")], out=out.append
    )
    assert outcome.exit_code == 0 and out[0].startswith("one-tenant: 1 execution(s)") and out[-1].startswith("run ")
    assert set(read_table(store_location(tmp_path), "executions")["account"]) == {"eu-3"}


class Gate:
    """An instrumented collector: each run waits inside `collect` until `width` runs are in there at once
    (or no more will start), so the test sees how many the fleet lets run together, without timing."""

    name = "gate"
    item = "account"

    def __init__(self, width: int, total: int) -> None:
        self.width, self.total = width, total
        self.active = self.started = self.peak = 0
        self.changed = threading.Condition()

    def budget(self, config: Config) -> float | None:
        return None

    def collect(self, config: Config, run: Run, options: Options) -> None:
        with self.changed:
            self.active += 1
            self.started += 1
            self.peak = max(self.peak, self.active)
            self.changed.notify_all()
            # a safety timeout only: a correct fleet never reaches it
            self.changed.wait_for(lambda: self.active >= self.width or self.started == self.total, timeout=30)
        run.record(execution(run_id=run.run_id, account=config.account(options.account).name))
        run.count(failed=False)
        with self.changed:
            self.active -= 1
            self.changed.notify_all()


def many(n: int, parallelism: int) -> Config:
    return fleet_config({f"a{i}": f"http://127.0.0.1:{9000 + i}/" for i in range(n)}, parallelism=parallelism)


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_at_most_parallelism_accounts_run_at_once(parallelism: int, tmp_path: Path) -> None:
    gate = Gate(parallelism, total=7)
    outcome = collect_fleet([gate], many(7, parallelism), store=store_location(tmp_path), out=lambda _: None)
    assert gate.peak == parallelism and gate.started == 7 and outcome.exit_code == 0
    executions = read_table(store_location(tmp_path), "executions")
    assert sorted(executions["account"]) == [f"a{i}" for i in range(7)] and executions["run_id"].nunique() == 7


def test_a_stop_signal_starts_no_more_accounts(tmp_path: Path) -> None:
    stop = threading.Event()

    class Stopping(Gate):
        def collect(self, config: Config, run: Run, options: Options) -> None:
            super().collect(config, run, options)
            stop.set()  # as SIGINT/SIGTERM would, during the first account's run

    gate = Stopping(1, total=4)
    outcome = collect_fleet([gate], many(4, 1), store=store_location(tmp_path), stop=stop, out=lambda _: None)
    assert gate.started == 1 and outcome.exit_code == 0
    assert [len(a.summaries) for a in outcome.accounts] == [1, 0, 0, 0]
    assert outcome.accounts[0].summaries[0].ended_by == "signal"


def test_a_broken_account_job_is_one_line_and_the_others_go_on(tmp_path: Path) -> None:
    class Flaky(Gate):
        def collect(self, config: Config, run: Run, options: Options) -> None:
            if options.account == "a1":
                raise RuntimeError("the disk is full")
            super().collect(config, run, options)

    err: list[str] = []
    outcome = collect_fleet(
        [Flaky(1, total=3)], many(3, 2), store=store_location(tmp_path), out=lambda _: None, err=err.append
    )
    assert err == ["account 'a1': RuntimeError: the disk is full"] and outcome.exit_code == 1
    assert sorted(read_table(store_location(tmp_path), "executions")["account"]) == ["a0", "a2"]


def test_a_missing_key_variable_fails_only_its_account(three: dict[str, str], tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("EU_3_KEY")
    err: list[str] = []
    config = fleet_config(three)
    accounts = [config.account("eu-1"), config.account("eu-3")]
    outcome = collect_fleet(
        [collector("replay")], config, store=store_location(tmp_path), accounts=accounts, err=err.append
    )
    assert err == ["account 'eu-3': the environment variable EU_3_KEY (its key_env) is not set"]
    assert [a.exit_code for a in outcome.accounts] == [0, 1]


def test_lines_name_their_account_once() -> None:
    out: list[str] = []
    err: list[str] = []
    to_out, to_err = Lines(out.append, err.append, labelled=True).of("eu-1")
    to_out("q: 1 execution(s)")
    to_err("query 'q': 400 bad")
    to_err("account 'eu-1': cannot reach http://x/")
    assert out == ["[eu-1] q: 1 execution(s)"]
    assert err == ["account 'eu-1': query 'q': 400 bad", "account 'eu-1': cannot reach http://x/"]


def test_compaction_after_collect_when_configured(tmp_path: Path) -> None:
    lines: list[str] = []
    for _ in range(3):  # three runs: three commits per table
        collect_fleet([Gate(1, total=2)], many(2, 1), store=store_location(tmp_path), out=lambda _: None)
    assert (
        maintain_after_collect(many(1, 1), store_location(tmp_path), out=lines.append) == 0 and lines == []
    )  # off by default
    on = many(1, 1).store.model_copy(update={"compact_after_collect": True, "vacuum_retention_hours": 0})
    config = many(1, 1).model_copy(update={"store": on})
    assert maintain_after_collect(config, store_location(tmp_path), out=lines.append) == 0
    assert any(line.startswith("compacted executions: 6 -> 1 file(s)") for line in lines), lines
    assert len(read_table(store_location(tmp_path), "executions")) == 6
    old = tmp_path / "old" / "executions" / "date=2026-01-01"  # a store of the layout before Delta Lake
    old.mkdir(parents=True)
    (old / "r1-p000.parquet").write_bytes(b"PAR1")
    assert maintain_after_collect(config, store_location(tmp_path / "old"), err=lines.append) == 1
    assert lines[-1].startswith(f"compaction of {tmp_path / 'old'} failed: store {tmp_path / 'old'}: table"), lines
    assert "ruscope store migrate" in lines[-1]

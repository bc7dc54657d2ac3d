"""The collector framework: a run journals records and seals them, counts items into an exit code, stops
on a signal or a budget; the registry holds the replay; credentials come from the environment."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from azure.identity import DefaultAzureCredential

from collectors import credentials, registry
from collectors.config import Config, parse_config
from collectors.run import BudgetReached, Run, Stopped
from store import read_table, store_location
from tests.store.test_pending import execution, row

CONFIG = parse_config({"cosmos": {"database": "shop"}, "replay": {"budget_ru": 10}}, Path("t.toml"))


class Counting:
    """A collector that records `n` requests of 4 RU each and stops at its budget."""

    name = "counting"
    item = "execution"

    def __init__(self, n: int = 2) -> None:
        self.n = n

    def budget(self, config: Config) -> float | None:
        return config.replay.budget_ru

    def collect(self, config: Config, run: Run, options: registry.Options) -> None:
        for seq in range(self.n):
            if run.over_budget(expected=4.0):
                break
            run.record(row(seq, run_id=run.run_id))
            run.charge(4.0)
            run.count(failed=seq == 1)
            run.out(f"item {seq}")
        run.record(execution(run_id=run.run_id))


def test_a_run_records_seals_and_summarizes(tmp_path: Path) -> None:
    lines: list[str] = []
    summary = registry.run_collector(
        Counting(), CONFIG, store=store_location(tmp_path), out=lines.append, clock=lambda: 1.8e9
    )
    assert summary.run_id.startswith("20270115T080000Z-") and lines == ["item 0", "item 1"]
    assert (summary.items, summary.failed, summary.total_ru, summary.exit_code) == (2, 1, 8.0, 1)
    assert read_table(store_location(tmp_path), "requests")["seq"].tolist() == [0, 1]
    assert summary.line(tmp_path) == f"run {summary.run_id}: 2 execution(s), 1 failed, 8.00 RU; stored in {tmp_path}"
    assert list((tmp_path / "_pending").iterdir()) == []


def test_the_budget_ends_a_run_and_makes_it_partial(tmp_path: Path) -> None:
    summary = registry.run_collector(Counting(5), CONFIG, store=store_location(tmp_path), out=lambda _: None)
    assert summary.ended_by == "budget" and summary.items == 2 and summary.exit_code == 1
    assert "(stopped at the RU budget)" in summary.line(tmp_path)


def test_check_raises_on_a_signal_or_past_the_budget(tmp_path: Path) -> None:
    run = Run(store_location(tmp_path), budget=5.0)
    run.check()
    run.charge(6.0)
    with pytest.raises(BudgetReached):
        run.check()
    run.stop.set()
    with pytest.raises(Stopped):
        run.check()
    assert run.finish().ended_by == "signal"


def test_a_failing_collector_still_seals_what_it_recorded(tmp_path: Path) -> None:
    class Broken(Counting):
        def collect(self, config: Config, run: Run, options: registry.Options) -> None:
            run.record(row(0, run_id=run.run_id))
            raise RuntimeError("bug")

    with pytest.raises(RuntimeError):
        registry.run_collector(Broken(), CONFIG, store=store_location(tmp_path), stop=threading.Event())
    assert read_table(store_location(tmp_path), "requests")["seq"].tolist() == [0]


def test_the_registry_runs_the_replay_first() -> None:
    assert [c.name for c in registry.collectors()] == ["replay", "storage", "metrics", "logs"]
    assert registry.collector("replay").budget(CONFIG) == 10
    with pytest.raises(LookupError, match="known: replay"):
        registry.collector("nope")


def test_credentials_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("COSMOS_KEY", "a-key")
    assert credentials.cosmos_credential() == "a-key"
    monkeypatch.delenv("COSMOS_KEY")
    assert isinstance(credentials.cosmos_credential(), DefaultAzureCredential)
    assert isinstance(credentials.token_credential(), DefaultAzureCredential)

"""The replay's RU/s ceiling (`[replay] max_ru_per_s`): through the real SDK against the emulator on a manual
clock (the pacing moves it; nothing really sleeps), the RU the replay sends in any clock second stays within
the ceiling plus one page; a stop signal ends a pacing wait; the config's errors name the file and option;
the closing lines say what the replay spent per account and container, as the store does."""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
import pytest
from azure.cosmos import CosmosClient, PartitionKey

from analysis.own_traffic import summarize_replay_spend
from collectors.config import ConfigError, load_config
from collectors.replay import replay
from collectors.replay.pacing import Pacer
from emulator.engine.facade import Engine
from store import read_table, store_location
from tests.collectors.test_replay import config_for, load_orders, run
from tests.conftest import ManualClock

CEILING = 10.0  # RU/s: well under what the queries below cost in all
COSTLY = [
    {"name": "count-all", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c", "repeat": 4},
    {"name": "pages", "container": "orders", "sql": "SELECT * FROM c", "max_item_count": 25, "repeat": 2},
    {"name": "one-key", "container": "orders", "sql": "SELECT * FROM c", "partition_key": "t3", "repeat": 5},
]


@pytest.fixture
def paced(make_emulator) -> tuple[object, ManualClock]:
    clock = ManualClock()
    emu = make_emulator(Engine(clock=clock))  # the engine's seconds are the replay's
    load_orders(emu)
    return emu, clock


def _most_in_one_second(requests: pd.DataFrame) -> float:
    """The most RU sent in any window of one clock second starting at a request (sliding, not calendar)."""
    times = requests["time"].map(pd.Timestamp.timestamp).to_numpy()
    charges = requests["request_charge"].to_numpy()
    return max(charges[(times >= t) & (times < t + 1.0)].sum() for t in times)


def test_the_replay_sends_at_most_its_ceiling_plus_one_page_in_any_clock_second(paced, tmp_path: Path) -> None:
    emu, clock = paced
    began = clock()
    summary, out, _ = run(
        emu, config_for(emu, COSTLY, replay_settings={"max_ru_per_s": CEILING}), tmp_path, clock=clock
    )
    requests = read_table(store_location(tmp_path), "requests").sort_values("seq")
    page = requests["request_charge"].max()
    assert summary.exit_code == 0 and summary.total_ru > 10 * CEILING  # many seconds' worth of RU
    assert _most_in_one_second(requests) <= CEILING + page + 1e-6
    # the pacing moved the run's clock by what the RU needed: the total over the ceiling, less one burst
    assert clock() - began >= (summary.total_ru - CEILING - page) / CEILING
    assert f"paced at {CEILING:g} RU/s, waited" in next(line for line in out if line.startswith("replay spent"))


def test_an_unpaced_replay_sends_everything_in_the_same_clock_second(paced, tmp_path: Path) -> None:
    """The measure above can fail: on a clock nothing moves, without pacing, one second holds it all."""
    emu, clock = paced
    config = config_for(emu, COSTLY, replay_settings={"max_ru_per_s": float("inf")})
    summary, out, _ = run(emu, config, tmp_path, clock=clock)
    requests = read_table(store_location(tmp_path), "requests")
    assert summary.total_ru > 10 * CEILING
    assert _most_in_one_second(requests) == pytest.approx(summary.total_ru, abs=0.05)
    assert any(line.endswith(", unpaced") for line in out)


def test_a_page_costlier_than_a_second_goes_once_the_debt_is_repaid() -> None:
    clock = ManualClock()
    pacer = Pacer(10.0, clock, clock.advance)
    pacer.before_request()
    assert clock() == 1_800_000_000.0  # nothing owed: no wait
    pacer.charge(45.0)  # a 45-RU page at 10 RU/s
    assert pacer.wait_s() == pytest.approx(4.5)
    clock.advance(2.0)  # the replay spent 2 s reading the page: repaid meanwhile
    pacer.before_request()
    assert clock() == pytest.approx(1_800_000_004.5) and pacer.waited_s == pytest.approx(2.5)
    clock.advance(60.0)  # an idle minute saves no credit: the next page waits for its own charge again
    pacer.charge(5.0)
    assert pacer.wait_s() == pytest.approx(0.5)


def test_a_stop_signal_during_a_pacing_wait_ends_the_run(paced, tmp_path: Path) -> None:
    emu, clock = paced
    stop, waits = threading.Event(), []

    def interrupted(seconds: float) -> None:  # Ctrl+C arrives during the third wait
        waits.append(seconds)
        clock.advance(seconds / 2)
        if len(waits) == 3:
            stop.set()

    summary = replay(
        config_for(emu, COSTLY, replay_settings={"max_ru_per_s": CEILING}),
        store=store_location(tmp_path),
        credential=emu.key,
        progress=False,
        out=lambda line: None,
        err=lambda line: None,
        clock=clock,
        sleep=interrupted,
        stop=stop,
    )
    executions = read_table(store_location(tmp_path), "executions")
    assert summary.ended_by == "signal" and summary.exit_code == 0 and len(waits) == 3  # no wait after it
    assert set(executions["query_name"]) == {"count-all"} and len(executions) < 4  # the one in progress


def test_the_closing_lines_say_what_each_container_cost_as_the_store_does(paced, tmp_path: Path) -> None:
    emu, clock = paced
    CosmosClient(emu.url, credential=emu.key).get_database_client("shop").create_container(
        "other", PartitionKey("/tenantId")
    )
    queries = [*COSTLY[:1], {"name": "elsewhere", "container": "other", "sql": "SELECT * FROM c"}]
    summary, out, _ = run(emu, config_for(emu, queries), tmp_path, clock=clock)
    spend = summarize_replay_spend(read_table(store_location(tmp_path), "requests")).set_index("container")
    head, *containers = out[out.index(next(line for line in out if line.startswith("replay spent"))) :]
    assert head.startswith(
        f"replay spent {summary.total_ru:.2f} RU on account '127.0.0.1' in {spend['requests'].sum()}"
    )
    assert "paced at 100 RU/s" in head  # the default ceiling
    assert containers == [
        f"  shop/orders: {spend.loc['orders', 'ru']:.2f} RU in {spend.loc['orders', 'requests']} request(s)",
        f"  shop/other: {spend.loc['other', 'ru']:.2f} RU in {spend.loc['other', 'requests']} request(s)",
        f"  account and database reads: {spend.loc['', 'ru']:.2f} RU in {spend.loc['', 'requests']} request(s)",
    ]
    assert spend["ru"].sum() == pytest.approx(summary.total_ru, abs=0.05) and (spend["runs"] == 1).all()


PACED_FLEET = """
[replay]
max_ru_per_s = 30

[[accounts]]
name = "eu"
endpoint = "https://eu.documents.azure.com:443/"
database = "shop"
replay_max_ru_per_s = 50

[[accounts]]
name = "us"
endpoint = "https://us.documents.azure.com:443/"
database = "shop"
"""


def test_each_account_has_its_ceiling(tmp_path: Path) -> None:
    path = tmp_path / "fleet.toml"
    path.write_text(PACED_FLEET, encoding="utf-8")
    assert [a.replay_max_ru_per_s for a in load_config(path).all_accounts()] == [50.0, 30.0]
    path.write_text('[cosmos]\ndatabase = "shop"\n', encoding="utf-8")
    assert load_config(path).account().replay_max_ru_per_s == 100.0  # the default


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("[replay]\nmax_ru_per_s = 0", "replay.max_ru_per_s: Input should be greater than 0"),
        (
            '[replay]\nmax_ru_per_s = "fast"',
            "replay.max_ru_per_s: Input should be a valid number, unable to parse string as a number",
        ),
        (
            "[replay]\nmax_ru_per_second = 50",
            "replay.max_ru_per_second: Extra inputs are not permitted; did you mean 'max_ru_per_s'?",
        ),
        (
            PACED_FLEET.replace("replay_max_ru_per_s = 50", "replay_max_ru_per_s = -5"),
            "accounts.0 (eu).replay_max_ru_per_s: Input should be greater than 0",
        ),
    ],
)
def test_a_bad_ceiling_names_the_file_and_the_option(tmp_path: Path, setting: str, message: str) -> None:
    path = tmp_path / "ruscope.toml"
    body = setting if "[[accounts]]" in setting else '[cosmos]\ndatabase = "shop"\n\n' + setting
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: {message}"

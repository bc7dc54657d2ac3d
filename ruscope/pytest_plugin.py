"""The ruscope pytest plugin: the RU each test of an application's suite spends on a ruscope emulator, and
RU budgets per test.

Installed with ruscope it is loaded by pytest (entry point `pytest11`: `ruscope`; `-p ruscope`
where plugin autoloading is off) and stays inert until given the emulator the application's tests already
talk to:

    pytest --ruscope-emulator http://127.0.0.1:8081/ --ruscope-report    # or RUSCOPE_EMULATOR=...

    @pytest.mark.ru_budget(max_ru=50, max_partitions=1)
    def test_orders_page(client): ...

No code of the application changes: its own `CosmosClient` sends its requests, and the plugin reads the
emulator's request log (`GET /_ruscope/requests`, signed with `--ruscope-key` / `RUSCOPE_EMULATOR_KEY`, the
well-known key by default) before and after each test's call phase, so every request the emulator metered
in between is the test's (fixtures' setup and teardown are not). That attribution needs the tests to run one
at a time against their emulator: under pytest-xdist, give each worker its own emulator. A test over its
budget fails with the figures and where its RU went; `--ruscope-report` prints RU per test and operation.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from dataclasses import dataclass, field

import pytest

from analysis.gate.requests import RequestCost, operations_text, over_budget, summarize_requests
from ruscope.check.emulator_log import EmulatorLog, EmulatorLogError  # no typer, no pandas: cheap to load

MARKER = "ru_budget"
BUDGET_KEYS = ("max_ru", "max_partitions", "max_requests")


@dataclass
class Recorder:
    log: EmulatorLog
    costs: dict[str, RequestCost] = field(default_factory=dict)
    incomplete: list[str] = field(default_factory=list)  # tests whose requests partly left the log


_RECORDER = pytest.StashKey[Recorder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ruscope", "RU per test on a ruscope emulator")
    group.addoption(
        "--ruscope-emulator", default=None, help="The ruscope emulator the tests use (env RUSCOPE_EMULATOR)."
    )
    group.addoption(
        "--ruscope-key", default=None, help="Its key (env RUSCOPE_EMULATOR_KEY; default: the well-known key)."
    )
    group.addoption("--ruscope-report", action="store_true", help="Print the RU of each test and operation.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(max_ru=None, max_partitions=None, max_requests=None): fail the test when its requests to the ruscope emulator exceed these",
    )
    url = config.getoption("--ruscope-emulator") or os.environ.get("RUSCOPE_EMULATOR")
    if not url:
        return
    key = config.getoption("--ruscope-key") or os.environ.get("RUSCOPE_EMULATOR_KEY")
    config.stash[_RECORDER] = Recorder(EmulatorLog(url, key))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    recorder = item.config.stash.get(_RECORDER, None)
    marker = item.get_closest_marker(MARKER)
    if recorder is None:
        if marker is not None:
            pytest.fail(
                f"@pytest.mark.{MARKER} needs the emulator: pass --ruscope-emulator URL or set RUSCOPE_EMULATOR",
                pytrace=False,
            )
        return (yield)
    try:
        start = recorder.log.last()
    except EmulatorLogError as exc:
        pytest.fail(f"ruscope: {exc}", pytrace=False)
    result = yield
    try:
        read = recorder.log.since(start)
    except EmulatorLogError as exc:
        pytest.fail(f"ruscope: {exc}", pytrace=False)
    cost = summarize_requests(vars(r) for r in read.requests)
    recorder.costs[item.nodeid] = cost
    if read.dropped:
        recorder.incomplete.append(item.nodeid)
    if marker is not None:
        _hold_budget(marker, cost)
    return result


def _hold_budget(marker: pytest.Mark, cost: RequestCost) -> None:
    unknown = set(marker.kwargs) - set(BUDGET_KEYS)
    if unknown or marker.args:
        pytest.fail(
            f"@pytest.mark.{MARKER} takes {', '.join(BUDGET_KEYS)} as keywords (got {sorted(unknown) or marker.args})",
            pytrace=False,
        )
    problems = over_budget(cost, **marker.kwargs)
    if problems:
        pytest.fail(f"RU budget exceeded: {'; '.join(problems)}. Spent: {operations_text(cost)}", pytrace=False)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    recorder = config.stash.get(_RECORDER, None)
    if recorder is None or not config.getoption("--ruscope-report"):
        return
    write = terminalreporter.write_line
    terminalreporter.section("ruscope: RU per test")
    total = 0.0
    for nodeid, cost in sorted(recorder.costs.items(), key=lambda kv: (-kv[1].ru, kv[0])):
        total += cost.ru
        reach = f"{cost.partitions} partition" + ("" if cost.partitions == 1 else "s")
        write(f"{cost.ru:10.2f} RU  {cost.requests:5d} requests  {reach:>13}  {nodeid}")
        if cost.operations:
            write(f"{'':14}{operations_text(cost)}")
    write(f"{total:10.2f} RU in {len(recorder.costs)} tests")
    for nodeid in recorder.incomplete:
        write(f"incomplete: some requests of {nodeid} left the emulator's request log before they were read")

"""Shared fixtures: the emulator on a free port, real SDK clients, a controllable clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient

from emulator.engine.facade import Engine
from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from tests.azurite import MISSING, RunningAzurite, azurite_required, find_azurite, running_azurite
from tests.collected import CollectedStore, build_collected_store


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis keeps its example database (and its other caches) outside the repository."""
    import tempfile
    from pathlib import Path

    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "ruscope-hypothesis")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--azure", action="store_true", help="also run tests against a real Azure account")


# The longest tests (a browser, a whole demo, many generated stores) run first: with -n workers, the one
# that starts last otherwise runs alone at the end while the other workers wait.
LONG_FIRST = ("tests/e2e/", "tests/ruscope/test_demo.py", "tests/dashboard/test_one_model.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))  # stable: the rest keep their order
    if config.getoption("--azure"):
        return
    skip = pytest.mark.skip(reason="needs --azure and a real account")
    for item in items:
        if "azure" in item.keywords:
            item.add_marker(skip)


class ManualClock:
    """A clock the test moves; the engine throttles on its whole seconds."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def make_emulator() -> Iterator[Callable[..., RunningEmulator]]:
    """Start emulators with custom engine settings; all are stopped at the end of the test."""
    running: list[RunningEmulator] = []

    def make(engine: Engine | None = None, **engine_kwargs: object) -> RunningEmulator:
        emu = start_in_thread(engine or open_engine(**engine_kwargs))
        running.append(emu)
        return emu

    yield make
    for emu in running:
        emu.stop()


@pytest.fixture
def emulator(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator()


def sdk_client(emu: RunningEmulator, **kwargs: object) -> CosmosClient:
    return CosmosClient(emu.url, credential=emu.key, **kwargs)


def wait_for_sdk_background_requests(timeout_s: float = 10.0) -> None:
    """Wait for azure-cosmos's background endpoint refresh ("cosmos-endpoint-refresh" threads: a database
    account read and health checks after a client's first requests), so a test that counts the requests
    a server received does not count them."""
    import threading

    for thread in threading.enumerate():
        if thread.name == "cosmos-endpoint-refresh":
            thread.join(timeout_s)


@pytest.fixture
def client(emulator: RunningEmulator) -> CosmosClient:
    return sdk_client(emulator)


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAzurite]:
    """Azurite (the Azure Storage emulator, from npm) on a free port for the whole session; see
    tests/azurite.py for what it exposes and the delta-rs options. Skipped when Azurite is not installed
    (no Node.js/npm), failed instead when RUSCOPE_REQUIRE_AZURITE is set (CI with npm)."""
    executable = find_azurite()
    if executable is None:
        if azurite_required():
            pytest.fail(f"RUSCOPE_REQUIRE_AZURITE is set but {MISSING}")
        pytest.skip(MISSING)
    with running_azurite(executable, tmp_path_factory.mktemp("azurite")) as running:
        yield running


@pytest.fixture(scope="session")
def collected(tmp_path_factory: pytest.TempPathFactory) -> CollectedStore:
    """A store filled once per session by the real collectors against the emulator (tests/collected.py):
    two hours of a shop with a hot tenant, a split, replay, storage, metrics and logs. Read it only; a test
    that writes copies it first (`shutil.copytree`)."""
    workdir = tmp_path_factory.mktemp("collected")
    return build_collected_store(workdir / "store", workdir)


@pytest.fixture(scope="session")
def collected_store(collected: CollectedStore) -> Path:
    """The path of the `collected` store."""
    return collected.store


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store `ruscope demo --size small` builds (the AI-chat day: a hot tenant, a split, throttling),
    once per session; read it only."""
    from ruscope.demo.run import DemoPaths, DemoSettings, prepare

    settings = DemoSettings(tmp_path_factory.mktemp("demo-store"), "small", cosmos_port=0, monitor_port=0)
    engine, _clock, servers, _built = prepare(settings, lambda line: None)
    servers.stop()
    engine.close()
    return DemoPaths(settings.dir).store

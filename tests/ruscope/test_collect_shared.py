"""A shared-throughput database through `ruscope collect` end to end: the emulator's Cosmos DB API and its
Azure Monitor stand-in over HTTPS (which answers for a shared database as Azure does, azure-monitor.md §7b
R2, R30-R32), every collector of the config, then the analysis the pages read: the database is one
throughput unit with its containers inside, they take its offer's partitions, and no container is named
after the service's labels."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from analysis import fleet, overview
from cosmoscore.monitor.metrics import NORMALIZED_RU, PROVISIONED, TOTAL_REQUEST_UNITS
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import WELL_KNOWN_KEY, start_in_thread
from store import read_table, store_location
from store.records import SHARED_OFFER_CONTAINER
from tests.collectors.test_metrics import RESOURCE, ROOT
from tests.conftest import ManualClock
from tests.emulator.monitor.test_shared_throughput import SHARED_RU, build_shared

PHANTOMS = {"<empty>", "__Empty"}


def test_collect_keeps_a_shared_database_one_throughput_unit(tmp_path: Path) -> None:
    now = dt.datetime.now(dt.UTC).timestamp()
    clock = ManualClock(now - now % 3600 - 3600)  # an hour ago: within the CLI's own backfill
    engine, _ = build_shared(clock)
    clock.advance(5 * 60)  # the last PT5M interval of the writes is complete
    certs = ensure_certificates(tmp_path / "tls")
    cosmos = start_in_thread(engine)
    monitor = start_in_thread(engine, app=MetricsApp(engine), tls=certs.server_context())
    store = tmp_path / "store"
    config = tmp_path / "ruscope.toml"
    metrics = f'metrics = ["{NORMALIZED_RU}", "{PROVISIONED}", "{TOTAL_REQUEST_UNITS}"]\n'
    config.write_text(
        f'[[accounts]]\nname = "local"\nendpoint = "{cosmos.url}"\ndatabases = ["shared", "solo"]\n'
        f'monitor_resource = "{RESOURCE}"\n\n[store]\nuri = "{store}"\n\n'
        f'[monitor]\nendpoint = "{monitor.url.rstrip("/")}"\nca_bundle = "{certs.ca}"\n{metrics}',
        encoding="utf-8",
    )
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token", "COSMOS_KEY": WELL_KNOWN_KEY, "PYTHONPATH": str(ROOT)}
    try:
        command = [sys.executable, "-m", "ruscope", "collect", "--config", str(config)]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    finally:
        monitor.stop()
        cosmos.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rollup: every point (a first rollup)" in done.stdout, done.stdout  # [store] rollup_after_collect

    location = store_location(store)
    points, cells = read_table(location, "metrics"), read_table(location, "metric_cells")
    daily = cells[cells["tier"] == "1d"]
    assert len(points) and int(daily["count"].sum()) == len(points)  # every point in one daily cell
    assert abs(float(daily["sum"].sum()) - float(points["value"].sum())) < 1e-6 * max(1.0, float(points["value"].sum()))
    frames = {
        "metrics": read_table(location, "metrics", columns=list(overview.METRIC_COLUMNS)),
        "partitions": read_table(location, "partitions", columns=list(fleet.PARTITION_COLUMNS)),
    }
    for frame in frames.values():
        assert not set(frame["container"]) & PHANTOMS
    snapshot = frames["partitions"][frames["partitions"]["database"] == "shared"]
    assert set(snapshot.loc[snapshot["container"].isin(["a", "b"]), "database_throughput_ru"]) == {float(SHARED_RU)}

    empty = pd.DataFrame()
    executions, requests = empty.reindex(columns=fleet.EXECUTION_COLUMNS), empty.reindex(columns=fleet.REQUEST_COLUMNS)
    ranked = fleet.summarize_fleet(executions, requests, frames["metrics"], frames["partitions"])
    units = fleet.summarize_throughput_units(ranked, frames["metrics"], frames["partitions"])
    shared = units[units["throughput_unit"] == fleet.SHARED_UNIT]
    assert shared[["database", "container", "containers", "provisioned_ru_s"]].values.tolist() == [
        ["shared", SHARED_OFFER_CONTAINER, "a, b", float(SHARED_RU)]
    ]
    logical = empty.reindex(columns=overview.LOGICAL_KEY_COLUMNS)
    containers = overview.summarize_containers(
        executions, requests, frames["metrics"], frames["partitions"], logical
    ).set_index("container")
    offer = frames["metrics"][
        (frames["metrics"]["container"] == SHARED_OFFER_CONTAINER) & (frames["metrics"]["metric"] == NORMALIZED_RU)
    ]
    for name in ("a", "b"):  # the offer's hottest partition: what throttles them
        assert containers.loc[name, "hot_normalized_ru"] == offer["value"].max()

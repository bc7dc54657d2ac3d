"""The Storage page through the frame (AppTest on a temp store) and its figure builders on frames."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from analysis import storage
from collectors.store import write_frame
from cosmoscore.limits import GB, Limits
from dashboard import figures_storage
from tests.analysis.test_storage_analysis import LOGICAL_KEYS, PARTITIONS, key, partition
from tests.collected import CollectedStore
from tests.dashboard.apptest import APP, chart

STORAGE = "views/storage.py"
GB_KB = 1024 * 1024


def open_storage() -> AppTest:
    app = AppTest.from_file(str(APP), default_timeout=30)
    app.switch_page(STORAGE).run()  # straight to the page: the default page's run is not this test's
    assert not app.exception, [e.message for e in app.exception]
    assert app.title[0].value == "Storage"
    return app


def table(app: AppTest, key: str) -> pd.DataFrame:
    """The table rendered with `key` (AppTest gives a dataframe no id: each table's download, in the same
    order, carries its key)."""
    downloads = [b.proto.id.rsplit("-", 1)[-1] for b in app.get("download_button")]
    assert len(downloads) == len(app.dataframe)
    return app.dataframe[downloads.index(f"{key}_download")].value


def blank(value: object) -> bool:
    """A cell drawn blank: missing, or the sort sentinel a display layer may put under a blank cell (-inf,
    a time before 1901) while the CSV keeps the missing value."""
    if isinstance(value, pd.Timestamp):
        return value.year < 1901
    return bool(pd.isna(value)) or value == -np.inf


def values(array: object) -> list:
    """A trace's x or y from a chart's JSON: plotly sends numpy arrays as typed arrays (dtype + base64)."""
    if isinstance(array, dict) and "bdata" in array:
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)  # type: ignore[call-overload]


def write_snapshots(store: Path) -> None:
    """Two daily snapshots of shop/orders: pkrange 0 grows 1 GB a day, 1 stays; the emulator's usage (no index)."""
    usage = {"usage_collection_kb": 5000, "usage_documents_kb": 5000}
    for run, day, sizes in (("s1", 0, (1000, 2000)), ("s2", 1, (1000 + GB_KB, 2000))):
        rows = [partition(run, day, str(n), size, **usage) for n, size in enumerate(sizes)]
        write_frame(store, "partitions", pd.DataFrame(rows, columns=PARTITIONS.columns), run_id=run, part="0")
        keys = [key(run, day, '["t1"]', sizes[0] // 2), key(run, day, '["t2"]', 10, pkrange="1")]
        write_frame(store, "logical_keys", pd.DataFrame(keys, columns=LOGICAL_KEYS.columns), run_id=run, part="0")


def test_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = open_storage()
    [info] = app.info
    assert "No storage snapshots in" in info.value and "ruscope storage --config ruscope.toml" in info.value
    assert not app.dataframe and not app.get("plotly_chart")


def test_a_replay_only_store_says_what_storage_snapshots_would_add(two_runs: Path) -> None:
    app = open_storage()
    [info] = app.info
    assert "no Azure Monitor storage snapshots" in info.value and "ruscope storage" in info.value
    assert "20 GB" in info.value and not app.dataframe


def test_snapshots_show_fill_growth_keys_and_index(store: Path) -> None:
    write_snapshots(store)
    app = open_storage()
    assert not app.info
    partitions = table(app, "storage_partitions")
    assert partitions[["label", "size_kb", "growth_kb_per_day", "projection_note"]].values.tolist() == [
        ["0", 1000.0 + GB_KB, float(GB_KB), ""],
        ["1", 2000.0, 0.0, storage.NOT_GROWING],
    ]  # fullest first
    # 50 GB - 1,049,576 KB to go at 1 GB a day: 48.999 days after the second snapshot, to the second
    to_go = round((50 * GB_KB - 1000 - GB_KB) / GB_KB * 86400)
    assert partitions["projected_full"][0] == pd.Timestamp("2026-05-02T00:00:00Z") + pd.Timedelta(seconds=to_go)
    assert blank(partitions["projected_full"][1])
    keys = table(app, "storage_keys")
    assert keys[["label", "source", "size_kb", "growth_kb_per_day"]].values.tolist() == [
        ['["t1"]', "statistics", float((1000 + GB_KB) // 2), float(GB_KB // 2)],
        ['["t2"]', "statistics", 10.0, 0.0],
    ]
    assert table(app, "storage_sizes")["size_kb"].tolist() == [3000.0, 3000.0 + GB_KB]
    index = table(app, "storage_index")
    assert index["note"].tolist() == [storage.INDEX_NOT_REPORTED] and index["index_kb"].map(blank).all()
    bars, limit = chart(app, "storage_partitions_chart")["data"]
    assert (
        values(limit["y"]) == [50.0, 50.0]
        and values(bars["y"])[1] == round(2000 / 1024**2, 6)
        and "50 GB" in limit["name"]
    )
    assert [t["name"] for t in chart(app, "storage_keys_chart")["data"]][1].endswith("(20 GB)")
    downloads = [b.proto.id.rsplit("-", 1)[-1] for b in app.get("download_button")]
    assert downloads == ["storage_partitions_download", "storage_keys_download", "storage_sizes_download",
                         "storage_index_download"]  # fmt: skip


def test_the_figure_builders() -> None:
    fill = pd.DataFrame({"label": ["a/0", "b/0"], "size_gb": [30.0, 5.0], "fill": [0.6, 0.1]})
    bars, limit = figures_storage.build_partition_fill_figure(fill, limit_bytes=50 * GB).data
    assert list(bars.x) == ["a/0", "b/0"] and list(bars.y) == [30.0, 5.0]
    assert list(limit.y) == [50.0, 50.0] and limit.name == "partition limit (50 GB)"
    keys = fill.assign(source=["logs", "statistics"])
    bars, limit = figures_storage.build_key_fill_figure(keys, limit_bytes=Limits().logical_partition_max_bytes).data
    assert list(bars.x) == ["a/0 (logs)", "b/0 (statistics)"] and list(limit.y) == [20.0, 20.0]
    figure = figures_storage.build_partition_fill_figure(fill.iloc[:0], limit_bytes=50 * GB)
    assert not figure.data and figure.layout.annotations[0].text == "No partition snapshots in this view."
    assert figure.layout.yaxis.rangemode == "tozero"
    sizes = pd.DataFrame({"label": ["orders", "orders", "carts"], "size_kb": [1024.0, 2048.0, 512.0],
                          "time": pd.to_datetime(["2026-05-01", "2026-05-02", "2026-05-01"], utc=True)})  # fmt: skip
    carts, orders = figures_storage.build_container_growth_figure(sizes).data
    assert (carts.name, list(carts.y)) == ("carts", [0.5]) and list(orders.y) == [1.0, 2.0]
    assert str(orders.x[0]).startswith("2026-05-01")


def test_the_page_on_the_collected_store(
    collected: CollectedStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The store the real collectors wrote (tests/collected.py): five storage snapshots of shop/orders, the
    hot tenant's orders the largest, a split at minute 60, the emulator's usage headers (no index size)."""
    copy = tmp_path / "collected"
    shutil.copytree(collected.store, copy)
    monkeypatch.setenv("RUSCOPE_STORE", str(copy))
    app = open_storage()
    assert not app.info and not app.warning
    partitions = table(app, "storage_partitions")
    assert partitions["label"][0] in collected.hot_pkranges  # the hot tenant's partition is the fullest
    assert (partitions["growth_kb_per_day"] > 0).all()  # orders keep arriving everywhere
    assert partitions["document_count"].sum() > 0 and not blank(partitions["projected_full"][0])
    keys = table(app, "storage_keys")
    assert keys["label"][0] == f'["{collected.hot_tenant}"]'
    assert set(keys["source"]) == {"statistics", "logs"}
    sizes = table(app, "storage_sizes")["size_kb"].tolist()
    assert len(sizes) == 5 and sizes == sorted(sizes) and sizes[0] > 0  # a snapshot after each replay, growing
    assert table(app, "storage_index")["note"].tolist() == [storage.INDEX_NOT_REPORTED]
    [line] = chart(app, "storage_growth_chart")["data"]
    assert line["name"] == "orders" and len(values(line["y"])) == 5

"""The Storage page through the frame (AppTest on a temp store) and its figure builders on frames."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from analysis import storage
from cosmoscore.limits import GB, Limits
from dashboard.figures import storage as figures_storage
from store import store_location, write_frame
from tests.analysis.test_storage_analysis import LOGICAL_KEYS, PARTITIONS, key, partition
from tests.collected import CollectedStore
from tests.dashboard.apptest import chart, new_app

STORAGE = "views/storage.py"
GB_KB = 1024 * 1024


def open_storage() -> AppTest:
    app = new_app()
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


def shown(app: AppTest, key: str) -> pd.DataFrame:
    """The table rendered with `key` as a person reads it: each cell's display text under its header."""
    downloads = [b.proto.id.rsplit("-", 1)[-1] for b in app.get("download_button")]
    element = app.dataframe[downloads.index(f"{key}_download")]
    text = pa.ipc.open_stream(element.proto.arrow_data.styler.display_values).read_pandas()
    headers = json.loads(element.proto.columns)
    return text.rename(columns={name: headers.get(name, {}).get("label", name) for name in text.columns})


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
        write_frame(
            store_location(store), "partitions", pd.DataFrame(rows, columns=PARTITIONS.columns), run_id=run, part="0"
        )
        keys = [key(run, day, '["t1"]', sizes[0] // 2), key(run, day, '["t2"]', 10, pkrange="1")]
        write_frame(
            store_location(store),
            "logical_keys",
            pd.DataFrame(keys, columns=LOGICAL_KEYS.columns),
            run_id=run,
            part="0",
        )


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
        ["0", (1000.0 + GB_KB) / GB_KB, float(GB_KB), ""],  # in GB: the largest is a GB
        ["1", 2000.0 / GB_KB, 0.0, storage.NOT_GROWING],
    ]  # fullest first
    # 50 GB - 1,049,576 KB to go at 1 GB a day: 48.999 days after the second snapshot, to the second
    to_go = round((50 * GB_KB - 1000 - GB_KB) / GB_KB * 86400)
    assert partitions["projected_full"][0] == pd.Timestamp("2026-05-02T00:00:00Z") + pd.Timedelta(seconds=to_go)
    assert blank(partitions["projected_full"][1])
    read = shown(app, "storage_partitions")
    assert read[["pkrange", "size GB", "% of 50 GB"]].values.tolist() == [
        ["0", "1.001", "2.0019%"],
        ["1", "0.002", "0.0038%"],
    ]
    keys = table(app, "storage_keys")
    assert keys[["label", "source", "size_kb", "growth_kb_per_day"]].values.tolist() == [
        ['["t1"]', "statistics", float((1000 + GB_KB) // 2) / 1024, float(GB_KB // 2)],  # in MB
        ['["t2"]', "statistics", 10.0 / 1024, 0.0],
    ]
    assert list(shown(app, "storage_keys"))[:6] == ["partition key", "size MB", "% of 20 GB",
                                                    "size, fill and growth from", "statistics MB", "logs MB"]  # fmt: skip
    assert table(app, "storage_sizes")["size_kb"].tolist() == [3000.0 / GB_KB, (3000.0 + GB_KB) / GB_KB]
    index = table(app, "storage_index")
    assert index["note"].tolist() == [storage.INDEX_NOT_REPORTED] and index["index_kb"].map(blank).all()
    bars, limit = chart(app, "storage_partitions_chart")["data"]
    assert values(limit["y"]) == [50.0, 50.0] and "50 GB" in limit["name"]
    assert values(bars["y"])[1] == 2000 / GB_KB
    key_bars, key_limit = chart(app, "storage_keys_chart")["data"]
    assert key_bars["name"] == "statistics" and key_limit["name"].endswith("(20 GB)")
    downloads = [b.proto.id.rsplit("-", 1)[-1] for b in app.get("download_button")]
    assert downloads == ["storage_partitions_download", "storage_keys_download", "storage_sizes_download",
                         "storage_index_download"]  # fmt: skip


def test_several_containers_say_their_labels_carry_the_container(store: Path) -> None:
    rows = [partition("s1", 0, "0", 100), partition("s1", 0, "0", 300, container="carts")]
    write_frame(
        store_location(store), "partitions", pd.DataFrame(rows, columns=PARTITIONS.columns), run_id="s1", part="0"
    )
    read = shown(open_storage(), "storage_partitions")
    assert read[["container/pkrange", "size KB"]].values.tolist() == [["carts/0", "300"], ["orders/0", "100"]]


def test_two_databases_sharing_a_container_name_say_so_in_the_headers(store: Path) -> None:
    rows = [partition("s1", 0, "0", 100), {**partition("s1", 0, "0", 300), "database": "crm"}]
    write_frame(
        store_location(store), "partitions", pd.DataFrame(rows, columns=PARTITIONS.columns), run_id="s1", part="0"
    )
    app = open_storage()
    assert shown(app, "storage_partitions")["database/container/pkrange"].tolist() == ["crm/orders/0", "shop/orders/0"]
    assert list(shown(app, "storage_sizes"))[0] == list(shown(app, "storage_index"))[0] == "database/container"


def test_the_figure_builders() -> None:
    fill = pd.DataFrame({"label": ["a/0", "b/0"], "size_kb": [30.0 * GB_KB, 5.0 * GB_KB]})
    bars, limit = figures_storage.build_partition_fill_figure(fill, limit_bytes=50 * GB).data
    assert list(bars.x) == ["a/0", "b/0"] and list(bars.y) == [30.0, 5.0] and list(bars.customdata) == [60.0, 10.0]
    assert list(limit.y) == [50.0, 50.0] and limit.name == "partition limit (50 GB)"
    keys = fill.assign(statistics_kb=[30.0 * GB_KB, np.nan], logs_kb=[29.0 * GB_KB, 5.0 * GB_KB])
    figure = figures_storage.build_key_fill_figure(keys, limit_bytes=Limits().logical_partition_max_bytes)
    statistics, logs, limit = figure.data
    assert list(statistics.x) == ["a/0", "b/0"] and (statistics.name, logs.name) == ("statistics", "logs")
    assert list(logs.y) == [29.0, 5.0] and list(limit.y) == [20.0, 20.0] and figure.layout.barmode == "group"
    figure = figures_storage.build_partition_fill_figure(fill.iloc[:0], limit_bytes=50 * GB)
    assert not figure.data and figure.layout.annotations[0].text == "No partition snapshots in this view."
    assert figure.layout.yaxis.rangemode == "tozero"
    sizes = pd.DataFrame({"label": ["orders", "orders", "carts"], "size_kb": [1024.0, 2048.0, 512.0],
                          "time": pd.to_datetime(["2026-05-01", "2026-05-02", "2026-05-01"], utc=True)})  # fmt: skip
    growth = figures_storage.build_container_growth_figure(sizes)
    carts, orders = growth.data
    assert (carts.name, list(carts.y)) == ("carts", [0.5]) and list(orders.y) == [1.0, 2.0]
    assert str(orders.x[0]).startswith("2026-05-01") and growth.layout.yaxis.title.text == "size (MB)"


def test_small_sizes_are_visible_bars_and_the_far_limit_is_named() -> None:
    """231 KB and 19 KB of 50 GB: bars in KB, no 50 GB line squashing them, the limit named in a note."""
    fill = pd.DataFrame({"label": ["5", "4"], "size_kb": [231.0, 19.0]})
    figure = figures_storage.build_partition_fill_figure(fill, limit_bytes=50 * GB)
    [bars] = figure.data
    assert list(bars.y) == [231.0, 19.0] and figure.layout.yaxis.title.text == "size (KB)"
    [note] = [a.text for a in figure.layout.annotations]
    assert note == "limit 50 GB, off the scale: the largest is 0.00044% of it"
    assert "customdata:.6f}%" in bars.hovertemplate  # 19 KB is 0.000036%: two significant digits
    near = fill.assign(size_kb=[0.6 * GB_KB, 0.1 * GB_KB])  # the largest at 1.2% of 50 GB: the line is drawn
    bars, limit = figures_storage.build_partition_fill_figure(near, limit_bytes=50 * GB).data
    assert list(limit.y) == [51200.0, 51200.0] and list(bars.y) == [614.4, 102.4]  # in MB


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
    assert not keys["label"].duplicated().any()  # one row per key, whatever its sources
    assert keys.loc[0, ["statistics_kb", "logs_kb"]].notna().all()  # the hot key's size from both
    assert keys["source"][0] == "statistics"  # more snapshots than the logs: its growth line is the row's
    read = shown(app, "storage_partitions")
    assert list(read)[:3] == ["pkrange", "size KB", "% of 50 GB"] and read["size KB"][0] != "0"
    assert read["% of 50 GB"].str.fullmatch(r"0\.0*[1-9]\d+%").all()  # 19 KB of 50 GB reads 0.000036%, not 0
    notes = [a["text"] for a in chart(app, "storage_partitions_chart")["layout"]["annotations"]]
    assert [n for n in notes if n.startswith("limit 50 GB, off the scale")]  # the bars are KB, the limit named
    assert [t["name"] for t in chart(app, "storage_keys_chart")["data"]] == ["statistics", "logs"]
    sizes = table(app, "storage_sizes")["size_kb"].tolist()
    assert len(sizes) == 5 and sizes == sorted(sizes) and sizes[0] > 0  # a snapshot after each replay, growing
    assert sizes[-1] > 1  # in the unit that fits (KB here), not 0.0003 GB
    assert table(app, "storage_index")["note"].tolist() == [storage.INDEX_NOT_REPORTED]
    [line] = chart(app, "storage_growth_chart")["data"]
    assert line["name"] == "orders" and len(values(line["y"])) == 5

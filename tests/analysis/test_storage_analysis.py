"""analysis.storage on small hand-built frames: partition and key fill, growth and projected dates, index size."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analysis import storage
from cosmoscore.limits import GB, Limits
from store import TABLES

PARTITIONS, LOGICAL_KEYS, LOG_KEY_SIZES = (TABLES[name] for name in ("partitions", "logical_keys", "log_key_sizes"))
T0 = pd.Timestamp("2026-05-01T00:00:00Z")
MB_KB = 1024  # one MB in KB


def partition(run: str, day: float, pkrange: str, size_kb: int, *, container: str = "orders", **extra: Any) -> dict:
    row = dict.fromkeys(PARTITIONS.columns)
    row.update(run_id=run, time=T0 + pd.Timedelta(days=day), account="a", database="shop", container=container,
               pkrange_id=pkrange, parents="", size_kb=size_kb, document_count=size_kb // 2, **extra)  # fmt: skip
    return row


def key(run: str, day: float, name: str, size_kb: int, *, pkrange: str = "0", columns: list | None = None) -> dict:
    row = dict.fromkeys(columns or LOGICAL_KEYS.columns)
    row.update(run_id=run, time=T0 + pd.Timedelta(days=day), account="a", database="shop", container="orders",
               partition_key=name, size_kb=size_kb)  # fmt: skip
    if "pkrange_id" in row:
        row["pkrange_id"] = pkrange
    return row


def frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


# three daily snapshots: pkrange 0 grows 1 MB/day, pkrange 1 shrinks; pkrange 2 appears on the last day only
SNAPSHOTS = frame(
    [
        partition("r1", 0, "0", 1000), partition("r1", 0, "1", 3000),
        partition("r2", 1, "0", 1000 + MB_KB), partition("r2", 1, "1", 2000),
        partition("r3", 2, "0", 1000 + 2 * MB_KB), partition("r3", 2, "1", 1000), partition("r3", 2, "2", 10),
    ],
    PARTITIONS.columns,
)  # fmt: skip
SMALL = Limits(
    physical_partition_max_bytes=10 * 1024 * 1024, logical_partition_max_bytes=4 * 1024 * 1024
)  # 10 MB, 4 MB


def test_partition_fill_of_the_latest_snapshot_with_growth_and_projected_date() -> None:
    fill = storage.partition_fill(SNAPSHOTS, limits=SMALL)
    assert fill.columns.tolist() == storage.FILL_COLUMNS
    assert fill["pkrange_id"].tolist() == ["0", "1", "2"]  # fullest first
    assert fill["label"].tolist() == ["0", "1", "2"]  # one container: the pkrange alone
    assert fill["size_kb"].tolist() == [3048.0, 1000.0, 10.0]
    assert fill["fill"].tolist() == [round(3048 / 10240, 12), round(1000 / 10240, 12), round(10 / 10240, 12)]
    assert fill["fill_pct"].tolist() == [round(304800 / 10240, 10), round(100000 / 10240, 10), round(1000 / 10240, 10)]
    assert fill["document_count"].tolist() == [1524, 500, 5]
    assert fill["snapshots"].tolist() == [3, 3, 1]
    assert fill["growth_kb_per_day"].tolist()[:2] == [1024.0, -1000.0] and math.isnan(fill["growth_kb_per_day"][2])
    # 10240 - 3048 = 7192 KB to go at 1024 KB/day: 7.0234375 days after the last snapshot
    assert fill["projected_full"][0] == T0 + pd.Timedelta(days=2) + pd.Timedelta(days=7, seconds=2025)
    assert fill["projected_full"][1:].isna().all()
    assert fill["projection_note"].tolist() == ["", storage.NOT_GROWING, storage.ONE_SNAPSHOT]


def test_default_limit_is_50_gb_and_several_containers_are_labelled() -> None:
    rows = [partition("r1", 0, "0", 5 * 1024 * 1024), partition("r1", 0, "0", 25 * 1024 * 1024, container="carts")]
    fill = storage.partition_fill(frame(rows, PARTITIONS.columns))
    assert fill["label"].tolist() == ["carts/0", "orders/0"]
    assert fill["fill"].tolist() == [0.5, 0.1] and fill["size_gb"].tolist() == [25.0, 5.0]
    assert fill["fill_pct"].tolist() == [50.0, 10.0]
    assert Limits().physical_partition_max_bytes == 50 * GB


def test_at_the_limit_is_not_projected() -> None:
    rows = [partition("r1", 0, "0", 9000), partition("r2", 1, "0", 11000)]
    fill = storage.partition_fill(frame(rows, PARTITIONS.columns), limits=SMALL)
    assert fill["projection_note"].tolist() == [storage.AT_LIMIT] and fill["projected_full"].isna().all()


def test_a_crawl_towards_50_gb_is_not_projected() -> None:
    rows = [partition("r1", 0, "0", 1000), partition("r2", 1, "0", 1001)]  # 1 KB a day: 143,000 years
    fill = storage.partition_fill(frame(rows, PARTITIONS.columns))
    assert fill["projection_note"].tolist() == [storage.BEYOND_HORIZON] and fill["projected_full"].isna().all()
    assert fill["growth_kb_per_day"].tolist() == [1.0]


def test_key_fill_from_statistics_and_logs() -> None:
    stats = frame(
        [key("r1", 0, '["t1"]', 1000), key("r1", 0, '["t2"]', 50),
         key("r2", 2, '["t1"]', 1500, pkrange="0"), key("r2", 2, '["t1"]', 500, pkrange="1"),
         key("r2", 2, '["t2"]', 50)],
        LOGICAL_KEYS.columns,
    )  # fmt: skip
    logs = frame([key("l1", 2, '["t9"]', 3000, columns=LOG_KEY_SIZES.columns)], LOG_KEY_SIZES.columns)
    keys = storage.key_fill(stats, logs, limits=SMALL)
    assert keys.columns.tolist() == storage.KEY_FILL_COLUMNS
    assert keys[["partition_key", "source", "size_kb"]].values.tolist() == [
        ['["t9"]', "logs", 3000.0],
        ['["t1"]', "statistics", 2000.0],  # listed on two pkranges after a split: summed
        ['["t2"]', "statistics", 50.0],
    ]
    assert keys["fill"].tolist() == [round(3000 / 4096, 12), round(2000 / 4096, 12), round(50 / 4096, 12)]
    assert keys["growth_kb_per_day"].tolist()[1:] == [500.0, 0.0]
    assert keys["projected_full"][1] == T0 + pd.Timedelta(days=6, seconds=16589)  # 2 + 4.192 days
    assert keys["projection_note"].tolist() == [storage.ONE_SNAPSHOT, "", storage.NOT_GROWING]
    assert storage.key_fill(stats, None, top=1)["partition_key"].tolist() == ['["t1"]']
    empty = storage.key_fill(stats.iloc[:0], None)
    assert empty.empty and empty.columns.tolist() == storage.KEY_FILL_COLUMNS


def test_a_key_in_both_sources_is_one_row_with_both_sizes() -> None:
    """The statistics saw t1 twice (a growth line), the logs once, later and larger: one row, both sizes,
    the size and growth of the statistics (more snapshots); t2 once in each at the same time: statistics."""
    stats = frame(
        [key("r1", 0, '["t1"]', 1000), key("r2", 1, '["t1"]', 1500), key("r2", 1, '["t2"]', 40)],
        LOGICAL_KEYS.columns,
    )  # fmt: skip
    logs = frame(
        [key("l1", 1, '["t2"]', 45, columns=LOG_KEY_SIZES.columns),
         key("l1", 1, '["t1"]', 1600, columns=LOG_KEY_SIZES.columns),
         key("l1", 1, '["t3"]', 5, columns=LOG_KEY_SIZES.columns)],
        LOG_KEY_SIZES.columns,
    )  # fmt: skip
    keys = storage.key_fill(stats, logs, limits=SMALL)
    columns = ["label", "source", "statistics_kb", "logs_kb", "size_kb", "snapshots", "growth_kb_per_day"]
    assert keys[columns].fillna(-1).values.tolist() == [
        ['["t1"]', "statistics", 1500.0, 1600.0, 1500.0, 2, 500.0],
        ['["t2"]', "statistics", 40.0, 45.0, 40.0, 1, -1],
        ['["t3"]', "logs", -1, 5.0, 5.0, 1, -1],
    ]
    assert not keys["partition_key"].duplicated().any()
    logs_later = logs.assign(time=logs["time"] + pd.Timedelta(hours=1))
    assert storage.key_fill(stats, logs_later, limits=SMALL)["source"].tolist() == ["statistics", "logs", "logs"]


def test_sizes_in_a_unit_that_fits_and_percentages_with_enough_decimals() -> None:
    assert storage.size_unit(pd.Series([19.0, 361.0])) == storage.SizeUnit("KB", 1.0)
    assert storage.size_unit(pd.Series([2048.0, 10.0])).name == "MB"
    assert storage.size_unit(pd.Series([30 * 1024**2.0])).name == "GB"
    assert storage.size_unit(pd.Series([], dtype=float)).name == "KB"
    assert storage.in_unit(pd.Series([512.0, math.nan]), storage.SizeUnit("MB", 1024.0)).fillna(-1).tolist() == [
        0.5,
        -1,
    ]
    fill = storage.partition_fill(
        frame([partition("r1", 0, "0", 231), partition("r1", 0, "1", 19)], PARTITIONS.columns)
    )
    decimals = storage.percent_decimals(fill["fill_pct"])
    assert (decimals, [f"%.{decimals}f%%" % pct for pct in fill["fill_pct"]]) == (6, ["0.000441%", "0.000036%"])
    assert storage.percent_decimals(pd.Series([60.0, 0.0])) == 2 and storage.percent_decimals(pd.Series([])) == 2
    assert storage.percent_decimals(pd.Series([1e-30])) == 10


def test_label_title_says_when_labels_carry_the_container() -> None:
    one = storage.partition_fill(frame([partition("r1", 0, "0", 10)], PARTITIONS.columns))
    two = storage.partition_fill(
        frame([partition("r1", 0, "0", 10), partition("r1", 0, "0", 10, container="carts")], PARTITIONS.columns)
    )
    assert storage.label_title(one, "pkrange") == "pkrange" and one["label"].tolist() == ["0"]
    assert storage.label_title(two, "pkrange") == "container/pkrange" and two["label"].tolist() == [
        "carts/0",
        "orders/0",
    ]
    clash = two.assign(database=["shop", "crm"], container="orders")
    assert storage.label_title(clash, "pkrange") == "database/container/pkrange"
    assert storage.container_title(two) == "container" and storage.container_title(clash) == "database/container"
    assert storage.container_labels(clash).tolist() == ["shop/orders", "crm/orders"]


def test_container_sizes_over_time() -> None:
    sizes = storage.container_sizes(SNAPSHOTS)
    assert sizes[["run_id", "size_kb", "document_count", "pkranges"]].values.tolist() == [
        ["r1", 4000.0, 2000, 2],
        ["r2", 4024.0, 2012, 2],
        ["r3", 4058.0, 2029, 3],
    ]
    assert sizes["label"].unique().tolist() == ["orders"]


def test_index_size_or_not_reported() -> None:
    rows = [
        partition("r1", 0, "0", 100, usage_collection_kb=300, usage_documents_kb=200),
        partition("r1", 0, "1", 100, usage_collection_kb=300, usage_documents_kb=200),
        partition("r1", 0, "0", 70, container="emu", usage_collection_kb=70, usage_documents_kb=70),
        partition("r1", 0, "0", 40, container="old"),
    ]
    index = storage.index_sizes(frame(rows, PARTITIONS.columns))
    assert index["label"].tolist() == ["emu", "old", "orders"]
    assert index["data_kb"].tolist() == [70.0, 40.0, 200.0]  # documentsSize, else the partitions' sum
    assert index["index_kb"].isna().tolist() == [True, True, False] and index["index_kb"][2] == 100.0
    assert index["index_to_data"][2] == 0.5
    assert index["note"].tolist() == [storage.INDEX_NOT_REPORTED, storage.INDEX_NOT_REPORTED, ""]


def test_empty_frames_give_empty_tables_with_their_columns() -> None:
    empty = frame([], PARTITIONS.columns)
    assert storage.partition_fill(empty).columns.tolist() == storage.FILL_COLUMNS
    assert storage.container_sizes(empty).columns.tolist() == storage.CONTAINER_COLUMNS
    assert storage.index_sizes(empty).columns.tolist() == storage.INDEX_COLUMNS

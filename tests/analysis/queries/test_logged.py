"""The workload's queries from the logs (`analysis.queries.logged`): ranked per text, ruscope's own apart."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.queries.logged import LOGGED_COLUMNS, WORKLOAD_COLUMNS, own_traffic, workload_queries

T0 = pd.Timestamp("2026-11-30T10:00:00Z")


def rows(*items: tuple[str, str, str, bool, float, int, int, int]) -> pd.DataFrame:
    """(container, pkrange, text, own, RU, requests, 429s, minute) rows of `log_query_ru`."""
    return pd.DataFrame(
        [
            [T0 + pd.Timedelta(minutes=m), "acct", "db", c, pk, text, own, ru, n, k]
            for c, pk, text, own, ru, n, k, m in items
        ],
        columns=LOGGED_COLUMNS,
    )


def test_texts_rank_by_ru_with_shares_of_their_container_and_rates() -> None:
    frame = rows(
        ("orders", "0", "SELECT * FROM c", False, 30.0, 10, 2, 0),
        ("orders", "1", "SELECT * FROM c", False, 30.0, 10, 0, 5),  # a fan-out: a second pkrange
        ("orders", "0", "SELECT c.id FROM c WHERE c.k = @k", False, 20.0, 8, 0, 0),
        ("users", "0", "SELECT * FROM u", False, 5.0, 5, 0, 0),
    )
    out = workload_queries(frame)
    assert list(out.columns) == WORKLOAD_COLUMNS
    assert list(out["query_text"]) == ["SELECT * FROM c", "SELECT c.id FROM c WHERE c.k = @k", "SELECT * FROM u"]
    first = out.iloc[0]
    assert (first["request_charge"], first["requests"], first["throttled"], first["pkranges"]) == (60.0, 20, 2, 2)
    assert first["share_pct"] == pytest.approx(75.0)  # 60 of the container's 80
    assert first["ru_per_request"] == pytest.approx(3.0) and first["throttled_pct"] == pytest.approx(10.0)
    assert (first["first_seen"], first["last_seen"]) == (T0, T0 + pd.Timedelta(minutes=5))
    assert out.iloc[2]["share_pct"] == pytest.approx(100.0)  # alone in its container
    assert list(workload_queries(frame, top=1)["query_text"]) == ["SELECT * FROM c"]


def test_ruscope_s_own_requests_are_left_out_of_the_ranking_and_summed_apart() -> None:
    frame = rows(
        ("orders", "0", "SELECT * FROM c", False, 10.0, 4, 0, 0),
        ("orders", "0", "SELECT * FROM c", True, 90.0, 30, 3, 0),  # the replay ran the same text
        ("orders", "1", "SELECT VALUE COUNT(1) FROM c", True, 5.0, 1, 0, 1),
    )
    out = workload_queries(frame)
    assert list(out["query_text"]) == ["SELECT * FROM c"]
    assert (out.iloc[0]["request_charge"], out.iloc[0]["share_pct"]) == (10.0, pytest.approx(100.0))
    own = own_traffic(frame)
    assert own[["container", "request_charge", "requests", "throttled"]].values.tolist() == [["orders", 95.0, 31, 3]]


def test_nothing_logged_gives_empty_frames_with_their_columns() -> None:
    empty = pd.DataFrame(columns=LOGGED_COLUMNS)
    assert list(workload_queries(empty).columns) == WORKLOAD_COLUMNS and workload_queries(empty).empty
    only_own = rows(("orders", "0", "SELECT 1", True, 1.0, 1, 0, 0))
    assert workload_queries(only_own).empty and not own_traffic(only_own).empty
    assert own_traffic(empty).empty

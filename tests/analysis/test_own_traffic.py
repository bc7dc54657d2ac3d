"""What ruscope's replay spent, from the store's `requests` rows: per container, and per pkrange and minute
(the collectors' test checks the same sums against the replay's closing lines, through the real SDK)."""

from __future__ import annotations

import pandas as pd

from analysis.own_traffic import SPEND_COLUMNS, replay_ru_per_minute, summarize_replay_spend


def test_the_replays_ru_per_pkrange_and_minute() -> None:
    at = pd.Timestamp("2026-12-01T10:00:00Z")
    scope = {"account": "a", "database": "d", "container": "c", "run_id": "r", "status": 200}
    requests = pd.DataFrame(
        [
            {**scope, "time": at + pd.Timedelta(seconds=5), "pkrange_id": "0", "request_charge": 3.0},
            {**scope, "time": at + pd.Timedelta(seconds=59), "pkrange_id": "0", "request_charge": 2.0},
            {**scope, "time": at + pd.Timedelta(seconds=60), "pkrange_id": "0", "request_charge": 7.0},
            {**scope, "time": at + pd.Timedelta(seconds=61), "pkrange_id": None, "request_charge": 1.0, "status": 429},
        ]
    )
    minutes = replay_ru_per_minute(requests)
    assert minutes[["pkrange_id", "minute", "ru", "requests", "peak_second_ru"]].values.tolist() == [
        ["", at + pd.Timedelta(minutes=1), 1.0, 1, 1.0],
        ["0", at, 5.0, 2, 3.0],  # two seconds: the busiest carried 3 RU
        ["0", at + pd.Timedelta(minutes=1), 7.0, 1, 7.0],
    ]
    assert summarize_replay_spend(requests)[["ru", "requests", "throttled"]].values.tolist() == [[13.0, 4, 1]]


def test_no_requests_no_spend() -> None:
    assert list(summarize_replay_spend(pd.DataFrame()).columns) == SPEND_COLUMNS

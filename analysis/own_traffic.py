"""What ruscope's replay itself spent: its RU per container over a window, and per pkrange and minute.

The replay runs on the account it measures, so its requests are charged from the same per-second partition
budgets as the application's and counted in the same Azure Monitor metrics (docs/reference/azure-monitor.md
R75). ruscope knows them exactly: every request it sent is a `requests` row with the RU the service charged.
These figures let a page, the report or a finding keep that traffic apart (a 100% minute that was the
replay is not the application's risk) and say what the replay cost.

Pure functions over the store's `requests` frame, narrowed to the window and scope first
(`analysis.scope`); only `REQUEST_COLUMNS` are read. The requests outside any container (the account read
when a client starts) count for the account, under container "".
"""

from __future__ import annotations

import pandas as pd

from analysis.scope import SCOPE_COLUMNS
from store.records import REQUESTS

REQUEST_COLUMNS = REQUESTS.pick(*SCOPE_COLUMNS, "run_id", "time", "pkrange_id", "status", "request_charge")
SPEND_COLUMNS = [*SCOPE_COLUMNS, "ru", "requests", "throttled", "runs", "first", "last"]
MINUTE_COLUMNS = [*SCOPE_COLUMNS, "pkrange_id", "minute", "ru", "requests"]


def summarize_replay_spend(requests: pd.DataFrame) -> pd.DataFrame:
    """Per account, database and container: the RU the replay's requests were charged, how many requests
    (429s among them) and runs, and the first and last request's time (`SPEND_COLUMNS`), costliest first."""
    if requests.empty:
        return pd.DataFrame(columns=SPEND_COLUMNS)
    frame = requests.assign(throttled=requests["status"].eq(429).astype(int))
    spend = frame.groupby(SCOPE_COLUMNS, dropna=False).agg(
        ru=("request_charge", "sum"),
        requests=("request_charge", "size"),
        throttled=("throttled", "sum"),
        runs=("run_id", "nunique"),
        first=("time", "min"),
        last=("time", "max"),
    )
    spend["ru"] = spend["ru"].round(2)
    return (
        spend.reset_index()
        .sort_values(["ru", *SCOPE_COLUMNS], ascending=[False] + [True] * len(SCOPE_COLUMNS))[SPEND_COLUMNS]
        .reset_index(drop=True)
    )


def replay_ru_per_minute(requests: pd.DataFrame) -> pd.DataFrame:
    """The replay's RU per pkrange and UTC minute (`MINUTE_COLUMNS`; pkrange_id "" for what the gateway
    charged): the share of a minute's per-partition load that was ruscope's own."""
    if requests.empty:
        return pd.DataFrame(columns=MINUTE_COLUMNS)
    frame = requests.assign(minute=pd.to_datetime(requests["time"], utc=True).dt.floor("min"))
    frame = frame.assign(pkrange_id=frame["pkrange_id"].fillna("").astype(str))
    per_minute = frame.groupby([*SCOPE_COLUMNS, "pkrange_id", "minute"]).agg(
        ru=("request_charge", "sum"), requests=("request_charge", "size")
    )
    return per_minute.reset_index()[MINUTE_COLUMNS]

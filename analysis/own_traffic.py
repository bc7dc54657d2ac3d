"""What ruscope's replay itself spent: its RU per container over a window, and per pkrange and minute.

The replay runs on the account it measures, so its requests are charged from the same per-second partition
budgets as the application's and counted in the same Azure Monitor metrics (docs/reference/azure-monitor.md
R75). ruscope knows them exactly: every request it sent is a `requests` row with the RU the service charged.
These figures let a page, the report or a finding keep that traffic apart (a 100% minute that was the
replay is not the application's risk: `analysis.load` applies the rule) and say what the replay cost.

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
MINUTE_COLUMNS = [*SCOPE_COLUMNS, "pkrange_id", "minute", "ru", "requests", "peak_second_ru"]


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


def replay_ru_per_second(requests: pd.DataFrame, *, by_pkrange: bool = True) -> pd.DataFrame:
    """The replay's RU per container (and pkrange: `by_pkrange`) and UTC clock second (`SECOND_COLUMNS`, `ru`
    and `requests`): exact, since each request's time and charge is a row. The requests outside any container
    (the client's account read) are left out; per pkrange, pkrange_id "" is what the gateway charged."""
    keys = [*SCOPE_COLUMNS, "pkrange_id"] if by_pkrange else list(SCOPE_COLUMNS)
    columns = [*keys, "second", "ru", "requests"]
    frame = requests.dropna(subset=[*SCOPE_COLUMNS, "time"]) if not requests.empty else requests
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame = frame[frame["container"].astype(str).ne("")]
    frame = frame.assign(
        **{name: frame[name].astype(str) for name in SCOPE_COLUMNS},
        pkrange_id=frame["pkrange_id"].fillna("").astype(str),
        second=pd.to_datetime(frame["time"], utc=True).astype("datetime64[ns, UTC]").dt.floor("s"),
        charge=frame["request_charge"].astype(float).fillna(0.0),
    )
    per_second = frame.groupby([*keys, "second"]).agg(ru=("charge", "sum"), requests=("charge", "size"))
    return per_second.reset_index()[columns]


def replay_ru_per_minute(requests: pd.DataFrame) -> pd.DataFrame:
    """The replay's RU per pkrange and UTC minute (`MINUTE_COLUMNS`; pkrange_id "" for what the gateway
    charged), and its busiest clock second's RU (`peak_second_ru`, what a minute's NormalizedRUConsumption
    compares: the busiest second): the share of a minute's per-partition load that was ruscope's own."""
    seconds = replay_ru_per_second(requests)
    if seconds.empty:
        return pd.DataFrame(columns=MINUTE_COLUMNS)
    seconds = seconds.assign(minute=seconds["second"].dt.floor("min"))
    per_minute = seconds.groupby([*SCOPE_COLUMNS, "pkrange_id", "minute"]).agg(
        ru=("ru", "sum"), requests=("requests", "sum"), peak_second_ru=("ru", "max")
    )
    return per_minute.reset_index()[MINUTE_COLUMNS]

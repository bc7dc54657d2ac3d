"""The workload's own queries, from the diagnostic logs: what each query text cost, and how often it was throttled.

Where `costs` and `runs` measure the queries ruscope replays, this reads what the application itself ran:
the store's `log_query_ru` rows (the logs collector's `query_ru`: Microsoft's "top queries by RU" join of
`CDBQueryRuntimeStatistics` with `CDBDataPlaneRequests` on ActivityId, azure-monitor.md §7b R48), one row per
container, pkrange, query text, time bin and whether ruscope's own client sent the requests. A row counts
requests, not operations: a throttled attempt and its retry share one ActivityId and are two requests there
(§7b R46), so `requests` counts both and the 429's charge is in `request_charge`.

ruscope's own requests (its replay, `own_traffic`) are kept apart from the workload's: `workload_queries`
ranks the workload's texts only, and `own_traffic` says what ruscope's replay cost the same containers, so
an operator sees what the measurement itself spent. The text is as the service logged it: obfuscated
(parameter values hidden) unless full-text query logging is on (§6.3). A text's RU is over every pkrange it
reached: a fan-out query has one statistics row per partition request, each joined to its own request.

Pure functions over the frame of `LOGGED_COLUMNS`; narrowing to a time range or a scope is `analysis.scope`'s.
"""

from __future__ import annotations

import pandas as pd

from analysis.scope import SCOPE_COLUMNS
from store.records import LOG_QUERY_RU

LOGGED_COLUMNS = LOG_QUERY_RU.pick(
    "time", "account", "database", "container", "pkrange_id", "query_text", "own_traffic", "request_charge",
    "requests", "throttled",
)  # fmt: skip
CONTAINER = list(SCOPE_COLUMNS)  # account, database, container
SUMMED = LOG_QUERY_RU.pick("request_charge", "requests", "throttled")
WORKLOAD_COLUMNS = [
    *CONTAINER,
    "query_text",
    "request_charge",
    "share_pct",
    "requests",
    "ru_per_request",
    "throttled",
    "throttled_pct",
    "pkranges",
    "first_seen",
    "last_seen",
]
OWN_COLUMNS = [*CONTAINER, *SUMMED]


def _own(frame: pd.DataFrame) -> pd.Series[bool]:
    return frame["own_traffic"].astype("boolean").fillna(False).astype(bool)


def workload_queries(logged: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """Per container and query text of the workload (ruscope's own requests left out): its RU in the frame's
    window, its share of the container's logged query RU, its requests, RU per request, 429s and their share,
    the pkranges it reached and when it was first and last logged; the costliest first (the `top` of them)."""
    if logged.empty:
        return pd.DataFrame(columns=WORKLOAD_COLUMNS)
    frame = logged[~_own(logged)]
    if frame.empty:
        return pd.DataFrame(columns=WORKLOAD_COLUMNS)
    frame = frame.assign(time=pd.to_datetime(frame["time"], utc=True))
    grouped = frame.groupby([*CONTAINER, "query_text"], dropna=False, sort=False)
    out = grouped.agg(
        request_charge=("request_charge", "sum"),
        requests=("requests", "sum"),
        throttled=("throttled", "sum"),
        pkranges=("pkrange_id", "nunique"),
        first_seen=("time", "min"),
        last_seen=("time", "max"),
    ).reset_index()
    container_ru = out.groupby(CONTAINER, dropna=False)["request_charge"].transform("sum")
    out["share_pct"] = (100.0 * out["request_charge"] / container_ru).where(container_ru > 0)
    out["ru_per_request"] = (out["request_charge"] / out["requests"]).where(out["requests"] > 0)
    out["throttled_pct"] = (100.0 * out["throttled"] / out["requests"]).where(out["requests"] > 0)
    out = out.sort_values(["request_charge", "query_text"], ascending=[False, True], ignore_index=True)
    return (out.head(top) if top is not None else out)[WORKLOAD_COLUMNS]


def own_traffic(logged: pd.DataFrame) -> pd.DataFrame:
    """Per container, what ruscope's own query requests (its replay) cost there in the frame's window, as the
    service logged them: kept apart from the workload's figures, and said beside them."""
    if logged.empty:
        return pd.DataFrame(columns=OWN_COLUMNS)
    frame = logged[_own(logged)]
    if frame.empty:
        return pd.DataFrame(columns=OWN_COLUMNS)
    grouped = frame.groupby(CONTAINER, dropna=False, sort=True)
    out = grouped.agg(
        request_charge=("request_charge", "sum"), requests=("requests", "sum"), throttled=("throttled", "sum")
    )
    return out.reset_index()[OWN_COLUMNS]

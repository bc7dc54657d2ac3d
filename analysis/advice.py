"""The stored advice shaped for the Advisor page: which advice to show, and the designs side by side.

Pure functions on the `advice_designs`, `advice_queries` and `advice_partitions` tables
(`store.records_advice`, written by `ruscope advise`): one advice is one run id; designs are
ordered by their rank in it, so every table and figure lists the advice first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from store.records_advice import ADVICE_DESIGNS, ADVICE_PARTITIONS, ADVICE_QUERIES

DESIGN_COLUMNS = ADVICE_DESIGNS.pick(
    "run_id",
    "time",
    "account",
    "database",
    "container",
    "design",
    "kind",
    "origin",
    "why",
    "rank",
    "partition_key",
    "flags",
    "verdict",
    "workload_ru",
    "throughput",
    "partitions",
    "hottest_partition_share",
    "even_share",
    "gini",
    "throttles_at_share_of_ru",
    "hottest_key_share_now",
    "largest_logical_gb",
    "logical_limit_gb",
    "days_to_limit",
    "growth_gb_per_day",
    "cardinality",
    "definition",
    "migration",
    "sample",
)
QUERY_COLUMNS = ADVICE_QUERIES.pick(
    "run_id", "design", "query", "weight", "request_charge", "partitions", "total_partitions", "routing", "fix", "lint"
)
PARTITION_COLUMNS = ADVICE_PARTITIONS.pick("run_id", "design", "partition", "write_share")
HORIZON_DAYS = 365  # how far the limit projection looks when no design reaches the limit sooner
MAX_HORIZON_DAYS = 3 * 365  # and at most: the advisor's planning horizon (advisor.measure.Workload)


def advice_runs(designs: pd.DataFrame) -> pd.DataFrame:
    """One row per stored advice, newest first: run id, time, account, database, container, the winner."""
    if designs.empty:
        return pd.DataFrame(columns=["run_id", "time", "account", "database", "container", "winner", "designs"])
    winners = designs.sort_values("rank").groupby("run_id", sort=False).first().reset_index()
    counts = designs.groupby("run_id").size().rename("designs")
    runs = winners.rename(columns={"design": "winner"}).join(counts, on="run_id")
    return runs[["run_id", "time", "account", "database", "container", "winner", "designs"]].sort_values(
        ["time", "run_id"], ascending=False, ignore_index=True
    )


def run_label(run: pd.Series) -> str:
    """How the page names an advice in its picker: when, for which container, who won."""
    when = pd.Timestamp(run["time"]).strftime("%Y-%m-%d %H:%M UTC")
    return f"{when} · {run['database']}/{run['container']} · advice: {run['winner']} ({run['designs']} designs)"


def of_run(frame: pd.DataFrame, run_id: str, order: list[str]) -> pd.DataFrame:
    """The rows of one advice, designs in rank order (`order`: design names by rank)."""
    rows = frame[frame["run_id"] == run_id].drop(columns="run_id")
    rank = {name: i for i, name in enumerate(order)}
    return rows.sort_values("design", key=lambda s: s.map(rank), kind="stable", ignore_index=True)


def ranked_designs(designs: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """The designs of one advice, best first."""
    return designs[designs["run_id"] == run_id].sort_values("rank", ignore_index=True)


def ru_matrix(queries: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """RU of one execution per query (rows) and design (columns, in rank order), with the workload's
    weighted mean as the last row: the "RU per query class" comparison."""
    if queries.empty:
        return pd.DataFrame(columns=order)
    table = queries.pivot_table(index="query", columns="design", values="request_charge", aggfunc="first")
    table = table.reindex(columns=[d for d in order if d in table.columns])
    weights = queries.drop_duplicates("query").set_index("query")["weight"].reindex(table.index).fillna(0.0)
    total = weights.sum()
    if total > 0:
        mean = (table.mul(weights, axis=0).sum() / total).rename("weighted mix")
        table = pd.concat([table, mean.to_frame().T])
    return table


def skew_matrix(partitions: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Write share per design (rows, in rank order) and physical partition (columns, EPK order): the skew
    heatmap. Designs with fewer partitions leave the extra cells empty (NaN)."""
    if partitions.empty:
        return pd.DataFrame()
    table = partitions.pivot_table(index="design", columns="partition", values="write_share", aggfunc="first")
    return table.reindex(index=[d for d in order if d in table.index]).sort_index(axis=1)


def limit_projection(designs: pd.DataFrame, horizon_days: float | None = None) -> pd.DataFrame:
    """The largest logical partition of each design from now to the horizon, in GB, as straight lines
    (`day`, `gb` at day 0 and at the end): the size grows at the rate that reaches the limit in
    `days_to_limit` days and the line ends there (writes to that key would fail); a design that never
    reaches it stays flat to the horizon. The horizon is a little past the
    slowest design that reaches the limit (else `HORIZON_DAYS`), at most `MAX_HORIZON_DAYS`."""
    if designs.empty:
        return pd.DataFrame(columns=["design", "day", "gb", "limit_gb"])
    days = designs["days_to_limit"].dropna()
    crossing = float(np.ceil(days.max() * 1.2)) if not days.empty else HORIZON_DAYS
    horizon = horizon_days or min(crossing, MAX_HORIZON_DAYS)  # a crossing decades away would flatten the rest
    horizon = max(horizon, 1.0)
    rows = []
    numbers = (designs[name].astype(float) for name in ("largest_logical_gb", "logical_limit_gb", "days_to_limit"))
    for design, start, limit, days in zip(designs["design"], *numbers):
        slope = (limit - start) / days if pd.notna(days) and days > 0 else 0.0
        end = min(horizon, days) if slope else horizon  # a line stops where it hits the limit
        rows += [
            {"design": design, "day": 0.0, "gb": start, "limit_gb": limit},
            {"design": design, "day": end, "gb": start + slope * end, "limit_gb": limit},
        ]
    return pd.DataFrame(rows)

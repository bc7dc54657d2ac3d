"""What a check run measured per query: its RU per execution, partitions, routing and missing indexes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.queries.costs import summarize_query_costs
from analysis.queries.runs import missing_composite_indexes
from cosmoscore.routing import UNKNOWN


@dataclass(frozen=True)
class Measured:
    """One query of a check run. `ru` is the mean RU of one execution (every page, partition and gateway
    request: `summarize_query_costs`' latest_mean_ru), None when no execution succeeded (`error` says why)."""

    name: str
    container: str
    sql: str
    ru: float | None
    partitions: int
    routing: str
    rate_per_s: float | None = None
    missing_composites: tuple[str, ...] = ()  # the composite indexes the service named as potential
    error: str = ""

    @property
    def ru_per_s(self) -> float | None:
        """RU/s at the query's production rate (`rate_per_s` executions a second)."""
        if self.ru is None or self.rate_per_s is None:
            return None
        return round(self.ru * self.rate_per_s, 2)


def measured_queries(
    executions: pd.DataFrame, requests: pd.DataFrame, rates: Mapping[str, float | None]
) -> dict[str, Measured]:
    """Each query of one check run's executions, by name; `rates` are the queries' `rate_per_s`."""
    summary = summarize_query_costs(executions)
    missing = missing_composite_indexes(requests) if not requests.empty else pd.DataFrame()
    out: dict[str, Measured] = {}
    for row in summary.to_dict("records"):
        out[str(row["query_name"])] = _measured(row, missing, executions, rates)
    return out


def _measured(
    row: Mapping[Any, Any], missing: pd.DataFrame, executions: pd.DataFrame, rates: Mapping[str, float | None]
) -> Measured:
    name = str(row["query_name"])
    specs = () if missing.empty else tuple(missing.loc[missing["query_name"] == name, "composite_spec"])
    ru = None if pd.isna(row["latest_mean_ru"]) else float(row["latest_mean_ru"])
    return Measured(
        name=name,
        container=str(row["container"]),
        sql="" if pd.isna(row["sql"]) else str(row["sql"]),
        ru=ru,
        partitions=0 if pd.isna(row["latest_pkrange_count"]) else int(row["latest_pkrange_count"]),
        routing=UNKNOWN if pd.isna(row["routing"]) else str(row["routing"]),
        rate_per_s=rates.get(name),
        missing_composites=specs,
        error=_first_error(executions, name) if ru is None else "",
    )


def _first_error(executions: pd.DataFrame, name: str) -> str:
    errors = executions.loc[(executions["query_name"] == name) & (executions["status"] != "ok"), "error"]
    text = next((str(e) for e in errors if isinstance(e, str) and e), "")
    return text or "no execution succeeded"

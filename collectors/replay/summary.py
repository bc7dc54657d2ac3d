"""The replay's closing line per query, counted by the one rule of what a logical execution is
(`analysis.queries.costs.logical_executions`: the parts of one repeat of a per-feed-range query are ONE
logical execution, their RU summed, successful when every part is), so `ruscope replay` and the Query costs
page say the same number. Pure: the run's records become a frame of the `executions` table first."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from analysis.queries.costs import logical_executions
from collectors.config import QuerySpec
from store import EXECUTIONS, ExecutionRecord


def executions_frame(executions: Sequence[ExecutionRecord]) -> pd.DataFrame:
    """The records as rows of the `executions` table, as the store would read them back."""
    return pd.DataFrame([dataclasses.asdict(e) for e in executions], columns=EXECUTIONS.columns)


def _routing(spec: QuerySpec, ok: pd.DataFrame) -> str:
    """`fan-out over 4 range(s)` per feed range (one part per range); else the observed class over the
    pkranges reached."""
    classes = "/".join(dict.fromkeys(ok["routing"]))
    if spec.mode == "per-feed-range":
        return f"{classes} over {int(ok['parts'].max())} range(s), one execution per feed range"
    reached = {p for ids in ok["pkranges"] for p in str(ids).split(",") if p}
    return f"{classes} over {len(reached)} pkrange(s)"


def summary_line(spec: QuerySpec, executions: Sequence[ExecutionRecord]) -> str | None:
    """`name: N execution(s), X RU each, <routing>[, T throttled (429), W s waited]`; None when no
    execution succeeded (its errors are the lines then). The 429s count every execution's throttled
    responses, which the SDK retried after waiting the service's retry-after."""
    logical = logical_executions(executions_frame(executions))
    ok = logical[logical["ok"].astype(bool)]
    if ok.empty:
        return None
    line = f"{spec.name}: {len(ok)} execution(s), {ok['total_ru'].mean():.2f} RU each, {_routing(spec, ok)}"
    throttled = sum(e.throttled for e in executions)
    if throttled:
        waited = sum(e.retry_after_ms_total for e in executions) / 1000
        line += f", {throttled} throttled (429), {waited:.1f} s waited"
    if ok["routing_mismatch"].astype(bool).any():
        line += "  (routing differs from the prediction)"
    return line

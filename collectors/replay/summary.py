"""The replay's closing lines: one per query, counted by the one rule of what a logical execution is
(`analysis.queries.costs.logical_executions`: the parts of one repeat of a per-feed-range query are ONE
logical execution, their RU summed, successful when every part is), so `ruscope replay` and the Query costs
page say the same number; then what the run spent on the account and on each container, with the pacing in
force (the same sums `analysis.own_traffic` reads back from the store's `requests`). Pure: the run's
records become a frame of the `executions` table first."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from analysis.queries.costs import logical_executions
from collectors.config import QuerySpec
from collectors.replay.pacing import pacing_text
from store import EXECUTIONS, ExecutionRecord, RequestRecord


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


@dataclass
class Spend:
    """The RU the run's requests charged and how many they were, per (database, container); the account's
    own requests (its read, database reads) under container ""."""

    ru: defaultdict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    requests: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, request: RequestRecord) -> None:
        where = (request.database, request.container or "")
        self.ru[where] += request.request_charge
        self.requests[where] += 1


def spend_lines(account: str, spend: Spend, rate: float, waited_s: float) -> list[str]:
    """`replay spent X RU on account A in N request(s), paced at R RU/s (waited W s)`, then one line per
    container, costliest first: what ruscope itself took from the account's throughput."""
    total = sum(spend.ru.values())
    waited = f", waited {waited_s:.1f} s for it" if waited_s else ""
    lines = [
        f"replay spent {total:.2f} RU on account {account!r} in {sum(spend.requests.values())} request(s), "
        f"{pacing_text(rate)}{waited}"
    ]
    for (database, container), ru in sorted(spend.ru.items(), key=lambda item: (-item[1], item[0])):
        name = f"{database}/{container}" if container else "account and database reads"
        lines.append(f"  {name}: {ru:.2f} RU in {spend.requests[(database, container)]} request(s)")
    return lines

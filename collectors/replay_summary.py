"""The replay's closing line per query, counted as the dashboard counts it (`analysis.queries.costs`): the
parts of one repeat of a per-feed-range query (one execution per feed range) are ONE logical execution,
their RU summed, so `ruscope replay` and the Query costs page say the same number. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.config import QuerySpec
from cosmoscore.routing import routing_class
from store import ExecutionRecord

OK = "ok"


def logical_executions(executions: Sequence[ExecutionRecord]) -> list[list[ExecutionRecord]]:
    """The successful logical executions: the parts of each repeat, kept when every part succeeded."""
    parts: dict[int, list[ExecutionRecord]] = {}
    for execution in executions:
        parts.setdefault(execution.repeat, []).append(execution)
    return [group for group in parts.values() if all(e.status == OK for e in group)]


def _pkranges(group: Sequence[ExecutionRecord]) -> set[str]:
    return {p for e in group for p in e.pkranges.split(",") if p}


def _routing(spec: QuerySpec, logical: list[list[ExecutionRecord]]) -> str:
    """`fan-out over 4 range(s)` per feed range (one part per range); else the observed class over the
    pkranges reached."""
    if spec.mode == "per-feed-range":
        classes = dict.fromkeys(routing_class(len(_pkranges(g)), len(g)) for g in logical)
        return f"{'/'.join(classes)} over {max(len(g) for g in logical)} range(s), one execution per feed range"
    classes = dict.fromkeys(e.routing_observed for g in logical for e in g)
    reached = set().union(*(_pkranges(g) for g in logical))
    return f"{'/'.join(classes)} over {len(reached)} pkrange(s)"


def summary_line(spec: QuerySpec, executions: Sequence[ExecutionRecord]) -> str | None:
    """`name: N execution(s), X RU each, <routing>[, T throttled (429), W s waited]`; None when no
    execution succeeded (its errors are the lines then). The 429s count every execution's throttled
    responses, which the SDK retried after waiting the service's retry-after."""
    logical = logical_executions(executions)
    if not logical:
        return None
    ru = sum(e.total_ru for g in logical for e in g) / len(logical)
    line = f"{spec.name}: {len(logical)} execution(s), {ru:.2f} RU each, {_routing(spec, logical)}"
    throttled = sum(e.throttled for e in executions)
    if throttled:
        waited = sum(e.retry_after_ms_total for e in executions) / 1000
        line += f", {throttled} throttled (429), {waited:.1f} s waited"
    if any(e.routing_mismatch for g in logical for e in g):
        line += "  (routing differs from the prediction)"
    return line
